//! numcodecs `Zstd`: one Zstandard frame per chunk (with the content size in its header).

use super::config::Config;
use super::Codec;
use crate::error::{try_alloc_zeroed, Error, Result};
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use zstd::zstd_safe::{self, CCtx, CParameter, DCtx, ResetDirective};

thread_local! {
    /// Each thread's compression context, reused from chunk to chunk (creating one costs as
    /// much as compressing a small chunk).
    static COMPRESSOR: RefCell<CCtx<'static>> = RefCell::new(CCtx::create());
    /// Each thread's decompression context, reused likewise.
    static DECOMPRESSOR: RefCell<DCtx<'static>> = RefCell::new(DCtx::create());
}

/// The numcodecs `Zstd` compressor: `{"id": "zstd", "level": 0, "checksum": false}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zstd {
    level: i32,
    checksum: bool,
}

impl Zstd {
    /// Reads `level` (any integer, default 0 = zstd's default level 3; zstd clamps it to its
    /// supported range as numcodecs does) and `checksum` (default false).
    pub fn from_config(obj: &Map<String, Value>) -> Result<Self> {
        let cfg = Config::new(obj, "zstd");
        Ok(Zstd {
            level: cfg.int("level", 0, i32::MIN.into()..=i32::MAX.into())? as i32,
            checksum: cfg.bool("checksum", false)?,
        })
    }
}

impl Codec for Zstd {
    fn id(&self) -> &'static str {
        "zstd"
    }

    fn config(&self) -> Value {
        json!({"id": "zstd", "level": self.level, "checksum": self.checksum})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_into(input, &mut out)?;
        Ok(out)
    }

    fn encode_into(&self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let failed = |code: usize| {
            Error::Internal(format!(
                "zstd: compression failed: {}",
                zstd_safe::get_error_name(code)
            ))
        };
        let room = zstd::zstd_safe::compress_bound(input.len());
        out.clear();
        out.try_reserve_exact(room)
            .map_err(|_| Error::TooLarge(format!("zstd: cannot allocate {room} bytes")))?;
        COMPRESSOR.with_borrow_mut(|cctx| {
            cctx.reset(ResetDirective::SessionAndParameters)
                .map_err(failed)?;
            cctx.set_parameter(CParameter::CompressionLevel(self.level))
                .map_err(failed)?;
            cctx.set_parameter(CParameter::ChecksumFlag(self.checksum))
                .map_err(failed)?;
            cctx.compress2(out, input).map_err(failed)
        })?;
        Ok(())
    }

    /// Decodes one or more frames, with or without the content size in their headers,
    /// straight into `out` (zstd's single-pass decoder needs no window buffer).
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        check_frame_sizes(input, out.len())?;
        match DECOMPRESSOR.with_borrow_mut(|dctx| dctx.decompress(out, input)) {
            Ok(n) if n == out.len() => Ok(()),
            Ok(n) => Err(corrupt(format!(
                "data decodes to {n} bytes, expected {}",
                out.len()
            ))),
            Err(code) if code == dst_size_too_small() => Err(corrupt(format!(
                "data decodes to more than the expected {} bytes",
                out.len()
            ))),
            Err(code) => Err(corrupt(zstd_safe::get_error_name(code))),
        }
    }

    /// Allocates what the frame headers declare when they all declare their size, else
    /// decodes as a stream into a vector grown up to `max_len`.
    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        if input.is_empty() {
            return Err(corrupt("empty input holds no frame"));
        }
        let (declared, all_known) = declared_size(input, max_len as u64)?;
        if declared > max_len as u64 {
            return Err(corrupt(format!(
                "frame headers declare at least {declared} bytes, more than the expected {max_len}"
            )));
        }
        if !all_known {
            return decode_stream_to_vec(input, max_len);
        }
        let mut out = try_alloc_zeroed(declared as usize, "a zstd chunk")?;
        self.decode_into(input, &mut out)?;
        Ok(out)
    }
}

