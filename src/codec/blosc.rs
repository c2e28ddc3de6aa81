//! numcodecs `Blosc`: c-blosc 1.x frames, through its thread-safe `*_ctx` functions only.

use super::config::Config;
use super::{Codec, CodecContext};
use crate::error::{try_alloc_zeroed, Error, Result};
use blosc_src::{
    blosc_cbuffer_sizes, blosc_cbuffer_validate, blosc_compress_ctx, blosc_decompress_ctx,
    BLOSC_BITSHUFFLE, BLOSC_MAX_BUFFERSIZE, BLOSC_MAX_OVERHEAD, BLOSC_MIN_HEADER_LENGTH,
    BLOSC_SHUFFLE,
};
use serde_json::{json, Map, Value};
use std::ffi::CStr;

/// The compressors built into blosc-src, by their numcodecs `cname`.
const COMPRESSORS: [(&str, &CStr); 5] = [
    ("blosclz", c"blosclz"),
    ("lz4", c"lz4"),
    ("lz4hc", c"lz4hc"),
    ("zlib", c"zlib"),
    ("zstd", c"zstd"),
];

/// numcodecs' `AUTOSHUFFLE`: bit shuffle for one-byte items, byte shuffle otherwise.
const AUTOSHUFFLE: i64 = -1;

/// The numcodecs `Blosc` compressor:
/// `{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blosc {
    cname: &'static str,
    cname_c: &'static CStr,
    clevel: i64,
    shuffle: i64,
    blocksize: i64,
    /// Item size handed to blosc for shuffling: the optional `typesize` key (numcodecs
    /// 0.16 accepts it but never writes it), else the array's item size.
    typesize: usize,
}

impl Blosc {
    /// Reads `cname` (default "lz4"), `clevel` (0..=9, default 5), `shuffle` (-1..=2,
    /// default 1), `blocksize` (bytes, 0 = automatic, the default) and `typesize` (default
    /// `ctx.item_size`).
    pub fn from_config(obj: &Map<String, Value>, ctx: CodecContext) -> Result<Self> {
        let cfg = Config::new(obj, "blosc");
        let name = cfg.str("cname", "lz4")?;
        let (cname, cname_c) = match COMPRESSORS.iter().find(|(n, _)| *n == name) {
            Some(&found) => found,
            None if name == "snappy" => {
                return Err(Error::Unsupported(
                    "blosc compressor: cname \"snappy\" is not built into this library".into(),
                ))
            }
            None => return Err(cfg.invalid("cname", "one of blosclz, lz4, lz4hc, zlib, zstd")),
        };
        let typesize = cfg.opt_int("typesize", 1..=i32::MAX.into())?;
        Ok(Blosc {
            cname,
            cname_c,
            clevel: cfg.int("clevel", 5, 0..=9)?,
            shuffle: cfg.int("shuffle", 1, AUTOSHUFFLE..=2)?,
            blocksize: cfg.int("blocksize", 0, 0..=i32::MAX.into())?,
            typesize: typesize.map_or(ctx.item_size.max(1), |t| t as usize),
        })
    }
}

impl Codec for Blosc {
    fn id(&self) -> &'static str {
        "blosc"
    }

    fn config(&self) -> Value {
        json!({
            "id": "blosc",
            "cname": self.cname,
            "clevel": self.clevel,
            "shuffle": self.shuffle,
            "blocksize": self.blocksize,
        })
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        if input.len() > BLOSC_MAX_BUFFERSIZE as usize {
            return Err(Error::TooLarge(format!(
                "blosc: cannot compress {} bytes (at most {BLOSC_MAX_BUFFERSIZE})",
                input.len()
            )));
        }
        let shuffle = match self.shuffle {
            AUTOSHUFFLE if self.typesize == 1 => BLOSC_BITSHUFFLE as i32,
            AUTOSHUFFLE => BLOSC_SHUFFLE as i32,
            s => s as i32,
        };
        let mut dest = try_alloc_zeroed(input.len() + BLOSC_MAX_OVERHEAD as usize, "blosc")?;
        // SAFETY: both buffers are valid for the lengths passed; `dest` has room for the
        // worst case (input + BLOSC_MAX_OVERHEAD), and the ctx function shares no state.
        let written = unsafe {
            blosc_compress_ctx(
                self.clevel as i32,
                shuffle,
                self.typesize,
                input.len(),
                input.as_ptr().cast(),
                dest.as_mut_ptr().cast(),
                dest.len(),
                self.cname_c.as_ptr(),
                self.blocksize as usize,
                1,
            )
        };
        if written <= 0 {
            return Err(Error::Internal(format!(
                "blosc: compression failed (code {written})"
            )));
        }
        dest.truncate(written as usize);
        Ok(dest)
    }

    /// Checks the header against `out` and the input length before decompressing straight
    /// into `out`. Bytes after the frame are ignored.
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let corrupt = |msg: String| Error::CorruptChunk(format!("blosc: {msg}"));
        if input.len() < BLOSC_MIN_HEADER_LENGTH as usize {
            return Err(corrupt(format!(
                "data is truncated ({} bytes, shorter than the 16-byte header)",
                input.len()
            )));
        }
        let (mut nbytes, mut cbytes, mut blocksize) = (0, 0, 0);
        // SAFETY: the input holds at least the 16 header bytes this reads.
        unsafe {
            blosc_cbuffer_sizes(
                input.as_ptr().cast(),
                &mut nbytes,
                &mut cbytes,
                &mut blocksize,
            )
        };
        if cbytes > input.len() {
            return Err(corrupt(format!(
                "data is truncated (header says {cbytes} bytes, got {})",
                input.len()
            )));
        }
        if nbytes != out.len() {
            return Err(corrupt(format!(
                "header says the data decodes to {nbytes} bytes, expected {}",
                out.len()
            )));
        }
        // SAFETY: `cbytes` bytes of input are readable (checked above).
        if unsafe { blosc_cbuffer_validate(input.as_ptr().cast(), cbytes, &mut nbytes) } != 0 {
            return Err(corrupt("invalid header".into()));
        }
        // SAFETY: the header was validated against the `cbytes` readable input bytes, and
        // blosc writes at most `out.len()` bytes.
        let n = unsafe {
            blosc_decompress_ctx(input.as_ptr().cast(), out.as_mut_ptr().cast(), out.len(), 1)
        };
        if n < 0 || n as usize != out.len() {
            return Err(corrupt(format!("decompression failed (code {n})")));
        }
        Ok(())
    }
}
