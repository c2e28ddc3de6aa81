//! Copies from C: a store's keys verbatim (`zarr_store_copy`, and with zarr-python 2's
//! `copy_store` options `zarr_store_copy_options`), an array re-encoded into a new one
//! (`zarr_array_copy_to`), and a node re-encoded array by array with zarr-python 2's `copy` and
//! `copy_all` options (`zarr_node_copy`), with progress reports, cancellation, log lines and
//! counts.

use super::array::array_arg;
use super::array::zarr_array;
use super::boundary::{ref_arg, run, str_arg};
use super::status::zarr_status;
use super::store::zarr_store;
use crate::copy::{self, Progress};
use crate::copy::{CopyCounts, NodeCopyOptions, StoreCopyOptions};
use crate::error::Result;
use std::ffi::{c_char, c_void, CString};
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
/// is, between any two stores (local, database, remote or the program's own). `src` and
/// `dst` may be the same store if `dst_path` is not inside `src_path`
/// (`ZARR_ERR_INVALID_PATH`).
///
/// `dst_path` must hold no array or group (`ZARR_ERR_ALREADY_EXISTS`); its missing ancestors
/// become groups. Nothing at `src_path` is `ZARR_ERR_NOT_FOUND`; a read-only `dst` is
/// `ZARR_ERR_READ_ONLY`. Keys are copied in parallel, in batches; `progress` (may be NULL)
/// is called before the first batch and after each one, counting keys (items) and value
/// bytes. When it cancels (or a key fails), the keys copied so far stay; node metadata
/// (`.zarray`, `.zgroup`) is copied last, deepest first, so every array or group visible in
/// `dst` is complete. Keys below `dst_path` that belong to no node (such as those of a partial
/// copy) are overwritten, so the copy can be retried. A zip `dst` is complete in its file
/// after `zarr_store_flush` or `zarr_store_close`. An N5 `dst` takes keys only from another N5 container
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

/// What a copy with options did: zarr-python 2's `(n_copied, n_skipped, n_bytes_copied)`.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, Default)]
pub struct zarr_copy_counts {
    /// Keys (`zarr_store_copy_options`) or arrays and groups (`zarr_node_copy`) copied, or
    /// that a dry run would copy.
    pub copied: u64,
    /// Keys, arrays or groups left as they were in the destination.
    pub skipped: u64,
    /// Bytes copied: the values of the keys copied, or the arrays' elements times their item
    /// size (8 for object arrays, as NumPy counts them); 0 in a dry run.
    pub bytes_copied: u64,
}

/// A copy's log: called on the thread that started the copy with one line of text (UTF-8,
/// NUL-terminated, no line end) per key or node copied or skipped, in zarr-python 2's words,
/// then a summary line; with `user_data` as given to the copy. `line` is valid during the call
/// only.
#[allow(non_camel_case_types)]
pub type zarr_copy_log_fn =
    Option<unsafe extern "C" fn(line: *const c_char, user_data: *mut c_void)>;

/// The caller's log callback as the engine's log (logging nothing when NULL).
fn log_fn(callback: zarr_copy_log_fn, user_data: *mut c_void) -> impl FnMut(&str) {
    move |line: &str| {
        let Some(callback) = callback else {
            return;
        };
        // Keys and paths hold no NUL (stores refuse them); cut at one all the same.
        let text = line.split('\0').next().unwrap_or_default();
        let text = CString::new(text).expect("no NUL left");
        // SAFETY: the caller gives a valid function, to be called with its own user_data.
        unsafe { callback(text.as_ptr(), user_data) }
    }
}

/// The raw arguments the two copies with options share.
struct CopyCall {
    src: *const zarr_store,
    src_path: *const c_char,
    dst: *mut zarr_store,
    dst_path: *const c_char,
    options_json: *const c_char,
}

/// [`CopyCall`]'s arguments, checked.
struct CopyArgs<'a> {
    src: &'a zarr_store,
    src_path: &'a str,
    dst: &'a zarr_store,
    dst_path: &'a str,
    /// The options text, `None` for NULL.
    options: Option<&'a str>,
}

