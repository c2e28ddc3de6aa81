//! One chunk at a time: fetching its stored bytes, decoding into a buffer of exactly one
//! chunk, encoding and storing (or dropping chunks that hold only the fill value), and the
//! per-thread buffers that make this allocation-free in the steady state.

use super::chunk_form::ChunkForm;
use super::Array;
use crate::error::{try_alloc_zeroed, Error, Result};
use crate::parallel;
use crate::store::{read_again_if_changed, ValueReader};
use crate::strided::DimOffsets;
use rayon::prelude::*;
use std::borrow::Cow;
use std::cell::Cell;
use std::ops::Range;
use std::sync::atomic::Ordering;

/// The most bytes an object array's chunk may decode to before its object codec splits it
/// (their decoded size is not in the metadata; items are at most 4 GiB by their framing).
const MAX_OBJECT_CHUNK_BYTES: usize = 1 << 32;

/// Per-thread buffers larger than this are released after use instead of kept for the next chunk.
const KEEP_BUFFER_BYTES: usize = 64 << 20;

thread_local! {
    /// A decoded-chunk buffer reused by every chunk this thread handles.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    /// A stored-bytes buffer reused by every chunk this thread reads or encodes.
    static STORED: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Fills `buf` with copies of the one-element `pattern`.
fn fill_pattern(buf: &mut [u8], pattern: &[u8]) {
    if pattern.iter().all(|&b| b == 0) {
        buf.fill(0);
    } else {
        buf.chunks_exact_mut(pattern.len())
            .for_each(|e| e.copy_from_slice(pattern));
    }
}

/// Runs `f` with this thread's scratch buffer resized to `len` bytes (contents unspecified).
pub(super) fn with_scratch<T>(len: usize, f: impl FnOnce(&mut [u8]) -> Result<T>) -> Result<T> {
    let mut buf = SCRATCH.with(Cell::take);
    if buf.len() < len {
        buf = try_alloc_zeroed(len, "a decoded chunk")?;
    }
    let result = f(&mut buf[..len]);
    if buf.len() <= KEEP_BUFFER_BYTES {
        SCRATCH.with(|s| s.set(buf));
    }
    result
}

/// Runs `f` with this thread's stored-bytes buffer resized to `len` bytes (contents
/// unspecified); `name` says what is read, for the error when it cannot be allocated.
pub(super) fn with_stored_buffer<T>(
    len: usize,
    name: &str,
    f: impl FnOnce(&mut [u8]) -> Result<T>,
) -> Result<T> {
    let mut buf = STORED.with(Cell::take);
    buf.clear();
    buf.try_reserve_exact(len)
        .map_err(|_| Error::TooLarge(format!("cannot allocate {len} bytes for {name}")))?;
    buf.resize(len, 0);
    let result = f(&mut buf);
    if buf.capacity() <= KEEP_BUFFER_BYTES {
        STORED.with(|s| s.set(buf));
    }
    result
}

/// What messages call a chunk: `chunk "key"`, or in a sharded array
/// `shard "key" inner chunk [i, j]`. Formatted only when a message needs it.
pub(super) enum ChunkName<'a> {
    /// The chunk stored under this key.
    Key(Cow<'a, str>),
    /// The innermost chunk at these grid coordinates, in the shard under this key.
    Inner(String, &'a [u64]),
}

impl std::fmt::Display for ChunkName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkName::Key(key) => write!(f, "chunk {key:?}"),
            ChunkName::Inner(shard, coords) => write!(f, "shard {shard:?} inner chunk {coords:?}"),
        }
    }
}

