//! Diagnostics, like zarr-python's `info`: sizes, storage ratio, chunks initialised.

use super::Array;
use crate::error::Result;
use crate::metadata::FormatMetadata;
use crate::path;
use serde_json::{json, Value};

impl Array {
    /// What the array holds and what it takes in the store: `nbytes` (the values, for
    /// fixed-size types), `nbytes_stored` (every key of the array: metadata, attributes and
    /// chunks), their ratio, and how many of its chunks (shards) are stored out of how many
    /// there are; with the format's codec description (v2: order, compressor, filters; v3: the
    /// data type as named there, the inner chunk shape, the codecs).
    pub fn info(&self) -> Result<Value> {
        let prefix = path::join(&self.path, "");
        let mut stored: u64 = 0;
        let mut chunks_initialized: u64 = 0;
        for key in self.store.list_prefix(&prefix)? {
            stored += self.store.value_len(&key)?.unwrap_or(0);
            if self.chunk_coords(&key[prefix.len()..]).is_some() {
                chunks_initialized += 1;
            }
        }
        let meta = &self.metadata;
        let shape = self.shape();
        let chunks_total = shape
            .iter()
            .zip(&meta.chunks)
            .map(|(&n, &c)| n.div_ceil(c))
            .try_fold(1u64, u64::checked_mul);
        let nbytes = (self.object.is_none())
            .then(|| {
                shape
                    .iter()
                    .try_fold(self.item_size() as u64, |acc, &n| acc.checked_mul(n))
            })
            .flatten();
        let ratio = nbytes
            .filter(|_| stored > 0)
            .map(|n| n as f64 / stored as f64);
        let mut info = json!({
            "path": self.path,
            "zarr_format": self.zarr_format(),
            "dtype": meta.dtype.to_json(),
            "shape": shape,
            "chunks": meta.chunks,
            "nbytes": nbytes,
            "nbytes_stored": stored,
            "storage_ratio": ratio,
            "chunks_initialized": chunks_initialized,
            "chunks_total": chunks_total,
        });
        match &meta.format {
            FormatMetadata::V2 { filters, .. } => {
                info["order"] = json!(self.metadata_json()?.get("order"));
                info["compressor"] = json!(self.pipeline.compressor_config());
                info["filters"] = json!(filters);
            }
            FormatMetadata::V3 { document, .. } => {
                info["data_type"] = document.get("data_type").unwrap_or_default();
                info["inner_chunks"] = json!(self.inner_chunks());
                info["codecs"] = document.get("codecs").unwrap_or_default();
            }
        }
        Ok(info)
    }

    /// The grid position of the chunk (or shard) a key name below the array names (`"3.1"`,
    /// `"c/3/1"`, ...); `None` for other names.
    pub(super) fn chunk_coords(&self, name: &str) -> Option<Vec<u64>> {
        self.metadata.chunk_keys.coords(name, self.ndim())
    }

    /// The grid positions of the chunks stored for this array.
    pub(super) fn stored_chunks(&self) -> Result<Vec<Vec<u64>>> {
        let prefix = path::join(&self.path, "");
        Ok(self
            .store
            .list_prefix(&prefix)?
            .iter()
            .filter_map(|key| self.chunk_coords(&key[prefix.len()..]))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Array, OpenMode, StoreHandle};
    use serde_json::json;

    #[test]
    fn counts_stored_chunks_and_bytes() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let meta =
            r#"{"shape": [10, 10], "chunks": [5, 4], "dtype": "<i4", "dimension_separator": "/"}"#;
        let a = Array::create(store.clone(), "g/a", meta).unwrap();
        a.write_region(&[0, 0], &[5, 4], &[1u8; 80]).unwrap();
        a.set_attributes(r#"{"x": 1}"#).unwrap();
        let info = a.info().unwrap();
        assert_eq!(info["chunks_initialized"], 1);
        assert_eq!(info["chunks_total"], 6);
        assert_eq!(info["nbytes"], 400);
        let keys_size: u64 = ["g/a/.zarray", "g/a/.zattrs", "g/a/0/0"]
            .iter()
            .map(|k| store.get(k).unwrap().unwrap().len() as u64)
            .sum();
        assert_eq!(info["nbytes_stored"], keys_size);
        assert_eq!(
            (&info["zarr_format"], &info["order"]),
            (&json!(2), &json!("C"))
        );
    }

    #[test]
    fn describes_v3_codecs_and_counts_shards() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let doc = r#"{"zarr_format": 3, "shape": [10, 10], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 10]}},
            "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [5, 5]}}]}"#;
        let a = Array::create(store.clone(), "a", doc).unwrap();
        a.write_region(&[0, 0], &[5, 4], &[1u8; 80]).unwrap();
        let info = a.info().unwrap();
        assert_eq!(info["zarr_format"], 3);
        assert_eq!(
            (&info["chunks_initialized"], &info["chunks_total"]),
            (&json!(1), &json!(2))
        );
        assert_eq!(
            (&info["chunks"], &info["inner_chunks"]),
            (&json!([5, 10]), &json!([5, 5]))
        );
        assert_eq!(info["data_type"], "int32");
        assert_eq!(info["codecs"][0]["name"], "sharding_indexed");
        assert!(info.get("compressor").is_none());
    }
}
