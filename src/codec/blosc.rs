//! numcodecs `Blosc`: c-blosc 1.x frames, through its thread-safe `*_ctx` functions only.

use super::blosc_frame;
use super::config::Config;
use super::{Codec, CodecContext};
use crate::error::{try_alloc_zeroed, Error, Result};
use crate::parallel;
use blosc_src::{
    blosc_cbuffer_sizes, blosc_cbuffer_validate, blosc_compress_ctx, blosc_decompress_ctx,
    blosc_getitem, BLOSC_BITSHUFFLE, BLOSC_MAX_BUFFERSIZE, BLOSC_MAX_OVERHEAD,
    BLOSC_MIN_HEADER_LENGTH, BLOSC_SHUFFLE,
};
use serde_json::{json, Map, Value};
use std::ffi::CStr;
use std::ops::Range;

/// The compressors built into blosc-src, by their numcodecs `cname`: `snappy` with the
/// `blosc-snappy` feature (on by default). numcodecs' own c-blosc is built without snappy
/// (`numcodecs.blosc.list_compressors()` does not list it), so zarr-python cannot read blosc
/// chunks compressed with it; c-blosc builds that have it (Debian's libblosc1, older numcodecs)
/// write them.
#[cfg(feature = "blosc-snappy")]
pub(crate) const COMPRESSORS: [(&str, &CStr); 6] = [
    ("blosclz", c"blosclz"),
    ("lz4", c"lz4"),
    ("lz4hc", c"lz4hc"),
    ("snappy", c"snappy"),
    ("zlib", c"zlib"),
    ("zstd", c"zstd"),
];
/// The compressors built into blosc-src, by their numcodecs `cname` (built without the
/// `blosc-snappy` feature, so without `snappy`).
#[cfg(not(feature = "blosc-snappy"))]
pub(crate) const COMPRESSORS: [(&str, &CStr); 5] = [
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
                    "blosc compressor: cname \"snappy\" is not built into this library (built without the blosc-snappy feature)".into(),
                ))
            }
            None => {
                let names: Vec<&str> = COMPRESSORS.iter().map(|(n, _)| *n).collect();
                return Err(cfg.invalid("cname", format_args!("one of {}", names.join(", "))));
            }
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
        let mut out = Vec::new();
        self.encode_into(input, &mut out)?;
        Ok(out)
    }

    fn encode_into(&self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
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
        let room = input.len() + BLOSC_MAX_OVERHEAD as usize;
        out.clear();
        out.try_reserve_exact(room)
            .map_err(|_| Error::TooLarge(format!("blosc: cannot allocate {room} bytes")))?;
        // SAFETY: both buffers are valid for the lengths passed; `out` has capacity for the
        // worst case (input + BLOSC_MAX_OVERHEAD), and the ctx function shares no state.
        let written = unsafe {
            blosc_compress_ctx(
                self.clevel as i32,
                shuffle,
                self.typesize,
                input.len(),
                input.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                room,
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
        // SAFETY: blosc initialised the first `written` bytes, within the reserved capacity.
        unsafe { out.set_len(written as usize) };
        Ok(())
    }

    /// Checks the header against `out` and the input length before decompressing straight
    /// into `out`. Bytes after the frame are ignored.
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        check_frame(input, out.len())?;
        // SAFETY: the header was validated against the `cbytes` readable input bytes, and
        // blosc writes at most `out.len()` bytes.
        let n = unsafe {
            blosc_decompress_ctx(
                input.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                out.len(),
                decode_threads(out.len()),
            )
        };
        if n < 0 || n as usize != out.len() {
            return Err(corrupt(format!("decompression failed (code {n})")));
        }
        Ok(())
    }

    fn decodes_parts(&self) -> bool {
        true
    }

    /// The header and the block starts of blocks down to [`SMALLEST_BLOCK_READ_APART`].
    fn stored_head(&self, decoded_len: usize) -> u64 {
        16 + 4 * decoded_len.div_ceil(SMALLEST_BLOCK_READ_APART) as u64
    }

    fn stored_parts(
        &self,
        head: &[u8],
        decoded_len: usize,
        parts: &[Range<usize>],
    ) -> Option<Vec<(u64, u64)>> {
        blosc_frame::block_ranges(head, decoded_len, parts)
    }

    /// Decodes only the blocks holding `parts` (c-blosc's `blosc_getitem`, block by block),
    /// when they are fewer than all; else the whole chunk, as [`Codec::decode_into`].
    fn decode_parts_into(
        &self,
        input: &[u8],
        out: &mut [u8],
        parts: &[Range<usize>],
    ) -> Result<()> {
        check_frame(input, out.len())?;
        let (typesize, blocksize) = (usize::from(input[3]), u32_at(input, 8) as usize);
        let memcpyed = input[2] & 0x02 != 0;
        // Blocks of whole items only (c-blosc makes them so); anything else decodes whole.
        let unsplittable = memcpyed
            || typesize == 0
            || blocksize == 0
            || !blocksize.is_multiple_of(typesize)
            || !out.len().is_multiple_of(typesize);
        if out.is_empty() || unsplittable {
            return self.decode_into(input, out);
        }
        let wanted = blosc_frame::wanted_blocks(out.len(), blocksize, parts);
        if wanted.iter().all(|&w| w) {
            return self.decode_into(input, out);
        }
        for (block, _) in wanted.iter().enumerate().filter(|(_, &w)| w) {
            let start = block * blocksize;
            let len = blocksize.min(out.len() - start);
            let (first, count) = (start / typesize, len / typesize);
            let (first, count) = (
                i32::try_from(first).map_err(|_| corrupt("block outside 2^31 items".into()))?,
                i32::try_from(count).map_err(|_| corrupt("block of 2^31 items".into()))?,
            );
            // SAFETY: the frame was checked (header, block starts and streams inside the
            // input) before c-blosc reads it; it writes `len` bytes at `start`, inside `out`.
            let n = unsafe {
                blosc_getitem(
                    input.as_ptr().cast(),
                    first,
                    count,
                    out[start..start + len].as_mut_ptr().cast(),
                )
            };
            if n < 0 || n as usize != len {
                return Err(corrupt(format!(
                    "decompressing block {block} failed (code {n})"
                )));
            }
        }
        Ok(())
    }

    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let (nbytes, _) = header_sizes(input)?;
        if nbytes > max_len {
            return Err(corrupt(format!(
                "header says the data decodes to {nbytes} bytes, more than the expected {max_len}"
            )));
        }
        let mut out = try_alloc_zeroed(nbytes, "a blosc chunk")?;
        self.decode_into(input, &mut out)?;
        Ok(out)
    }
}

