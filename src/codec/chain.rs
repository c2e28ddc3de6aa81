//! From an array's codec description to what the engine runs: the element layout of a decoded
//! chunk, the stored byte order, the object codec, the byte steps, and the sharding codec.
//!
//! v2 arrays give filters + compressor + order; v3 arrays an explicit chain: array→array codecs
//! (`transpose` becomes the decoded chunk's layout; element-wise and numcodecs filters become
//! byte steps), exactly one array→bytes codec (`bytes` decides the stored byte order;
//! `packbits` stores little-endian elements' chosen bits as the first byte step;
//! `vlen-utf8`/`vlen-bytes` the object codec; `sharding_indexed` nests a whole chain for the
//! inner chunks), then bytes→bytes codecs. The same implementations serve the v2 ids and the v3
//! names (`zstd`, `numcodecs.zstd`), so stored bytes are the same whichever names them.

use super::bit_packing::BitPacking;
use super::filter::{self, Filter};
use super::filters::checksum32::Checksum32;
use super::filters::numeric::ElemType;
use super::pipeline::{CodecPipeline, Step};
use super::sub_byte::SubByteValues;
use super::swap_bytes::SwapBytes;
use super::{blosc, filters, gzip, zstd, CodecContext};
use crate::dtype::v3::{name_and_configuration, ObjectKind};
use crate::dtype::{ByteOrder, DataType, DataTypeKind, ObjectCodec};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// How a shard's index is encoded: `bytes` (either endian), optionally followed by a
/// checksum codec (`crc32c`, `numcodecs.crc32` or `numcodecs.adler32`, as zarr-python writes
/// them), whose 4 bytes go after the index or before it.
#[derive(Debug, Clone)]
pub struct ShardIndexCodecs {
    /// The index's integers are big-endian.
    pub big_endian: bool,
    /// The checksum codec and its canonical v3 form, if any.
    pub checksum: Option<(Checksum32, Value)>,
}

impl ShardIndexCodecs {
    /// Bytes the encoded index of `count` entries takes.
    pub fn len(&self, count: usize) -> usize {
        count * 16 + if self.checksum.is_some() { 4 } else { 0 }
    }

    /// The index's entries from its encoded bytes, the checksum checked.
    pub fn entries<'a>(&self, encoded: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        match &self.checksum {
            None => Ok(Cow::Borrowed(encoded)),
            Some((filter, _)) => filter.decode(encoded, encoded.len()).map(Cow::Owned),
        }
    }

    /// The encoded index of the `entries`.
    pub fn encode(&self, entries: Vec<u8>) -> Result<Vec<u8>> {
        match &self.checksum {
            None => Ok(entries),
            Some((filter, _)) => filter.encode(&entries),
        }
    }
}

/// The `sharding_indexed` codec: a chunk of the grid (a shard) holds inner chunks, each
/// encoded by the inner chain, and an index of `(offset, length)` pairs.
#[derive(Debug)]
pub struct Sharding {
    /// The inner chunk shape in array dimensions (divides the shard shape).
    pub chunk_shape: Vec<u64>,
    /// The array dimension of each dimension the codec sees, slowest first: the index lists
    /// inner chunks in C order of these (a `transpose` before sharding permutes them).
    pub order: Vec<usize>,
    /// The inner chunks' codecs.
    pub inner: ChunkCodecs,
    /// How the index is encoded.
    pub index: ShardIndexCodecs,
    /// The index is at the start of the shard (else at its end).
    pub index_at_start: bool,
}

/// What the engine needs to decode and encode an array's chunks.
#[derive(Debug, Default)]
pub struct ChunkCodecs {
    /// The dimensions of a decoded chunk from slowest- to fastest-varying in memory
    /// (`0, 1, ..., n-1` is C order, the reverse F order).
    pub layout: Vec<usize>,
    /// The byte order elements are stored in, when the chain decides it (v3 `bytes`).
    pub byte_order: Option<ByteOrder>,
    /// The object codec of a variable-length type.
    pub object: Option<ObjectCodec>,
    /// Byte steps between the decoded chunk and the stored bytes (for a sharded array, those
    /// that apply to whole shards).
    pub pipeline: CodecPipeline,
    /// The sharding codec, when chunks are shards.
    pub sharding: Option<Box<Sharding>>,
    /// How many of the pipeline's first steps are element-wise filters written before an
    /// enclosing `sharding_indexed` (they end up in the innermost chunks' chain).
    pub hoisted: usize,
    /// The v3 codec list with every configuration completed, as zarr-python 3 writes it.
    pub canonical: Vec<Value>,
}

