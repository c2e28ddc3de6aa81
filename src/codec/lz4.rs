//! numcodecs `LZ4`: the uncompressed size as 4 little-endian bytes, then one LZ4 block.

use super::config::Config;
use super::Codec;
use crate::error::{try_alloc_zeroed, Error, Result};
use serde_json::{json, Map, Value};

/// numcodecs' `LZ4.max_buffer_size`: the largest input it encodes.
const MAX_BUFFER_SIZE: usize = 0x7E00_0000;

/// The numcodecs `LZ4` compressor: `{"id": "lz4", "acceleration": 1}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lz4 {
    acceleration: i64,
}

impl Lz4 {
    /// Reads `acceleration` (any integer, default 1). It is kept for the metadata only:
    /// lz4_flex always compresses like LZ4's default acceleration of 1, which any LZ4
    /// decoder reads the same.
    pub fn from_config(obj: &Map<String, Value>) -> Result<Self> {
        let cfg = Config::new(obj, "lz4");
        Ok(Lz4 {
            acceleration: cfg.int("acceleration", 1, i32::MIN.into()..=i32::MAX.into())?,
        })
    }
}

impl Codec for Lz4 {
    fn id(&self) -> &'static str {
        "lz4"
    }

    fn config(&self) -> Value {
        json!({"id": "lz4", "acceleration": self.acceleration})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        if input.len() > MAX_BUFFER_SIZE {
            return Err(Error::TooLarge(format!(
                "lz4: cannot compress {} bytes (at most {MAX_BUFFER_SIZE})",
                input.len()
            )));
        }
        Ok(lz4_flex::block::compress_prepend_size(input))
    }

    /// Checks the stated size against `out` before decoding the block straight into `out`.
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let (stated, block) = split_header(input)?;
        if usize::try_from(stated) != Ok(out.len()) {
            return Err(corrupt(format!(
                "header says the data decodes to {stated} bytes, expected {}",
                out.len()
            )));
        }
        match lz4_flex::block::decompress_into(block, out) {
            Ok(n) if n == out.len() => Ok(()),
            Ok(n) => Err(corrupt(format!(
                "data decodes to {n} bytes, expected {}",
                out.len()
            ))),
            Err(e) => Err(corrupt(e.to_string())),
        }
    }

    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let (stated, _) = split_header(input)?;
        let len = usize::try_from(stated).unwrap_or(usize::MAX);
        if len > max_len {
            return Err(corrupt(format!(
                "header says the data decodes to {stated} bytes, more than the expected {max_len}"
            )));
        }
        let mut out = try_alloc_zeroed(len, "an lz4 chunk")?;
        self.decode_into(input, &mut out)?;
        Ok(out)
    }
}

fn corrupt(msg: String) -> Error {
    Error::CorruptChunk(format!("lz4: {msg}"))
}

/// The size the 4-byte header states, and the block after it.
fn split_header(input: &[u8]) -> Result<(u32, &[u8])> {
    let Some((size, block)) = input.split_first_chunk::<4>() else {
        return Err(corrupt(format!(
            "data is truncated ({} bytes, shorter than the 4-byte size header)",
            input.len()
        )));
    };
    Ok((u32::from_le_bytes(*size), block))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::testutil::*;

    fn codec(config: Value) -> Result<Lz4> {
        Lz4::from_config(config.as_object().unwrap())
    }

    /// `numcodecs.LZ4().encode(bytes(range(50)) * 4)` (numcodecs 0.16.6, lz4 1.10.0).
    const NUMCODECS_LZ4: &str = "\
        c8000000ff23000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425\
        262728292a2b2c2d2e2f303132007e502d2e2f3031";

    #[test]
    fn config_defaults_and_round_trip() {
        assert_eq!(
            codec(json!({"id": "lz4"})).unwrap().config(),
            json!({"id": "lz4", "acceleration": 1})
        );
        for acceleration in [-5, 0, 1, 10, 65537] {
            let config = json!({"id": "lz4", "acceleration": acceleration});
            let c = codec(config.clone()).unwrap();
            assert_eq!(c.config(), config);
            assert_round_trips(&c);
        }
        // numcodecs encodes empty input the same way (but cannot decode it).
        assert_eq!(
            codec(json!({})).unwrap().encode(b"").unwrap(),
            [0, 0, 0, 0, 0]
        );
    }

    #[test]
    fn decodes_numcodecs_output() {
        let c = codec(json!({"id": "lz4"})).unwrap();
        assert_eq!(decode(&c, &unhex(NUMCODECS_LZ4), 200).unwrap(), sample());
    }

    #[test]
    fn rejects_corrupt_data() {
        let c = codec(json!({"id": "lz4"})).unwrap();
        let enc = unhex(NUMCODECS_LZ4);
        assert_truncations_refused(&c, &enc, 200);
        assert_survives_corruption(&c, &enc, 200);
        assert_corrupt(&c, &enc, 199);
        assert_corrupt(&c, &enc, 201);
        assert_corrupt(&c, &[&enc[..], b"xyz"].concat(), 200);
        assert_corrupt(&c, b"\xc8\0\0\0 garbage garbage garbage", 200);
        // A header claiming 4 GB is refused before decoding.
        let huge = [&[0xff; 4][..], &enc[4..]].concat();
        assert_corrupt(&c, &huge, 200);
        assert!(matches!(
            c.decode_to_vec(&huge, 1 << 20),
            Err(Error::CorruptChunk(_))
        ));
        assert_decodes_to_vec(&c, &enc, &sample());
        // A header that agrees with the buffer but a block that decodes to less.
        let short = [&201u32.to_le_bytes()[..], &enc[4..]].concat();
        assert_corrupt(&c, &short, 201);
    }

    #[test]
    fn rejects_bad_config() {
        for bad in [json!("1"), json!(1.5), json!(null), json!(1u64 << 40)] {
            let err = codec(json!({"id": "lz4", "acceleration": bad})).unwrap_err();
            assert!(matches!(err, Error::InvalidMetadata(ref m) if m.contains("acceleration")));
        }
    }
}
