//! Object arrays (`|O`): variable-length values whose stored form is set by the object codec,
//! the first filter of the array (numcodecs `vlen-utf8`, `vlen-bytes`, `vlen-array`, `json2` /
//! `msgpack2` holding strings or any JSON value, and `categorize` of object labels).
//!
//! The vlen codecs frame a chunk the same way: a little-endian `u32` item count, then per item
//! a little-endian `u32` byte length and the bytes; decoding yields byte ranges into the
//! encoded chunk, so no item is allocated on its own. `json2` and `msgpack2` store a list of
//! the items nested to the chunk's shape (C order), then the dtype string and the shape;
//! their strings are gathered into one buffer.

use super::pickled::PickledElement;
use super::{ByteSwap, DataType};
use crate::error::{Error, Result};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use serde_json::{json, Value};
use std::ops::Range;

/// How the items of a `json2` or `msgpack2` array reach the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ItemForm {
    /// Items are strings, given as their UTF-8 text; any other item is unsupported.
    #[default]
    Strings,
    /// Items are JSON text: a string is `"quoted"`, and numbers, lists, objects, booleans and
    /// `null` pass too.
    Json,
}

/// What the items of an object array are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectCodec {
    /// `vlen-utf8`: UTF-8 text.
    Utf8,
    /// `vlen-bytes`: byte strings.
    Bytes,
    /// `vlen-array`: 1-d arrays of a fixed-size type.
    Array(DataType),
    /// `json2`: items of any JSON type; its configuration as given.
    Json(Value),
    /// `msgpack2`: items of any msgpack type JSON can hold; its configuration as given.
    MsgPack(Value),
    /// `categorize` of an object array: text items stored as their 1-based index in `labels`
    /// (0 for the empty text when it is not a label), each code an element of `astype`.
    Categorize {
        /// The labels, in order.
        labels: Vec<String>,
        /// The type of the codes (an integer, float or bool type).
        astype: DataType,
        /// The configuration as given.
        config: Value,
    },
    /// `pickle`: Python objects, or records with object fields, pickled as a NumPy array per
    /// chunk; its elements pass as JSON text.
    Pickle {
        /// What one element is (set from the array's dtype by [`ObjectCodec::suited_to`]).
        element: PickledElement,
        /// Whether the array's order is F: the pickled chunks say so (their items stay in C
        /// order), for zarr-python 2 flattens them in memory order.
        fortran: bool,
        /// The configuration as given.
        config: Value,
    },
}

