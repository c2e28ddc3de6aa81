//! Cutting an array into blocks for a re-encoding copy: boxes aligned to the destination's
//! chunk grid (so no destination chunk is ever read back and patched) that fit a memory budget.

use crate::metadata::{Axis, ChunkGrid};

/// How blocks cut one dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cut {
    /// Every `n` elements.
    Every(u64),
    /// At every destination chunk of a dimension whose chunks differ in length.
    Chunks(Axis),
}

/// The blocks of an array tiling it in C order: along each dimension all of one length
/// (shorter at the far edge), or one destination chunk each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPlan {
    shape: Vec<u64>,
    cuts: Vec<Cut>,
}

impl BlockPlan {
    /// Plans blocks of at most `budget` bytes of `element_bytes`-byte elements over an array of
    /// `shape`, aligned to the destination grid `dst`; a block is never smaller than one
    /// destination chunk (clipped to the shape), even when that exceeds the budget.
    ///
    /// Blocks grow from the last dimension: a dimension is taken whole while the budget allows,
    /// then the next outer one by as many chunks as fit (one, where its chunks differ in
    /// length). Where a dimension is cut, the cut falls on a multiple of both chunk lengths
    /// (`src` too) if one fits, so that source chunks are not decoded once per block they
    /// straddle.
    pub fn new(
        shape: &[u64],
        dst: &ChunkGrid,
        src: &ChunkGrid,
        element_bytes: u64,
        budget: u64,
    ) -> BlockPlan {
        let one_chunk = |d: usize| match dst.axis(d).step() {
            Some(len) => Cut::Every(shape[d].min(len)),
            None => Cut::Chunks(dst.axis(d).clone()),
        };
        let mut cuts: Vec<Cut> = (0..shape.len()).map(one_chunk).collect();
        if shape.contains(&0) {
            return BlockPlan {
                shape: shape.to_vec(),
                cuts,
            };
        }
        // The most elements a block takes along dimension `d`.
        let widest = |cut: &Cut, n: u64| match cut {
            Cut::Every(b) => *b,
            Cut::Chunks(axis) => axis.max_len().min(n),
        };
        for d in (0..shape.len()).rev() {
            let others = (0..shape.len())
                .filter(|&e| e != d)
                .fold(element_bytes.max(1), |acc, e| {
                    acc.saturating_mul(widest(&cuts[e], shape[e]))
                });
            if others.saturating_mul(shape[d]) <= budget {
                cuts[d] = Cut::Every(shape[d]);
                continue;
            }
            let Some(chunk) = dst.axis(d).step() else {
                break;
            };
            let fitting_chunks = (budget / others / chunk).max(1);
            let extent = fitting_chunks.saturating_mul(chunk);
            if extent >= shape[d] {
                cuts[d] = Cut::Every(shape[d]);
                continue;
            }
            let common = src.axis(d).step().map_or(u64::MAX, |s| lcm(chunk, s));
            cuts[d] = Cut::Every(if common <= extent {
                extent / common * common
            } else {
                extent
            });
            break;
        }
        BlockPlan {
            shape: shape.to_vec(),
            cuts,
        }
    }

    /// Blocks along dimension `d`.
    fn blocks_along(&self, d: usize) -> u64 {
        match &self.cuts[d] {
            Cut::Every(b) => self.shape[d].div_ceil(*b),
            Cut::Chunks(axis) => axis.count(self.shape[d]),
        }
    }

    /// The number of blocks (0 for an array with no elements, 1 for a 0-d array).
    pub fn len(&self) -> u64 {
        match self.shape.contains(&0) {
            true => 0,
            false => (0..self.shape.len())
                .map(|d| self.blocks_along(d))
                .product(),
        }
    }

