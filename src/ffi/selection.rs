//! Selections beyond plain boxes: strided boxes, orthogonal index lists, points, caller
//! buffer strides, and the one selection descriptor (`zarr_selection`) that the calls for
//! object arrays and field selections take.

use super::array::{array_arg, check_ndim, zarr_array};
use super::boundary::{optional_slice_arg, out_arg, run, slice_arg, slice_out};
use super::status::zarr_status;
use crate::array::{box_selection, Array};
use crate::error::{Error, Result};
use crate::selection::{block_box, flag_indices, DimSelection, Selection};
use std::ffi::c_void;

/// The indices selected along one dimension by `zarr_array_read_orthogonal` and
/// `zarr_array_write_orthogonal`: either `count` explicit indices (any order, repeats
/// allowed), or, when `indices` is NULL, the range `start`, `start + step`, ... of `count`
/// indices, or with `flags` the indices a Boolean vector selects.
#[allow(non_camel_case_types)]
#[repr(C)]
pub struct zarr_dim_selection {
    /// `count` explicit indices, or NULL to select a range.
    pub indices: *const u64,
    /// How many indices are selected (0 selects nothing).
    pub count: u64,
    /// First index of the range (ignored with `indices`).
    pub start: u64,
    /// Distance between range indices, at least 1 (ignored with `indices` or `flags`).
    pub step: u64,
    /// A Boolean vector along the dimension, or NULL: `count` bytes, one per index of the
    /// dimension (so `count` must be its length), selecting the indices where it is nonzero,
    /// as a Boolean array does in NumPy's and zarr-python's orthogonal indexing. The
    /// selection's extent along the dimension is then the number of nonzero bytes. `indices`
    /// must be NULL with it.
    pub flags: *const u8,
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
    let shape = array.shape();
    slice_arg(selection, ndim, "selection")?
        .iter()
        .enumerate()
        .map(|(d, s)| {
            let n = usize::try_from(s.count).map_err(|_| {
                Error::InvalidArgument(format!("dimension {d}: {} indices", s.count))
            })?;
            if !s.flags.is_null() {
                if !s.indices.is_null() {
                    return Err(Error::InvalidArgument(format!(
                        "dimension {d}: both indices and flags are given"
                    )));
                }
                let flags = slice_arg(s.flags, n, &format!("selection[{d}].flags"))?;
                return Ok(DimSelection::Indices(flag_indices(flags, shape[d], d)?));
            }
            if s.indices.is_null() {
                return Ok(DimSelection::Range {
                    start: s.start,
                    count: s.count,
                    step: s.step,
                });
            }
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

/// Reads the elements a mask selects, like zarr-python's `get_mask_selection`: `mask` holds one
/// byte per element of the array in C order (`mask_size` = the product of the shape; nonzero:
/// selected), and the selected elements go to `out` one after another in C order (`out_size`
/// = their number × item size). Like zarr-python, it lists the selected elements' coordinates
/// first (8 bytes per dimension each), then reads them as `zarr_array_read_points` does.
///
/// # Safety
/// `array` must be a live handle; `mask` has `mask_size` readable bytes; `out` has `out_size`
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_mask(
    array: *const zarr_array,
    mask: *const u8,
    mask_size: usize,
    out: *mut c_void,
    out_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let mask = slice_arg(mask, mask_size, "mask")?;
        array.read_mask(mask, slice_out(out.cast::<u8>(), out_size, "out")?)
    })
}

/// Writes `data` to the elements a mask selects, in C order (see `zarr_array_read_mask`),
/// like zarr-python's `set_mask_selection`.
///
/// # Safety
/// As for `zarr_array_read_mask`, with `data` holding `data_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_mask(
    array: *mut zarr_array,
    mask: *const u8,
    mask_size: usize,
    data: *const c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let mask = slice_arg(mask, mask_size, "mask")?;
        array.write_mask(mask, slice_arg(data.cast::<u8>(), data_size, "data")?)
    })
}

/// The box of whole chunks a block selection covers (zarr-python's `get_block_selection`,
/// `.blocks`): chunks `block_start[d]` to `block_start[d] + block_count[d] - 1` of the chunk
/// grid along each dimension `d` (for a sharded array the grid of shards, as zarr-python 3's
/// `blocks`), edge chunks clipped to the shape, as `*out_start` and `*out_count` in elements
/// (`ndim` each), ready for `zarr_array_read` and `zarr_array_write` (and the buffer's size).
/// A block outside the grid is `ZARR_ERR_OUT_OF_BOUNDS`.
///
/// # Safety
/// `array` must be a live handle; `block_start` and `block_count` hold `ndim` values;
/// `out_start` and `out_count` have room for `ndim`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_block_box(
    array: *const zarr_array,
    ndim: usize,
    block_start: *const u64,
    block_count: *const u64,
    out_start: *mut u64,
    out_count: *mut u64,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        check_ndim(array, ndim)?;
        let (start, count) = block_box(
            &array.shape(),
            &array.chunk_grid(),
            slice_arg(block_start, ndim, "block_start")?,
            slice_arg(block_count, ndim, "block_count")?,
        )?;
        let (out_start, out_count) = (
            slice_out(out_start, ndim, "out_start")?,
            slice_out(out_count, ndim, "out_count")?,
        );
        out_start.copy_from_slice(&start);
        out_count.copy_from_slice(&count);
        Ok(())
    })
}

