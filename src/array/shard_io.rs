//! Sharded arrays (`sharding_indexed`): the engine works in the innermost chunks; a shard is
//! the group of chunks stored in one value, behind an index of `(offset, length)` pairs. Shards
//! may nest (an inner chunk is itself a shard), may have their dimensions transposed before
//! sharding (the index then lists inner chunks in the transposed order) and may be encoded as a
//! whole after sharding (bytes→bytes codecs: such a shard is read and decoded whole).
//!
//! Reads sort the touched chunks by shard and by their place in the shard's index: each shard is
//! opened once, its index read and checked with one ranged read, and only the chunks (and nested
//! shards' indexes) the selection needs are read, by ranged reads of the same open value, so
//! index and chunks come from one version of the shard even while a writer replaces it. Shards
//! and their chunks are decoded in parallel. Writes take the shard's lock (shards are written in
//! parallel, the chunks of one in turn, since nested parallel work under a lock can deadlock):
//! a write covering a whole shard encodes its chunks without reading; any other reads the shard,
//! re-encodes only the chunks it touches, keeps the others' bytes, and stores it once. Chunks
//! holding only the fill value are not stored (all-ones index entry), a nested shard left with
//! none is not stored either, and a shard left with none is erased.

use super::buffer::BufferLayout;
use super::chunk_cache::Lookup;
use super::chunk_io::{with_scratch, with_stored_buffer};
use super::shard_index_cache::ShardIndex;
use super::Array;
use crate::codec::{ChunkCodecs, CodecPipeline, ShardIndexCodecs};
use crate::error::{try_alloc_zeroed, Error, Result};
use crate::metadata::ChunkGrid;
use crate::parallel;
use crate::selection::OrthogonalPlan;
use crate::store::{read_again_if_changed, Lead, ValueReader};
use crate::strided::{copy_elements, fill_elements, ElementCopy, SharedBuffer};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The most sub-chunks one shard may hold (its index is 16 bytes each).
const MAX_INNER_CHUNKS: u64 = 1 << 28;

/// The most bytes a shard encoded as a whole (bytes→bytes codecs after sharding) may decode to.
const MAX_DECODED_SHARD_BYTES: usize = 1 << 34;

/// An index entry of an inner chunk never written.
const EMPTY: u64 = u64::MAX;

/// A chunk a call touches: the caller's id for it and its innermost-chunk grid coordinates.
pub(super) type ChunkRef = (usize, Vec<u64>);

/// What a read does with a chunk: `(id, coordinates, bytes or None when never written)`.
type ReadChunk<'a> = &'a (dyn Fn(usize, &[u64], Option<&[u8]>) -> Result<()> + Sync);

/// What a write makes of a chunk: `(id, old stored bytes)` to the new ones (`None`: not stored).
type UpdateChunk<'a> = &'a (dyn Fn(usize, Option<&[u8]>) -> Result<Option<Vec<u8>>> + Sync);

/// One level of sharding: how a shard of this level holds its sub-chunks.
#[derive(Debug)]
struct ShardLevel {
    /// The sub-chunk shape, in array dimensions.
    sub_chunk: Vec<u64>,
    /// Innermost chunks per sub-chunk along each dimension.
    innermost_per_sub: Vec<u64>,
    /// Sub-chunks per shard along each dimension.
    per_shard: Vec<u64>,
    /// The array dimension of each index dimension, slowest first.
    order: Vec<usize>,
    /// Sub-chunks per shard.
    count: usize,
    index: ShardIndexCodecs,
    at_start: bool,
    /// Bytes→bytes codecs of the whole shard (identity when there are none).
    whole: CodecPipeline,
}

/// How a sharded array's shards hold its chunks: the outermost level first.
#[derive(Debug, Clone)]
pub(super) struct ShardLayout {
    levels: Arc<[ShardLevel]>,
    /// Innermost chunks per (outermost) shard along each dimension (of the largest shard, in
    /// a rectilinear grid of shards of unequal lengths).
    per_shard: Vec<u64>,
    /// Innermost chunks per shard (of the largest).
    chunks_per_shard: u64,
    /// The array's grid of (outermost) shards.
    grid: ChunkGrid,
    /// The innermost chunk shape.
    innermost: Vec<u64>,
}

/// How many values (shards, or chunks read block by block) a read opens together (on a remote
/// store: their first requests in flight at once).
pub(super) const OPEN_BATCH: usize = 64;

/// Where a shard's bytes are: a range of a stored value read on demand, or in memory.
#[derive(Clone, Copy)]
enum Region<'a> {
    Stored {
        value: &'a dyn ValueReader,
        base: u64,
        len: u64,
    },
    Memory(&'a [u8]),
}

impl Region<'_> {
    fn len(&self) -> u64 {
        match self {
            Region::Stored { len, .. } => *len,
            Region::Memory(bytes) => bytes.len() as u64,
        }
    }

    /// The region's `n` bytes at `offset` (within it: indexes are checked).
    fn sub(&self, offset: u64, n: u64) -> Self {
        match *self {
            Region::Stored { value, base, .. } => Region::Stored {
                value,
                base: base + offset,
                len: n,
            },
            Region::Memory(bytes) => Region::Memory(&bytes[offset as usize..(offset + n) as usize]),
        }
    }

    /// Runs `f` on the region's `n` bytes at `offset`, read into this thread's buffer when stored.
    fn with_bytes<T>(
        &self,
        offset: u64,
        n: u64,
        name: &str,
        f: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<T> {
        match *self {
            Region::Memory(bytes) => f(&bytes[offset as usize..(offset + n) as usize]),
            Region::Stored { value, base, .. } => {
                let len = usize::try_from(n)
                    .map_err(|_| Error::TooLarge(format!("{name}: {n} bytes")))?;
                with_stored_buffer(len, name, |buf| {
                    value
                        .read_exact_at(base + offset, buf)
                        .map_err(|e| e.context(name))?;
                    f(buf)
                })
            }
        }
    }

    /// Says that the `(offset, length)` parts of the region will be read next (a value on a
    /// network fetches them now, all at once).
    fn prefetch(&self, parts: impl Iterator<Item = (u64, u64)>, name: &str) -> Result<()> {
        match *self {
            Region::Memory(_) => Ok(()),
            Region::Stored { value, base, .. } => {
                let parts: Vec<(u64, u64)> = parts.map(|(o, n)| (base + o, n)).collect();
                value.prefetch(&parts).map_err(|e| e.context(name))
            }
        }
    }
}

