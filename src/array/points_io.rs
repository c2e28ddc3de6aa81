//! Reading and writing point (coordinate) selections: the points of each chunk are gathered
//! or scattered with one decode of that chunk, chunks in parallel.

use super::chunk_io::with_scratch;
use super::Array;
use crate::error::{Error, Result};
use crate::parallel;
use crate::selection::{mask_points, PointGroup, PointPlan};
use crate::strided::{copy_elements, fill_elements, DimOffsets, SharedBuffer};
use rayon::prelude::*;

impl Array {
    /// Reads the elements at `npoints` points given by `coords` (`ndim` indices per point)
    /// into `out`, one element per point in the order given.
    pub fn read_points(&self, npoints: usize, coords: &[u64], out: &mut [u8]) -> Result<()> {
        let plan = self.point_plan(npoints, coords, out.len())?;
        let out = SharedBuffer::new(out);
        if self.sharding.is_some() {
            let chunks = (0..plan.chunk_count())
                .map(|i| (i, plan.group(i).coords.to_vec()))
                .collect();
            return self.read_decoded_chunks(chunks, &|i, _, chunk| {
                let pairs = [self.point_offsets(&plan.group(i), true)];
                // SAFETY: every point owns its own element of `out`.
                unsafe {
                    match chunk {
                        None => fill_elements(out, &pairs, &self.fill_native),
                        Some(chunk) => copy_elements(chunk, out, &pairs, &self.element),
                    }
                }
            });
        }
        self.for_each_group(&plan, |group| {
            let key = self.chunk_key(group.coords);
            let pairs = [self.point_offsets(group, true)];
            self.with_chunk(&key, |chunk| match chunk {
                // SAFETY: every point owns its own element of `out`.
                None => unsafe { fill_elements(out, &pairs, &self.fill_native) },
                // SAFETY: as above.
                Some(chunk) => unsafe { copy_elements(chunk, out, &pairs, &self.element) },
            })
        })
    }

    /// Reads the elements `mask` selects (one byte per element of the array, C order;
    /// nonzero: selected) into `out`, one after another in C order, like zarr-python's
    /// `get_mask_selection`. As there, the selected elements' coordinates are listed first
    /// (8 bytes per dimension per selected element).
    pub fn read_mask(&self, mask: &[u8], out: &mut [u8]) -> Result<()> {
        let (npoints, coords) = mask_points(&self.shape(), mask).map_err(|e| self.named(e))?;
        self.read_points(npoints, &coords, out)
    }

    /// Writes `data` to the elements `mask` selects, in C order (see [`Array::read_mask`]).
    pub fn write_mask(&self, mask: &[u8], data: &[u8]) -> Result<()> {
        let (npoints, coords) = mask_points(&self.shape(), mask).map_err(|e| self.named(e))?;
        self.write_points(npoints, &coords, data)
    }

    /// Writes one element per point from `data` to the `npoints` points given by `coords`.
    /// Where a point repeats, the last one wins.
    pub fn write_points(&self, npoints: usize, coords: &[u64], data: &[u8]) -> Result<()> {
        self.store.check_writable(&self.path)?;
        let plan = self.point_plan(npoints, coords, data.len())?;
        if self.sharding.is_some() {
            let chunks = (0..plan.chunk_count())
                .map(|i| (i, plan.group(i).coords.to_vec()))
                .collect();
            return self.update_stored_chunks(chunks, &|_| false, &|i, old| {
                let group = plan.group(i);
                let pairs = self.point_offsets(&group, false);
                let name = self.chunk_name(group.coords);
                with_scratch(self.chunk_nbytes, |chunk| {
                    self.decode_or_fill(old, chunk, &name)?;
                    // SAFETY: `chunk` is this thread's own scratch buffer.
                    unsafe {
                        copy_elements(data, SharedBuffer::new(chunk), &[pairs], &self.element)?
                    };
                    self.encode_unless_fill(chunk, &name)
                })
            });
        }
        self.for_each_group(&plan, |group| {
            let key = self.chunk_key(group.coords);
            let pairs = self.point_offsets(group, false);
            let name = self.chunk_name(group.coords);
            with_scratch(self.chunk_nbytes, |chunk| {
                self.update_chunk(&key, |old, new| {
                    self.decode_or_fill(old, chunk, &name)?;
                    // SAFETY: `chunk` is this thread's own scratch buffer.
                    let pairs = std::slice::from_ref(&pairs);
                    unsafe { copy_elements(data, SharedBuffer::new(chunk), pairs, &self.element)? };
                    self.encode_unless_fill_into(chunk, &name, new)
                })
            })
        })
    }

    fn point_plan(&self, npoints: usize, coords: &[u64], buffer_len: usize) -> Result<PointPlan> {
        self.require_fixed_size()?;
        let plan = PointPlan::new(&self.shape(), &self.chunk_shape, npoints, coords)
            .map_err(|e| self.named(e))?;
        let needed = plan.len() as u64 * self.item_size() as u64;
        if needed != buffer_len as u64 {
            return Err(self.named(Error::BufferSize(format!(
                "{} points of {} need {needed} bytes but the buffer has {buffer_len}",
                plan.len(),
                self.metadata.dtype.typestr()
            ))));
        }
        Ok(plan)
    }

    fn for_each_group(
        &self,
        plan: &PointPlan,
        work: impl Fn(&PointGroup) -> Result<()> + Sync,
    ) -> Result<()> {
        parallel::run(|| {
            (0..plan.chunk_count())
                .into_par_iter()
                .try_for_each(|i| work(&plan.group(i)))
        })
    }

    /// Byte offsets of a chunk's points: `(chunk, buffer)` when `chunk_first`, else `(buffer, chunk)`.
    fn point_offsets(&self, group: &PointGroup, chunk_first: bool) -> DimOffsets {
        let mut pairs = Vec::new();
        group.for_each(|point, pos| {
            let c: usize = pos
                .iter()
                .zip(&self.chunk_strides)
                .map(|(&p, &s)| p as usize * s)
                .sum();
            let b = point * self.item_size();
            pairs.push(if chunk_first { (c, b) } else { (b, c) });
        });
        pairs
    }
}
