//! Raw keys of a store: reading, writing and erasing values, listing keys, sizes, removing
//! prefixes (zarr-python's `store[key]`, `listdir`, `getsize`, `rmdir`).

use super::boundary::{give_string, out_arg, ref_arg, run, slice_arg, slice_out, str_arg};
use super::status::zarr_status;
use super::store::zarr_store;
use crate::error::{Error, Result};
use crate::keys;
use crate::path;
use std::ffi::{c_char, c_void};

/// The store and key arguments of a key call, the key checked.
fn store_key<'a>(
    store: *const zarr_store,
    key: *const c_char,
) -> Result<(&'a zarr_store, &'a str)> {
    let store = ref_arg(store, "store")?;
    let key = str_arg(key, "key")?;
    path::validate_key(key)?;
    Ok((store, key))
}

/// Whether `key` holds a value (`*out_exists`) and its length in bytes (`*out_size`, 0 when
/// there is none). Keys are exact: `"a/b/.zarray"`, `"a/b/0.0"`, `"zarr.json"`; no
/// normalisation is applied, and an empty segment, `.` or `..` is `ZARR_ERR_INVALID_PATH`.
///
/// # Safety
/// `store` must be a live handle, `key` a NUL-terminated string, the outputs writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_value_size(
    store: *const zarr_store,
    key: *const c_char,
    out_exists: *mut bool,
    out_size: *mut u64,
) -> zarr_status {
    run(|| {
        let (store, key) = store_key(store, key)?;
        let (exists, size) = (
            out_arg(out_exists, "out_exists")?,
            out_arg(out_size, "out_size")?,
        );
        let len = store.inner.value_len(key)?;
        (*exists, *size) = (len.is_some(), len.unwrap_or(0));
        Ok(())
    })
}

/// Reads the value under `key` from byte `offset`: as many bytes as `buffer_len` allows, up
/// to its end, into `buffer`, their number into `*out_len` (so a `buffer_len` of the size
/// `zarr_store_value_size` gave reads it whole; 0 is valid). A missing key is
/// `ZARR_ERR_NOT_FOUND`, an `offset` past the end `ZARR_ERR_OUT_OF_BOUNDS`. On object
/// storage only the bytes asked for are fetched.
///
/// # Safety
/// `store` must be a live handle, `key` a NUL-terminated string, `buffer` writable for
/// `buffer_len` bytes (NULL when 0), `out_len` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_get(
    store: *const zarr_store,
    key: *const c_char,
    offset: u64,
    buffer: *mut c_void,
    buffer_len: usize,
    out_len: *mut usize,
) -> zarr_status {
    run(|| {
        let (store, key) = store_key(store, key)?;
        let out_len = out_arg(out_len, "out_len")?;
        let missing = || {
            Error::NotFound(format!(
                "no value under key {key:?} in {}",
                store.inner.location()
            ))
        };
        let value = store.inner.open_value(key)?.ok_or_else(missing)?;
        let len = value.len();
        if offset > len {
            return Err(Error::OutOfBounds(format!(
                "offset {offset} is past the end of key {key:?}, which holds {len} bytes"
            )));
        }
        let count = usize::try_from(len - offset).map_or(buffer_len, |rest| rest.min(buffer_len));
        let buffer: &mut [u8] = match buffer_len {
            0 => &mut [],
            _ => slice_out(buffer.cast::<u8>(), buffer_len, "buffer")?,
        };
        value.read_exact_at(offset, &mut buffer[..count])?;
        *out_len = count;
        Ok(())
    })
}

/// Stores the `length` bytes at `value` under `key`, replacing any value it had (on a
/// directory store atomically, through a temporary file renamed over it). Metadata keys are
/// written as given, unchecked, and consolidated metadata in use through this handle follows.
/// `ZARR_ERR_READ_ONLY` on a store opened for reading.
///
/// # Safety
/// `store` must be a live handle, `key` a NUL-terminated string, `value` readable for
/// `length` bytes (NULL when 0).
#[no_mangle]
pub unsafe extern "C" fn zarr_store_set(
    store: *mut zarr_store,
    key: *const c_char,
    value: *const c_void,
    length: usize,
) -> zarr_status {
    run(|| {
        let (store, key) = store_key(store, key)?;
        let value: &[u8] = match length {
            0 => &[],
            _ => slice_arg(value.cast::<u8>(), length, "value")?,
        };
        store.inner.set(key, value)
    })
}