impl ChunkCodecs {
    /// The codecs of a v2 array of chunks of `chunk_shape`.
    pub fn v2(
        filters: Option<&[Value]>,
        compressor: Option<&Value>,
        fortran: bool,
        dtype: &DataType,
        chunk_shape: &[u64],
    ) -> Result<ChunkCodecs> {
        let filters = filters.unwrap_or_default();
        let object = match filters.first().map(ObjectCodec::from_config).transpose()?.flatten() {
            Some(codec) => Some(codec.suited_to(dtype, fortran)?),
            None if dtype.kind == DataTypeKind::Object => {
                return Err(Error::InvalidMetadata(
                    "an object (|O) array needs an object codec (vlen-utf8, vlen-bytes, vlen-array, json2, msgpack2, categorize, pickle) as its first filter".into(),
                ))
            }
            None if dtype.holds_objects() => {
                return Err(Error::InvalidMetadata(format!(
                    "records with object fields ({}) need the pickle object codec as their first filter",
                    dtype.to_json()
                )))
            }
            None => None,
        };
        // An object codec turns items into plain bytes; later filters and the compressor see those.
        let (rest, stage_dtype) = match object {
            Some(_) => (&filters[1..], DataType::parse_typestr("|u1")?),
            None => (filters, dtype.clone()),
        };
        let mut layout: Vec<usize> = (0..chunk_shape.len()).collect();
        if fortran {
            layout.reverse();
        }
        Ok(ChunkCodecs {
            layout,
            byte_order: None,
            object,
            // numcodecs hands a compressor C-order chunks in their shape (zfpy refuses F order).
            pipeline: CodecPipeline::for_chunks(
                Some(rest),
                compressor,
                &stage_dtype,
                (!fortran).then_some(chunk_shape),
            )?,
            sharding: None,
            hoisted: 0,
            canonical: Vec::new(),
        })
    }

    /// The codecs of a v3 array: `codecs` as stored, for chunks of `chunk_shape` holding
    /// `dtype` (its byte order not yet decided), `object` saying what an object type holds.
    pub fn v3(
        codecs: &[Value],
        dtype: &DataType,
        object: Option<ObjectKind>,
        chunk_shape: &[u64],
    ) -> Result<ChunkCodecs> {
        let layout = (0..chunk_shape.len()).collect();
        Builder::new(dtype, object, chunk_shape, layout).build(codecs)
    }

    /// Checks that `fill` (one element, native bytes) survives the filters written before
    /// `sharding_indexed`, which run on the innermost chunks. libzarr reads a missing inner
    /// chunk as the fill value, zarr-python as the filtered fill value decoded back; where the
    /// two differ the array is refused rather than read differently.
    pub fn check_fill_through_sharding(&self, fill: &[u8]) -> Result<()> {
        let mut innermost = self;
        while let Some(sharding) = &innermost.sharding {
            innermost = &sharding.inner;
        }
        for count in 1..=innermost.hoisted {
            let decoded = innermost.pipeline.prefix_round_trip(count, fill)?;
            if decoded != fill {
                return Err(Error::Unsupported(format!(
                    "filters before sharding_indexed that change the fill value (its bytes {fill:02x?} decode back as {decoded:02x?}): missing inner chunks would read differently in other implementations"
                )));
            }
        }
        Ok(())
    }
}

/// Where a codec sits in a v3 chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    ArrayToArray,
    ArrayToBytes,
    BytesToBytes,
}

/// numcodecs ids of the byte filters zarr-python 3 wraps as bytes→bytes codecs.
const NUMCODECS_BYTE_FILTERS: [&str; 6] = [
    "shuffle",
    "crc32",
    "crc32c",
    "adler32",
    "fletcher32",
    "jenkins_lookup3",
];
/// numcodecs ids of the filters zarr-python 3 wraps as array→array codecs.
const NUMCODECS_ARRAY_FILTERS: [&str; 6] = [
    "delta",
    "fixedscaleoffset",
    "quantize",
    "bitround",
    "astype",
    "packbits",
];

/// Filters that map each element on its own (so they may run on inner chunks instead of
/// shards).
const ELEMENT_WISE_FILTERS: [&str; 6] = [
    "fixedscaleoffset",
    "quantize",
    "bitround",
    "astype",
    "scale_offset",
    "cast_value",
];

/// The v3 codecs by name, besides the `numcodecs.*` ones.
const V3_CODECS: [(&str, Kind); 13 + cfg!(feature = "zfp") as usize] = [
    ("transpose", Kind::ArrayToArray),
    ("bitround", Kind::ArrayToArray),
    ("scale_offset", Kind::ArrayToArray),
    ("cast_value", Kind::ArrayToArray),
    ("bytes", Kind::ArrayToBytes),
    ("packbits", Kind::ArrayToBytes),
    ("vlen-utf8", Kind::ArrayToBytes),
    ("vlen-bytes", Kind::ArrayToBytes),
    ("sharding_indexed", Kind::ArrayToBytes),
    ("gzip", Kind::BytesToBytes),
    ("zstd", Kind::BytesToBytes),
    ("blosc", Kind::BytesToBytes),
    ("crc32c", Kind::BytesToBytes),
    #[cfg(feature = "zfp")]
    ("zfp", Kind::ArrayToBytes),
];

