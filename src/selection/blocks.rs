//! Block selections: whole chunks by their indices in the chunk grid (zarr-python's
//! `get_block_selection`, `.blocks`).

use crate::error::{Error, Result};

/// The box (`start`, `count` in elements) that the chunks `block_start` to `block_start +
/// block_count` (per dimension) cover in an array of `shape` with chunks of `chunks`, edge
/// chunks clipped to the shape. A block past the grid is [`Error::OutOfBounds`].
pub fn block_box(
    shape: &[u64],
    chunks: &[u64],
    block_start: &[u64],
    block_count: &[u64],
) -> Result<(Vec<u64>, Vec<u64>)> {
    let mut start = Vec::with_capacity(shape.len());
    let mut count = Vec::with_capacity(shape.len());
    for d in 0..shape.len() {
        let grid = shape[d].div_ceil(chunks[d]);
        let end = block_start[d]
            .checked_add(block_count[d])
            .filter(|&end| end <= grid)
            .ok_or_else(|| {
                Error::OutOfBounds(format!(
                    "dimension {d}: blocks {} to {} + {} are outside the {grid} chunks of the grid",
                    block_start[d], block_start[d], block_count[d]
                ))
            })?;
        // Both products are at most the shape rounded up to a whole chunk, or clipped below.
        let first = block_start[d].saturating_mul(chunks[d]).min(shape[d]);
        start.push(first);
        count.push(end.saturating_mul(chunks[d]).min(shape[d]) - first);
    }
    Ok((start, count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_their_chunks_clipped_to_the_shape() {
        let (start, count) = block_box(&[10, 7], &[4, 3], &[1, 2], &[2, 1]).unwrap();
        assert_eq!((start, count), (vec![4, 6], vec![6, 1]));
        let (start, count) = block_box(&[10, 7], &[4, 3], &[3, 0], &[0, 3]).unwrap();
        assert_eq!((start, count), (vec![10, 0], vec![0, 7]));
        assert!(matches!(
            block_box(&[10], &[4], &[2], &[2]),
            Err(Error::OutOfBounds(_))
        ));
        assert!(matches!(
            block_box(&[10], &[4], &[u64::MAX], &[1]),
            Err(Error::OutOfBounds(_))
        ));
    }
}
