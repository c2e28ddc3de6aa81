//! Orthogonal selections: an independent choice of indices along each dimension.

use crate::error::{Error, Result};
use crate::metadata::{Axis, ChunkGrid};

/// The indices selected along one dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimSelection {
    /// `count` indices from `start`, `step` (at least 1) apart.
    Range {
        /// First index.
        start: u64,
        /// Number of indices.
        count: u64,
        /// Distance between indices.
        step: u64,
    },
    /// Explicit indices, in any order, repeats allowed.
    Indices(Vec<u64>),
}

impl DimSelection {
    /// A contiguous range.
    pub fn range(start: u64, count: u64) -> DimSelection {
        DimSelection::Range {
            start,
            count,
            step: 1,
        }
    }

    /// How many indices are selected.
    pub fn len(&self) -> u64 {
        match self {
            DimSelection::Range { count, .. } => *count,
            DimSelection::Indices(list) => list.len() as u64,
        }
    }

    /// Whether nothing is selected.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check(&self, d: usize, extent: u64) -> Result<()> {
        match self {
            DimSelection::Range { step: 0, .. } => Err(Error::InvalidArgument(format!(
                "dimension {d}: step must be at least 1"
            ))),
            DimSelection::Range { count: 0, .. } => Ok(()),
            DimSelection::Range { start, count, step } => {
                let last = (count - 1)
                    .checked_mul(*step)
                    .and_then(|x| x.checked_add(*start));
                match last {
                    Some(last) if last < extent => Ok(()),
                    _ => Err(Error::OutOfBounds(match count {
                        1 => format!("dimension {d}: index {start} exceeds length {extent}"),
                        _ => format!(
                            "dimension {d}: {count} indices from {start} step {step} exceed length {extent}"
                        ),
                    })),
                }
            }
            DimSelection::Indices(list) => match list.iter().find(|&&i| i >= extent) {
                Some(bad) => Err(Error::OutOfBounds(format!(
                    "dimension {d}: index {bad} is outside length {extent}"
                ))),
                None => Ok(()),
            },
        }
    }
}

/// What one chunk contributes along one dimension: which of its positions are selected and
/// where they go in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimPart<'a> {
    /// `n` chunk positions from `first`, `step` apart, landing at output positions
    /// `out`, `out + 1`, ...
    Range {
        /// First position inside the chunk.
        first: u64,
        /// Distance between positions inside the chunk.
        step: u64,
        /// Output position of the first one.
        out: u64,
        /// How many.
        n: u64,
    },
    /// (position in chunk, position in output) pairs, in output order.
    Pairs(&'a [(u64, u64)]),
}

impl DimPart<'_> {
    /// Calls `f(position_in_chunk, position_in_output)` for each selected position.
    pub fn for_each(&self, mut f: impl FnMut(u64, u64)) {
        match *self {
            DimPart::Range {
                first,
                step,
                out,
                n,
            } => (0..n).for_each(|j| f(first + j * step, out + j)),
            DimPart::Pairs(pairs) => pairs.iter().for_each(|&(c, o)| f(c, o)),
        }
    }
}

/// One dimension's selection mapped onto that dimension's chunks.
#[derive(Debug)]
enum DimMap {
    /// A range whose chunks are computed on demand (from the plan's grid): every chunk from
    /// `first_chunk` is touched (a regular dimension, or a contiguous range).
    Range {
        start: u64,
        count: u64,
        step: u64,
        first_chunk: u64,
        n_chunks: u64,
    },
    /// A strided range over chunks of unequal lengths: `(chunk, first, out, n)` per touched
    /// chunk, as in [`DimPart::Range`].
    Strided { step: u64, parts: Vec<[u64; 4]> },
    /// Index pairs grouped by chunk: `(chunk, pairs range)`.
    Indices {
        groups: Vec<(u64, std::ops::Range<usize>)>,
        pairs: Vec<(u64, u64)>,
    },
}

