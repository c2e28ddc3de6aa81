//! Status codes: every fallible C function returns one. `ZARR_OK` is 0, errors are negative
//! and keep their numbers forever.

use crate::error::Error;
use std::ffi::c_char;

/// The result of a libzarr call: `ZARR_OK` (0) or a negative `ZARR_ERR_*` code.
/// On failure, `zarr_last_error()` describes what went wrong.
#[allow(non_camel_case_types)]
pub type zarr_status = i32;

/// Success.
pub const ZARR_OK: zarr_status = 0;
/// A required pointer argument was NULL.
pub const ZARR_ERR_NULL_POINTER: zarr_status = -1;
/// An argument is invalid: unknown mode, ndim mismatch, malformed JSON argument, bad UTF-8.
pub const ZARR_ERR_INVALID_ARGUMENT: zarr_status = -2;
/// A selection reaches outside the array's shape.
pub const ZARR_ERR_OUT_OF_BOUNDS: zarr_status = -3;
/// A buffer's size does not match what the call needs.
pub const ZARR_ERR_BUFFER_SIZE: zarr_status = -4;
/// No store, array or group at the given location or path.
pub const ZARR_ERR_NOT_FOUND: zarr_status = -5;
/// An array or group already exists where one was to be created.
pub const ZARR_ERR_ALREADY_EXISTS: zarr_status = -6;
/// A mutating call on a store opened with `ZARR_MODE_READ`.
pub const ZARR_ERR_READ_ONLY: zarr_status = -7;
/// Malformed or inconsistent metadata (`.zarray`, `.zgroup`, `.zattrs` or a create document).
pub const ZARR_ERR_INVALID_METADATA: zarr_status = -8;
/// Valid but unsupported: data type, codec id, filter, format version.
pub const ZARR_ERR_UNSUPPORTED: zarr_status = -9;
/// Stored bytes could not be decoded: a chunk corrupt, truncated or of the wrong size, or a
/// damaged container (a zip archive, a database file) the store reads.
pub const ZARR_ERR_CORRUPT_CHUNK: zarr_status = -10;
/// An operating-system I/O error.
pub const ZARR_ERR_IO: zarr_status = -11;
/// A logical path is invalid (a `.` or `..` segment, a NUL character, a metadata name; for a
/// new Zarr v3 node, a name of periods only or one starting with `__`).
pub const ZARR_ERR_INVALID_PATH: zarr_status = -12;
/// A size or index computation overflowed (e.g. the product of `count`).
pub const ZARR_ERR_OVERFLOW: zarr_status = -13;
/// A needed allocation is larger than the system can provide.
pub const ZARR_ERR_TOO_LARGE: zarr_status = -14;
/// A progress callback asked to stop a long operation (a copy); what was done so far stays.
pub const ZARR_ERR_CANCELLED: zarr_status = -15;
/// A server refused the request (HTTP 401 or 403): missing or wrong credentials, or no
/// permission for the key or bucket.
pub const ZARR_ERR_PERMISSION_DENIED: zarr_status = -16;
/// A server could not be reached (connection refused, unknown host), after the retries.
pub const ZARR_ERR_UNREACHABLE: zarr_status = -17;
/// A server did not answer within the request timeout, after the retries.
pub const ZARR_ERR_TIMEOUT: zarr_status = -18;
/// The path holds a node of the other kind: a group where an array was to be opened, or an
/// array where a group was; the message names what is there (its metadata key).
pub const ZARR_ERR_WRONG_NODE_TYPE: zarr_status = -19;
/// A bug in libzarr (a caught panic); please report it with `zarr_last_error()`.
pub const ZARR_ERR_INTERNAL: zarr_status = -99;