impl Array {
    /// What messages call the chunk at `coords` of the chunk grid the engine works in.
    pub(super) fn chunk_name<'a>(&self, coords: &'a [u64]) -> ChunkName<'a> {
        match self.forms().sharding() {
            Some(s) => ChunkName::Inner(self.chunk_key(&s.shard_of(coords)), coords),
            None => ChunkName::Key(Cow::Owned(self.chunk_key(coords))),
        }
    }

    /// Decodes stored chunk bytes of `form` into `out`, which has exactly one chunk's size.
    pub(super) fn decode_chunk(
        &self,
        form: &ChunkForm,
        raw: &[u8],
        out: &mut [u8],
        name: &ChunkName,
    ) -> Result<()> {
        if form.pipeline.is_identity() {
            self.check_uncompressed(form, raw, name)?;
            out.copy_from_slice(raw);
            return Ok(());
        }
        form.pipeline
            .decode_into(raw, out)
            .map_err(|e| e.context(name.to_string()))
    }

    /// Runs `f` on the stored bytes of the chunk under `key` (`None` if it was never written),
    /// read into this thread's reusable buffer.
    pub(super) fn with_stored_chunk<T>(
        &self,
        key: &str,
        f: impl FnOnce(Option<&[u8]>) -> Result<T>,
    ) -> Result<T> {
        let mut buf = STORED.with(Cell::take);
        let found = self.fetch_chunk(key, |key| {
            Ok(self.store.get_into(key, &mut buf)?.then_some(()))
        });
        let result = match found {
            Ok(found) => f(found.map(|()| buf.as_slice())),
            Err(e) => Err(e),
        };
        if buf.capacity() <= KEEP_BUFFER_BYTES {
            STORED.with(|s| s.set(buf));
        }
        result
    }

    /// Runs `f` on the decoded form of stored chunk bytes: the bytes themselves when there is
    /// no compressor and no filter, else decoded into this thread's scratch buffer.
    pub(super) fn with_decoded_chunk<T>(
        &self,
        form: &ChunkForm,
        raw: &[u8],
        name: &ChunkName,
        f: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<T> {
        if form.pipeline.is_identity() {
            self.check_uncompressed(form, raw, name)?;
            return f(raw);
        }
        with_scratch(form.nbytes, |chunk| {
            self.decode_chunk(form, raw, chunk, name)?;
            f(chunk)
        })
    }

    /// Runs `f` on the decoded form of stored chunk bytes, decoded at least where the chunk
    /// elements `dims` names lie (their per-dimension `(chunk, buffer)` offsets): a blosc
    /// chunk decodes only the blocks holding them; others decode as
    /// [`Array::with_decoded_chunk`] does.
    pub(super) fn with_decoded_part<T>(
        &self,
        form: &ChunkForm,
        raw: &[u8],
        name: &ChunkName,
        dims: &[DimOffsets],
        f: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<T> {
        if !form.pipeline.decodes_parts() {
            return self.with_decoded_chunk(form, raw, name, f);
        }
        with_scratch(form.nbytes, |chunk| {
            let parts = element_parts(dims, self.item_size());
            form.pipeline
                .decode_parts_into(raw, chunk, &parts)
                .map_err(|e| e.context(name.to_string()))?;
            f(chunk)
        })
    }

    /// Runs `f` on the decoded chunk under `key` (`None` if it was never written): from the
    /// chunk cache when it is on, else read and decoded into this thread's reusable buffers.
    pub(super) fn with_chunk<T>(
        &self,
        form: &ChunkForm,
        key: &str,
        f: impl FnOnce(Option<&[u8]>) -> Result<T>,
    ) -> Result<T> {
        if self.caches_chunks() {
            return f(self.cached_chunk(form, key)?.as_deref().map(Vec::as_slice));
        }
        self.with_stored_chunk(key, |raw| match raw {
            None => f(None),
            Some(raw) => self.with_decoded_chunk(form, raw, &ChunkName::Key(key.into()), |chunk| {
                f(Some(chunk))
            }),
        })
    }

    /// Reads the chunk under `key` into `out` (one decoded chunk), the fill value if it was
    /// never written. An uncompressed chunk is read from the store straight into `out`.
    pub(super) fn read_chunk_into(
        &self,
        form: &ChunkForm,
        key: &str,
        out: &mut [u8],
    ) -> Result<()> {
        if !form.pipeline.is_identity() {
            return self.load_chunk(form, key, out);
        }
        read_again_if_changed(|| match self.open_uncompressed(form, key)? {
            Some(value) => {
                read_in_parts(value.as_ref(), out).map_err(|e| e.context(format!("chunk {key:?}")))
            }
            None => {
                fill_pattern(out, &self.fill_native);
                Ok(())
            }
        })
    }

    /// Opens an uncompressed chunk for reading in parts, checking its size; `None` if it was
    /// never written.
    pub(super) fn open_uncompressed(
        &self,
        form: &ChunkForm,
        key: &str,
    ) -> Result<Option<Box<dyn ValueReader + '_>>> {
        let value = self.fetch_chunk(key, |key| self.store.open_value(key))?;
        match value {
            Some(v) if v.len() != form.nbytes as u64 => {
                Err(self.wrong_size(form, &ChunkName::Key(key.into()), v.len()))
            }
            other => Ok(other),
        }
    }

    /// Fetches and decodes the chunk under `key` into `out`, or fills `out` with the fill value
    /// when the chunk was never written.
    pub(super) fn load_chunk(&self, form: &ChunkForm, key: &str, out: &mut [u8]) -> Result<()> {
        self.with_stored_chunk(key, |raw| {
            self.decode_or_fill(form, raw, out, &ChunkName::Key(key.into()))
        })
    }

    /// Decodes a chunk's stored bytes into `out`, or fills it with the fill value when the
    /// chunk is not stored (`None`).
    pub(super) fn decode_or_fill(
        &self,
        form: &ChunkForm,
        raw: Option<&[u8]>,
        out: &mut [u8],
        name: &ChunkName,
    ) -> Result<()> {
        match raw {
            Some(raw) => self.decode_chunk(form, raw, out, name),
            None => {
                self.fill_chunk(out);
                Ok(())
            }
        }
    }

    /// `value` as the new bytes of an update ([`Array::update_chunk`]): moved into `new`;
    /// `false` (erase) when there is none.
    pub(super) fn into_update(value: Option<Vec<u8>>, new: &mut Vec<u8>) -> bool {
        value.map(|value| *new = value).is_some()
    }

    /// Rewrites the chunk (or shard) under `key` with what `update(old, new)` makes of its
    /// stored bytes (`None`: not stored; it writes the new ones into `new`, or returns
    /// `false` to erase the key) as one read-modify-write ([`StoreHandle::update`]:
    /// conditional on stores that can), and invalidates the key in the chunk cache.
    pub(super) fn update_chunk(
        &self,
        key: &str,
        update: impl FnMut(Option<&[u8]>, &mut Vec<u8>) -> Result<bool>,
    ) -> Result<()> {
        let result = self.store.update(key, update);
        self.chunk_cache.invalidate(key);
        result
    }

    fn check_uncompressed(&self, form: &ChunkForm, raw: &[u8], name: &ChunkName) -> Result<()> {
        if raw.len() != form.nbytes {
            return Err(self.wrong_size(form, name, raw.len() as u64));
        }
        Ok(())
    }

    fn wrong_size(&self, form: &ChunkForm, name: &ChunkName, len: u64) -> Error {
        Error::CorruptChunk(format!(
            "{name} has {len} bytes but an uncompressed chunk has {}",
            form.nbytes
        ))
    }

    /// Fills a whole decoded chunk (stored byte order) with the fill value.
    pub(super) fn fill_chunk(&self, chunk: &mut [u8]) {
        fill_pattern(chunk, &self.fill_stored);
    }

    /// Decodes stored chunk bytes whose decoded size is not known in advance (object arrays,
    /// up to their object codec), at most [`MAX_OBJECT_CHUNK_BYTES`].
    pub(super) fn decode_unsized(
        &self,
        form: &ChunkForm,
        raw: &[u8],
        name: &ChunkName,
    ) -> Result<Vec<u8>> {
        form.pipeline
            .decode_to_vec(raw, MAX_OBJECT_CHUNK_BYTES)
            .map_err(|e| e.context(name.to_string()))
    }

    /// Encodes a decoded chunk and stores it under `key`; a chunk holding only the fill value
    /// is erased instead, unless the array is set to write empty chunks.
    pub(super) fn store_chunk(&self, form: &ChunkForm, key: &str, chunk: &[u8]) -> Result<()> {
        if !self.write_empty_chunks.load(Ordering::Relaxed) && self.is_fill_only(chunk) {
            return self.erase_chunk(key);
        }
        self.encode_and_store(form, key, chunk)
    }

    /// Runs bytes through the pipeline (filters, compressor) into this thread's reusable
    /// buffer and stores the result under `key`; with no codec the bytes are stored as they are.
    /// Invalidates the key in the chunk cache, whether or not the store succeeded.
    pub(super) fn encode_and_store(&self, form: &ChunkForm, key: &str, bytes: &[u8]) -> Result<()> {
        if form.pipeline.is_identity() {
            return self.store_encoded(key, bytes);
        }
        let mut encoded = STORED.with(Cell::take);
        let result = match self.encode_with_extent(form, bytes, key, &mut encoded) {
            Ok(()) => self.store_encoded(key, &encoded),
            Err(e) => {
                self.chunk_cache.invalidate(key);
                Err(e.context(format!("chunk {key:?}")))
            }
        };
        if encoded.capacity() <= KEEP_BUFFER_BYTES {
            STORED.with(|s| s.set(encoded));
        }
        result
    }

    /// Stores a chunk's encoded bytes under `key` and invalidates the key in the chunk cache,
    /// whether or not the store succeeded.
    pub(super) fn store_encoded(&self, key: &str, bytes: &[u8]) -> Result<()> {
        let result = self.store.set(key, bytes);
        self.chunk_cache.invalidate(key);
        result
    }

    /// Encodes a decoded chunk (or an object codec's encoding of one) through the pipeline;
    /// `name` names the chunk in errors.
    pub(super) fn encode_chunk(
        &self,
        form: &ChunkForm,
        chunk: &[u8],
        name: &ChunkName,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_chunk_into(form, chunk, name, &mut out)?;
        Ok(out)
    }

    /// [`Array::encode_chunk`] into `out`, its contents replaced and its capacity reused.
    fn encode_chunk_into(
        &self,
        form: &ChunkForm,
        chunk: &[u8],
        name: &ChunkName,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        match name {
            ChunkName::Key(key) => self.encode_with_extent(form, chunk, key, out),
            ChunkName::Inner(..) => form.pipeline.encode_into(chunk, out),
        }
        .map_err(|e| e.context(name.to_string()))
    }

    /// Runs a chunk through the pipeline into `out`; a pipeline that stores only the part of
    /// a chunk inside the array (N5's edge blocks) is given that part's extent, found from the
    /// chunk key's coordinates and the current shape.
    fn encode_with_extent(
        &self,
        form: &ChunkForm,
        chunk: &[u8],
        key: &str,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        if !form.pipeline.stores_extent() {
            return form.pipeline.encode_into(chunk, out);
        }
        match self.chunk_extent(key) {
            Some(extent) => form.pipeline.encode_block_into(chunk, &extent, out),
            None => form.pipeline.encode_into(chunk, out),
        }
    }

    /// The extent inside the array of the chunk under `key` (`.`-separated coordinates after
    /// the last `/`, as the arrays of N5 containers name their chunks); `None` when the key
    /// does not say.
    fn chunk_extent(&self, key: &str) -> Option<Vec<u64>> {
        let name = key.rsplit('/').next()?;
        let coords = name
            .split('.')
            .map(|c| c.parse::<u64>().ok())
            .collect::<Option<Vec<u64>>>()?;
        let shape = self.shape();
        let forms = self.forms();
        let grid = forms.grid();
        (coords.len() == shape.len()).then(|| {
            coords
                .iter()
                .zip(&shape)
                .enumerate()
                .map(|(d, (&i, &n))| {
                    let axis = grid.axis(d);
                    n.saturating_sub(axis.start(i)).min(axis.len(i))
                })
                .collect()
        })
    }

    /// The stored bytes of a decoded chunk; `None` when it holds only the fill value and
    /// the array does not write empty chunks.
    pub(super) fn encode_unless_fill(
        &self,
        form: &ChunkForm,
        chunk: &[u8],
        name: &ChunkName,
    ) -> Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        Ok(self
            .encode_unless_fill_into(form, chunk, name, &mut out)?
            .then_some(out))
    }

    /// [`Array::encode_unless_fill`] into `out` (its contents replaced, its capacity reused):
    /// `false` when the chunk is not to be stored.
    pub(super) fn encode_unless_fill_into(
        &self,
        form: &ChunkForm,
        chunk: &[u8],
        name: &ChunkName,
        out: &mut Vec<u8>,
    ) -> Result<bool> {
        if !self.write_empty_chunks() && self.is_fill_only(chunk) {
            return Ok(false);
        }
        self.encode_chunk_into(form, chunk, name, out)?;
        Ok(true)
    }

    /// Erases the chunk under `key` (it then reads as the fill value) and invalidates it in
    /// the chunk cache.
    pub(super) fn erase_chunk(&self, key: &str) -> Result<()> {
        let result = self.store.erase(key);
        self.chunk_cache.invalidate(key);
        result
    }

    /// Whether every element of a decoded chunk equals a (non-null) fill value, byte for byte.
    pub(super) fn is_fill_only(&self, chunk: &[u8]) -> bool {
        if self.metadata.fill_value.0.is_none() {
            return false;
        }
        if self.fill_stored.iter().all(|&b| b == 0) {
            let (words, rest) = chunk.split_at(chunk.len() / 8 * 8);
            return words
                .chunks_exact(8)
                .all(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes")) == 0)
                && rest.iter().all(|&b| b == 0);
        }
        chunk
            .chunks_exact(self.fill_stored.len())
            .all(|e| e == self.fill_stored.as_slice())
    }
}

