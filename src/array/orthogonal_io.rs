//! Reading and writing orthogonal selections (boxes, strided boxes, index lists per
//! dimension): one task per touched chunk, run in parallel, each touching a disjoint part of
//! the caller's buffer.

use super::buffer::{advise_huge_pages, BufferLayout};
use super::chunk_form::ChunkForm;
use super::chunk_io::{with_scratch, ChunkName};
use super::selected::SelectedChunks;
use super::Array;
use crate::dtype::{select_fields, ByteSwap, DataTypeKind};
use crate::error::{Error, Result};
use crate::parallel;
use crate::selection::{ChunkTask, DimPart, DimSelection, OrthogonalPlan, Selection};
use crate::store::read_again_if_changed;
use crate::strided::{
    copy_elements, fill_elements, is_c_contiguous, DimOffsets, ElementCopy, SharedBuffer,
};

/// Bytes of an uncompressed chunk read at a time when scattering it (`stream_task`): small
/// enough to stay in cache between the read and the copy.
const STREAM_BLOCK_BYTES: usize = 256 << 10;

/// The orthogonal selection of a box: `count[d]` indices from `start[d]`, `step[d]` apart
/// (1 when `step` is `None`).
pub fn box_selection(
    start: &[u64],
    count: &[u64],
    step: Option<&[u64]>,
) -> Result<Vec<DimSelection>> {
    if start.len() != count.len() || step.is_some_and(|s| s.len() != start.len()) {
        return Err(Error::InvalidArgument(format!(
            "start, count and step have different lengths ({}, {}, {})",
            start.len(),
            count.len(),
            step.map_or(start.len(), <[u64]>::len)
        )));
    }
    Ok((0..start.len())
        .map(|d| DimSelection::Range {
            start: start[d],
            count: count[d],
            step: step.map_or(1, |s| s[d]),
        })
        .collect())
}

/// Per-dimension offsets of a task's elements, from the strides of the chunk and of the
/// caller's buffer: `(chunk, buffer)` pairs when `chunk_first`, else `(buffer, chunk)`.
pub(super) fn task_offsets(
    task: &ChunkTask,
    chunk_strides: &[usize],
    buffer_strides: &[usize],
    chunk_first: bool,
) -> Vec<DimOffsets> {
    task.parts
        .iter()
        .enumerate()
        .map(|(d, part)| {
            let mut offsets = Vec::new();
            part.for_each(|pos, out| {
                let (c, b) = (
                    pos as usize * chunk_strides[d],
                    out as usize * buffer_strides[d],
                );
                offsets.push(if chunk_first { (c, b) } else { (b, c) });
            });
            offsets
        })
        .collect()
}

impl Array {
    /// Reads the box `start`/`count` into `out` (dense C order, native byte order), whose size
    /// must be the box's element count times the item size. Missing chunks read as the fill value.
    pub fn read_region(&self, start: &[u64], count: &[u64], out: &mut [u8]) -> Result<()> {
        self.read_orthogonal(&box_selection(start, count, None)?, None, out)
    }

    /// Writes the box `start`/`count` from `data` (dense C order, native byte order).
    pub fn write_region(&self, start: &[u64], count: &[u64], data: &[u8]) -> Result<()> {
        self.write_orthogonal(&box_selection(start, count, None)?, None, data)
    }

    /// Reads `count[d]` elements from `start[d]`, `step[d]` apart, into dense `out`.
    pub fn read_strided(
        &self,
        start: &[u64],
        count: &[u64],
        step: &[u64],
        out: &mut [u8],
    ) -> Result<()> {
        self.read_orthogonal(&box_selection(start, count, Some(step))?, None, out)
    }

    /// Reads an orthogonal selection into `out`. The result has one dimension per array
    /// dimension, of the selection's length there; `buffer_strides` (in elements) place it in
    /// `out`, dense C order when `None`. Chunks are decoded in parallel, straight into `out`
    /// where a whole chunk lands contiguously there.
    pub fn read_orthogonal(
        &self,
        selection: &[DimSelection],
        buffer_strides: Option<&[u64]>,
        out: &mut [u8],
    ) -> Result<()> {
        self.read_selection(selection, buffer_strides, out, &self.element)
    }