/// The smallest blocks whose starts [`Codec::stored_head`] asks for: c-blosc makes blocks of
/// about 8 KiB and more (rounded to whole items) in chunks of 32 KiB and more, and one block
/// of smaller chunks; a frame of smaller blocks (a block size the writer forced) is read
/// whole.
const SMALLEST_BLOCK_READ_APART: usize = 4 << 10;

/// Decoded sizes below this are decoded on one thread.
const THREADED_DECODE_MIN: usize = 1 << 20;

/// The threads blosc decodes `len` bytes with: its own, as many as the pool has to spare for
/// this chunk ([`parallel::spare_threads`]: a read of one chunk while no other call runs), for
/// a chunk large enough to pay for starting them; else the calling thread alone.
fn decode_threads(len: usize) -> i32 {
    match len >= THREADED_DECODE_MIN {
        true => i32::try_from(parallel::spare_threads()).unwrap_or(1),
        false => 1,
    }
}

/// Checks a frame before c-blosc reads it: header, sizes (decoding to `len` bytes), the
/// compressor built in, and the layout of its blocks inside the input.
fn check_frame(input: &[u8], len: usize) -> Result<()> {
    let (mut nbytes, cbytes) = header_sizes(input)?;
    // The compressor code in the flags' top three bits: 2 is snappy.
    if !cfg!(feature = "blosc-snappy") && input[2] >> 5 == 2 {
        return Err(Error::Unsupported(
            "blosc: the chunk is compressed with snappy, which this library is built without (the blosc-snappy feature)".into(),
        ));
    }
    if nbytes != len {
        return Err(corrupt(format!(
            "header says the data decodes to {nbytes} bytes, expected {len}"
        )));
    }
    // SAFETY: `cbytes` bytes of input are readable (checked by `header_sizes`).
    if unsafe { blosc_cbuffer_validate(input.as_ptr().cast(), cbytes, &mut nbytes) } != 0 {
        return Err(corrupt("invalid header".into()));
    }
    blosc_frame::check(&input[..cbytes], nbytes)
}