fn kind_of(name: &str) -> Option<Kind> {
    if let Some(&(_, kind)) = V3_CODECS.iter().find(|(known, _)| *known == name) {
        return Some(kind);
    }
    if name == "zfp" {
        // Known without the `zfp` feature too, to be refused naming it.
        return Some(Kind::ArrayToBytes);
    }
    match super::registered::kind_of_name(name) {
        Some(super::registered::RegisteredKind::Bytes) => return Some(Kind::BytesToBytes),
        Some(super::registered::RegisteredKind::Filter) => return Some(Kind::ArrayToArray),
        None => {}
    }
    match name.strip_prefix("numcodecs.")? {
        // zarr-python 3 hands pcodec the chunk's numbers: it serialises the array.
        "pcodec" | "zfpy" => Some(Kind::ArrayToBytes),
        id if NUMCODECS_ARRAY_FILTERS.contains(&id) => Some(Kind::ArrayToArray),
        id if super::COMPRESSOR_IDS.contains(&id) => Some(Kind::BytesToBytes),
        id if NUMCODECS_BYTE_FILTERS.contains(&id) => Some(Kind::BytesToBytes),
        _ => None,
    }
}

/// The names of the v3 codecs a chain may hold, `numcodecs.*` included.
pub fn v3_codec_names() -> Vec<String> {
    let numcodecs = NUMCODECS_ARRAY_FILTERS
        .iter()
        .chain(&super::COMPRESSOR_IDS)
        .chain(&NUMCODECS_BYTE_FILTERS)
        .map(|id| format!("numcodecs.{id}"));
    V3_CODECS
        .iter()
        .map(|(name, _)| name.to_string())
        .chain(numcodecs)
        .collect()
}

/// Builds a v3 chain codec by codec.
struct Builder<'a> {
    dtype: &'a DataType,
    object: Option<ObjectKind>,
    /// The chunk shape in array dimensions.
    chunk_shape: &'a [u64],
    out: ChunkCodecs,
    /// The element type the next array→array filter sees.
    elem: ElemType,
    /// An array→array filter whose result depends on the element order has run.
    order_dependent: bool,
    /// Steps the chain starts with: element-wise filters written before the enclosing
    /// `sharding_indexed`, applied to each inner chunk instead of the whole shard.
    prefix: Vec<Step>,
}

impl<'a> Builder<'a> {
    /// A builder for chunks of `chunk_shape` that the chain sees with its dimensions in
    /// `layout` order (array dimensions, slowest first).
    fn new(
        dtype: &'a DataType,
        object: Option<ObjectKind>,
        chunk_shape: &'a [u64],
        layout: Vec<usize>,
    ) -> Self {
        Builder {
            dtype,
            object,
            chunk_shape,
            out: ChunkCodecs {
                layout,
                ..Default::default()
            },
            elem: ElemType::of_array(&dtype.with_byte_order(ByteOrder::NATIVE)),
            order_dependent: false,
            prefix: Vec::new(),
        }
    }

    fn build(mut self, codecs: &[Value]) -> Result<ChunkCodecs> {
        let mut kind = Kind::ArrayToArray;
        let mut steps = std::mem::take(&mut self.prefix);
        let hoisted = steps.len();
        for (i, codec) in codecs.iter().enumerate() {
            let (name, config) = name_and_configuration(codec, "codec")?;
            let empty = Map::new();
            let config = config.unwrap_or(&empty);
            let at = |e: Error| e.context(format!("codec {name:?} (codecs[{i}])"));
            let this =
                kind_of(name).ok_or_else(|| Error::Unsupported(format!("codec {name:?}")))?;
            match (kind, this) {
                (Kind::BytesToBytes, Kind::ArrayToBytes) => {
                    return Err(at(Error::InvalidMetadata(
                        "a second array→bytes codec (a chain has exactly one)".into(),
                    )))
                }
                (Kind::ArrayToArray, Kind::BytesToBytes) => {
                    return Err(at(Error::InvalidMetadata(
                        "a bytes→bytes codec before the array→bytes codec (put {\"name\": \"bytes\"} before it: [{\"name\": \"bytes\"}, {\"name\": \"zstd\"}])".into(),
                    )))
                }
                (Kind::BytesToBytes, Kind::ArrayToArray) => {
                    return Err(at(Error::InvalidMetadata(
                        "an array→array codec after the array→bytes codec".into(),
                    )))
                }
                _ => {}
            }
            let canonical = match this {
                Kind::ArrayToArray => self.array_to_array(name, config, &mut steps).map_err(at)?,
                Kind::ArrayToBytes => {
                    kind = Kind::BytesToBytes;
                    self.array_to_bytes(name, config, &mut steps).map_err(at)?
                }
                Kind::BytesToBytes => self.bytes_to_bytes(name, config, &mut steps).map_err(at)?,
            };
            self.out.canonical.push(canonical);
        }
        if kind != Kind::BytesToBytes {
            return Err(Error::InvalidMetadata(
                "codecs: the chain has no array→bytes codec (bytes, packbits, vlen-utf8, vlen-bytes or sharding_indexed)".into(),
            ));
        }
        if self.out.sharding.is_none() {
            self.out.hoisted = hoisted;
        }
        self.out.pipeline = CodecPipeline::from_steps(steps);
        Ok(self.out)
    }