/// Rows along the last dimension beyond which [`element_parts`] gives one range for all.
const MAX_PARTS: usize = 4096;

/// The byte ranges of a chunk that hold the elements `dims` names (per dimension, the
/// elements' byte offsets in the chunk first): one range per row along the last dimension,
/// from its first selected element to the end of its last; beyond [`MAX_PARTS`] rows, one
/// range from the first element to the end of the last.
pub(super) fn element_parts(dims: &[DimOffsets], item: usize) -> Vec<Range<usize>> {
    let bounds = |dim: &DimOffsets| {
        let offsets = dim.iter().map(|&(c, _)| c);
        offsets.clone().min().zip(offsets.max())
    };
    let Some(per_dim) = dims.iter().map(bounds).collect::<Option<Vec<_>>>() else {
        return Vec::new();
    };
    let Some((last, outer)) = dims.split_last() else {
        return std::iter::once(0..item).collect();
    };
    let rows = outer.iter().try_fold(1usize, |n, d| n.checked_mul(d.len()));
    if rows.is_none_or(|n| n > MAX_PARTS) {
        let (low, high): (usize, usize) =
            per_dim.iter().fold((0, 0), |(l, h), b| (l + b.0, h + b.1));
        return std::iter::once(low..high + item).collect();
    }
    let (low, high) = bounds(last).expect("checked above");
    let mut bases = vec![0usize];
    for dim in outer {
        bases = bases
            .iter()
            .flat_map(|&b| dim.iter().map(move |&(c, _)| b + c))
            .collect();
    }
    let mut parts: Vec<Range<usize>> = bases
        .into_iter()
        .map(|b| b + low..b + high + item)
        .collect();
    parts.sort_unstable_by_key(|r| r.start);
    parts
}

