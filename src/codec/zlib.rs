//! numcodecs `Zlib`: a zlib stream (RFC 1950). Also home of the deflate helpers shared with
//! [`super::gzip`]: the level setting and the decoder that accepts either container.

use super::config::Config;
use super::gzip::{gunzip, GZIP_MAGIC};
use super::stream::{decode_growing, decode_stream, finish, Sink, StreamDecoder};
use super::Codec;
use crate::error::{Error, Result};
use flate2::{Compression, Decompress, FlushDecompress, Status};
use serde_json::{json, Map, Value};
use std::io::Write;

/// The numcodecs `Zlib` compressor: `{"id": "zlib", "level": 1}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zlib {
    level: i64,
}

impl Zlib {
    /// Reads `level` (-1..=9, default 1; -1 is zlib's default level, 6).
    pub fn from_config(obj: &Map<String, Value>) -> Result<Self> {
        Ok(Zlib {
            level: deflate_level(&Config::new(obj, "zlib"))?,
        })
    }
}

impl Codec for Zlib {
    fn id(&self) -> &'static str {
        "zlib"
    }

    fn config(&self) -> Value {
        json!({"id": "zlib", "level": self.level})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), compression(self.level));
        enc.write_all(input)
            .and_then(|()| enc.finish())
            .map_err(|e| Error::Internal(format!("zlib: compressing into memory failed: {e}")))
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        inflate("zlib", input, &mut Sink::Exact(out)).map(drop)
    }

    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        decode_growing(max_len, |sink| inflate("zlib", input, sink))
    }
}

/// Reads the `level` key shared by `zlib` and `gzip` (Python's zlib accepts -1..=9).
pub(super) fn deflate_level(cfg: &Config) -> Result<i64> {
    cfg.int("level", 1, -1..=9)
}

/// The flate2 setting for a numcodecs level (-1 means zlib's default, 6).
pub(super) fn compression(level: i64) -> Compression {
    u32::try_from(level).map_or(Compression::default(), Compression::new)
}

/// Decodes a zlib or a gzip stream (told apart by the gzip magic bytes, which are never a
/// valid zlib header) into `out`, returning the decoded length (all of an exact sink). Bytes
/// after a zlib stream are ignored, as Python's `zlib.decompress` does.
pub(super) fn inflate(id: &str, input: &[u8], out: &mut Sink) -> Result<usize> {
    if input.starts_with(&GZIP_MAGIC) {
        gunzip(id, input, out)
    } else {
        let (_, end) = decode_stream(id, &mut Decompress::new(true), input, out, 0)?;
        finish(id, out, end)
    }
}

impl StreamDecoder for Decompress {
    fn step(&mut self, input: &[u8], output: &mut [u8]) -> Result<bool> {
        match self.decompress(input, output, FlushDecompress::None) {
            Ok(status) => Ok(status == Status::StreamEnd),
            Err(e) => Err(Error::CorruptChunk(e.to_string())),
        }
    }

    fn total_in(&self) -> u64 {
        Decompress::total_in(self)
    }

    fn total_out(&self) -> u64 {
        Decompress::total_out(self)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::codec::gzip::Gzip;
    use crate::codec::testutil::*;

    fn codec(config: Value) -> Result<Zlib> {
        Zlib::from_config(config.as_object().unwrap())
    }

    /// `numcodecs.Zlib(level=1).encode(bytes(range(50)) * 4)` (numcodecs 0.16.6).
    pub(crate) const NUMCODECS_ZLIB: &str = "\
        78016360646266616563e7e0e4e2e6e1e5e3171014121611151397909492969195935750545256515553d7d0\
        d4d2d6d1d5d337306418943a00e2121325";

    #[test]
    fn config_defaults_and_round_trip() {
        assert_eq!(
            codec(json!({"id": "zlib"})).unwrap().config(),
            json!({"id": "zlib", "level": 1})
        );
        for level in -1..=9 {
            let c = codec(json!({"id": "zlib", "level": level})).unwrap();
            assert_eq!(c.config(), json!({"id": "zlib", "level": level}));
            assert_round_trips(&c);
        }
    }

    #[test]
    fn decodes_numcodecs_output() {
        let c = codec(json!({"id": "zlib"})).unwrap();
        assert_eq!(decode(&c, &unhex(NUMCODECS_ZLIB), 200).unwrap(), sample());
    }

    #[test]
    fn accepts_gzip_and_trailing_bytes() {
        let c = codec(json!({"id": "zlib"})).unwrap();
        let gz = Gzip::from_config(json!({"level": 5}).as_object().unwrap())
            .unwrap()
            .encode(&sample())
            .unwrap();
        assert_eq!(decode(&c, &gz, 200).unwrap(), sample());
        let mut enc = unhex(NUMCODECS_ZLIB);
        enc.extend_from_slice(b"xyz");
        assert_eq!(decode(&c, &enc, 200).unwrap(), sample());
    }

    #[test]
    fn rejects_corrupt_data() {
        let c = codec(json!({"id": "zlib"})).unwrap();
        let enc = unhex(NUMCODECS_ZLIB);
        assert_truncations_refused(&c, &enc, 200);
        assert_corrupt(&c, b"this is not zlib data", 200);
        assert_corrupt(&c, &enc, 0);
        let mut bad_checksum = enc.clone();
        *bad_checksum.last_mut().unwrap() ^= 1;
        assert_corrupt(&c, &bad_checksum, 200);
        // Ten megabytes of zeros compress to about ten kilobytes; a one-kilobyte buffer must
        // be refused without decoding (or allocating for) the rest.
        let bomb = c.encode(&vec![0u8; 10 << 20]).unwrap();
        assert_corrupt(&c, &bomb, 1024);
        assert_corrupt_vec(&c, &bomb, 1024);
    }

    #[test]
    fn rejects_bad_config() {
        for bad in [json!(10), json!(-2), json!("1"), json!(1.5), json!(null)] {
            let err = codec(json!({"id": "zlib", "level": bad})).unwrap_err();
            assert!(matches!(err, Error::InvalidMetadata(ref m) if m.contains("level")));
        }
    }
}
