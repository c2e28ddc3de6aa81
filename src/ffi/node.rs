//! Hierarchy operations on paths of a store: what a path holds, deleting and moving nodes;
//! and an array's diagnostics.

use super::array::array_arg;
use super::array::{text_out, zarr_array};
use super::boundary::{out_arg, ref_arg, run, slice_out, str_arg};
use super::status::zarr_status;
use super::store::zarr_store;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::hierarchy::{self, NodeKind};
use crate::path;
use std::ffi::c_char;

/// What a path of a store holds (`zarr_store_node_kind`).
#[allow(non_camel_case_types)]
pub type zarr_node_kind = i32;
/// Nothing: neither an array nor a group.
pub const ZARR_NODE_NONE: zarr_node_kind = 0;
/// An array (v2 `.zarray`, v3 `zarr.json` of `node_type` `"array"`).
pub const ZARR_NODE_ARRAY: zarr_node_kind = 1;
/// A group (v2 `.zgroup`, v3 `zarr.json` of `node_type` `"group"`).
pub const ZARR_NODE_GROUP: zarr_node_kind = 2;

/// Whether `path` holds an array, a group or nothing.
///
/// # Safety
/// `store` must be a live handle, `path` a NUL-terminated string, `out_kind` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_node_kind(
    store: *const zarr_store,
    path: *const c_char,
    out_kind: *mut zarr_node_kind,
) -> zarr_status {
    run(|| {
        let store = ref_arg(store, "store")?;
        let path = path::normalize(str_arg(path, "path")?)?;
        let out = out_arg(out_kind, "out_kind")?;
        *out = match hierarchy::node_kind(&store.inner, &path)? {
            NodeKind::None => ZARR_NODE_NONE,
            NodeKind::Array => ZARR_NODE_ARRAY,
            NodeKind::Group => ZARR_NODE_GROUP,
        };
        Ok(())
    })
}

/// Deletes the array or group at `path` with everything below it. The root cannot be
/// deleted (`ZARR_ERR_INVALID_PATH`); nothing at `path` is `ZARR_ERR_NOT_FOUND`. Handles
/// already open on the deleted nodes read the fill value afterwards.
///
/// # Safety
/// `store` must be a live handle and `path` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_delete(
    store: *mut zarr_store,
    path: *const c_char,
) -> zarr_status {
    run(|| hierarchy::delete_node(&ref_arg(store, "store")?.inner, str_arg(path, "path")?))
}

/// Moves (renames) the array or group at `from`, with everything below it, to `to`, which
/// must hold nothing (`ZARR_ERR_ALREADY_EXISTS`) and must not lie inside `from`
/// (`ZARR_ERR_INVALID_PATH`); missing ancestors of `to` become groups. Keys are copied, then
/// removed: a failure part-way leaves both copies, never neither.
///
/// # Safety
/// `store` must be a live handle; `from` and `to` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_move(
    store: *mut zarr_store,
    from: *const c_char,
    to: *const c_char,
) -> zarr_status {
    run(|| {
        hierarchy::move_node(
            &ref_arg(store, "store")?.inner,
            str_arg(from, "from")?,
            str_arg(to, "to")?,
        )
    })
}

/// Changes the fill value stored in the metadata of the array at `path`, like zarr-python's
/// `z.fill_value = x`: `fill_value_json` is the value as the array's format writes it (a
/// number, `"NaN"`, `"Infinity"`, a base64 string for byte strings and records, `[re, im]`
/// for complex numbers, `null` in v2 for none). It is checked as opening the array would
/// check it (`ZARR_ERR_INVALID_METADATA` naming the key) before the document is written; its
/// other members stay as stored. Chunks never written then read as the new value; stored
/// chunks keep their values. Handles opened before keep the fill value they opened with
/// (reopen them, as after a resize through another handle).
///
/// # Safety
/// `store` must be a live handle; `path` and `fill_value_json` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_set_fill_value(
    store: *mut zarr_store,
    path: *const c_char,
    fill_value_json: *const c_char,
) -> zarr_status {
    run(|| {
        Array::set_fill_value(
            &ref_arg(store, "store")?.inner,
            str_arg(path, "path")?,
            str_arg(fill_value_json, "fill_value_json")?,
        )
    })
}