/// Reads below this size are not split across threads.
const SPLIT_READ_MIN: usize = 1 << 20;

/// Fills `out` from the start of `value`: in one read, or when the pool has threads to spare
/// for this task ([`parallel::spare_threads`]) and `out` is large, in that many parts read at
/// once on the pool.
fn read_in_parts(value: &dyn ValueReader, out: &mut [u8]) -> Result<()> {
    let parts = parallel::spare_threads();
    if parts < 2 || out.len() < SPLIT_READ_MIN {
        return value.read_exact_at(0, out);
    }
    let part = out.len().div_ceil(parts);
    parallel::run(|| {
        out.par_chunks_mut(part)
            .enumerate()
            .try_for_each(|(i, bytes)| value.read_exact_at((i * part) as u64, bytes))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One range per row of the selection, from its first element to the end of its last;
    /// past the row limit, one range for all.
    #[test]
    fn element_parts_cover_each_row_selected() {
        let rows: DimOffsets = vec![(0, 0), (400, 1)];
        let columns: DimOffsets = vec![(16, 0), (8, 2), (40, 1)];
        assert_eq!(element_parts(&[rows, columns], 8), vec![8..48, 408..448]);
        assert_eq!(element_parts(&[], 4), vec![0..4]);
        let many: DimOffsets = (0..5000).map(|i| (i * 100, i)).collect();
        let one: DimOffsets = vec![(3, 0)];
        assert_eq!(element_parts(&[many, one], 1), vec![3..499_904]);
    }

    /// Split or not, a value shorter than the buffer is an error naming the bytes missing,
    /// and a whole one fills the buffer exactly.
    #[test]
    fn reads_in_parts_fill_exactly_or_fail() {
        let value: Vec<u8> = (0..(3 << 20) as u32).map(|i| (i % 241) as u8).collect();
        let short: Vec<u8> = value[..value.len() - 5].to_vec();
        let _pool = parallel::POOL_SIZE_TESTS
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        for threads in [1, 3] {
            parallel::set_num_threads(threads).unwrap();
            parallel::run_call(1, |_| {
                let mut out = vec![0u8; value.len()];
                read_in_parts(&value, &mut out)?;
                assert!(out == value, "{threads} threads");
                match read_in_parts(&short, &mut out) {
                    Err(Error::CorruptChunk(m)) => assert!(m.contains("ends before"), "{m}"),
                    other => panic!("{threads} threads: {other:?}"),
                }
                Ok(())
            })
            .unwrap();
        }
        parallel::set_num_threads(0).unwrap();
    }
}