/// Removes the value under `key`; a missing key is `ZARR_ERR_NOT_FOUND` (as Python's
/// `del store[key]`), so a typo does not pass unnoticed.
///
/// # Safety
/// `store` must be a live handle and `key` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_erase(
    store: *mut zarr_store,
    key: *const c_char,
) -> zarr_status {
    run(|| {
        let (store, key) = store_key(store, key)?;
        store.inner.check_writable(key)?;
        keys::require_value(&store.inner, key)?;
        store.inner.erase(key)
    })
}

/// Every key below `prefix` at any depth as a sorted JSON array of strings (`""`: every key
/// of the store; `"a/b"` and `"a/b/"` both list the keys starting with `a/b/`); free with
/// `zarr_string_free`. A web server (`http://`) cannot be listed: `ZARR_ERR_UNSUPPORTED`.
///
/// # Safety
/// `store` must be a live handle, `prefix` a NUL-terminated string, `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_list_keys(
    store: *const zarr_store,
    prefix: *const c_char,
    out_json: *mut *mut c_char,
) -> zarr_status {
    list_out(store, prefix, out_json, |store, prefix| {
        store.inner.list_prefix(prefix)
    })
}

/// The names one level below `prefix` as a sorted JSON array of strings, keys and
/// "directories" alike (zarr-python's `listdir`: keys `a/x` and `a/y/0` give `["x", "y"]`
/// for `"a"`); free with `zarr_string_free`.
///
/// # Safety
/// `store` must be a live handle, `prefix` a NUL-terminated string, `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_list_dir(
    store: *const zarr_store,
    prefix: *const c_char,
    out_json: *mut *mut c_char,
) -> zarr_status {
    list_out(store, prefix, out_json, |store, prefix| {
        store.inner.list_dir(prefix)
    })
}

/// The body of the listing calls: `list(store, prefix)` as a JSON array.
fn list_out(
    store: *const zarr_store,
    prefix: *const c_char,
    out_json: *mut *mut c_char,
    list: impl FnOnce(&zarr_store, &str) -> Result<Vec<String>>,
) -> zarr_status {
    run(|| {
        let store = ref_arg(store, "store")?;
        let prefix = keys::prefix_of(str_arg(prefix, "prefix")?)?;
        let out = out_arg(out_json, "out_json")?;
        let names = list(store, &prefix)?;
        give_string(out, serde_json::Value::from(names).to_string())
    })
}

/// The total length in bytes of the values stored under `path`: the key `path` itself and
/// every key below it, at any depth (`""`: the whole store; an array's path: its metadata,
/// attributes and every chunk). zarr-python 2's `getsize` counts only the values directly
/// below a path, missing nested chunk keys (`dimension_separator` `"/"`) and members.
///
/// # Safety
/// `store` must be a live handle, `path` a NUL-terminated string, `out_size` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_getsize(
    store: *const zarr_store,
    path: *const c_char,
    out_size: *mut u64,
) -> zarr_status {
    run(|| {
        let store = ref_arg(store, "store")?;
        let path = str_arg(path, "path")?;
        let out = out_arg(out_size, "out_size")?;
        *out = keys::stored_size(&store.inner, path)?;
        Ok(())
    })
}

/// Removes the key `path` and every key below it, whatever they are (`""`: everything in the
/// store, as zarr-python's `rmdir(store)`); nothing there is not an error. Node documents go
/// first, so a failure part-way leaves no array whose chunks are gone. Handles open on
/// removed arrays read the fill value afterwards.
///
/// # Safety
/// `store` must be a live handle and `path` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_rmdir(
    store: *mut zarr_store,
    path: *const c_char,
) -> zarr_status {
    run(|| keys::remove_prefix(&ref_arg(store, "store")?.inner, str_arg(path, "path")?))
}
