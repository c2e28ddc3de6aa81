//! Object arrays from C: variable-length text, byte strings or arrays in the Arrow-style layout
//! (an `int64_t` offsets array of n + 1 entries and one data buffer), with no allocation per item.

use super::array::{array_arg, box_args, text_out, zarr_array};
use super::boundary::{out_arg, run, slice_arg, slice_out};
use super::selection::{selection_arg, zarr_selection};
use super::status::zarr_status;
use crate::error::{Error, Result};
use std::ffi::{c_char, c_void};

/// The object codec of an object (`|O`, `ZARR_DTYPE_OBJECT`) array as JSON:
/// `{"id": "vlen-utf8"}` (UTF-8 text), `{"id": "vlen-bytes"}` (byte strings) or
/// `{"id": "vlen-array", "dtype": "<i4"}` (arrays of that type), `{"id": "json2", ...}` or
/// `{"id": "msgpack2"}` (strings, or items of any JSON type: `zarr_array_set_json_items`),
/// `{"id": "categorize", "dtype": "|O", ...}` (text items, each one of its labels),
/// `{"id": "pickle", ...}` (items as JSON text; also the codec of records with object fields,
/// each record a JSON object of its fields), with their full configurations; `"null"` for
/// other arrays. Free with `zarr_string_free`.
///
/// # Safety
/// `array` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_object_codec(
    array: *const zarr_array,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_json, "out_json", |a| {
        let config = a
            .object_codec()
            .map_or(serde_json::Value::Null, |c| c.config());
        Ok(config.to_string())
    })
}

/// Sets whether the items of a `json2` or `msgpack2` array pass through the vlen calls as
/// JSON text: a string item is then `"quoted"`, and numbers, lists, objects, booleans and
/// `null` pass too (as numcodecs' `JSON` and `MsgPack` hold them); an item written must be JSON
/// text (`ZARR_ERR_INVALID_ARGUMENT` naming it otherwise). Off by default: items are strings,
/// given as their UTF-8 text, and any other item read is `ZARR_ERR_UNSUPPORTED`. Applies to
/// this handle. `pickle` arrays pass items only as JSON text (on is accepted, off refused);
/// other arrays: `ZARR_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `array` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_set_json_items(
    array: *mut zarr_array,
    on: bool,
) -> zarr_status {
    run(|| array_arg(array)?.set_json_items(on))
}

/// Whether the items of this handle's `json2`/`msgpack2` array pass as JSON text
/// (`zarr_array_set_json_items`); always for `pickle` arrays.
///
/// # Safety
/// `array` must be a live handle and `out_on` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_json_items(
    array: *const zarr_array,
    out_on: *mut bool,
) -> zarr_status {
    run(|| {
        let on = array_arg(array)?.json_items();
        *out_arg(out_on, "out_on")? = on;
        Ok(())
    })
}

/// The number of bytes the items of the box `start`/`count` of an object array take: the
/// size of the data buffer `zarr_array_read_vlen` needs.
///
/// # Safety
/// `array` must be a live handle; `start`/`count` hold `ndim` entries; `out_bytes` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_vlen_size(
    array: *const zarr_array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    out_bytes: *mut usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let (start, count) = box_args(array, ndim, start, count)?;
        let out = out_arg(out_bytes, "out_bytes")?;
        let size = array.vlen_size(start, count)?;
        *out =
            usize::try_from(size).map_err(|_| Error::TooLarge(format!("{size} bytes of items")))?;
        Ok(())
    })
}

/// Reads the items of the box `start`/`count` (n = product of `count` items, C order) of an
/// object array: `offsets` (`noffsets` = n + 1 entries) receives where each item starts in
/// `data` and, last, where the final one ends; `data` (`data_size` bytes, at least
/// `zarr_array_vlen_size`) receives the items back to back: UTF-8 text, bytes, or array
/// elements in native byte order (item i has (offsets[i+1] - offsets[i]) / itemsize elements).
/// Text is not NUL-terminated. Never-written items read as the fill value.
///
/// # Safety
/// `array` must be a live handle; `start`/`count` hold `ndim` entries; `offsets` has
/// `noffsets` writable entries and `data` `data_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_vlen(
    array: *const zarr_array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    offsets: *mut i64,
    noffsets: usize,
    data: *mut c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let (start, count) = box_args(array, ndim, start, count)?;
        let offsets = slice_out(offsets, noffsets, "offsets")?;
        let data = slice_out(data.cast::<u8>(), data_size, "data")?;
        array.read_vlen(start, count, offsets, data)
    })
}

/// The items a caller gives: `noffsets` offsets into `data_size` bytes of `data`.
pub(super) fn items_args<'a>(
    offsets: *const i64,
    noffsets: usize,
    data: *const c_void,
    data_size: usize,
) -> Result<(&'a [i64], &'a [u8])> {
    Ok((
        slice_arg(offsets, noffsets, "offsets")?,
        slice_arg(data.cast::<u8>(), data_size, "data")?,
    ))
}

/// Writes the items of the box `start`/`count` of an object array from `offsets`
/// (`noffsets` = n + 1 non-decreasing entries, item i being `data[offsets[i]..offsets[i+1]]`)
/// and `data`: UTF-8 text (checked), bytes, or array elements in native byte order.
///
/// # Safety
/// `array` must be a live handle; `start`/`count` hold `ndim` entries; `offsets` has
/// `noffsets` entries and `data` `data_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_vlen(
    array: *mut zarr_array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    offsets: *const i64,
    noffsets: usize,
    data: *const c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let (start, count) = box_args(array, ndim, start, count)?;
        let (offsets, data) = items_args(offsets, noffsets, data, data_size)?;
        array.write_vlen(start, count, offsets, data)
    })
}

/// Reads the items of any selection of an object array (`zarr_selection`: boxes, strided
/// boxes, orthogonal selections with index lists, ranges or Boolean flags, points, masks,
/// blocks), in the selection's result order, in the layout of `zarr_array_read_vlen`:
/// `noffsets` = the selected elements + 1 and `data_size` at least their bytes, both as
/// `zarr_array_selection_size` gives them. A point named twice is read twice.
///
/// # Safety
/// `array` must be a live handle; `selection` points to a descriptor whose pointers are valid
/// for its kind; `offsets` has `noffsets` writable entries and `data` `data_size` writable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_vlen_selection(
    array: *const zarr_array,
    selection: *const zarr_selection,
    offsets: *mut i64,
    noffsets: usize,
    data: *mut c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let selection = selection_arg(array, selection)?;
        let offsets = slice_out(offsets, noffsets, "offsets")?;
        let data = slice_out(data.cast::<u8>(), data_size, "data")?;
        array.read_vlen_selection(&selection, offsets, data)
    })
}

/// Writes the items of any selection of an object array (see
/// `zarr_array_read_vlen_selection`) from `offsets` and `data` laid out as for
/// `zarr_array_write_vlen`, item i going to the selection's i-th element; where an element is
/// selected twice, the last item wins. Partly covered chunks keep their other items.
///
/// # Safety
/// `array` must be a live handle; `selection` points to a descriptor whose pointers are valid
/// for its kind; `offsets` has `noffsets` entries and `data` `data_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_vlen_selection(
    array: *mut zarr_array,
    selection: *const zarr_selection,
    offsets: *const i64,
    noffsets: usize,
    data: *const c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let selection = selection_arg(array, selection)?;
        let (offsets, data) = items_args(offsets, noffsets, data, data_size)?;
        array.write_vlen_selection(&selection, offsets, data)
    })
}
