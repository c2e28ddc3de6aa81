//! Driving a streaming decoder (flate2, bzip2, liblzma) into an output buffer, shared by the
//! stream-based codecs: either an exactly-sized buffer, or a vector that grows up to a limit
//! when the decoded size is not known in advance.

use crate::error::{Error, Result};

/// A streaming decoder (flate2, bzip2 or liblzma) seen through its common shape: it consumes
/// some input, produces some output, and counts both.
pub(super) trait StreamDecoder {
    /// Decodes from `input` into `output`; `Ok(true)` once the end of the stream is reached.
    fn step(&mut self, input: &[u8], output: &mut [u8]) -> Result<bool>;
    /// Total input bytes consumed so far.
    fn total_in(&self) -> u64;
    /// Total output bytes produced so far.
    fn total_out(&self) -> u64;
}

/// Where decoded bytes go: a caller's buffer of the exact expected size, or a vector grown on
/// demand (doubling, zero-filled) up to `limit` bytes.
pub(super) enum Sink<'a> {
    Exact(&'a mut [u8]),
    Growing { buf: &'a mut Vec<u8>, limit: usize },
}

/// The first size a growing sink allocates.
const INITIAL_GROWTH: usize = 64 << 10;

impl Sink<'_> {
    /// The most bytes the sink may hold.
    pub(super) fn limit(&self) -> usize {
        match self {
            Sink::Exact(out) => out.len(),
            Sink::Growing { limit, .. } => *limit,
        }
    }

    /// The decoded bytes in `range` (written earlier).
    pub(super) fn bytes(&self, range: std::ops::Range<usize>) -> &[u8] {
        match self {
            Sink::Exact(out) => &out[range],
            Sink::Growing { buf, .. } => &buf[range],
        }
    }

    /// Room to write at `end`, growing a vector if needed; empty once the limit is reached.
    fn room(&mut self, end: usize) -> Result<&mut [u8]> {
        match self {
            Sink::Exact(out) => Ok(out.get_mut(end..).unwrap_or_default()),
            Sink::Growing { buf, limit } => {
                if end >= buf.len() && buf.len() < *limit {
                    let want = buf.len().saturating_mul(2).max(INITIAL_GROWTH).min(*limit);
                    let extra = want - buf.len();
                    buf.try_reserve_exact(extra).map_err(|_| {
                        Error::TooLarge(format!("cannot allocate {want} bytes for a chunk"))
                    })?;
                    buf.resize(want, 0);
                }
                Ok(buf.get_mut(end..).unwrap_or_default())
            }
        }
    }
}

/// Decodes one stream from the start of `input` into `out` from offset `start`.
///
/// Returns the number of input bytes the stream used and the end of its output in `out`.
/// A stream that would write past the sink's limit (probed with a one-byte scratch buffer)
/// or whose input ends before the end-of-stream marker is [`Error::CorruptChunk`]; a stream
/// that ends early is left to the caller, which may decode further streams after it.
pub(super) fn decode_stream(
    id: &str,
    dec: &mut impl StreamDecoder,
    input: &[u8],
    out: &mut Sink,
    start: usize,
) -> Result<(usize, usize)> {
    let (in0, out0) = (dec.total_in(), dec.total_out());
    let limit = out.limit();
    let mut stalled = false;
    loop {
        let used = (dec.total_in() - in0) as usize;
        let end = start + (dec.total_out() - out0) as usize;
        let mut probe = [0u8; 1];
        let room = out.room(end)?;
        let dst = if room.is_empty() {
            &mut probe[..]
        } else {
            room
        };
        let before = (dec.total_in(), dec.total_out());
        let done = dec
            .step(input.get(used..).unwrap_or_default(), dst)
            .map_err(|e| e.context(id))?;
        let after = (dec.total_in(), dec.total_out());
        if end >= limit && after.1 > before.1 {
            return Err(Error::CorruptChunk(format!(
                "{id}: data decodes to more than the expected {limit} bytes"
            )));
        }
        if done {
            return Ok(((after.0 - in0) as usize, start + (after.1 - out0) as usize));
        }
        // liblzma may legitimately make no progress once before reporting an error, so only
        // a second call in a row without progress means the input ended mid-stream.
        if after == before {
            if stalled {
                return Err(truncated(id, end, limit));
            }
            stalled = true;
        } else {
            stalled = false;
        }
    }
}

/// Decodes into a new vector of at most `max_len` bytes with `decode`, which fills a sink
/// and returns the decoded length.
pub(super) fn decode_growing(
    max_len: usize,
    decode: impl FnOnce(&mut Sink) -> Result<usize>,
) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    let end = decode(&mut Sink::Growing {
        buf: &mut buf,
        limit: max_len,
    })?;
    buf.truncate(end);
    Ok(buf)
}

/// Checks that the sink received exactly as many bytes as it must hold: all of an exact
/// buffer, anything up to the limit of a growing one (`got` can only be smaller, as
/// [`decode_stream`] refuses to write past the end).
pub(super) fn finish(id: &str, sink: &Sink, got: usize) -> Result<usize> {
    match sink {
        Sink::Exact(out) => expect_filled(id, got, out.len()).map(|()| got),
        Sink::Growing { .. } => Ok(got),
    }
}

/// Checks that decoding produced exactly `expected` bytes.
pub(super) fn expect_filled(id: &str, got: usize, expected: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::CorruptChunk(format!(
            "{id}: data decodes to {got} bytes, expected {expected}"
        )))
    }
}

/// The error for input that ends before the stream does.
pub(super) fn truncated(id: &str, decoded: usize, expected: usize) -> Error {
    Error::CorruptChunk(format!(
        "{id}: data is truncated (input ends after {decoded} of {expected} decoded bytes)"
    ))
}
