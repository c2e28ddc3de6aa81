//! The chunk grid: where each chunk starts and how long it is along each dimension. Zarr's
//! `regular` grid (one length per dimension) and zarr-extensions' `rectilinear` grid (per
//! dimension one length repeated, or a list of lengths with `[length, repeat]` runs).

use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// The `chunk_grid` names of Zarr v3 that [`ChunkGrid::parse_v3`] reads.
pub const CHUNK_GRIDS: [&str; 2] = ["regular", "rectilinear"];

/// A run of chunks of one length along a dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    /// The chunks' length (at least 1).
    len: u64,
    /// How many chunks (at least 1).
    count: u64,
    /// Index of the run's first chunk.
    chunk: u64,
    /// Index of the run's first element.
    start: u64,
}

/// The chunks along one dimension: one length repeated without end, or a list of lengths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    runs: Vec<Run>,
    /// Whether the only run repeats without end (a `regular` grid, or a bare integer).
    repeats: bool,
}

impl Axis {
    /// Chunks of `len` (at least 1) repeated without end.
    pub fn regular(len: u64) -> Axis {
        Axis {
            runs: vec![Run {
                len,
                count: u64::MAX,
                chunk: 0,
                start: 0,
            }],
            repeats: true,
        }
    }

    /// The chunks `(length, repeat)` lists (both at least 1), in order; `what` names the
    /// dimension in errors.
    fn listed(pairs: &[(u64, u64)], what: &str) -> Result<Axis> {
        let mut runs: Vec<Run> = Vec::new();
        let (mut chunk, mut start) = (0u64, 0u64);
        for &(len, count) in pairs {
            let span = len.checked_mul(count).and_then(|n| n.checked_add(start));
            let (Some(end), Some(next)) = (span, chunk.checked_add(count)) else {
                return Err(Error::InvalidMetadata(format!(
                    "{what}: the chunk lengths add up to more than 2^64"
                )));
            };
            match runs.last_mut() {
                Some(last) if last.len == len => last.count += count,
                _ => runs.push(Run {
                    len,
                    count,
                    chunk,
                    start,
                }),
            }
            (chunk, start) = (next, end);
        }
        if runs.is_empty() {
            return Err(Error::InvalidMetadata(format!(
                "{what}: the list of chunk lengths is empty"
            )));
        }
        Ok(Axis {
            runs,
            repeats: false,
        })
    }

    /// The chunk length when every chunk has it (a regular dimension).
    pub fn step(&self) -> Option<u64> {
        match (self.repeats, self.runs.as_slice()) {
            (true, [run]) => Some(run.len),
            _ => None,
        }
    }

    /// The elements the listed chunks span (`None` when a length repeats without end).
    fn total(&self) -> Option<u64> {
        let last = self.runs.last().expect("at least one run");
        (!self.repeats).then(|| last.start + last.len * last.count)
    }

    /// The run holding chunk `c` (the last one for chunks past the list).
    fn run_of_chunk(&self, c: u64) -> &Run {
        let i = self.runs.partition_point(|r| r.chunk <= c);
        &self.runs[i.saturating_sub(1)]
    }

    /// The chunk holding element `i` (an element past the listed chunks gives one past
    /// the last chunk).
    pub fn chunk_of(&self, i: u64) -> u64 {
        if let Some(len) = self.step() {
            return i / len;
        }
        let r = &self.runs[self
            .runs
            .partition_point(|r| r.start <= i)
            .saturating_sub(1)];
        (r.chunk + (i - r.start) / r.len).min(r.chunk + r.count)
    }

    /// The first element of chunk `c`.
    pub fn start(&self, c: u64) -> u64 {
        if let Some(len) = self.step() {
            return c.saturating_mul(len);
        }
        let r = self.run_of_chunk(c);
        r.start.saturating_add((c - r.chunk).saturating_mul(r.len))
    }

    /// The length of chunk `c` (its decoded length, which may reach past the array's end).
    pub fn len(&self, c: u64) -> u64 {
        self.run_of_chunk(c).len
    }