impl ShardLayout {
    /// Splits an array's codecs into those of the chunks the engine works in and, for a
    /// sharded array, the layout of its shards (on `grid`, whose every shard length the
    /// outermost inner chunks must divide).
    pub fn split(
        mut codecs: ChunkCodecs,
        grid: &ChunkGrid,
    ) -> Result<(ChunkCodecs, Option<ShardLayout>)> {
        let grid_chunks = grid
            .regular_shape()
            .map_or_else(|| grid.max_chunk_shape(), <[u64]>::to_vec);
        let mut levels: Vec<ShardLevel> = Vec::new();
        let mut shard_shape = grid_chunks.clone();
        while let Some(sharding) = codecs.sharding.take() {
            let sharding = *sharding;
            let per_shard: Vec<u64> = shard_shape
                .iter()
                .zip(&sharding.chunk_shape)
                .map(|(&s, &c)| s / c)
                .collect();
            let count = product(&per_shard)
                .filter(|&n| n <= MAX_INNER_CHUNKS)
                .ok_or_else(|| {
                    Error::Unsupported(format!(
                    "shards of {per_shard:?} inner chunks (at most {MAX_INNER_CHUNKS} per shard)"
                ))
                })?;
            levels.push(ShardLevel {
                sub_chunk: sharding.chunk_shape.clone(),
                innermost_per_sub: Vec::new(),
                per_shard,
                order: sharding.order,
                count: count as usize,
                index: sharding.index,
                at_start: sharding.index_at_start,
                whole: std::mem::take(&mut codecs.pipeline),
            });
            shard_shape = sharding.chunk_shape;
            codecs = sharding.inner;
        }
        let Some(top) = levels.first() else {
            return Ok((codecs, None));
        };
        for d in 0..grid.ndim() {
            let sub = top.sub_chunk[d];
            if let Some(len) = grid.axis(d).lengths().find(|len| len % sub != 0) {
                return Err(Error::InvalidMetadata(format!(
                    "the inner chunk shape {:?} does not divide the shard length {len} of dimension {d}",
                    top.sub_chunk
                )));
            }
        }
        for level in &mut levels {
            level.innermost_per_sub = level
                .sub_chunk
                .iter()
                .zip(&shard_shape)
                .map(|(&s, &c)| s / c)
                .collect();
        }
        let per_shard: Vec<u64> = grid_chunks
            .iter()
            .zip(&shard_shape)
            .map(|(&s, &c)| s / c)
            .collect();
        let chunks_per_shard = product(&per_shard)
            .ok_or_else(|| Error::Unsupported(format!("shards of {per_shard:?} chunks")))?;
        Ok((
            codecs,
            Some(ShardLayout {
                levels: levels.into(),
                per_shard,
                chunks_per_shard,
                grid: grid.clone(),
                innermost: shard_shape,
            }),
        ))
    }

    /// The same layout on `grid`, a lengthened version of this one's grid.
    pub fn with_grid(&self, grid: ChunkGrid) -> ShardLayout {
        ShardLayout {
            grid,
            ..self.clone()
        }
    }

    /// The array's grid of shards.
    pub fn grid(&self) -> &ChunkGrid {
        &self.grid
    }

    /// The shape shard lengths must be multiples of: the outermost level's inner chunks.
    pub fn shard_unit(&self) -> &[u64] {
        &self.levels[0].sub_chunk
    }

    /// Whether the shards differ in length along some dimension.
    fn unequal(&self) -> bool {
        self.grid.regular_shape().is_none()
    }

    /// The shape of the innermost chunks, those the engine works in.
    pub fn chunk_shape(&self) -> &[u64] {
        &self.levels.last().expect("at least one level").sub_chunk
    }

    /// The outermost shard holding the innermost chunk at `coords`.
    pub fn shard_of(&self, coords: &[u64]) -> Vec<u64> {
        if self.unequal() {
            return (0..coords.len())
                .map(|d| self.grid.axis(d).chunk_of(coords[d] * self.innermost[d]))
                .collect();
        }
        coords
            .iter()
            .zip(&self.per_shard)
            .map(|(&c, &n)| c / n)
            .collect()
    }

    /// Innermost chunks in the (outermost) shard at `shard`.
    fn chunks_in(&self, shard: &[u64]) -> u64 {
        if !self.unequal() {
            return self.chunks_per_shard;
        }
        (0..shard.len())
            .map(|d| self.grid.axis(d).len(shard[d]) / self.innermost[d])
            .product()
    }

    /// Sub-chunks in the shard of `level` holding the innermost chunk at `coords` (the
    /// entries of its index).
    fn count(&self, level: usize, coords: &[u64]) -> usize {
        let l = &self.levels[level];
        if level > 0 || !self.unequal() {
            return l.count;
        }
        let shard = self.shard_of(coords);
        (0..shard.len())
            .map(|d| self.grid.axis(d).len(shard[d]) / l.sub_chunk[d])
            .product::<u64>() as usize
    }

    /// The place in the index of a shard of `level` of the sub-chunk holding the innermost
    /// chunk at `coords`.
    fn position(&self, level: usize, coords: &[u64]) -> usize {
        let l = &self.levels[level];
        if level == 0 && self.unequal() {
            let shard = self.shard_of(coords);
            return l.order.iter().fold(0u64, |acc, &d| {
                let axis = self.grid.axis(d);
                let n = axis.len(shard[d]) / l.sub_chunk[d];
                let local = coords[d] - axis.start(shard[d]) / self.innermost[d];
                acc * n + local / l.innermost_per_sub[d]
            }) as usize;
        }
        l.order.iter().fold(0u64, |acc, &d| {
            let n = l.per_shard[d];
            acc * n + (coords[d] / l.innermost_per_sub[d]) % n
        }) as usize
    }

    /// The places of the innermost chunk at `coords` in the indexes of every level.
    fn path(&self, coords: &[u64]) -> Vec<usize> {
        (0..self.levels.len())
            .map(|k| self.position(k, coords))
            .collect()
    }

    /// Sorts chunks by outermost shard and by their places in its indexes, and splits them
    /// into one run per shard.
    fn by_shard(&self, mut chunks: Vec<ChunkRef>) -> Vec<(Vec<u64>, Vec<ChunkRef>)> {
        chunks.sort_by_cached_key(|(_, c)| (self.shard_of(c), self.path(c)));
        let mut shards: Vec<(Vec<u64>, Vec<ChunkRef>)> = Vec::new();
        for chunk in chunks {
            let shard = self.shard_of(&chunk.1);
            match shards.last_mut() {
                Some((s, run)) if *s == shard => run.push(chunk),
                _ => shards.push((shard, vec![chunk])),
            }
        }
        shards
    }
}

