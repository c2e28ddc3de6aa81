//! Diagnostics, like zarr-python's `info`: sizes, storage ratio, chunks initialised.

use super::Array;
use crate::dtype::python_tuple;
use crate::error::Result;
use crate::metadata::FormatMetadata;
use crate::path;
use crate::store::OpenMode;
use serde_json::{json, Value};
use std::fmt::Write;

impl Array {
    /// What the array holds and what it takes in the store: `nbytes` (the values, for
    /// fixed-size types), `nbytes_stored` (every key of the array: metadata, attributes and
    /// chunks), their ratio, and how many of its chunks (shards) are stored out of how many
    /// there are (the stored sizes and counts `null` where the store cannot list, as a web
    /// server); with the format's codec description (v2: order, compressor, filters; v3: the
    /// data type as named there, the inner chunk shape of a sharded array, the codecs).
    pub fn info(&self) -> Result<Value> {
        let prefix = path::join(&self.path, "");
        let (mut stored, mut chunks_initialized) = (None, None);
        if self.store.capabilities().listing {
            let keys = self.store.list_prefix_sized(&prefix)?;
            stored = Some(keys.iter().map(|(_, len)| len).sum::<u64>());
            let chunks = keys
                .iter()
                .filter(|(key, _)| self.chunk_coords(&key[prefix.len()..]).is_some());
            chunks_initialized = Some(chunks.count() as u64);
        }
        let meta = &self.metadata;
        let shape = self.shape();
        let grid = self.chunk_grid();
        let chunks_total = grid
            .grid_shape(&shape)
            .into_iter()
            .try_fold(1u64, u64::checked_mul);
        let nbytes = (self.object.is_none())
            .then(|| {
                shape
                    .iter()
                    .try_fold(self.item_size() as u64, |acc, &n| acc.checked_mul(n))
            })
            .flatten();
        let ratio = nbytes
            .zip(stored.filter(|&s| s > 0))
            .map(|(n, s)| n as f64 / s as f64);
        let store = &self.store;
        let mut info = json!({
            "name": (!self.path.is_empty()).then(|| format!("/{}", self.path)),
            "path": self.path,
            "store": store.location(),
            "store_type": store.kind().name(),
            "read_only": self.read_only || store.mode() == OpenMode::Read,
            "zarr_format": self.zarr_format(),
            "shape": shape,
            "chunks": grid.chunks_json(),
            "nbytes": nbytes,
            "nbytes_stored": stored,
            "storage_ratio": ratio,
            "chunks_initialized": chunks_initialized,
            "chunks_total": chunks_total,
        });
        match &meta.format {
            FormatMetadata::V2 { filters, .. } => {
                info["dtype"] = meta.dtype.to_json();
                info["order"] = json!(self.metadata_json()?.get("order"));
                info["compressor"] = json!(self
                    .forms()
                    .regular_form()
                    .and_then(|f| f.pipeline.compressor_config()));
                info["filters"] = json!(filters);
            }
            FormatMetadata::V3 { document, .. } => {
                info["data_type"] = document.get("data_type").unwrap_or_default();
                if self.sharded {
                    info["inner_chunks"] = json!(self.inner_chunks());
                }
                info["codecs"] = document.get("codecs").unwrap_or_default();
            }
        }
        Ok(info)
    }

