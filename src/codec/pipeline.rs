//! The byte steps of one array's chunks: the v2 filters then compressor, or a v3 chain's
//! element-wise array→array codecs and bytes→bytes codecs, in the order they encode.
//!
//! A v2 filter list may name compressors too (the spec's filters are any codec
//! configurations, e.g. `[{"id": "zlib", "level": 1}]`): such a filter is a compressor step
//! in the middle of the pipeline, seen by the steps after it as bytes, as numcodecs hands a
//! compressor's output to the next codec.
//!
//! Writing runs `steps[0].encode`, `steps[1].encode`, ... on a chunk's bytes (in the array's
//! type and order, exactly as the engine holds them); reading runs the same steps backwards.
//! A lone compressor decodes straight into the caller's buffer; otherwise every intermediate
//! result is bounded by the size it must have for a chunk of the expected size, so a corrupt
//! or hostile chunk cannot make the library allocate much more than one chunk.

use super::filter::{self, Filter};
use super::filters::numeric::{ElemType, NumType};
use super::{compressor_from_config, Codec, CodecContext};
use crate::dtype::DataType;
use crate::error::{Error, Result};
use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;

/// One step of a pipeline.
#[derive(Debug)]
pub enum Step {
    /// A filter (numcodecs filters, checksums, v3 element-wise codecs).
    Filter(Box<dyn Filter>),
    /// A compressor.
    Codec(Box<dyn Codec>),
}

impl Step {
    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        match self {
            Step::Filter(f) => f.encode(input),
            Step::Codec(c) => c.encode(input),
        }
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        match self {
            Step::Filter(f) => f.decode(input, max_len),
            Step::Codec(c) => c.decode_to_vec(input, max_len),
        }
    }
}

/// An array's byte steps.
#[derive(Debug, Default)]
pub struct CodecPipeline {
    steps: Vec<Step>,
    /// The last step is the v2 `compressor` (the others are `filters`).
    compressor: bool,
}

impl CodecPipeline {
    /// Builds the pipeline of a v2 array of type `dtype` from its `.zarray` `filters` and
    /// `compressor` values (`None` for `null`). Each filter gets the type numcodecs would
    /// hand it (the array's, then what the previous filter encodes to), and the compressor
    /// the item size of the last one (blosc's default `typesize`, as numcodecs takes it from
    /// the array it is given).
    pub fn new(
        filters: Option<&[Value]>,
        compressor: Option<&Value>,
        dtype: &DataType,
    ) -> Result<Self> {
        Self::for_chunks(filters, compressor, dtype, None)
    }

    /// [`CodecPipeline::new`] for C-order chunks of `chunk_shape` (when known): a compressor
    /// that no filter precedes is handed the chunk in that shape, as numcodecs is (zfpy).
    pub fn for_chunks(
        filters: Option<&[Value]>,
        compressor: Option<&Value>,
        dtype: &DataType,
        chunk_shape: Option<&[u64]>,
    ) -> Result<Self> {
        let mut elem = ElemType::of_array(dtype);
        let mut steps = Vec::new();
        for (i, config) in filters.unwrap_or_default().iter().enumerate() {
            let context = |e: Error| e.context(format!("filters[{i}]"));
            if filter::is_compressor(config) {
                let ctx = CodecContext {
                    item_size: elem.size(),
                    element: Some(elem.clone()),
                    chunk_shape: None,
                };
                steps.push(Step::Codec(
                    compressor_from_config(config, ctx).map_err(context)?,
                ));
                elem = ElemType::Num(NumType::U1);
                continue;
            }
            let (f, next) = filter::build(config, &elem).map_err(context)?;
            steps.push(Step::Filter(f));
            elem = next;
        }
        let ctx = CodecContext {
            item_size: elem.size(),
            element: Some(elem.clone()),
            chunk_shape: chunk_shape
                .filter(|_| steps.is_empty())
                .map(<[u64]>::to_vec),
        };
        let compressor = compressor.filter(|c| !c.is_null());
        if let Some(c) = compressor {
            steps.push(Step::Codec(compressor_from_config(c, ctx)?));
        }
        Ok(CodecPipeline {
            steps,
            compressor: compressor.is_some(),
        })
    }