    fn array_to_array(
        &mut self,
        name: &str,
        config: &Map<String, Value>,
        steps: &mut Vec<Step>,
    ) -> Result<Value> {
        if let Some(f) = super::registered::by_name(name, &Value::Object(config.clone())) {
            // What it does to the order of elements is the program's: never before sharding.
            self.order_dependent = true;
            let canonical = f.v3_json();
            steps.push(Step::Filter(Box::new(f)));
            return Ok(canonical);
        }
        if name == "transpose" {
            let ndim = self.chunk_shape.len();
            let order: Option<Vec<usize>> = config
                .get("order")
                .and_then(Value::as_array)
                .and_then(|o| o.iter().map(|v| Some(v.as_u64()? as usize)).collect());
            let valid = order.as_ref().filter(|o| {
                let mut sorted = (*o).clone();
                sorted.sort_unstable();
                sorted == (0..ndim).collect::<Vec<_>>()
            });
            let Some(order) = valid else {
                return Err(Error::InvalidMetadata(format!(
                    "\"order\" must be a permutation of 0..{ndim}, got {}",
                    config.get("order").unwrap_or(&Value::Null)
                )));
            };
            if self.order_dependent {
                return Err(Error::Unsupported(
                    "transpose after a filter that depends on the element order".into(),
                ));
            }
            let before = self.out.layout.clone();
            self.out.layout = order.iter().map(|&d| before[d]).collect();
            return Ok(json!({"name": "transpose", "configuration": {"order": order}}));
        }
        if self.object.is_some() {
            return Err(Error::Unsupported(
                "array→array codecs on a variable-length type".into(),
            ));
        }
        if matches!(name, "scale_offset" | "cast_value") {
            let (f, next, canonical) = filters::build_v3(name, config, &self.elem)?;
            steps.push(Step::Filter(f));
            self.elem = next;
            return Ok(canonical);
        }
        let id = name.strip_prefix("numcodecs.").unwrap_or(name);
        let mut numcodecs_config = config.clone();
        numcodecs_config.insert("id".into(), json!(id));
        let (f, next) = filter::build(&Value::Object(numcodecs_config), &self.elem)?;
        self.order_dependent |= matches!(id, "delta" | "packbits");
        let mut canonical = f.config();
        canonical.as_object_mut().map(|o| o.remove("id"));
        steps.push(Step::Filter(f));
        self.elem = next;
        Ok(json!({"name": name, "configuration": canonical}))
    }