/// Diagnostics like zarr-python's `info`, as JSON: `name` (zarr-python's `"/"` + path; null
/// for an array at the store root, as there), `path`, `store` (the location it was opened
/// with), `store_type` (`"directory"`, `"zip"`, `"memory"`, ... as `zarr_group_info_json`),
/// `read_only` (opened with `ZARR_MODE_READ`), `zarr_format`, `shape`, `chunks` (for a
/// sharded array: the shards), `nbytes` (the values;
/// null for object arrays), `nbytes_stored` (all of the array's keys), `storage_ratio`,
/// `chunks_initialized` and `chunks_total` (chunks or shards; `nbytes` and `chunks_total` are
/// null where they exceed 2^64 - 1; `nbytes_stored`, `storage_ratio` and `chunks_initialized`
/// null where the store cannot list, as a web server); then for a v2 array `dtype` (as in `.zarray`), `order`,
/// `compressor` and `filters`, for a v3 array `data_type` and `codecs` as in its `zarr.json`
/// and, when sharded, `inner_chunks`. Free with `zarr_string_free`.
///
/// # Safety
/// `array` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_info_json(
    array: *const zarr_array,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_json, "out_json", |a| Ok(a.info()?.to_string()))
}

/// The diagnostics as zarr-python 2 prints `str(z.info)`: `Key : value` lines, keys padded to
/// the longest, each ending in `\n`: `Name` (none at the store root), `Data type`, `Shape`,
/// `Chunk shape` (NumPy's and Python's notation), `Order`, `Read-only`, `Filter [i]`,
/// `Compressor`, `Store type`, `No. bytes`, then when anything is stored `No. bytes stored`
/// and `Storage ratio`, and `Chunks initialized`; sizes from 1 KiB on with zarr-python's
/// human-readable form (`1000000 (976.6K)`). Lines about Python objects differ on purpose:
/// codecs are their JSON configurations (not numcodecs' `repr`), the store type is libzarr's
/// name for it, there is no `Type` line; a v3 array has one `Codecs` line. `No. bytes stored`
/// counts every key of the array (zarr-python 2's directory store counts only the files
/// directly in the array's directory, missing nested `/` chunks). Free with
/// `zarr_string_free`.
///
/// # Safety
/// `array` must be a live handle and `out_text` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_info_text(
    array: *const zarr_array,
    out_text: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_text, "out_text", |a| a.info_text())
}

/// The hash name of a digest call: NULL is `"sha1"`, zarr-python's default.
fn hashname_arg<'a>(hashname: *const c_char) -> Result<&'a str> {
    match hashname.is_null() {
        true => Ok("sha1"),
        false => str_arg(hashname, "hashname"),
    }
}

/// The array's digest as zarr-python 2's `Array.digest(hashname)` computes it, so both give
/// the same bytes for the same stored array: one hash over the stored bytes of every chunk of
/// the grid in C order of chunk positions (chunks never written add nothing; chunks outside
/// the current shape are left out), then the stored `.zarray`, then the stored `.zattrs` (a v3
/// array: its chunks or shards, then its `zarr.json`). The bytes are hashed as stored
/// (compressed), so two arrays of equal values but other codecs or metadata differ.
/// `hashname` is one of `"sha1"` (NULL: zarr-python's default; 20 bytes), `"sha224"`,
/// `"sha256"`, `"sha384"`, `"sha512"` and `"md5"`, as Python's `hashlib` names them (any
/// case); another is `ZARR_ERR_UNSUPPORTED`. The digest is written to `out`, which must hold
/// `out_size` bytes: fewer than the digest's length is `ZARR_ERR_BUFFER_SIZE` (saying the
/// length); `*out_len` (may be NULL) receives the length. Only stored chunks are read, one
/// at a time.
///
/// # Safety
/// `array` must be a live handle, `hashname` NULL or a NUL-terminated string, `out` writable
/// for `out_size` bytes, `out_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_digest(
    array: *const zarr_array,
    hashname: *const c_char,
    out: *mut u8,
    out_size: usize,
    out_len: *mut usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let hashname = hashname_arg(hashname)?;
        let digest = array.digest(hashname)?;
        if out_size < digest.len() {
            return Err(Error::BufferSize(format!(
                "a {hashname} digest takes {} bytes, out_size is {out_size}",
                digest.len()
            )));
        }
        slice_out(out, digest.len(), "out")?.copy_from_slice(&digest);
        if !out_len.is_null() {
            // SAFETY: checked non-NULL; the caller says it is writable.
            unsafe { *out_len = digest.len() };
        }
        Ok(())
    })
}

/// `zarr_array_digest` as lower-case hexadecimal text, as zarr-python 2's
/// `Array.hexdigest(hashname)` (`hashname` NULL: `"sha1"`). Free with `zarr_string_free`.
///
/// # Safety
/// `array` must be a live handle, `hashname` NULL or a NUL-terminated string, `out_hex`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_hexdigest(
    array: *const zarr_array,
    hashname: *const c_char,
    out_hex: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_hex, "out_hex", |array| {
        let digest = array.digest(hashname_arg(hashname)?)?;
        Ok(digest.iter().map(|b| format!("{b:02x}")).collect())
    })
}
