//! Cutting an array into blocks for a re-encoding copy: boxes aligned to the destination's
//! chunk grid (so no destination chunk is ever read back and patched) that fit a memory budget.

/// The blocks of an array: boxes of one shape (smaller at the far edges) tiling it in C order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPlan {
    shape: Vec<u64>,
    block: Vec<u64>,
}

impl BlockPlan {
    /// Plans blocks of at most `budget` bytes of `element_bytes`-byte elements over an array of
    /// `shape`, aligned to the destination chunks `dst_chunks`; a block is never smaller than
    /// one destination chunk (clipped to the shape), even when that exceeds the budget.
    ///
    /// Blocks grow from the last dimension: a dimension is taken whole while the budget allows,
    /// then the next outer one by as many chunks as fit. Where a dimension is cut, the cut falls
    /// on a multiple of both chunk lengths (`src_chunks` too) if one fits, so that source chunks
    /// are not decoded once per block they straddle.
    pub fn new(
        shape: &[u64],
        dst_chunks: &[u64],
        src_chunks: &[u64],
        element_bytes: u64,
        budget: u64,
    ) -> BlockPlan {
        let mut block: Vec<u64> = shape
            .iter()
            .zip(dst_chunks)
            .map(|(&n, &c)| n.min(c))
            .collect();
        if block.contains(&0) {
            return BlockPlan {
                shape: shape.to_vec(),
                block,
            };
        }
        for d in (0..shape.len()).rev() {
            let others = block
                .iter()
                .enumerate()
                .filter(|&(e, _)| e != d)
                .fold(element_bytes.max(1), |acc, (_, &n)| acc.saturating_mul(n));
            let chunk = dst_chunks[d];
            let fitting_chunks = (budget / others / chunk).max(1);
            let extent = fitting_chunks.saturating_mul(chunk);
            if extent >= shape[d] {
                block[d] = shape[d];
                continue;
            }
            let common = lcm(chunk, src_chunks[d]);
            block[d] = if common <= extent {
                extent / common * common
            } else {
                extent
            };
            break;
        }
        BlockPlan {
            shape: shape.to_vec(),
            block,
        }
    }

    /// The shape of a whole block.
    pub fn block_shape(&self) -> &[u64] {
        &self.block
    }

    /// The number of blocks (0 for an array with no elements, 1 for a 0-d array).
    pub fn len(&self) -> u64 {
        self.shape
            .iter()
            .zip(&self.block)
            .map(|(&n, &b)| if n == 0 { 0 } else { n.div_ceil(b) })
            .product()
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
            let blocks = self.shape[d].div_ceil(self.block[d]);
            start[d] = index % blocks * self.block[d];
            count[d] = self.block[d].min(self.shape[d] - start[d]);
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

    /// Every element in exactly one block, every block inside the array and aligned to `chunks`.
    fn check_tiling(plan: &BlockPlan, shape: &[u64], chunks: &[u64]) {
        let total: u64 = shape.iter().product();
        let mut covered = 0;
        for i in 0..plan.len() {
            let (start, count) = plan.block(i);
            for d in 0..shape.len() {
                assert_eq!(
                    start[d] % chunks[d],
                    0,
                    "block {i} starts off the chunk grid"
                );
                assert!(start[d] + count[d] <= shape[d] && count[d] > 0);
                let ends_on_grid = (start[d] + count[d]) % chunks[d] == 0;
                assert!(ends_on_grid || start[d] + count[d] == shape[d]);
            }
            covered += count.iter().product::<u64>();
        }
        assert_eq!(covered, total);
    }

    #[test]
    fn takes_inner_dimensions_whole_then_chunks_of_the_outer_ones() {
        // 1000 x 1000 f8 with 10 x 10 chunks, 1 MiB budget: rows of 8000 bytes, 131 fit,
        // 130 of them on the chunk grid.
        let plan = BlockPlan::new(&[1000, 1000], &[10, 10], &[10, 10], 8, 1 << 20);
        assert_eq!(plan.block_shape(), &[130, 1000]);
        assert_eq!(plan.len(), 8);
        check_tiling(&plan, &[1000, 1000], &[10, 10]);
        assert_eq!(plan.block(7), (vec![910, 0], vec![90, 1000]));
    }

    #[test]
    fn cuts_on_both_grids_when_it_can() {
        // 130 rows fit; source chunks of 25 rows and destination chunks of 10: cut at 100.
        let plan = BlockPlan::new(&[1000, 1000], &[10, 10], &[25, 7], 8, 1 << 20);
        assert_eq!(plan.block_shape(), &[100, 1000]);
        // No common multiple fits: cut on the destination grid only.
        let plan = BlockPlan::new(&[1000, 1000], &[10, 10], &[999, 7], 8, 1 << 20);
        assert_eq!(plan.block_shape(), &[130, 1000]);
    }

    #[test]
    fn never_goes_below_one_chunk_and_stays_within_budget_otherwise() {
        let plan = BlockPlan::new(&[100, 100, 100], &[50, 50, 50], &[1, 1, 1], 8, 1000);
        assert_eq!(plan.block_shape(), &[50, 50, 50]);
        check_tiling(&plan, &[100, 100, 100], &[50, 50, 50]);
        for (shape, chunks, budget) in [
            (vec![97u64, 31, 13], vec![5u64, 4, 3], 4096u64),
            (vec![1 << 20, 3], vec![7, 2], 1 << 16),
            (vec![10, 10], vec![20, 20], 8),
        ] {
            let plan = BlockPlan::new(&shape, &chunks, &chunks, 8, budget);
            check_tiling(&plan, &shape, &chunks);
            let min_block: u64 = shape.iter().zip(&chunks).map(|(&n, &c)| n.min(c)).product();
            let bytes = plan.block_shape().iter().product::<u64>() * 8;
            assert!(bytes <= budget.max(min_block * 8), "{shape:?} {plan:?}");
        }
    }

    #[test]
    fn handles_empty_and_scalar_arrays() {
        let empty = BlockPlan::new(&[0, 10], &[5, 5], &[5, 5], 4, 1 << 20);
        assert!(empty.is_empty());
        let scalar = BlockPlan::new(&[], &[], &[], 4, 1 << 20);
        assert_eq!(scalar.len(), 1);
        assert_eq!(scalar.block(0), (vec![], vec![]));
    }
}
