//! Object arrays (variable-length text, bytes or arrays) in the Arrow-style layout of
//! `../shared/spec/zep0007-strings-draft.md`: a box of n items is n + 1 `i64` offsets into one
//! contiguous data buffer. Item `i` is `data[offsets[i]..offsets[i + 1]]`.

use super::orthogonal_io::{box_selection, task_offsets};
use super::Array;
use crate::dtype::ObjectCodec;
use crate::error::{Error, Result};
use crate::selection::{ChunkTask, OrthogonalPlan};
use crate::strided::{dense_strides, for_each_offset, layout_strides, SharedBuffer};
use std::borrow::Cow;
use std::ops::Range;
use std::sync::Mutex;

/// The decoded items of one chunk: the object codec's encoding and each item's byte range.
struct ChunkItems {
    encoded: Vec<u8>,
    items: Vec<Range<usize>>,
}

impl ChunkItems {
    fn item(&self, i: usize) -> &[u8] {
        &self.encoded[self.items[i].clone()]
    }
}

impl Array {
    /// Bytes the items of the box `start`/`count` take: the size of the data buffer
    /// [`Array::read_vlen`] needs (in bytes, whole elements for `vlen-array`).
    pub fn vlen_size(&self, start: &[u64], count: &[u64]) -> Result<u64> {
        let (codec, plan) = self.object_plan(start, count)?;
        Ok(self.item_lengths(codec, &plan)?.iter().sum())
    }

    /// Reads the items of the box `start`/`count` (C order): `offsets` (one more than the
    /// items) receives each item's start in `data` and the end of the last, `data` the items'
    /// bytes back to back (text as UTF-8; array elements in native byte order).
    pub fn read_vlen(
        &self,
        start: &[u64],
        count: &[u64],
        offsets: &mut [i64],
        data: &mut [u8],
    ) -> Result<()> {
        let (codec, plan) = self.object_plan(start, count)?;
        let n = plan.elements() as usize;
        if offsets.len() != n + 1 {
            return Err(Error::BufferSize(format!(
                "{n} items need {} offsets, got {}",
                n + 1,
                offsets.len()
            )));
        }
        let mut starts = Vec::with_capacity(n + 1);
        starts.push(0i64);
        for len in self.item_lengths(codec, &plan)? {
            starts.push(starts[starts.len() - 1] + len as i64);
        }
        let total = starts[n] as usize;
        if total > data.len() {
            return Err(Error::BufferSize(format!(
                "the items take {total} bytes, the data buffer has {}",
                data.len()
            )));
        }
        let out = SharedBuffer::new(data);
        let swap = codec.byte_swap();
        let elem = codec.element_size();
        self.for_each_stored_chunk(&plan, |task, raw| {
            let items = self.items_of(codec, task, raw)?;
            for (chunk_index, out_index) in self.element_pairs(task, plan.out_shape()) {
                let (from, to) = (starts[out_index] as usize, starts[out_index + 1] as usize);
                // SAFETY: each output element owns its own byte range of `data`.
                let target = unsafe { out.slice_mut(from..to)? };
                target.copy_from_slice(items.item(chunk_index));
                target.chunks_exact_mut(elem).for_each(|e| swap.apply(e));
            }
            Ok(())
        })?;
        offsets.copy_from_slice(&starts);
        Ok(())
    }

    /// Writes the items of the box `start`/`count` (C order) from `offsets` (one more than the
    /// items, non-decreasing) and `data` (text as UTF-8, checked; array elements in native byte
    /// order). Partly covered chunks keep their other items.
    pub fn write_vlen(
        &self,
        start: &[u64],
        count: &[u64],
        offsets: &[i64],
        data: &[u8],
    ) -> Result<()> {
        self.store.check_writable(&self.path)?;
        let (codec, plan) = self.object_plan(start, count)?;
        let n = plan.elements() as usize;
        let items = caller_items(codec, n, offsets, data)?;
        let swap = codec.byte_swap();
        let elem = codec.element_size();
        let fill = self.fill_item(codec)?;
        let covers = |task: &ChunkTask| task.covers_chunk_in_array();
        self.update_each_stored_chunk(&plan, covers, |task, old| {
            let existing = match covers(task) {
                true => None,
                false => Some(self.items_of(codec, task, old)?),
            };
            let mut chunk_items: Vec<Cow<[u8]>> = (0..self.chunk_elements())
                .map(|i| Cow::Borrowed(existing.as_ref().map_or(fill.as_slice(), |e| e.item(i))))
                .collect();
            for (chunk_index, out_index) in self.element_pairs(task, plan.out_shape()) {
                let item = items[out_index];
                chunk_items[chunk_index] = if swap.is_none() {
                    Cow::Borrowed(item)
                } else {
                    let mut owned = item.to_vec();
                    owned.chunks_exact_mut(elem).for_each(|e| swap.apply(e));
                    Cow::Owned(owned)
                };
            }
            if !self.write_empty_chunks()
                && self.metadata.fill_value.0.is_some()
                && chunk_items.iter().all(|i| **i == *fill)
            {
                return Ok(None);
            }
            let mut encoded = Vec::new();
            codec.encode(
                chunk_items.iter().map(|i| &**i),
                &self.chunk_shape,
                &mut encoded,
            )?;
            self.encode_chunk(&encoded, &self.chunk_name(&task.coords))
                .map(Some)
        })
    }