    fn array_to_bytes(
        &mut self,
        name: &str,
        config: &Map<String, Value>,
        steps: &mut Vec<Step>,
    ) -> Result<Value> {
        let filtered = !steps.is_empty();
        match (name, self.object) {
            ("vlen-utf8", Some(ObjectKind::Text)) | ("vlen-bytes", Some(ObjectKind::Bytes)) => {
                let id = if name == "vlen-utf8" {
                    "vlen-utf8"
                } else {
                    "vlen-bytes"
                };
                self.out.object = ObjectCodec::from_config(&json!({ "id": id }))?;
                return Ok(json!({"name": name, "configuration": {}}));
            }
            (_, Some(_)) if name != "sharding_indexed" => {
                return Err(Error::InvalidMetadata(format!(
                    "data type {} must be serialised by {}",
                    self.dtype.typestr(),
                    if self.object == Some(ObjectKind::Text) {
                        "vlen-utf8"
                    } else {
                        "vlen-bytes"
                    }
                )))
            }
            ("vlen-utf8" | "vlen-bytes", None) => {
                return Err(Error::InvalidMetadata(format!(
                    "only variable-length types are serialised by {name}, not {}",
                    self.dtype.typestr()
                )))
            }
            _ => {}
        }
        if name == "sharding_indexed" {
            return self.sharding(config, std::mem::take(steps));
        }
        if name == "numcodecs.pcodec" {
            let codec = super::pcodec::Pcodec::from_config(config, Some(&self.elem))?;
            let mut canonical = super::Codec::config(&codec);
            canonical.as_object_mut().map(|o| o.remove("id"));
            self.out.byte_order = Some(ByteOrder::NATIVE);
            steps.push(Step::Codec(Box::new(codec)));
            return Ok(json!({"name": name, "configuration": canonical}));
        }
        if name == "numcodecs.zfpy" || name == "zfp" {
            // zfp compresses the chunk as the codec sees it: its dimensions in layout order.
            let seen: Vec<u64> = self
                .out
                .layout
                .iter()
                .map(|&d| self.chunk_shape[d])
                .collect();
            let codec = match name {
                "zfp" => super::zfp::zfp(config, &self.elem, &seen)?,
                _ => super::zfp::zfpy(config, Some(&self.elem), Some(&seen))?,
            };
            let mut canonical = codec.config();
            canonical.as_object_mut().map(|o| o.remove("id"));
            self.out.byte_order = Some(ByteOrder::NATIVE);
            steps.push(Step::Codec(codec));
            return Ok(json!({"name": name, "configuration": canonical}));
        }
        if let Some(step) = match self.elem {
            ElemType::Small(t) => SubByteValues::for_type(t),
            _ => None,
        } {
            steps.push(Step::Filter(Box::new(step)));
        }
        if name == "packbits" {
            if filtered && ByteOrder::NATIVE != ByteOrder::Little && self.elem.size() > 1 {
                return Err(Error::Unsupported(
                    "array→array filters before packbits on a big-endian machine".into(),
                ));
            }
            let count = self
                .chunk_shape
                .iter()
                .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
                .ok_or_else(|| Error::TooLarge("a chunk of more than 2⁶⁴ elements".into()))?;
            let (codec, canonical) = BitPacking::from_config(config, &self.elem, count)?;
            self.out.byte_order = Some(ByteOrder::Little);
            steps.push(Step::Filter(Box::new(codec)));
            return Ok(canonical);
        }
        // `bytes`
        let endian = match config.get("endian") {
            None => None,
            Some(v) if v == "little" => Some(ByteOrder::Little),
            Some(v) if v == "big" => Some(ByteOrder::Big),
            Some(v) => {
                return Err(Error::InvalidMetadata(format!(
                    "\"endian\" must be \"little\" or \"big\", got {v}"
                )))
            }
        };
        let order = endian.unwrap_or(ByteOrder::Little);
        if filtered && order != ByteOrder::NATIVE {
            // Filters produce native elements: swapping them is the first byte step.
            if let Some(swap) = SwapBytes::for_elements(&self.elem)? {
                steps.push(Step::Filter(Box::new(swap)));
            }
        }
        self.out.byte_order = Some(if filtered { ByteOrder::NATIVE } else { order });
        Ok(if self.dtype.has_byte_order() {
            let name = if order == ByteOrder::Big {
                "big"
            } else {
                "little"
            };
            json!({"name": "bytes", "configuration": {"endian": name}})
        } else {
            json!({"name": "bytes"})
        })
    }