/// The ids of the object codecs [`ObjectCodec::from_config`] recognises and reads.
pub const OBJECT_CODEC_IDS: [&str; 7] = [
    "vlen-utf8",
    "vlen-bytes",
    "vlen-array",
    "json2",
    "msgpack2",
    "categorize",
    "pickle",
];

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
            Some("json2") => ObjectCodec::Json(config.clone()),
            Some("msgpack2") => ObjectCodec::MsgPack(config.clone()),
            Some("categorize") if config.get("dtype").and_then(Value::as_str) == Some("|O") => {
                categorize(config)?
            }
            Some("pickle") => ObjectCodec::Pickle {
                element: PickledElement::Object,
                fortran: false,
                config: config.clone(),
            },
            _ => return Ok(None),
        };
        Ok(Some(codec))
    }

    /// The codec for an array of `dtype` in C or F (`fortran`) order: an object array, or for
    /// `pickle` also records with object fields ([`Error::InvalidMetadata`] for other types).
    pub fn suited_to(self, dtype: &DataType, fortran: bool) -> Result<ObjectCodec> {
        match self {
            ObjectCodec::Pickle { config, .. } => Ok(ObjectCodec::Pickle {
                element: PickledElement::of(dtype)?,
                fortran,
                config,
            }),
            _ if dtype.kind == super::DataTypeKind::Object => Ok(self),
            _ => Err(Error::InvalidMetadata(format!(
                "object codec {} on an array of {}",
                self.config(),
                dtype.typestr()
            ))),
        }
    }

    /// The configuration numcodecs writes.
    pub fn config(&self) -> Value {
        match self {
            ObjectCodec::Utf8 => json!({"id": "vlen-utf8"}),
            ObjectCodec::Bytes => json!({"id": "vlen-bytes"}),
            ObjectCodec::Array(dtype) => json!({"id": "vlen-array", "dtype": dtype.to_json()}),
            ObjectCodec::Json(config)
            | ObjectCodec::MsgPack(config)
            | ObjectCodec::Categorize { config, .. }
            | ObjectCodec::Pickle { config, .. } => config.clone(),
        }
    }

    /// Whether chunks nest items in lists of the chunk's shape, in C order (`json2`,
    /// `msgpack2`), rather than framing them in the chunk's memory order.
    pub fn nests_items(&self) -> bool {
        matches!(self, ObjectCodec::Json(_) | ObjectCodec::MsgPack(_))
    }

    /// Whether chunks hold items in C order whatever the array's order (`json2`, `msgpack2`
    /// and `pickle`).
    pub fn items_in_c_order(&self) -> bool {
        self.nests_items() || matches!(self, ObjectCodec::Pickle { .. })
    }

    /// Whether items pass only as JSON text (`pickle`).
    pub fn items_only_json(&self) -> bool {
        matches!(self, ObjectCodec::Pickle { .. })
    }

    /// Whether items are text (and must be valid UTF-8).
    pub fn holds_text(&self) -> bool {
        matches!(
            self,
            ObjectCodec::Utf8
                | ObjectCodec::Json(_)
                | ObjectCodec::MsgPack(_)
                | ObjectCodec::Categorize { .. }
        )
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

    /// Decodes a chunk holding `shape`'s items (C order): a buffer and each item's byte range
    /// in it (for the vlen codecs, the encoded bytes themselves; `json2` and `msgpack2` items
    /// in `form`).
    pub fn decode(
        &self,
        encoded: Vec<u8>,
        shape: &[u64],
        form: ItemForm,
    ) -> Result<(Vec<u8>, Vec<Range<usize>>)> {
        let expected = shape.iter().product::<u64>() as usize;
        match self {
            ObjectCodec::Json(_) => {
                let value: Value =
                    serde_json::from_slice(&encoded).map_err(|e| self.corrupt(e.to_string()))?;
                self.gather(as_items(&value), shape, form)
            }
            ObjectCodec::MsgPack(_) => {
                let value = rmpv::decode::read_value(&mut encoded.as_slice())
                    .map_err(|e| self.corrupt(e.to_string()))?;
                self.gather(as_items(&value), shape, form)
            }
            ObjectCodec::Pickle { element, .. } => element.decode(&encoded, shape),
            ObjectCodec::Categorize { labels, astype, .. } => {
                if encoded.len() != expected.saturating_mul(astype.size) {
                    return Err(self.corrupt(format!(
                        "{} bytes where {expected} codes of {} take {}",
                        encoded.len(),
                        astype.typestr(),
                        expected.saturating_mul(astype.size)
                    )));
                }
                let mut buffer = Vec::new();
                let mut ranges = Vec::with_capacity(expected);
                for code in encoded.chunks_exact(astype.size) {
                    let start = buffer.len();
                    // As numcodecs: a code that is no label's index decodes to the empty text.
                    if let Some(label) = label_index(code, astype).and_then(|i| labels.get(i)) {
                        buffer.extend_from_slice(label.as_bytes());
                    }
                    ranges.push(start..buffer.len());
                }
                Ok((buffer, ranges))
            }
            _ => {
                let items = self.vlen_items(&encoded, expected)?;
                Ok((encoded, items))
            }
        }
    }

    /// Flattens the nested item list of a `json2`/`msgpack2` chunk into one text buffer of
    /// its items in `form`.
    fn gather<V>(
        &self,
        parts: Option<(&[V], &[V])>,
        shape: &[u64],
        form: ItemForm,
    ) -> Result<(Vec<u8>, Vec<Range<usize>>)>
    where
        V: Nested,
    {
        let (items, _tail) =
            parts.ok_or_else(|| self.corrupt("not a list ending in a dtype and a shape".into()))?;
        let mut buffer = Vec::new();
        let mut ranges = Vec::new();
        flatten(items, shape, &mut |v| {
            let start = buffer.len();
            match form {
                ItemForm::Strings => {
                    let s = v.text().ok_or_else(|| {
                        Error::Unsupported(format!(
                            "{}: items that are not strings (read them as JSON text)",
                            self.id()
                        ))
                    })?;
                    buffer.extend_from_slice(s.as_bytes());
                }
                ItemForm::Json => {
                    let json = v.json().ok_or_else(|| {
                        Error::Unsupported(format!(
                            "{}: an item JSON has no form of (binary, extension, a map key \
                             that is not a string, or a float that is not finite)",
                            self.id()
                        ))
                    })?;
                    buffer.extend_from_slice(json.to_string().as_bytes());
                }
            }
            ranges.push(start..buffer.len());
            Ok(())
        })
        .map_err(|e| match e {
            Error::CorruptChunk(m) => self.corrupt(m),
            other => other,
        })?;
        Ok((buffer, ranges))
    }

    /// The byte ranges of the `expected` items of a vlen-framed chunk.
    fn vlen_items(&self, encoded: &[u8], expected: usize) -> Result<Vec<Range<usize>>> {
        let corrupt = |why: String| self.corrupt(why);
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
            if !len.is_multiple_of(self.element_size()) {
                return Err(corrupt(format!(
                    "item {i} of {len} bytes is not whole elements"
                )));
            }
            items.push(start..end);
            at = end;
        }
        Ok(items)
    }

    /// Encodes the items of a chunk of `shape` (C order) into `out`, replacing its contents;
    /// `json2` and `msgpack2` items are in `form`.
    pub fn encode<'a>(
        &self,
        items: impl ExactSizeIterator<Item = &'a [u8]>,
        shape: &[u64],
        form: ItemForm,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        out.clear();
        match self {
            ObjectCodec::Json(_) => {
                let mut list = match nest(self.item_values(items, form)?, shape) {
                    Value::Array(list) => list,
                    single => vec![single],
                };
                list.push(json!("|O"));
                list.push(json!(shape));
                write_ascii_json(&Value::Array(list), out);
                Ok(())
            }
            ObjectCodec::MsgPack(_) => {
                let values = self.item_values(items, form)?;
                let packed: Vec<rmpv::Value> = values.iter().map(json_to_msgpack).collect();
                let mut list = match nest(packed, shape) {
                    rmpv::Value::Array(list) => list,
                    single => vec![single],
                };
                list.push(rmpv::Value::from("|O"));
                list.push(rmpv::Value::Array(
                    shape.iter().map(|&n| rmpv::Value::from(n)).collect(),
                ));
                rmpv::encode::write_value(out, &rmpv::Value::Array(list))
                    .map_err(|e| Error::Internal(format!("msgpack2: {e}")))
            }
            ObjectCodec::Pickle {
                element, fortran, ..
            } => element.encode(items, shape, *fortran, out),
            ObjectCodec::Categorize { labels, astype, .. } => {
                for (i, item) in items.enumerate() {
                    // A repeated label's last index wins, as in numcodecs.
                    let code = match labels.iter().rposition(|l| l.as_bytes() == item) {
                        Some(at) => at + 1,
                        None if item.is_empty() => 0,
                        None => {
                            return Err(Error::InvalidArgument(format!(
                                "categorize: item {i} ({:?}) is not one of the labels (numcodecs would store it as the empty text)",
                                String::from_utf8_lossy(item)
                            )))
                        }
                    };
                    out.extend(code_bytes(code, astype)?);
                }
                Ok(())
            }
            _ => {
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
        }
    }

    /// The caller's items of a `json2`/`msgpack2` chunk as JSON values: strings, or parsed
    /// from JSON text.
    fn item_values<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        form: ItemForm,
    ) -> Result<Vec<Value>> {
        items
            .enumerate()
            .map(|(i, item)| match form {
                ItemForm::Strings => Ok(Value::String(String::from_utf8_lossy(item).into())),
                ItemForm::Json => serde_json::from_slice(item).map_err(|e| {
                    Error::InvalidArgument(format!("{}: item {i} is not JSON text: {e}", self.id()))
                }),
            })
            .collect()
    }

    /// The stored item that stands for never-written elements, from the `.zarray`
    /// `fill_value`: text as given (zarr-python 2 writes numbers such as its default `0`, read
    /// as the text `"0"`), base64 for bytes, one element of the given value for arrays; `null`
    /// is the empty item. As JSON items (`form`), the fill value's JSON text.
    pub fn fill_item(&self, fill: &Value, form: ItemForm) -> Result<Vec<u8>> {
        let bad =
            || Error::InvalidMetadata(format!("fill_value {fill} does not suit {}", self.id()));
        if let ObjectCodec::Pickle { element, .. } = self {
            return element.fill_item(fill);
        }
        if form == ItemForm::Json && self.nests_items() {
            return Ok(fill.to_string().into_bytes());
        }
        Ok(match (self, fill) {
            (_, Value::Null) => Vec::new(),
            (_, Value::String(text)) if text.is_empty() => Vec::new(),
            (ObjectCodec::Bytes, Value::String(text)) => BASE64.decode(text).map_err(|_| bad())?,
            (_, Value::String(text)) if self.holds_text() => text.as_bytes().to_vec(),
            (_, Value::Number(n)) if self.holds_text() => n.to_string().into_bytes(),
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
            ObjectCodec::Json(_) => "json2",
            ObjectCodec::MsgPack(_) => "msgpack2",
            ObjectCodec::Categorize { .. } => "categorize",
            ObjectCodec::Pickle { .. } => "pickle",
        }
    }

    fn corrupt(&self, why: String) -> Error {
        Error::CorruptChunk(format!("{}: {why}", self.id()))
    }
}