    /// The chunk lengths, each run's once.
    pub fn lengths(&self) -> impl Iterator<Item = u64> + '_ {
        self.runs.iter().map(|r| r.len)
    }

    /// The longest chunk.
    pub fn max_len(&self) -> u64 {
        self.runs.iter().map(|r| r.len).max().unwrap_or(1)
    }

    /// How many chunks hold elements of a dimension of `extent`.
    pub fn count(&self, extent: u64) -> u64 {
        match (self.step(), extent) {
            (Some(len), _) => extent.div_ceil(len),
            (None, 0) => 0,
            (None, _) => self.chunk_of(extent - 1) + 1,
        }
    }

    /// Whether the chunks reach `extent`.
    pub fn covers(&self, extent: u64) -> bool {
        self.total().is_none_or(|total| total >= extent)
    }

    /// The axis for a dimension resized to `extent`: a list that falls short gains one chunk
    /// reaching it (as zarr-python does), its length rounded up to a multiple of `unit`; one
    /// that reaches it stays as it is.
    pub fn grown_to(&self, extent: u64, unit: u64) -> Axis {
        let mut axis = self.clone();
        if let Some(total) = self.total().filter(|&t| t < extent) {
            let len = (extent - total).next_multiple_of(unit.max(1));
            let last = axis.runs.last_mut().expect("at least one run");
            match last.len == len {
                true => last.count += 1,
                false => {
                    let run = Run {
                        len,
                        count: 1,
                        chunk: last.chunk + last.count,
                        start: total,
                    };
                    axis.runs.push(run);
                }
            }
        }
        axis
    }

    /// The dimension's `chunk_shapes` item: the length when it repeats, else the list with
    /// runs of more than one chunk as `[length, repeat]`.
    fn to_json(&self) -> Value {
        match self.step() {
            Some(len) => len.into(),
            None => self
                .runs
                .iter()
                .map(|r| match r.count {
                    1 => json!(r.len),
                    n => json!([r.len, n]),
                })
                .collect(),
        }
    }
}

/// An array's chunk grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkGrid {
    axes: Vec<Axis>,
    /// Whether the metadata names it `rectilinear`.
    rectilinear: bool,
    /// The chunk shape when every dimension is regular.
    regular: Option<Vec<u64>>,
}

impl ChunkGrid {
    /// A regular grid of chunks of `shape` (each length at least 1).
    pub fn regular(shape: &[u64]) -> ChunkGrid {
        ChunkGrid {
            axes: shape.iter().map(|&c| Axis::regular(c)).collect(),
            rectilinear: false,
            regular: Some(shape.to_vec()),
        }
    }

    fn from_axes(axes: Vec<Axis>, rectilinear: bool) -> ChunkGrid {
        let regular = axes.iter().map(Axis::step).collect();
        ChunkGrid {
            axes,
            rectilinear,
            regular,
        }
    }

    /// The grid of a v3 `chunk_grid` member: `regular` or `rectilinear` (`kind` `inline`).
    pub fn parse_v3(name: &str, config: Option<&Map<String, Value>>) -> Result<ChunkGrid> {
        match name {
            "regular" => {
                let shape = config.and_then(|c| c.get("chunk_shape")).ok_or_else(|| {
                    Error::InvalidMetadata("chunk_grid \"regular\" has no chunk_shape".into())
                })?;
                Ok(ChunkGrid::regular(&super::zarr_json::dims(
                    shape,
                    "chunk_shape",
                    1,
                )?))
            }
            "rectilinear" => {
                Self::parse_rectilinear(config).map_err(|e| e.context("chunk_grid \"rectilinear\""))
            }
            other => Err(Error::Unsupported(format!("chunk_grid {other:?}"))),
        }
    }

    fn parse_rectilinear(config: Option<&Map<String, Value>>) -> Result<ChunkGrid> {
        let config = config
            .ok_or_else(|| Error::InvalidMetadata("\"configuration\" must be an object".into()))?;
        match config.get("kind") {
            Some(kind) if kind == "inline" => {}
            Some(Value::String(kind)) => {
                return Err(Error::Unsupported(format!("\"kind\" {kind:?}")));
            }
            other => {
                return Err(Error::InvalidMetadata(format!(
                    "\"kind\" must be \"inline\", got {}",
                    other.unwrap_or(&Value::Null)
                )))
            }
        }
        let Some(Value::Array(dims)) = config.get("chunk_shapes") else {
            return Err(Error::InvalidMetadata(
                "\"chunk_shapes\" must be a list with one item per dimension".into(),
            ));
        };
        let axes = dims
            .iter()
            .enumerate()
            .map(|(d, item)| parse_axis(item, &format!("chunk_shapes[{d}]")))
            .collect::<Result<Vec<Axis>>>()?;
        Ok(Self::from_axes(axes, true))
    }