fn product(dims: &[u64]) -> Option<u64> {
    dims.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n))
}

impl ShardLevel {
    /// Bytes of the index of a shard of `count` sub-chunks.
    fn index_len(&self, count: usize) -> usize {
        self.index.len(count)
    }

    /// Reads and checks the index of the shard of `count` sub-chunks in `region`.
    fn read_index(&self, region: Region, name: &str, count: usize) -> Result<ShardIndex> {
        let (len, index_len) = (region.len(), self.index_len(count) as u64);
        if len < index_len {
            return Err(Error::CorruptChunk(format!(
                "{name} has {len} bytes, less than its {index_len}-byte index"
            )));
        }
        let at = if self.at_start { 0 } else { len - index_len };
        region.with_bytes(at, index_len, name, |bytes| {
            self.decode_index(bytes, len, name, count)
        })
    }

    /// Decodes and checks the index of the shard `name` of `len` bytes and `count`
    /// sub-chunks: its checksum, every entry inside the shard and outside the index, no two
    /// entries overlapping.
    fn decode_index(&self, bytes: &[u8], len: u64, name: &str, count: usize) -> Result<ShardIndex> {
        let corrupt = |why: String| Error::CorruptChunk(format!("{name}: {why}"));
        let body = self
            .index
            .entries(bytes)
            .map_err(|e| corrupt(format!("the index: {e}")))?;
        let word = |b: &[u8]| {
            let b: [u8; 8] = b.try_into().expect("8 bytes");
            if self.index.big_endian {
                u64::from_be_bytes(b)
            } else {
                u64::from_le_bytes(b)
            }
        };
        let index_len = self.index_len(count) as u64;
        let index_range = if self.at_start {
            0..index_len
        } else {
            len - index_len..len
        };
        let mut index = Vec::with_capacity(count);
        let mut used: Vec<(u64, u64)> = Vec::new();
        for (i, entry) in body.chunks_exact(16).enumerate() {
            let (offset, n) = (word(&entry[..8]), word(&entry[8..]));
            if (offset, n) == (EMPTY, EMPTY) {
                index.push(None);
                continue;
            }
            let end = offset.checked_add(n).filter(|&e| e <= len).ok_or_else(|| {
                corrupt(format!(
                    "inner chunk {i} at {offset} + {n} lies outside the shard's {len} bytes"
                ))
            })?;
            if n > 0 && offset < index_range.end && end > index_range.start {
                return Err(corrupt(format!("inner chunk {i} overlaps the index")));
            }
            used.push((offset, end));
            index.push(Some((offset, n)));
        }
        used.sort_unstable();
        if let Some(w) = used
            .windows(2)
            .find(|w| w[1].0 < w[0].1 && w[1].0 != w[1].1)
        {
            return Err(corrupt(format!(
                "inner chunks at {}..{} and {}..{} overlap",
                w[0].0, w[0].1, w[1].0, w[1].1
            )));
        }
        Ok(index)
    }

    /// Assembles a shard from its sub-chunks' encoded bytes (`None`: empty), in index order,
    /// and encodes it with the codecs of the whole shard.
    fn assemble(&self, chunks: &[Option<Cow<[u8]>>], name: &str) -> Result<Vec<u8>> {
        let data: usize = chunks.iter().flatten().map(|c| c.len()).sum();
        let index_len = self.index_len(chunks.len());
        let mut out = Vec::with_capacity(data + index_len);
        let mut index = Vec::with_capacity(index_len);
        let base = if self.at_start { index_len } else { 0 } as u64;
        for chunk in chunks {
            let (offset, n) = match chunk {
                Some(c) => {
                    let at = base + out.len() as u64;
                    out.extend_from_slice(c);
                    (at, c.len() as u64)
                }
                None => (EMPTY, EMPTY),
            };
            for v in [offset, n] {
                index.extend(if self.index.big_endian {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                });
            }
        }
        let mut index = self.index.encode(index)?;
        let shard = if self.at_start {
            index.extend(out);
            index
        } else {
            out.extend(index);
            out
        };
        if self.whole.is_identity() {
            return Ok(shard);
        }
        let mut encoded = Vec::new();
        self.whole
            .encode_into(&shard, &mut encoded)
            .map_err(|e| e.context(name))?;
        Ok(encoded)
    }

    /// Decodes a shard encoded as a whole.
    fn decode_whole(&self, raw: &[u8], name: &str) -> Result<Vec<u8>> {
        self.whole
            .decode_to_vec(raw, MAX_DECODED_SHARD_BYTES)
            .map_err(|e| e.context(name))
    }
}

