//! One chunk at a time: fetching its stored bytes, decoding into a buffer of exactly one
//! chunk, encoding and storing (or dropping chunks that hold only the fill value), and the
//! per-thread buffers that make this allocation-free in the steady state.

use super::Array;
use crate::error::{try_alloc_zeroed, Error, Result};
use crate::store::ValueReader;
use std::cell::Cell;
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

impl Array {
    /// Decodes stored chunk bytes into `out`, which has exactly one chunk's size.
    pub(super) fn decode_chunk(&self, raw: &[u8], out: &mut [u8], key: &str) -> Result<()> {
        if self.pipeline.is_identity() {
            self.check_uncompressed(raw, key)?;
            out.copy_from_slice(raw);
            return Ok(());
        }
        self.pipeline
            .decode_into(raw, out)
            .map_err(|e| e.context(format!("chunk {key:?}")))
    }

    /// Runs `f` on the stored bytes of the chunk under `key` (`None` if it was never written),
    /// read into this thread's reusable buffer.
    pub(super) fn with_stored_chunk<T>(
        &self,
        key: &str,
        f: impl FnOnce(Option<&[u8]>) -> Result<T>,
    ) -> Result<T> {
        let mut buf = STORED.with(Cell::take);
        let result = match self.store.get_into(key, &mut buf) {
            Ok(found) => f(found.then_some(buf.as_slice())),
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
        raw: &[u8],
        key: &str,
        f: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<T> {
        if self.pipeline.is_identity() {
            self.check_uncompressed(raw, key)?;
            return f(raw);
        }
        with_scratch(self.chunk_nbytes, |chunk| {
            self.decode_chunk(raw, chunk, key)?;
            f(chunk)
        })
    }

    /// Runs `f` on the decoded chunk under `key` (`None` if it was never written): from the
    /// chunk cache when it is on, else read and decoded into this thread's reusable buffers.
    pub(super) fn with_chunk<T>(
        &self,
        key: &str,
        f: impl FnOnce(Option<&[u8]>) -> Result<T>,
    ) -> Result<T> {
        if self.caches_chunks() {
            return f(self.cached_chunk(key)?.as_deref().map(Vec::as_slice));
        }
        self.with_stored_chunk(key, |raw| match raw {
            None => f(None),
            Some(raw) => self.with_decoded_chunk(raw, key, |chunk| f(Some(chunk))),
        })
    }

    /// Reads the chunk under `key` into `out` (one decoded chunk), the fill value if it was
    /// never written. An uncompressed chunk is read from the store straight into `out`.
    pub(super) fn read_chunk_into(&self, key: &str, out: &mut [u8]) -> Result<()> {
        if !self.pipeline.is_identity() {
            return self.load_chunk(key, out);
        }
        match self.open_uncompressed(key)? {
            Some(mut value) => value
                .read_exact_at(0, out)
                .map_err(|e| e.context(format!("chunk {key:?}"))),
            None => {
                fill_pattern(out, &self.fill_native);
                Ok(())
            }
        }
    }

    /// Opens an uncompressed chunk for reading in parts, checking its size; `None` if it was
    /// never written.
    pub(super) fn open_uncompressed(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        let value = self.store.open_value(key)?;
        match value {
            Some(v) if v.len() != self.chunk_nbytes as u64 => Err(self.wrong_size(key, v.len())),
            other => Ok(other),
        }
    }

    /// Fetches and decodes the chunk under `key` into `out`, or fills `out` with the fill value
    /// when the chunk was never written.
    pub(super) fn load_chunk(&self, key: &str, out: &mut [u8]) -> Result<()> {
        self.with_stored_chunk(key, |raw| match raw {
            Some(raw) => self.decode_chunk(raw, out, key),
            None => {
                self.fill_chunk(out);
                Ok(())
            }
        })
    }

    fn check_uncompressed(&self, raw: &[u8], key: &str) -> Result<()> {
        if raw.len() != self.chunk_nbytes {
            return Err(self.wrong_size(key, raw.len() as u64));
        }
        Ok(())
    }

    fn wrong_size(&self, key: &str, len: u64) -> Error {
        Error::CorruptChunk(format!(
            "chunk {key:?} has {len} bytes but an uncompressed chunk has {}",
            self.chunk_nbytes
        ))
    }

    /// Fills a whole decoded chunk (stored byte order) with the fill value.
    pub(super) fn fill_chunk(&self, chunk: &mut [u8]) {
        fill_pattern(chunk, &self.fill_stored);
    }

    /// Decodes stored chunk bytes whose decoded size is not known in advance (object arrays,
    /// up to their object codec), at most [`MAX_OBJECT_CHUNK_BYTES`].
    pub(super) fn decode_unsized(&self, raw: &[u8], key: &str) -> Result<Vec<u8>> {
        self.pipeline
            .decode_to_vec(raw, MAX_OBJECT_CHUNK_BYTES)
            .map_err(|e| e.context(format!("chunk {key:?}")))
    }

    /// Encodes a decoded chunk and stores it under `key`; a chunk holding only the fill value
    /// is erased instead, unless the array is set to write empty chunks.
    pub(super) fn store_chunk(&self, key: &str, chunk: &[u8]) -> Result<()> {
        if !self.write_empty_chunks.load(Ordering::Relaxed) && self.is_fill_only(chunk) {
            return self.erase_chunk(key);
        }
        self.encode_and_store(key, chunk)
    }

    /// Runs bytes through the pipeline (filters, compressor) into this thread's reusable
    /// buffer and stores the result under `key`; with no codec the bytes are stored as they are.
    /// Invalidates the key in the chunk cache, whether or not the store succeeded.
    pub(super) fn encode_and_store(&self, key: &str, bytes: &[u8]) -> Result<()> {
        let result = if self.pipeline.is_identity() {
            self.store.set(key, bytes)
        } else {
            let mut encoded = STORED.with(Cell::take);
            let result = self
                .pipeline
                .encode_into(bytes, &mut encoded)
                .map_err(|e| e.context(format!("chunk {key:?}")))
                .and_then(|()| self.store.set(key, &encoded));
            if encoded.capacity() <= KEEP_BUFFER_BYTES {
                STORED.with(|s| s.set(encoded));
            }
            result
        };
        self.chunk_cache.invalidate(key);
        result
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
