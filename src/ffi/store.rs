//! `zarr_store`: an open key/value store.

use super::boundary::{give_handle, out_arg, run, str_arg};
use super::status::zarr_status;
use crate::error::Error;
use crate::store::{OpenMode, StoreHandle};
use std::ffi::c_char;
use std::sync::Arc;

/// An open store (a directory, a zip archive or memory). Safe to use from several threads at once. Arrays
/// and groups opened from it keep it alive, so it may be closed before them.
#[allow(non_camel_case_types)]
pub struct zarr_store {
    pub(crate) inner: Arc<StoreHandle>,
}

/// How `zarr_store_open` opens a store: `ZARR_MODE_READ` or `ZARR_MODE_WRITE`.
#[allow(non_camel_case_types)]
pub type zarr_open_mode = i32;
/// Read-only: every mutating call returns `ZARR_ERR_READ_ONLY`.
pub const ZARR_MODE_READ: zarr_open_mode = 0;
/// Read-write; a directory store is created (with its parents) if missing.
pub const ZARR_MODE_WRITE: zarr_open_mode = 1;

/// Opens the store at `location`: a directory path, a path ending in `.zip` (unless it is an
/// existing directory) for a zip archive, or `"memory:"` for a new, empty in-memory store.
/// Reading a directory or zip that does not exist is `ZARR_ERR_NOT_FOUND`. A zip opened with
/// `ZARR_MODE_WRITE` must not exist yet (writing into an existing zip is `ZARR_ERR_UNSUPPORTED`):
/// it is created and written by `zarr_store_close`, members stored uncompressed as
/// zarr-python's `ZipStore` does. A zip opened for reading may have stored or deflated members.
/// On success `*out_store` receives a handle to release with `zarr_store_close`.
///
/// # Safety
/// `location` must be a NUL-terminated string; `out_store` must point to writable memory.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_open(
    location: *const c_char,
    mode: zarr_open_mode,
    out_store: *mut *mut zarr_store,
) -> zarr_status {
    run(|| {
        let location = str_arg(location, "location")?;
        let out = out_arg(out_store, "out_store")?;
        let mode = match mode {
            ZARR_MODE_READ => OpenMode::Read,
            ZARR_MODE_WRITE => OpenMode::Write,
            other => return Err(Error::InvalidArgument(format!("unknown open mode {other}"))),
        };
        let inner = StoreHandle::open(location, mode)?;
        give_handle(out, zarr_store { inner });
        Ok(())
    })
}

/// Releases a store handle. NULL is a harmless no-op. Closing a zip store opened for writing
/// writes the archive, and a failure there is this call's status (the handle is released
/// either way). Arrays and groups still open from the store can keep writing: their changes
/// are written when the last of them closes, where a failure cannot be reported.
///
/// # Safety
/// `store` must be NULL or a handle from `zarr_store_open` that was not closed yet.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_close(store: *mut zarr_store) -> zarr_status {
    run(|| {
        if store.is_null() {
            return Ok(());
        }
        // SAFETY: the pointer came from `give_handle` and is closed once, as documented.
        let store = unsafe { Box::from_raw(store) };
        store.inner.close()
    })
}