    /// The `sharding_indexed` codec; `filters` are the array→array filters before it, which
    /// must be element-wise: applying them to each inner chunk is applying them to the shard.
    fn sharding(&mut self, config: &Map<String, Value>, filters: Vec<Step>) -> Result<Value> {
        if let Some(id) = filters.iter().find_map(|s| match s {
            Step::Filter(f) if !ELEMENT_WISE_FILTERS.contains(&f.id()) => Some(f.id()),
            _ => None,
        }) {
            return Err(Error::Unsupported(format!(
                "the {id} filter before sharding_indexed (its result depends on the element order; element-wise filters such as fixedscaleoffset, and transpose, are supported)"
            )));
        }
        let ndim = self.chunk_shape.len();
        let view = self.out.layout.clone();
        let inner_seen: Vec<u64> = config
            .get("chunk_shape")
            .and_then(Value::as_array)
            .and_then(|s| s.iter().map(|v| v.as_u64().filter(|&n| n > 0)).collect())
            .filter(|s: &Vec<u64>| s.len() == ndim)
            .ok_or_else(|| {
                Error::InvalidMetadata(format!(
                    "\"chunk_shape\" must list {ndim} positive integers, got {}",
                    config.get("chunk_shape").unwrap_or(&Value::Null)
                ))
            })?;
        let shard_seen: Vec<u64> = view.iter().map(|&d| self.chunk_shape[d]).collect();
        if let Some(d) = (0..ndim).find(|&d| !shard_seen[d].is_multiple_of(inner_seen[d])) {
            return Err(Error::InvalidMetadata(format!(
                "the inner chunk shape {inner_seen:?} does not divide the shard shape {shard_seen:?} (dimension {d})"
            )));
        }
        let mut inner = vec![0; ndim];
        for (&d, &n) in view.iter().zip(&inner_seen) {
            inner[d] = n;
        }
        let list = |key: &str, default: Value| -> Result<Vec<Value>> {
            match config.get(key).cloned().unwrap_or(default) {
                Value::Array(l) if !l.is_empty() => Ok(l),
                other => Err(Error::InvalidMetadata(format!(
                    "\"{key}\" must be a non-empty list of codecs, got {other}"
                ))),
            }
        };
        let inner_codecs = list("codecs", json!([{"name": "bytes"}]))?;
        let mut builder = Builder::new(self.dtype, self.object, &inner, view.clone());
        (builder.elem, builder.prefix) = (self.elem.clone(), filters);
        let chain = builder
            .build(&inner_codecs)
            .map_err(|e| e.context("inner codecs"))?;
        let index_list = list(
            "index_codecs",
            json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]),
        )?;
        let index = index_codecs(&index_list)?;
        let index_at_start = match config.get("index_location") {
            None => false,
            Some(v) if v == "end" => false,
            Some(v) if v == "start" => true,
            Some(v) => {
                return Err(Error::InvalidMetadata(format!(
                    "\"index_location\" must be \"start\" or \"end\", got {v}"
                )))
            }
        };
        self.out.byte_order = chain.byte_order;
        let canonical = json!({"name": "sharding_indexed", "configuration": {
            "chunk_shape": inner_seen,
            "codecs": chain.canonical,
            "index_codecs": index_canonical(&index),
            "index_location": if index_at_start { "start" } else { "end" },
        }});
        self.out.sharding = Some(Box::new(Sharding {
            chunk_shape: inner,
            order: view,
            inner: chain,
            index,
            index_at_start,
        }));
        Ok(canonical)
    }

    fn bytes_to_bytes(
        &mut self,
        name: &str,
        config: &Map<String, Value>,
        steps: &mut Vec<Step>,
    ) -> Result<Value> {
        if let Some(c) = super::registered::by_name(name, &Value::Object(config.clone())) {
            let canonical = c.v3_json();
            steps.push(Step::Codec(Box::new(c)));
            return Ok(canonical);
        }
        let (step, canonical) = match name {
            "gzip" => {
                // zarr-python 3's default level is 5 (numcodecs' is 1).
                let mut config = config.clone();
                config.entry("level").or_insert(json!(5));
                let c = gzip::Gzip::from_config(&config)?;
                let level = super::Codec::config(&c)["level"].clone();
                (
                    Step::Codec(Box::new(c)),
                    json!({"name": "gzip", "configuration": {"level": level}}),
                )
            }
            "zstd" => {
                let c = zstd::Zstd::from_config(config)?;
                let full = super::Codec::config(&c);
                let cfg = json!({"level": full["level"], "checksum": full["checksum"]});
                (
                    Step::Codec(Box::new(c)),
                    json!({"name": "zstd", "configuration": cfg}),
                )
            }
            "blosc" => {
                let (c, cfg) = blosc_v3(config, self.dtype)?;
                (
                    Step::Codec(Box::new(c)),
                    json!({"name": "blosc", "configuration": cfg}),
                )
            }
            "crc32c" => (
                Step::Filter(Box::new(filters::checksum32::Checksum32::from_config(
                    &Map::new(),
                    "crc32c",
                )?)),
                json!({"name": "crc32c"}),
            ),
            _ => {
                let id = name.strip_prefix("numcodecs.").expect("a numcodecs name");
                let mut numcodecs_config = config.clone();
                numcodecs_config.insert("id".into(), json!(id));
                let config = Value::Object(numcodecs_config);
                // zarr-python hands these codecs bytes: blosc's default typesize is 1.
                let step = if super::COMPRESSOR_IDS.contains(&id) {
                    Step::Codec(super::compressor_from_config(
                        &config,
                        CodecContext::items(1),
                    )?)
                } else {
                    let bytes = ElemType::Num(filters::numeric::NumType::U1);
                    Step::Filter(filter::build(&config, &bytes)?.0)
                };
                let mut cfg = match &step {
                    Step::Codec(c) => c.config(),
                    Step::Filter(f) => f.config(),
                };
                cfg.as_object_mut().map(|o| o.remove("id"));
                (step, json!({"name": name, "configuration": cfg}))
            }
        };
        steps.push(step);
        Ok(canonical)
    }
}