    fn object_plan(&self, start: &[u64], count: &[u64]) -> Result<(&ObjectCodec, OrthogonalPlan)> {
        let codec = self.object.as_ref().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "array {:?} of {} has fixed-size values: read and write it with the region calls",
                self.path,
                self.metadata.dtype.typestr()
            ))
        })?;
        let plan = self.plan(&box_selection(start, count, None)?)?;
        Ok((codec, plan))
    }

    /// Elements in one chunk.
    fn chunk_elements(&self) -> usize {
        self.chunk_shape.iter().product::<u64>() as usize
    }

    /// The stored item of never-written elements.
    pub(super) fn fill_item(&self, codec: &ObjectCodec) -> Result<Vec<u8>> {
        let fill: serde_json::Value = self.metadata.fill_value.to_json(&self.metadata.dtype);
        codec.fill_item(&fill)
    }

    /// `(index in the chunk, index in the result)` of every element a task touches.
    fn element_pairs(&self, task: &ChunkTask, out_shape: &[u64]) -> Vec<(usize, usize)> {
        // The vlen codecs keep the chunk's memory order; json2 and msgpack2 nest in C order.
        let chunk_strides = if self.object.as_ref().is_some_and(ObjectCodec::nests_items) {
            dense_strides(&self.chunk_shape, 1, false)
        } else {
            layout_strides(&self.chunk_shape, 1, &self.layout)
        };
        let dims = task_offsets(
            task,
            &chunk_strides,
            &dense_strides(out_shape, 1, false),
            true,
        );
        let mut pairs = Vec::new();
        for_each_offset(&dims, |c, o| pairs.push((c, o)));
        pairs
    }

    /// The items of a task's chunk from its stored bytes; a chunk never written (`None`)
    /// holds the fill item everywhere.
    fn items_of(
        &self,
        codec: &ObjectCodec,
        task: &ChunkTask,
        raw: Option<&[u8]>,
    ) -> Result<ChunkItems> {
        let Some(raw) = raw else {
            let encoded = self.fill_item(codec)?;
            return Ok(ChunkItems {
                items: vec![0..encoded.len(); self.chunk_elements()],
                encoded,
            });
        };
        let name = self.chunk_name(&task.coords);
        let decoded = self.decode_unsized(raw, &name)?;
        let (encoded, items) = codec
            .decode(decoded, &self.chunk_shape)
            .map_err(|e| e.context(name))?;
        Ok(ChunkItems { encoded, items })
    }

    /// Each result element's item length in bytes.
    fn item_lengths(&self, codec: &ObjectCodec, plan: &OrthogonalPlan) -> Result<Vec<u64>> {
        let lengths = Mutex::new(vec![0u64; plan.elements() as usize]);
        self.for_each_stored_chunk(plan, |task, raw| {
            let items = self.items_of(codec, task, raw)?;
            let found: Vec<(usize, u64)> = self
                .element_pairs(task, plan.out_shape())
                .into_iter()
                .map(|(c, o)| (o, items.items[c].len() as u64))
                .collect();
            let mut lengths = lengths.lock().unwrap_or_else(|p| p.into_inner());
            found.into_iter().for_each(|(o, len)| lengths[o] = len);
            Ok(())
        })?;
        Ok(lengths.into_inner().unwrap_or_else(|p| p.into_inner()))
    }
}

/// The caller's items, checked: offsets within `data` and non-decreasing, text valid UTF-8,
/// array items whole elements.
fn caller_items<'a>(
    codec: &ObjectCodec,
    n: usize,
    offsets: &[i64],
    data: &'a [u8],
) -> Result<Vec<&'a [u8]>> {
    if offsets.len() != n + 1 {
        return Err(Error::BufferSize(format!(
            "{n} items need {} offsets, got {}",
            n + 1,
            offsets.len()
        )));
    }
    (0..n)
        .map(|i| {
            let (a, b) = (offsets[i], offsets[i + 1]);
            if a < 0 || b < a || b as u64 > data.len() as u64 {
                return Err(Error::InvalidArgument(format!(
                    "item {i}: offsets {a}..{b} are not a range of the {}-byte data buffer",
                    data.len()
                )));
            }
            let item = &data[a as usize..b as usize];
            if codec.holds_text() && std::str::from_utf8(item).is_err() {
                return Err(Error::InvalidArgument(format!(
                    "item {i} is not valid UTF-8"
                )));
            }
            if !item.len().is_multiple_of(codec.element_size()) {
                return Err(Error::InvalidArgument(format!(
                    "item {i} has {} bytes, not whole {}-byte elements",
                    item.len(),
                    codec.element_size()
                )));
            }
            Ok(item)
        })
        .collect()
}
