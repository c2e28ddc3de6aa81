//! Reading and writing a box of an array: one task per chunk, run in parallel, each touching
//! a disjoint part of the caller's buffer.

use super::Array;
use crate::chunk_grid::{ChunkGrid, ChunkPart, Region};
use crate::error::{try_alloc_zeroed, Error, Result};
use crate::metadata::Order;
use crate::strided::{copy_box, fill_box, BoxLayout, SharedBuffer};
use rayon::prelude::*;
use std::cell::Cell;

/// Scratch buffers larger than this are released after use instead of kept for the next chunk.
const KEEP_SCRATCH_BYTES: usize = 64 << 20;

thread_local! {
    /// A decoded-chunk buffer reused by every chunk this thread handles.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Runs `f` with this thread's scratch buffer resized to `len` bytes (contents unspecified).
fn with_scratch<T>(len: usize, f: impl FnOnce(&mut [u8]) -> Result<T>) -> Result<T> {
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

/// Whether a box of `counts` elements at `layout` is one contiguous run of bytes.
fn is_contiguous(layout: &BoxLayout, counts: &[u64], elem: usize) -> bool {
    let mut step = elem;
    for d in (0..counts.len()).rev() {
        if counts[d] > 1 && layout.strides[d] != step {
            return false;
        }
        step *= counts[d] as usize;
    }
    true
}

impl Array {
    /// Reads the box `start`/`count` into `out` (C order, native byte order), whose size must
    /// be the box's element count times the item size. Missing chunks read as the fill value.
    pub fn read_region(&self, start: &[u64], count: &[u64], out: &mut [u8]) -> Result<()> {
        let region = self.checked_region(start, count, out.len())?;
        if region.is_empty() {
            return Ok(());
        }
        let out = SharedBuffer::new(out);
        self.for_each_chunk_part(&region, |grid, part| {
            self.read_part(grid, part, &region, out)
        })
    }

    /// Writes the box `start`/`count` from `data` (C order, native byte order). Chunks the box
    /// covers are encoded straight from `data`; others are read, patched and re-encoded while
    /// holding the chunk's lock, so concurrent writers of disjoint boxes lose nothing.
    pub fn write_region(&self, start: &[u64], count: &[u64], data: &[u8]) -> Result<()> {
        self.store.check_writable(&self.path)?;
        let region = self.checked_region(start, count, data.len())?;
        if region.is_empty() {
            return Ok(());
        }
        self.for_each_chunk_part(&region, |grid, part| {
            self.write_part(grid, part, &region, data)
        })
    }

    fn checked_region(&self, start: &[u64], count: &[u64], buffer_len: usize) -> Result<Region> {
        let (region, elements) = Region::new(&self.metadata.shape, start, count)?;
        let needed = elements
            .checked_mul(self.metadata.dtype.size as u64)
            .ok_or_else(|| {
                Error::Overflow(format!(
                    "selection {count:?} has more bytes than fit in 64 bits"
                ))
            })?;
        if needed != buffer_len as u64 {
            return Err(Error::BufferSize(format!(
                "selection {count:?} of {} needs {needed} bytes but the buffer has {buffer_len}",
                self.metadata.dtype.typestr()
            )));
        }
        Ok(region)
    }

    fn for_each_chunk_part(
        &self,
        region: &Region,
        task: impl Fn(&ChunkGrid, &ChunkPart) -> Result<()> + Sync,
    ) -> Result<()> {
        let grid = ChunkGrid {
            shape: &self.metadata.shape,
            chunks: &self.metadata.chunks,
        };
        let span = grid.span(region);
        (0..span.total)
            .into_par_iter()
            .try_for_each(|i| task(&grid, &grid.part(&span, i, region)))
    }

    fn read_part(
        &self,
        grid: &ChunkGrid,
        part: &ChunkPart,
        region: &Region,
        out: SharedBuffer,
    ) -> Result<()> {
        let elem = self.metadata.dtype.size;
        let key = self.chunk_key(&part.coords);
        let dst = BoxLayout::dense(&region.count, &part.in_region, elem, false);
        let Some(raw) = self.store.get(&key)? else {
            // SAFETY: chunk parts of one region are disjoint, so no other task touches `dst`.
            return unsafe { fill_box(out, &dst, &part.count, &self.fill_native) };
        };
        let swap = self.metadata.dtype.byte_swap();
        if grid.is_whole_chunk(part)
            && swap.is_none()
            && self.chunk_is_c_order()
            && is_contiguous(&dst, &part.count, elem)
        {
            // SAFETY: as above; the range is this part's bytes.
            let target = unsafe { out.slice_mut(dst.offset..dst.offset + self.chunk_nbytes)? };
            return self.decode_chunk(&raw, target, &key);
        }
        with_scratch(self.chunk_nbytes, |chunk| {
            self.decode_chunk(&raw, chunk, &key)?;
            let src = BoxLayout::dense(
                &self.metadata.chunks,
                &part.in_chunk,
                elem,
                self.metadata.order == Order::F,
            );
            // SAFETY: as above.
            unsafe { copy_box(chunk, &src, out, &dst, &part.count, elem, swap) }
        })
    }

    fn write_part(
        &self,
        grid: &ChunkGrid,
        part: &ChunkPart,
        region: &Region,
        data: &[u8],
    ) -> Result<()> {
        let elem = self.metadata.dtype.size;
        let key = self.chunk_key(&part.coords);
        let src = BoxLayout::dense(&region.count, &part.in_region, elem, false);
        let swap = self.metadata.dtype.byte_swap();
        let _lock = self.store.lock_chunk(&key);
        if grid.is_whole_chunk(part)
            && swap.is_none()
            && self.chunk_is_c_order()
            && is_contiguous(&src, &part.count, elem)
        {
            return self.store_chunk(&key, &data[src.offset..src.offset + self.chunk_nbytes]);
        }
        with_scratch(self.chunk_nbytes, |chunk| {
            let whole = grid.is_whole_chunk(part);
            match (grid.covers_chunk_in_array(part), whole) {
                (true, true) => {}
                // An edge chunk: its overhang holds no data, so it gets the fill value.
                (true, false) => self.fill_chunk(chunk)?,
                (false, _) => match self.store.get(&key)? {
                    Some(raw) => self.decode_chunk(&raw, chunk, &key)?,
                    None => self.fill_chunk(chunk)?,
                },
            }
            let dst = BoxLayout::dense(
                &self.metadata.chunks,
                &part.in_chunk,
                elem,
                self.metadata.order == Order::F,
            );
            // SAFETY: `chunk` is this thread's own scratch buffer.
            unsafe {
                copy_box(
                    data,
                    &src,
                    SharedBuffer::new(chunk),
                    &dst,
                    &part.count,
                    elem,
                    swap,
                )?
            };
            self.store_chunk(&key, chunk)
        })
    }

    /// Fills a whole decoded chunk (stored byte order) with the fill value.
    fn fill_chunk(&self, chunk: &mut [u8]) -> Result<()> {
        let chunks = &self.metadata.chunks;
        let layout = BoxLayout::dense(
            chunks,
            &vec![0; chunks.len()],
            self.fill_stored.len(),
            false,
        );
        // SAFETY: `chunk` is exclusively borrowed.
        unsafe { fill_box(SharedBuffer::new(chunk), &layout, chunks, &self.fill_stored) }
    }

    /// Decodes stored chunk bytes into `out`, which has exactly one chunk's size.
    fn decode_chunk(&self, raw: &[u8], out: &mut [u8], key: &str) -> Result<()> {
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

    /// Encodes a decoded chunk and stores it under `key`.
    fn store_chunk(&self, key: &str, chunk: &[u8]) -> Result<()> {
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
}