/// The object codec of `{"id": "categorize", "dtype": "|O", "labels": [...], "astype": ...}`.
fn categorize(config: &Value) -> Result<ObjectCodec> {
    let invalid = |key: &str, what: &str| {
        Error::InvalidMetadata(format!(
            "categorize filter: \"{key}\" must be {what}, got {}",
            config.get(key).unwrap_or(&Value::Null)
        ))
    };
    let labels = config
        .get("labels")
        .and_then(Value::as_array)
        .and_then(|l| l.iter().map(|v| v.as_str().map(String::from)).collect())
        .ok_or_else(|| invalid("labels", "a list of strings"))?;
    let astype = match config.get("astype") {
        None => DataType::parse_typestr("|u1")?,
        Some(Value::String(text)) => DataType::parse_typestr(text)
            .ok()
            .filter(|t| {
                matches!(
                    t.kind,
                    super::DataTypeKind::Int
                        | super::DataTypeKind::UInt
                        | super::DataTypeKind::Float
                        | super::DataTypeKind::Bool
                ) && t.size <= 8
            })
            .ok_or_else(|| invalid("astype", "an integer, float or bool type"))?,
        Some(_) => return Err(invalid("astype", "a type string")),
    };
    Ok(ObjectCodec::Categorize {
        labels,
        astype,
        config: config.clone(),
    })
}

