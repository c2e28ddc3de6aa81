//! Pure index arithmetic: which chunks a box selection touches, and which part of each.

use crate::error::{Error, Result};

/// A box selection: `count[d]` elements from `start[d]` along each dimension, checked
/// against an array's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// First index along each dimension.
    pub start: Vec<u64>,
    /// Number of elements along each dimension.
    pub count: Vec<u64>,
}

impl Region {
    /// Checks `start`/`count` against `shape` and returns the region with its element count.
    /// Errors: [`Error::InvalidArgument`] for a dimension mismatch, [`Error::OutOfBounds`] for
    /// a box reaching past the shape, [`Error::Overflow`] when the element count overflows.
    pub fn new(shape: &[u64], start: &[u64], count: &[u64]) -> Result<(Region, u64)> {
        if start.len() != shape.len() || count.len() != shape.len() {
            return Err(Error::InvalidArgument(format!(
                "selection has {} start and {} count values but the array has {} dimensions",
                start.len(),
                count.len(),
                shape.len()
            )));
        }
        for d in 0..shape.len() {
            let end = start[d].checked_add(count[d]);
            if end.is_none_or(|end| end > shape[d]) {
                return Err(Error::OutOfBounds(format!(
                    "dimension {d}: start {} + count {} exceeds length {}",
                    start[d], count[d], shape[d]
                )));
            }
        }
        let elements = count
            .iter()
            .try_fold(1u64, |acc, &c| acc.checked_mul(c))
            .ok_or_else(|| {
                Error::Overflow(format!(
                    "selection {count:?} has more elements than fit in 64 bits"
                ))
            })?;
        Ok((
            Region {
                start: start.to_vec(),
                count: count.to_vec(),
            },
            elements,
        ))
    }

    /// Whether the region selects nothing.
    pub fn is_empty(&self) -> bool {
        self.count.contains(&0)
    }
}

/// The part of one chunk that a region touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkPart {
    /// The chunk's position in the chunk grid.
    pub coords: Vec<u64>,
    /// Offset of the part inside the chunk.
    pub in_chunk: Vec<u64>,
    /// Offset of the part inside the region.
    pub in_region: Vec<u64>,
    /// Extent of the part.
    pub count: Vec<u64>,
}

/// A regular grid of chunks over an array.
#[derive(Debug, Clone, Copy)]
pub struct ChunkGrid<'a> {
    /// The array's shape.
    pub shape: &'a [u64],
    /// The chunk shape (each at least 1).
    pub chunks: &'a [u64],
}

/// The block of chunk coordinates a region touches.
#[derive(Debug, Clone)]
pub struct ChunkSpan {
    first: Vec<u64>,
    len: Vec<u64>,
    /// How many chunks the span holds.
    pub total: u64,
}

impl<'a> ChunkGrid<'a> {
    /// The chunks a non-empty region touches.
    pub fn span(&self, region: &Region) -> ChunkSpan {
        let mut first = Vec::with_capacity(self.chunks.len());
        let mut len = Vec::with_capacity(self.chunks.len());
        for d in 0..self.chunks.len() {
            let lo = region.start[d] / self.chunks[d];
            let hi = (region.start[d] + region.count[d] - 1) / self.chunks[d];
            first.push(lo);
            len.push(hi - lo + 1);
        }
        // The product is at most the region's element count, which fits in u64.
        let total = len.iter().product();
        ChunkSpan { first, len, total }
    }

    /// The `index`-th chunk of `span` (C order) and the part of it `region` touches.
    pub fn part(&self, span: &ChunkSpan, mut index: u64, region: &Region) -> ChunkPart {
        let ndim = self.chunks.len();
        let mut coords = vec![0; ndim];
        for d in (0..ndim).rev() {
            coords[d] = span.first[d] + index % span.len[d];
            index /= span.len[d];
        }
        let mut in_chunk = Vec::with_capacity(ndim);
        let mut in_region = Vec::with_capacity(ndim);
        let mut count = Vec::with_capacity(ndim);
        for (d, &c) in coords.iter().enumerate() {
            let chunk_start = c * self.chunks[d];
            let lo = region.start[d].max(chunk_start);
            let hi = (region.start[d] + region.count[d]).min(chunk_start + self.chunks[d]);
            in_chunk.push(lo - chunk_start);
            in_region.push(lo - region.start[d]);
            count.push(hi - lo);
        }
        ChunkPart {
            coords,
            in_chunk,
            in_region,
            count,
        }
    }