impl Array {
    /// Runs `f(id, stored bytes)` for each of `chunks` (`None`: never written); shards and the
    /// chunks of each in parallel, each shard opened once.
    pub(super) fn read_stored_chunks(&self, chunks: Vec<ChunkRef>, f: ReadChunk) -> Result<()> {
        let forms = self.forms();
        let layout = forms.shard_layout();
        let single = chunks.len() == 1;
        let mut shards = layout.by_shard(chunks);
        let top = &layout.levels[0];
        if self.store.capabilities().batched {
            // Shards read whole are fetched whole, many at once, each decoded on the pool as
            // it arrives; the others are opened one by one for the parts they need.
            let whole: Vec<_>;
            (whole, shards) = shards
                .into_iter()
                .partition(|(shard, chunks)| chunks.len() as u64 == layout.chunks_in(shard));
            let keys: Vec<String> = whole
                .iter()
                .map(|(shard, _)| self.chunk_key(shard))
                .collect();
            self.store
                .get_many(whole.len(), &|i| keys[i].clone(), &|i, raw| {
                    let chunks = &whole[i].1;
                    let Some(raw) = raw else {
                        return for_each(chunks, |(id, coords)| f(*id, coords, None));
                    };
                    let name = format!("shard {:?}", keys[i]);
                    match top.whole.is_identity() {
                        true => self.read_level(layout, 0, Region::Memory(raw), &name, chunks, f),
                        false => {
                            let decoded = top.decode_whole(raw, &name)?;
                            let region = Region::Memory(&decoded);
                            self.read_level(layout, 0, region, &name, chunks, f)
                        }
                    }
                })?;
        }
        // The first request for a shard fetches its index at the end (with the value's length)
        // and, on a remote store, the parts the chunks read need, for a batch of shards at
        // once; the shards are then read in parallel.
        // (Shards of unequal lengths have indexes of unequal lengths: opened plainly.)
        let simple = !top.at_start && top.whole.is_identity() && !layout.unequal();
        let tail = if simple {
            top.index_len(top.count) as u64
        } else {
            0
        };
        for batch in shards.chunks(OPEN_BATCH) {
            let keys: Vec<String> = batch
                .iter()
                .map(|(shard, _)| self.chunk_key(shard))
                .collect();
            let parts = |i: usize, tail: &[u8], len: u64| -> Vec<(u64, u64)> {
                let at = tail.len().checked_sub(top.index_len(top.count));
                let Some(at) = at.filter(|_| simple) else {
                    return Vec::new();
                };
                // A bad index is reported when the shard is read.
                let Ok(index) = top.decode_index(&tail[at..], len, &keys[i], top.count) else {
                    return Vec::new();
                };
                let chunks = &batch[i].1;
                chunks
                    .iter()
                    .filter_map(|(_, coords)| index[layout.position(0, coords)])
                    .collect()
            };
            let readers = self.store.open_many(
                batch.len(),
                &|i| keys[i].clone(),
                Lead::Tail(tail),
                &parts,
            )?;
            let read_shard = |i: &usize, reader: Option<&dyn ValueReader>| -> Result<()> {
                let (chunks, name) = (&batch[*i].1, format!("shard {:?}", keys[*i]));
                let Some(reader) = reader else {
                    return for_each(chunks, |(id, coords)| f(*id, coords, None));
                };
                let len = reader.len();
                if top.whole.is_identity() {
                    let region = Region::Stored {
                        value: reader,
                        base: 0,
                        len,
                    };
                    return self.read_level(layout, 0, region, &name, chunks, f);
                }
                let raw = with_stored_buffer(len as usize, &name, |buf| {
                    reader.read_exact_at(0, buf).map_err(|e| e.context(&name))?;
                    top.decode_whole(buf, &name)
                })?;
                self.read_level(layout, 0, Region::Memory(&raw), &name, chunks, f)
            };
            // A shard replaced while it was read is opened and read again.
            let read_shard = |i: &usize| -> Result<()> {
                let mut first = Some(readers[*i].as_deref());
                read_again_if_changed(|| match first.take() {
                    Some(reader) => read_shard(i, reader),
                    None => read_shard(i, self.store.open_value_tail(&keys[*i], tail)?.as_deref()),
                })
            };
            let indices: Vec<usize> = (0..batch.len()).collect();
            run_unless_single(single, || for_each(&indices, read_shard))?;
        }
        Ok(())
    }

    /// The index of the shard of `level` and `count` sub-chunks in `region` (`name`: the
    /// shard's, one per key); at the top level of a stored value whose version the store can
    /// tell, from the handle's shard index cache when that version's index was read before.
    fn index_of(
        &self,
        level: &ShardLevel,
        top: bool,
        count: usize,
        region: Region,
        name: &str,
    ) -> Result<Arc<ShardIndex>> {
        let read = || Ok(Arc::new(level.read_index(region, name, count)?));
        let version = match region {
            Region::Stored { value, .. } if top => value.version(),
            _ => None,
        };
        let Some(version) = version else {
            return read();
        };
        if let Some(index) = self.shard_indexes.get(name, version) {
            return Ok(index);
        }
        let index = read()?;
        self.shard_indexes.put(name, version, index.clone());
        Ok(index)
    }

    /// Reads the chunks under the shard of `level` in `region` (of `layout`).
    fn read_level(
        &self,
        layout: &ShardLayout,
        level: usize,
        region: Region,
        name: &str,
        chunks: &[ChunkRef],
        f: ReadChunk,
    ) -> Result<()> {
        let count = chunks
            .first()
            .map_or(layout.levels[level].count, |(_, c)| layout.count(level, c));
        let index = self.index_of(&layout.levels[level], level == 0, count, region, name)?;
        let Some(next) = layout.levels.get(level + 1) else {
            let wanted = chunks
                .iter()
                .filter_map(|(_, c)| index[layout.position(level, c)]);
            region.prefetch(wanted, name)?;
            return for_each(chunks, |(id, coords)| {
                match index[layout.position(level, coords)] {
                    None => f(*id, coords, None),
                    Some((offset, n)) => {
                        let name = self.chunk_name(coords).to_string();
                        region.with_bytes(offset, n, &name, |raw| f(*id, coords, Some(raw)))
                    }
                }
            });
        };
        let runs: Vec<&[ChunkRef]> = chunks
            .chunk_by(|a, b| layout.position(level, &a.1) == layout.position(level, &b.1))
            .collect();
        for_each(&runs, |run| {
            let pos = layout.position(level, &run[0].1);
            let Some((offset, n)) = index[pos] else {
                return run.iter().try_for_each(|(id, coords)| f(*id, coords, None));
            };
            let name = format!("{name} inner shard {pos}");
            if next.whole.is_identity() {
                return self.read_level(layout, level + 1, region.sub(offset, n), &name, run, f);
            }
            let decoded =
                region.with_bytes(offset, n, &name, |raw| next.decode_whole(raw, &name))?;
            self.read_level(layout, level + 1, Region::Memory(&decoded), &name, run, f)
        })
    }

