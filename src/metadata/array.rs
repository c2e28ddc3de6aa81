//! One array model for both formats: what a `.zarray` (v2) or an array `zarr.json` (v3) says,
//! in the terms the engine works with. Only the codec description differs by format.

use super::chunk_grid::ChunkGrid;
use super::document::JsonDocument;
use crate::dtype::v3::ObjectKind;
use crate::dtype::{DataType, FillValue};
use serde_json::Value;

/// Layout of elements inside a v2 chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Row-major: the last dimension varies fastest.
    C,
    /// Column-major: the first dimension varies fastest.
    F,
}

/// How chunk grid positions become store keys below the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkKeyEncoding {
    /// The v3 `default` encoding: keys start with `c` (`c/1/0`; `c` for a 0-d array). Without
    /// it, the v2 layout: `1.0`, and `0` for a 0-d array.
    pub prefixed: bool,
    /// What separates the indices: `'.'` or `'/'`.
    pub separator: char,
    /// A v2 `.zarray` of more than one dimension left `dimension_separator` out: `separator`
    /// is the spec's `.`, but the chunks may lie under `/` keys (zarr-python 2.6's
    /// `NestedDirectoryStore` wrote them so); the array handle finds out which.
    pub unstated: bool,
}

impl ChunkKeyEncoding {
    /// The v2 layout (`.zarray`, or the v3 `v2` encoding) with `separator`.
    pub fn v2(separator: char) -> Self {
        ChunkKeyEncoding {
            prefixed: false,
            separator,
            unstated: false,
        }
    }

    /// The key name of the chunk at grid position `coords`, relative to the array.
    pub fn name(&self, coords: &[u64]) -> String {
        let mut out = String::from(match (self.prefixed, coords.is_empty()) {
            (true, _) => "c",
            (false, true) => "0",
            (false, false) => "",
        });
        for (i, c) in coords.iter().enumerate() {
            if self.prefixed || i > 0 {
                out.push(self.separator);
            }
            out.push_str(&c.to_string());
        }
        out
    }

    /// The grid position a key name relative to the array names, for an array of `ndim`
    /// dimensions; `None` when the name is not a chunk key.
    pub fn coords(&self, name: &str, ndim: usize) -> Option<Vec<u64>> {
        let rest = if self.prefixed {
            match name.strip_prefix('c') {
                Some("") if ndim == 0 => return Some(Vec::new()),
                Some(r) => r.strip_prefix(self.separator)?,
                None => return None,
            }
        } else {
            name
        };
        let coords = rest
            .split(self.separator)
            .map(|p| {
                (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| p.parse::<u64>().ok())
                    .flatten()
            })
            .collect::<Option<Vec<u64>>>()?;
        match (ndim, coords.as_slice()) {
            (0, [0]) if !self.prefixed => Some(Vec::new()),
            (n, _) if n == coords.len() => Some(coords),
            _ => None,
        }
    }
}

/// What differs between the formats: how chunks are encoded, and the stored document.
#[derive(Debug, Clone)]
pub enum FormatMetadata {
    /// Zarr v2: filters, then a compressor, on chunks in C or F order.
    V2 {
        /// Compressor configuration (`None` for `null`).
        compressor: Option<Value>,
        /// Filter configurations (`None` for `null`).
        filters: Option<Vec<Value>>,
        /// Element order inside chunks.
        order: Order,
    },
    /// Zarr v3: an explicit codec chain.
    V3 {
        /// The `codecs` list, as stored.
        codecs: Vec<Value>,
        /// What an object type (`string`, `bytes`) holds; `None` for fixed-size types.
        object: Option<ObjectKind>,
        /// Dimension names (`None` when the document has none).
        dimension_names: Option<Vec<Option<String>>>,
        /// The whole `zarr.json` as stored (rewritten with only the changed members).
        document: JsonDocument,
    },
}

/// An array's metadata, whichever format it came from.
#[derive(Debug, Clone)]
pub struct ArrayMetadata {
    /// Length of each dimension.
    pub shape: Vec<u64>,
    /// The chunk grid: for a sharded v3 array, the grid of its shards.
    pub grid: ChunkGrid,
    /// Element type (for v3 arrays, in the byte order their `bytes` codec stores).
    pub dtype: DataType,
    /// Value of elements never written.
    pub fill_value: FillValue,
    /// How chunk keys are formed.
    pub chunk_keys: ChunkKeyEncoding,
    /// The format and what only it has.
    pub format: FormatMetadata,
}

impl ArrayMetadata {
    /// 2 or 3.
    pub fn zarr_format(&self) -> u8 {
        match self.format {
            FormatMetadata::V2 { .. } => 2,
            FormatMetadata::V3 { .. } => 3,
        }
    }

    /// The array's metadata document with `shape` as its shape and, when a resize lengthened
    /// it, `grid` as its chunk grid: `.zarray` as JSON for v2, the stored `zarr.json` members
    /// for v3.
    pub fn document_json(&self, shape: &[u64], grid: &ChunkGrid) -> Value {
        match &self.format {
            FormatMetadata::V2 { .. } => {
                let mut doc = self.to_zarray().expect("a v2 document");
                doc["shape"] = shape.into();
                super::sort_keys(&doc)
            }
            FormatMetadata::V3 { document, .. } => {
                let mut doc = document.clone();
                doc.set("shape", &shape.into());
                if *grid != self.grid {
                    doc.set("chunk_grid", &grid.to_v3_json());
                }
                Value::Object(
                    doc.names()
                        .map(|n| (n.to_string(), doc.get(n).unwrap_or(Value::Null)))
                        .collect(),
                )
            }
        }
    }

    /// The v3 dimension names (`None` for v2 arrays and v3 arrays without names).
    pub fn dimension_names(&self) -> Option<&[Option<String>]> {
        match &self.format {
            FormatMetadata::V3 {
                dimension_names, ..
            } => dimension_names.as_deref(),
            FormatMetadata::V2 { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_keys_in_every_encoding() {
        let v3 = ChunkKeyEncoding {
            prefixed: true,
            separator: '/',
            unstated: false,
        };
        let dotted = ChunkKeyEncoding {
            prefixed: true,
            separator: '.',
            unstated: false,
        };
        for (enc, coords, name) in [
            (v3, vec![1, 23], "c/1/23"),
            (v3, vec![], "c"),
            (dotted, vec![4, 0, 5], "c.4.0.5"),
            (ChunkKeyEncoding::v2('.'), vec![1, 2], "1.2"),
            (ChunkKeyEncoding::v2('/'), vec![1, 2], "1/2"),
            (ChunkKeyEncoding::v2('.'), vec![], "0"),
        ] {
            assert_eq!(enc.name(&coords), name);
            assert_eq!(enc.coords(name, coords.len()), Some(coords));
        }
        for (enc, name, ndim) in [
            (v3, "c/1", 2),
            (v3, "1/2", 2),
            (v3, "c", 1),
            (v3, "zarr.json", 1),
            (v3, "c/x", 1),
            (dotted, "c/1", 1),
            (ChunkKeyEncoding::v2('.'), ".zarray", 1),
            (ChunkKeyEncoding::v2('.'), "c.1", 1),
        ] {
            assert_eq!(enc.coords(name, ndim), None, "{name}");
        }
    }
}
