//! Selections beyond plain boxes: strided boxes, orthogonal index lists, points, caller
//! buffer strides.

use super::array::{array_arg, check_ndim, zarr_array};
use super::boundary::{optional_slice_arg, run, slice_arg, slice_out};
use super::status::zarr_status;
use crate::array::{box_selection, Array};
use crate::error::{Error, Result};
use crate::selection::DimSelection;
use std::ffi::c_void;

/// The indices selected along one dimension by `zarr_array_read_orthogonal` and
/// `zarr_array_write_orthogonal`: either `count` explicit indices (any order, repeats
/// allowed), or, when `indices` is NULL, the range `start`, `start + step`, ... of `count`
/// indices.
#[allow(non_camel_case_types)]
#[repr(C)]
pub struct zarr_dim_selection {
    /// `count` explicit indices, or NULL to select a range.
    pub indices: *const u64,
    /// How many indices are selected (0 selects nothing).
    pub count: u64,
    /// First index of the range (ignored with `indices`).
    pub start: u64,
    /// Distance between range indices, at least 1 (ignored with `indices`).
    pub step: u64,
}

/// Reads the `ndim` arguments of a strided box into an orthogonal selection.
fn strided_selection(
    array: &Array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    step: *const u64,
) -> Result<Vec<DimSelection>> {
    check_ndim(array, ndim)?;
    let start = slice_arg(start, ndim, "start")?;
    let count = slice_arg(count, ndim, "count")?;
    let step = optional_slice_arg(step, ndim, "step")?;
    box_selection(start, count, step)
}

/// Reads `ndim` `zarr_dim_selection`s.
fn orthogonal_selection(
    array: &Array,
    ndim: usize,
    selection: *const zarr_dim_selection,
) -> Result<Vec<DimSelection>> {
    check_ndim(array, ndim)?;
    slice_arg(selection, ndim, "selection")?
        .iter()
        .enumerate()
        .map(|(d, s)| {
            if s.indices.is_null() {
                return Ok(DimSelection::Range {
                    start: s.start,
                    count: s.count,
                    step: s.step,
                });
            }
            let n = usize::try_from(s.count).map_err(|_| {
                Error::InvalidArgument(format!("dimension {d}: {} indices", s.count))
            })?;
            Ok(DimSelection::Indices(
                slice_arg(s.indices, n, &format!("selection[{d}].indices"))?.to_vec(),
            ))
        })
        .collect()
}

/// Reads the point coordinates: `npoints` × `ndim` values.
fn points_arg<'a>(
    array: &Array,
    ndim: usize,
    npoints: usize,
    coords: *const u64,
) -> Result<&'a [u64]> {
    check_ndim(array, ndim)?;
    let n = npoints
        .checked_mul(ndim)
        .ok_or_else(|| Error::Overflow(format!("{npoints} points of {ndim} coordinates")))?;
    slice_arg(coords, n, "coords")
}

/// Reads a strided box: `count[d]` elements from `start[d]`, `step[d]` apart (`step` NULL: 1)
/// in each of `ndim` dimensions, like netCDF's `nc_get_vars`. The result has extent `count`
/// and lands in `out` (native byte order) at `buffer_strides[d]` elements apart along
/// dimension `d` (like GDAL's `bufferStride`), or dense in C order when `buffer_strides` is
/// NULL, in which case `out_size` must be exactly product(count) × item size. With strides,
/// every element must lie inside the `out_size` bytes, and no two elements may overlap.
///
/// # Safety
/// `array` must be a live handle; `start`, `count` (and `step`, `buffer_strides` unless NULL)
/// hold `ndim` entries; `out` has `out_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_strided(
    array: *const zarr_array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    step: *const u64,
    buffer_strides: *const u64,
    out: *mut c_void,
    out_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let selection = strided_selection(array, ndim, start, count, step)?;
        let strides = optional_slice_arg(buffer_strides, ndim, "buffer_strides")?;
        array.read_orthogonal(
            &selection,
            strides,
            slice_out(out.cast::<u8>(), out_size, "out")?,
        )
    })
}

/// Writes a strided box from `data`, laid out as for `zarr_array_read_strided` (buffer
/// strides may repeat elements here: the data is only read).
///
/// # Safety
/// As for `zarr_array_read_strided`, with `data` holding `data_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_strided(
    array: *mut zarr_array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    step: *const u64,
    buffer_strides: *const u64,
    data: *const c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let selection = strided_selection(array, ndim, start, count, step)?;
        let strides = optional_slice_arg(buffer_strides, ndim, "buffer_strides")?;
        array.write_orthogonal(
            &selection,
            strides,
            slice_arg(data.cast::<u8>(), data_size, "data")?,
        )
    })
}

/// Reads an orthogonal selection: along each dimension `d`, the indices `selection[d]`
/// names (a list or a range), like zarr-python's `get_orthogonal_selection`. The result has
/// extent `selection[d].count` along `d` and is laid out in `out` as for
/// `zarr_array_read_strided`.
///
/// # Safety
/// `array` must be a live handle; `selection` (and `buffer_strides` unless NULL) hold `ndim`
/// entries, each non-NULL `indices` `count` values; `out` has `out_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_orthogonal(
    array: *const zarr_array,
    ndim: usize,
    selection: *const zarr_dim_selection,
    buffer_strides: *const u64,
    out: *mut c_void,
    out_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let selection = orthogonal_selection(array, ndim, selection)?;
        let strides = optional_slice_arg(buffer_strides, ndim, "buffer_strides")?;
        array.read_orthogonal(
            &selection,
            strides,
            slice_out(out.cast::<u8>(), out_size, "out")?,
        )
    })
}

/// Writes an orthogonal selection from `data` (see `zarr_array_read_orthogonal`); where an
/// index repeats, the last value written wins.
///
/// # Safety
/// As for `zarr_array_read_orthogonal`, with `data` holding `data_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_orthogonal(
    array: *mut zarr_array,
    ndim: usize,
    selection: *const zarr_dim_selection,
    buffer_strides: *const u64,
    data: *const c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let selection = orthogonal_selection(array, ndim, selection)?;
        let strides = optional_slice_arg(buffer_strides, ndim, "buffer_strides")?;
        array.write_orthogonal(
            &selection,
            strides,
            slice_arg(data.cast::<u8>(), data_size, "data")?,
        )
    })
}

/// Reads `npoints` single elements, like zarr-python's `get_coordinate_selection`: point `i`
/// is at `coords[i * ndim + d]` along dimension `d`, and its value goes to element `i` of
/// `out` (`out_size` = `npoints` × item size). Each chunk is decoded once. In a 0-d array
/// (`ndim` 0) every point names the one element.
///
/// # Safety
/// `array` must be a live handle; `coords` holds `npoints * ndim` values; `out` has
/// `out_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_points(
    array: *const zarr_array,
    ndim: usize,
    npoints: usize,
    coords: *const u64,
    out: *mut c_void,
    out_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let coords = points_arg(array, ndim, npoints, coords)?;
        array.read_points(
            npoints,
            coords,
            slice_out(out.cast::<u8>(), out_size, "out")?,
        )
    })
}

/// Writes `npoints` single elements from `data` (see `zarr_array_read_points`); where a point
/// repeats, the last value wins.
///
/// # Safety
/// As for `zarr_array_read_points`, with `data` holding `data_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_points(
    array: *mut zarr_array,
    ndim: usize,
    npoints: usize,
    coords: *const u64,
    data: *const c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let coords = points_arg(array, ndim, npoints, coords)?;
        array.write_points(
            npoints,
            coords,
            slice_arg(data.cast::<u8>(), data_size, "data")?,
        )
    })
}
