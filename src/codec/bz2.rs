//! numcodecs `BZ2`: a bzip2 stream, as Python's `bz2.compress` writes it.

use super::config::Config;
use super::stream::{decode_growing, decode_stream, finish, Sink, StreamDecoder};
use super::Codec;
use crate::error::{Error, Result};
use bzip2::{Compression, Decompress, Status};
use serde_json::{json, Map, Value};
use std::io::Write;

/// The magic bytes every bzip2 stream starts with.
const BZIP2_MAGIC: &[u8] = b"BZh";

/// The numcodecs `BZ2` compressor: `{"id": "bz2", "level": 1}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bz2 {
    level: i64,
}

impl Bz2 {
    /// Reads `level` (1..=9, default 1): the block size in units of 100 kB.
    pub fn from_config(obj: &Map<String, Value>) -> Result<Self> {
        Ok(Bz2 {
            level: Config::new(obj, "bz2").int("level", 1, 1..=9)?,
        })
    }
}

impl Codec for Bz2 {
    fn id(&self) -> &'static str {
        "bz2"
    }

    fn config(&self) -> Value {
        json!({"id": "bz2", "level": self.level})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let level = Compression::new(self.level as u32);
        let mut enc = bzip2::write::BzEncoder::new(Vec::new(), level);
        enc.write_all(input)
            .and_then(|()| enc.finish())
            .map_err(|e| Error::Internal(format!("bz2: compressing into memory failed: {e}")))
    }

    /// Decodes one or more concatenated streams. As in Python's `bz2.decompress`, bytes
    /// after the last stream that do not start another stream are ignored.
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        bunzip(input, &mut Sink::Exact(out)).map(drop)
    }

    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        decode_growing(max_len, |sink| bunzip(input, sink))
    }
}

/// Decodes one or more concatenated streams into `out`, returning the decoded length.
fn bunzip(input: &[u8], out: &mut Sink) -> Result<usize> {
    let (mut pos, mut filled) = (0, 0);
    loop {
        let mut dec = Decompress::new(false);
        let (used, end) = decode_stream("bz2", &mut dec, &input[pos..], out, filled)?;
        (pos, filled) = (pos + used, end);
        if !input[pos..].starts_with(BZIP2_MAGIC) {
            return finish("bz2", out, filled);
        }
    }
}

impl StreamDecoder for Decompress {
    fn step(&mut self, input: &[u8], output: &mut [u8]) -> Result<bool> {
        match self.decompress(input, output) {
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
mod tests {
    use super::*;
    use crate::codec::testutil::*;

    fn codec(config: Value) -> Result<Bz2> {
        Bz2::from_config(config.as_object().unwrap())
    }

    /// `numcodecs.BZ2(level=1).encode(bytes(range(50)) * 4)` (numcodecs 0.16.6).
    const NUMCODECS_BZ2: &str = "\
        425a6831314159265359d7a89f46000001f8007fffffffffffe00020009118c864341a0d1a00d000d0c0aaa9\
        a68346801840c8341a01a58405b212e174bc5f22301848cc46332194cc67341a4d4484a4c4e6b361b4dc6f28\
        29381c4e4732a3a1d4ec772b3c1e4f47b3e1f4fc582c5dc914e142435ea27d18";

    #[test]
    fn config_defaults_and_round_trip() {
        assert_eq!(
            codec(json!({"id": "bz2"})).unwrap().config(),
            json!({"id": "bz2", "level": 1})
        );
        for level in [1, 5, 9] {
            let c = codec(json!({"id": "bz2", "level": level})).unwrap();
            assert_eq!(c.config(), json!({"id": "bz2", "level": level}));
            assert_round_trips(&c);
        }
    }

    #[test]
    fn encodes_and_decodes_like_numcodecs() {
        let c = codec(json!({"id": "bz2"})).unwrap();
        let enc = unhex(NUMCODECS_BZ2);
        assert_eq!(c.encode(&sample()).unwrap(), enc);
        assert_eq!(decode(&c, &enc, 200).unwrap(), sample());
    }

    #[test]
    fn decodes_concatenated_streams_ignoring_trailing_bytes() {
        let c = codec(json!({"id": "bz2"})).unwrap();
        let enc = unhex(NUMCODECS_BZ2);
        let two = [&enc[..], &enc[..], b"trailing junk"].concat();
        assert_eq!(
            decode(&c, &two, 400).unwrap(),
            [sample(), sample()].concat()
        );
        // A second stream that does not fit is an error, not ignored.
        assert_corrupt(&c, &two, 200);
    }

    #[test]
    fn rejects_corrupt_data() {
        let c = codec(json!({"id": "bz2"})).unwrap();
        let enc = unhex(NUMCODECS_BZ2);
        assert_truncations_refused(&c, &enc, 200);
        assert_survives_corruption(&c, &enc, 200);
        assert_corrupt(&c, &enc, 199);
        assert_corrupt(&c, &enc, 201);
        assert_corrupt(&c, b"BZh9 but then garbage", 200);
        assert_corrupt(&c, b"not bzip2 at all", 200);
        let bomb = c.encode(&vec![0u8; 10 << 20]).unwrap();
        assert_corrupt(&c, &bomb, 1024);
        assert_corrupt_vec(&c, &bomb, 1024);
    }

    #[test]
    fn rejects_bad_config() {
        for bad in [json!(0), json!(10), json!("9"), json!(null)] {
            let err = codec(json!({"id": "bz2", "level": bad})).unwrap_err();
            assert!(matches!(err, Error::InvalidMetadata(ref m) if m.contains("level")));
        }
    }
}
