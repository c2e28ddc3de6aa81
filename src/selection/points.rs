//! Point (coordinate) selections: a list of index tuples, grouped by the chunk holding each.

use crate::error::{Error, Result};
use crate::metadata::ChunkGrid;

/// A list of points checked against an array and grouped by chunk.
#[derive(Debug)]
pub struct PointPlan {
    ndim: usize,
    /// Chunk coordinates of every point, `ndim` values per point.
    chunk_coords: Vec<u64>,
    /// Position inside its chunk of every point, `ndim` values per point.
    in_chunk: Vec<u64>,
    /// Point indices sorted by chunk (stable: repeats keep their order).
    order: Vec<usize>,
    /// Ranges of `order` that share a chunk.
    groups: Vec<std::ops::Range<usize>>,
}

/// The points of one chunk.
#[derive(Debug)]
pub struct PointGroup<'a> {
    /// The chunk's position in the chunk grid.
    pub coords: &'a [u64],
    plan: &'a PointPlan,
    members: &'a [usize],
}

impl PointPlan {
    /// Checks `npoints` points given by `coords` (`ndim` indices per point, point after
    /// point) against `shape`. In a 0-d array every point names the one element.
    pub fn new(
        shape: &[u64],
        grid: &ChunkGrid,
        npoints: usize,
        coords: &[u64],
    ) -> Result<PointPlan> {
        let ndim = shape.len();
        if npoints.checked_mul(ndim) != Some(coords.len()) {
            return Err(Error::InvalidArgument(format!(
                "{} coordinates do not make {npoints} {ndim}-dimensional points",
                coords.len()
            )));
        }
        let mut chunk_coords = Vec::with_capacity(coords.len());
        let mut in_chunk = Vec::with_capacity(coords.len());
        for (k, &index) in coords.iter().enumerate() {
            let d = k % ndim;
            if index >= shape[d] {
                return Err(Error::OutOfBounds(format!(
                    "point {}: index {index} is outside length {} of dimension {d}",
                    k / ndim,
                    shape[d]
                )));
            }
            let axis = grid.axis(d);
            let c = axis.chunk_of(index);
            chunk_coords.push(c);
            in_chunk.push(index - axis.start(c));
        }
        let key = |i: usize| &chunk_coords[i * ndim..(i + 1) * ndim];
        let mut order: Vec<usize> = (0..npoints).collect();
        order.sort_by(|&a, &b| key(a).cmp(key(b)));
        let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
        for k in 0..order.len() {
            match groups.last_mut() {
                Some(g) if key(order[g.start]) == key(order[k]) => g.end = k + 1,
                _ => groups.push(k..k + 1),
            }
        }
        Ok(PointPlan {
            ndim,
            chunk_coords,
            in_chunk,
            order,
            groups,
        })
    }

    /// How many points there are.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// How many chunks the points touch.
    pub fn chunk_count(&self) -> usize {
        self.groups.len()
    }

    /// The points of the `i`-th touched chunk.
    pub fn group(&self, i: usize) -> PointGroup<'_> {
        let members = &self.order[self.groups[i].clone()];
        let first = members[0];
        PointGroup {
            coords: &self.chunk_coords[first * self.ndim..(first + 1) * self.ndim],
            plan: self,
            members,
        }
    }
}

impl PointGroup<'_> {
    /// Calls `f(point_index, position_in_chunk)` for each point of the chunk, in input order.
    pub fn for_each(&self, mut f: impl FnMut(usize, &[u64])) {
        let n = self.plan.ndim;
        for &p in self.members {
            f(p, &self.plan.in_chunk[p * n..(p + 1) * n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_points_by_chunk_keeping_input_order() {
        let plan = PointPlan::new(
            &[10, 10],
            &ChunkGrid::regular(&[5, 5]),
            5,
            &[7, 7, 1, 2, 8, 9, 1, 2, 6, 0],
        )
        .unwrap();
        assert_eq!(plan.len(), 5);
        assert_eq!(plan.chunk_count(), 3);
        let mut seen = Vec::new();
        for g in 0..plan.chunk_count() {
            let group = plan.group(g);
            group.for_each(|p, pos| seen.push((group.coords.to_vec(), p, pos.to_vec())));
        }
        assert_eq!(
            seen,
            vec![
                (vec![0, 0], 1, vec![1, 2]),
                (vec![0, 0], 3, vec![1, 2]),
                (vec![1, 0], 4, vec![1, 0]),
                (vec![1, 1], 0, vec![2, 2]),
                (vec![1, 1], 2, vec![3, 4]),
            ]
        );
    }

    #[test]
    fn refuses_bad_points() {
        assert!(matches!(
            PointPlan::new(&[10, 10], &ChunkGrid::regular(&[5, 5]), 2, &[1, 2, 3]),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            PointPlan::new(&[10, 10], &ChunkGrid::regular(&[5, 5]), 1, &[1, 10]),
            Err(Error::OutOfBounds(_))
        ));
        assert!(matches!(
            PointPlan::new(&[10], &ChunkGrid::regular(&[5]), usize::MAX, &[]),
            Err(Error::InvalidArgument(_))
        ));
        let scalar = PointPlan::new(&[], &ChunkGrid::regular(&[]), 3, &[]).unwrap();
        assert_eq!((scalar.len(), scalar.chunk_count()), (3, 1));
        assert!(PointPlan::new(&[10], &ChunkGrid::regular(&[5]), 0, &[])
            .unwrap()
            .is_empty());
    }

    #[test]
    fn groups_points_by_rectilinear_chunk() {
        let config = serde_json::json!({"kind": "inline", "chunk_shapes": [[2, 6, 2]]});
        let grid = ChunkGrid::parse_v3("rectilinear", config.as_object()).unwrap();
        let plan = PointPlan::new(&[10], &grid, 4, &[9, 1, 2, 7]).unwrap();
        let mut seen = Vec::new();
        for g in 0..plan.chunk_count() {
            let group = plan.group(g);
            group.for_each(|p, pos| seen.push((group.coords[0], p, pos[0])));
        }
        assert_eq!(seen, vec![(0, 1, 1), (1, 2, 0), (1, 3, 5), (2, 0, 1)]);
    }
}
