//! Helpers shared by the codec files: reading the keys of a compressor's configuration object,
//! and driving a streaming decoder into an exactly-sized output buffer.

use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::fmt::Display;
use std::ops::RangeInclusive;

/// A compressor's `.zarray` configuration object, read key by key. Absent keys take the
/// numcodecs default; present keys of the wrong type or out of range are
/// [`Error::InvalidMetadata`] naming the key and the codec id. Unknown keys are ignored.
pub(super) struct Config<'a> {
    obj: &'a Map<String, Value>,
    id: &'static str,
}

impl<'a> Config<'a> {
    /// Wraps the configuration object of the codec `id`.
    pub(super) fn new(obj: &'a Map<String, Value>, id: &'static str) -> Self {
        Config { obj, id }
    }

    /// The error for key `key` whose value is not `expected`.
    pub(super) fn invalid(&self, key: &str, expected: impl Display) -> Error {
        let got = self.obj.get(key).unwrap_or(&Value::Null);
        Error::InvalidMetadata(format!(
            "{} compressor: \"{key}\" must be {expected}, got {got}",
            self.id
        ))
    }

    /// An integer key within `range`, or `default` when absent.
    pub(super) fn int(&self, key: &str, default: i64, range: RangeInclusive<i64>) -> Result<i64> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(v) => self.int_value(key, v, range),
        }
    }

    /// An integer key within `range`, or `None` when absent or `null`.
    pub(super) fn opt_int(&self, key: &str, range: RangeInclusive<i64>) -> Result<Option<i64>> {
        match self.opt_value(key) {
            None => Ok(None),
            Some(v) => self.int_value(key, v, range).map(Some),
        }
    }

    fn int_value(&self, key: &str, v: &Value, range: RangeInclusive<i64>) -> Result<i64> {
        match v.as_i64() {
            Some(n) if range.contains(&n) => Ok(n),
            _ => Err(self.invalid(key, format_args!("an integer in {range:?}"))),
        }
    }

    /// A boolean key, or `default` when absent.
    pub(super) fn bool(&self, key: &str, default: bool) -> Result<bool> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| self.invalid(key, "true or false")),
        }
    }

    /// A string key, or `default` when absent.
    pub(super) fn str(&self, key: &str, default: &'a str) -> Result<&'a str> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(v) => v.as_str().ok_or_else(|| self.invalid(key, "a string")),
        }
    }

    /// The raw value of a key that is absent or `null` (`None`), or present.
    pub(super) fn opt_value(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }
}

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

/// Decodes a single stream filling all of `out`; returns the number of input bytes it used
/// (anything after the stream is the caller's business).
pub(super) fn decode_exact(
    id: &str,
    dec: &mut impl StreamDecoder,
    input: &[u8],
    out: &mut [u8],
) -> Result<usize> {
    let (used, end) = decode_stream(id, dec, input, out, 0)?;
    expect_filled(id, end, out.len())?;
    Ok(used)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn reads_keys_with_defaults() {
        let o = obj(json!({"id": "x", "a": 3, "b": true, "c": "lz4", "n": null}));
        let c = Config::new(&o, "x");
        assert_eq!(c.int("a", 1, 0..=9).unwrap(), 3);
        assert_eq!(c.int("missing", 1, 0..=9).unwrap(), 1);
        assert_eq!(c.opt_int("n", 0..=9).unwrap(), None);
        assert!(c.bool("b", false).unwrap());
        assert!(!c.bool("missing", false).unwrap());
        assert_eq!(c.str("c", "zstd").unwrap(), "lz4");
        assert_eq!(c.str("missing", "zstd").unwrap(), "zstd");
        assert!(c.opt_value("n").is_none());
        assert_eq!(c.opt_value("a"), Some(&json!(3)));
    }

    #[test]
    fn rejects_bad_values_naming_key_and_codec() {
        let o = obj(json!({"a": 10, "f": 1.5, "s": "1", "b": 1, "t": 5, "n": null}));
        let c = Config::new(&o, "zlib");
        for err in [
            c.int("a", 1, 0..=9).unwrap_err(),
            c.int("f", 1, 0..=9).unwrap_err(),
            c.int("s", 1, 0..=9).unwrap_err(),
            c.int("n", 1, 0..=9).unwrap_err(),
            c.opt_int("a", 0..=9).unwrap_err(),
            c.bool("b", false).unwrap_err(),
            c.str("t", "x").unwrap_err(),
        ] {
            let msg = err.to_string();
            assert!(matches!(err, Error::InvalidMetadata(_)), "{msg}");
            assert!(msg.contains("zlib compressor: \""), "{msg}");
        }
    }
}

/// Test helpers shared by the codec files.
#[cfg(test)]
pub(super) mod testutil {
    use crate::codec::Codec;
    use crate::error::{Error, Result};

    /// `bytes(range(50)) * 4`: the input of every embedded numcodecs fixture.
    pub fn sample() -> Vec<u8> {
        (0..200u32).map(|i| (i % 50) as u8).collect()
    }

    /// Bytes from a hex string (whitespace ignored).
    pub fn unhex(s: &str) -> Vec<u8> {
        let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        digits
            .chunks(2)
            .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
            .collect()
    }

    /// Decodes `input` into a fresh buffer of `len` bytes.
    pub fn decode(c: &dyn Codec, input: &[u8], len: usize) -> Result<Vec<u8>> {
        let mut out = vec![0xa5u8; len];
        c.decode_into(input, &mut out).map(|()| out)
    }

    /// Asserts that decoding `input` into `len` bytes is [`Error::CorruptChunk`].
    pub fn assert_corrupt(c: &dyn Codec, input: &[u8], len: usize) {
        match decode(c, input, len) {
            Err(Error::CorruptChunk(msg)) => assert!(msg.contains(c.id()), "{msg}"),
            other => panic!("{}: expected CorruptChunk, got {other:?}", c.id()),
        }
    }

    /// Round-trips empty, small, compressible and incompressible inputs through `c`, and
    /// checks that each encoding is refused for a buffer one byte too short or too long.
    pub fn assert_round_trips(c: &dyn Codec) {
        let mut noise = Vec::with_capacity(300_000);
        let mut x = 0x2545f491u32;
        for _ in 0..300_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            noise.push(x as u8);
        }
        for data in [vec![], vec![42], sample(), vec![7u8; 1 << 20], noise] {
            let enc = c.encode(&data).unwrap();
            assert_eq!(decode(c, &enc, data.len()).unwrap(), data, "{c:?}");
            assert_corrupt(c, &enc, data.len() + 1);
            if !data.is_empty() {
                assert_corrupt(c, &enc, data.len() - 1);
            }
        }
    }

    /// Asserts that every truncation of `enc` (a valid encoding of `len` bytes) is refused.
    pub fn assert_truncations_refused(c: &dyn Codec, enc: &[u8], len: usize) {
        for cut in 0..enc.len() {
            assert_corrupt(c, &enc[..cut], len);
        }
    }
}
