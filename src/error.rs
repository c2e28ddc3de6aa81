//! The library's error type. Every variant maps to one stable C status code (see `ffi::status`).

/// A failure anywhere in the engine. The message always names the thing that failed
/// (key, path, codec id or metadata field).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A required pointer argument was NULL (C API only).
    #[error("null pointer: {0}")]
    NullPointer(String),
    /// An argument is malformed or inconsistent (wrong ndim, bad mode, bad JSON argument).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A selection reaches outside the array.
    #[error("out of bounds: {0}")]
    OutOfBounds(String),
    /// A caller buffer's size does not match the selection.
    #[error("buffer size: {0}")]
    BufferSize(String),
    /// The key, path, array or group does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// Something already exists where a new node was to be created.
    #[error("already exists: {0}")]
    AlreadyExists(String),
    /// A mutating call on a store opened read-only.
    #[error("read-only: {0}")]
    ReadOnly(String),
    /// Stored or given metadata is malformed or inconsistent.
    #[error("invalid metadata: {0}")]
    InvalidMetadata(String),
    /// A valid but unsupported feature (data type, codec id, option).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A chunk's bytes could not be decoded (corrupt, truncated, wrong size).
    #[error("corrupt chunk: {0}")]
    CorruptChunk(String),
    /// An operating-system I/O failure.
    #[error("I/O error: {0}")]
    Io(String),
    /// A logical path or key is malformed (e.g. contains `.` or `..` segments).
    #[error("invalid path: {0}")]
    InvalidPath(String),
    /// An index or size computation overflowed.
    #[error("overflow: {0}")]
    Overflow(String),
    /// A requested allocation is larger than the library allows or the system can give.
    #[error("too large: {0}")]
    TooLarge(String),
    /// The caller's progress callback asked to stop; what was done so far stays.
    #[error("cancelled: {0}")]
    Cancelled(String),
    /// A server refused the request: missing or wrong credentials, or no permission.
    #[error("permission denied: {0}")]
    PermissionDenied(String),
    /// A server could not be reached (no connection, unknown host), retries included.
    #[error("unreachable: {0}")]
    Unreachable(String),
    /// A server did not answer in time, retries included.
    #[error("timed out: {0}")]
    Timeout(String),
    /// A stored value changed between two reads of its parts (another writer replaced it):
    /// the engine reads it again, and reports `ZARR_ERR_IO` when it keeps changing.
    #[error("changed while read: {0}")]
    Changed(String),
    /// The path holds a node of the other kind: an array where a group was to be opened, or
    /// a group where an array was (zarr-python's `ContainsArrayError`/`ContainsGroupError`).
    #[error("wrong node type: {0}")]
    WrongNodeType(String),
    /// A bug: a panic was caught at the C boundary, or an invariant broke.
    #[error("internal error: {0}")]
    Internal(String),
}

/// The library's result type.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Wraps an I/O error with the path or key it concerns.
    pub fn io(what: impl std::fmt::Display, err: std::io::Error) -> Self {
        Error::Io(format!("{what}: {err}"))
    }

    /// Prefixes the message with context (e.g. the chunk key), keeping the variant.
    pub fn context(self, ctx: impl std::fmt::Display) -> Self {
        self.map_message(|m| format!("{ctx}: {m}"))
    }

    /// The same error with the secrets of every URL in its message hidden
    /// ([`crate::redact::redact`]).
    pub fn redacted(self) -> Self {
        self.map_message(|m| match crate::redact::redact(&m) {
            std::borrow::Cow::Borrowed(_) => m,
            std::borrow::Cow::Owned(hidden) => hidden,
        })
    }

    /// The same variant with the message `f` makes of this one's.
    fn map_message(self, f: impl FnOnce(String) -> String) -> Self {
        use Error::*;
        match self {
            NullPointer(m) => NullPointer(f(m)),
            InvalidArgument(m) => InvalidArgument(f(m)),
            OutOfBounds(m) => OutOfBounds(f(m)),
            BufferSize(m) => BufferSize(f(m)),
            NotFound(m) => NotFound(f(m)),
            AlreadyExists(m) => AlreadyExists(f(m)),
            ReadOnly(m) => ReadOnly(f(m)),
            InvalidMetadata(m) => InvalidMetadata(f(m)),
            Unsupported(m) => Unsupported(f(m)),
            CorruptChunk(m) => CorruptChunk(f(m)),
            Io(m) => Io(f(m)),
            InvalidPath(m) => InvalidPath(f(m)),
            Overflow(m) => Overflow(f(m)),
            TooLarge(m) => TooLarge(f(m)),
            Cancelled(m) => Cancelled(f(m)),
            PermissionDenied(m) => PermissionDenied(f(m)),
            Unreachable(m) => Unreachable(f(m)),
            Timeout(m) => Timeout(f(m)),
            Changed(m) => Changed(f(m)),
            WrongNodeType(m) => WrongNodeType(f(m)),
            Internal(m) => Internal(f(m)),
        }
    }
}

/// Allocates a zeroed byte vector of `len` bytes, refusing instead of aborting when the
/// system cannot provide it. The zeros come from the allocator's zeroed memory (`calloc`:
/// fresh pages for large sizes), so what is never written is never touched.
pub fn try_alloc_zeroed(len: usize, what: &str) -> Result<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let too_large = || Error::TooLarge(format!("cannot allocate {len} bytes for {what}"));
    let layout = std::alloc::Layout::array::<u8>(len).map_err(|_| too_large())?;
    // SAFETY: the layout's size is not zero.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(too_large());
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `len` bytes of `u8`
    // (capacity `len`), all of them initialised (zeroed), as `Vec::from_raw_parts` requires.
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `store_image` fuzz target: a 1.7 KB store whose metadata declares 2 GB
    /// chunks made every read zero 2 GB of scratch before the decoder found the chunk's few
    /// bytes wrong (seconds, and 2 GB resident). Zeroed memory comes from the allocator's
    /// zeroed pages: untouched, it costs nothing.
    #[test]
    #[cfg_attr(
        any(miri, not(target_os = "linux")),
        ignore = "reads /proc/self/status"
    )]
    fn zeroed_buffers_are_not_touched_until_written() {
        let resident = || -> u64 {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
            line.split_whitespace()
                .nth(1)
                .unwrap()
                .parse::<u64>()
                .unwrap()
                * 1024
        };
        let before = resident();
        let mut big = try_alloc_zeroed(1 << 31, "a test buffer").unwrap();
        big[12345] = 1;
        let grown = resident().saturating_sub(before);
        assert!(
            grown < 64 << 20,
            "a 2 GiB zeroed buffer made {grown} bytes resident"
        );
        assert_eq!((big[0], big[12345], big[(1 << 31) - 1]), (0, 1, 0));
        // (black_box: an allocation whose memory is never used may be optimised away.)
        let huge = std::hint::black_box(try_alloc_zeroed(usize::MAX / 2, "a huge buffer"));
        let huge = huge.map(|v| v.len());
        assert!(
            matches!(&huge, Err(Error::TooLarge(m)) if m.contains("a huge buffer")),
            "{huge:?}"
        );
        assert!(try_alloc_zeroed(0, "nothing").unwrap().is_empty());
    }
}