/// The kind of a `zarr_selection`: which of its members describe it.
#[allow(non_camel_case_types)]
pub type zarr_selection_kind = u32;
/// A box, optionally strided: `start`, `count` and `step` (NULL: 1), `ndim` each, as
/// `zarr_array_read_strided` takes them. The result has extent `count`, C order.
pub const ZARR_SELECT_BOX: zarr_selection_kind = 0;
/// An orthogonal selection: `dims` (`ndim` `zarr_dim_selection`s: index lists, ranges or
/// Boolean `flags`), as `zarr_array_read_orthogonal` takes it. The result has extent
/// `dims[d]`'s length along `d`, C order.
pub const ZARR_SELECT_ORTHOGONAL: zarr_selection_kind = 1;
/// Points: `npoints` points at `coords` (`npoints * ndim` values, point after point), as
/// `zarr_array_read_points` takes them. The result is one element per point, in order.
pub const ZARR_SELECT_POINTS: zarr_selection_kind = 2;
/// A mask: `mask` (`mask_size` bytes, one per element of the array in C order, nonzero where
/// selected), as `zarr_array_read_mask` takes it. The result is the selected elements in C
/// order. `ndim` is ignored.
pub const ZARR_SELECT_MASK: zarr_selection_kind = 3;
/// Whole chunks: `start` and `count` (`ndim` each) in chunks of the chunk grid, as
/// `zarr_array_block_box` takes them (zarr-python's `get_block_selection`). The result is
/// the box they cover, edge chunks clipped to the shape, C order.
pub const ZARR_SELECT_BLOCKS: zarr_selection_kind = 4;

/// Any selection, for the calls that take one descriptor instead of one function per kind
/// (`zarr_array_selection_size`, `zarr_array_read_vlen_selection`,
/// `zarr_array_write_vlen_selection`, `zarr_array_read_fields_selection`,
/// `zarr_array_write_fields_selection`). Set `kind` and the members it names; leave the others
/// zero (`{0}` then fill in). The result of every kind is dense: its elements one after
/// another in the order the kind's description gives.
#[allow(non_camel_case_types)]
#[repr(C)]
pub struct zarr_selection {
    /// `ZARR_SELECT_BOX`, `ZARR_SELECT_ORTHOGONAL`, `ZARR_SELECT_POINTS`, `ZARR_SELECT_MASK`
    /// or `ZARR_SELECT_BLOCKS`.
    pub kind: zarr_selection_kind,
    /// The array's number of dimensions (checked; ignored for masks).
    pub ndim: usize,
    /// Boxes and blocks: the first index (in elements, or in chunks for blocks).
    pub start: *const u64,
    /// Boxes and blocks: how many indices (or chunks) along each dimension.
    pub count: *const u64,
    /// Boxes: the step along each dimension, or NULL for 1.
    pub step: *const u64,
    /// Orthogonal selections: `ndim` dimension selections.
    pub dims: *const zarr_dim_selection,
    /// Points: how many.
    pub npoints: usize,
    /// Points: `npoints * ndim` coordinates.
    pub coords: *const u64,
    /// Masks: one byte per element of the array, C order.
    pub mask: *const u8,
    /// Masks: the bytes of `mask` (the array's element count).
    pub mask_size: usize,
}

/// Reads a `zarr_selection` descriptor.
pub(super) fn selection_arg<'a>(
    array: &Array,
    selection: *const zarr_selection,
) -> Result<Selection<'a>> {
    // SAFETY: the caller passes a readable descriptor or NULL, which `slice_arg` refuses.
    let s = &slice_arg(selection, 1, "selection")?[0];
    match s.kind {
        ZARR_SELECT_BOX => Ok(Selection::Orthogonal(strided_selection(
            array, s.ndim, s.start, s.count, s.step,
        )?)),
        ZARR_SELECT_ORTHOGONAL => Ok(Selection::Orthogonal(orthogonal_selection(
            array, s.ndim, s.dims,
        )?)),
        ZARR_SELECT_POINTS => Ok(Selection::Points {
            npoints: s.npoints,
            coords: points_arg(array, s.ndim, s.npoints, s.coords)?,
        }),
        ZARR_SELECT_MASK => Ok(Selection::Mask(slice_arg(s.mask, s.mask_size, "mask")?)),
        ZARR_SELECT_BLOCKS => {
            check_ndim(array, s.ndim)?;
            let (start, count) = block_box(
                &array.shape(),
                &array.chunk_grid(),
                slice_arg(s.start, s.ndim, "start")?,
                slice_arg(s.count, s.ndim, "count")?,
            )?;
            Ok(Selection::Orthogonal(box_selection(&start, &count, None)?))
        }
        other => Err(Error::InvalidArgument(format!(
            "selection kind {other} is none of ZARR_SELECT_BOX (0) to ZARR_SELECT_BLOCKS (4)"
        ))),
    }
}

/// The number of elements a selection picks (`*out_items`; for an object array the offsets
/// buffer of `zarr_array_read_vlen_selection` needs one more) and the bytes they take
/// (`*out_bytes`): for an object array the bytes of their items, the data buffer
/// `zarr_array_read_vlen_selection` needs (this reads the chunks); otherwise the elements times
/// the item size. Either output may be NULL.
///
/// # Safety
/// `array` must be a live handle; `selection` points to a descriptor whose pointers are
/// valid for its kind; `out_items` and `out_bytes` are writable or NULL.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_selection_size(
    array: *const zarr_array,
    selection: *const zarr_selection,
    out_items: *mut usize,
    out_bytes: *mut usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let selection = selection_arg(array, selection)?;
        let (items, bytes) = array.selection_size(&selection)?;
        let fit = |n: u64, what: &str| {
            usize::try_from(n).map_err(|_| Error::TooLarge(format!("{n} {what}")))
        };
        if !out_items.is_null() {
            *out_arg(out_items, "out_items")? = fit(items, "elements")?;
        }
        if !out_bytes.is_null() {
            *out_arg(out_bytes, "out_bytes")? = fit(bytes, "bytes")?;
        }
        Ok(())
    })
}