/// The label index a stored code (an element of `astype`) stands for: its value less one.
fn label_index(code: &[u8], astype: &DataType) -> Option<usize> {
    let mut native = code.to_vec();
    astype.byte_swap().apply(&mut native);
    let mut little = native.clone();
    if cfg!(target_endian = "big") {
        little.reverse();
    }
    let value = match (&astype.kind, native.len()) {
        (super::DataTypeKind::Float, 2) => {
            f64::from(half::f16::from_ne_bytes(native.try_into().ok()?))
        }
        (super::DataTypeKind::Float, 4) => f64::from(f32::from_ne_bytes(native.try_into().ok()?)),
        (super::DataTypeKind::Float, _) => f64::from_ne_bytes(native.try_into().ok()?),
        (super::DataTypeKind::Int, n) => {
            let mut wide = [if little[n - 1] & 0x80 != 0 { 0xff } else { 0 }; 8];
            wide[..n].copy_from_slice(&little);
            i64::from_le_bytes(wide) as f64
        }
        (_, n) => {
            let mut wide = [0u8; 8];
            wide[..n].copy_from_slice(&little);
            u64::from_le_bytes(wide) as f64
        }
    };
    (value >= 1.0 && value.fract() == 0.0 && value <= usize::MAX as f64).then(|| value as usize - 1)
}

