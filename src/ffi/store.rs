//! `zarr_store`: an open key/value store.

use super::boundary::{close_handle, give_handle, out_arg, run, str_arg};
use super::status::zarr_status;
use crate::error::Error;
use crate::store::{OpenMode, StoreHandle};
use std::ffi::c_char;
use std::sync::Arc;

/// An open store (a directory or memory). Safe to use from several threads at once. Arrays
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

/// Opens the store at `location`: a directory path, or `"memory:"` for a new, empty
/// in-memory store. Reading a directory that does not exist is `ZARR_ERR_NOT_FOUND`.
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

/// Releases a store handle. NULL is a harmless no-op.
///
/// # Safety
/// `store` must be NULL or a handle from `zarr_store_open` that was not closed yet.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_close(store: *mut zarr_store) -> zarr_status {
    close_handle(store)
}
