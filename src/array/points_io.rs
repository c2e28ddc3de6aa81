//! Reading and writing point (coordinate) selections: the points of each chunk are gathered
//! or scattered with one decode of that chunk, chunks in parallel.

use super::chunk_form::ChunkForm;
use super::chunk_io::with_scratch;
use super::Array;
use crate::error::{Error, Result};
use crate::parallel;
use crate::selection::{mask_points, PointGroup, PointPlan};
use crate::strided::{copy_elements, fill_elements, DimOffsets, ElementCopy, SharedBuffer};
use rayon::prelude::*;

impl Array {
    /// Reads the elements at `npoints` points given by `coords` (`ndim` indices per point)
    /// into `out`, one element per point in the order given.
    pub fn read_points(&self, npoints: usize, coords: &[u64], out: &mut [u8]) -> Result<()> {
        self.require_fixed_size()?;
        self.read_point_plan(&self.point_plan(npoints, coords)?, out, &self.element)
    }

    /// The `npoints` points `coords` (`ndim` indices each) checked against the current shape
    /// and grouped by chunk.
    pub(super) fn point_plan(&self, npoints: usize, coords: &[u64]) -> Result<PointPlan> {
        let shape = self.shape();
        PointPlan::new(&shape, self.forms().grid(), npoints, coords).map_err(|e| self.named(e))
    }

    /// Reads the points of `plan` into `out` (one caller element of `how` per point).
    pub(super) fn read_point_plan(
        &self,
        plan: &PointPlan,
        out: &mut [u8],
        how: &ElementCopy,
    ) -> Result<()> {
        self.check_point_buffer(plan, how.dst_size, out.len())?;
        let fill = self.converted_fill(how);
        let out = SharedBuffer::new(out);
        if self.sharded {
            let chunks = (0..plan.chunk_count())
                .map(|i| (i, plan.group(i).coords.to_vec()))
                .collect();
            return self.read_decoded_chunks(chunks, &|i, coords, chunk| {
                let form = self.form(coords)?;
                let pairs = [self.point_offsets(&form, &plan.group(i), true, how.dst_size)];
                // SAFETY: every point owns its own element of `out`.
                unsafe {
                    match chunk {
                        None => fill_elements(out, &pairs, &fill),
                        Some(chunk) => copy_elements(chunk, out, &pairs, how),
                    }
                }
            });
        }
        self.for_each_group(plan, |group| {
            let key = self.chunk_key(group.coords);
            let form = self.form(group.coords)?;
            let pairs = [self.point_offsets(&form, group, true, how.dst_size)];
            self.with_chunk(&form, &key, |chunk| match chunk {
                // SAFETY: every point owns its own element of `out`.
                None => unsafe { fill_elements(out, &pairs, &fill) },
                // SAFETY: as above.
                Some(chunk) => unsafe { copy_elements(chunk, out, &pairs, how) },
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
        self.require_fixed_size()?;
        self.write_point_plan(&self.point_plan(npoints, coords)?, data, &self.element)
    }

    /// Writes the points of `plan` from `data` (one caller element of `how` per point); each
    /// touched chunk is read, patched and re-encoded.
    pub(super) fn write_point_plan(
        &self,
        plan: &PointPlan,
        data: &[u8],
        how: &ElementCopy,
    ) -> Result<()> {
        self.check_writable()?;
        self.check_point_buffer(plan, how.src_size, data.len())?;
        if self.sharded {
            let chunks = (0..plan.chunk_count())
                .map(|i| (i, plan.group(i).coords.to_vec()))
                .collect();
            return self.update_stored_chunks(chunks, &|_| false, &|i, old| {
                let group = plan.group(i);
                let form = self.form(group.coords)?;
                let pairs = self.point_offsets(&form, &group, false, how.src_size);
                let name = self.chunk_name(group.coords);
                with_scratch(form.nbytes, |chunk| {
                    self.decode_or_fill(&form, old, chunk, &name)?;
                    // SAFETY: `chunk` is this thread's own scratch buffer.
                    unsafe { copy_elements(data, SharedBuffer::new(chunk), &[pairs], how)? };
                    self.encode_unless_fill(&form, chunk, &name)
                })
            });
        }
        self.for_each_group(plan, |group| {
            let key = self.chunk_key(group.coords);
            let form = self.form(group.coords)?;
            let pairs = self.point_offsets(&form, group, false, how.src_size);
            let name = self.chunk_name(group.coords);
            with_scratch(form.nbytes, |chunk| {
                self.update_chunk(&key, |old, new| {
                    self.decode_or_fill(&form, old, chunk, &name)?;
                    // SAFETY: `chunk` is this thread's own scratch buffer.
                    let pairs = std::slice::from_ref(&pairs);
                    unsafe { copy_elements(data, SharedBuffer::new(chunk), pairs, how)? };
                    self.encode_unless_fill_into(&form, chunk, &name, new)
                })
            })
        })
    }

    /// Checks that a buffer of `buffer_len` bytes holds one `elem_size`-byte element per point.
    fn check_point_buffer(
        &self,
        plan: &PointPlan,
        elem_size: usize,
        buffer_len: usize,
    ) -> Result<()> {
        let needed = plan.len() as u64 * elem_size as u64;
        if needed != buffer_len as u64 {
            return Err(self.named(Error::BufferSize(format!(
                "{} points of {elem_size}-byte elements need {needed} bytes but the buffer has {buffer_len}",
                plan.len(),
            ))));
        }
        Ok(())
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

    /// Byte offsets of a chunk's points (in a chunk of `form`), `buffer_elem` bytes per point
    /// in the caller's buffer: `(chunk, buffer)` when `chunk_first`, else `(buffer, chunk)`.
    fn point_offsets(
        &self,
        form: &ChunkForm,
        group: &PointGroup,
        chunk_first: bool,
        buffer_elem: usize,
    ) -> DimOffsets {
        let mut pairs = Vec::new();
        group.for_each(|point, pos| {
            let c: usize = pos
                .iter()
                .zip(&form.strides)
                .map(|(&p, &s)| p as usize * s)
                .sum();
            let b = point * buffer_elem;
            pairs.push(if chunk_first { (c, b) } else { (b, c) });
        });
        pairs
    }
}