/// The v3 `blosc` codec: string shuffle names and an explicit `typesize` (the item size when
/// omitted); its completed configuration as zarr-python 3 writes it.
fn blosc_v3(config: &Map<String, Value>, dtype: &DataType) -> Result<(blosc::Blosc, Value)> {
    let item = dtype.size.max(1);
    let shuffle_name = match config.get("shuffle") {
        None => {
            if item == 1 {
                "bitshuffle"
            } else {
                "shuffle"
            }
        }
        Some(Value::String(s)) if matches!(s.as_str(), "noshuffle" | "shuffle" | "bitshuffle") => {
            s.as_str()
        }
        Some(v) => {
            return Err(Error::InvalidMetadata(format!(
                "blosc: \"shuffle\" must be \"noshuffle\", \"shuffle\" or \"bitshuffle\", got {v}"
            )))
        }
    };
    let shuffle = match shuffle_name {
        "noshuffle" => 0,
        "shuffle" => 1,
        _ => 2,
    };
    let typesize = match config.get("typesize") {
        None => item as u64,
        Some(v) => v.as_u64().filter(|&t| t >= 1).ok_or_else(|| {
            Error::InvalidMetadata(format!(
                "blosc: \"typesize\" must be a positive integer, got {v}"
            ))
        })?,
    };
    let mut numcodecs = config.clone();
    numcodecs.insert("shuffle".into(), json!(shuffle));
    numcodecs.insert("typesize".into(), json!(typesize));
    numcodecs.entry("cname").or_insert(json!("zstd"));
    let codec = blosc::Blosc::from_config(&numcodecs, CodecContext::items(item))?;
    let full = super::Codec::config(&codec);
    let canonical = json!({
        "typesize": typesize,
        "cname": full["cname"],
        "clevel": full["clevel"],
        "shuffle": shuffle_name,
        "blocksize": full["blocksize"],
    });
    Ok((codec, canonical))
}

/// Checksum codecs a shard index may end with, by v3 name, with their numcodecs id.
const INDEX_CHECKSUMS: [(&str, &str); 3] = [
    ("crc32c", "crc32c"),
    ("numcodecs.crc32", "crc32"),
    ("numcodecs.adler32", "adler32"),
];

/// The shard index codecs libzarr reads: `bytes` (any endian), then optionally one checksum
/// codec of [`INDEX_CHECKSUMS`].
fn index_codecs(list: &[Value]) -> Result<ShardIndexCodecs> {
    let names: Vec<(&str, Option<&Map<String, Value>>)> = list
        .iter()
        .map(|c| name_and_configuration(c, "index codec"))
        .collect::<Result<_>>()?;
    let unsupported = || {
        Error::Unsupported(format!(
            "index_codecs {:?} (libzarr reads bytes, then optionally one of crc32c, numcodecs.crc32 or numcodecs.adler32)",
            names.iter().map(|(n, _)| n).collect::<Vec<_>>()
        ))
    };
    let checksum = match names.as_slice() {
        [("bytes", _)] => None,
        [("bytes", _), (name, config)] => {
            let &(_, id) = INDEX_CHECKSUMS
                .iter()
                .find(|(known, _)| known == name)
                .ok_or_else(unsupported)?;
            let config = config.cloned().unwrap_or_default();
            let filter = filters::checksum32::Checksum32::from_config(&config, id)
                .map_err(|e| e.context("index_codecs"))?;
            let canonical = match config.is_empty() {
                true if *name == "crc32c" => json!({"name": name}),
                _ => json!({"name": name, "configuration": config}),
            };
            Some((filter, canonical))
        }
        _ => return Err(unsupported()),
    };
    let big_endian = match names[0].1.and_then(|c| c.get("endian")) {
        None => false,
        Some(v) if v == "little" => false,
        Some(v) if v == "big" => true,
        Some(v) => {
            return Err(Error::InvalidMetadata(format!(
                "index_codecs: \"endian\" must be \"little\" or \"big\", got {v}"
            )))
        }
    };
    Ok(ShardIndexCodecs {
        big_endian,
        checksum,
    })
}