    /// Rewrites the shards holding `chunks`: `f(id, old stored bytes)` gives each chunk's new
    /// stored bytes (`None`: not stored), shards in parallel. `covers(id)` says the old bytes
    /// are not needed: those chunks are encoded in parallel before the shard is read (so `f`
    /// must not depend on what is stored), the others in turn while it is rewritten, and a
    /// shard whose every chunk is covered is not read. Shards are rewritten as one
    /// read-modify-write each ([`Array::update_chunk`]); on a remote store, those the write
    /// covers whole are sent with many requests in flight.
    pub(super) fn update_stored_chunks(
        &self,
        chunks: Vec<ChunkRef>,
        covers: &(dyn Fn(usize) -> bool + Sync),
        f: UpdateChunk,
    ) -> Result<()> {
        let forms = self.forms();
        let layout = forms.shard_layout();
        let single = chunks.len() == 1;
        let shards = layout.by_shard(chunks);
        // The new shard holding `chunks`, whose old stored bytes are `old`, with the chunks
        // encoded up front taken from `ready`.
        let new_shard = |name: &str, chunks: &[ChunkRef], ready: &Encoded, old: Option<&[u8]>| {
            let f = |id: usize, old: Option<&[u8]>| ready.take(id).map_or_else(|| f(id, old), Ok);
            let old = match old {
                Some(raw) if !layout.levels[0].whole.is_identity() => {
                    Some(Cow::Owned(layout.levels[0].decode_whole(raw, name)?))
                }
                other => other.map(Cow::Borrowed),
            };
            self.rebuild(layout, 0, old.as_deref(), name, chunks, &f)
        };
        let invalidate = |chunks: &[ChunkRef]| {
            for (_, coords) in chunks {
                self.chunk_cache.invalidate(&self.cache_key(coords));
            }
        };
        let whole = |shard: &[u64], chunks: &[ChunkRef]| {
            chunks.len() as u64 == layout.chunks_in(shard)
                && chunks.iter().all(|(id, _)| covers(*id))
        };
        let (sent, updated): (Vec<_>, Vec<_>) = match self.store.capabilities().batched {
            true => shards
                .into_iter()
                .partition(|(shard, chunks)| whole(shard, chunks)),
            false => (Vec::new(), shards),
        };
        let result = self.store.set_many(sent.len(), &|i| {
            let (shard, chunks) = &sent[i];
            let key = self.chunk_key(shard);
            let ready = Encoded::new(chunks, covers, f)?;
            let new = new_shard(&format!("shard {key:?}"), chunks, &ready, None)?;
            Ok(Some((key, new)))
        });
        sent.iter().for_each(|(_, chunks)| invalidate(chunks));
        result?;
        let write_shard = |(shard, chunks): &(Vec<u64>, Vec<ChunkRef>)| -> Result<()> {
            let key = self.chunk_key(shard);
            let name = format!("shard {key:?}");
            // Encoded before the shard's lock is taken: under it, work stays on this thread.
            let ready = Encoded::new(chunks, covers, f)?;
            let result = match whole(shard, chunks) {
                true => new_shard(&name, chunks, &ready, None).and_then(|new| {
                    let _lock = self.store.lock_chunk(&key)?;
                    match new {
                        Some(bytes) => self.store.set(&key, &bytes),
                        None => self.erase_chunk(&key),
                    }
                }),
                false => self.update_chunk(&key, |old, new| {
                    Ok(Self::into_update(
                        new_shard(&name, chunks, &ready, old)?,
                        new,
                    ))
                }),
            };
            invalidate(chunks);
            result
        };
        run_unless_single(single, || for_each(&updated, write_shard))
    }

    /// The new encoded shard of `level` (of `layout`) whose old decoded bytes are `old`,
    /// with `chunks` replaced by what `f` makes of them; `None` when it holds no chunk.
    fn rebuild(
        &self,
        layout: &ShardLayout,
        level: usize,
        old: Option<&[u8]>,
        name: &str,
        chunks: &[ChunkRef],
        f: UpdateChunk,
    ) -> Result<Option<Vec<u8>>> {
        let this = &layout.levels[level];
        let count = chunks
            .first()
            .map_or(this.count, |(_, c)| layout.count(level, c));
        let mut entries: Vec<Option<Cow<[u8]>>> = match old {
            Some(old) => this
                .read_index(Region::Memory(old), name, count)?
                .into_iter()
                .map(|e| e.map(|(o, n)| Cow::Borrowed(&old[o as usize..(o + n) as usize])))
                .collect(),
            None => vec![None; count],
        };
        match layout.levels.get(level + 1) {
            // Sequential while the shard's lock is held: waiting on nested parallel work could
            // make this thread run another shard's write, which would wait for a lock this
            // thread (or one waiting on it) holds.
            None => {
                for (id, coords) in chunks {
                    let pos = layout.position(level, coords);
                    entries[pos] = f(*id, entries[pos].as_deref())?.map(Cow::Owned);
                }
            }
            Some(next) => {
                for run in chunks
                    .chunk_by(|a, b| layout.position(level, &a.1) == layout.position(level, &b.1))
                {
                    let pos = layout.position(level, &run[0].1);
                    let name = format!("{name} inner shard {pos}");
                    let old_sub = match entries[pos].as_deref() {
                        Some(raw) if !next.whole.is_identity() => {
                            Some(Cow::Owned(next.decode_whole(raw, &name)?))
                        }
                        other => other.map(Cow::Borrowed),
                    };
                    let new = self.rebuild(layout, level + 1, old_sub.as_deref(), &name, run, f)?;
                    entries[pos] = new.map(Cow::Owned);
                }
            }
        }
        if entries.iter().all(Option::is_none) {
            return Ok(None);
        }
        this.assemble(&entries, name).map(Some)
    }
}

impl Array {
    /// Reads an orthogonal selection of a sharded array: each touched chunk decoded straight
    /// into the caller's buffer where it lands whole, else through this thread's scratch (or
    /// the chunk cache, when it is on).
    pub(super) fn read_sharded(
        &self,
        plan: &OrthogonalPlan,
        buffer: &BufferLayout,
        out: SharedBuffer,
        how: &ElementCopy,
        fill: &[u8],
    ) -> Result<()> {
        let scatter = |i: usize, chunk: Option<&[u8]>| {
            let task = plan.chunk(i as u64);
            let dims = self.task_offsets(&*self.form(&task.coords)?, &task, buffer, true);
            // SAFETY: the tasks of one selection write disjoint elements of a non-overlapping
            // layout.
            unsafe {
                match chunk {
                    None => fill_elements(out, &dims, fill),
                    Some(chunk) => copy_elements(chunk, out, &dims, how),
                }
            }
        };
        if self.caches_chunks() {
            return self.read_decoded_chunks(plan_chunks(plan), &|i, _, chunk| scatter(i, chunk));
        }
        self.read_stored_chunks(plan_chunks(plan), &|i, coords, raw| {
            let name = self.chunk_name(coords);
            self.place_stored_chunk(&plan.chunk(i as u64), &name, raw, buffer, out, how, fill)
        })
    }

