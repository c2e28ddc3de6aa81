//! Sharded arrays (`sharding_indexed`): the engine works in inner chunks; a shard is the group
//! of inner chunks stored in one value, behind an index of `(offset, length)` pairs.
//!
//! Reads group the touched inner chunks by shard: each shard is opened once, its index read
//! and checked with one ranged read, and only the inner chunks the selection needs are read
//! (ranged reads of the same open value, so index and chunks come from one version of the
//! shard even while a writer replaces it) and decoded in parallel, straight into the caller's
//! buffer where they land whole. Writes take the shard's lock (shards are written in parallel,
//! the inner chunks of one in turn, since nested parallel work under a lock can deadlock): a write covering a whole shard
//! encodes its inner chunks without reading and stores the shard once; any other reads the shard,
//! re-encodes only the inner chunks it touches, keeps the others' bytes, and stores it once.
//! Inner chunks holding only the fill value are not stored (all-ones index entry) and a shard
//! left with none is erased.

use super::buffer::BufferLayout;
use super::chunk_io::with_scratch;
use super::Array;
use crate::codec::{ChunkCodecs, ShardIndexCodecs};
use crate::error::{Error, Result};
use crate::parallel;
use crate::selection::{ChunkTask, OrthogonalPlan};
use crate::store::ValueReader;
use crate::strided::{copy_elements, fill_elements, ElementCopy, SharedBuffer};
use rayon::prelude::*;
use std::sync::Mutex;

/// The most inner chunks one shard may hold (its index is 16 bytes each).
const MAX_INNER_CHUNKS: u64 = 1 << 28;

/// An index entry of an inner chunk never written.
const EMPTY: u64 = u64::MAX;

/// How a sharded array's shards hold their inner chunks.
#[derive(Debug)]
pub(super) struct ShardLayout {
    /// The inner chunk shape.
    pub inner: Vec<u64>,
    /// Inner chunks per shard along each dimension.
    pub per_shard: Vec<u64>,
    /// Inner chunks per shard.
    count: usize,
    index: ShardIndexCodecs,
    at_start: bool,
}

/// A shard's index: `(offset, length)` of each inner chunk in C order, `None` where empty.
type ShardIndex = Vec<Option<(u64, u64)>>;

/// A shard opened for reading inner chunks.
struct OpenShard<'a> {
    reader: Mutex<Box<dyn ValueReader + 'a>>,
    index: ShardIndex,
}

impl ShardLayout {
    /// Splits an array's codecs into those of the chunks the engine works in and, for a
    /// sharded array, the layout of its shards (whose shape is `grid_chunks`).
    pub fn split(
        codecs: ChunkCodecs,
        grid_chunks: &[u64],
    ) -> Result<(ChunkCodecs, Option<ShardLayout>)> {
        let Some(sharding) = codecs.sharding else {
            return Ok((codecs, None));
        };
        if !codecs.pipeline.is_identity() {
            return Err(Error::Unsupported(
                "bytes→bytes codecs after sharding_indexed".into(),
            ));
        }
        if sharding.inner.sharding.is_some() {
            return Err(Error::Unsupported(
                "nested sharding_indexed (not yet supported by libzarr)".into(),
            ));
        }
        let per_shard: Vec<u64> = grid_chunks
            .iter()
            .zip(&sharding.chunk_shape)
            .map(|(&s, &c)| s / c)
            .collect();
        let count = per_shard
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n))
            .filter(|&n| n <= MAX_INNER_CHUNKS)
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "shards of {per_shard:?} inner chunks (at most {MAX_INNER_CHUNKS} per shard)"
                ))
            })?;
        let layout = ShardLayout {
            inner: sharding.chunk_shape,
            per_shard,
            count: count as usize,
            index: sharding.index,
            at_start: sharding.index_at_start,
        };
        Ok((sharding.inner, Some(layout)))
    }

    fn index_len(&self) -> usize {
        self.count * 16 + if self.index.checksum { 4 } else { 0 }
    }

    /// The position of the inner chunk at inner-grid position `coords` in its shard's index.
    fn position(&self, coords: &[u64]) -> usize {
        coords
            .iter()
            .zip(&self.per_shard)
            .fold(0u64, |acc, (&c, &n)| acc * n + c % n) as usize
    }

    /// Decodes and checks the index of the shard `key` of `len` bytes: its checksum, every
    /// entry inside the shard and outside the index, no two entries overlapping.
    fn decode_index(&self, bytes: &[u8], len: u64, key: &str) -> Result<ShardIndex> {
        let corrupt = |why: String| Error::CorruptChunk(format!("shard {key:?}: {why}"));
        let body = &bytes[..self.count * 16];
        if self.index.checksum {
            let stored = u32::from_le_bytes(bytes[self.count * 16..].try_into().expect("4 bytes"));
            if crc32c::crc32c(body) != stored {
                return Err(corrupt("the index checksum (crc32c) does not match".into()));
            }
        }
        let word = |b: &[u8]| {
            let b: [u8; 8] = b.try_into().expect("8 bytes");
            if self.index.big_endian {
                u64::from_be_bytes(b)
            } else {
                u64::from_le_bytes(b)
            }
        };
        let index_range = if self.at_start {
            0..self.index_len() as u64
        } else {
            len - self.index_len() as u64..len
        };
        let mut index = Vec::with_capacity(self.count);
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

    /// Assembles a shard from its inner chunks' encoded bytes (`None`: empty), in index order.
    fn assemble(&self, chunks: &[Option<&[u8]>]) -> Vec<u8> {
        let data: usize = chunks.iter().flatten().map(|c| c.len()).sum();
        let mut out = Vec::with_capacity(data + self.index_len());
        let mut index = Vec::with_capacity(self.index_len());
        let base = if self.at_start { self.index_len() } else { 0 } as u64;
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
        if self.index.checksum {
            let crc = crc32c::crc32c(&index);
            index.extend(crc.to_le_bytes());
        }
        if self.at_start {
            index.extend(out);
            index
        } else {
            out.extend(index);
            out
        }
    }
}