    /// The diagnostics as zarr-python 2 prints `str(z.info)`: one `Key : value` line per fact,
    /// keys padded to the longest, each line ending in `\n`, in zarr-python's order: `Name`
    /// (`/path`; none for an array at the store root), `Data type` and `Shape`, `Chunk shape`
    /// as NumPy and Python print them, `Order`, `Read-only`, one `Filter [i]` per filter and
    /// `Compressor`, `Store type`, `No. bytes` and, when anything is stored, `No. bytes stored`
    /// and `Storage ratio` (sizes from 1 KiB on followed by their human-readable form, as
    /// `1000000 (976.6K)`), and `Chunks initialized` (`stored/total`). Where zarr-python prints
    /// Python objects, the text differs on purpose: the codecs are their JSON configurations
    /// (not numcodecs' `repr`), the store type is libzarr's name for it (`directory`, `zip`,
    /// ...), and there is no `Type` line (the Python class). For a v3 array the codecs are one
    /// `Codecs` line.
    pub fn info_text(&self) -> Result<String> {
        let info = self.info()?;
        let meta = &self.metadata;
        let mut items: Vec<(String, String)> = Vec::new();
        let mut item = |key: &str, value: String| items.push((key.to_string(), value));
        if let Some(name) = info["name"].as_str() {
            item("Name", name.to_string());
        }
        item("Data type", meta.dtype.numpy_str());
        item("Shape", python_tuple(&self.shape()));
        item(
            "Chunk shape",
            match self.chunk_grid().regular_shape() {
                Some(chunks) => python_tuple(chunks),
                None => "<variable>".to_string(),
            },
        );
        if let Some(order) = info["order"].as_str() {
            item("Order", order.to_string());
        }
        item(
            "Read-only",
            match info["read_only"].as_bool() == Some(true) {
                true => "True",
                false => "False",
            }
            .to_string(),
        );
        match &meta.format {
            FormatMetadata::V2 { .. } => {
                let filters = info["filters"].as_array().cloned().unwrap_or_default();
                for (i, filter) in filters.iter().enumerate() {
                    item(&format!("Filter [{i}]"), filter.to_string());
                }
                item("Compressor", info["compressor"].to_string());
            }
            FormatMetadata::V3 { .. } => item("Codecs", info["codecs"].to_string()),
        }
        item("Store type", store_type(&info));
        let nbytes = info["nbytes"].as_u64().or_else(|| {
            // zarr-python counts an object array's items as NumPy's 8-byte pointers.
            (self.object.is_some())
                .then(|| {
                    self.shape()
                        .iter()
                        .try_fold(8u64, |acc, &n| acc.checked_mul(n))
                })
                .flatten()
        });
        let stored = info["nbytes_stored"].as_u64().unwrap_or(0);
        item(
            "No. bytes",
            nbytes.map_or_else(|| "unknown".to_string(), byte_text),
        );
        if stored > 0 {
            item("No. bytes stored", byte_text(stored));
            if let Some(nbytes) = nbytes {
                item(
                    "Storage ratio",
                    format!("{:.1}", nbytes as f64 / stored as f64),
                );
            }
        }
        let total = info["chunks_total"]
            .as_u64()
            .map_or_else(|| "unknown".to_string(), |n| n.to_string());
        let initialized = info["chunks_initialized"]
            .as_u64()
            .map_or_else(|| "unknown".to_string(), |n| n.to_string());
        item("Chunks initialized", format!("{initialized}/{total}"));
        let width = items
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        for (key, value) in items {
            let _ = writeln!(out, "{key:width$} : {value}");
        }
        Ok(out)
    }

    /// The grid positions of the chunks stored for this array.
    pub(crate) fn stored_chunks(&self) -> Result<Vec<Vec<u64>>> {
        let prefix = path::join(&self.path, "");
        Ok(self
            .store
            .list_prefix(&prefix)?
            .iter()
            .filter_map(|key| self.chunk_coords(&key[prefix.len()..]))
            .collect())
    }
}

/// The store type an info text shows.
fn store_type(info: &Value) -> String {
    info["store_type"].as_str().unwrap_or_default().to_string()
}

/// A byte count as zarr-python 2's info prints it: the number, and from 1 KiB on its
/// human-readable size (`1000000 (976.6K)`, powers of 1024, one decimal).
fn byte_text(n: u64) -> String {
    if n <= 1 << 10 {
        return n.to_string();
    }
    let units = ["K", "M", "G", "T"];
    let mut scale = 1u64 << 10;
    for unit in units {
        if n < scale << 10 {
            return format!("{n} ({:.1}{unit})", n as f64 / scale as f64);
        }
        scale <<= 10;
    }
    format!("{n} ({:.1}P)", n as f64 / scale as f64)
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
    fn prints_info_as_zarr_python_2() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let meta = r#"{"shape": [1000, 1000], "chunks": [100, 100], "dtype": "<i4",
            "compressor": null, "filters": [{"id": "delta", "dtype": "<i4"}]}"#;
        let a = Array::create(store.clone(), "g/a", meta).unwrap();
        a.write_region(&[0, 0], &[100, 100], &[1u8; 40000]).unwrap();
        let zarray = store.get("g/a/.zarray").unwrap().unwrap().len() as u64;
        let stored = 40000 + zarray;
        let expected = format!(
            "Name               : /g/a\n\
             Data type          : int32\n\
             Shape              : (1000, 1000)\n\
             Chunk shape        : (100, 100)\n\
             Order              : C\n\
             Read-only          : False\n\
             Filter [0]         : {{\"id\":\"delta\",\"dtype\":\"<i4\",\"astype\":\"<i4\"}}\n\
             Compressor         : null\n\
             Store type         : memory\n\
             No. bytes          : 4000000 (3.8M)\n\
             No. bytes stored   : {stored} ({:.1}K)\n\
             Storage ratio      : {:.1}\n\
             Chunks initialized : 1/100\n",
            stored as f64 / 1024.0,
            4e6 / stored as f64
        );
        assert_eq!(a.info_text().unwrap(), expected);
        let info = a.info().unwrap();
        assert_eq!(
            (&info["name"], &info["store_type"], &info["read_only"]),
            (&json!("/g/a"), &json!("memory"), &json!(false))
        );
        assert_eq!(super::byte_text(1024), "1024");
        assert_eq!(super::byte_text(1025), "1025 (1.0K)");
        assert_eq!(super::byte_text(1 << 50), "1125899906842624 (1.0P)");
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
        assert!(info.get("compressor").is_none() && info.get("dtype").is_none());
        let plain = doc.replace(
            r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [5, 5]}}]"#,
            r#"[{"name": "bytes"}]"#,
        );
        let b = Array::create(store.clone(), "b", &plain).unwrap();
        assert!(b.info().unwrap().get("inner_chunks").is_none());
    }
}
