//! Block selections: whole chunks by their indices in the chunk grid (zarr-python's
//! `get_block_selection`, `.blocks`).

use crate::error::{Error, Result};
use crate::metadata::ChunkGrid;

/// The box (`start`, `count` in elements) that the chunks `block_start` to `block_start +
/// block_count` (per dimension) cover in an array of `shape` with chunks on `grid`, edge
/// chunks clipped to the shape. A block past the grid is [`Error::OutOfBounds`].
pub fn block_box(
    shape: &[u64],
    grid: &ChunkGrid,
    block_start: &[u64],
    block_count: &[u64],
) -> Result<(Vec<u64>, Vec<u64>)> {
    let mut start = Vec::with_capacity(shape.len());
    let mut count = Vec::with_capacity(shape.len());
    for d in 0..shape.len() {
        let axis = grid.axis(d);
        let chunks = axis.count(shape[d]);
        let end = block_start[d]
            .checked_add(block_count[d])
            .filter(|&end| end <= chunks)
            .ok_or_else(|| {
                Error::OutOfBounds(format!(
                    "dimension {d}: blocks {} to {} + {} are outside the {chunks} chunks of the grid",
                    block_start[d], block_start[d], block_count[d]
                ))
            })?;
        // Chunk starts are at most the shape rounded up to a whole chunk, or clipped below.
        let first = axis.start(block_start[d]).min(shape[d]);
        start.push(first);
        count.push(axis.start(end).min(shape[d]) - first);
    }
    Ok((start, count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_their_chunks_clipped_to_the_shape() {
        let grid = ChunkGrid::regular(&[4, 3]);
        let (start, count) = block_box(&[10, 7], &grid, &[1, 2], &[2, 1]).unwrap();
        assert_eq!((start, count), (vec![4, 6], vec![6, 1]));
        let (start, count) = block_box(&[10, 7], &grid, &[3, 0], &[0, 3]).unwrap();
        assert_eq!((start, count), (vec![10, 0], vec![0, 7]));
        let grid = ChunkGrid::regular(&[4]);
        assert!(matches!(
            block_box(&[10], &grid, &[2], &[2]),
            Err(Error::OutOfBounds(_))
        ));
        assert!(matches!(
            block_box(&[10], &grid, &[u64::MAX], &[1]),
            Err(Error::OutOfBounds(_))
        ));
        // Chunks of 2, 5 and 6 over 10 elements.
        let config = serde_json::json!({"kind": "inline", "chunk_shapes": [[2, 5, 6]]});
        let grid = ChunkGrid::parse_v3("rectilinear", config.as_object()).unwrap();
        assert_eq!(
            block_box(&[10], &grid, &[1], &[2]).unwrap(),
            (vec![2], vec![8])
        );
        assert_eq!(
            block_box(&[10], &grid, &[0], &[1]).unwrap(),
            (vec![0], vec![2])
        );
    }
}
