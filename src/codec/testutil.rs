//! Test helpers shared by the codec files.

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

/// Asserts that `decode_to_vec(input, max_len)` is [`Error::CorruptChunk`] naming the codec.
pub fn assert_corrupt_vec(c: &dyn Codec, input: &[u8], max_len: usize) {
    match c.decode_to_vec(input, max_len) {
        Err(Error::CorruptChunk(msg)) => assert!(msg.contains(c.id()), "{msg}"),
        other => panic!("{}: expected CorruptChunk, got {other:?}", c.id()),
    }
}

/// Asserts that `enc`, a valid encoding of `data`, decodes to it with `decode_to_vec` for any
/// limit of at least its length, and is refused below.
pub fn assert_decodes_to_vec(c: &dyn Codec, enc: &[u8], data: &[u8]) {
    for max_len in [data.len(), data.len() + 1, 2 * data.len() + 100_000] {
        let got = c.decode_to_vec(enc, max_len);
        assert_eq!(
            got.as_deref().ok(),
            Some(data),
            "{} max {max_len}: {got:?}",
            c.id()
        );
    }
    if !data.is_empty() {
        match c.decode_to_vec(enc, data.len() - 1) {
            Err(Error::CorruptChunk(msg)) => assert!(msg.contains(c.id()), "{msg}"),
            other => panic!("{}: expected CorruptChunk, got {other:?}", c.id()),
        }
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
        assert_decodes_to_vec(c, &enc, &data);
        assert_corrupt(c, &enc, data.len() + 1);
        if !data.is_empty() {
            assert_corrupt(c, &enc, data.len() - 1);
        }
    }
}

/// Asserts that every truncation of `enc` (a valid encoding of `len` bytes) is refused, by
/// `decode_into` and by `decode_to_vec` (which may also find a shorter valid stream, but never
/// the whole data).
pub fn assert_truncations_refused(c: &dyn Codec, enc: &[u8], len: usize) {
    for cut in 0..enc.len() {
        assert_corrupt(c, &enc[..cut], len);
        match c.decode_to_vec(&enc[..cut], len) {
            Err(Error::CorruptChunk(_)) => {}
            Ok(v) => assert!(
                v.len() < len,
                "{}: cut {cut} decodes to {}",
                c.id(),
                v.len()
            ),
            Err(e) => panic!("{}: cut {cut}: unexpected {e:?}", c.id()),
        }
    }
}

/// Flips bits in every byte of `enc` (a valid encoding of `len` bytes) and checks that
/// decoding never panics and fails, if at all, with a chunk or size error.
pub fn assert_survives_corruption(c: &dyn Codec, enc: &[u8], len: usize) {
    for i in 0..enc.len() {
        for flip in [0x01, 0x80, 0xff] {
            let mut bad = enc.to_vec();
            bad[i] ^= flip;
            match decode(c, &bad, len) {
                Ok(_) | Err(Error::CorruptChunk(_)) | Err(Error::TooLarge(_)) => {}
                Err(e) => panic!("{}: byte {i} ^ {flip:#x}: unexpected {e:?}", c.id()),
            }
            match c.decode_to_vec(&bad, len) {
                Ok(v) => assert!(v.len() <= len),
                Err(Error::CorruptChunk(_)) | Err(Error::TooLarge(_)) => {}
                Err(e) => panic!("{}: byte {i} ^ {flip:#x}: unexpected {e:?}", c.id()),
            }
        }
    }
}