    /// Runs `f(id, coordinates, decoded chunk or None when never written)` for each of
    /// `chunks`: from the chunk cache when it is on (what it misses read, decoded and cached),
    /// else decoded into this thread's scratch.
    pub(super) fn read_decoded_chunks(&self, chunks: Vec<ChunkRef>, f: ReadChunk) -> Result<()> {
        if !self.caches_chunks() {
            return self.read_stored_chunks(chunks, &|id, coords, raw| match raw {
                None => f(id, coords, None),
                Some(raw) => {
                    let name = self.chunk_name(coords);
                    let form = self.form(coords)?;
                    self.with_decoded_chunk(&form, raw, &name, |chunk| f(id, coords, Some(chunk)))
                }
            });
        }
        let mut misses = Vec::new();
        let mut tickets = HashMap::new();
        for (id, coords) in chunks {
            match self.chunk_cache.lookup(&self.cache_key(&coords)) {
                Lookup::Hit(chunk) => f(id, &coords, chunk.as_deref().map(Vec::as_slice))?,
                Lookup::Miss(ticket) => {
                    tickets.insert(id, ticket);
                    misses.push((id, coords));
                }
            }
        }
        self.read_stored_chunks(misses, &|id, coords, raw| {
            let chunk = match raw {
                None => None,
                Some(raw) => {
                    let form = self.form(coords)?;
                    let mut chunk = try_alloc_zeroed(form.nbytes, "a cached chunk")?;
                    self.decode_chunk(&form, raw, &mut chunk, &self.chunk_name(coords))?;
                    Some(Arc::new(chunk))
                }
            };
            let ticket = tickets[&id];
            self.chunk_cache
                .insert(self.cache_key(coords), chunk.clone(), ticket);
            f(id, coords, chunk.as_deref().map(Vec::as_slice))
        })
    }

    /// The chunk cache's key of the inner chunk at `coords`.
    fn cache_key(&self, coords: &[u64]) -> String {
        self.chunk_name(coords).to_string()
    }

    /// Writes an orthogonal selection of a sharded array: each touched chunk is patched (or,
    /// when the selection covers it, assembled from the caller's data) and re-encoded.
    pub(super) fn write_sharded(
        &self,
        plan: &OrthogonalPlan,
        buffer: &BufferLayout,
        data: &[u8],
        how: &ElementCopy,
    ) -> Result<()> {
        // Writing some fields of a record keeps the others: the old chunk is always needed.
        let covers =
            |i: usize| how.ranges.is_empty() && plan.chunk(i as u64).covers_chunk_in_array();
        self.update_stored_chunks(plan_chunks(plan), &covers, &|i, old| {
            let task = plan.chunk(i as u64);
            let name = self.chunk_name(&task.coords);
            let form = self.form(&task.coords)?;
            let dims = self.task_offsets(&form, &task, buffer, false);
            with_scratch(form.nbytes, |chunk| {
                if !covers(i) {
                    match old {
                        Some(raw) => self.decode_chunk(&form, raw, chunk, &name)?,
                        None => self.fill_chunk(chunk),
                    }
                } else if !task.is_whole_chunk() {
                    self.fill_chunk(chunk);
                }
                // SAFETY: `chunk` is this thread's own scratch buffer.
                unsafe { copy_elements(data, SharedBuffer::new(chunk), &dims, how)? };
                self.encode_unless_fill(&form, chunk, &name)
            })
        })
    }
}

/// The chunks of a plan's tasks, each with its task's index as id.
pub(super) fn plan_chunks(plan: &OrthogonalPlan) -> Vec<ChunkRef> {
    (0..plan.chunk_count())
        .map(|i| (i as usize, plan.chunk(i).coords))
        .collect()
}

/// Runs `f` on each item, in parallel when there are several.
/// Runs `work` on the pool, or on the caller's thread when it is a single task (handing it
/// to a worker and waiting costs more than a small task takes).
fn run_unless_single(single: bool, work: impl FnOnce() -> Result<()> + Send) -> Result<()> {
    if single {
        work()
    } else {
        parallel::run(work)
    }
}

/// The new stored bytes of the chunks a write covers, encoded in parallel before their
/// shard is rewritten; each is taken once (a shard rewritten again after a conflicting
/// write encodes them anew).
struct Encoded {
    slot: HashMap<usize, usize>,
    bytes: Mutex<Vec<Option<Option<Vec<u8>>>>>,
}

impl Encoded {
    /// Encodes the chunks of `chunks` that `covers` says need no old bytes.
    fn new(
        chunks: &[ChunkRef],
        covers: &(dyn Fn(usize) -> bool + Sync),
        f: UpdateChunk,
    ) -> Result<Encoded> {
        let bytes = for_each_collect(chunks, |(id, _)| match covers(*id) {
            true => f(*id, None).map(Some),
            false => Ok(None),
        })?;
        let slot = chunks
            .iter()
            .enumerate()
            .map(|(j, (id, _))| (*id, j))
            .collect();
        Ok(Encoded {
            slot,
            bytes: Mutex::new(bytes),
        })
    }

    /// The encoded bytes of chunk `id`, if it was encoded and not taken yet.
    fn take(&self, id: usize) -> Option<Option<Vec<u8>>> {
        self.bytes.lock().unwrap_or_else(|p| p.into_inner())[self.slot[&id]].take()
    }
}

/// `f` of each item, in order, in parallel when there are several.
fn for_each_collect<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R> + Sync + Send,
) -> Result<Vec<R>> {
    match items {
        [one] => Ok(vec![f(one)?]),
        _ => items.par_iter().map(f).collect(),
    }
}