impl CopyCall {
    /// Zeroes `counts_out` (if given), checks the arguments, runs `copy` with the caller's
    /// callbacks, and hands its counts over when it succeeds.
    unsafe fn run(
        self,
        log: zarr_copy_log_fn,
        progress: zarr_progress_fn,
        user_data: *mut c_void,
        counts_out: *mut zarr_copy_counts,
        copy: impl FnOnce(&CopyArgs, &mut copy::LogFn, &mut copy::ProgressFn) -> Result<CopyCounts>,
    ) -> zarr_status {
        give_counts(counts_out, CopyCounts::default());
        run(|| {
            let args = CopyArgs {
                src: ref_arg(self.src, "src")?,
                src_path: str_arg(self.src_path, "src_path")?,
                dst: ref_arg(self.dst, "dst")?,
                dst_path: str_arg(self.dst_path, "dst_path")?,
                options: match self.options_json.is_null() {
                    true => None,
                    false => Some(str_arg(self.options_json, "options_json")?),
                },
            };
            let counts = copy(
                &args,
                &mut log_fn(log, user_data),
                &mut progress_fn(progress, user_data),
            )?;
            give_counts(counts_out, counts);
            Ok(())
        })
    }
}

/// Writes the counts where the caller asked (nowhere for NULL).
unsafe fn give_counts(counts_out: *mut zarr_copy_counts, counts: CopyCounts) {
    if let Some(out) = counts_out.as_mut() {
        *out = zarr_copy_counts {
            copied: counts.copied,
            skipped: counts.skipped,
            bytes_copied: counts.bytes_copied,
        };
    }
}

/// zarr-python 2's `copy_store`: copies the keys below `src_path` of `src` to the same
/// relative keys below `dst_path` of `dst`, values verbatim (as `zarr_store_copy`), with the
/// options of `options_json` (NULL or `"{}"`: the defaults), a JSON object of:
///
/// - `"if_exists"`: what to do with a destination key that exists: `"raise"` (the default:
///   `ZARR_ERR_ALREADY_EXISTS` naming the first such key in key order, before anything is
///   written), `"replace"` (overwritten) or `"skip"` (left as it is, counted as skipped);
/// - `"dry_run"`: `true` decides, logs and counts but writes nothing (and reads no value);
/// - `"excludes"`, `"includes"`: a regular expression or a list of them, searched for anywhere
///   in each source key (the whole key, `src_path` included: Python's `re.search`); a key
///   matching an exclude is left out unless it matches an include too. The syntax is the Rust
///   `regex` crate's, Python's for all that key filters need, but without look-around or
///   backreferences (refused: `ZARR_ERR_INVALID_ARGUMENT` naming the pattern) and with `\z`
///   for Python's `\Z`;
/// - `"flags"`: Python's `re` flags as an integer: `re.IGNORECASE` (2), `re.MULTILINE` (8),
///   `re.DOTALL` (16), `re.UNICODE` (32, always on) and `re.VERBOSE` (64); others are
///   `ZARR_ERR_UNSUPPORTED`.
///
/// Any other member, or a member of the wrong type, is `ZARR_ERR_INVALID_ARGUMENT` naming it.
/// Unlike `zarr_store_copy`, `dst_path` may hold a node already (only keys conflict), and, as in
/// zarr-python, only the keys are written: missing ancestors of `dst_path` do not become groups.
/// `src_path` may be any prefix with keys below it (a node or not); no key below it is
/// `ZARR_ERR_NOT_FOUND`; copying within one store into the source is `ZARR_ERR_INVALID_PATH`.
///
/// `log` (may be NULL) gets a line per key in sorted key order, decided before the copy starts:
/// `copy KEY`, or `copy KEY -> DEST_KEY` where the keys differ, `skip ...` for a key left; then
/// `all done: N copied, M skipped, B bytes copied` (`dry run: N copied, M skipped`), numbers
/// with thousands commas, as zarr-python 2 logs them. `progress` (may be NULL) counts the keys
/// copied and their bytes, as for `zarr_store_copy`; nodes become visible complete (metadata
/// last). `counts_out` (may be NULL) receives the counts on success (zeros on failure).
///
/// # Safety
/// `src` and `dst` must be live handles; `src_path` and `dst_path` NUL-terminated strings,
/// `options_json` NULL or one; `log` and `progress` NULL or functions that `user_data` suits;
/// `counts_out` NULL or a writable `zarr_copy_counts`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn zarr_store_copy_options(
    src: *const zarr_store,
    src_path: *const c_char,
    dst: *mut zarr_store,
    dst_path: *const c_char,
    options_json: *const c_char,
    log: zarr_copy_log_fn,
    progress: zarr_progress_fn,
    user_data: *mut c_void,
    counts_out: *mut zarr_copy_counts,
) -> zarr_status {
    let call = CopyCall {
        src,
        src_path,
        dst,
        dst_path,
        options_json,
    };
    call.run(
        log,
        progress,
        user_data,
        counts_out,
        |args, log, progress| {
            let options = StoreCopyOptions::parse(args.options)?;
            copy::copy_store_with_options(
                &args.src.inner,
                args.src_path,
                &args.dst.inner,
                args.dst_path,
                &options,
                log,
                progress,
            )
        },
    )
}