/// Decodes frames of unknown content size with zstd's streaming decoder, growing the output
/// (doubling, from 64 KiB) up to `max_len` bytes.
fn decode_stream_to_vec(input: &[u8], max_len: usize) -> Result<Vec<u8>> {
    let mut dctx = zstd_safe::DCtx::create();
    let mut source = zstd_safe::InBuffer::around(input);
    let (mut buf, mut end) = (Vec::new(), 0usize);
    loop {
        if end == buf.len() && buf.len() < max_len {
            let want = buf.len().saturating_mul(2).max(64 << 10).min(max_len);
            buf.try_reserve_exact(want - buf.len())
                .map_err(|_| Error::TooLarge(format!("zstd: cannot allocate {want} bytes")))?;
            buf.resize(want, 0);
        }
        let mut probe = [0u8; 1];
        let at_limit = end >= max_len;
        let dst: &mut [u8] = if at_limit {
            &mut probe
        } else {
            &mut buf[end..]
        };
        let mut sink = zstd_safe::OutBuffer::around(dst);
        let consumed = source.pos();
        let hint = dctx
            .decompress_stream(&mut sink, &mut source)
            .map_err(|code| corrupt(zstd_safe::get_error_name(code)))?;
        let produced = sink.pos();
        if at_limit && produced > 0 {
            return Err(corrupt(format!(
                "data decodes to more than the expected {max_len} bytes"
            )));
        }
        end += produced;
        if hint == 0 && source.pos() == input.len() {
            buf.truncate(end);
            return Ok(buf);
        }
        if produced == 0 && source.pos() == consumed {
            return Err(corrupt(format!(
                "data is truncated (input ends after {end} decoded bytes)"
            )));
        }
    }
}

fn corrupt(msg: impl std::fmt::Display) -> Error {
    Error::CorruptChunk(format!("zstd: {msg}"))
}

/// zstd's error code for "Destination buffer is too small".
fn dst_size_too_small() -> usize {
    (zstd::zstd_safe::zstd_sys::ZSTD_ErrorCode::ZSTD_error_dstSize_tooSmall as usize).wrapping_neg()
}

/// Sums the content sizes the frame headers of `input` declare (stopping once the sum passes
/// `cap`), and whether every frame declares its size.
fn declared_size(input: &[u8], cap: u64) -> Result<(u64, bool)> {
    let (mut pos, mut declared, mut all_known) = (0, 0u64, true);
    while pos < input.len() && declared <= cap {
        let frame_len = zstd_safe::find_frame_compressed_size(&input[pos..])
            .map_err(|code| corrupt(zstd_safe::get_error_name(code)))?;
        let frame = input.get(pos..pos + frame_len).unwrap_or_default();
        match zstd_safe::get_frame_content_size(frame) {
            Ok(Some(n)) => declared = declared.saturating_add(n),
            Ok(None) => all_known = false,
            Err(_) => return Err(corrupt("bad frame header")),
        }
        pos += frame_len.max(1);
    }
    Ok((declared, all_known))
}