    /// Writes an orthogonal selection from `data`, laid out as for
    /// [`Array::read_orthogonal`]. Chunks the selection covers are encoded straight from
    /// `data`; others are read, patched and re-encoded under the chunk's lock, so concurrent
    /// writers of disjoint selections lose nothing. Where an index repeats, the last one wins.
    pub fn write_orthogonal(
        &self,
        selection: &[DimSelection],
        buffer_strides: Option<&[u64]>,
        data: &[u8],
    ) -> Result<()> {
        self.write_selection(selection, buffer_strides, data, &self.element)
    }

    /// Reads the fields `names` of the records in the box `start`/`count` of a structured
    /// array into `out`: each element packs the named fields in the order given (native byte
    /// order), like zarr-python's `fields=` selection.
    pub fn read_fields(
        &self,
        start: &[u64],
        count: &[u64],
        names: &[&str],
        out: &mut [u8],
    ) -> Result<()> {
        let selection = Selection::Orthogonal(box_selection(start, count, None)?);
        self.read_fields_selection(&selection, names, out)
    }

    /// Writes the fields `names` of the records in the box `start`/`count` from `data`
    /// (packed as for [`Array::read_fields`]); the other fields keep their values.
    pub fn write_fields(
        &self,
        start: &[u64],
        count: &[u64],
        names: &[&str],
        data: &[u8],
    ) -> Result<()> {
        let selection = Selection::Orthogonal(box_selection(start, count, None)?);
        self.write_fields_selection(&selection, names, data)
    }

    /// Reads the fields `names` of the records any selection picks into `out` (dense, in
    /// the selection's result order), packed as for [`Array::read_fields`].
    pub fn read_fields_selection(
        &self,
        selection: &Selection,
        names: &[&str],
        out: &mut [u8],
    ) -> Result<()> {
        let how = self.field_copy(names)?;
        match selection {
            Selection::Orthogonal(dims) => self.read_selection(dims, None, out, &how),
            _ => match self.select(selection)? {
                SelectedChunks::Points(plan) => self.read_point_plan(&plan, out, &how),
                SelectedChunks::Orthogonal(_) => unreachable!("points and masks plan as points"),
            },
        }
    }

    /// Writes the fields `names` of the records any selection picks from `data` (packed as
    /// for [`Array::read_fields`], in the selection's result order); the other fields keep
    /// their values.
    pub fn write_fields_selection(
        &self,
        selection: &Selection,
        names: &[&str],
        data: &[u8],
    ) -> Result<()> {
        let read = self.field_copy(names)?;
        // Writing, the swap applies to the chunk's record: the packed swap ranges, moved to
        // where each field sits in the full record.
        let ranges: Vec<(usize, usize)> = read
            .swap
            .ranges(read.dst_size)
            .into_iter()
            .filter_map(|(o, n)| {
                let &(full, packed, _) = read
                    .ranges
                    .iter()
                    .find(|&&(_, p, len)| o >= p && o < p + len)?;
                Some((full + o - packed, n))
            })
            .collect();
        let how = read.reversed(if ranges.is_empty() {
            ByteSwap::None
        } else {
            ByteSwap::Ranges(ranges)
        });
        match selection {
            Selection::Orthogonal(dims) => self.write_selection(dims, None, data, &how),
            _ => match self.select(selection)? {
                SelectedChunks::Points(plan) => self.write_point_plan(&plan, data, &how),
                SelectedChunks::Orthogonal(_) => unreachable!("points and masks plan as points"),
            },
        }
    }

    /// How the fields `names` move from a chunk's records into packed caller elements.
    fn field_copy(&self, names: &[&str]) -> Result<ElementCopy> {
        let DataTypeKind::Structured(fields) = &self.metadata.dtype.kind else {
            return Err(Error::InvalidArgument(format!(
                "array {:?} of {} has no fields",
                self.path,
                self.metadata.dtype.typestr()
            )));
        };
        // Records with object fields (pickle) have no fixed-size form to copy fields from.
        self.require_fixed_size()?;
        let (packed, ranges) = select_fields(fields, names)?;
        Ok(ElementCopy {
            src_size: self.item_size(),
            dst_size: packed.size,
            ranges,
            swap: packed.byte_swap(),
        })
    }

