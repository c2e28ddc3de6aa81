//! numcodecs `LZ4`: the uncompressed size as 4 little-endian bytes, then one LZ4 block.

use super::config::Config;
use super::Codec;
use crate::error::{Error, Result};
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
        let corrupt = |msg: String| Error::CorruptChunk(format!("lz4: {msg}"));
        let Some((size, block)) = input.split_first_chunk::<4>() else {
            return Err(corrupt(format!(
                "data is truncated ({} bytes, shorter than the 4-byte size header)",
                input.len()
            )));
        };
        let stated = u32::from_le_bytes(*size);
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
}
