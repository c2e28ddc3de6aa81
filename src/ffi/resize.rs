//! Changing an array's shape: `zarr_array_resize`, `zarr_array_append`,
//! `zarr_array_append_vlen`.

use super::array::{array_arg, check_ndim, zarr_array};
use super::boundary::{run, slice_arg};
use super::status::zarr_status;
use super::vlen::items_args;
use std::ffi::c_void;

/// Changes the array's shape to `new_shape` (`ndim` entries; `ndim` must match the array),
/// like zarr-python's `resize`. Data inside both the old and the new shape is kept, and so
/// are the attributes. Chunks wholly outside the new shape are deleted from the store; where a
/// dimension shrinks, the part of its edge chunks beyond the new length is reset to the fill
/// value, so growing the array again later shows the fill value there, never old data.
/// `.zarray` is rewritten last, with only its `shape` changed. A read-only store is
/// `ZARR_ERR_READ_ONLY`.
///
/// Calls already running on this handle finish with the shape they started with; other
/// handles open on the same array keep their shape until reopened.
///
/// # Safety
/// `array` must be a live handle and `new_shape` hold `ndim` readable entries.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_resize(
    array: *mut zarr_array,
    ndim: usize,
    new_shape: *const u64,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        check_ndim(array, ndim)?;
        array.resize(slice_arg(new_shape, ndim, "new_shape")?)
    })
}

/// Appends `count` positions along dimension `axis` and writes `data` into them, like
/// zarr-python's `append`: `data` holds an array of the current shape with `axis` replaced by
/// `count` (C order, native byte order, `data_size` = its element count × item size bytes;
/// anything else is `ZARR_ERR_BUFFER_SIZE`). If the write fails, the array is shrunk back to
/// its old shape and the write's status returned. Object (`|O`) arrays are
/// `ZARR_ERR_INVALID_ARGUMENT`: they append with `zarr_array_append_vlen`.
///
/// # Safety
/// `array` must be a live handle and `data` hold `data_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_append(
    array: *mut zarr_array,
    axis: usize,
    count: u64,
    data: *const c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        array.append(
            axis,
            count,
            slice_arg(data.cast::<u8>(), data_size, "data")?,
        )
    })
}

/// Appends `count` positions along dimension `axis` of an object (`|O`) array, as
/// `zarr_array_append` does, with the items given as `zarr_array_write_vlen` takes them:
/// `offsets` (`noffsets` = items + 1 non-decreasing entries; anything else is
/// `ZARR_ERR_BUFFER_SIZE`) into `data` (UTF-8 text, checked; bytes; or array elements in native
/// byte order). If the write fails, the array is shrunk back to its old shape.
///
/// # Safety
/// `array` must be a live handle; `offsets` hold `noffsets` entries and `data` `data_size`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_append_vlen(
    array: *mut zarr_array,
    axis: usize,
    count: u64,
    offsets: *const i64,
    noffsets: usize,
    data: *const c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let (offsets, data) = items_args(offsets, noffsets, data, data_size)?;
        array.append_vlen(axis, count, offsets, data)
    })
}
