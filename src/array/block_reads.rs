//! Reading from a store on a network only the stored blocks of a chunk that a selection
//! needs (zarr-python 2's `partial_decompress`): for a chunk of one codec that decodes parts
//! (blosc), of which less than half is selected, the first request fetches the chunk's head
//! (its header and block starts, [`crate::codec::CodecPipeline::stored_head`], and at least
//! [`LEAST_HEAD`] bytes), the next ones the wanted blocks not in it; the chunk is decoded from a frame holding just those
//! ([`crate::codec::CodecPipeline::decode_parts_into`]), zeros elsewhere.

use super::buffer::BufferLayout;
use super::chunk_form::ChunkForm;
use super::chunk_io::{element_parts, ChunkName};
use super::shard_io::OPEN_BATCH;
use super::Array;
use crate::error::{try_alloc_zeroed, Result};
use crate::parallel;
use crate::selection::{ChunkTask, OrthogonalPlan};
use crate::store::{read_again_if_changed, Lead, ValueReader};
use crate::strided::{ElementCopy, SharedBuffer};

/// The least a chunk's first request fetches: a stored chunk up to this size comes whole in
/// one request, as when it is read whole, and the blocks near a larger one's start come with
/// its header.
const LEAST_HEAD: u64 = 256 << 10;

impl Array {
    /// Whether the task's chunk (of `form`) is read block by block: the chunk keys' form is
    /// known, its codec reads parts apart, and the selected elements lie within less than
    /// half of its bytes (else most blocks are wanted, and the head's request is a waste).
    pub(super) fn reads_blocks_apart(
        &self,
        form: &ChunkForm,
        task: &ChunkTask,
        buffer: &BufferLayout,
    ) -> bool {
        if !self.chunk_keys_known() || form.pipeline.stored_head(form.nbytes) == 0 {
            return false;
        }
        let dims = self.task_offsets(form, task, buffer, true);
        let parts = element_parts(&dims, self.item_size());
        let span = parts
            .first()
            .zip(parts.last())
            .map(|(a, z)| z.end - a.start);
        span.is_some_and(|span| span < form.nbytes / 2)
    }

    /// Reads the chunks `which` of `plan` ([`Array::reads_blocks_apart`] of each), in
    /// batches: their heads, then the blocks each needs, decoded on the pool.
    pub(super) fn read_blocks_apart(
        &self,
        plan: &OrthogonalPlan,
        which: &[u64],
        buffer: &BufferLayout,
        out: SharedBuffer,
        how: &ElementCopy,
        fill: &[u8],
    ) -> Result<()> {
        for batch in which.chunks(OPEN_BATCH) {
            let tasks: Vec<ChunkTask> = batch.iter().map(|&i| plan.chunk(i)).collect();
            let forms = tasks
                .iter()
                .map(|task| self.form(&task.coords))
                .collect::<Result<Vec<_>>>()?;
            let head = forms
                .iter()
                .map(|form| form.pipeline.stored_head(form.nbytes))
                .fold(LEAST_HEAD, u64::max);
            let keys: Vec<String> = tasks.iter().map(|t| self.chunk_key(&t.coords)).collect();
            let wanted = |j: usize, head: &[u8], len: u64| {
                self.stored_parts(&tasks[j], &forms[j], buffer, head, len)
            };
            let readers = self.store.open_many(
                batch.len(),
                &|j| keys[j].clone(),
                Lead::Head(head),
                &wanted,
            )?;
            parallel::run_call(batch.len() as u64, |j| {
                let j = j as usize;
                let (task, name) = (&tasks[j], ChunkName::Key(keys[j].as_str().into()));
                // A chunk replaced between its head and its blocks is read again, whole.
                let mut first = Some(readers[j].as_deref());
                read_again_if_changed(|| {
                    let frame = match first.take() {
                        Some(Some(reader)) => {
                            Some(self.sparse_frame(reader, task, &forms[j], buffer, head, &name)?)
                        }
                        Some(None) => None,
                        None => self.store.get(&keys[j])?,
                    };
                    self.place_stored_chunk(task, &name, frame.as_deref(), buffer, out, how, fill)
                })
            })?;
        }
        Ok(())
    }

    /// The `(offset, length)` ranges of the stored chunk (of `len` bytes, whose first bytes
    /// are `head`) that decoding the task's elements reads; all of it when the codec cannot
    /// tell.
    fn stored_parts(
        &self,
        task: &ChunkTask,
        form: &ChunkForm,
        buffer: &BufferLayout,
        head: &[u8],
        len: u64,
    ) -> Vec<(u64, u64)> {
        let dims = self.task_offsets(form, task, buffer, true);
        let parts = element_parts(&dims, self.item_size());
        form.pipeline
            .stored_parts(head, form.nbytes, &parts)
            .unwrap_or_else(|| vec![(0, len)])
    }

    /// The stored chunk `reader` as a frame of its length holding its first `head` bytes and
    /// the ranges the task needs ([`Array::stored_parts`]), zeros elsewhere.
    fn sparse_frame(
        &self,
        reader: &dyn ValueReader,
        task: &ChunkTask,
        form: &ChunkForm,
        buffer: &BufferLayout,
        head: u64,
        name: &ChunkName,
    ) -> Result<Vec<u8>> {
        let len = reader.len();
        let mut frame = try_alloc_zeroed(
            usize::try_from(len).unwrap_or(usize::MAX),
            &name.to_string(),
        )?;
        let head = head.min(len);
        let read = |offset: u64, to: &mut [u8]| {
            reader
                .read_exact_at(offset, to)
                .map_err(|e| e.context(name.to_string()))
        };
        read(0, &mut frame[..head as usize])?;
        let ranges = self.stored_parts(task, form, buffer, &frame[..head as usize], len);
        for (offset, n) in ranges {
            // The head is in place already.
            let (start, end) = (offset.max(head), offset.saturating_add(n).min(len));
            if start < end {
                read(start, &mut frame[start as usize..end as usize])?;
            }
        }
        Ok(frame)
    }
}
