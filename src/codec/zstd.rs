//! numcodecs `Zstd`: one Zstandard frame per chunk (with the content size in its header).

use super::config::Config;
use super::Codec;
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use zstd::zstd_safe::{self, CParameter};

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
        let failed = |e: std::io::Error| Error::Internal(format!("zstd: compression failed: {e}"));
        let mut compressor = zstd::bulk::Compressor::new(self.level).map_err(failed)?;
        compressor
            .set_parameter(CParameter::ChecksumFlag(self.checksum))
            .map_err(failed)?;
        compressor.compress(input).map_err(failed)
    }

    /// Decodes one or more frames, with or without the content size in their headers,
    /// straight into `out` (zstd's single-pass decoder needs no window buffer).
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        check_frame_sizes(input, out.len())?;
        match zstd_safe::decompress(out, input) {
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
}

fn corrupt(msg: impl std::fmt::Display) -> Error {
    Error::CorruptChunk(format!("zstd: {msg}"))
}

/// zstd's error code for "Destination buffer is too small".
fn dst_size_too_small() -> usize {
    (zstd::zstd_safe::zstd_sys::ZSTD_ErrorCode::ZSTD_error_dstSize_tooSmall as usize).wrapping_neg()
}

/// Walks the frames of `input` and checks the content sizes their headers declare against
/// the expected size, before anything is decoded.
fn check_frame_sizes(input: &[u8], expected: usize) -> Result<()> {
    if input.is_empty() {
        return Err(corrupt("empty input holds no frame"));
    }
    let expected = expected as u64;
    let (mut pos, mut declared, mut all_known) = (0, 0u64, true);
    while pos < input.len() && declared <= expected {
        let frame_len = zstd_safe::find_frame_compressed_size(&input[pos..])
            .map_err(|code| corrupt(zstd_safe::get_error_name(code)))?;
        match zstd_safe::get_frame_content_size(&input[pos..pos + frame_len]) {
            Ok(Some(n)) => declared = declared.saturating_add(n),
            Ok(None) => all_known = false,
            Err(_) => return Err(corrupt("bad frame header")),
        }
        pos += frame_len.max(1);
    }
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