impl DimMap {
    fn new(sel: &DimSelection, axis: &Axis) -> Result<DimMap> {
        match *sel {
            DimSelection::Range { start, count, step } => {
                let (first_chunk, n_chunks) = if count == 0 {
                    (0, 0)
                } else if axis.step().is_some_and(|chunk| step >= chunk) {
                    // Every selected index lies in a chunk of its own.
                    (0, count)
                } else if step == 1 || axis.step().is_some() {
                    // Consecutive indices are less than a chunk apart: no chunk in between
                    // is skipped.
                    let first = axis.chunk_of(start);
                    (first, axis.chunk_of(start + (count - 1) * step) - first + 1)
                } else {
                    return Self::strided(start, count, step, axis);
                };
                Ok(DimMap::Range {
                    start,
                    count,
                    step,
                    first_chunk,
                    n_chunks,
                })
            }
            DimSelection::Indices(ref list) => {
                let chunk_of: Vec<u64> = list.iter().map(|&i| axis.chunk_of(i)).collect();
                let mut order: Vec<usize> = (0..list.len()).collect();
                // Stable: repeats keep their output order, so the last one written wins.
                order.sort_by_key(|&i| chunk_of[i]);
                let pairs: Vec<(u64, u64)> = order
                    .iter()
                    .map(|&i| (list[i] - axis.start(chunk_of[i]), i as u64))
                    .collect();
                let mut groups: Vec<(u64, std::ops::Range<usize>)> = Vec::new();
                for (k, &i) in order.iter().enumerate() {
                    let c = chunk_of[i];
                    match groups.last_mut() {
                        Some((last, range)) if *last == c => range.end = k + 1,
                        _ => groups.push((c, k..k + 1)),
                    }
                }
                Ok(DimMap::Indices { groups, pairs })
            }
        }
    }

    /// A range with a step over chunks of unequal lengths: the touched chunks, found by
    /// jumping from each one's first selected index to the next chunk's.
    fn strided(start: u64, count: u64, step: u64, axis: &Axis) -> Result<DimMap> {
        let mut parts: Vec<[u64; 4]> = Vec::new();
        let mut k = 0;
        while k < count {
            let index = start + k * step;
            let c = axis.chunk_of(index);
            let end = axis.start(c) + axis.len(c);
            let last = ((end - 1 - index) / step + k).min(count - 1);
            parts.try_reserve(1).map_err(|_| {
                Error::TooLarge(format!("a selection touching {} chunks", parts.len()))
            })?;
            parts.push([c, index - axis.start(c), k, last - k + 1]);
            k = last + 1;
        }
        Ok(DimMap::Strided { step, parts })
    }

    fn n_chunks(&self) -> u64 {
        match self {
            DimMap::Range { n_chunks, .. } => *n_chunks,
            DimMap::Strided { parts, .. } => parts.len() as u64,
            DimMap::Indices { groups, .. } => groups.len() as u64,
        }
    }

    /// The `i`-th chunk this dimension (whose chunks `axis` gives) touches and its part.
    fn part(&self, i: u64, axis: &Axis) -> (u64, DimPart<'_>) {
        match *self {
            DimMap::Range {
                start,
                count,
                step,
                first_chunk,
                ..
            } => {
                if axis.step().is_some_and(|chunk| step >= chunk) {
                    let index = start + i * step;
                    let c = axis.chunk_of(index);
                    return (
                        c,
                        DimPart::Range {
                            first: index - axis.start(c),
                            step,
                            out: i,
                            n: 1,
                        },
                    );
                }
                let c = first_chunk + i;
                let (chunk_start, len) = (axis.start(c), axis.len(c));
                let k0 = chunk_start.saturating_sub(start).div_ceil(step);
                let k1 = ((chunk_start.saturating_add(len - 1) - start) / step).min(count - 1);
                let first = start + k0 * step - chunk_start;
                (
                    c,
                    DimPart::Range {
                        first,
                        step,
                        out: k0,
                        n: k1 - k0 + 1,
                    },
                )
            }
            DimMap::Strided { step, ref parts } => {
                let [c, first, out, n] = parts[i as usize];
                (
                    c,
                    DimPart::Range {
                        first,
                        step,
                        out,
                        n,
                    },
                )
            }
            DimMap::Indices {
                ref groups,
                ref pairs,
            } => {
                let (c, ref range) = groups[i as usize];
                (c, DimPart::Pairs(&pairs[range.clone()]))
            }
        }
    }
}

