//! The C ABI and nothing else: argument checks, handles, status codes, the last-error text and
//! the panic boundary. No format logic lives here.

// The order of these modules is the order of the header's sections (cbindgen reads them in
// this order; scripts/generate-header.sh titles the sections): the library and its errors,
// stores, groups, arrays, reading and writing, resizing, selections, variable-length values,
// data types, codecs of the caller's own, hierarchy operations, copies, tuning.
mod status;

mod store;

mod caller;

mod callback_store;

mod keys;

mod group;

mod array;

mod resize;

mod selection;

mod vlen;

mod dtype;

mod codec;

mod node;

mod copy;

mod tuning;

mod boundary;
#[cfg(test)]
mod tests;

pub use array::*;
pub use callback_store::*;
pub use caller::zarr_store_callback_error;
pub use codec::*;
pub use copy::*;
pub use dtype::*;
pub use group::*;
pub use keys::*;
pub use node::*;
pub use resize::*;
pub use selection::*;
pub use status::*;
pub use store::*;
pub use tuning::*;
pub use vlen::*;

use std::ffi::{c_char, CStr, CString};

/// Major version of the library this header belongs to.
pub const ZARR_VERSION_MAJOR: u32 = 0;
/// Minor version of the library this header belongs to.
pub const ZARR_VERSION_MINOR: u32 = 1;
/// Patch version of the library this header belongs to.
pub const ZARR_VERSION_PATCH: u32 = 0;
/// The same version as one number, MAJOR × 10000 + MINOR × 100 + PATCH (0.1.0 is 100), as
/// `zarr_version_number` gives the library's.
pub const ZARR_VERSION_NUMBER: u32 = 100;

/// The library's version as `"MAJOR.MINOR.PATCH"`. Static: never free it.
#[no_mangle]
pub extern "C" fn zarr_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The library's version as MAJOR × 10000 + MINOR × 100 + PATCH: the `ZARR_VERSION_NUMBER` of
/// its own header.
#[no_mangle]
pub extern "C" fn zarr_version_number() -> u32 {
    ZARR_VERSION_NUMBER
}

/// Whether the library serves programs compiled against the header of version
/// `header_version` (pass `ZARR_VERSION_NUMBER`; `ZARR_CHECK_VERSION()` does): while the
/// version is 0.x, the same major and minor version (every 0.x minor release may change the
/// ABI; any patch release serves), from 1.0 the same major version and a minor version at
/// least the header's. `ZARR_OK`, or `ZARR_ERR_UNSUPPORTED` naming both versions.
#[no_mangle]
pub extern "C" fn zarr_check_version(header_version: u32) -> zarr_status {
    boundary::run(|| {
        let (major, minor) = (header_version / 10000, header_version / 100 % 100);
        let serves = match ZARR_VERSION_MAJOR {
            0 => major == 0 && minor == ZARR_VERSION_MINOR,
            own => major == own && minor <= ZARR_VERSION_MINOR,
        };
        match serves {
            true => Ok(()),
            false => Err(crate::Error::Unsupported(format!(
                "this program was compiled against zarr.h {major}.{minor}.{} but runs with \
                 libzarr {}",
                header_version % 100,
                env!("CARGO_PKG_VERSION")
            ))),
        }
    })
}

/// The features of this build as a JSON object (free it with `zarr_string_free`): `version`,
/// `zarr_formats` (`[2, 3]`), `stores` (those built: `"directory"`, `"memory"` and
/// `"reference"` always;
/// `"zip"`, `"s3"`, `"azure"`, `"gcs"`, `"http"`, `"n5"`, `"dbm"`, `"redis"`, `"sqlite"`,
/// `"lmdb"` when their cargo feature, or CMake option `LIBZARR_<NAME>`, was on, as by
/// default; a location of a store left out is `ZARR_ERR_UNSUPPORTED` naming the feature),
/// `compressors` and `filters` (Zarr v2's numcodecs ids),
/// `blosc_compressors` (blosc's `cname`s), `object_codecs` (of `|O` arrays), `codecs`
/// (Zarr v3 codec names, `numcodecs.*` included), `chunk_grids` (`regular`, `rectilinear`),
/// `chunk_key_encodings` (`default`, `v2`) and `data_types` (Zarr v3 names; `r*` stands for
/// the raw-bits types `r8`, `r16`, ...).
///
/// # Safety
/// `out_json` must be writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_features(out_json: *mut *mut c_char) -> zarr_status {
    boundary::run(|| {
        let out = boundary::out_arg(out_json, "out_json")?;
        boundary::give_string(out, crate::features::features().to_string())
    })
}

/// Whether this build has the feature `name`, written `KIND:NAME` with the singular of a list
/// of `zarr_features`: `"zarr_format:3"`, `"store:s3"`, `"compressor:zstd"`,
/// `"blosc_compressor:lz4"`, `"filter:delta"`, `"object_codec:vlen-utf8"`,
/// `"codec:sharding_indexed"`. An unknown kind is `ZARR_ERR_INVALID_ARGUMENT` listing the
/// kinds (never a silent false).
///
/// # Safety
/// `name` must be a NUL-terminated string and `out_has` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_has_feature(name: *const c_char, out_has: *mut bool) -> zarr_status {
    boundary::run(|| {
        let name = boundary::str_arg(name, "name")?;
        let out = boundary::out_arg(out_has, "out_has")?;
        *out = crate::features::has_feature(name)?;
        Ok(())
    })
}

/// A human-readable description of the last failure on the calling thread, naming what
/// failed (key, path, codec id or metadata field); `""` if nothing failed yet. Never NULL.
/// The text is owned by the library and stays valid until this thread's next failing call.
#[no_mangle]
pub extern "C" fn zarr_last_error() -> *const c_char {
    boundary::last_error_ptr()
}

/// Sets the calling thread's last error message (what `zarr_last_error` returns next), as a
/// failing call would: for layers built on libzarr that report a failure of their own, or one
/// of another process (`zarr_mpi.h` gives every rank the message of the rank that failed).
/// Secrets in URLs are redacted, as in every message. NULL sets `""`.
///
/// # Safety
/// `message` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_set_last_error(message: *const c_char) {
    let text = match message.is_null() {
        true => String::new(),
        // SAFETY: the caller promises a NUL-terminated string.
        false => CStr::from_ptr(message).to_string_lossy().into_owned(),
    };
    boundary::set_last_error(&text);
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
