//! Codecs: the v2 compressors and filters, each in its own file, found by their numcodecs id
//! through [`compressor_from_config`] and [`filter_from_config`], and chained by
//! [`CodecPipeline`].
//!
//! A codec turns a chunk's raw bytes into stored bytes and back. Decoding targets a buffer
//! whose exact size the caller knows from the array metadata, or, between filters, a size
//! bounded by it, so a corrupt or hostile header can never make the library allocate much
//! more than one chunk.

use crate::error::{Error, Result};
use serde_json::Value;
use std::ops::Range;

pub(crate) use blosc::COMPRESSORS as BLOSC_COMPRESSORS;
pub use chain::{v3_codec_names, ChunkCodecs, ShardIndexCodecs, Sharding};
pub use filter::{filter_from_config, Filter, FILTER_IDS};
pub use pipeline::{CodecPipeline, Step};

mod base64;
mod bit_packing;
mod blosc;
mod blosc_frame;
mod bz2;
mod chain;
mod config;
mod filter;
mod filters;
mod gzip;
mod lz4;
mod lzma;
mod n5;
mod pcodec;
mod pipeline;
pub mod registered;
mod stream;
mod sub_byte;
mod swap_bytes;
#[cfg(test)]
mod testutil;
mod zfp;
#[cfg(feature = "zfp")]
mod zfp_promotion;
mod zlib;
mod zstd;

/// What a codec needs to know about the array whose chunks it encodes.
#[derive(Debug, Clone)]
pub struct CodecContext {
    /// Size in bytes of one array element (blosc's default `typesize`).
    pub item_size: usize,
    /// The elements the codec is handed, where known (numcodecs hands a compressor the array
    /// the filters made): what pcodec compresses.
    pub(crate) element: Option<filters::numeric::ElemType>,
    /// The shape of the array the codec is handed, where known (a v2 compressor no filter
    /// precedes, on C-order chunks): zfpy compresses that field.
    pub(crate) chunk_shape: Option<Vec<u64>>,
}

impl CodecContext {
    /// The context of a v2 compressor handed an array of `dtype` as it is (no filters).
    pub fn of_array(dtype: &crate::dtype::DataType) -> CodecContext {
        CodecContext {
            item_size: dtype.size,
            element: Some(filters::numeric::ElemType::of_array(dtype)),
            chunk_shape: None,
        }
    }

    /// A context of elements of `item_size` bytes, their type unknown.
    pub fn items(item_size: usize) -> CodecContext {
        CodecContext {
            item_size,
            element: None,
            chunk_shape: None,
        }
    }
}

