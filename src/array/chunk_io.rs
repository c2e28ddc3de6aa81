//! One chunk at a time: decoding into a buffer of exactly one chunk, encoding and storing
//! (or dropping chunks that hold only the fill value), and the per-thread scratch buffer.

use super::Array;
use crate::error::{try_alloc_zeroed, Error, Result};
use std::cell::Cell;
use std::sync::atomic::Ordering;

/// Scratch buffers larger than this are released after use instead of kept for the next chunk.
const KEEP_SCRATCH_BYTES: usize = 64 << 20;

thread_local! {
    /// A decoded-chunk buffer reused by every chunk this thread handles.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Runs `f` with this thread's scratch buffer resized to `len` bytes (contents unspecified).
pub(super) fn with_scratch<T>(len: usize, f: impl FnOnce(&mut [u8]) -> Result<T>) -> Result<T> {
    let mut buf = SCRATCH.with(Cell::take);
    if buf.len() < len {
        buf = try_alloc_zeroed(len, "a decoded chunk")?;
    }
    let result = f(&mut buf[..len]);
    if buf.len() <= KEEP_SCRATCH_BYTES {
        SCRATCH.with(|s| s.set(buf));
    }
    result
}

impl Array {
    /// Decodes stored chunk bytes into `out`, which has exactly one chunk's size.
    pub(super) fn decode_chunk(&self, raw: &[u8], out: &mut [u8], key: &str) -> Result<()> {
        match &self.compressor {
            Some(codec) => codec
                .decode_into(raw, out)
                .map_err(|e| e.context(format!("chunk {key:?}"))),
            None if raw.len() == out.len() => {
                out.copy_from_slice(raw);
                Ok(())
            }
            None => Err(Error::CorruptChunk(format!(
                "chunk {key:?} has {} bytes but an uncompressed chunk has {}",
                raw.len(),
                out.len()
            ))),
        }
    }

    /// Fetches and decodes the chunk under `key` into `out`, or fills `out` with the fill value
    /// when the chunk was never written.
    pub(super) fn load_chunk(&self, key: &str, out: &mut [u8]) -> Result<()> {
        match self.store.get(key)? {
            Some(raw) => self.decode_chunk(&raw, out, key),
            None => {
                self.fill_chunk(out);
                Ok(())
            }
        }
    }

    /// Fills a whole decoded chunk (stored byte order) with the fill value.
    pub(super) fn fill_chunk(&self, chunk: &mut [u8]) {
        if self.fill_stored.iter().all(|&b| b == 0) {
            chunk.fill(0);
        } else {
            chunk
                .chunks_exact_mut(self.fill_stored.len())
                .for_each(|e| e.copy_from_slice(&self.fill_stored));
        }
    }

    /// Encodes a decoded chunk and stores it under `key`; a chunk holding only the fill value
    /// is erased instead, unless the array is set to write empty chunks.
    pub(super) fn store_chunk(&self, key: &str, chunk: &[u8]) -> Result<()> {
        if !self.write_empty_chunks.load(Ordering::Relaxed) && self.is_fill_only(chunk) {
            return self.store.erase(key);
        }
        match &self.compressor {
            Some(codec) => {
                let encoded = codec
                    .encode(chunk)
                    .map_err(|e| e.context(format!("chunk {key:?}")))?;
                self.store.set(key, &encoded)
            }
            None => self.store.set(key, chunk),
        }
    }

    /// Whether every element of a decoded chunk equals a (non-null) fill value, byte for byte.
    fn is_fill_only(&self, chunk: &[u8]) -> bool {
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
