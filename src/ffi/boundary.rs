//! What every C entry point shares: the panic boundary, the thread-local last error, and
//! checked conversion of raw arguments.

use super::status::{status_of, zarr_status, ZARR_ERR_INTERNAL, ZARR_OK};
use crate::error::{Error, Result};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Runs an entry point's body: converts its error into a status and the last-error message,
/// and stops any panic at the boundary.
pub(crate) fn run(body: impl FnOnce() -> Result<()>) -> zarr_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => ZARR_OK,
        Ok(Err(err)) => {
            set_last_error(&err.to_string());
            status_of(&err)
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(&format!("internal error (please report): {what}"));
            ZARR_ERR_INTERNAL
        }
    }
}

/// Keeps `message` as the calling thread's last error, the secrets of any URL in it hidden
/// ([`crate::redact::redact`]) whichever layer wrote it.
pub(crate) fn set_last_error(message: &str) {
    let message = crate::redact::redact(message);
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// The calling thread's last error message (empty when none).
pub(crate) fn last_error_ptr() -> *const c_char {
    // The CString lives in a thread-local that is only replaced by this thread's next failure.
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// A NUL-terminated UTF-8 string argument.
pub(crate) fn str_arg<'a>(ptr: *const c_char, name: &str) -> Result<&'a str> {
    if ptr.is_null() {
        return Err(Error::NullPointer(format!("argument {name} is NULL")));
    }
    // SAFETY: the caller promises a NUL-terminated string that outlives the call.
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| Error::InvalidArgument(format!("argument {name} is not valid UTF-8")))
}

/// A handle or other object argument.
pub(crate) fn ref_arg<'a, T>(ptr: *const T, name: &str) -> Result<&'a T> {
    // SAFETY: a non-NULL pointer from the caller points to a live object of type T.
    unsafe { ptr.as_ref() }.ok_or_else(|| Error::NullPointer(format!("argument {name} is NULL")))
}

/// An output parameter, checked up front and written only on success.
pub(crate) fn out_arg<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T> {
    // SAFETY: a non-NULL pointer from the caller points to writable memory for a T.
    unsafe { ptr.as_mut() }.ok_or_else(|| Error::NullPointer(format!("argument {name} is NULL")))
}

/// An array argument of `len` elements.
pub(crate) fn slice_arg<'a, T>(ptr: *const T, len: usize, name: &str) -> Result<&'a [T]> {
    check_buffer(ptr, len, name)?;
    // SAFETY: checked non-NULL and aligned; the caller promises `len` readable elements.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// An optional array argument of `len` elements: NULL means "not given".
pub(crate) fn optional_slice_arg<'a, T>(
    ptr: *const T,
    len: usize,
    name: &str,
) -> Result<Option<&'a [T]>> {
    if ptr.is_null() {
        return Ok(None);
    }
    slice_arg(ptr, len, name).map(Some)
}

/// A writable array argument of `len` elements.
pub(crate) fn slice_out<'a, T>(ptr: *mut T, len: usize, name: &str) -> Result<&'a mut [T]> {
    check_buffer(ptr, len, name)?;
    // SAFETY: checked non-NULL and aligned; the caller promises `len` writable elements.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

fn check_buffer<T>(ptr: *const T, len: usize, name: &str) -> Result<()> {
    if ptr.is_null() {
        return Err(Error::NullPointer(format!("argument {name} is NULL")));
    }
    if !(ptr as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(Error::InvalidArgument(format!(
            "argument {name} is not aligned for its type"
        )));
    }
    if len
        .checked_mul(std::mem::size_of::<T>())
        .is_none_or(|n| n > isize::MAX as usize)
    {
        return Err(Error::InvalidArgument(format!(
            "argument {name} has an impossible length {len}"
        )));
    }
    Ok(())
}

/// Hands a string to the caller, who frees it with `zarr_string_free`.
pub(crate) fn give_string(out: &mut *mut c_char, text: String) -> Result<()> {
    *out = c_string(text)?.into_raw();
    Ok(())
}

/// A string for the caller; text with a NUL byte cannot cross the boundary.
pub(crate) fn c_string(text: String) -> Result<CString> {
    CString::new(text).map_err(|e| {
        Error::InvalidArgument(format!(
            "text {:?} holds a NUL byte and cannot be returned to C",
            e.into_vec()
        ))
    })
}

/// Hands a new handle to the caller, who releases it with the matching `*_close`.
pub(crate) fn give_handle<T>(out: &mut *mut T, handle: T) {
    *out = Box::into_raw(Box::new(handle));
}

/// Takes back a handle given by [`give_handle`]; NULL is a no-op.
pub(crate) fn close_handle<T>(ptr: *mut T) -> zarr_status {
    run(|| {
        if !ptr.is_null() {
            // SAFETY: the pointer came from `give_handle` and is closed once, as documented.
            drop(unsafe { Box::from_raw(ptr) });
        }
        Ok(())
    })
}