impl Array {
    /// Fails with [`Error::Unsupported`] naming `what` for sharded arrays.
    pub(super) fn require_unsharded(&self, what: &str) -> Result<()> {
        match self.sharding {
            Some(_) => Err(Error::Unsupported(format!(
                "{what} of sharded arrays (array {:?}) are not supported yet",
                self.path
            ))),
            None => Ok(()),
        }
    }

    fn shard_layout(&self) -> &ShardLayout {
        self.sharding.as_ref().expect("a sharded array")
    }

    /// Opens the shard under `key` and reads its index; `None` when the shard was never written.
    fn open_shard(&self, key: &str) -> Result<Option<OpenShard<'_>>> {
        let layout = self.shard_layout();
        let Some(mut reader) = self.store.open_value(key)? else {
            return Ok(None);
        };
        let len = reader.len();
        let index_len = layout.index_len() as u64;
        if len < index_len {
            return Err(Error::CorruptChunk(format!(
                "shard {key:?} has {len} bytes, less than its {index_len}-byte index"
            )));
        }
        let mut bytes = vec![0u8; index_len as usize];
        let at = if layout.at_start { 0 } else { len - index_len };
        reader
            .read_exact_at(at, &mut bytes)
            .map_err(|e| e.context(format!("shard {key:?}")))?;
        let index = layout.decode_index(&bytes, len, key)?;
        Ok(Some(OpenShard {
            reader: Mutex::new(reader),
            index,
        }))
    }

    /// Reads an orthogonal selection of a sharded array (see the module documentation).
    pub(super) fn read_sharded(
        &self,
        plan: &OrthogonalPlan,
        buffer: &BufferLayout,
        out: SharedBuffer,
        how: &ElementCopy,
        fill: &[u8],
    ) -> Result<()> {
        let layout = self.shard_layout();
        let groups = plan.groups(&layout.per_shard);
        let read_shard = |g: u64| -> Result<()> {
            let (coords, tasks) = groups.group(g);
            let key = self.chunk_key(&coords);
            let shard = self.open_shard(&key)?;
            let read_inner = |&i: &u64| -> Result<()> {
                let task = plan.chunk(i);
                let dims = self.task_offsets(&task, buffer, true);
                let entry = shard
                    .as_ref()
                    .and_then(|s| s.index[layout.position(&task.coords)]);
                let (Some(shard), Some((offset, n))) = (&shard, entry) else {
                    // SAFETY: the tasks of one selection write disjoint elements of a
                    // non-overlapping layout.
                    return unsafe { fill_elements(out, &dims, fill) };
                };
                let name = format!("{key:?} inner chunk {:?}", task.coords);
                self.with_inner_bytes(shard, offset, n, &name, |raw| {
                    if self.chunk_is_buffer_run(&task, buffer, how) {
                        let start: usize = dims.iter().map(|d| d[0].1).sum();
                        // SAFETY: as above; this range is exactly this chunk's elements.
                        let target = unsafe { out.slice_mut(start..start + self.chunk_nbytes)? };
                        return self.decode_chunk(raw, target, &name);
                    }
                    self.with_decoded_chunk(raw, &name, |chunk| {
                        // SAFETY: as above.
                        unsafe { copy_elements(chunk, out, &dims, how) }
                    })
                })
            };
            match tasks.len() {
                1 => read_inner(&tasks[0]),
                _ => tasks.par_iter().try_for_each(read_inner),
            }
        };
        match groups.len() {
            0 => Ok(()),
            1 => parallel::run(|| read_shard(0)),
            n => parallel::run(|| (0..n).into_par_iter().try_for_each(read_shard)),
        }
    }

    /// Runs `f` on the `n` bytes at `offset` of an open shard, read into a buffer of its own.
    fn with_inner_bytes<T>(
        &self,
        shard: &OpenShard,
        offset: u64,
        n: u64,
        name: &str,
        f: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<T> {
        let len = usize::try_from(n)
            .ok()
            .filter(|&len| len <= self.chunk_nbytes.saturating_mul(8).saturating_add(1 << 20))
            .ok_or_else(|| {
                Error::CorruptChunk(format!(
                    "{name} claims {n} bytes, far more than a chunk of {} bytes can encode to",
                    self.chunk_nbytes
                ))
            })?;
        let mut raw = Vec::new();
        raw.try_reserve_exact(len)
            .map_err(|_| Error::TooLarge(format!("cannot allocate {len} bytes for {name}")))?;
        raw.resize(len, 0);
        shard
            .reader
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .read_exact_at(offset, &mut raw)
            .map_err(|e| e.context(name))?;
        f(&raw)
    }

    /// Writes an orthogonal selection of a sharded array (see the module documentation).
    pub(super) fn write_sharded(
        &self,
        plan: &OrthogonalPlan,
        buffer: &BufferLayout,
        data: &[u8],
        how: &ElementCopy,
    ) -> Result<()> {
        let layout = self.shard_layout();
        let groups = plan.groups(&layout.per_shard);
        let write_shard = |g: u64| -> Result<()> {
            let (coords, task_ids) = groups.group(g);
            let key = self.chunk_key(&coords);
            let _lock = self.store.lock_chunk(&key);
            let tasks: Vec<ChunkTask> = task_ids.iter().map(|&i| plan.chunk(i)).collect();
            let whole = tasks.len() == layout.count
                && how.ranges.is_empty()
                && tasks.iter().all(ChunkTask::covers_chunk_in_array);
            let old = match whole {
                true => None,
                false => self.read_shard(&key)?,
            };
            let old_chunk = |pos: usize| -> Option<&[u8]> {
                let (bytes, index) = old.as_ref()?;
                let (offset, n) = index[pos]?;
                Some(&bytes[offset as usize..(offset + n) as usize])
            };
            // Sequential while the shard's lock is held: waiting on nested parallel work could
            // make this thread run another shard's write, which would wait for a lock this
            // thread (or one waiting on it) holds.
            let encoded: Vec<(usize, Option<Vec<u8>>)> = tasks
                .iter()
                .map(|task| {
                    let pos = layout.position(&task.coords);
                    let name = format!("{key:?} inner chunk {:?}", task.coords);
                    let dims = self.task_offsets(task, buffer, false);
                    let chunk = with_scratch(self.chunk_nbytes, |chunk| {
                        if !how.ranges.is_empty() || !task.covers_chunk_in_array() {
                            match old_chunk(pos) {
                                Some(raw) => self.decode_chunk(raw, chunk, &name)?,
                                None => self.fill_chunk(chunk),
                            }
                        } else if !task.is_whole_chunk() {
                            self.fill_chunk(chunk);
                        }
                        // SAFETY: `chunk` is this thread's own scratch buffer.
                        unsafe { copy_elements(data, SharedBuffer::new(chunk), &dims, how)? };
                        if !self.write_empty_chunks() && self.is_fill_only(chunk) {
                            return Ok(None);
                        }
                        let mut out = Vec::new();
                        self.pipeline
                            .encode_into(chunk, &mut out)
                            .map_err(|e| e.context(&name))?;
                        Ok(Some(out))
                    })?;
                    Ok((pos, chunk))
                })
                .collect::<Result<_>>()?;
            let mut chunks: Vec<Option<&[u8]>> = (0..layout.count).map(old_chunk).collect();
            for (pos, chunk) in &encoded {
                chunks[*pos] = chunk.as_deref();
            }
            if chunks.iter().all(Option::is_none) {
                return self.erase_chunk(&key);
            }
            self.store.set(&key, &layout.assemble(&chunks))
        };
        match groups.len() {
            0 => Ok(()),
            1 => parallel::run(|| write_shard(0)),
            n => parallel::run(|| (0..n).into_par_iter().try_for_each(write_shard)),
        }
    }

    /// The whole shard under `key` and its index; `None` when it was never written.
    fn read_shard(&self, key: &str) -> Result<Option<(Vec<u8>, ShardIndex)>> {
        let layout = self.shard_layout();
        let Some(bytes) = self.store.get(key)? else {
            return Ok(None);
        };
        let (len, index_len) = (bytes.len(), layout.index_len());
        if len < index_len {
            return Err(Error::CorruptChunk(format!(
                "shard {key:?} has {len} bytes, less than its {index_len}-byte index"
            )));
        }
        let at = if layout.at_start { 0 } else { len - index_len };
        let index = layout.decode_index(&bytes[at..at + index_len], len as u64, key)?;
        Ok(Some((bytes, index)))
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
        let layout = a.shard_layout();
        let mut chunks: Vec<Option<&[u8]>> = vec![None; 4];
        chunks[0] = Some(&[0u8; 24]);
        let mut shard = layout.assemble(&chunks);
        let n = shard.len();
        shard[n - 68..n - 60].copy_from_slice(&1000u64.to_le_bytes());
        let crc = crc32c::crc32c(&shard[n - 68..n - 4]);
        shard[n - 4..].copy_from_slice(&crc.to_le_bytes());
        store.set("a/c/0/0", &shard).unwrap();
        let err = a.read_region(&[0, 0], &[4, 6], &mut out).unwrap_err();
        assert!(err.to_string().contains("outside the shard"), "{err}");
    }
}