/// An orthogonal selection checked against an array and mapped onto its chunk grid.
#[derive(Debug)]
pub struct OrthogonalPlan {
    /// The array's shape and chunk grid when the selection was planned.
    shape: Vec<u64>,
    grid: ChunkGrid,
    maps: Vec<DimMap>,
    out_shape: Vec<u64>,
    elements: u64,
    chunk_count: u64,
}

/// The work for one chunk: its grid position and its part along each dimension.
#[derive(Debug)]
pub struct ChunkTask<'a> {
    /// The chunk's position in the chunk grid.
    pub coords: Vec<u64>,
    /// What the chunk contributes along each dimension.
    pub parts: Vec<DimPart<'a>>,
    /// The array's shape and chunk grid the plan was made for.
    shape: &'a [u64],
    grid: &'a ChunkGrid,
}

impl OrthogonalPlan {
    /// Checks `selection` against an array of `shape` with chunks on `grid` and plans it.
    /// Errors: a dimension count mismatch or zero step ([`Error::InvalidArgument`]), an index
    /// outside the shape ([`Error::OutOfBounds`]), an element count over 64 bits
    /// ([`Error::Overflow`]).
    pub fn new(
        shape: &[u64],
        grid: &ChunkGrid,
        selection: &[DimSelection],
    ) -> Result<OrthogonalPlan> {
        if selection.len() != shape.len() {
            return Err(Error::InvalidArgument(format!(
                "selection has {} dimensions but the array has {}",
                selection.len(),
                shape.len()
            )));
        }
        for (d, sel) in selection.iter().enumerate() {
            sel.check(d, shape[d])?;
        }
        let out_shape: Vec<u64> = selection.iter().map(DimSelection::len).collect();
        let elements = out_shape
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n))
            .ok_or_else(|| {
                Error::Overflow(format!(
                    "selection of {out_shape:?} elements has more than 2^64 elements"
                ))
            })?;
        let maps = selection
            .iter()
            .enumerate()
            .map(|(d, s)| DimMap::new(s, grid.axis(d)))
            .collect::<Result<Vec<DimMap>>>()?;
        // At most the element count, so it fits.
        let chunk_count = if elements == 0 {
            0
        } else {
            maps.iter().map(DimMap::n_chunks).product()
        };
        Ok(OrthogonalPlan {
            shape: shape.to_vec(),
            grid: grid.clone(),
            maps,
            out_shape,
            elements,
            chunk_count,
        })
    }

    /// The shape of the selection's result.
    pub fn out_shape(&self) -> &[u64] {
        &self.out_shape
    }

    /// How many elements the selection holds.
    pub fn elements(&self) -> u64 {
        self.elements
    }

    /// How many chunks the selection touches.
    pub fn chunk_count(&self) -> u64 {
        self.chunk_count
    }

    /// The `i`-th touched chunk (`i < chunk_count()`), in C order of the chunk grid.
    pub fn chunk(&self, mut i: u64) -> ChunkTask<'_> {
        let mut coords = vec![0; self.maps.len()];
        let mut parts = Vec::with_capacity(self.maps.len());
        for (d, map) in self.maps.iter().enumerate().rev() {
            let n = map.n_chunks();
            let (c, part) = map.part(i % n, self.grid.axis(d));
            i /= n;
            coords[d] = c;
            parts.push(part);
        }
        parts.reverse();
        ChunkTask {
            coords,
            parts,
            shape: &self.shape,
            grid: &self.grid,
        }
    }
}