/// The little-endian `u32` at `at` of a checked header.
fn u32_at(input: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(input[at..at + 4].try_into().expect("4 header bytes"))
}

fn corrupt(msg: String) -> Error {
    Error::CorruptChunk(format!("blosc: {msg}"))
}

/// The decoded and compressed sizes the frame header states, after checking that the input
/// holds the header and the whole frame.
fn header_sizes(input: &[u8]) -> Result<(usize, usize)> {
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
    Ok((nbytes, cbytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::testutil::*;

    fn codec(config: Value, item_size: usize) -> Result<Blosc> {
        Blosc::from_config(config.as_object().unwrap(), CodecContext::items(item_size))
    }

    /// Fixtures: `numcodecs.Blosc(...).encode(np.frombuffer(bytes(range(50)) * 4, dtype))`
    /// (numcodecs 0.16.6, c-blosc 1.21.7.dev), as (config, item size, hex).
    const NUMCODECS_BLOSC: [(&str, usize, &str); 5] = [
        (
            r#"{"cname": "lz4", "clevel": 5, "shuffle": 1}"#,
            4,
            "02013104c8000000c80000007a0000001400000062000000ff0a0004080c1014181c2024282c3002060a0e12\
            161a1e22262a2e190006ff0a0105090d1115191d2125292d3103070b0f13171b1f23272b2f190006cf02060a\
            0e12161a1e22262a2e700013cf03070b0f13171b1f23272b2f70000e502125292d31",
        ),
        (
            r#"{"cname": "zstd", "clevel": 3, "shuffle": 2}"#,
            1,
            "02019401c8000000c800000076000000140000005e00000028b52ffd20c8ad020012840c15c0251de0e1d520\
            b8edf1ffff9f0d0a8c9f6505c653f553ed9fdecfafa9b5786a87d99bdf3ed518af9361291ba10c11000111a0\
            30d6ee9fe550c36d0361800ba32cedf7bdb846baba0be4bfdf1717041c21",
        ),
        (
            r#"{"cname": "blosclz", "clevel": 9, "shuffle": 0}"#,
            2,
            "02011202c8000000c8000000d8000000000102030405060708090a0b0c0d0e0f101112131415161718191a1b\
            1c1d1e1f202122232425262728292a2b2c2d2e2f3031000102030405060708090a0b0c0d0e0f101112131415\
            161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031000102030405060708090a0b0c0d0e0f\
            101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303100010203040506070809\
            0a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031",
        ),
        (
            r#"{"cname": "zlib", "clevel": 1, "shuffle": -1}"#,
            1,
            "02016401c8000000c8000000700000001400000058000000780195cac10900310804c005bf015b09e47b907e\
            538590ef156301818dfabfc7cd822cea5a1fded247dad55bf5e1c576122d4f012b4732ae199b198004048782\
            06a7a2c33861088c25e2a4313d9688537cff750104c14665",
        ),
        (
            r#"{"cname": "lz4hc", "clevel": 9, "shuffle": 1, "blocksize": 64}"#,
            8,
            "02013108c800000080000000be000000180000007200000056000000f61700081018202830060e161e262e04\
            0c1401091119212931070f171f272f050d15020a121a222a260066030b131b232b260066040c141c242c2600\
            66050d151d252d2600055900032600055900701d252d030b131b480000001c242c020a121a222a1d252d030b\
            131b232b1e262e040c141c242c1f272f050d151d252d202830060e161e262e212931070f171f272f222a0008\
            1018202830232b01091119212931",
        ),
    ];

    fn fixtures() -> impl Iterator<Item = (Blosc, Vec<u8>)> {
        NUMCODECS_BLOSC.iter().map(|(config, item_size, hex)| {
            let config: Value = serde_json::from_str(config).unwrap();
            (codec(config, *item_size).unwrap(), unhex(hex))
        })
    }

    /// The stored ranges a part needs, told from the frame's head, are all that decoding it
    /// reads: a frame holding only them, zeros elsewhere, decodes the part right.
    #[test]
    fn a_part_decodes_from_the_stored_ranges_its_head_names() {
        let data: Vec<u8> = (0..1u32 << 18)
            .flat_map(|i| ((i / 3) ^ (i >> 9)).to_le_bytes())
            .collect();
        for cname in ["lz4", "zstd", "blosclz"] {
            let config = json!({"id": "blosc", "cname": cname, "clevel": 5, "shuffle": 1,
                "blocksize": 32768});
            let c = codec(config, 4).unwrap();
            let frame = c.encode(&data).unwrap();
            let head = &frame[..c.stored_head(data.len()) as usize];
            let parts = [40000..40004, 300000..300400];
            let ranges = c.stored_parts(head, data.len(), &parts).unwrap();
            let mut sparse = vec![0; frame.len()];
            for (offset, n) in ranges.iter().map(|&(o, n)| (o as usize, n as usize)) {
                sparse[offset..offset + n].copy_from_slice(&frame[offset..offset + n]);
            }
            let fetched: u64 = ranges.iter().map(|r| r.1).sum();
            // The header with the block starts, and the two blocks holding the parts.
            assert_eq!(ranges.len(), 3, "{cname}");
            assert!(fetched < frame.len() as u64 / 2, "{cname}: {fetched} bytes");
            let mut out = vec![0; data.len()];
            c.decode_parts_into(&sparse, &mut out, &parts).unwrap();
            for part in &parts {
                assert!(out[part.clone()] == data[part.clone()], "{cname}");
            }
            // Every block wanted, or a head too short for the block starts: read whole.
            let everything = std::iter::once(0..data.len()).collect::<Vec<_>>();
            assert_eq!(c.stored_parts(head, data.len(), &everything), None);
            assert_eq!(c.stored_parts(&head[..20], data.len(), &parts), None);
        }
        let stored = codec(json!({"id": "blosc", "cname": "lz4", "clevel": 0}), 4).unwrap();
        let frame = stored.encode(&data).unwrap();
        let first = std::iter::once(0..4).collect::<Vec<_>>();
        assert_eq!(stored.stored_parts(&frame[..64], data.len(), &first), None);
    }

    /// A part of a chunk decodes only the blocks holding it: the others keep what the buffer
    /// held; parts covering every block, and frames stored uncompressed, decode whole.
    #[test]
    fn decodes_only_the_blocks_a_part_needs() {
        let data: Vec<u8> = (0..1u32 << 18)
            .flat_map(|i| ((i / 3) ^ (i >> 9)).to_le_bytes())
            .collect();
        for (cname, clevel) in [("lz4", 5), ("zstd", 1), ("blosclz", 9), ("lz4", 0)] {
            let config = json!({"id": "blosc", "cname": cname, "clevel": clevel, "shuffle": 1,
                "blocksize": 65536});
            let c = codec(config, 4).unwrap();
            let frame = c.encode(&data).unwrap();
            // c-blosc may choose its own block size: the frame's header says.
            let size = u32_at(&frame, 8) as usize;
            assert!(data.len() / size >= 4, "{cname}: blocks of {size} bytes");
            let mut out = vec![0xAA; data.len()];
            let parts = [size + 10..size + 14, 3 * size..3 * size + 100];
            c.decode_parts_into(&frame, &mut out, &parts).unwrap();
            for (block, (got, want)) in out.chunks(size).zip(data.chunks(size)).enumerate() {
                let needed = block == 1 || block == 3;
                match (needed || clevel == 0, got == want) {
                    (true, same) => assert!(same, "{cname}: block {block}"),
                    (false, same) => {
                        assert!(
                            !same && got.iter().all(|&b| b == 0xAA),
                            "{cname}: block {block}"
                        )
                    }
                }
            }
            let mut all = vec![0; data.len()];
            let everything = std::iter::once(0..data.len()).collect::<Vec<_>>();
            c.decode_parts_into(&frame, &mut all, &everything).unwrap();
            assert!(all == data, "{cname}");
            let mut short = vec![0; data.len() - 4];
            assert!(c
                .decode_parts_into(&frame, &mut short, &everything)
                .is_err());
        }
    }

    #[test]
    fn config_defaults_and_round_trip() {
        assert_eq!(
            codec(json!({"id": "blosc"}), 4).unwrap().config(),
            json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0})
        );
        for (cname, _) in COMPRESSORS {
            for shuffle in -1..=2 {
                for item_size in [1, 4, 8] {
                    let config = json!({"id": "blosc", "cname": cname, "clevel": 5,
                        "shuffle": shuffle, "blocksize": 0});
                    let c = codec(config.clone(), item_size).unwrap();
                    assert_eq!(c.config(), config);
                    assert_round_trips(&c);
                }
            }
        }
        for (clevel, blocksize) in [(0, 0), (1, 4096), (9, 100_000)] {
            let config = json!({"id": "blosc", "cname": "zstd", "clevel": clevel,
                "shuffle": 1, "blocksize": blocksize});
            assert_round_trips(&codec(config, 2).unwrap());
        }
    }

    #[test]
    fn encodes_like_numcodecs() {
        for (c, enc) in fixtures() {
            assert_eq!(c.encode(&sample()).unwrap(), enc, "{c:?}");
        }
    }

    #[test]
    fn typesize_key_and_autoshuffle() {
        // Header byte 2 holds the flags (1 = byte shuffle, 4 = bit shuffle), byte 3 the typesize.
        let header = |config: Value, item_size| {
            let enc = codec(config, item_size).unwrap().encode(&sample()).unwrap();
            (enc[2] & 0x05, enc[3])
        };
        assert_eq!(header(json!({"shuffle": -1}), 1), (4, 1));
        assert_eq!(header(json!({"shuffle": -1}), 4), (1, 4));
        assert_eq!(header(json!({"shuffle": -1, "typesize": 1}), 4), (4, 1));
        assert_eq!(header(json!({"shuffle": 1, "typesize": 8}), 1), (1, 8));
        // numcodecs never writes `typesize` back.
        let c = codec(json!({"id": "blosc", "typesize": 8}), 1).unwrap();
        assert_eq!(c.config().get("typesize"), None);
    }

    #[test]
    fn decodes_numcodecs_output() {
        for (c, enc) in fixtures() {
            assert_eq!(decode(&c, &enc, 200).unwrap(), sample(), "{c:?}");
            // Decoding does not depend on the configuration.
            let other = codec(json!({"cname": "blosclz"}), 1).unwrap();
            assert_eq!(decode(&other, &enc, 200).unwrap(), sample());
            // Bytes after the frame are ignored.
            assert_eq!(
                decode(&c, &[&enc[..], b"xyz"].concat(), 200).unwrap(),
                sample()
            );
        }
    }

    #[test]
    fn rejects_corrupt_data() {
        for (c, enc) in fixtures() {
            assert_truncations_refused(&c, &enc, 200);
            assert_corrupt(&c, &enc, 199);
            assert_corrupt(&c, &enc, 201);
            assert_survives_corruption(&c, &enc, 200);
            // A header claiming 2 GB is refused for what it is, without decoding.
            let mut huge = enc.clone();
            huge[4..8].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
            assert_corrupt(&c, &huge, 200);
            assert!(matches!(
                c.decode_to_vec(&huge, 1 << 20),
                Err(Error::CorruptChunk(_))
            ));
            assert_decodes_to_vec(&c, &enc, &sample());
            let mut future = enc.clone();
            future[0] = 9;
            assert_corrupt(&c, &future, 200);
        }
        let c = codec(json!({}), 1).unwrap();
        assert_corrupt(&c, b"not a blosc frame, just text", 200);
        assert_corrupt(&c, &[0xff; 64], 200);
    }

    /// `blosc_compress_ctx(5, BLOSC_SHUFFLE, 4, ..., "snappy", 0, 1)` of
    /// `bytes(range(50)) * 40` by Debian's libblosc1 1.21.3 (built with snappy 1.1.9).
    const DEBIAN_BLOSC_SNAPPY: &str = "\
        02014104d0070000d0070000f40000001400000034000000f403600004080c1014181c2024282c3002060a0e\
        12161a1e22262a2efe1900fe1900fe1900fe1900fe1900fe1900fe19006a190034000000f403600105090d11\
        15191d2125292d3103070b0f13171b1f23272b2ffe1900fe1900fe1900fe1900fe1900fe1900fe19006a1900\
        34000000f4036002060a0e12161a1e22262a2e0004080c1014181c2024282c30fe1900fe1900fe1900fe1900\
        fe1900fe1900fe19006a190034000000f4036003070b0f13171b1f23272b2f0105090d1115191d2125292d31\
        fe1900fe1900fe1900fe1900fe1900fe1900fe19006a1900";

    #[test]
    fn snappy_frames_from_other_c_blosc_builds() {
        let data: Vec<u8> = sample().repeat(10);
        let enc = unhex(DEBIAN_BLOSC_SNAPPY);
        let c = codec(json!({"cname": "lz4"}), 4).unwrap();
        if cfg!(feature = "blosc-snappy") {
            assert_eq!(decode(&c, &enc, data.len()).unwrap(), data);
            let snappy = codec(json!({"cname": "snappy", "shuffle": 1}), 4).unwrap();
            assert_eq!(snappy.config()["cname"], "snappy");
            let mine = snappy.encode(&data).unwrap();
            assert_eq!(mine[2] >> 5, 2, "the frame names snappy");
            assert_eq!(decode(&snappy, &mine, data.len()).unwrap(), data);
            assert_round_trips(&snappy);
            assert_truncations_refused(&c, &enc, data.len());
            assert_survives_corruption(&c, &enc, data.len());
        } else {
            let err = decode(&c, &enc, data.len()).unwrap_err();
            assert!(
                matches!(err, Error::Unsupported(ref m) if m.contains("snappy")),
                "{err}"
            );
        }
    }

    #[test]
    fn rejects_bad_config() {
        for (key, bad) in [
            ("cname", json!("foo")),
            ("cname", json!(5)),
            ("clevel", json!(10)),
            ("clevel", json!(-1)),
            ("shuffle", json!(3)),
            ("shuffle", json!(-2)),
            ("blocksize", json!(-1)),
            ("blocksize", json!("0")),
            ("typesize", json!(0)),
        ] {
            let err = codec(json!({"id": "blosc", key: bad}), 4).unwrap_err();
            assert!(
                matches!(err, Error::InvalidMetadata(ref m) if m.contains(key)),
                "{err}"
            );
        }
        let snappy = codec(json!({"id": "blosc", "cname": "snappy"}), 4);
        if cfg!(feature = "blosc-snappy") {
            assert!(snappy.is_ok());
        } else {
            assert!(matches!(snappy, Err(Error::Unsupported(_))), "{snappy:?}");
        }
    }
}