    /// The `chunk_grid` member of a v3 document.
    pub fn to_v3_json(&self) -> Value {
        if !self.rectilinear {
            return json!({"name": "regular", "configuration": {"chunk_shape": self.regular}});
        }
        let shapes: Vec<Value> = self.axes.iter().map(Axis::to_json).collect();
        json!({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": shapes}})
    }

    /// The chunk shape as JSON when it is regular, else the rectilinear `chunk_shapes`.
    pub fn chunks_json(&self) -> Value {
        match &self.regular {
            Some(shape) => json!(shape),
            None => Value::Array(self.axes.iter().map(Axis::to_json).collect()),
        }
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.axes.len()
    }

    /// The chunks along dimension `d`.
    pub fn axis(&self, d: usize) -> &Axis {
        &self.axes[d]
    }

    /// The chunk shape when every dimension is regular (always for v2 and `regular`; for a
    /// `rectilinear` grid whose every dimension is one repeated length).
    pub fn regular_shape(&self) -> Option<&[u64]> {
        self.regular.as_deref()
    }

    /// Whether the metadata names the grid `rectilinear`.
    pub fn is_rectilinear(&self) -> bool {
        self.rectilinear
    }

    /// The chunk shape when it is regular, else an [`Error::Unsupported`] saying `what` needs
    /// one.
    pub fn require_regular(&self, what: &str) -> Result<&[u64]> {
        self.regular_shape().ok_or_else(|| {
            Error::Unsupported(format!(
                "{what} with a rectilinear chunk grid that lists its chunk lengths"
            ))
        })
    }

    /// Chunks per dimension of an array of `shape`.
    pub fn grid_shape(&self, shape: &[u64]) -> Vec<u64> {
        self.axes
            .iter()
            .zip(shape)
            .map(|(a, &n)| a.count(n))
            .collect()
    }

    /// The first element of the chunk at `coords`.
    pub fn chunk_start(&self, coords: &[u64]) -> Vec<u64> {
        self.axes
            .iter()
            .zip(coords)
            .map(|(a, &c)| a.start(c))
            .collect()
    }

    /// The decoded shape of the chunk at `coords`.
    pub fn chunk_shape(&self, coords: &[u64]) -> Vec<u64> {
        self.axes
            .iter()
            .zip(coords)
            .map(|(a, &c)| a.len(c))
            .collect()
    }

    /// The longest chunk along each dimension.
    pub fn max_chunk_shape(&self) -> Vec<u64> {
        self.axes.iter().map(Axis::max_len).collect()
    }

    /// Checks that the chunks reach every dimension of `shape`.
    pub fn check_covers(&self, shape: &[u64]) -> Result<()> {
        match self.axes.iter().zip(shape).position(|(a, &n)| !a.covers(n)) {
            None => Ok(()),
            Some(d) => Err(Error::InvalidMetadata(format!(
                "chunk_grid: the chunk lengths of dimension {d} add up to {}, less than its length {}",
                self.axes[d].total().unwrap_or(0),
                shape[d]
            ))),
        }
    }

    /// The grid of the array resized to `shape` ([`Axis::grown_to`]); chunks added are
    /// multiples of `unit` (a sharded array's inner chunks) when given.
    pub fn resized(&self, shape: &[u64], unit: Option<&[u64]>) -> ChunkGrid {
        let axes = (0..shape.len())
            .map(|d| self.axes[d].grown_to(shape[d], unit.map_or(1, |u| u[d])))
            .collect();
        Self::from_axes(axes, self.rectilinear)
    }
}

/// One dimension of `chunk_shapes`: a length, or a list of lengths and `[length, repeat]`.
fn parse_axis(item: &Value, what: &str) -> Result<Axis> {
    let positive = |v: &Value| v.as_u64().filter(|&n| n >= 1);
    if let Some(len) = positive(item) {
        return Ok(Axis::regular(len));
    }
    let Value::Array(list) = item else {
        return Err(Error::InvalidMetadata(format!(
            "{what} must be a positive integer or a list, got {item}"
        )));
    };
    let pairs = list
        .iter()
        .map(|v| match v {
            Value::Array(pair) => match pair.as_slice() {
                [len, count] => Some((positive(len)?, positive(count)?)),
                _ => None,
            },
            v => Some((positive(v)?, 1)),
        })
        .collect::<Option<Vec<(u64, u64)>>>()
        .ok_or_else(|| {
            Error::InvalidMetadata(format!(
                "{what} must list positive integers and [length, repeat] pairs, got {item}"
            ))
        })?;
    Axis::listed(&pairs, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rectilinear(shapes: Value) -> Result<ChunkGrid> {
        let config = json!({"kind": "inline", "chunk_shapes": shapes});
        ChunkGrid::parse_v3("rectilinear", config.as_object())
    }

    /// Every form the extension's README shows expands as it says, and writes back in the
    /// short form.
    #[test]
    fn forms_expand_and_round_trip() {
        let grid = rectilinear(json!([4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]])).unwrap();
        let lengths = |d: usize, n: u64| (0..n).map(|c| grid.axis(d).len(c)).collect::<Vec<_>>();
        assert_eq!(grid.grid_shape(&[6; 5]), vec![2, 3, 2, 4, 2]);
        assert_eq!(lengths(1, 3), vec![1, 2, 3]);
        assert_eq!(lengths(3, 4), vec![1, 1, 1, 3]);
        assert_eq!(grid.chunk_start(&[1, 2, 1, 3, 1]), vec![4, 3, 4, 3, 4]);
        assert_eq!(grid.regular_shape(), None);
        assert_eq!(
            grid.to_v3_json()["configuration"]["chunk_shapes"],
            json!([4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [[4, 3]]])
        );
        let again = ChunkGrid::parse_v3(
            "rectilinear",
            grid.to_v3_json()["configuration"].as_object(),
        );
        assert_eq!(again.unwrap(), grid);
        let all_bare = rectilinear(json!([2, 3])).unwrap();
        assert_eq!(all_bare.regular_shape(), Some(&[2, 3][..]));
        assert!(all_bare.is_rectilinear());
    }

    /// Elements map to the chunk holding them, across runs and past the listed chunks.
    #[test]
    fn elements_find_their_chunks() {
        let grid = rectilinear(json!([[[3, 2], 4, [1, 3]]])).unwrap();
        let axis = grid.axis(0);
        let expect = [0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 4, 5];
        for (i, &c) in expect.iter().enumerate() {
            assert_eq!(axis.chunk_of(i as u64), c, "element {i}");
            assert!(axis.start(c) <= i as u64 && (i as u64) < axis.start(c) + axis.len(c));
        }
        assert_eq!(axis.chunk_of(13), 6);
        assert_eq!(axis.count(13), 6);
        assert_eq!(axis.count(11), 4);
        assert_eq!(axis.count(0), 0);
        assert!(axis.covers(13) && !axis.covers(14));
        let grown = grid.resized(&[20], None);
        assert_eq!(grown.axis(0).len(6), 7);
        assert_eq!(grown.axis(0).count(20), 7);
        // A chunk of the last run's length joins the run, as zarr-python writes it.
        let same = grid.resized(&[14], None);
        assert_eq!(
            same.to_v3_json()["configuration"]["chunk_shapes"],
            json!([[[3, 2], 4, [1, 4]]])
        );
        assert_eq!(grid.resized(&[20], Some(&[3])).axis(0).len(6), 9);
        assert_eq!(grid.resized(&[5], None), grid);
    }

    /// Every grid listed as read parses; another name is unsupported.
    #[test]
    fn the_listed_grids_are_those_read() {
        for name in CHUNK_GRIDS {
            let config = json!({"chunk_shape": [2], "kind": "inline", "chunk_shapes": [2]});
            assert!(
                ChunkGrid::parse_v3(name, config.as_object()).is_ok(),
                "{name}"
            );
        }
        assert!(matches!(
            ChunkGrid::parse_v3("rectangular", None),
            Err(Error::Unsupported(_))
        ));
    }

    /// Malformed grids are refused naming the dimension; an unknown kind is unsupported.
    #[test]
    fn bad_grids_name_what_is_wrong() {
        for (shapes, needle) in [
            (json!([[0, 2]]), "chunk_shapes[0]"),
            (json!([[[2, 0]]]), "[length, repeat]"),
            (json!([3, [[2, 3, 1]]]), "chunk_shapes[1]"),
            (json!([[]]), "empty"),
            (json!(["3"]), "positive integer"),
            (json!([[[u64::MAX, 2]]]), "2^64"),
            (json!({"a": 1}), "chunk_shapes"),
        ] {
            match rectilinear(shapes.clone()) {
                Err(Error::InvalidMetadata(m)) => assert!(m.contains(needle), "{shapes}: {m}"),
                other => panic!("{shapes}: {other:?}"),
            }
        }
        let other_kind = json!({"kind": "file", "chunk_shapes": [1]});
        assert!(matches!(
            ChunkGrid::parse_v3("rectilinear", other_kind.as_object()),
            Err(Error::Unsupported(_))
        ));
        let grid = rectilinear(json!([[2, 2]])).unwrap();
        let err = grid.check_covers(&[5]).unwrap_err().to_string();
        assert!(err.contains("dimension 0 add up to 4"), "{err}");
    }
}