fn for_each<T: Sync>(items: &[T], f: impl Fn(&T) -> Result<()> + Sync + Send) -> Result<()> {
    match items {
        [] => Ok(()),
        [one] => f(one),
        _ => items.par_iter().try_for_each(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{OpenMode, StoreHandle};

    fn sharded(store: &std::sync::Arc<StoreHandle>, at: &str, codecs: &str) -> Array {
        let doc = format!(
            r#"{{"zarr_format": 3, "shape": [10, 9], "data_type": "int32",
                "chunk_grid": {{"name": "regular", "configuration": {{"chunk_shape": [4, 6]}}}},
                "fill_value": -1,
                "codecs": [{{"name": "sharding_indexed", "configuration": {{"chunk_shape": [2, 3],
                    "codecs": {codecs}, "index_location": "{at}"}}}}]}}"#
        );
        Array::create(store.clone(), "a", &doc).unwrap()
    }

    fn values(n: usize) -> Vec<u8> {
        (0..n as i32).flat_map(|v| (v * 7).to_ne_bytes()).collect()
    }

    #[test]
    fn round_trips_boxes_and_skips_empty_inner_chunks() {
        for (at, codecs) in [
            ("end", r#"[{"name": "bytes"}]"#),
            (
                "start",
                r#"[{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "zstd"}]"#,
            ),
        ] {
            let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
            let a = sharded(&store, at, codecs);
            let all = values(90);
            a.write_region(&[0, 0], &[10, 9], &all).unwrap();
            let mut back = vec![0u8; all.len()];
            a.read_region(&[0, 0], &[10, 9], &mut back).unwrap();
            assert_eq!(back, all, "{at} {codecs}");
            // Exactly one shard: its inner chunks are not contiguous in the buffer.
            let mut one = vec![0u8; 4 * 6 * 4];
            a.read_region(&[4, 0], &[4, 6], &mut one).unwrap();
            let want: Vec<u8> = (4..8)
                .flat_map(|r| all[(r * 9) * 4..(r * 9 + 6) * 4].to_vec())
                .collect();
            assert_eq!(one, want, "one shard, {at}");
            // A partial write keeps the rest of its shards.
            let patch: Vec<u8> = [5i32; 6].iter().flat_map(|v| v.to_ne_bytes()).collect();
            a.write_region(&[3, 2], &[2, 3], &patch).unwrap();
            let mut part = vec![0u8; 4 * 4 * 4];
            a.read_region(&[2, 1], &[4, 4], &mut part).unwrap();
            let got: Vec<i32> = part
                .chunks(4)
                .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
                .collect();
            let expect = |r: usize, c: usize| {
                if (3..5).contains(&r) && (2..5).contains(&c) {
                    5
                } else {
                    (r * 9 + c) as i32 * 7
                }
            };
            let want: Vec<i32> = (2..6)
                .flat_map(|r| (1..5).map(move |c| expect(r, c)))
                .collect();
            assert_eq!(got, want);
            // Writing the fill value everywhere erases every shard.
            let fill: Vec<u8> = [-1i32; 90].iter().flat_map(|v| v.to_ne_bytes()).collect();
            a.write_region(&[0, 0], &[10, 9], &fill).unwrap();
            assert!(store.list_prefix("a/c/").unwrap().is_empty());
        }
    }

    /// A handle keeps the indexes of the shards it read from files; a shard another handle
    /// replaced, or another program rewrote in place, is read afresh.
    #[test]
    fn reads_shards_rewritten_since_their_index_was_kept() {
        let dir = std::env::temp_dir().join(format!("libzarr-shard-index-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let location = dir.to_str().unwrap();
        let store = StoreHandle::open(location, OpenMode::Write).unwrap();
        let reader = sharded(&store, "end", r#"[{"name": "bytes"}, {"name": "zstd"}]"#);
        let read_one = |a: &Array| {
            let mut out = [0u8; 4];
            a.read_region(&[0, 0], &[1, 1], &mut out).unwrap();
            i32::from_ne_bytes(out)
        };
        assert_eq!(read_one(&reader), -1);
        let writer =
            Array::open(StoreHandle::open(location, OpenMode::Write).unwrap(), "a").unwrap();
        for value in [5i32, 6] {
            writer
                .write_region(&[0, 0], &[1, 1], &value.to_ne_bytes())
                .unwrap();
            assert_eq!(read_one(&reader), value);
        }
        // Another program rewrites the shard in place (same file), with other inner chunks.
        let mut whole = values(90);
        whole[..4].copy_from_slice(&7i32.to_ne_bytes());
        writer.write_region(&[0, 0], &[10, 9], &whole).unwrap();
        let shard = dir.join("a/c/0/0");
        let rewritten = std::fs::read(&shard).unwrap();
        writer
            .write_region(&[0, 0], &[1, 1], &6i32.to_ne_bytes())
            .unwrap();
        assert_eq!(read_one(&reader), 6);
        std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&shard)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &rewritten))
            .unwrap();
        assert_eq!(read_one(&reader), 7);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A 10×9 int32 array in 4×6 shards with `codecs`, checked against a model through box
    /// writes, point writes, and box and point reads.
    fn check_against_model(codecs: &str) {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let doc = format!(
            r#"{{"zarr_format": 3, "shape": [10, 9], "data_type": "int32",
                "chunk_grid": {{"name": "regular", "configuration": {{"chunk_shape": [4, 6]}}}},
                "fill_value": -1, "codecs": {codecs}}}"#
        );
        let a = Array::create(store.clone(), "a", &doc).unwrap();
        let mut model = vec![-1i32; 90];
        let as_bytes = |v: &[i32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_ne_bytes()).collect() };
        let read_all = |a: &Array| -> Vec<i32> {
            let mut out = vec![0u8; 360];
            a.read_region(&[0, 0], &[10, 9], &mut out).unwrap();
            out.chunks(4)
                .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
                .collect()
        };
        for (start, count, base) in [
            ([1, 2], [5, 5], 100),
            ([0, 0], [10, 9], 0),
            ([3, 3], [2, 4], 500),
        ] {
            let values: Vec<i32> = (0..count[0] * count[1]).map(|v| v as i32 + base).collect();
            a.write_region(&start, &count, &as_bytes(&values)).unwrap();
            for r in 0..count[0] {
                for c in 0..count[1] {
                    model[((start[0] + r) * 9 + start[1] + c) as usize] =
                        values[(r * count[1] + c) as usize];
                }
            }
            assert_eq!(read_all(&a), model, "{codecs} after {start:?}+{count:?}");
        }
        let points = [0u64, 0, 9, 8, 4, 6, 5, 5, 2, 7];
        a.write_points(5, &points, &as_bytes(&[7, 8, 9, 10, 11]))
            .unwrap();
        for (p, v) in points.chunks(2).zip([7, 8, 9, 10, 11]) {
            model[(p[0] * 9 + p[1]) as usize] = v;
        }
        assert_eq!(read_all(&a), model, "{codecs} after points");
        let mut got = vec![0u8; 20];
        a.read_points(5, &points, &mut got).unwrap();
        assert_eq!(got, as_bytes(&[7, 8, 9, 10, 11]), "{codecs}");
        // Fill everywhere: every shard (and nested shard) disappears.
        a.write_region(&[0, 0], &[10, 9], &as_bytes(&[-1; 90]))
            .unwrap();
        assert!(store.list_prefix("a/c/").unwrap().is_empty(), "{codecs}");
    }

    #[test]
    fn nested_transposed_and_whole_encoded_shards_match_a_model() {
        for codecs in [
            r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3],
                "codecs": [{"name": "sharding_indexed", "configuration": {
                    "chunk_shape": [1, 3], "codecs": [{"name": "bytes"}],
                    "index_location": "start"}}, {"name": "gzip"}]}}]"#,
            r#"[{"name": "transpose", "configuration": {"order": [1, 0]}},
                {"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 2],
                "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}]}}]"#,
            r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2],
                "codecs": [{"name": "bytes"}]}}, {"name": "zstd"}, {"name": "crc32c"}]"#,
        ] {
            check_against_model(codecs);
        }
    }

    /// numcodecs' CRC32 and Adler32 after the index, as zarr-python writes them: the checksum
    /// before the index (their default) or after it, and a flipped bit found.
    #[test]
    fn index_checksums_of_numcodecs_go_where_their_location_says() {
        for (codec, at_start) in [
            (r#"{"name": "numcodecs.crc32", "configuration": {}}"#, true),
            (
                r#"{"name": "numcodecs.adler32", "configuration": {"location": "end"}}"#,
                false,
            ),
        ] {
            let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
            let doc = format!(
                r#"{{"zarr_format": 3, "shape": [4, 6], "data_type": "int32",
                "chunk_grid": {{"name": "regular", "configuration": {{"chunk_shape": [4, 6]}}}},
                "fill_value": -1, "codecs": [{{"name": "sharding_indexed", "configuration": {{
                    "chunk_shape": [2, 3], "codecs": [{{"name": "bytes"}}],
                    "index_codecs": [{{"name": "bytes"}}, {codec}]}}}}]}}"#
            );
            let a = Array::create(store.clone(), "a", &doc).unwrap();
            a.write_region(&[0, 0], &[4, 6], &values(24)).unwrap();
            let mut out = vec![0u8; 24 * 4];
            a.read_region(&[0, 0], &[4, 6], &mut out).unwrap();
            assert_eq!(out, values(24), "{codec}");
            // 4 inner chunks of 24 bytes, then the 68-byte index.
            let shard = store.get("a/c/0/0").unwrap().unwrap();
            assert_eq!(shard.len(), 96 + 68, "{codec}");
            let (sum, entries) = match at_start {
                true => (&shard[96..100], &shard[100..]),
                false => (&shard[160..], &shard[96..160]),
            };
            let expected = match at_start {
                true => {
                    let mut crc = flate2::Crc::new();
                    crc.update(entries);
                    crc.sum()
                }
                // Adler-32 by its definition (RFC 1950), apart from the codec's own.
                false => {
                    let (a, b) = entries.iter().fold((1u32, 0u32), |(a, b), &x| {
                        let a = (a + u32::from(x)) % 65521;
                        (a, (b + a) % 65521)
                    });
                    (b << 16) | a
                }
            };
            assert_eq!(sum, expected.to_le_bytes(), "{codec}");
            assert_eq!(
                &entries[..16],
                [0, 0, 0, 0, 0, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0]
            );
            let mut bad = shard.clone();
            bad[110] ^= 1;
            store.set("a/c/0/0", &bad).unwrap();
            let err = a.read_region(&[0, 0], &[4, 6], &mut out).unwrap_err();
            assert!(matches!(err, Error::CorruptChunk(_)), "{codec}: {err}");
            assert!(err.to_string().contains("a/c/0/0"), "{codec}: {err}");
        }
    }

    #[test]
    fn sharded_strings_round_trip() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let doc = r#"{"zarr_format": 3, "shape": [5], "data_type": "string",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "fill_value": "", "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [2], "codecs": [{"name": "vlen-utf8"}, {"name": "zstd"}]}}]}"#;
        let a = Array::create(store.clone(), "s", doc).unwrap();
        let data = b"abcdefgh";
        a.write_vlen(&[1], &[3], &[0, 2, 2, 8], data).unwrap();
        let (mut offsets, mut out) = (vec![0i64; 6], vec![0u8; 8]);
        a.read_vlen(&[0], &[5], &mut offsets, &mut out).unwrap();
        assert_eq!(offsets, [0, 0, 2, 2, 8, 8]);
        assert_eq!(&out, data);
        // Element 4 is alone in the second shard and holds the fill: nothing stored there.
        assert!(!store.contains("s/c/1").unwrap());
        // Emptying elements 0 and 1 leaves the first inner chunk empty in its shard's index.
        a.write_vlen(&[0], &[2], &[0, 0, 0], b"").unwrap();
        let shard = store.get("s/c/0").unwrap().unwrap();
        let index = &shard[shard.len() - 36..shard.len() - 4];
        assert!(index[..16].iter().all(|&b| b == 0xff), "{index:?}");
        assert!(index[16..].iter().any(|&b| b != 0xff), "{index:?}");
    }

    #[test]
    fn refuses_corrupt_indexes_naming_the_shard() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let a = sharded(&store, "end", r#"[{"name": "bytes"}]"#);
        a.write_region(&[0, 0], &[4, 6], &values(24)).unwrap();
        let good = store.get("a/c/0/0").unwrap().unwrap();
        let mut out = vec![0u8; 24 * 4];
        for (what, bad) in [
            ("truncated", good[..10].to_vec()),
            ("checksum", {
                let mut b = good.clone();
                let n = b.len();
                b[n - 20] ^= 1;
                b
            }),
        ] {
            store.set("a/c/0/0", &bad).unwrap();
            let err = a.read_region(&[0, 0], &[4, 6], &mut out).unwrap_err();
            assert!(matches!(err, Error::CorruptChunk(_)), "{what}: {err}");
            assert!(err.to_string().contains("a/c/0/0"), "{what}: {err}");
        }
        // An entry pointing past the end, with a valid checksum.
        let forms = a.forms();
        let level = &forms.shard_layout().levels[0];
        let mut chunks: Vec<Option<Cow<[u8]>>> = vec![None; 4];
        chunks[0] = Some(Cow::Owned(vec![0u8; 24]));
        let mut shard = level.assemble(&chunks, "a shard").unwrap();
        let n = shard.len();
        shard[n - 68..n - 60].copy_from_slice(&1000u64.to_le_bytes());
        let crc = crc32c::crc32c(&shard[n - 68..n - 4]);
        shard[n - 4..].copy_from_slice(&crc.to_le_bytes());
        store.set("a/c/0/0", &shard).unwrap();
        let err = a.read_region(&[0, 0], &[4, 6], &mut out).unwrap_err();
        assert!(err.to_string().contains("outside the shard"), "{err}");
    }
}
