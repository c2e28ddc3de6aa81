//! Filters: the numcodecs codecs listed in `.zarray`'s `"filters"`, applied in order to a
//! chunk's bytes before the compressor on write, and in reverse after it on read.
//!
//! numcodecs filters work on NumPy arrays: each one views its input as the type its
//! configuration names (`dtype`, `decode_dtype`), or, for `bitround`, as whatever type the
//! previous step produced. Here every filter works on bytes and carries that type itself;
//! [`build`] also returns the type of the array numcodecs' `encode` would return, which is
//! what the next filter (and blosc, for its `typesize`) sees.

use super::config::Config;
use super::filters::{self, numeric::ElemType};
use super::registered::{self, RegisteredKind};
use crate::dtype::DataType;
use crate::error::{Error, Result};
use serde_json::Value;

/// A numcodecs filter working on a chunk's bytes.
pub trait Filter: Send + Sync + std::fmt::Debug {
    /// The numcodecs id, e.g. `"delta"`.
    fn id(&self) -> &'static str;
    /// The configuration as numcodecs' `get_config()` returns it (with the `id` key).
    fn config(&self) -> Value;
    /// Encodes `input` (the bytes numcodecs would see as the filter's input array). Where
    /// numcodecs raises, so does this: [`Error::InvalidMetadata`] when the configuration
    /// cannot encode (or `input` is not a whole number of the filter's elements),
    /// [`Error::InvalidArgument`] for data it refuses (a first `delta` value out of range),
    /// [`Error::Unsupported`] for `bitround` on non-native floats.
    fn encode(&self, input: &[u8]) -> Result<Vec<u8>>;
    /// Decodes `input`. The result is never longer than `max_len`: input that would decode
    /// to more is [`Error::CorruptChunk`], refused before anything that size is allocated.
    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>>;
    /// The length `encode` returns for an input of `decoded_len` bytes, when the length alone
    /// decides it (`None` when an input of that length cannot be encoded).
    fn encoded_len(&self, decoded_len: usize) -> Option<usize>;
}

/// Builds a filter from its `.zarray` configuration object, for an array of type
/// `array_dtype` (the filter's input when it comes first). Unknown ids are
/// [`Error::Unsupported`] naming the id; bad parameters are [`Error::InvalidMetadata`]
/// naming the key and the id.
pub fn filter_from_config(config: &Value, array_dtype: &DataType) -> Result<Box<dyn Filter>> {
    build(config, &ElemType::of_array(array_dtype)).map(|(filter, _)| filter)
}

/// Whether a filter configuration names a compressor (any of
/// [`COMPRESSOR_IDS`](super::COMPRESSOR_IDS)), which the pipeline runs as a compressor step
/// among the filters.
pub(crate) fn is_compressor(config: &Value) -> bool {
    let id = config.get("id").and_then(Value::as_str);
    id.is_some_and(|id| {
        super::COMPRESSOR_IDS.contains(&id)
            || registered::kind_of_id(id) == Some(RegisteredKind::Bytes)
    })
}

/// The numcodecs ids of the filters [`build`] builds (besides these, a filter list may name
/// any of the compressors, [`COMPRESSOR_IDS`](super::COMPRESSOR_IDS)).
pub const FILTER_IDS: [&str; 13] = [
    "delta",
    "fixedscaleoffset",
    "quantize",
    "bitround",
    "packbits",
    "categorize",
    "astype",
    "shuffle",
    "crc32",
    "adler32",
    "crc32c",
    "fletcher32",
    "jenkins_lookup3",
];

/// Builds a filter whose input is an array of `input` elements; also returns the element type
/// of what it encodes to.
pub(crate) fn build(config: &Value, input: &ElemType) -> Result<(Box<dyn Filter>, ElemType)> {
    let obj = config.as_object().ok_or_else(|| {
        Error::InvalidMetadata(format!("each filter must be a JSON object, got {config}"))
    })?;
    let id = obj
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::InvalidMetadata(format!("filter has no string \"id\": {config}")))?;
    fn boxed<F: Filter + 'static>((filter, output): (F, ElemType)) -> (Box<dyn Filter>, ElemType) {
        (Box::new(filter), output)
    }
    let bytes = ElemType::Num(filters::numeric::NumType::U1);
    Ok(match id {
        "delta" => boxed(filters::delta::Delta::from_config(obj)?),
        "fixedscaleoffset" => boxed(filters::fixedscaleoffset::FixedScaleOffset::from_config(
            obj,
        )?),
        "quantize" => boxed(filters::quantize::Quantize::from_config(obj)?),
        "bitround" => boxed(filters::bitround::BitRound::from_config(obj, input)?),
        "packbits" => (Box::new(filters::packbits::PackBits), bytes),
        "categorize" => boxed(filters::categorize::Categorize::from_config(obj)?),
        "astype" => boxed(filters::astype::AsType::from_config(obj)?),
        "shuffle" => (
            Box::new(filters::shuffle::Shuffle::from_config(obj)?),
            bytes,
        ),
        "crc32" | "adler32" | "crc32c" => (
            Box::new(filters::checksum32::Checksum32::from_config(obj, id)?),
            bytes,
        ),
        "fletcher32" => (Box::new(filters::fletcher32::Fletcher32), bytes),
        "jenkins_lookup3" => (
            Box::new(filters::jenkins::JenkinsLookup3::from_config(obj)?),
            bytes,
        ),
        other => match registered::by_id(config) {
            Some((RegisteredKind::Filter, f)) => (Box::new(f), input.clone()),
            _ => return Err(Error::Unsupported(format!("filter id \"{other}\""))),
        },
    })
}

/// Reads a key naming a NumPy type (`"<i4"`), with `default` when absent.
pub(crate) fn dtype_key(cfg: &Config, key: &str, default: Option<&ElemType>) -> Result<ElemType> {
    match (cfg.opt_value(key), default) {
        (None, Some(d)) => Ok(d.clone()),
        (None, None) => Err(cfg.error(format_args!("missing required key \"{key}\""))),
        (Some(v), _) => v
            .as_str()
            .and_then(ElemType::parse)
            .ok_or_else(|| cfg.invalid(key, "a NumPy type string such as \"<i4\"")),
    }
}

/// The error for an input whose length is not a whole number of `item`-byte elements.
pub(crate) fn ragged(id: &str, len: usize, typestr: &str, decoding: bool) -> Error {
    let msg = format!("{id} filter: {len} bytes are not a whole number of {typestr} elements");
    if decoding {
        Error::CorruptChunk(msg)
    } else {
        Error::InvalidMetadata(msg)
    }
}

/// The error for input that would decode to more than `max_len` bytes.
pub(crate) fn too_long(id: &str, len: usize, max_len: usize) -> Error {
    Error::CorruptChunk(format!(
        "{id} filter: data decodes to {len} bytes, more than the expected {max_len}"
    ))
}

/// Checks the decoded length `len` against `max_len`.
pub(crate) fn check_len(id: &str, len: usize, max_len: usize) -> Result<()> {
    if len > max_len {
        Err(too_long(id, len, max_len))
    } else {
        Ok(())
    }
}