/// The stored code `code` as an element of `astype`; [`Error::InvalidArgument`] when it does
/// not fit (more labels than the type counts, as numcodecs refuses).
fn code_bytes(code: usize, astype: &DataType) -> Result<Vec<u8>> {
    let n = astype.size;
    let mut native = match astype.kind {
        super::DataTypeKind::Float => match n {
            2 => half::f16::from_f64(code as f64).to_ne_bytes().to_vec(),
            4 => (code as f32).to_ne_bytes().to_vec(),
            _ => (code as f64).to_ne_bytes().to_vec(),
        },
        _ => {
            let bits = n * 8 - usize::from(astype.kind == super::DataTypeKind::Int);
            let fits = match astype.kind {
                super::DataTypeKind::Bool => code <= 1,
                _ => bits >= usize::BITS as usize || code < 1usize << bits,
            };
            if !fits {
                return Err(Error::InvalidArgument(format!(
                    "categorize: label index {code} does not fit astype {}",
                    astype.typestr()
                )));
            }
            let wide = (code as u64).to_le_bytes();
            let mut native = wide[..n].to_vec();
            if cfg!(target_endian = "big") {
                native.reverse();
            }
            native
        }
    };
    astype.byte_swap().apply(&mut native);
    Ok(native)
}

/// JSON and msgpack values seen as possibly nested lists of items.
trait Nested: Sized {
    fn list(&self) -> Option<&[Self]>;
    /// The item when it is a string.
    fn text(&self) -> Option<&str>;
    /// The item as JSON (`None` when JSON has no form of it).
    fn json(&self) -> Option<Value>;
}

impl Nested for Value {
    fn list(&self) -> Option<&[Value]> {
        self.as_array().map(Vec::as_slice)
    }

    fn text(&self) -> Option<&str> {
        self.as_str()
    }

    fn json(&self) -> Option<Value> {
        Some(self.clone())
    }
}

impl Nested for rmpv::Value {
    fn list(&self) -> Option<&[rmpv::Value]> {
        self.as_array().map(Vec::as_slice)
    }

    fn text(&self) -> Option<&str> {
        self.as_str()
    }

    fn json(&self) -> Option<Value> {
        use rmpv::Value as M;
        Some(match self {
            M::Nil => Value::Null,
            M::Boolean(b) => Value::Bool(*b),
            M::Integer(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => u.into(),
                (_, Some(i)) => i.into(),
                _ => return None,
            },
            M::F32(f) => serde_json::Number::from_f64(f64::from(*f))?.into(),
            M::F64(f) => serde_json::Number::from_f64(*f)?.into(),
            M::String(s) => Value::String(s.as_str()?.to_string()),
            M::Array(items) => Value::Array(items.iter().map(Nested::json).collect::<Option<_>>()?),
            M::Map(pairs) => Value::Object(
                pairs
                    .iter()
                    .map(|(k, v)| Some((k.as_str()?.to_string(), v.json()?)))
                    .collect::<Option<_>>()?,
            ),
            M::Binary(_) | M::Ext(..) => return None,
        })
    }
}

/// A JSON value as msgpack-python packs the Python value it stands for.
fn json_to_msgpack(value: &Value) -> rmpv::Value {
    use rmpv::Value as M;
    match value {
        Value::Null => M::Nil,
        Value::Bool(b) => M::Boolean(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), ..) => M::from(u),
            (_, Some(i), _) => M::from(i),
            (.., f) => M::F64(f.unwrap_or(f64::NAN)),
        },
        Value::String(s) => M::from(s.as_str()),
        Value::Array(items) => M::Array(items.iter().map(json_to_msgpack).collect()),
        Value::Object(map) => M::Map(
            map.iter()
                .map(|(k, v)| (M::from(k.as_str()), json_to_msgpack(v)))
                .collect(),
        ),
    }
}

/// Splits `[items..., dtype, shape]` into the items and the two trailing entries.
fn as_items<V: Nested>(value: &V) -> Option<(&[V], &[V])> {
    let all = value.list()?;
    (all.len() >= 2).then(|| all.split_at(all.len() - 2))
}

