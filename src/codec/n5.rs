//! The framing of N5 blocks, as zarr-python 2's `N5ChunkWrapper` (id `n5_wrapper`) decodes it
//! and z5 and n5-java write it: a big-endian header (mode `u16`, number of dimensions `u16`,
//! the block's dimensions as `u32`, fastest-varying first; in `varlength` mode the number of
//! elements as `u32`), then the block's elements, big-endian, compressed by the N5
//! compression. Blocks at the array's upper edges hold only the part inside the array: the
//! engine gives that part ([`Codec::encode_block_into`]), and a block read back is placed in
//! the corner of a chunk whose rest is zero (N5's only fill value).

use super::{compressor_from_config, Codec, CodecContext};
use crate::dtype::{ByteOrder, DataType};
use crate::error::{try_alloc_zeroed, Error, Result};
use serde_json::{json, Map, Value};

/// The `mode` of a block header whose element count is that of its dimensions.
const MODE_DEFAULT: u16 = 0;
/// The `mode` of a block header followed by an element count.
const MODE_VARLENGTH: u16 = 1;
/// The `mode` of a block of serialised objects (no dimensions).
const MODE_OBJECT: u16 = 2;

/// zarr-python's `N5ChunkWrapper`: `{"id": "n5_wrapper", "compressor_config": ..., "dtype":
/// ..., "chunk_shape": [...]}` (dtype and chunk shape in Zarr's order).
#[derive(Debug)]
pub struct N5Wrapper {
    inner: Option<Box<dyn Codec>>,
    dtype: String,
    item_size: usize,
    /// Elements are held little-endian in decoded chunks and big-endian in blocks.
    swap: bool,
    chunk_shape: Vec<u64>,
    chunk_bytes: usize,
}

impl N5Wrapper {
    /// Reads the configuration; `ctx` is the array's, whose item size must be the type's.
    pub fn from_config(obj: &Map<String, Value>, ctx: CodecContext) -> Result<Self> {
        let bad = |what: &str| Error::InvalidMetadata(format!("n5_wrapper: {what}"));
        let inner = match obj.get("compressor_config") {
            None | Some(Value::Null) => None,
            Some(c) if c.get("id").and_then(Value::as_str) == Some("raw") => None,
            Some(c) if c.get("id").and_then(Value::as_str) == Some("n5_wrapper") => {
                return Err(bad("an n5_wrapper cannot wrap another"))
            }
            Some(c) => Some(compressor_from_config(c, ctx.clone())?),
        };
        let dtype = obj
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no string \"dtype\""))?;
        let parsed = DataType::parse_typestr(dtype)?;
        if parsed.size != ctx.item_size {
            return Err(bad(&format!(
                "dtype {dtype:?} has {}-byte items, the array {}-byte ones",
                parsed.size, ctx.item_size
            )));
        }
        let chunk_shape = obj
            .get("chunk_shape")
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .map(|v| {
                        v.as_u64()
                            .filter(|&d| (1..=u64::from(u32::MAX)).contains(&d))
                    })
                    .collect::<Option<Vec<u64>>>()
            })
            .filter(|s| !s.is_empty() && s.len() <= usize::from(u16::MAX))
            .ok_or_else(|| {
                bad("\"chunk_shape\" must be a list of 1 to 65535 integers from 1 to 2^32 - 1")
            })?;
        let chunk_bytes = element_count(&chunk_shape)
            .and_then(|n| n.checked_mul(parsed.size as u64))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| bad(&format!("chunks {chunk_shape:?} are too large")))?;
        Ok(N5Wrapper {
            inner,
            dtype: dtype.to_string(),
            item_size: parsed.size,
            swap: parsed.order == ByteOrder::Little && parsed.size > 1,
            chunk_shape,
            chunk_bytes,
        })
    }

    /// Checks a block header against the chunk: the block's dimensions (Zarr's order) and the
    /// header's length.
    fn read_header(&self, input: &[u8]) -> Result<(Vec<u64>, usize)> {
        let short = || {
            Error::CorruptChunk(format!(
                "N5 block of {} bytes ends inside its header",
                input.len()
            ))
        };
        let u16_at = |at: usize| -> Result<u16> {
            let b = input.get(at..at + 2).ok_or_else(short)?;
            Ok(u16::from_be_bytes([b[0], b[1]]))
        };
        let u32_at = |at: usize| -> Result<u32> {
            let b = input.get(at..at + 4).ok_or_else(short)?;
            Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        };
        let mode = u16_at(0)?;
        match mode {
            MODE_DEFAULT | MODE_VARLENGTH => {}
            MODE_OBJECT => {
                return Err(Error::Unsupported(
                    "N5 block in object mode (serialised objects, not a numeric block)".into(),
                ))
            }
            other => {
                return Err(Error::CorruptChunk(format!(
                    "N5 block header has mode {other} (0, 1 or 2 are defined)"
                )))
            }
        }
        let ndim = usize::from(u16_at(2)?);
        if ndim != self.chunk_shape.len() {
            return Err(Error::CorruptChunk(format!(
                "N5 block header says {ndim} dimensions, the array has {}",
                self.chunk_shape.len()
            )));
        }
        let mut dims = (0..ndim)
            .map(|i| u32_at(4 + 4 * i).map(u64::from))
            .collect::<Result<Vec<u64>>>()?;
        dims.reverse();
        if dims.iter().zip(&self.chunk_shape).any(|(d, c)| d > c) {
            return Err(Error::CorruptChunk(format!(
                "N5 block header says a block of {dims:?}, larger than the chunks {:?}",
                self.chunk_shape
            )));
        }
        let mut len = 4 + 4 * ndim;
        if mode == MODE_VARLENGTH {
            let count = u64::from(u32_at(len)?);
            let expected = element_count(&dims).expect("within the chunk");
            if count != expected {
                return Err(Error::Unsupported(format!(
                    "N5 varlength block of {count} elements in a block of {dims:?} ({expected} elements)"
                )));
            }
            len += 4;
        }
        Ok((dims, len))
    }

    /// Decodes a block's payload (after its header) into `out`, exactly filled, and puts its
    /// elements in the decoded chunk's byte order.
    fn decode_payload(&self, payload: &[u8], out: &mut [u8]) -> Result<()> {
        match &self.inner {
            Some(codec) => codec.decode_into(payload, out)?,
            None if payload.len() == out.len() => out.copy_from_slice(payload),
            None => {
                return Err(Error::CorruptChunk(format!(
                    "raw N5 block holds {} bytes after its header, its dimensions {} bytes",
                    payload.len(),
                    out.len()
                )))
            }
        }
        self.swap_elements(out);
        Ok(())
    }

    fn swap_elements(&self, data: &mut [u8]) {
        if self.swap {
            for element in data.chunks_exact_mut(self.item_size) {
                element.reverse();
            }
        }
    }
}

