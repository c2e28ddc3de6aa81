//! Copies from C: a store's keys verbatim (`zarr_store_copy`) and an array re-encoded into
//! a new one (`zarr_array_copy_to`), with progress reports and cancellation.

use super::array::array_arg;
use super::array::zarr_array;
use super::boundary::{ref_arg, run, str_arg};
use super::status::zarr_status;
use super::store::zarr_store;
use crate::copy::{self, Progress};
use std::ffi::{c_char, c_void};
use std::ops::ControlFlow;

/// How far a copy is: bytes and items done out of the totals (see each copy for what an item
/// and a byte are).
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct zarr_progress {
    /// Bytes done so far.
    pub bytes_done: u64,
    /// Bytes to do in all.
    pub bytes_total: u64,
    /// Items done so far.
    pub items_done: u64,
    /// Items to do in all.
    pub items_total: u64,
}

/// A progress callback: called on the thread that started the copy, never from two threads
/// at once, with `user_data` as given to the copy. It returns 0 to go on; anything else
/// cancels the copy, which then returns `ZARR_ERR_CANCELLED`. `progress` is valid during the
/// call only.
#[allow(non_camel_case_types)]
pub type zarr_progress_fn =
    Option<unsafe extern "C" fn(progress: *const zarr_progress, user_data: *mut c_void) -> i32>;

/// The caller's callback as the engine's progress function (reporting nothing when NULL).
fn progress_fn(
    callback: zarr_progress_fn,
    user_data: *mut c_void,
) -> impl FnMut(&Progress) -> ControlFlow<()> {
    move |p: &Progress| {
        let Some(callback) = callback else {
            return ControlFlow::Continue(());
        };
        let report = zarr_progress {
            bytes_done: p.bytes_done,
            bytes_total: p.bytes_total,
            items_done: p.items_done,
            items_total: p.items_total,
        };
        // SAFETY: the caller gives a valid function, to be called with its own user_data.
        match unsafe { callback(&report, user_data) } {
            0 => ControlFlow::Continue(()),
            _ => ControlFlow::Break(()),
        }
    }
}

/// Copies every key below `src_path` of `src` (an array, a group with everything below it,
/// or `""`: the whole store) to `dst_path` of `dst`, values verbatim: chunks are not
/// decompressed, so any codec and either chunk key layout (`"."` or nested `"/"`) copies as
/// is, between any kinds of store (directory, zip, memory). `src` and `dst` may be the same
/// store if `dst_path` is not inside `src_path` (`ZARR_ERR_INVALID_PATH`).
///
/// `dst_path` must hold no array or group (`ZARR_ERR_ALREADY_EXISTS`); its missing ancestors
/// become groups. Nothing at `src_path` is `ZARR_ERR_NOT_FOUND`; a read-only `dst` is
/// `ZARR_ERR_READ_ONLY`. Keys are copied in parallel, in batches; `progress` (may be NULL)
/// is called before the first batch and after each one, counting keys (items) and value
/// bytes. When it cancels (or a key fails), the keys copied so far stay; node metadata
/// (`.zarray`, `.zgroup`) is copied last, deepest first, so every array or group visible in
/// `dst` is complete. Keys below `dst_path` that belong to no node (such as those of a partial
/// copy) are overwritten, so the copy can be retried. A zip `dst` is written by its
/// `zarr_store_close`. An N5 `dst` takes keys only from another N5 container
/// (`ZARR_ERR_UNSUPPORTED` otherwise: Zarr chunks are not N5 blocks; `zarr_array_copy_to`
/// re-encodes them); out of an N5 container the keys copy as zarr-python 2's `N5Store` shows
/// them, chunks under the `n5_wrapper` compressor, which libzarr and zarr-python 2 read.
///
/// # Safety
/// `src` and `dst` must be live handles; `src_path` and `dst_path` NUL-terminated strings;
/// `progress` NULL or a function that `user_data` suits.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_copy(
    src: *const zarr_store,
    src_path: *const c_char,
    dst: *mut zarr_store,
    dst_path: *const c_char,
    progress: zarr_progress_fn,
    user_data: *mut c_void,
) -> zarr_status {
    run(|| {
        let src = ref_arg(src, "src")?;
        let src_path = str_arg(src_path, "src_path")?;
        let dst = ref_arg(dst, "dst")?;
        let dst_path = str_arg(dst_path, "dst_path")?;
        copy::copy_store(
            &src.inner,
            src_path,
            &dst.inner,
            dst_path,
            &mut progress_fn(progress, user_data),
        )
    })
}

/// Copies the array `src` into a new array at `dst_path` of `dst`, re-encoding its data:
/// the new metadata is the source's with the keys of `overrides_json` replaced (a JSON object;
/// NULL or `"{}"` changes nothing). A v2 copy may change `chunks`, `compressor`, `filters`,
/// `order`, `dimension_separator` and `fill_value`; a v3 copy `chunk_grid`,
/// `chunk_key_encoding`, `codecs` (e.g. a `sharding_indexed` chain), `fill_value` and
/// `dimension_names`. `"zarr_format": 3` converts a v2 array to v3: its shape, chunk shape, data
/// type and fill value are carried over, xarray's `_ARRAY_DIMENSIONS` attribute becomes
/// `dimension_names`, and what the overrides do not set gets zarr-python 3's defaults (`bytes`
/// then `zstd`, `/` chunk keys); so migrating a v2 array to sharded v3 is one call. A v3 array
/// cannot become v2 (`ZARR_ERR_UNSUPPORTED`). `shape` and `dtype`/`data_type` may only be
/// repeated unchanged (a new shape is `ZARR_ERR_INVALID_ARGUMENT`, a new data type
/// `ZARR_ERR_UNSUPPORTED`: values are never converted); other keys are
/// `ZARR_ERR_INVALID_ARGUMENT`. The attributes are copied too. `dst_path` must hold no array
/// or group (`ZARR_ERR_ALREADY_EXISTS`); its missing ancestors become groups.
///
/// Data moves in blocks aligned to the new chunk grid of at most 128 MiB (or one new chunk, if
/// larger), each read and written in parallel, so memory stays bounded whatever the array's
/// size. Blocks whose source chunks were never written are skipped when the fill value is
/// unchanged, and new chunks holding only the fill value are not stored. Object arrays (`|O`)
/// copy through their items. `progress` (may be NULL) is called before the first block and
/// after each one, counting elements (items) and their bytes (for object arrays the item bytes,
/// whose total is known only at the end: `bytes_total` follows `bytes_done`). When it cancels
/// (`ZARR_ERR_CANCELLED`) or a block fails, the new array stays with the blocks copied so far;
/// the rest reads as the fill value.
///
/// # Safety
/// `src` must be a live handle, `dst` a live store handle; `dst_path` a NUL-terminated string,
/// `overrides_json` NULL or one; `progress` NULL or a function that `user_data` suits.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_copy_to(
    src: *const zarr_array,
    dst: *mut zarr_store,
    dst_path: *const c_char,
    overrides_json: *const c_char,
    progress: zarr_progress_fn,
    user_data: *mut c_void,
) -> zarr_status {
    run(|| {
        let src = array_arg(src)?;
        let dst = ref_arg(dst, "dst")?;
        let dst_path = str_arg(dst_path, "dst_path")?;
        let overrides = match overrides_json.is_null() {
            true => "{}",
            false => str_arg(overrides_json, "overrides_json")?,
        };
        copy::copy_array(
            src,
            dst.inner.clone(),
            dst_path,
            overrides,
            copy::DEFAULT_BLOCK_BYTES,
            &mut progress_fn(progress, user_data),
        )
        .map(drop)
    })
}
