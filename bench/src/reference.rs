//! The physical references: the uncompressed chunk files read into one buffer, a plain memory
//! copy of the array's size, and a compressed variant's chunk files read and decoded by the
//! codec library itself. All use the rayon pool (all cores).

use crate::subject::{
    bytes_of, chunks_touched, indexes_between, largest, read_zarray, shape_and_chunks, Box3,
    Result, Sink, Subject,
};
use rayon::prelude::*;
use serde_json::Value;
use std::cell::RefCell;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;
use unsafe_cell_slice::UnsafeCellSlice;

/// Reads (or, for the write row, writes) an uncompressed array's chunk files as raw bytes,
/// with no decoding and no rearranging: the file-system floor for that array.
pub struct RawFiles;

/// The chunk keys of an array (`i.j.k` or `i/j/k`), in C order of the chunk grid.
fn chunk_keys(zarray: &Value) -> Result<Vec<String>> {
    let (shape, chunks) = shape_and_chunks(zarray)?;
    let sep = zarray["dimension_separator"].as_str().unwrap_or(".");
    let grid: Vec<u64> = shape
        .iter()
        .zip(&chunks)
        .map(|(s, c)| s.div_ceil(*c))
        .collect();
    let mut keys = Vec::new();
    let mut index = vec![0u64; grid.len()];
    for _ in 0..grid.iter().product::<u64>() {
        keys.push(
            index
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(sep),
        );
        for d in (0..grid.len()).rev() {
            index[d] += 1;
            if index[d] < grid[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(keys)
}

/// Reads every chunk file of a compressed array (Zarr v2 with a zstd or blosc compressor, or
/// Zarr v3 with bytes + zstd) and decodes it with the codec's own library, chunk after chunk,
/// into an output buffer kept (and so already faulted in) from the previous call: the floor of
/// reading that array, what the file system and the codec cost with no Zarr library and no
/// page faults around them. `threads`: the rayon pool's (`codec`), or 1, the codec's
/// single-thread speed (`codec-1t`), the floor of one-chunk-per-call reads.
pub struct CodecFloor {
    pub threads: usize,
    out: RefCell<Vec<u8>>,
}

impl CodecFloor {
    pub fn new(threads: usize) -> CodecFloor {
        CodecFloor {
            threads,
            out: RefCell::default(),
        }
    }
}

thread_local! {
    /// A chunk cut out of the data and its encoding, kept between chunks (and calls).
    static ENCODE_BUFFERS: RefCell<(Vec<u8>, Vec<u8>)> = RefCell::default();
    /// A decoded chunk, kept between chunks (and calls).
    static DECODED: RefCell<Vec<u8>> = RefCell::default();
}

/// How the chunks of an array are compressed, with the settings writes use.
#[derive(Clone, Copy)]
enum Codec {
    Zstd {
        level: i32,
    },
    /// Blosc with LZ4 (the only compressor the benchmark's variants use).
    BloscLz4 {
        clevel: i32,
        shuffle: i32,
    },
}

/// The chunks of an array: keys in C order of the chunk grid, the array's and the chunks'
/// shapes, one chunk's bytes, and the codec; for a sharded array the keys and shape are the
/// shards', `inner` the inner chunks' shape, and `bytes` and `codec` theirs.
struct Chunks {
    keys: Vec<String>,
    array_shape: Vec<u64>,
    shape: Vec<u64>,
    inner: Option<Vec<u64>>,
    bytes: usize,
    codec: Codec,
}

impl Chunks {
    /// The shape of the chunks stored one by one (inner chunks when sharded).
    fn unit(&self) -> &[u64] {
        self.inner.as_deref().unwrap_or(&self.shape)
    }

    /// Units along each dimension of the array.
    fn units(&self) -> Vec<u64> {
        let unit = self.unit();
        (0..unit.len())
            .map(|d| self.array_shape[d] / unit[d])
            .collect()
    }

    /// Units along each dimension of one shard (all 1 when not sharded).
    fn per_shard(&self) -> Vec<u64> {
        let unit = self.unit();
        (0..unit.len()).map(|d| self.shape[d] / unit[d]).collect()
    }

    /// The stored bytes of the unit at `index` (its place along each dimension): its file, or
    /// its range of its shard's file after the shard's index (16 bytes per inner chunk and a
    /// CRC-32C at the end), read with positioned reads.
    fn stored(&self, path: &str, index: &[u64]) -> Result<Vec<u8>> {
        let per_shard = self.per_shard();
        let shard: Vec<u64> = (0..index.len()).map(|d| index[d] / per_shard[d]).collect();
        let key = &self.keys[c_order(&shard, &self.grid())];
        let file = std::fs::File::open(format!("{path}/{key}"))?;
        if self.inner.is_none() {
            let mut bytes = Vec::new();
            (&file).read_to_end(&mut bytes)?;
            return Ok(bytes);
        }
        let local: Vec<u64> = (0..index.len()).map(|d| index[d] % per_shard[d]).collect();
        let count: u64 = per_shard.iter().product();
        let entry_at =
            file.metadata()?.len() - (count * 16 + 4) + c_order(&local, &per_shard) as u64 * 16;
        let mut entry = [0u8; 16];
        file.read_exact_at(&mut entry, entry_at)?;
        let word = |k: usize| u64::from_le_bytes(entry[k..k + 8].try_into().unwrap());
        let mut bytes = vec![0u8; word(8) as usize];
        file.read_exact_at(&mut bytes, word(0))?;
        Ok(bytes)
    }

    /// Shards (or chunks) along each dimension of the array.
    fn grid(&self) -> Vec<u64> {
        (0..self.shape.len())
            .map(|d| self.array_shape[d] / self.shape[d])
            .collect()
    }

    /// Decodes `stored` into `out` (one unit's bytes).
    fn decode(&self, stored: &[u8], out: &mut [u8]) -> Result<()> {
        let n = match self.codec {
            Codec::Zstd { .. } => zstd::bulk::decompress_to_buffer(stored, out)?,
            // SAFETY: both buffers are valid for the lengths given.
            Codec::BloscLz4 { .. } => unsafe {
                blosc_src::blosc_decompress_ctx(
                    stored.as_ptr().cast(),
                    out.as_mut_ptr().cast(),
                    out.len(),
                    1,
                )
            }
            .try_into()
            .unwrap_or(0),
        };
        match n == self.bytes {
            true => Ok(()),
            false => Err(format!("a chunk decoded to {n} bytes, not {}", self.bytes).into()),
        }
    }
}

/// The index in a grid of `shape` at place `n` in C order.
fn unravel(mut n: usize, shape: &[u64]) -> Vec<u64> {
    let mut index = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        index[d] = n as u64 % shape[d];
        n /= shape[d] as usize;
    }
    index
}

/// Hands `put(offset in the box's bytes, bytes)` the rows of the chunk `decoded` (C order, at
/// `origin`, of `shape`, 2-byte items) that lie inside `b`.
fn copy_overlap(
    decoded: &[u8],
    origin: &[u64],
    shape: &[u64],
    put: impl Fn(usize, &[u8]),
    b: &Box3,
) {
    let dims = shape.len();
    let lo: Vec<u64> = (0..dims).map(|d| origin[d].max(b.start[d])).collect();
    let hi: Vec<u64> = (0..dims)
        .map(|d| (origin[d] + shape[d]).min(b.start[d] + b.count[d]))
        .collect();
    let strides = |extent: &[u64]| -> Vec<u64> {
        (0..dims)
            .map(|d| extent[d + 1..].iter().product())
            .collect()
    };
    let (chunk_strides, box_strides) = (strides(shape), strides(b.count));
    let run = (hi[dims - 1] - lo[dims - 1]) as usize * 2;
    let mut at = lo.clone(); // the first element of the current row
    loop {
        let offset = |base: &[u64], strides: &[u64]| -> usize {
            (0..dims)
                .map(|d| (at[d] - base[d]) * strides[d])
                .sum::<u64>() as usize
                * 2
        };
        let from = offset(origin, &chunk_strides);
        put(offset(b.start, &box_strides), &decoded[from..from + run]);
        // The next row: the dimensions before the last counted like an odometer.
        let mut d = dims - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            at[d] += 1;
            if at[d] < hi[d] {
                break;
            }
            at[d] = lo[d];
        }
    }
}

/// The place of `index` in C order of a grid of `shape`.
fn c_order(index: &[u64], shape: &[u64]) -> usize {
    (0..index.len()).fold(0, |at, d| at * shape[d] as usize + index[d] as usize)
}

/// The chunks of the array a metadata document describes: a v2 `.zarray` with a zstd or
/// blosc-lz4 compressor, or a v3 `zarr.json` of `uint16` with bytes + zstd and `c/` keys.
fn compressed_chunks(doc: &Value) -> Result<Chunks> {
    let int = |v: &Value, what: &str| -> Result<i32> {
        v.as_i64()
            .map(|n| n as i32)
            .ok_or_else(|| format!("no integer {what}").into())
    };
    if doc["zarr_format"] == 2 {
        let compressor = &doc["compressor"];
        let codec = match (compressor["id"].as_str(), compressor["cname"].as_str()) {
            (Some("zstd"), _) => Codec::Zstd {
                level: int(&compressor["level"], "zstd level")?,
            },
            (Some("blosc"), Some("lz4")) => Codec::BloscLz4 {
                clevel: int(&compressor["clevel"], "blosc clevel")?,
                shuffle: int(&compressor["shuffle"], "blosc shuffle")?,
            },
            _ => return Err(format!("no codec floor for compressor {compressor}").into()),
        };
        let (array_shape, shape) = shape_and_chunks(doc)?;
        return Ok(Chunks {
            keys: chunk_keys(doc)?,
            array_shape,
            shape,
            inner: None,
            bytes: chunk_bytes(doc)?,
            codec,
        });
    }
    let names = |codecs: &Value| -> Vec<String> {
        let list = codecs.as_array().map(Vec::as_slice).unwrap_or_default();
        list.iter()
            .filter_map(|c| Some(c["name"].as_str()?.to_string()))
            .collect()
    };
    let mut codecs = &doc["codecs"];
    let mut inner = None;
    if names(codecs) == ["sharding_indexed"] {
        let sharding = &codecs[0]["configuration"];
        if sharding["index_location"] != "end"
            || names(&sharding["index_codecs"]) != ["bytes", "crc32c"]
        {
            return Err(format!("no codec floor for the sharding {sharding}").into());
        }
        let shape = sharding["chunk_shape"]
            .as_array()
            .ok_or("no inner chunk shape")?;
        inner = Some(shape.iter().filter_map(Value::as_u64).collect::<Vec<u64>>());
        codecs = &sharding["codecs"];
    }
    if names(codecs) != ["bytes", "zstd"] {
        return Err(format!("no codec floor for the codecs {codecs}").into());
    }
    let level = int(&codecs[1]["configuration"]["level"], "zstd level")?;
    let as_v2 = serde_json::json!({
        "shape": doc["shape"],
        "chunks": doc["chunk_grid"]["configuration"]["chunk_shape"],
        "dtype": "<u2",
        "dimension_separator": "/",
    });
    let keys = chunk_keys(&as_v2)?.into_iter().map(|k| format!("c/{k}"));
    let (array_shape, shape) = shape_and_chunks(&as_v2)?;
    let unit = inner.as_ref().unwrap_or(&shape);
    Ok(Chunks {
        keys: keys.collect(),
        array_shape,
        bytes: unit.iter().product::<u64>() as usize * 2,
        shape,
        inner,
        codec: Codec::Zstd { level },
    })
}

/// The metadata document of the array at `path`: its `.zarray`, else its `zarr.json`.
fn metadata_at(path: &str) -> Result<Value> {
    if let Ok(zarray) = read_zarray(path) {
        return Ok(zarray);
    }
    let text = std::fs::read_to_string(format!("{path}/zarr.json"))?;
    Ok(serde_json::from_str(&text)?)
}

/// Copies chunk number `n` (in C order of the grid) of the C-order array `data` of `shape`
/// into `out`; the chunks must tile the array exactly.
fn gather_chunk(data: &[u8], shape: &[u64], chunk: &[u64], item: usize, n: usize, out: &mut [u8]) {
    let dims = shape.len();
    let grid: Vec<usize> = (0..dims).map(|d| (shape[d] / chunk[d]) as usize).collect();
    let mut origin = vec![0usize; dims];
    let mut rest = n;
    for d in (0..dims).rev() {
        origin[d] = rest % grid[d] * chunk[d] as usize;
        rest /= grid[d];
    }
    let row = chunk[dims - 1] as usize * item;
    let mut at = vec![0usize; dims]; // position within the chunk, the last dimension unused
    for dst in out.chunks_mut(row) {
        let offset = (0..dims).fold(0, |o, d| o * shape[d] as usize + origin[d] + at[d]);
        dst.copy_from_slice(&data[offset * item..offset * item + row]);
        for d in (0..dims - 1).rev() {
            at[d] += 1;
            if at[d] < chunk[d] as usize {
                break;
            }
            at[d] = 0;
        }
    }
}

impl Subject for CodecFloor {
    fn version(&self) -> String {
        format!(
            "zstd {}, blosc {}",
            zstd::zstd_safe::version_string(),
            blosc_version()
        )
    }

    fn threads(&self) -> String {
        match self.threads {
            1 => "1 (the calling thread; blosc single-threaded)".into(),
            _ => format!(
                "{} (rayon global pool; one chunk per task, blosc single-threaded)",
                rayon::current_num_threads()
            ),
        }
    }

    /// Every chunk file (or shard file, its inner chunks found through its index) read whole
    /// and each chunk decoded into its place in chunk order.
    fn read_all(&self, path: &str, sink: &mut Sink) -> Result<()> {
        let chunks = compressed_chunks(&metadata_at(path)?)?;
        let (units, per_shard, grid) = (chunks.units(), chunks.per_shard(), chunks.grid());
        let count: u64 = per_shard.iter().product();
        let mut out = self.out.borrow_mut();
        out.resize(units.iter().product::<u64>() as usize * chunks.bytes, 0);
        let slots = UnsafeCellSlice::new(out.as_mut_slice());
        let read_file = |(n, key): (usize, &String)| -> Result<()> {
            let stored = std::fs::read(format!("{path}/{key}"))?;
            let first = unravel(n, &grid);
            let last: Vec<u64> = per_shard.iter().map(|p| p - 1).collect();
            let index_at = stored.len().saturating_sub(count as usize * 16 + 4);
            for (place, local) in indexes_between(&vec![0; last.len()], &last)
                .iter()
                .enumerate()
            {
                let (offset, len) = match chunks.inner {
                    None => (0, stored.len()),
                    Some(_) => {
                        let at = index_at + place * 16;
                        let word = |k: usize| {
                            u64::from_le_bytes(stored[at + k..at + k + 8].try_into().unwrap())
                        };
                        (word(0) as usize, word(8) as usize)
                    }
                };
                let unit: Vec<u64> = (0..local.len())
                    .map(|d| first[d] * per_shard[d] + local[d])
                    .collect();
                let slot = c_order(&unit, &units) * chunks.bytes;
                // SAFETY: every unit has a slot of its own, written by this task alone.
                let dst = unsafe { slots.index_mut(slot..slot + chunks.bytes) };
                chunks.decode(&stored[offset..offset + len], dst)?;
            }
            Ok(())
        };
        match self.threads {
            1 => chunks.keys.iter().enumerate().try_for_each(read_file)?,
            _ => chunks.keys.par_iter().enumerate().try_for_each(read_file)?,
        }
        sink.take(&out);
        Ok(())
    }

    /// For each box in turn: each chunk it touches read (from its shard by its index entry
    /// when sharded), decoded into a buffer kept per thread and the box's part copied out, the
    /// chunks of a box in parallel.
    fn read_boxes(&self, path: &str, boxes: &[Box3], sink: &mut Sink) -> Result<()> {
        let chunks = compressed_chunks(&metadata_at(path)?)?;
        let Some(bytes) = largest(boxes, 2) else {
            return Ok(());
        };
        let unit = chunks.unit().to_vec();
        let mut buffer = vec![0u8; bytes];
        for b in boxes {
            let out = &mut buffer[..b.bytes(2)];
            let slots = UnsafeCellSlice::new(&mut *out);
            chunks_touched(b.start, b.count, &unit)
                .par_iter()
                .try_for_each(|index| -> Result<()> {
                    let stored = chunks.stored(path, index)?;
                    DECODED.with_borrow_mut(|decoded| {
                        decoded.resize(chunks.bytes, 0);
                        chunks.decode(&stored, decoded)?;
                        let origin: Vec<u64> =
                            (0..unit.len()).map(|d| index[d] * unit[d]).collect();
                        // SAFETY: the chunks of a box fill disjoint parts of it.
                        copy_overlap(
                            decoded,
                            &origin,
                            &unit,
                            |at, bytes| unsafe {
                                slots.index_mut(at..at + bytes.len()).copy_from_slice(bytes)
                            },
                            b,
                        );
                        Ok(())
                    })
                })?;
            sink.take(&out);
        }
        Ok(())
    }

    /// Writes the metadata document and every chunk: cut out of `data`, encoded by the
    /// codec's own library (blosc single-threaded per chunk) and written as a file, chunks in
    /// parallel on the rayon pool. The floor of writing that array.
    fn write(&self, path: &str, metadata: &Value, data: &[u16]) -> Result<()> {
        let chunks = compressed_chunks(metadata)?;
        let document = match metadata["zarr_format"] == 2 {
            true => ".zarray",
            false => "zarr.json",
        };
        std::fs::create_dir_all(path)?;
        std::fs::write(format!("{path}/{document}"), metadata.to_string())?;
        let source = bytes_of(data);
        let encode = |(n, key): (usize, &String)| -> Result<()> {
            ENCODE_BUFFERS.with_borrow_mut(|(chunk, out)| {
                chunk.resize(chunks.bytes, 0);
                gather_chunk(source, &chunks.array_shape, &chunks.shape, 2, n, chunk);
                out.resize(zstd::zstd_safe::compress_bound(chunk.len()) + 64 * 1024, 0);
                let n = match chunks.codec {
                    Codec::Zstd { level } => zstd::bulk::compress_to_buffer(chunk, out, level)?,
                    // SAFETY: `chunk` and `out` are valid for the lengths given.
                    Codec::BloscLz4 { clevel, shuffle } => unsafe {
                        blosc_src::blosc_compress_ctx(
                            clevel,
                            shuffle,
                            2,
                            chunk.len(),
                            chunk.as_ptr().cast(),
                            out.as_mut_ptr().cast(),
                            out.len(),
                            c"lz4".as_ptr(),
                            0,
                            1,
                        )
                    }
                    .try_into()
                    .map_err(|_| "blosc failed")?,
                };
                let file = format!("{path}/{key}");
                if let Some(dir) = std::path::Path::new(&file).parent() {
                    std::fs::create_dir_all(dir)?;
                }
                Ok(std::fs::write(file, &out[..n])?)
            })
        };
        match self.threads {
            1 => chunks.keys.iter().enumerate().try_for_each(encode),
            _ => chunks.keys.par_iter().enumerate().try_for_each(encode),
        }
    }
}

fn blosc_version() -> String {
    // SAFETY: blosc's version string is static and NUL-terminated.
    let version =
        unsafe { std::ffi::CStr::from_ptr(blosc_src::BLOSC_VERSION_STRING.as_ptr().cast()) };
    version.to_string_lossy().into_owned()
}

/// Bytes of one chunk of a `.zarray` whose dtype is a NumPy type string such as `<u2`.
fn chunk_bytes(zarray: &Value) -> Result<usize> {
    let (_, chunks) = shape_and_chunks(zarray)?;
    let dtype = zarray["dtype"].as_str().unwrap_or_default();
    let item: usize = dtype
        .get(2..)
        .and_then(|n| n.parse().ok())
        .ok_or("bad dtype")?;
    Ok(chunks.iter().product::<u64>() as usize * item)
}

impl Subject for RawFiles {
    fn version(&self) -> String {
        "-".into()
    }

    fn threads(&self) -> String {
        format!("{} (rayon global pool)", rayon::current_num_threads())
    }

    /// Reads every chunk file, which must hold exactly one chunk's bytes, into one buffer.
    fn read_all(&self, path: &str, sink: &mut Sink) -> Result<()> {
        let zarray = read_zarray(path)?;
        let (keys, size) = (chunk_keys(&zarray)?, chunk_bytes(&zarray)?);
        let mut out = vec![0u8; keys.len() * size];
        out.par_chunks_mut(size)
            .zip(&keys)
            .try_for_each(|(dst, key)| -> Result<()> {
                let mut file = std::fs::File::open(format!("{path}/{key}"))?;
                file.read_exact(dst)?;
                match file.read(&mut [0])? {
                    0 => Ok(()),
                    _ => Err(format!("{key} is larger than one chunk").into()),
                }
            })?;
        sink.take(&out);
        Ok(())
    }

    /// Writes `.zarray` and consecutive chunk-sized slices of `data` as the chunk files
    /// (`metadata` must be an uncompressed v2 `.zarray`).
    fn write(&self, path: &str, zarray: &Value, data: &[u16]) -> Result<()> {
        std::fs::create_dir_all(path)?;
        std::fs::write(format!("{path}/.zarray"), zarray.to_string())?;
        let (keys, size) = (chunk_keys(zarray)?, chunk_bytes(zarray)?);
        bytes_of(data)
            .par_chunks(size)
            .zip(&keys)
            .try_for_each(|(chunk, key)| std::fs::write(format!("{path}/{key}"), chunk))?;
        Ok(())
    }
}

/// Copies the array's bytes (loaded once from the raw source file given as `path`) into a
/// freshly allocated buffer: the memory floor of producing the array, page faults included.
#[derive(Default)]
pub struct Memcpy {
    source: OnceLock<Vec<u8>>,
}

/// Bytes each parallel copy task moves.
const COPY_BLOCK: usize = 1 << 20;

impl Subject for Memcpy {
    fn version(&self) -> String {
        "-".into()
    }

    fn threads(&self) -> String {
        format!(
            "{} (rayon global pool, 1 MiB blocks)",
            rayon::current_num_threads()
        )
    }

    fn read_all(&self, path: &str, sink: &mut Sink) -> Result<()> {
        if self.source.get().is_none() {
            let _ = self.source.set(std::fs::read(path)?);
        }
        let source = &self.source.get().expect("set above");
        let mut out = vec![0u8; source.len()];
        out.par_chunks_mut(COPY_BLOCK)
            .zip(source.par_chunks(COPY_BLOCK))
            .for_each(|(dst, src)| dst.copy_from_slice(src));
        sink.take(&out);
        Ok(())
    }
}
