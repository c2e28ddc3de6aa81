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
