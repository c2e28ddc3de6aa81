//! What the functions a C program hands libzarr (a store's, a codec's) share: the message a
//! failing function gives, calls one at a time unless they are thread-safe, and `user_data`
//! released once, when libzarr is done with it.

use super::status::*;
use crate::error::{Error, Result};
use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Mutex;

thread_local! {
    /// The message the running callback gave with `zarr_store_callback_error`.
    static CALLBACK_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Gives the message of the failure a store or codec callback is about to return (call it from
/// the callback, on its thread, before returning the failing status). NULL clears it. Copied.
///
/// # Safety
/// `message` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_callback_error(message: *const c_char) {
    let message = (!message.is_null())
        // SAFETY: a NUL-terminated string, as documented.
        .then(|| {
            unsafe { CStr::from_ptr(message) }
                .to_string_lossy()
                .into_owned()
        });
    CALLBACK_ERROR.with(|m| *m.borrow_mut() = message);
}

/// A caller's C structure of functions, its data pointers nulled (the `user_data` lives in
/// [`CallerData`]): what is left, function pointers, may be used from any thread as
/// `CallerData` says.
pub(super) struct Functions<T>(pub T);

// SAFETY: only function pointers remain, which the caller lets libzarr call from any thread.
unsafe impl<T> Send for Functions<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Functions<T> {}

impl<T> std::fmt::Debug for Functions<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<the caller's functions>")
    }
}

impl<T> std::ops::Deref for Functions<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// The release function of a caller's set of functions.
pub(super) type Release = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// A caller's `user_data` with its `release` (called once, on drop) and the turn its
/// functions take when they are not thread-safe.
pub(super) struct CallerData {
    user_data: *mut c_void,
    release: Release,
    /// Held around every call when the functions are not thread-safe.
    one_at_a_time: Option<Mutex<()>>,
}

// SAFETY: the caller promises that its functions may be called from any thread with its
// `user_data` (one at a time unless it says they are thread-safe, which `one_at_a_time`
// enforces).
unsafe impl Send for CallerData {}
// SAFETY: as above.
unsafe impl Sync for CallerData {}

impl std::fmt::Debug for CallerData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<the caller's data>")
    }
}

impl Drop for CallerData {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: `user_data` is the caller's, valid until this call, as documented.
            unsafe { release(self.user_data) };
        }
    }
}

impl CallerData {
    /// Takes over `user_data` (released by `release` when dropped); `thread_safe` 0 makes
    /// calls take turns.
    pub(super) fn new(user_data: *mut c_void, release: Release, thread_safe: i32) -> CallerData {
        CallerData {
            user_data,
            release,
            one_at_a_time: (thread_safe == 0).then(|| Mutex::new(())),
        }
    }

    /// The pointer every function is passed.
    pub(super) fn user_data(&self) -> *mut c_void {
        self.user_data
    }

    /// Runs `call` (one of the caller's functions), taking turns where they are not
    /// thread-safe; a failing status is the error it names, its message prefixed by `what`
    /// (made only then).
    pub(super) fn call(
        &self,
        what: impl FnOnce() -> String,
        call: impl FnOnce() -> zarr_status,
    ) -> Result<()> {
        CALLBACK_ERROR.with(|m| m.borrow_mut().take());
        let status = {
            let _turn = self
                .one_at_a_time
                .as_ref()
                .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()));
            call()
        };
        match status {
            ZARR_OK => Ok(()),
            _ => Err(failure(status, what())),
        }
    }
}

/// The error for a callback that returned `status` while doing `what`, with the message it
/// gave (else the status number).
fn failure(status: zarr_status, what: String) -> Error {
    let said = CALLBACK_ERROR
        .with(|m| m.borrow_mut().take())
        .unwrap_or_else(|| format!("status {status}"));
    let message = format!("{what}: {said}");
    match status {
        ZARR_ERR_NOT_FOUND => Error::NotFound(message),
        ZARR_ERR_PERMISSION_DENIED => Error::PermissionDenied(message),
        ZARR_ERR_READ_ONLY => Error::ReadOnly(message),
        ZARR_ERR_TIMEOUT => Error::Timeout(message),
        ZARR_ERR_UNREACHABLE => Error::Unreachable(message),
        ZARR_ERR_UNSUPPORTED => Error::Unsupported(message),
        ZARR_ERR_INVALID_ARGUMENT => Error::InvalidArgument(message),
        ZARR_ERR_INVALID_PATH => Error::InvalidPath(message),
        ZARR_ERR_TOO_LARGE => Error::TooLarge(message),
        ZARR_ERR_CORRUPT_CHUNK => Error::CorruptChunk(message),
        _ => Error::Io(message),
    }
}