    /// Whether `part` is the whole chunk (so the chunk lies inside the array and the region).
    pub fn is_whole_chunk(&self, part: &ChunkPart) -> bool {
        part.count == self.chunks
    }

    /// Whether `part` covers every element of its chunk that lies inside the array
    /// (the rest of an edge chunk overhangs the array and holds no data).
    pub fn covers_chunk_in_array(&self, part: &ChunkPart) -> bool {
        (0..self.chunks.len()).all(|d| {
            let chunk_start = part.coords[d] * self.chunks[d];
            part.in_chunk[d] == 0
                && part.count[d] == self.chunks[d].min(self.shape[d] - chunk_start)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_selections() {
        let shape = [10, 20];
        assert_eq!(Region::new(&shape, &[0, 0], &[10, 20]).unwrap().1, 200);
        assert!(matches!(
            Region::new(&shape, &[0], &[1]),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            Region::new(&shape, &[5, 0], &[6, 1]),
            Err(Error::OutOfBounds(_))
        ));
        assert!(matches!(
            Region::new(&shape, &[u64::MAX, 0], &[2, 1]),
            Err(Error::OutOfBounds(_))
        ));
        let big = [u64::MAX, u64::MAX];
        assert!(matches!(
            Region::new(&big, &[0, 0], &[u64::MAX, 2]),
            Err(Error::Overflow(_))
        ));
        assert!(Region::new(&shape, &[10, 20], &[0, 0])
            .unwrap()
            .0
            .is_empty());
        assert_eq!(Region::new(&[], &[], &[]).unwrap().1, 1);
    }

    /// Every element of the region is covered by exactly one part, at consistent offsets.
    #[test]
    fn parts_tile_the_region_exactly() {
        let shape = [23u64, 17, 5];
        let chunks = [5u64, 4, 5];
        let grid = ChunkGrid {
            shape: &shape,
            chunks: &chunks,
        };
        let (region, n) = Region::new(&shape, &[3, 1, 0], &[19, 15, 5]).unwrap();
        let span = grid.span(&region);
        assert_eq!(span.total, 5 * 4);
        let mut seen = vec![0u8; n as usize];
        for i in 0..span.total {
            let part = grid.part(&span, i, &region);
            for a in 0..part.count[0] {
                for b in 0..part.count[1] {
                    for c in 0..part.count[2] {
                        let r = [
                            part.in_region[0] + a,
                            part.in_region[1] + b,
                            part.in_region[2] + c,
                        ];
                        let global: Vec<u64> = (0..3).map(|d| region.start[d] + r[d]).collect();
                        let via_chunk: Vec<u64> = (0..3)
                            .map(|d| part.coords[d] * chunks[d] + part.in_chunk[d] + [a, b, c][d])
                            .collect();
                        assert_eq!(global, via_chunk);
                        seen[((r[0] * 15 + r[1]) * 5 + r[2]) as usize] += 1;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
    }

    #[test]
    fn tells_whole_and_edge_chunks() {
        let shape = [10u64];
        let chunks = [4u64];
        let grid = ChunkGrid {
            shape: &shape,
            chunks: &chunks,
        };
        let (region, _) = Region::new(&shape, &[0], &[10]).unwrap();
        let span = grid.span(&region);
        let parts: Vec<ChunkPart> = (0..span.total)
            .map(|i| grid.part(&span, i, &region))
            .collect();
        assert!(grid.is_whole_chunk(&parts[0]));
        assert!(!grid.is_whole_chunk(&parts[2]));
        assert!(grid.covers_chunk_in_array(&parts[2]));
        let (region, _) = Region::new(&shape, &[1], &[8]).unwrap();
        let part = grid.part(&grid.span(&region), 0, &region);
        assert!(!grid.covers_chunk_in_array(&part));
    }
}
