//! A selection of any kind resolved against an array, addressed chunk by chunk: the common
//! ground of the calls that take one selection descriptor (object arrays, field selections).
//! Orthogonal selections stay an [`OrthogonalPlan`]; points and masks become a [`PointPlan`].

use super::orthogonal_io::task_offsets;
use super::shard_io::ChunkRef;
use super::Array;
use crate::error::{Error, Result};
use crate::parallel;
use crate::selection::{mask_points, OrthogonalPlan, PointPlan, Selection};
use crate::strided::{dense_strides, for_each_offset};

/// The chunks a selection touches and, for each, which of its elements go where in the result.
pub(super) enum SelectedChunks {
    /// A box, strided box or orthogonal selection: the result has the selection's shape.
    Orthogonal(OrthogonalPlan),
    /// Points (or a mask's points in C order): the result is one element per point.
    Points(PointPlan),
}

impl SelectedChunks {
    /// Elements in the result.
    pub(super) fn len(&self) -> u64 {
        match self {
            SelectedChunks::Orthogonal(plan) => plan.elements(),
            SelectedChunks::Points(plan) => plan.len() as u64,
        }
    }

    /// Chunks touched.
    pub(super) fn chunk_count(&self) -> u64 {
        match self {
            SelectedChunks::Orthogonal(plan) => plan.chunk_count(),
            SelectedChunks::Points(plan) => plan.chunk_count() as u64,
        }
    }

    /// Grid coordinates of the `i`-th touched chunk.
    pub(super) fn coords(&self, i: u64) -> Vec<u64> {
        match self {
            SelectedChunks::Orthogonal(plan) => plan.chunk(i).coords,
            SelectedChunks::Points(plan) => plan.group(i as usize).coords.to_vec(),
        }
    }

    /// Whether the selection sets every element of the `i`-th chunk that lies in the array
    /// (so a write need not read it first). Points never count as covering.
    pub(super) fn covers_chunk(&self, i: u64) -> bool {
        match self {
            SelectedChunks::Orthogonal(plan) => plan.chunk(i).covers_chunk_in_array(),
            SelectedChunks::Points(_) => false,
        }
    }

    /// `(index in the chunk, index in the result)` of every element of the `i`-th chunk the
    /// selection touches, the chunk's elements numbered with `chunk_strides` (in elements).
    pub(super) fn element_pairs(&self, i: u64, chunk_strides: &[usize]) -> Vec<(usize, usize)> {
        let mut pairs = Vec::new();
        match self {
            SelectedChunks::Orthogonal(plan) => {
                let task = plan.chunk(i);
                let out = dense_strides(plan.out_shape(), 1, false);
                let dims = task_offsets(&task, chunk_strides, &out, true);
                for_each_offset(&dims, |c, o| pairs.push((c, o)));
            }
            SelectedChunks::Points(plan) => plan.group(i as usize).for_each(|point, pos| {
                let c = pos
                    .iter()
                    .zip(chunk_strides)
                    .map(|(&p, &s)| p as usize * s)
                    .sum();
                pairs.push((c, point));
            }),
        }
        pairs
    }

    fn chunk_refs(&self) -> Vec<ChunkRef> {
        (0..self.chunk_count())
            .map(|i| (i as usize, self.coords(i)))
            .collect()
    }
}

impl Array {
    /// The number of elements a selection picks and the bytes they take: for an object array
    /// the bytes of their items ([`Array::vlen_selection_size`]), otherwise the elements times
    /// the item size.
    pub fn selection_size(&self, selection: &Selection) -> Result<(u64, u64)> {
        if self.object.is_some() {
            return self.vlen_selection_size(selection);
        }
        let n = self.select(selection)?.len();
        let bytes = n.checked_mul(self.item_size() as u64).ok_or_else(|| {
            Error::Overflow(format!("{n} elements of {} bytes", self.item_size()))
        })?;
        Ok((n, bytes))
    }

    /// Checks a selection against the array and maps it onto its chunks.
    pub(super) fn select(&self, selection: &Selection) -> Result<SelectedChunks> {
        let points =
            |npoints, coords: &[u64]| self.point_plan(npoints, coords).map(SelectedChunks::Points);
        match selection {
            Selection::Orthogonal(dims) => Ok(SelectedChunks::Orthogonal(self.plan(dims)?)),
            Selection::Points { npoints, coords } => points(*npoints, coords),
            Selection::Mask(mask) => {
                let (npoints, coords) =
                    mask_points(&self.shape(), mask).map_err(|e| self.named(e))?;
                points(npoints, &coords)
            }
        }
    }

    /// Runs `f(i, stored bytes)` on the `i`-th chunk of `selected` for every chunk
    /// (`None`: never written), chunks in parallel; a sharded array's shards are each opened
    /// once.
    pub(super) fn for_each_stored_chunk(
        &self,
        selected: &SelectedChunks,
        f: impl Fn(u64, Option<&[u8]>) -> Result<()> + Sync,
    ) -> Result<()> {
        if self.sharded {
            return self.read_stored_chunks(selected.chunk_refs(), &|i, _, raw| f(i as u64, raw));
        }
        parallel::run_call(selected.chunk_count(), |i| {
            self.with_stored_chunk(&self.chunk_key(&selected.coords(i)), |raw| f(i, raw))
        })
    }

    /// Replaces the stored bytes of each chunk of `selected` with what `f(i, old bytes)` makes
    /// of them (`None`: the chunk is not stored), each under its chunk's or shard's lock;
    /// `covers(i)` says `f` does not need the old bytes.
    pub(super) fn update_each_stored_chunk(
        &self,
        selected: &SelectedChunks,
        covers: impl Fn(u64) -> bool + Sync,
        f: impl Fn(u64, Option<&[u8]>) -> Result<Option<Vec<u8>>> + Sync,
    ) -> Result<()> {
        if self.sharded {
            return self.update_stored_chunks(
                selected.chunk_refs(),
                &|i| covers(i as u64),
                &|i, old| f(i as u64, old),
            );
        }
        parallel::run_call(selected.chunk_count(), |i| {
            let key = self.chunk_key(&selected.coords(i));
            if !covers(i) {
                return self.update_chunk(&key, |old, new| Ok(Self::into_update(f(i, old)?, new)));
            }
            let _lock = self.store.lock_chunk(&key)?;
            match f(i, None)? {
                Some(bytes) => self.store_encoded(&key, &bytes),
                None => self.erase_chunk(&key),
            }
        })
    }
}