    /// A pipeline of the given steps, in encoding order (a last compressor step is what
    /// [`CodecPipeline::compressor_config`] reports).
    pub fn from_steps(steps: Vec<Step>) -> Self {
        let compressor = matches!(steps.last(), Some(Step::Codec(_)));
        CodecPipeline { steps, compressor }
    }

    /// `value` (a few whole elements) encoded by the first `count` steps and decoded back.
    pub fn prefix_round_trip(&self, count: usize, value: &[u8]) -> Result<Vec<u8>> {
        let steps = &self.steps[..count];
        let mut encoded = value.to_vec();
        for step in steps {
            encoded = step.encode(&encoded)?;
        }
        // No stage of a few elements exceeds 16 bytes per input byte.
        let cap = value.len().max(16) * 16;
        let mut decoded = encoded;
        for step in steps.iter().rev() {
            decoded = step.decode(&decoded, cap)?;
        }
        Ok(decoded)
    }

    /// No steps: stored chunks are the raw bytes.
    pub fn is_identity(&self) -> bool {
        self.steps.is_empty()
    }

    /// Whether there is a step other than one final compressor.
    pub fn has_filters(&self) -> bool {
        !self.filter_steps().is_empty()
    }

    /// The steps before the compressor: the v2 `filters`.
    fn filter_steps(&self) -> &[Step] {
        &self.steps[..self.steps.len() - usize::from(self.compressor)]
    }

    /// The compressor's full configuration, as `.zarray` holds it (`None`: no compressor).
    pub fn compressor_config(&self) -> Option<Value> {
        match self.steps.last() {
            Some(Step::Codec(c)) if self.compressor => Some(c.config()),
            _ => None,
        }
    }

    /// The filters' configurations, as `.zarray` holds them (`None`: no filters, written
    /// `null` as zarr-python does for an empty list); a compressor used as a filter gives its
    /// full configuration, as in the `compressor` key.
    pub fn filter_configs(&self) -> Option<Vec<Value>> {
        let configs: Vec<Value> = self
            .filter_steps()
            .iter()
            .map(|s| match s {
                Step::Filter(f) => f.config(),
                Step::Codec(c) => c.config(),
            })
            .collect();
        (!configs.is_empty()).then_some(configs)
    }

    /// Encodes one chunk's bytes into `out`, replacing its contents.
    pub fn encode_into(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let Some((last, rest)) = self.steps.split_last() else {
            out.clear();
            out.try_reserve_exact(chunk.len()).map_err(|_| {
                Error::TooLarge(format!("cannot allocate {} bytes for a chunk", chunk.len()))
            })?;
            out.extend_from_slice(chunk);
            return Ok(());
        };
        let mut data = Cow::Borrowed(chunk);
        for step in rest {
            data = Cow::Owned(step.encode(&data)?);
        }
        match last {
            Step::Codec(c) => c.encode_into(&data, out),
            Step::Filter(f) => {
                *out = f.encode(&data)?;
                Ok(())
            }
        }
    }

    /// Whether encoding needs the extent of a chunk's part inside the array: a lone codec
    /// that stores only that part (N5's framing, [`Codec::stores_extent`]).
    pub fn stores_extent(&self) -> bool {
        matches!(self.steps.as_slice(), [Step::Codec(c)] if c.stores_extent())
    }

    /// Encodes one chunk of which only the first `extent[d]` elements of each dimension lie
    /// inside the array ([`Codec::encode_block_into`]) into `out`, replacing its contents.
    pub fn encode_block_into(&self, chunk: &[u8], extent: &[u64], out: &mut Vec<u8>) -> Result<()> {
        match self.steps.as_slice() {
            [Step::Codec(c)] => c.encode_block_into(chunk, extent, out),
            _ => self.encode_into(chunk, out),
        }
    }

    /// Decodes stored bytes whose decoded size is not known in advance (an object array's
    /// chunk, before its object codec), never producing more than `max_len` bytes at any step.
    pub fn decode_to_vec(&self, raw: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let mut data = Cow::Borrowed(raw);
        for step in self.steps.iter().rev() {
            data = Cow::Owned(step.decode(&data, max_len)?);
        }
        Ok(data.into_owned())
    }

    /// Whether a part of a chunk decodes without the rest: the pipeline is one codec that
    /// can ([`Codec::decodes_parts`]: blosc alone).
    pub fn decodes_parts(&self) -> bool {
        matches!(self.steps.as_slice(), [Step::Codec(c)] if c.decodes_parts())
    }