/// A bytes-to-bytes codec (a numcodecs compressor).
pub trait Codec: Send + Sync + std::fmt::Debug {
    /// The numcodecs id, e.g. `"zlib"`.
    fn id(&self) -> &'static str;
    /// The full configuration as numcodecs writes it in `.zarray` (with the `id` key).
    fn config(&self) -> Value;
    /// Encodes `input` into a new buffer.
    fn encode(&self, input: &[u8]) -> Result<Vec<u8>>;
    /// Encodes `input` into `out`, replacing its contents; codecs that can, reuse `out`'s
    /// capacity, so a caller encoding chunk after chunk allocates nothing in the steady state.
    fn encode_into(&self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        *out = self.encode(input)?;
        Ok(())
    }
    /// Decodes `input` into `out`, which must be filled exactly: a stream that decodes to
    /// fewer or more bytes than `out.len()` is an error ([`Error::CorruptChunk`]).
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()>;
    /// Decodes `input` into a new vector when the decoded size is not known in advance (a
    /// filter follows). Data that decodes to more than `max_len` bytes is
    /// [`Error::CorruptChunk`]: codecs whose header states the size check it before
    /// allocating, stream codecs grow their buffer up to `max_len` and stop there.
    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>>;
    /// Whether stored chunks hold only their part inside the array (N5's edge blocks), so
    /// that encoding needs that part's extent ([`Codec::encode_block_into`]).
    fn stores_extent(&self) -> bool {
        false
    }
    /// Encodes a whole chunk of which only the first `extent[d]` elements of each dimension
    /// lie inside the array; codecs that store whole chunks ignore the extent.
    fn encode_block_into(&self, input: &[u8], extent: &[u64], out: &mut Vec<u8>) -> Result<()> {
        let _ = extent;
        self.encode_into(input, out)
    }
    /// Whether [`Codec::decode_parts_into`] can decode less than the whole chunk (blosc,
    /// block by block).
    fn decodes_parts(&self) -> bool {
        false
    }
    /// Decodes into `out` (one chunk's size) at least the bytes `parts` names (byte ranges
    /// of the decoded chunk, in order); the others may keep what they held. Codecs that
    /// cannot decode a part alone decode the whole chunk.
    fn decode_parts_into(
        &self,
        input: &[u8],
        out: &mut [u8],
        parts: &[Range<usize>],
    ) -> Result<()> {
        let _ = parts;
        self.decode_into(input, out)
    }
    /// How many first bytes of a stored chunk of `decoded_len` decoded bytes tell
    /// [`Codec::stored_parts`] where its parts lie; 0 for codecs whose parts cannot be read
    /// apart (all but blosc).
    fn stored_head(&self, decoded_len: usize) -> u64 {
        let _ = decoded_len;
        0
    }
    /// The `(offset, length)` ranges of a stored chunk that [`Codec::decode_parts_into`] reads
    /// to decode `parts` of its `decoded_len` bytes, told from the chunk's first bytes `head`
    /// ([`Codec::stored_head`] of them, or all when shorter); `None` when it reads it whole.
    fn stored_parts(
        &self,
        head: &[u8],
        decoded_len: usize,
        parts: &[Range<usize>],
    ) -> Option<Vec<(u64, u64)>> {
        let _ = (head, decoded_len, parts);
        None
    }
}

/// The numcodecs ids of the compressors [`compressor_from_config`] builds (`zfpy` with the
/// `zfp` feature).
pub const COMPRESSOR_IDS: [&str; 9 + cfg!(feature = "zfp") as usize] = [
    "zlib",
    "gzip",
    "zstd",
    "blosc",
    "lz4",
    "bz2",
    "lzma",
    "base64",
    "pcodec",
    #[cfg(feature = "zfp")]
    "zfpy",
];

/// Builds a compressor from its `.zarray` configuration object. Unknown ids are
/// [`Error::Unsupported`]; bad parameters are [`Error::InvalidMetadata`] naming the key.
pub fn compressor_from_config(config: &Value, ctx: CodecContext) -> Result<Box<dyn Codec>> {
    let obj = config.as_object().ok_or_else(|| {
        Error::InvalidMetadata(format!(
            "compressor must be a JSON object or null, got {config}"
        ))
    })?;
    let id = obj.get("id").and_then(Value::as_str).ok_or_else(|| {
        Error::InvalidMetadata(format!("compressor has no string \"id\": {config}"))
    })?;
    let codec: Box<dyn Codec> = match id {
        "zlib" => Box::new(zlib::Zlib::from_config(obj)?),
        "gzip" => Box::new(gzip::Gzip::from_config(obj)?),
        "zstd" => Box::new(zstd::Zstd::from_config(obj)?),
        "blosc" => Box::new(blosc::Blosc::from_config(obj, ctx)?),
        "lz4" => Box::new(lz4::Lz4::from_config(obj)?),
        "bz2" => Box::new(bz2::Bz2::from_config(obj)?),
        "lzma" => Box::new(lzma::Lzma::from_config(obj)?),
        "base64" => Box::new(base64::Base64::from_config(obj)?),
        "pcodec" => Box::new(pcodec::Pcodec::from_config(obj, ctx.element.as_ref())?),
        "zfpy" => zfp::zfpy(obj, ctx.element.as_ref(), ctx.chunk_shape.as_deref())?,
        "n5_wrapper" => Box::new(n5::N5Wrapper::from_config(obj, ctx)?),
        other => match registered::by_id(config) {
            Some((registered::RegisteredKind::Bytes, codec)) => Box::new(codec),
            _ => return Err(Error::Unsupported(format!("compressor id \"{other}\""))),
        },
    };
    Ok(codec)
}