/// Visits the items of a list nested to `shape`, in C order, checking every extent.
fn flatten<V: Nested>(
    items: &[V],
    shape: &[u64],
    visit: &mut impl FnMut(&V) -> Result<()>,
) -> Result<()> {
    let (&n, rest) = shape.split_first().unwrap_or((&1, &[]));
    if items.len() as u64 != n {
        return Err(Error::CorruptChunk(format!(
            "a list of {} items where the shape says {n}",
            items.len()
        )));
    }
    for item in items {
        if rest.is_empty() {
            visit(item)?;
        } else {
            let inner = item
                .list()
                .ok_or_else(|| Error::CorruptChunk("a nested list is missing".into()))?;
            flatten(inner, rest, visit)?;
        }
    }
    Ok(())
}

/// Nests items given in C order into lists of `shape` (a 0-d shape keeps the one item).
pub(super) fn nest<V: From<Vec<V>>>(items: Vec<V>, shape: &[u64]) -> V {
    fn build<V: From<Vec<V>>>(items: &mut std::vec::IntoIter<V>, shape: &[u64]) -> V {
        match shape.split_first() {
            None => items.next().expect("as many items as the shape holds"),
            Some((&n, rest)) => V::from((0..n).map(|_| build(items, rest)).collect::<Vec<V>>()),
        }
    }
    let shape: &[u64] = if shape.is_empty() { &[1] } else { shape };
    build(&mut items.into_iter(), shape)
}