/// zarr-python 2's `copy` and `copy_all`: copies the array or group at `src_path` of `src` to
/// `dst_path` of `dst` (the destination group's path and the copy's name in one), re-encoding
/// every array through the array engine (as `zarr_array_copy_to`), with the options of
/// `options_json` (NULL or `"{}"`: the defaults), a JSON object of:
///
/// - `"overrides"`: metadata changes for every array copied, as `zarr_array_copy_to` takes them
///   (zarr-python's `**create_kws`), e.g. `{"compressor": {"id": "zstd", "level": 5}}` or
///   `{"zarr_format": 3}`;
/// - `"if_exists"`: what to do where the destination holds a node: `"raise"` (the default:
///   `ZARR_ERR_ALREADY_EXISTS`, "an object 'NAME' already exists in destination '/GROUP'"),
///   `"replace"` (the node is deleted, then copied anew), `"skip"` (left, counted as skipped)
///   or `"skip_initialized"` (an array whose every chunk is stored is left, anything else
///   replaced). A group copies into an existing group (attributes merged); only an array in a
///   group's way is raised, replaced or skipped;
/// - `"dry_run"`: `true` decides, logs and counts but writes nothing;
/// - `"shallow"`: `true` copies the arrays directly in the group only: member groups are not
///   copied (nor logged or counted), as zarr-python 2 does;
/// - `"without_attrs"`: `true` copies no user attributes;
/// - `"copy_all"`: `true` copies every member of the group at `src_path` into the group at
///   `dst_path` (made when missing, and given the source group's attributes, merged) instead of
///   the group itself: zarr-python 2's `copy_all(source, dest)`.
///
/// Any other member, or one of the wrong type, is `ZARR_ERR_INVALID_ARGUMENT` naming it.
/// Members are copied in name order, depth first. Nothing at `src_path` is `ZARR_ERR_NOT_FOUND`;
/// an array at or above the destination group is `ZARR_ERR_ALREADY_EXISTS`; within one store,
/// a source and a destination of which one contains the other are `ZARR_ERR_INVALID_PATH`.
/// Missing ancestors of `dst_path` become groups.
///
/// `log` (may be NULL) gets zarr-python 2's lines as each node is decided: `copy /PATH` for a
/// group, `copy /PATH (SHAPE) DTYPE` for an array (NumPy's `str(dtype)`: `(100,) int64`),
/// `skip ...` for what is left, the source's path each time; then `all done: ...` or
/// `dry run: ...` as for `zarr_store_copy_options`. `progress` (may be NULL) reports each
/// array's copy in turn (elements and their bytes, starting from 0 for each array); cancelling
/// it stops the whole copy (`ZARR_ERR_CANCELLED`, the nodes copied so far kept). `counts_out`
/// (may be NULL) receives the counts on success (zeros on failure): arrays and groups copied
/// and skipped, and the bytes of the arrays copied (elements times item size).
///
/// # Safety
/// `src` and `dst` must be live handles; `src_path` and `dst_path` NUL-terminated strings,
/// `options_json` NULL or one; `log` and `progress` NULL or functions that `user_data` suits;
/// `counts_out` NULL or a writable `zarr_copy_counts`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn zarr_node_copy(
    src: *const zarr_store,
    src_path: *const c_char,
    dst: *mut zarr_store,
    dst_path: *const c_char,
    options_json: *const c_char,
    log: zarr_copy_log_fn,
    progress: zarr_progress_fn,
    user_data: *mut c_void,
    counts_out: *mut zarr_copy_counts,
) -> zarr_status {
    let call = CopyCall {
        src,
        src_path,
        dst,
        dst_path,
        options_json,
    };
    call.run(
        log,
        progress,
        user_data,
        counts_out,
        |args, log, progress| {
            let options = NodeCopyOptions::parse(args.options)?;
            copy::copy_node(
                &args.src.inner,
                args.src_path,
                &args.dst.inner,
                args.dst_path,
                &options,
                log,
                progress,
            )
        },
    )
}
