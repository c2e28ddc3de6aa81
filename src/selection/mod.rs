//! Pure index arithmetic: what a selection reads or writes, chunk by chunk.
//!
//! Every box, strided box and orthogonal selection is an [`OrthogonalPlan`]: one
//! [`DimSelection`] per dimension (a range with a step, or a list of indices), mapped lazily onto
//! the chunks it touches. Point selections are a [`PointPlan`]: points grouped by chunk.

mod blocks;
mod mask;
mod orthogonal;
mod points;

pub use blocks::block_box;
pub use mask::{flag_indices, mask_points};
pub use orthogonal::{ChunkTask, DimPart, DimSelection, OrthogonalPlan};
pub use points::{PointGroup, PointPlan};

/// A whole selection of any kind, as the calls that take one selection descriptor see it
/// (block selections are boxes by then, [`block_box`]).
#[derive(Debug)]
pub enum Selection<'a> {
    /// Per dimension a range with a step or a list of indices: boxes, strided boxes,
    /// orthogonal selections (Boolean vectors already made index lists), blocks.
    Orthogonal(Vec<DimSelection>),
    /// `npoints` points, `ndim` coordinates each, point after point.
    Points {
        /// How many points.
        npoints: usize,
        /// Their coordinates.
        coords: &'a [u64],
    },
    /// One byte per element of the array in C order, nonzero where selected; the result is
    /// the selected elements in C order.
    Mask(&'a [u8]),
}