    fn read_selection(
        &self,
        selection: &[DimSelection],
        buffer_strides: Option<&[u64]>,
        out: &mut [u8],
        how: &ElementCopy,
    ) -> Result<()> {
        self.require_fixed_size()?;
        let plan = self.plan(selection)?;
        let layout = BufferLayout::new(
            plan.out_shape(),
            how.dst_size,
            buffer_strides,
            out.len(),
            true,
        )
        .map_err(|e| self.named(e))?;
        let fill = self.converted_fill(how);
        if buffer_strides.is_none() {
            advise_huge_pages(out);
        }
        let out = SharedBuffer::new(out);
        if self.sharded {
            return self.read_sharded(&plan, &layout, out, how, &fill);
        }
        if self.store.capabilities().batched && !self.caches_chunks() {
            return self.read_fetched(&plan, &layout, out, how, &fill);
        }
        self.for_each_task(&plan, |task| self.read_task(task, &layout, out, how, &fill))
    }

    /// Reads the tasks of `plan` from a store on a network: the chunks are fetched with many
    /// requests in flight and each is decoded on the pool as it arrives; of blosc chunks of
    /// which little is selected, only the blocks needed ([`Array::read_blocks_apart`]).
    fn read_fetched(
        &self,
        plan: &OrthogonalPlan,
        buffer: &BufferLayout,
        out: SharedBuffer,
        how: &ElementCopy,
        fill: &[u8],
    ) -> Result<()> {
        let (mut whole, mut apart) = (Vec::new(), Vec::new());
        for i in 0..plan.chunk_count() {
            let task = plan.chunk(i);
            match self.reads_blocks_apart(&*self.form(&task.coords)?, &task, buffer) {
                true => apart.push(i),
                false => whole.push(i),
            }
        }
        self.read_blocks_apart(plan, &apart, buffer, out, how, fill)?;
        self.get_chunks(whole.len(), &|j| plan.chunk(whole[j]).coords, &|j, raw| {
            let task = plan.chunk(whole[j]);
            let name = ChunkName::Key(self.chunk_key(&task.coords).into());
            self.place_stored_chunk(&task, &name, raw, buffer, out, how, fill)
        })
    }