impl ChunkTask<'_> {
    /// Whether the task selects every position of its chunk that lies inside the array, each
    /// once and in order (so a write need not read the old chunk).
    pub fn covers_chunk_in_array(&self) -> bool {
        self.parts.iter().enumerate().all(|(d, part)| {
            let (axis, c) = (self.grid.axis(d), self.coords[d]);
            let in_array = axis.len(c).min(self.shape[d] - axis.start(c));
            match *part {
                DimPart::Range {
                    first: 0, step, n, ..
                } => n == in_array && (step == 1 || n == 1),
                _ => false,
            }
        })
    }

    /// Whether the task selects the whole chunk, in order, with no overhang.
    pub fn is_whole_chunk(&self) -> bool {
        self.covers_chunk_in_array()
            && self.parts.iter().enumerate().all(|(d, p)| {
                matches!(*p, DimPart::Range { n, .. } if n == self.grid.axis(d).len(self.coords[d]))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn regular(chunks: &[u64]) -> ChunkGrid {
        ChunkGrid::regular(chunks)
    }

    /// A rectilinear grid of the `chunk_shapes` given.
    fn rectilinear(shapes: serde_json::Value) -> ChunkGrid {
        let config = json!({"kind": "inline", "chunk_shapes": shapes});
        ChunkGrid::parse_v3("rectilinear", config.as_object()).unwrap()
    }

    /// Out-of-bounds messages count in words that fit: one index, or several.
    #[test]
    fn out_of_bounds_messages_say_index_or_indices() {
        let range = |start, count| DimSelection::Range {
            start,
            count,
            step: 1,
        };
        let one = OrthogonalPlan::new(&[3], &regular(&[2]), &[range(5, 1)]).unwrap_err();
        assert_eq!(
            one.to_string(),
            "out of bounds: dimension 0: index 5 exceeds length 3"
        );
        let many = OrthogonalPlan::new(&[3], &regular(&[2]), &[range(2, 2)]).unwrap_err();
        assert!(
            many.to_string()
                .contains("2 indices from 2 step 1 exceed length 3"),
            "{many}"
        );
    }

    /// Every selected output position is produced by exactly one chunk part, and maps back to
    /// the array index the selection names.
    fn check_plan(shape: &[u64], grid: &ChunkGrid, sel: &[DimSelection]) {
        let plan = OrthogonalPlan::new(shape, grid, sel).unwrap();
        let indices: Vec<Vec<u64>> = sel
            .iter()
            .map(|s| match s {
                DimSelection::Range { start, count, step } => {
                    (0..*count).map(|k| start + k * step).collect()
                }
                DimSelection::Indices(l) => l.clone(),
            })
            .collect();
        for (d, list) in indices.iter().enumerate() {
            let mut seen = vec![0; list.len()];
            let mut chunks_seen = std::collections::BTreeSet::new();
            for i in 0..plan.chunk_count() {
                let task = plan.chunk(i);
                if !chunks_seen.insert(task.coords[d]) {
                    continue;
                }
                task.parts[d].for_each(|pos, out| {
                    let axis = grid.axis(d);
                    assert!(pos < axis.len(task.coords[d]), "dim {d}");
                    assert_eq!(
                        axis.start(task.coords[d]) + pos,
                        list[out as usize],
                        "dim {d}"
                    );
                    seen[out as usize] += 1;
                });
            }
            assert!(seen.iter().all(|&s| s == 1), "dim {d}: {seen:?}");
        }
    }

    #[test]
    fn ranges_and_lists_map_onto_chunks() {
        check_plan(
            &[100],
            &regular(&[7]),
            &[DimSelection::Range {
                start: 3,
                count: 30,
                step: 3,
            }],
        );
        check_plan(
            &[100],
            &regular(&[7]),
            &[DimSelection::Range {
                start: 5,
                count: 10,
                step: 9,
            }],
        );
        check_plan(
            &[100],
            &regular(&[7]),
            &[DimSelection::Range {
                start: 0,
                count: 100,
                step: 1,
            }],
        );
        check_plan(
            &[100],
            &regular(&[7]),
            &[DimSelection::Range {
                start: 99,
                count: 1,
                step: 50,
            }],
        );
        check_plan(
            &[100],
            &regular(&[7]),
            &[DimSelection::Indices(vec![50, 3, 3, 99, 0, 51])],
        );
        check_plan(
            &[10, 20, 30],
            &regular(&[3, 7, 30]),
            &[
                DimSelection::Indices(vec![9, 0, 4]),
                DimSelection::Range {
                    start: 2,
                    count: 6,
                    step: 3,
                },
                DimSelection::range(5, 20),
            ],
        );
    }

    /// The same selections over chunks of unequal lengths, strided ranges skipping chunks.
    #[test]
    fn ranges_and_lists_map_onto_rectilinear_chunks() {
        let grid = rectilinear(json!([[1, [3, 4], [7, 5], 2, 50], 7]));
        for sel in [
            DimSelection::Range {
                start: 3,
                count: 16,
                step: 3,
            },
            DimSelection::Range {
                start: 0,
                count: 10,
                step: 9,
            },
            DimSelection::Range {
                start: 2,
                count: 40,
                step: 2,
            },
            DimSelection::range(0, 100),
            DimSelection::range(12, 1),
            DimSelection::Indices(vec![50, 3, 3, 99, 0, 51, 13]),
        ] {
            check_plan(&[100, 9], &grid, &[sel, DimSelection::range(2, 6)]);
        }
        let plan = OrthogonalPlan::new(
            &[100],
            &rectilinear(json!([[[1, 4], 96]])),
            &[DimSelection::Range {
                start: 0,
                count: 5,
                step: 2,
            }],
        )
        .unwrap();
        let coords: Vec<u64> = (0..plan.chunk_count())
            .map(|i| plan.chunk(i).coords[0])
            .collect();
        assert_eq!(coords, vec![0, 2, 4]);
    }

    #[test]
    fn refuses_bad_selections() {
        let bad = |sel: Vec<DimSelection>| {
            OrthogonalPlan::new(&[10, 10], &regular(&[3, 3]), &sel).unwrap_err()
        };
        assert!(matches!(
            bad(vec![DimSelection::range(0, 1)]),
            Error::InvalidArgument(_)
        ));
        assert!(matches!(
            bad(vec![
                DimSelection::range(0, 1),
                DimSelection::Range {
                    start: 0,
                    count: 2,
                    step: 0
                }
            ]),
            Error::InvalidArgument(_)
        ));
        assert!(matches!(
            bad(vec![DimSelection::range(5, 6), DimSelection::range(0, 1)]),
            Error::OutOfBounds(_)
        ));
        assert!(matches!(
            bad(vec![
                DimSelection::Range {
                    start: 1,
                    count: 5,
                    step: 3
                },
                DimSelection::range(0, 1)
            ]),
            Error::OutOfBounds(_)
        ));
        assert!(matches!(
            bad(vec![
                DimSelection::Range {
                    start: 1,
                    count: u64::MAX,
                    step: u64::MAX
                },
                DimSelection::range(0, 1)
            ]),
            Error::OutOfBounds(_)
        ));
        assert!(matches!(
            bad(vec![
                DimSelection::Indices(vec![1, 10]),
                DimSelection::range(0, 1)
            ]),
            Error::OutOfBounds(_)
        ));
        let huge = [u64::MAX, u64::MAX];
        let err = OrthogonalPlan::new(
            &huge,
            &regular(&[1, 1]),
            &[DimSelection::range(0, u64::MAX), DimSelection::range(0, 2)],
        )
        .unwrap_err();
        assert!(matches!(err, Error::Overflow(_)));
    }

    #[test]
    fn tells_whole_and_edge_chunks() {
        let (shape, chunks) = ([10u64], regular(&[4]));
        let plan = OrthogonalPlan::new(&shape, &chunks, &[DimSelection::range(0, 10)]).unwrap();
        let tasks: Vec<ChunkTask> = (0..plan.chunk_count()).map(|i| plan.chunk(i)).collect();
        assert!(tasks[0].is_whole_chunk());
        assert!(!tasks[2].is_whole_chunk());
        assert!(tasks[2].covers_chunk_in_array());
        let plan = OrthogonalPlan::new(&shape, &chunks, &[DimSelection::Indices(vec![0, 1, 2, 3])])
            .unwrap();
        assert!(!plan.chunk(0).covers_chunk_in_array());
        let plan = OrthogonalPlan::new(&shape, &chunks, &[DimSelection::range(1, 8)]).unwrap();
        assert!(!plan.chunk(0).covers_chunk_in_array());
        // Chunks of 3, 5 and 4 over 10 elements: the last reaches past the end.
        let grid = rectilinear(json!([[3, 5, 4]]));
        let plan = OrthogonalPlan::new(&shape, &grid, &[DimSelection::range(0, 10)]).unwrap();
        let tasks: Vec<ChunkTask> = (0..plan.chunk_count()).map(|i| plan.chunk(i)).collect();
        assert!(tasks[0].is_whole_chunk() && tasks[1].is_whole_chunk());
        assert!(!tasks[2].is_whole_chunk() && tasks[2].covers_chunk_in_array());
        let plan = OrthogonalPlan::new(&shape, &grid, &[DimSelection::range(3, 4)]).unwrap();
        assert!(!plan.chunk(0).covers_chunk_in_array());
    }
}