    /// How many first bytes of a stored chunk of `decoded_len` bytes tell where its parts lie
    /// ([`Codec::stored_head`]); 0 when its parts cannot be read apart.
    pub fn stored_head(&self, decoded_len: usize) -> u64 {
        match self.steps.as_slice() {
            [Step::Codec(c)] => c.stored_head(decoded_len),
            _ => 0,
        }
    }

    /// The ranges of a stored chunk that decoding `parts` of it reads, from its first bytes
    /// ([`Codec::stored_parts`]); `None`: all of it.
    pub fn stored_parts(
        &self,
        head: &[u8],
        decoded_len: usize,
        parts: &[Range<usize>],
    ) -> Option<Vec<(u64, u64)>> {
        match self.steps.as_slice() {
            [Step::Codec(c)] => c.stored_parts(head, decoded_len, parts),
            _ => None,
        }
    }

    /// Decodes into `out` (one chunk's size) at least the bytes `parts` names (in order), as
    /// [`Codec::decode_parts_into`]; a pipeline that cannot decodes the whole chunk.
    pub fn decode_parts_into(
        &self,
        raw: &[u8],
        out: &mut [u8],
        parts: &[Range<usize>],
    ) -> Result<()> {
        match self.steps.as_slice() {
            [Step::Codec(c)] => c.decode_parts_into(raw, out, parts),
            _ => self.decode_into(raw, out),
        }
    }

    /// Decodes a stored chunk into `out`, which it must fill exactly.
    pub fn decode_into(&self, raw: &[u8], out: &mut [u8]) -> Result<()> {
        let Some((first, rest)) = self.steps.split_first() else {
            if raw.len() != out.len() {
                return Err(Error::CorruptChunk(format!(
                    "chunk holds {} bytes, expected {}",
                    raw.len(),
                    out.len()
                )));
            }
            out.copy_from_slice(raw);
            return Ok(());
        };
        let bounds = self.stage_bounds(out.len());
        let mut data: Cow<[u8]> = Cow::Borrowed(raw);
        for (i, step) in rest.iter().enumerate().rev() {
            data = Cow::Owned(step.decode(&data, bounds[i + 1])?);
        }
        match first {
            Step::Codec(c) => c.decode_into(&data, out),
            Step::Filter(f) => {
                let decoded = f.decode(&data, out.len())?;
                if decoded.len() != out.len() {
                    return Err(Error::CorruptChunk(format!(
                        "filters decode the chunk to {} bytes, expected {}",
                        decoded.len(),
                        out.len()
                    )));
                }
                out.copy_from_slice(&decoded);
                Ok(())
            }
        }
    }