    /// Puts a chunk's stored bytes (`None`: never written) into the caller's buffer: decoded
    /// straight there when the chunk lands there whole, else through this thread's scratch.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn place_stored_chunk(
        &self,
        task: &ChunkTask,
        name: &ChunkName,
        raw: Option<&[u8]>,
        buffer: &BufferLayout,
        out: SharedBuffer,
        how: &ElementCopy,
        fill: &[u8],
    ) -> Result<()> {
        let form = self.form(&task.coords)?;
        let dims = self.task_offsets(&form, task, buffer, true);
        let Some(raw) = raw else {
            // SAFETY: the tasks of one selection write disjoint elements of a non-overlapping
            // layout.
            return unsafe { fill_elements(out, &dims, fill) };
        };
        if self.chunk_is_buffer_run(&form, task, buffer, how) {
            let start: usize = dims.iter().map(|d| d[0].1).sum();
            // SAFETY: as above; this range is exactly this chunk's elements.
            let target = unsafe { out.slice_mut(start..start + form.nbytes)? };
            return self.decode_chunk(&form, raw, target, name);
        }
        self.with_decoded_part(&form, raw, name, &dims, |chunk| {
            // SAFETY: as above.
            unsafe { copy_elements(chunk, out, &dims, how) }
        })
    }

    fn write_selection(
        &self,
        selection: &[DimSelection],
        buffer_strides: Option<&[u64]>,
        data: &[u8],
        how: &ElementCopy,
    ) -> Result<()> {
        self.check_writable()?;
        self.require_fixed_size()?;
        let plan = self.plan(selection)?;
        let layout = BufferLayout::new(
            plan.out_shape(),
            how.src_size,
            buffer_strides,
            data.len(),
            false,
        )
        .map_err(|e| self.named(e))?;
        if self.sharded {
            return self.write_sharded(&plan, &layout, data, how);
        }
        if self.store.capabilities().batched && !self.caches_chunks() {
            return self.write_sent(&plan, &layout, data, how);
        }
        self.for_each_task(&plan, |task| self.write_task(task, &layout, data, how))
    }

    /// Writes the tasks of `plan` to a store on a network: the chunks the selection covers
    /// are assembled and encoded on the pool and sent with many requests in flight (no other
    /// writer of a disjoint selection can touch them, so they need no lock); the others are
    /// read, patched and re-encoded under their chunk's lock, as elsewhere.
    fn write_sent(
        &self,
        plan: &OrthogonalPlan,
        buffer: &BufferLayout,
        data: &[u8],
        how: &ElementCopy,
    ) -> Result<()> {
        let covered = |task: &ChunkTask| how.ranges.is_empty() && task.covers_chunk_in_array();
        self.for_each_task(plan, |task| match covered(task) {
            true => Ok(()),
            false => self.write_task(task, buffer, data, how),
        })?;
        let count = usize::try_from(plan.chunk_count())
            .map_err(|_| Error::Overflow("more chunks than memory can count".into()))?;
        self.store.set_many(count, &|i| {
            let task = plan.chunk(i as u64);
            if !covered(&task) {
                return Ok(None);
            }
            let key = self.chunk_key(&task.coords);
            let form = self.form(&task.coords)?;
            let dims = self.task_offsets(&form, &task, buffer, false);
            let name = ChunkName::Key(key.as_str().into());
            let stored = if self.chunk_is_buffer_run(&form, &task, buffer, how) {
                let start: usize = dims.iter().map(|d| d[0].0).sum();
                self.encode_unless_fill(&form, &data[start..start + form.nbytes], &name)?
            } else {
                with_scratch(form.nbytes, |chunk| {
                    if !task.is_whole_chunk() {
                        // An edge chunk: its overhang holds no data, so it gets the fill value.
                        self.fill_chunk(chunk);
                    }
                    // SAFETY: `chunk` is this thread's own scratch buffer.
                    unsafe { copy_elements(data, SharedBuffer::new(chunk), &dims, how)? };
                    self.encode_unless_fill(&form, chunk, &name)
                })?
            };
            Ok(Some((key, stored)))
        })
    }

    /// The fill value as a caller element of `how`'s destination (native order).
    pub(super) fn converted_fill(&self, how: &ElementCopy) -> Vec<u8> {
        if how.ranges.is_empty() {
            return self.fill_native.clone();
        }
        let mut fill = vec![0u8; how.dst_size];
        for &(s, d, n) in &how.ranges {
            fill[d..d + n].copy_from_slice(&self.fill_native[s..s + n]);
        }
        fill
    }

    /// Runs `work` on every chunk task of `plan` ([`parallel::run_call`]).
    pub(super) fn for_each_task(
        &self,
        plan: &OrthogonalPlan,
        work: impl Fn(&ChunkTask) -> Result<()> + Sync,
    ) -> Result<()> {
        parallel::run_call(plan.chunk_count(), |i| work(&plan.chunk(i)))
    }

    /// Per-dimension byte offsets of a task's elements in its chunk (of `form`) and in the
    /// buffer: `(chunk, buffer)` when `chunk_first`, else `(buffer, chunk)`.
    pub(super) fn task_offsets(
        &self,
        form: &ChunkForm,
        task: &ChunkTask,
        buffer: &BufferLayout,
        chunk_first: bool,
    ) -> Vec<DimOffsets> {
        task_offsets(task, &form.strides, &buffer.strides, chunk_first)
    }

    /// Whether the task's chunk (of `form`) maps byte for byte onto one contiguous run of
    /// the buffer.
    pub(super) fn chunk_is_buffer_run(
        &self,
        form: &ChunkForm,
        task: &ChunkTask,
        buffer: &BufferLayout,
        how: &ElementCopy,
    ) -> bool {
        form.is_c_order
            && how.is_plain()
            && how.src_size == how.dst_size
            && task.is_whole_chunk()
            && is_c_contiguous(&form.shape, &buffer.strides, self.item_size())
    }

    fn read_task(
        &self,
        task: &ChunkTask,
        buffer: &BufferLayout,
        out: SharedBuffer,
        how: &ElementCopy,
        fill: &[u8],
    ) -> Result<()> {
        let key = self.chunk_key(&task.coords);
        let form = self.form(&task.coords)?;
        let dims = self.task_offsets(&form, task, buffer, true);
        let cached = self.caches_chunks();
        if !cached && self.chunk_is_buffer_run(&form, task, buffer, how) {
            let start: usize = dims.iter().map(|d| d[0].1).sum();
            // SAFETY: the tasks of one selection write disjoint elements of a non-overlapping
            // layout; this range is exactly this chunk's elements.
            let target = unsafe { out.slice_mut(start..start + form.nbytes)? };
            return self.read_chunk_into(&form, &key, target);
        }
        if !cached
            && form.pipeline.is_identity()
            && form.is_c_order
            && matches!(task.parts.first(), Some(DimPart::Range { .. }))
        {
            // A chunk replaced while it was read is read again.
            return read_again_if_changed(|| self.stream_task(&form, &key, &dims, out, how, fill));
        }
        if cached {
            return self.with_chunk(&form, &key, |chunk| match chunk {
                // SAFETY: as above.
                None => unsafe { fill_elements(out, &dims, fill) },
                // SAFETY: as above.
                Some(chunk) => unsafe { copy_elements(chunk, out, &dims, how) },
            });
        }
        let name = ChunkName::Key(key.as_str().into());
        self.with_stored_chunk(&key, |raw| match raw {
            // SAFETY: as above.
            None => unsafe { fill_elements(out, &dims, fill) },
            Some(raw) => self.with_decoded_part(&form, raw, &name, &dims, |chunk| {
                // SAFETY: as above.
                unsafe { copy_elements(chunk, out, &dims, how) }
            }),
        })
    }

    /// Scatters an uncompressed C-order chunk block by block: each block of whole planes along
    /// the first dimension is read into cache-sized scratch and copied out at once, so the
    /// chunk crosses memory once instead of being read whole and then scattered. Planes the
    /// task does not select are not read.
    fn stream_task(
        &self,
        form: &ChunkForm,
        key: &str,
        dims: &[DimOffsets],
        out: SharedBuffer,
        how: &ElementCopy,
        fill: &[u8],
    ) -> Result<()> {
        let Some(value) = self.open_uncompressed(form, key)? else {
            // SAFETY: the tasks of one selection write disjoint elements of a non-overlapping layout.
            return unsafe { fill_elements(out, dims, fill) };
        };
        // Bytes per index along the first dimension of a C-ordered chunk (from the shape: an F
        // chunk that is C-ordered only because other dimensions are 1 has other strides).
        let plane = form.nbytes / form.shape[0] as usize;
        let planes = &dims[0];
        let mut block_dims = dims.to_vec();
        let mut start = 0;
        while start < planes.len() {
            let first = planes[start].0;
            let mut end = start + 1;
            while end < planes.len() && planes[end].0 + plane - first <= STREAM_BLOCK_BYTES {
                end += 1;
            }
            let len = planes[end - 1].0 + plane - first;
            block_dims[0] = planes[start..end]
                .iter()
                .map(|&(s, d)| (s - first, d))
                .collect();
            with_scratch(len, |block| {
                value
                    .read_exact_at(first as u64, block)
                    .map_err(|e| e.context(format!("chunk {key:?}")))?;
                // SAFETY: as above.
                unsafe { copy_elements(block, out, &block_dims, how) }
            })?;
            start = end;
        }
        Ok(())
    }

    fn write_task(
        &self,
        task: &ChunkTask,
        buffer: &BufferLayout,
        data: &[u8],
        how: &ElementCopy,
    ) -> Result<()> {
        let key = self.chunk_key(&task.coords);
        let form = self.form(&task.coords)?;
        let dims = self.task_offsets(&form, task, buffer, false);
        with_scratch(form.nbytes, |chunk| {
            // Writing some fields of a record keeps the others: the old chunk is always needed.
            if !how.ranges.is_empty() || !task.covers_chunk_in_array() {
                let name = ChunkName::Key(key.as_str().into());
                return self.update_chunk(&key, |old, new| {
                    self.decode_or_fill(&form, old, chunk, &name)?;
                    // SAFETY: `chunk` is this thread's own scratch buffer.
                    unsafe { copy_elements(data, SharedBuffer::new(chunk), &dims, how)? };
                    self.encode_unless_fill_into(&form, chunk, &name, new)
                });
            }
            let _lock = self.store.lock_chunk(&key)?;
            if self.chunk_is_buffer_run(&form, task, buffer, how) {
                let start: usize = dims.iter().map(|d| d[0].0).sum();
                return self.store_chunk(&form, &key, &data[start..start + form.nbytes]);
            }
            if !task.is_whole_chunk() {
                // An edge chunk: its overhang holds no data, so it gets the fill value.
                self.fill_chunk(chunk);
            }
            // SAFETY: `chunk` is this thread's own scratch buffer.
            unsafe { copy_elements(data, SharedBuffer::new(chunk), &dims, how)? };
            self.store_chunk(&form, &key, chunk)
        })
    }
}