/// Writes JSON as Python's `json.dumps(..., ensure_ascii=True, separators=(',', ':'))` does.
fn write_ascii_json(value: &Value, out: &mut Vec<u8>) {
    for c in value.to_string().chars() {
        if c.is_ascii() {
            out.push(c as u8);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.extend_from_slice(format!("\\u{unit:04x}").as_bytes());
            }
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
        let (buffer, items) = codec
            .decode(NUMCODECS_UTF8.to_vec(), &[3], ItemForm::Strings)
            .unwrap();
        let texts: Vec<&[u8]> = items.iter().map(|r| &buffer[r.clone()]).collect();
        assert_eq!(texts, vec!["héllo".as_bytes(), b"", b"0"]);
        let mut out = Vec::new();
        codec
            .encode(texts.into_iter(), &[3], ItemForm::Strings, &mut out)
            .unwrap();
        assert_eq!(out, NUMCODECS_UTF8);
    }

    /// numcodecs.JSON() and numcodecs.MsgPack() encoding np.array(["héllo", "", "x"], dtype=object)
    /// (numcodecs 0.16.6 with msgpack).
    #[test]
    fn frames_strings_like_numcodecs_json_and_msgpack() {
        let json_codec = ObjectCodec::from_config(&json!({"id": "json2"}))
            .unwrap()
            .unwrap();
        let msgpack = ObjectCodec::from_config(&json!({"id": "msgpack2"}))
            .unwrap()
            .unwrap();
        let json_bytes = br#"["h\u00e9llo","","x","|O",[3]]"#.to_vec();
        let msgpack_bytes: Vec<u8> = (0..16)
            .map(|i| {
                u8::from_str_radix(&"95a668c3a96c6c6fa0a178a27c4f9103"[2 * i..2 * i + 2], 16)
                    .unwrap()
            })
            .collect();
        for (codec, bytes) in [(json_codec, json_bytes), (msgpack, msgpack_bytes)] {
            let (buffer, items) = codec
                .decode(bytes.clone(), &[3], ItemForm::Strings)
                .unwrap();
            let texts: Vec<&[u8]> = items.iter().map(|r| &buffer[r.clone()]).collect();
            assert_eq!(texts, vec!["héllo".as_bytes(), b"", b"x"]);
            let mut out = Vec::new();
            codec
                .encode(texts.into_iter(), &[3], ItemForm::Strings, &mut out)
                .unwrap();
            assert_eq!(out, bytes);
            assert!(codec.decode(bytes, &[4], ItemForm::Strings).is_err());
        }
        let nested = br#"[["a","b"],["c","d"],"|O",[2,2]]"#.to_vec();
        let codec = ObjectCodec::from_config(&json!({"id": "json2"}))
            .unwrap()
            .unwrap();
        let (buffer, items) = codec
            .decode(nested.clone(), &[2, 2], ItemForm::Strings)
            .unwrap();
        assert_eq!(
            items.iter().map(|r| &buffer[r.clone()]).collect::<Vec<_>>(),
            vec![b"a", b"b", b"c", b"d"]
        );
        let mut out = Vec::new();
        codec
            .encode(
                items.iter().map(|r| &buffer[r.clone()]),
                &[2, 2],
                ItemForm::Strings,
                &mut out,
            )
            .unwrap();
        assert_eq!(out, nested);
        assert!(matches!(
            codec.decode(br#"[1,2,"|O",[2]]"#.to_vec(), &[2], ItemForm::Strings),
            Err(Error::Unsupported(_))
        ));
    }

    /// Object labels as numcodecs' Categorize stores them: 1-based codes of `astype`, 0 for
    /// the empty text; an item that is no label is refused, a code that is none decodes empty.
    #[test]
    fn categorizes_object_labels_like_numcodecs() {
        let config =
            json!({"id": "categorize", "labels": ["a", "bé", "a"], "dtype": "|O", "astype": ">u2"});
        let codec = ObjectCodec::from_config(&config).unwrap().unwrap();
        assert_eq!(codec.config(), config);
        let mut out = Vec::new();
        let items: [&[u8]; 4] = [b"a", "bé".as_bytes(), b"", b"a"];
        codec
            .encode(items.into_iter(), &[4], ItemForm::Strings, &mut out)
            .unwrap();
        assert_eq!(out, [0, 3, 0, 2, 0, 0, 0, 3]);
        let (buffer, ranges) = codec
            .decode([0, 2, 0, 9, 0, 3].to_vec(), &[3], ItemForm::Strings)
            .unwrap();
        let back: Vec<&[u8]> = ranges.iter().map(|r| &buffer[r.clone()]).collect();
        assert_eq!(back, vec!["bé".as_bytes(), b"", b"a"]);
        let bad = codec.encode([&b"z"[..]].into_iter(), &[1], ItemForm::Strings, &mut out);
        assert!(
            matches!(bad, Err(Error::InvalidArgument(m)) if m.contains("not one of the labels"))
        );
        assert!(matches!(
            codec.decode(vec![0; 5], &[3], ItemForm::Strings),
            Err(Error::CorruptChunk(_))
        ));
        let many: Vec<String> = (0..300).map(|i| i.to_string()).collect();
        let small = json!({"id": "categorize", "labels": many, "dtype": "|O", "astype": "|u1"});
        let small = ObjectCodec::from_config(&small).unwrap().unwrap();
        let too_far = small.encode([&b"299"[..]].into_iter(), &[1], ItemForm::Strings, &mut out);
        assert!(matches!(too_far, Err(Error::InvalidArgument(m)) if m.contains("does not fit")));
    }

    /// As JSON text, items of every type pass both codecs and come back the same; msgpack
    /// binary items have no JSON form.
    #[test]
    fn items_of_every_json_type_pass_as_json_text() {
        let items = [
            r#"1"#,
            r#""s""#,
            r#"[1,2.5,null]"#,
            r#"{"k":[true,false]}"#,
            r#"null"#,
            r#"-7"#,
        ];
        for id in ["json2", "msgpack2"] {
            let codec = ObjectCodec::from_config(&json!({ "id": id }))
                .unwrap()
                .unwrap();
            let mut out = Vec::new();
            let texts = items.iter().map(|i| i.as_bytes());
            codec
                .encode(texts, &[2, 3], ItemForm::Json, &mut out)
                .unwrap();
            let (buffer, ranges) = codec.decode(out.clone(), &[2, 3], ItemForm::Json).unwrap();
            let back: Vec<&[u8]> = ranges.iter().map(|r| &buffer[r.clone()]).collect();
            assert_eq!(back, items.map(str::as_bytes), "{id}");
            assert!(
                codec.decode(out, &[2, 3], ItemForm::Strings).is_err(),
                "{id}"
            );
            let bad = codec.encode(
                [&b"{x"[..]].into_iter(),
                &[1],
                ItemForm::Json,
                &mut Vec::new(),
            );
            assert!(matches!(bad, Err(Error::InvalidArgument(m)) if m.contains("item 0")));
            assert_eq!(codec.fill_item(&json!(0), ItemForm::Json).unwrap(), b"0");
        }
        let mut binary = Vec::new();
        let chunk = rmpv::Value::Array(vec![
            rmpv::Value::Binary(vec![1, 2]),
            rmpv::Value::from("|O"),
            rmpv::Value::Array(vec![rmpv::Value::from(1)]),
        ]);
        rmpv::encode::write_value(&mut binary, &chunk).unwrap();
        let codec = ObjectCodec::from_config(&json!({"id": "msgpack2"}))
            .unwrap()
            .unwrap();
        assert!(matches!(
            codec.decode(binary, &[1], ItemForm::Json),
            Err(Error::Unsupported(m)) if m.contains("binary")
        ));
    }

    #[test]
    fn refuses_corrupt_chunks() {
        let codec = ObjectCodec::Utf8;
        assert!(codec
            .decode(NUMCODECS_UTF8.to_vec(), &[4], ItemForm::Strings)
            .is_err());
        for cut in 0..NUMCODECS_UTF8.len() {
            let err = codec
                .decode(NUMCODECS_UTF8[..cut].to_vec(), &[3], ItemForm::Strings)
                .unwrap_err();
            assert!(matches!(err, Error::CorruptChunk(_)), "{cut}");
        }
        let huge = [3u8, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
        assert!(codec
            .decode(huge.to_vec(), &[3], ItemForm::Strings)
            .is_err());
        let array = ObjectCodec::Array(DataType::parse_typestr("<i4").unwrap());
        assert!(array
            .decode(
                b"\x01\x00\x00\x00\x03\x00\x00\x00abc".to_vec(),
                &[1],
                ItemForm::Strings
            )
            .is_err());
        let json_codec = ObjectCodec::from_config(&json!({"id": "json2"}))
            .unwrap()
            .unwrap();
        for bad in [
            &br#"{"a":1}"#[..],
            b"[",
            br#"["a"]"#,
            br#"[["a"],"|O",[2]]"#,
        ] {
            assert!(
                json_codec
                    .decode(bad.to_vec(), &[2], ItemForm::Strings)
                    .is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn parses_configs_and_fill_values() {
        let array = ObjectCodec::from_config(&json!({"id": "vlen-array", "dtype": "<i4"}))
            .unwrap()
            .unwrap();
        assert_eq!(array.config(), json!({"id": "vlen-array", "dtype": "<i4"}));
        assert_eq!(
            array.fill_item(&json!(7), ItemForm::Strings).unwrap(),
            7i32.to_le_bytes()
        );
        assert_eq!(
            ObjectCodec::Utf8
                .fill_item(&json!(0), ItemForm::Strings)
                .unwrap(),
            b"0"
        );
        assert_eq!(
            ObjectCodec::Utf8
                .fill_item(&json!("x"), ItemForm::Strings)
                .unwrap(),
            b"x"
        );
        assert_eq!(
            ObjectCodec::Bytes
                .fill_item(&json!("YWI="), ItemForm::Strings)
                .unwrap(),
            b"ab"
        );
        assert!(ObjectCodec::from_config(&json!({"id": "zlib"}))
            .unwrap()
            .is_none());
        let pickle = ObjectCodec::from_config(&json!({"id": "pickle"}))
            .unwrap()
            .unwrap();
        let utf8 = DataType::parse_typestr("|O").unwrap();
        assert!(pickle.clone().suited_to(&utf8, false).is_ok());
        let err = pickle
            .suited_to(&DataType::parse_typestr("<f8").unwrap(), false)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidMetadata(_)), "{err}");
        let err = ObjectCodec::Utf8
            .suited_to(&DataType::parse_typestr("<f8").unwrap(), false)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidMetadata(_)), "{err}");
        assert!(ObjectCodec::from_config(&json!({"id": "vlen-array"})).is_err());
        assert!(ObjectCodec::Bytes
            .fill_item(&json!(1.5), ItemForm::Strings)
            .is_err());
    }
}