/// The number of elements of a block, `None` on overflow.
fn element_count(dims: &[u64]) -> Option<u64> {
    dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
}

/// Runs `f(chunk offset, block offset, length)` for each row of the block in the corner of
/// a chunk (`dims`: the chunk's and the block's dimensions, C order; `item` bytes an element).
fn for_each_row(dims: (&[u64], &[u64]), item: usize, mut f: impl FnMut(usize, usize, usize)) {
    let (chunk_shape, block_shape) = dims;
    let n = block_shape.len();
    if block_shape.contains(&0) {
        return;
    }
    let row = block_shape[n - 1] as usize * item;
    let mut strides = vec![item; n];
    for d in (0..n - 1).rev() {
        strides[d] = strides[d + 1] * chunk_shape[d + 1] as usize;
    }
    let mut index = vec![0u64; n];
    let mut at = 0;
    loop {
        let start: usize = index
            .iter()
            .zip(&strides)
            .map(|(&i, &s)| i as usize * s)
            .sum();
        f(start, at, row);
        at += row;
        // The next row: an odometer over every dimension but the last.
        let mut d = n - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            if index[d] < block_shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

impl Codec for N5Wrapper {
    fn id(&self) -> &'static str {
        "n5_wrapper"
    }

    fn config(&self) -> Value {
        json!({
            "id": "n5_wrapper",
            "compressor_config": self.inner.as_ref().map(|c| c.config()),
            "dtype": self.dtype,
            "chunk_shape": self.chunk_shape,
        })
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_into(input, &mut out)?;
        Ok(out)
    }

    fn encode_into(&self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        self.encode_block_into(input, &self.chunk_shape, out)
    }

    fn stores_extent(&self) -> bool {
        true
    }

    fn encode_block_into(&self, input: &[u8], extent: &[u64], out: &mut Vec<u8>) -> Result<()> {
        if input.len() != self.chunk_bytes || extent.len() != self.chunk_shape.len() {
            return Err(Error::Internal(format!(
                "n5_wrapper: {} bytes of extent {extent:?} given for chunks {:?}",
                input.len(),
                self.chunk_shape
            )));
        }
        let extent: Vec<u64> = extent
            .iter()
            .zip(&self.chunk_shape)
            .map(|(&e, &c)| e.min(c))
            .collect();
        let mut block = if extent == self.chunk_shape {
            input.to_vec()
        } else {
            let len = element_count(&extent).expect("within the chunk") as usize * self.item_size;
            let mut block = try_alloc_zeroed(len, "an N5 block")?;
            for_each_row((&self.chunk_shape, &extent), self.item_size, |c, b, len| {
                block[b..b + len].copy_from_slice(&input[c..c + len]);
            });
            block
        };
        self.swap_elements(&mut block);
        let mut header = Vec::with_capacity(4 + 4 * extent.len());
        header.extend_from_slice(&MODE_DEFAULT.to_be_bytes());
        header.extend_from_slice(&(extent.len() as u16).to_be_bytes());
        for &d in extent.iter().rev() {
            header.extend_from_slice(&(d as u32).to_be_bytes());
        }
        out.clear();
        out.extend_from_slice(&header);
        match &self.inner {
            Some(codec) => {
                let mut compressed = Vec::new();
                codec.encode_into(&block, &mut compressed)?;
                out.extend_from_slice(&compressed);
            }
            None => out.extend_from_slice(&block),
        }
        Ok(())
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        if out.len() != self.chunk_bytes {
            return Err(Error::Internal(format!(
                "n5_wrapper: a buffer of {} bytes for chunks of {}",
                out.len(),
                self.chunk_bytes
            )));
        }
        let (dims, header_len) = self.read_header(input)?;
        let payload = &input[header_len..];
        if dims == self.chunk_shape {
            return self.decode_payload(payload, out);
        }
        let len = element_count(&dims).expect("within the chunk") as usize * self.item_size;
        let mut block = try_alloc_zeroed(len, "an N5 block")?;
        self.decode_payload(payload, &mut block)?;
        out.fill(0);
        for_each_row((&self.chunk_shape, &dims), self.item_size, |c, b, len| {
            out[c..c + len].copy_from_slice(&block[b..b + len]);
        });
        Ok(())
    }

    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        if self.chunk_bytes > max_len {
            return Err(Error::CorruptChunk(format!(
                "n5_wrapper: chunks of {} bytes exceed the {max_len} allowed here",
                self.chunk_bytes
            )));
        }
        let mut out = try_alloc_zeroed(self.chunk_bytes, "a decoded chunk")?;
        self.decode_into(input, &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrapper(compressor: Value, dtype: &str, chunks: &[u64]) -> N5Wrapper {
        let config = json!({"id": "n5_wrapper", "compressor_config": compressor,
                            "dtype": dtype, "chunk_shape": chunks});
        let item_size = DataType::parse_typestr(dtype).unwrap().size;
        N5Wrapper::from_config(config.as_object().unwrap(), CodecContext::items(item_size)).unwrap()
    }

    #[test]
    fn writes_the_spec_example_and_reads_it_back() {
        // The N5 README's example: a uint16 block of 1x2x3 (N5 order) holding 1..=6, raw.
        let codec = wrapper(Value::Null, "<u2", &[3, 2, 1]);
        let chunk: Vec<u8> = (1u16..=6).flat_map(|v| v.to_le_bytes()).collect();
        let stored = codec.encode(&chunk).unwrap();
        let mut expected = vec![0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3];
        expected.extend((1u16..=6).flat_map(|v| v.to_be_bytes()));
        assert_eq!(stored, expected);
        let mut back = vec![0; 12];
        codec.decode_into(&stored, &mut back).unwrap();
        assert_eq!(back, chunk);
    }

    #[test]
    fn edge_blocks_hold_only_their_part() {
        for compressor in [
            Value::Null,
            json!({"id": "gzip", "level": 1}),
            json!({"id": "zstd", "level": 1}),
        ] {
            let codec = wrapper(compressor, "<i4", &[3, 4]);
            let chunk: Vec<u8> = (0i32..12).flat_map(|v| v.to_le_bytes()).collect();
            let mut stored = Vec::new();
            codec
                .encode_block_into(&chunk, &[2, 3], &mut stored)
                .unwrap();
            assert_eq!(&stored[..12], &[0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 2]);
            let mut back = vec![0xff; 48];
            codec.decode_into(&stored, &mut back).unwrap();
            let values: Vec<i32> = back
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
                .collect();
            assert_eq!(values, [0, 1, 2, 0, 4, 5, 6, 0, 0, 0, 0, 0]);
        }
    }

    #[test]
    fn a_header_that_disagrees_with_the_chunk_is_an_error() {
        let codec = wrapper(Value::Null, "|u1", &[2, 2]);
        let mut back = vec![0; 4];
        for (stored, needle) in [
            (
                vec![0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 9],
                "3 dimensions",
            ),
            (
                vec![0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, 1, 2, 3],
                "larger than",
            ),
            (vec![0, 0, 0, 2, 0, 0], "inside its header"),
            (vec![0, 7, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 1], "mode 7"),
            (vec![0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3], "3 bytes"),
            (
                vec![0, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 5, 1],
                "varlength",
            ),
            (vec![0, 2, 0, 0, 1], "object mode"),
        ] {
            let err = codec
                .decode_into(&stored, &mut back)
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{err}");
        }
        // Varlength mode with the block's own count reads.
        codec
            .decode_into(
                &[0, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 7],
                &mut back,
            )
            .unwrap();
        assert_eq!(back, [7, 0, 0, 0]);
    }
}