    /// The most bytes each stage may hold when decoding a chunk of `len` bytes: entry `i` is
    /// the input of `steps[i]` on write (so entry 0 is `len`). Where a step cannot tell its
    /// encoded length from its input's (compressors), a generous cap stands in.
    fn stage_bounds(&self, len: usize) -> Vec<usize> {
        let cap = len.saturating_mul(8).saturating_add(4096);
        let mut bounds = Vec::with_capacity(self.steps.len());
        let mut cur = Some(len);
        bounds.push(len);
        for step in &self.steps {
            cur = match step {
                Step::Filter(f) => cur.and_then(|n| f.encoded_len(n)),
                Step::Codec(_) => None,
            };
            bounds.push(cur.unwrap_or(cap));
        }
        bounds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::testutil::unhex;
    use serde_json::json;

    fn pipeline(filters: Value, compressor: Value, dtype: &str) -> Result<CodecPipeline> {
        let dtype = DataType::parse_typestr(dtype).unwrap();
        CodecPipeline::new(
            filters.as_array().map(Vec::as_slice),
            Some(&compressor),
            &dtype,
        )
    }

    fn decode(p: &CodecPipeline, raw: &[u8], len: usize) -> Result<Vec<u8>> {
        let mut out = vec![0xa5; len];
        p.decode_into(raw, &mut out).map(|()| out)
    }

    fn encode(p: &CodecPipeline, chunk: &[u8]) -> Vec<u8> {
        let mut out = vec![1, 2, 3];
        p.encode_into(chunk, &mut out).unwrap();
        out
    }

    fn le<T: Copy, const N: usize>(
        values: impl IntoIterator<Item = T>,
        bytes: fn(T) -> [u8; N],
    ) -> Vec<u8> {
        values.into_iter().flat_map(bytes).collect()
    }

    fn linspace(a: f64, b: f64, n: usize) -> Vec<u8> {
        let step = (b - a) / (n - 1) as f64;
        let v: Vec<f64> = (0..n)
            .map(|i| if i == n - 1 { b } else { a + i as f64 * step })
            .collect();
        le(v, f64::to_le_bytes)
    }

    /// Fixed-width little-endian text of `chars` characters per value.
    fn text(values: &[&str], chars: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for v in values {
            let mut units: Vec<u32> = v.chars().map(u32::from).collect();
            units.resize(chars, 0);
            out.extend(le(units, u32::to_le_bytes));
        }
        out
    }

    /// Chunks encoded by numcodecs, as zarr-python chains them: each filter's `encode`, then
    /// the compressor's (0.15.2 and 0.16.6 give the same bytes). `exact`: libzarr encodes
    /// to the same bytes (zlib and gzip streams differ between implementations).
    /// (filters, compressor, dtype, chunk, stored chunk as hex, whether libzarr's bytes match)
    type Fixture = (Value, Value, &'static str, Vec<u8>, &'static str, bool);

    fn fixtures() -> Vec<Fixture> {
        let i4 = le((0..64).map(|i| i * 3 - 50), i32::to_le_bytes);
        let colours = ["red", "green", "blue", "green", "other", "red"].repeat(5);
        let bools: Vec<u8> = [1, 0, 1, 1, 0].repeat(7);
        vec![
            (
                json!([{"id": "delta", "dtype": "<i4", "astype": "<i2"}, {"id": "shuffle", "elementsize": 2}]),
                json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
                "<i4",
                i4.clone(),
                // Blosc's typesize is 1: numcodecs' Shuffle returns bytes.
                "0201210180000000800000002a00000014000000120000002fce0301002b2fff00010026500000000000",
                true,
            ),
            (
                json!([{"id": "delta", "dtype": "<f8", "astype": "<f4"}]),
                json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 1, "blocksize": 0}),
                "<f8",
                linspace(-1.0, 1.0, 32),
                // typesize 4, from Delta's astype.
                "02019104800000008000000030000000140000001800000028b52ffd20807d000040000800218084bf3d045402001b01",
                false,
            ),
            (
                json!([{"id": "fixedscaleoffset", "scale": 10, "offset": 1000, "dtype": "<f8", "astype": "|u1"}, {"id": "crc32"}]),
                json!({"id": "zstd", "level": 1, "checksum": false}),
                "<f8",
                linspace(1000.0, 1001.0, 10),
                "28b52ffd200e71000035ed3e310001020304060708090a",
                true,
            ),
            (
                json!([{"id": "categorize", "labels": ["red", "green", "blue"], "dtype": "<U5", "astype": "|u1"}, {"id": "delta", "dtype": "|u1", "astype": "|u1"}]),
                json!({"id": "zlib", "level": 1}),
                "<U5",
                text(&colours, 5),
                "7801636464fcff8f9101070900914b0a02",
                false,
            ),
            (
                json!([{"id": "crc32", "location": "end"}, {"id": "delta", "dtype": "|u1", "astype": "|u1"}]),
                json!({"id": "bz2", "level": 1}),
                "<i4",
                i4,
                "425a68313141592653596c01df720000717ffff4924924924924926924924924924b6db6da49a4924924\
                 92492d924924924924a0008a8c9faa8c9a64c8d323460860083418009a69a313134188309b7e9aaa1553\
                 ff554c8c99060864d3434309a64d3101a0ff54fd54ffd544d34c9898011933510924924924924a800000\
                 0000000659659d7fdab4e8cffbf96edaaaaaaaaaaaaaad26318c63102040810204081020408102044b48\
                 51869691a30c30102040810204080005555555555555401a37b434d13ac410410410410410410410d0ff\
                 1772453850906c01df72",
                true,
            ),
            (
                json!([{"id": "quantize", "digits": 3, "dtype": "<f8", "astype": "<f4"}, {"id": "bitround", "keepbits": 10}]),
                json!({"id": "lzma", "format": 1, "check": -1, "preset": null, "filters": null}),
                "<f8",
                linspace(-1.0, 1.0, 32),
                "fd377a585a000004e6d6b4460200210116000000742fe5a3e0007f004d5d000061fff6fa4af4e02b947a\
                 abfb46e04f20d3f8db8810ef6978bfb5fdbc4008b1f862108bbbe6579bb6baf27ba567bd3fc96852ef84\
                 098907290199179ddf912de5b63d3990ce46b223589493fb00000000f290bac6c6ba155f000169800100\
                 0000b85df4e5b1c467fb020000000004595a",
                true,
            ),
            (
                json!([{"id": "astype", "encode_dtype": "<f2", "decode_dtype": "<f8"}, {"id": "fletcher32"}]),
                Value::Null,
                "<f8",
                linspace(-1.0, 1.0, 32)[..64].to_vec(),
                "00bc7cbbf8ba74baefb96bb9e7b863b8d19144c0",
                true,
            ),
            (
                json!([{"id": "packbits"}, {"id": "jenkins_lookup3", "initval": 0, "prefix": null}]),
                json!({"id": "blosc", "cname": "blosclz", "clevel": 9, "shuffle": 0, "blocksize": 0}),
                "|b1",
                bools,
                "020112010a0000000a0000001a00000005b5ad6b5ac0dcde9625",
                true,
            ),
        ]
    }

    #[test]
    fn encodes_and_decodes_like_numcodecs() {
        for (filters, compressor, dtype, chunk, hex, exact) in fixtures() {
            let p = pipeline(filters.clone(), compressor.clone(), dtype).unwrap();
            let stored: String = hex.split_whitespace().collect();
            let stored = unhex(&stored);
            let enc = encode(&p, &chunk);
            if exact {
                assert_eq!(enc, stored, "{filters} {compressor}");
            }
            // numcodecs' chunk decodes to what numcodecs decodes it to; lossy filters
            // (delta to float32, fixedscaleoffset, quantize, astype) decode to what they kept,
            // which the encoded form of the decoded chunk reproduces.
            let dec = decode(&p, &stored, chunk.len()).unwrap();
            let again = decode(&p, &enc, chunk.len()).unwrap();
            assert_eq!(dec, again, "{filters}");
            assert_eq!(
                decode(&p, &encode(&p, &dec), chunk.len()).unwrap(),
                dec,
                "{filters}"
            );
            assert_eq!(
                p.filter_configs(),
                Some(filters.as_array().unwrap().clone())
            );
            assert_eq!(
                p.compressor_config(),
                (!compressor.is_null()).then_some(compressor)
            );
            assert!(p.has_filters() && !p.is_identity());
        }
    }

    #[test]
    fn lossless_chains_round_trip_in_any_order() {
        let chunk = le((0..1000).map(|i| (i * i) % 7919 - 3000), i32::to_le_bytes);
        let filters = [
            json!({"id": "delta", "dtype": "<i4"}),
            json!({"id": "shuffle", "elementsize": 4}),
            json!({"id": "crc32"}),
            json!({"id": "adler32", "location": "end"}),
            json!({"id": "fletcher32"}),
            json!({"id": "jenkins_lookup3", "initval": 7}),
            json!({"id": "astype", "encode_dtype": "<i8", "decode_dtype": "<i4"}),
        ];
        let compressors = [
            Value::Null,
            json!({"id": "zlib", "level": 1}),
            json!({"id": "gzip", "level": 5}),
            json!({"id": "zstd", "level": 3}),
            json!({"id": "lz4"}),
            json!({"id": "bz2", "level": 1}),
            json!({"id": "lzma", "preset": 1}),
            json!({"id": "blosc", "cname": "zstd", "shuffle": 2}),
        ];
        for (n, compressor) in compressors.iter().enumerate() {
            // Rotations and reversals of the filter list: every filter at every position.
            let mut list: Vec<Value> = filters.to_vec();
            list.rotate_left(n % filters.len());
            if n % 2 == 1 {
                list.reverse();
            }
            for len in [1, 3, list.len()] {
                let chain = Value::Array(list[..len].to_vec());
                // `astype` and `delta` only apply at the head of the chain, where the data are
                // int32; elsewhere they work on checksum bytes, which is fine only for them.
                let head_ok = list[..len]
                    .iter()
                    .skip(1)
                    .all(|f| !matches!(f["id"].as_str(), Some("delta" | "astype")));
                if !head_ok {
                    continue;
                }
                let p = pipeline(chain.clone(), compressor.clone(), "<i4").unwrap();
                let enc = encode(&p, &chunk);
                assert_eq!(
                    decode(&p, &enc, chunk.len()).unwrap(),
                    chunk,
                    "{chain} {compressor}"
                );
            }
        }
    }

    #[test]
    fn without_filters_behaves_as_before() {
        let chunk: Vec<u8> = (0..=255).collect();
        let p = pipeline(Value::Null, Value::Null, "|u1").unwrap();
        assert!(p.is_identity() && !p.has_filters());
        assert_eq!(p.filter_configs(), None);
        assert_eq!(encode(&p, &chunk), chunk);
        assert_eq!(decode(&p, &chunk, 256).unwrap(), chunk);
        assert!(matches!(
            decode(&p, &chunk, 255),
            Err(Error::CorruptChunk(_))
        ));
        let p = pipeline(json!([]), json!({"id": "zlib"}), "|u1").unwrap();
        assert!(!p.is_identity() && !p.has_filters());
        assert_eq!(p.filter_configs(), None);
        assert_eq!(
            p.compressor_config(),
            Some(json!({"id": "zlib", "level": 1}))
        );
        assert_eq!(decode(&p, &encode(&p, &chunk), 256).unwrap(), chunk);
        // Blosc's typesize is the array's item size without filters.
        let p = pipeline(Value::Null, json!({"id": "blosc"}), "<f8").unwrap();
        assert_eq!(encode(&p, &[0; 64])[3], 8);
    }

    #[test]
    fn refuses_chunks_of_the_wrong_size_before_allocating() {
        let delta = json!([{"id": "delta", "dtype": "<i8", "astype": "|i1"}]);
        // A blosc header claiming 2 GB is refused for a 64-byte chunk before decoding.
        let p = pipeline(delta.clone(), json!({"id": "blosc"}), "<i8").unwrap();
        let chunk = le(0..8i64, i64::to_le_bytes);
        assert_eq!(decode(&p, &encode(&p, &chunk), 64).unwrap(), chunk);
        let mut enc = encode(&p, &chunk);
        enc[4..8].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
        assert!(matches!(decode(&p, &enc, 64), Err(Error::CorruptChunk(m)) if m.contains("blosc")));
        // A zlib bomb stops at the size the filters need (8 one-byte deltas for 64 bytes).
        let p = pipeline(delta.clone(), json!({"id": "zlib"}), "<i8").unwrap();
        let bomb = crate::codec::compressor_from_config(
            &json!({"id": "zlib"}),
            crate::codec::CodecContext::items(1),
        )
        .unwrap()
        .encode(&vec![0u8; 10 << 20])
        .unwrap();
        assert!(matches!(decode(&p, &bomb, 64), Err(Error::CorruptChunk(m)) if m.contains("zlib")));
        // Uncompressed: the filter refuses what decodes to more than the chunk.
        let p = pipeline(delta.clone(), Value::Null, "<i8").unwrap();
        assert!(
            matches!(decode(&p, &[0; 9], 64), Err(Error::CorruptChunk(m)) if m.contains("delta"))
        );
        // And a chain that decodes to less is refused at the end.
        let p = pipeline(json!([{"id": "crc32"}]), Value::Null, "<i8").unwrap();
        let short = encode(&p, &[1; 56]);
        assert!(matches!(decode(&p, &short, 64), Err(Error::CorruptChunk(m)) if m.contains("56")));
        // Checksum failures name the codec.
        let mut bad = encode(&p, &[1; 64]);
        bad[10] ^= 1;
        assert!(matches!(decode(&p, &bad, 64), Err(Error::CorruptChunk(m)) if m.contains("crc32")));
    }

    #[test]
    fn compressors_in_the_filter_list() {
        let chunk = le((0..500).map(|i| (i * i) % 977 - 300), i32::to_le_bytes);
        for (filters, compressor) in [
            (json!([{"id": "zlib", "level": 1}]), Value::Null),
            (json!([{"id": "zlib"}]), json!({"id": "zstd", "level": 1})),
            (
                json!([{"id": "delta", "dtype": "<i4"}, {"id": "bz2"}, {"id": "crc32"}]),
                json!({"id": "lz4"}),
            ),
            (
                json!([{"id": "blosc", "cname": "zstd", "shuffle": 2}, {"id": "lzma", "preset": 1}]),
                Value::Null,
            ),
            (
                json!([{"id": "gzip"}, {"id": "shuffle", "elementsize": 4}]),
                json!({"id": "blosc"}),
            ),
        ] {
            let p = pipeline(filters.clone(), compressor.clone(), "<i4").unwrap();
            let enc = encode(&p, &chunk);
            assert_eq!(decode(&p, &enc, chunk.len()).unwrap(), chunk, "{filters}");
            assert_eq!(
                p.decode_to_vec(&enc, chunk.len()).unwrap(),
                chunk,
                "{filters}"
            );
            assert!(p.has_filters());
            // Written back with their defaults filled in, each where it was.
            let configs = p.filter_configs().unwrap();
            assert_eq!(configs.len(), filters.as_array().unwrap().len());
            for (written, given) in configs.iter().zip(filters.as_array().unwrap()) {
                assert_eq!(written["id"], given["id"]);
            }
            assert_eq!(
                p.compressor_config().map(|c| c["id"].clone()),
                compressor.get("id").cloned()
            );
        }
        // The filter's blosc shuffles with the array's item size, as numcodecs' would.
        let p = pipeline(json!([{"id": "blosc", "shuffle": 1}]), Value::Null, "<f8").unwrap();
        assert_eq!(encode(&p, &[0; 64])[3], 8);
        assert_eq!(p.compressor_config(), None);
        // A compressor after a filter that returns bytes shuffles bytes.
        let p = pipeline(
            json!([{"id": "crc32"}, {"id": "blosc"}]),
            Value::Null,
            "<f8",
        )
        .unwrap();
        assert_eq!(encode(&p, &[0; 64])[3], 1);
        // Bad settings name the filter's position.
        let err = pipeline(json!([{"id": "zlib", "level": 12}]), Value::Null, "<f8").unwrap_err();
        assert!(
            matches!(err, Error::InvalidMetadata(ref m) if m.contains("filters[0]") && m.contains("level")),
            "{err}"
        );
    }

    #[test]
    fn rejects_bad_filter_lists() {
        let err =
            pipeline(json!([{"id": "crc32"}, {"id": "zfpy"}]), Value::Null, "<f8").unwrap_err();
        assert!(
            matches!(err, Error::Unsupported(ref m) if m.contains("zfpy") && m.contains("filters[1]")),
            "{err}"
        );
        let err =
            pipeline(json!([{"id": "delta", "dtype": "<i3"}]), Value::Null, "<f8").unwrap_err();
        assert!(
            matches!(err, Error::InvalidMetadata(ref m) if m.contains("delta") && m.contains("dtype")),
            "{err}"
        );
        let err = pipeline(json!([5]), Value::Null, "<f8").unwrap_err();
        assert!(matches!(err, Error::InvalidMetadata(_)), "{err}");
        let err = pipeline(json!([{"dtype": "<i4"}]), Value::Null, "<f8").unwrap_err();
        assert!(
            matches!(err, Error::InvalidMetadata(ref m) if m.contains("id")),
            "{err}"
        );
        let err = pipeline(Value::Null, json!({"id": "nope"}), "<f8").unwrap_err();
        assert!(matches!(err, Error::Unsupported(_)), "{err}");
    }

    #[test]
    fn public_filter_constructor_uses_the_array_type() {
        let dtype = DataType::parse_typestr("<f4").unwrap();
        let f = crate::codec::filter_from_config(&json!({"id": "bitround", "keepbits": 3}), &dtype)
            .unwrap();
        assert_eq!(f.id(), "bitround");
        assert!(f.encode(&[0; 8]).is_ok());
        let dtype = DataType::parse_typestr("<i4").unwrap();
        let f = crate::codec::filter_from_config(&json!({"id": "bitround", "keepbits": 3}), &dtype)
            .unwrap();
        assert!(matches!(f.encode(&[0; 8]), Err(Error::InvalidMetadata(_))));
        let err = crate::codec::filter_from_config(&json!({"id": "nope"}), &dtype).unwrap_err();
        assert!(matches!(err, Error::Unsupported(ref m) if m.contains("nope")));
    }
}