/// Every status with its name, for `zarr_status_name`.
const NAMES: &[(zarr_status, &str)] = &[
    (ZARR_OK, "ZARR_OK\0"),
    (ZARR_ERR_NULL_POINTER, "ZARR_ERR_NULL_POINTER\0"),
    (ZARR_ERR_INVALID_ARGUMENT, "ZARR_ERR_INVALID_ARGUMENT\0"),
    (ZARR_ERR_OUT_OF_BOUNDS, "ZARR_ERR_OUT_OF_BOUNDS\0"),
    (ZARR_ERR_BUFFER_SIZE, "ZARR_ERR_BUFFER_SIZE\0"),
    (ZARR_ERR_NOT_FOUND, "ZARR_ERR_NOT_FOUND\0"),
    (ZARR_ERR_ALREADY_EXISTS, "ZARR_ERR_ALREADY_EXISTS\0"),
    (ZARR_ERR_READ_ONLY, "ZARR_ERR_READ_ONLY\0"),
    (ZARR_ERR_INVALID_METADATA, "ZARR_ERR_INVALID_METADATA\0"),
    (ZARR_ERR_UNSUPPORTED, "ZARR_ERR_UNSUPPORTED\0"),
    (ZARR_ERR_CORRUPT_CHUNK, "ZARR_ERR_CORRUPT_CHUNK\0"),
    (ZARR_ERR_IO, "ZARR_ERR_IO\0"),
    (ZARR_ERR_INVALID_PATH, "ZARR_ERR_INVALID_PATH\0"),
    (ZARR_ERR_OVERFLOW, "ZARR_ERR_OVERFLOW\0"),
    (ZARR_ERR_TOO_LARGE, "ZARR_ERR_TOO_LARGE\0"),
    (ZARR_ERR_CANCELLED, "ZARR_ERR_CANCELLED\0"),
    (ZARR_ERR_PERMISSION_DENIED, "ZARR_ERR_PERMISSION_DENIED\0"),
    (ZARR_ERR_UNREACHABLE, "ZARR_ERR_UNREACHABLE\0"),
    (ZARR_ERR_TIMEOUT, "ZARR_ERR_TIMEOUT\0"),
    (ZARR_ERR_WRONG_NODE_TYPE, "ZARR_ERR_WRONG_NODE_TYPE\0"),
    (ZARR_ERR_INTERNAL, "ZARR_ERR_INTERNAL\0"),
];

/// The status code for an engine error.
pub(crate) fn status_of(err: &Error) -> zarr_status {
    match err {
        Error::NullPointer(_) => ZARR_ERR_NULL_POINTER,
        Error::InvalidArgument(_) => ZARR_ERR_INVALID_ARGUMENT,
        Error::OutOfBounds(_) => ZARR_ERR_OUT_OF_BOUNDS,
        Error::BufferSize(_) => ZARR_ERR_BUFFER_SIZE,
        Error::NotFound(_) => ZARR_ERR_NOT_FOUND,
        Error::AlreadyExists(_) => ZARR_ERR_ALREADY_EXISTS,
        Error::ReadOnly(_) => ZARR_ERR_READ_ONLY,
        Error::InvalidMetadata(_) => ZARR_ERR_INVALID_METADATA,
        Error::Unsupported(_) => ZARR_ERR_UNSUPPORTED,
        Error::CorruptChunk(_) => ZARR_ERR_CORRUPT_CHUNK,
        Error::Io(_) | Error::Changed(_) => ZARR_ERR_IO,
        Error::InvalidPath(_) => ZARR_ERR_INVALID_PATH,
        Error::Overflow(_) => ZARR_ERR_OVERFLOW,
        Error::TooLarge(_) => ZARR_ERR_TOO_LARGE,
        Error::Cancelled(_) => ZARR_ERR_CANCELLED,
        Error::PermissionDenied(_) => ZARR_ERR_PERMISSION_DENIED,
        Error::Unreachable(_) => ZARR_ERR_UNREACHABLE,
        Error::Timeout(_) => ZARR_ERR_TIMEOUT,
        Error::WrongNodeType(_) => ZARR_ERR_WRONG_NODE_TYPE,
        Error::Internal(_) => ZARR_ERR_INTERNAL,
    }
}

/// The name of a status code, e.g. `"ZARR_ERR_NOT_FOUND"`, or `"ZARR_UNKNOWN_STATUS"`.
/// The string is static: never free it.
#[no_mangle]
pub extern "C" fn zarr_status_name(status: zarr_status) -> *const c_char {
    NAMES
        .iter()
        .find(|(code, _)| *code == status)
        .map_or("ZARR_UNKNOWN_STATUS\0", |(_, name)| name)
        .as_ptr()
        .cast()
}