    /// Whether there are no blocks.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `(start, count)` box of block `index` (C order over the block grid).
    pub fn block(&self, mut index: u64) -> (Vec<u64>, Vec<u64>) {
        let ndim = self.shape.len();
        let (mut start, mut count) = (vec![0; ndim], vec![0; ndim]);
        for d in (0..ndim).rev() {
            let blocks = self.blocks_along(d);
            let i = index % blocks;
            let (first, len) = match &self.cuts[d] {
                Cut::Every(b) => (i * b, *b),
                Cut::Chunks(axis) => (axis.start(i), axis.len(i)),
            };
            start[d] = first;
            count[d] = len.min(self.shape[d] - first);
            index /= blocks;
        }
        (start, count)
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The least common multiple, saturating (a huge one never fits a block anyway).
fn lcm(a: u64, b: u64) -> u64 {
    (a / gcd(a, b)).saturating_mul(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(shape: &[u64], dst: &[u64], src: &[u64], budget: u64) -> BlockPlan {
        let (dst, src) = (ChunkGrid::regular(dst), ChunkGrid::regular(src));
        BlockPlan::new(shape, &dst, &src, 8, budget)
    }

    /// Every element in exactly one block, every block inside the array and aligned to `grid`.
    fn check_tiling(plan: &BlockPlan, shape: &[u64], grid: &ChunkGrid) {
        let total: u64 = shape.iter().product();
        let mut covered = 0;
        for i in 0..plan.len() {
            let (start, count) = plan.block(i);
            for d in 0..shape.len() {
                let axis = grid.axis(d);
                let on_grid = |i: u64| i == shape[d] || axis.start(axis.chunk_of(i)) == i;
                assert!(on_grid(start[d]), "block {i} starts off the chunk grid");
                assert!(start[d] + count[d] <= shape[d] && count[d] > 0);
                assert!(
                    on_grid(start[d] + count[d]),
                    "block {i} ends off the chunk grid"
                );
            }
            covered += count.iter().product::<u64>();
        }
        assert_eq!(covered, total);
    }

    #[test]
    fn takes_inner_dimensions_whole_then_chunks_of_the_outer_ones() {
        // 1000 x 1000 f8 with 10 x 10 chunks, 1 MiB budget: rows of 8000 bytes, 131 fit,
        // 130 of them on the chunk grid.
        let plan = plan(&[1000, 1000], &[10, 10], &[10, 10], 1 << 20);
        assert_eq!(plan.block(0).1, &[130, 1000]);
        assert_eq!(plan.len(), 8);
        check_tiling(&plan, &[1000, 1000], &ChunkGrid::regular(&[10, 10]));
        assert_eq!(plan.block(7), (vec![910, 0], vec![90, 1000]));
    }

    #[test]
    fn cuts_on_both_grids_when_it_can() {
        // 130 rows fit; source chunks of 25 rows and destination chunks of 10: cut at 100.
        let both = plan(&[1000, 1000], &[10, 10], &[25, 7], 1 << 20);
        assert_eq!(both.block(0).1, &[100, 1000]);
        // No common multiple fits: cut on the destination grid only.
        let dst_only = plan(&[1000, 1000], &[10, 10], &[999, 7], 1 << 20);
        assert_eq!(dst_only.block(0).1, &[130, 1000]);
    }

    #[test]
    fn never_goes_below_one_chunk_and_stays_within_budget_otherwise() {
        let small = plan(&[100, 100, 100], &[50, 50, 50], &[1, 1, 1], 1000);
        assert_eq!(small.block(0).1, &[50, 50, 50]);
        check_tiling(&small, &[100, 100, 100], &ChunkGrid::regular(&[50, 50, 50]));
        for (shape, chunks, budget) in [
            (vec![97u64, 31, 13], vec![5u64, 4, 3], 4096u64),
            (vec![1 << 20, 3], vec![7, 2], 1 << 16),
            (vec![10, 10], vec![20, 20], 8),
        ] {
            let plan = plan(&shape, &chunks, &chunks, budget);
            check_tiling(&plan, &shape, &ChunkGrid::regular(&chunks));
            let min_block: u64 = shape.iter().zip(&chunks).map(|(&n, &c)| n.min(c)).product();
            let bytes = plan.block(0).1.iter().product::<u64>() * 8;
            assert!(bytes <= budget.max(min_block * 8), "{shape:?} {plan:?}");
        }
    }

    #[test]
    fn handles_empty_and_scalar_arrays() {
        let empty = plan(&[0, 10], &[5, 5], &[5, 5], 1 << 20);
        assert!(empty.is_empty());
        let scalar = plan(&[], &[], &[], 1 << 20);
        assert_eq!(scalar.len(), 1);
        assert_eq!(scalar.block(0), (vec![], vec![]));
    }

    /// A destination of chunks of unequal lengths is cut at its chunks where it cannot be
    /// taken whole.
    #[test]
    fn cuts_rectilinear_destinations_at_their_chunks() {
        let config = json!({"kind": "inline", "chunk_shapes": [[3, [5, 2], 8], 10]});
        let dst = ChunkGrid::parse_v3("rectilinear", config.as_object()).unwrap();
        let src = ChunkGrid::regular(&[4, 4]);
        let cut = BlockPlan::new(&[20, 30], &dst, &src, 8, 2400);
        assert_eq!(cut.len(), 4);
        assert_eq!(cut.block(1), (vec![3, 0], vec![5, 30]));
        check_tiling(&cut, &[20, 30], &dst);
        let whole = BlockPlan::new(&[20, 30], &dst, &src, 8, 1 << 20);
        assert_eq!(whole.len(), 1);
        let inner = BlockPlan::new(&[20, 30], &dst, &src, 8, 8 * 8 * 10);
        assert_eq!(inner.block(4), (vec![3, 10], vec![5, 10]));
        check_tiling(&inner, &[20, 30], &dst);
    }
}
