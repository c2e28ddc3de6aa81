//! numcodecs `BZ2`: a bzip2 stream, as Python's `bz2.compress` writes it.

use super::config::{decode_stream, expect_filled, Config, StreamDecoder};
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
        let (mut pos, mut filled) = (0, 0);
        loop {
            let mut dec = Decompress::new(false);
            let (used, end) = decode_stream("bz2", &mut dec, &input[pos..], out, filled)?;
            (pos, filled) = (pos + used, end);
            if !input[pos..].starts_with(BZIP2_MAGIC) {
                return expect_filled("bz2", filled, out.len());
            }
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