/// Walks the frames of `input` and checks the content sizes their headers declare against
/// the expected size, before anything is decoded.
fn check_frame_sizes(input: &[u8], expected: usize) -> Result<()> {
    if input.is_empty() {
        return Err(corrupt("empty input holds no frame"));
    }
    let expected = expected as u64;
    let (declared, all_known) = declared_size(input, expected)?;
    if declared > expected {
        return Err(corrupt(format!(
            "frame headers declare at least {declared} bytes, expected {expected}"
        )));
    }
    if all_known && declared < expected {
        return Err(corrupt(format!(
            "frame headers declare {declared} bytes, expected {expected}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::testutil::*;

    fn codec(config: Value) -> Result<Zstd> {
        Zstd::from_config(config.as_object().unwrap())
    }

    /// `numcodecs.Zstd().encode(bytes(range(50)) * 4)` (numcodecs 0.16.6, zstd 1.5.6).
    const NUMCODECS_ZSTD: &str = "\
        28b52ffd20c8dd01002403000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20\
        2122232425262728292a2b2c2d2e2f3031010032a9948202";

    /// `numcodecs.Zstd(level=5, checksum=True).encode(bytes(range(50)) * 4)` (numcodecs 0.16.6).
    const NUMCODECS_ZSTD_CHECKSUM: &str = "\
        28b52ffd24c8dd01002403000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20\
        2122232425262728292a2b2c2d2e2f3031010032a994820237e3fda2";

    /// `zstd::stream::encode_all(&bytes(range(50)) * 4, 3)`: a streamed frame whose header has
    /// no content size (numcodecs 0.16.6 decodes it; 0.15.2 cannot).
    const STREAMED_ZSTD: &str = "\
        28b52ffd0058dd01002403000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20\
        2122232425262728292a2b2c2d2e2f3031010032a9948202";

    #[test]
    fn config_defaults_and_round_trip() {
        assert_eq!(
            codec(json!({"id": "zstd"})).unwrap().config(),
            json!({"id": "zstd", "level": 0, "checksum": false})
        );
        // Metadata written before numcodecs had `checksum` only has the level.
        assert_eq!(
            codec(json!({"id": "zstd", "level": 3})).unwrap().config(),
            json!({"id": "zstd", "level": 3, "checksum": false})
        );
        for level in [-131072, -5, 0, 1, 3, 19, 22, 100] {
            for checksum in [false, true] {
                let config = json!({"id": "zstd", "level": level, "checksum": checksum});
                let c = codec(config.clone()).unwrap();
                assert_eq!(c.config(), config);
                if (-5..=3).contains(&level) {
                    assert_round_trips(&c);
                } else {
                    let enc = c.encode(&sample()).unwrap();
                    assert_eq!(decode(&c, &enc, 200).unwrap(), sample());
                }
            }
        }
    }

    #[test]
    fn writes_content_size_and_checksum() {
        let plain = codec(json!({"level": 0}))
            .unwrap()
            .encode(&sample())
            .unwrap();
        assert_eq!(plain, unhex(NUMCODECS_ZSTD));
        let c = codec(json!({"level": 5, "checksum": true})).unwrap();
        let summed = c.encode(&sample()).unwrap();
        assert_eq!(
            zstd_safe::get_frame_content_size(&summed).ok(),
            Some(Some(200))
        );
        assert_eq!(summed.len(), plain.len() + 4);
    }

    #[test]
    fn decodes_numcodecs_streamed_and_concatenated_frames() {
        let c = codec(json!({"id": "zstd"})).unwrap();
        for fixture in [NUMCODECS_ZSTD, NUMCODECS_ZSTD_CHECKSUM, STREAMED_ZSTD] {
            assert_eq!(decode(&c, &unhex(fixture), 200).unwrap(), sample());
            assert_decodes_to_vec(&c, &unhex(fixture), &sample());
        }
        let two = [unhex(NUMCODECS_ZSTD), unhex(STREAMED_ZSTD)].concat();
        assert_eq!(
            decode(&c, &two, 400).unwrap(),
            [sample(), sample()].concat()
        );
        // A skippable frame in front is allowed.
        let skippable = [&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3][..], &two].concat();
        assert_eq!(
            decode(&c, &skippable, 400).unwrap(),
            [sample(), sample()].concat()
        );
    }

    #[test]
    fn rejects_corrupt_data() {
        let c = codec(json!({"id": "zstd"})).unwrap();
        for fixture in [NUMCODECS_ZSTD, NUMCODECS_ZSTD_CHECKSUM, STREAMED_ZSTD] {
            let enc = unhex(fixture);
            assert_truncations_refused(&c, &enc, 200);
            assert_corrupt(&c, &enc, 199);
            assert_corrupt(&c, &enc, 201);
            assert_corrupt(&c, &[&enc[..], b"xyz"].concat(), 200);
            assert_survives_corruption(&c, &enc, 200);
        }
        assert_corrupt(&c, b"definitely not a zstd frame", 200);
        let mut bad_checksum = unhex(NUMCODECS_ZSTD_CHECKSUM);
        *bad_checksum.last_mut().unwrap() ^= 1;
        assert_corrupt(&c, &bad_checksum, 200);
        // A header declaring a terabyte of content is refused before decoding.
        let enc = unhex(NUMCODECS_ZSTD);
        let huge = [&enc[..4], &[0xe0], &(1u64 << 40).to_le_bytes(), &enc[6..]].concat();
        assert_eq!(
            zstd_safe::get_frame_content_size(&huge).ok(),
            Some(Some(1 << 40))
        );
        assert_corrupt(&c, &huge, 200);
        // A frame without content size must still fit the buffer exactly.
        let bomb = zstd::stream::encode_all(&vec![0u8; 10 << 20][..], 3).unwrap();
        assert_eq!(zstd_safe::get_frame_content_size(&bomb).ok(), Some(None));
        let err = decode(&c, &bomb, 1024).unwrap_err();
        assert!(
            matches!(err, Error::CorruptChunk(ref m) if m.contains("more than")),
            "{err}"
        );
        assert_corrupt(&c, &bomb, (10 << 20) + 1);
        // Without a declared size, decode_to_vec streams and stops at its limit.
        let err = c.decode_to_vec(&bomb, 1024).unwrap_err();
        assert!(
            matches!(err, Error::CorruptChunk(ref m) if m.contains("more than")),
            "{err}"
        );
        assert_eq!(c.decode_to_vec(&bomb, 20 << 20).unwrap().len(), 10 << 20);
        assert!(matches!(
            c.decode_to_vec(&huge, 1 << 20),
            Err(Error::CorruptChunk(_))
        ));
    }

    #[test]
    fn rejects_bad_config() {
        for (key, bad) in [
            ("level", json!("3")),
            ("level", json!(1.5)),
            ("level", json!(1u64 << 40)),
            ("level", json!(null)),
            ("checksum", json!(1)),
            ("checksum", json!("true")),
        ] {
            let err = codec(json!({"id": "zstd", key: bad})).unwrap_err();
            assert!(
                matches!(err, Error::InvalidMetadata(ref m) if m.contains(key)),
                "{err}"
            );
        }
    }
}
