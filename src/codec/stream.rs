//! Driving a streaming decoder (flate2, bzip2, liblzma) into an exactly-sized output buffer,
//! shared by the stream-based codecs.

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

/// Decodes one stream from the start of `input` into `out[start..]`, straight into `out`.
///
/// Returns the number of input bytes the stream used and the end of its output in `out`.
/// A stream that would write past the end of `out` (probed with a one-byte scratch buffer)
/// or whose input ends before the end-of-stream marker is [`Error::CorruptChunk`]; a stream
/// that ends early is left to the caller, which may decode further streams after it.
pub(super) fn decode_stream(
    id: &str,
    dec: &mut impl StreamDecoder,
    input: &[u8],
    out: &mut [u8],
    start: usize,
) -> Result<(usize, usize)> {
    let (in0, out0) = (dec.total_in(), dec.total_out());
    let mut stalled = false;
    loop {
        let used = (dec.total_in() - in0) as usize;
        let end = start + (dec.total_out() - out0) as usize;
        let mut probe = [0u8; 1];
        let dst = match out.get_mut(end..) {
            Some(rest) if !rest.is_empty() => rest,
            _ => &mut probe[..],
        };
        let before = (dec.total_in(), dec.total_out());
        let done = dec
            .step(input.get(used..).unwrap_or_default(), dst)
            .map_err(|e| e.context(id))?;
        let after = (dec.total_in(), dec.total_out());
        if end >= out.len() && after.1 > before.1 {
            return Err(Error::CorruptChunk(format!(
                "{id}: data decodes to more than the expected {} bytes",
                out.len()
            )));
        }
        if done {
            return Ok(((after.0 - in0) as usize, start + (after.1 - out0) as usize));
        }
        // liblzma may legitimately make no progress once before reporting an error, so only
        // a second call in a row without progress means the input ended mid-stream.
        if after == before {
            if stalled {
                return Err(truncated(id, end, out.len()));
            }
            stalled = true;
        } else {
            stalled = false;
        }
    }
}

/// Decodes a single stream that must fill all of `out`. Bytes after the end of the stream
/// are not looked at.
pub(super) fn decode_exact(
    id: &str,
    dec: &mut impl StreamDecoder,
    input: &[u8],
    out: &mut [u8],
) -> Result<()> {
    let (_, end) = decode_stream(id, dec, input, out, 0)?;
    expect_filled(id, end, out.len())
}

/// Checks that decoding produced exactly `expected` bytes (`got` can only be smaller, as
/// [`decode_stream`] refuses to write past the end).
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
