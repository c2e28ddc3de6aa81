//! The C ABI and nothing else: argument checks, handles, status codes, the last-error text and
//! the panic boundary. No format logic lives here.

mod array;
mod boundary;
mod copy;
mod dtype;
mod group;
mod node;
mod resize;
mod selection;
mod status;
mod store;
#[cfg(test)]
mod tests;
mod vlen;

pub use array::*;
pub use copy::*;
pub use dtype::*;
pub use group::*;
pub use node::*;
pub use resize::*;
pub use selection::*;
pub use status::*;
pub use store::*;
pub use vlen::*;

use std::ffi::{c_char, CString};

/// Major version of the library this header belongs to.
pub const ZARR_VERSION_MAJOR: u32 = 0;
/// Minor version of the library this header belongs to.
pub const ZARR_VERSION_MINOR: u32 = 1;
/// Patch version of the library this header belongs to.
pub const ZARR_VERSION_PATCH: u32 = 0;

/// The library's version as `"MAJOR.MINOR.PATCH"`. Static: never free it.
#[no_mangle]
pub extern "C" fn zarr_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// A human-readable description of the last failure on the calling thread, naming what
/// failed (key, path, codec id or metadata field); `""` if nothing failed yet. Never NULL.
/// The text is owned by the library and stays valid until this thread's next failing call.
#[no_mangle]
pub extern "C" fn zarr_last_error() -> *const c_char {
    boundary::last_error_ptr()
}

/// Frees a string that libzarr returned through a `char **` output. NULL is a no-op.
///
/// # Safety
/// `s` must be NULL or a string from libzarr that was not freed yet.
#[no_mangle]
pub unsafe extern "C" fn zarr_string_free(s: *mut c_char) {
    if !s.is_null() {
        drop(CString::from_raw(s));
    }
}
