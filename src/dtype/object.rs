//! Object arrays (`|O`): variable-length values whose stored form is set by the object codec,
//! the first filter of the array (numcodecs `vlen-utf8`, `vlen-bytes`, `vlen-array`).
//!
//! All three frame a chunk the same way: a little-endian `u32` item count, then per item a
//! little-endian `u32` byte length and the bytes. Decoding yields byte ranges into the
//! encoded chunk, so no item is allocated on its own.

use super::{ByteSwap, DataType};
use crate::error::{Error, Result};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use serde_json::{json, Value};
use std::ops::Range;

/// What the items of an object array are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectCodec {
    /// `vlen-utf8`: UTF-8 text.
    Utf8,
    /// `vlen-bytes`: byte strings.
    Bytes,
    /// `vlen-array`: 1-d arrays of a fixed-size type.
    Array(DataType),
}

impl ObjectCodec {
    /// Recognises an object codec configuration; `None` for other filters.
    pub fn from_config(config: &Value) -> Result<Option<ObjectCodec>> {
        let codec = match config.get("id").and_then(Value::as_str) {
            Some("vlen-utf8") => ObjectCodec::Utf8,
            Some("vlen-bytes") => ObjectCodec::Bytes,
            Some("vlen-array") => {
                let dtype = config.get("dtype").ok_or_else(|| {
                    Error::InvalidMetadata(format!("vlen-array filter {config} has no \"dtype\""))
                })?;
                let dtype = DataType::parse(dtype).map_err(|e| e.context("vlen-array filter"))?;
                if matches!(
                    dtype.kind,
                    super::DataTypeKind::Structured(_) | super::DataTypeKind::Object
                ) {
                    return Err(Error::Unsupported(format!(
                        "vlen-array of {}",
                        dtype.typestr()
                    )));
                }
                ObjectCodec::Array(dtype)
            }
            Some(id @ ("json2" | "msgpack2" | "pickle")) => {
                return Err(Error::Unsupported(format!("object codec {id:?}")))
            }
            _ => return Ok(None),
        };
        Ok(Some(codec))
    }

    /// The configuration numcodecs writes.
    pub fn config(&self) -> Value {
        match self {
            ObjectCodec::Utf8 => json!({"id": "vlen-utf8"}),
            ObjectCodec::Bytes => json!({"id": "vlen-bytes"}),
            ObjectCodec::Array(dtype) => json!({"id": "vlen-array", "dtype": dtype.to_json()}),
        }
    }

    /// Bytes of one element of an item (1 for text and bytes).
    pub fn element_size(&self) -> usize {
        match self {
            ObjectCodec::Array(dtype) => dtype.size,
            _ => 1,
        }
    }

    /// How item elements change between stored and native byte order.
    pub fn byte_swap(&self) -> ByteSwap {
        match self {
            ObjectCodec::Array(dtype) => dtype.byte_swap(),
            _ => ByteSwap::None,
        }
    }

    /// The byte ranges of the `expected` items of an encoded chunk.
    pub fn items(&self, encoded: &[u8], expected: usize) -> Result<Vec<Range<usize>>> {
        let corrupt = |why: String| Error::CorruptChunk(format!("{}: {why}", self.id()));
        let read_u32 = |at: usize| -> Result<usize> {
            let bytes = encoded
                .get(at..at + 4)
                .ok_or_else(|| corrupt(format!("ends at byte {at}")))?;
            Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")) as usize)
        };
        let count = read_u32(0)?;
        if count != expected {
            return Err(corrupt(format!(
                "holds {count} items, the chunk has {expected}"
            )));
        }
        let mut items = Vec::with_capacity(count);
        let mut at = 4;
        for i in 0..count {
            let len = read_u32(at)?;
            let start = at + 4;
            let end = start
                .checked_add(len)
                .filter(|&e| e <= encoded.len())
                .ok_or_else(|| {
                    corrupt(format!(
                        "item {i} of {len} bytes runs past the end ({} bytes)",
                        encoded.len()
                    ))
                })?;
            if len % self.element_size() != 0 {
                return Err(corrupt(format!(
                    "item {i} of {len} bytes is not whole elements"
                )));
            }
            items.push(start..end);
            at = end;
        }
        Ok(items)
    }