fn index_canonical(index: &ShardIndexCodecs) -> Value {
    let endian = if index.big_endian { "big" } else { "little" };
    let mut list = vec![json!({"name": "bytes", "configuration": {"endian": endian}})];
    if let Some((_, canonical)) = &index.checksum {
        list.push(canonical.clone());
    }
    Value::Array(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::v3::parse_data_type;

    fn build(codecs: Value, dtype: &str, shape: &[u64]) -> Result<ChunkCodecs> {
        let t = parse_data_type(&json!(dtype)).unwrap();
        ChunkCodecs::v3(codecs.as_array().unwrap(), &t.dtype, t.object, shape)
    }

    /// The common mistake, a compressor without the `bytes` codec before it, says the fix.
    #[test]
    fn a_compressor_alone_is_refused_naming_the_fix() {
        let err = build(json!([{"name": "zstd"}]), "int16", &[4]).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, Error::InvalidMetadata(_)), "{message}");
        assert!(
            message.contains("zstd") && message.contains(r#"{"name": "bytes"}"#),
            "{message}"
        );
    }

    #[test]
    fn builds_zarr_python_chains() {
        let c = build(
            json!([{"name": "transpose", "configuration": {"order": [1, 2, 0]}},
                   {"name": "bytes", "configuration": {"endian": "big"}},
                   {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3}},
                   {"name": "crc32c"}]),
            "int16",
            &[2, 3, 4],
        )
        .unwrap();
        assert_eq!(c.layout, vec![1, 2, 0]);
        assert_eq!(c.byte_order, Some(ByteOrder::Big));
        assert_eq!(
            c.canonical[2],
            json!({"name": "blosc", "configuration": {"typesize": 2, "cname": "lz4", "clevel": 3, "shuffle": "shuffle", "blocksize": 0}})
        );
        let mut out = Vec::new();
        let chunk: Vec<u8> = (0..48).collect();
        c.pipeline.encode_into(&chunk, &mut out).unwrap();
        let mut back = vec![0; 48];
        c.pipeline.decode_into(&out, &mut back).unwrap();
        assert_eq!(back, chunk);
        let s = build(
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2],
                    "codecs": [{"name": "bytes"}, {"name": "gzip"}], "index_location": "start"}}]),
            "uint8",
            &[4, 6],
        )
        .unwrap();
        let sharding = s.sharding.as_ref().unwrap();
        assert!(
            sharding.index_at_start
                && sharding.index.checksum.is_some()
                && !sharding.index.big_endian
        );
        assert_eq!(
            (&sharding.chunk_shape, &sharding.order),
            (&vec![2, 2], &vec![0, 1])
        );
        // A transpose before sharding: the inner chunk shape is given in the transposed
        // dimensions, and the inner chunks' layout composes both transposes.
        let t = build(
            json!([{"name": "transpose", "configuration": {"order": [1, 0]}},
                   {"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 2],
                    "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
                               {"name": "bytes"}]}}]),
            "uint8",
            &[4, 6],
        )
        .unwrap();
        let sharding = t.sharding.as_ref().unwrap();
        assert_eq!(
            (&sharding.chunk_shape, &sharding.order),
            (&vec![2, 3], &vec![1, 0])
        );
        assert_eq!(sharding.inner.layout, vec![0, 1]);
        assert_eq!(
            t.canonical[1]["configuration"]["chunk_shape"],
            json!([3, 2])
        );
        assert_eq!(
            s.canonical[0]["configuration"]["codecs"][1],
            json!({"name": "gzip", "configuration": {"level": 5}})
        );
        let v = build(json!([{"name": "vlen-utf8"}, {"name": "numcodecs.zlib", "configuration": {"level": 1}}]), "string", &[3]).unwrap();
        assert!(v.object.is_some());
    }

    #[test]
    fn refuses_invalid_chains_naming_the_codec() {
        for (codecs, dtype, unsupported, needle) in [
            (
                json!([{"name": "bytes"}, {"name": "bytes"}]),
                "int8",
                false,
                "second array→bytes",
            ),
            (
                json!([{"name": "zstd"}, {"name": "bytes"}]),
                "int8",
                false,
                "before the array→bytes",
            ),
            (
                json!([{"name": "bytes"}, {"name": "transpose", "configuration": {"order": [0]}}]),
                "int8",
                false,
                "after the array→bytes",
            ),
            (
                json!([{"name": "gzip"}]),
                "int8",
                false,
                "before the array→bytes",
            ),
            (
                json!([{"name": "transpose", "configuration": {"order": [0]}}]),
                "int8",
                false,
                "no array→bytes",
            ),
            (
                json!([{"name": "bytes"}, {"name": "lzw"}]),
                "int8",
                true,
                "lzw",
            ),
            (
                json!([{"name": "transpose", "configuration": {"order": [1]}}, {"name": "bytes"}]),
                "int8",
                false,
                "permutation",
            ),
            (
                json!([{"name": "bytes", "configuration": {"endian": "middle"}}]),
                "int16",
                false,
                "endian",
            ),
            (json!([{"name": "bytes"}]), "string", false, "vlen-utf8"),
            (
                json!([{"name": "vlen-bytes"}]),
                "string",
                false,
                "vlen-utf8",
            ),
            (
                json!([{"name": "vlen-utf8"}]),
                "int8",
                false,
                "variable-length",
            ),
            (
                json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [3]}}]),
                "int8",
                false,
                "divide",
            ),
            (
                json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2], "index_codecs": [{"name": "bytes"}, {"name": "gzip"}]}}]),
                "int8",
                true,
                "index_codecs",
            ),
            (
                json!([{"name": "bytes"}, {"name": "blosc", "configuration": {"shuffle": 1}}]),
                "int8",
                false,
                "shuffle",
            ),
        ] {
            let err = build(codecs.clone(), dtype, &[4]).unwrap_err();
            assert_eq!(
                matches!(err, Error::Unsupported(_)),
                unsupported,
                "{codecs}: {err}"
            );
            assert!(err.to_string().contains(needle), "{codecs}: {err}");
        }
    }
}