    /// Encodes items into `out`, replacing its contents.
    pub fn encode<'a>(
        &self,
        items: impl ExactSizeIterator<Item = &'a [u8]>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        out.clear();
        let count = u32::try_from(items.len())
            .map_err(|_| Error::TooLarge(format!("{}: too many items", self.id())))?;
        out.extend_from_slice(&count.to_le_bytes());
        for item in items {
            let len = u32::try_from(item.len()).map_err(|_| {
                Error::TooLarge(format!("{}: an item of {} bytes", self.id(), item.len()))
            })?;
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(item);
        }
        Ok(())
    }

    /// The stored item that stands for never-written elements, from the `.zarray`
    /// `fill_value`: text as given (zarr-python 2 writes numbers such as its default `0`, read
    /// as the text `"0"`), base64 for bytes, one element of the given value for arrays; `null`
    /// is the empty item.
    pub fn fill_item(&self, fill: &Value) -> Result<Vec<u8>> {
        let bad =
            || Error::InvalidMetadata(format!("fill_value {fill} does not suit {}", self.id()));
        Ok(match (self, fill) {
            (_, Value::Null) => Vec::new(),
            (ObjectCodec::Utf8, Value::String(text)) => text.as_bytes().to_vec(),
            (ObjectCodec::Utf8, Value::Number(n)) => n.to_string().into_bytes(),
            (ObjectCodec::Bytes, Value::String(text)) => BASE64.decode(text).map_err(|_| bad())?,
            (ObjectCodec::Array(dtype), value @ Value::Number(_)) => {
                let mut element = super::FillValue::parse(value, dtype)?.bytes_or_zero(dtype.size);
                dtype.byte_swap().apply(&mut element);
                element
            }
            _ => return Err(bad()),
        })
    }

    fn id(&self) -> &'static str {
        match self {
            ObjectCodec::Utf8 => "vlen-utf8",
            ObjectCodec::Bytes => "vlen-bytes",
            ObjectCodec::Array(_) => "vlen-array",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numcodecs.VLenUTF8().encode(np.array(["héllo", "", "0"], dtype=object)) (0.16.6).
    const NUMCODECS_UTF8: &[u8] =
        b"\x03\x00\x00\x00\x06\x00\x00\x00h\xc3\xa9llo\x00\x00\x00\x00\x01\x00\x00\x000";

    #[test]
    fn frames_items_like_numcodecs() {
        let codec = ObjectCodec::Utf8;
        let items = codec.items(NUMCODECS_UTF8, 3).unwrap();
        let texts: Vec<&[u8]> = items.iter().map(|r| &NUMCODECS_UTF8[r.clone()]).collect();
        assert_eq!(texts, vec!["héllo".as_bytes(), b"", b"0"]);
        let mut out = Vec::new();
        codec.encode(texts.into_iter(), &mut out).unwrap();
        assert_eq!(out, NUMCODECS_UTF8);
    }

    #[test]
    fn refuses_corrupt_chunks() {
        let codec = ObjectCodec::Utf8;
        assert!(codec.items(NUMCODECS_UTF8, 4).is_err());
        for cut in 0..NUMCODECS_UTF8.len() {
            assert!(
                matches!(
                    codec.items(&NUMCODECS_UTF8[..cut], 3),
                    Err(Error::CorruptChunk(_))
                ),
                "{cut}"
            );
        }
        let huge = [3u8, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
        assert!(codec.items(&huge, 3).is_err());
        let array = ObjectCodec::Array(DataType::parse_typestr("<i4").unwrap());
        assert!(array
            .items(b"\x01\x00\x00\x00\x03\x00\x00\x00abc", 1)
            .is_err());
    }

    #[test]
    fn parses_configs_and_fill_values() {
        let array = ObjectCodec::from_config(&json!({"id": "vlen-array", "dtype": "<i4"}))
            .unwrap()
            .unwrap();
        assert_eq!(array.config(), json!({"id": "vlen-array", "dtype": "<i4"}));
        assert_eq!(array.fill_item(&json!(7)).unwrap(), 7i32.to_le_bytes());
        assert_eq!(ObjectCodec::Utf8.fill_item(&json!(0)).unwrap(), b"0");
        assert_eq!(ObjectCodec::Utf8.fill_item(&json!("x")).unwrap(), b"x");
        assert_eq!(ObjectCodec::Bytes.fill_item(&json!("YWI=")).unwrap(), b"ab");
        assert!(ObjectCodec::from_config(&json!({"id": "zlib"}))
            .unwrap()
            .is_none());
        assert!(ObjectCodec::from_config(&json!({"id": "json2"})).is_err());
        assert!(ObjectCodec::from_config(&json!({"id": "vlen-array"})).is_err());
        assert!(ObjectCodec::Bytes.fill_item(&json!(1.5)).is_err());
    }
}
