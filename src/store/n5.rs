//! N5 containers as zarr-python 2's `N5Store` presents them: the Zarr v2 keys over the N5
//! layout of another store (a directory), so the hierarchy and array layers work unchanged.
//!
//! - `P/.zarray`, `P/.zgroup` and `P/.zattrs` are views of `P/attributes.json`
//!   ([`crate::metadata::n5`]): a dataset (it has `dimensions`) is an array, any other
//!   `attributes.json` a group, its non-N5 members the user attributes. Writing one of them
//!   rewrites the members it stands for and keeps the others. A directory without
//!   `attributes.json` that holds something, outside any dataset, is a group too (the N5
//!   spec: every directory is a group; z5 writes no `attributes.json` for plain groups).
//! - A chunk key `P/i.j.k` (two or more `.`-separated numbers) is the block file `P/k/j/i`:
//!   N5 lists dimensions fastest-varying first. One-dimensional chunk keys are the same in
//!   both. Listings turn block files back into chunk keys.
//! - Every other key passes through.

use super::{Capabilities, Store, ValueReader, Version};
use crate::error::{Error, Result};
use crate::metadata::n5::{self as n5meta, ATTRIBUTES_JSON, KEYWORDS, N5_VERSION};
use crate::metadata::{self, JsonDocument, ZARRAY, ZATTRS, ZGROUP};
use crate::path::{validate_key, validate_prefix};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// An N5 container over another store ([`Store`] keys in, N5 layout underneath).
#[derive(Debug)]
pub struct N5Store {
    inner: Box<dyn Store>,
    /// Held while a document is rewritten: `.zarray`, `.zgroup` and `.zattrs` share one
    /// `attributes.json`, so writes of different keys must not interleave.
    documents: std::sync::Mutex<()>,
}

/// What a Zarr key stands for in the N5 layout.
enum Route<'a> {
    /// A metadata document (`.zarray`, `.zgroup`, `.zattrs`) of the node whose directory is
    /// the prefix (`""` or ending in `/`).
    Meta(&'a str, &'a str),
    /// Any other key: the N5 key holding its value.
    Value(String),
}

/// Whether a key's last segment names a chunk of two or more dimensions (`0.1`, `3.0.2`).
fn is_chunk_name(name: &str) -> bool {
    let mut parts = name.split('.');
    let numeric = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    name.contains('.') && parts.all(numeric)
}

/// The prefix of a key's directory (`""` or ending in `/`) and its last segment.
fn split(key: &str) -> (&str, &str) {
    match key.rfind('/') {
        Some(at) => (&key[..=at], &key[at + 1..]),
        None => ("", key),
    }
}

fn route(key: &str) -> Result<Route<'_>> {
    validate_key(key)?;
    let (dir, name) = split(key);
    Ok(match name {
        ZARRAY | ZGROUP | ZATTRS => Route::Meta(dir, name),
        _ if is_chunk_name(name) => {
            let coords: Vec<&str> = name.split('.').rev().collect();
            Route::Value(format!("{dir}{}", coords.join("/")))
        }
        _ => Route::Value(key.to_string()),
    })
}

/// The chunk key of a block file at `rel` (its path below its dataset's directory) in a
/// dataset of `ndim` dimensions; `None` when `rel` is not one.
fn chunk_name_of_block(rel: &str, ndim: usize) -> Option<String> {
    let segments: Vec<&str> = rel.split('/').collect();
    let numeric = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    (segments.len() == ndim && segments.iter().all(numeric)).then(|| {
        let reversed: Vec<&str> = segments.into_iter().rev().collect();
        reversed.join(".")
    })
}

/// The ancestor directories of a key, shallowest first (`""`, `a/`, `a/b/` for `a/b/c`).
fn ancestors(key: &str) -> impl Iterator<Item = &str> {
    std::iter::once("").chain(key.match_indices('/').map(|(at, _)| &key[..=at]))
}

impl N5Store {
    /// An N5 container over `inner`.
    pub fn new(inner: Box<dyn Store>) -> N5Store {
        N5Store {
            inner,
            documents: std::sync::Mutex::new(()),
        }
    }

    /// The `attributes.json` of the node whose directory is `dir`, if there is one.
    fn load(&self, dir: &str) -> Result<Option<JsonDocument>> {
        let key = format!("{dir}{ATTRIBUTES_JSON}");
        self.inner
            .get(&key)?
            .map(|bytes| n5meta::parse(&bytes, &key))
            .transpose()
    }

    fn save(&self, dir: &str, doc: &JsonDocument) -> Result<()> {
        self.inner
            .set(&format!("{dir}{ATTRIBUTES_JSON}"), &doc.render())
    }

    /// Whether an ancestor of `dir` is a dataset (so `dir` holds blocks, not nodes).
    fn inside_dataset(&self, dir: &str) -> Result<bool> {
        for above in ancestors(dir.trim_end_matches('/')) {
            if above.len() < dir.len() && self.load(above)?.is_some_and(|a| n5meta::is_dataset(&a))
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether `dir` (without `attributes.json`) is a group: it holds something and is not
    /// inside a dataset.
    fn is_bare_group(&self, dir: &str) -> Result<bool> {
        Ok(!self.inner.list_dir(dir)?.is_empty() && !self.inside_dataset(dir)?)
    }

    /// The document `name` of the node at `dir`, as zarr-python 2 presents it.
    fn get_meta(&self, dir: &str, name: &str) -> Result<Option<Vec<u8>>> {
        let key = format!("{dir}{ATTRIBUTES_JSON}");
        let attrs = self.load(dir)?;
        Ok(match (name, attrs) {
            (ZARRAY, Some(a)) if n5meta::is_dataset(&a) => {
                Some(metadata::to_document(&n5meta::zarray_of_dataset(&a, &key)?))
            }
            (ZGROUP, Some(a)) if !n5meta::is_dataset(&a) => Some(metadata::group_document()),
            (ZGROUP, None) if self.is_bare_group(dir)? => Some(metadata::group_document()),
            (ZATTRS, Some(a)) => n5meta::user_attributes(&a),
            _ => None,
        })
    }

    fn set_meta(&self, dir: &str, name: &str, value: &[u8]) -> Result<()> {
        let key = format!("{dir}{name}");
        let _rewriting = self.documents.lock().unwrap_or_else(|p| p.into_inner());
        let mut doc = self.load(dir)?.unwrap_or_default();
        match name {
            ZARRAY => {
                let zarray = metadata::parse_document(value, &key)?;
                for (member, v) in n5meta::dataset_of_zarray(&zarray, &key)? {
                    doc.set(member, &v);
                }
                // zarr-python marks a container whose root is an array so.
                if dir.is_empty() && !doc.contains("n5") {
                    doc.set("n5", &N5_VERSION.into());
                }
            }
            ZGROUP => {
                metadata::check_group_document(&metadata::parse_document(value, &key)?, &key)?;
                if n5meta::is_dataset(&doc) {
                    return Err(Error::AlreadyExists(format!(
                        "{key:?}: {dir}{ATTRIBUTES_JSON} describes an N5 dataset"
                    )));
                }
                // As zarr-python 2 writes every group (it tells groups by a non-empty
                // attributes.json).
                if !doc.contains("n5") {
                    doc.set("n5", &N5_VERSION.into());
                }
            }
            _ => {
                let attrs = JsonDocument::parse(value, &key)?;
                if let Some(reserved) = attrs.names().find(|n| KEYWORDS.contains(n)) {
                    return Err(Error::InvalidArgument(format!(
                        "{key:?}: attribute {reserved:?} is reserved by N5"
                    )));
                }
                let user: Vec<String> = doc
                    .names()
                    .filter(|n| !KEYWORDS.contains(n))
                    .map(str::to_string)
                    .collect();
                for name in user {
                    doc.remove(&name);
                }
                for name in attrs.names() {
                    doc.set_raw(name, attrs.raw(name).expect("listed").to_string());
                }
            }
        }
        self.save(dir, &doc)
    }

    fn erase_meta(&self, dir: &str, name: &str) -> Result<()> {
        let _rewriting = self.documents.lock().unwrap_or_else(|p| p.into_inner());
        let Some(mut doc) = self.load(dir)? else {
            return Ok(());
        };
        let dataset = n5meta::is_dataset(&doc);
        match name {
            ZARRAY | ZGROUP if (name == ZARRAY) == dataset => {
                self.inner.erase(&format!("{dir}{ATTRIBUTES_JSON}"))
            }
            ZATTRS => {
                let user: Vec<String> = doc
                    .names()
                    .filter(|n| !KEYWORDS.contains(n))
                    .map(str::to_string)
                    .collect();
                if user.is_empty() {
                    return Ok(());
                }
                for name in user {
                    doc.remove(&name);
                }
                self.save(dir, &doc)
            }
            _ => Ok(()),
        }
    }

    /// The number of dimensions of the dataset at `dir`, `None` for a group.
    fn dataset_ndim(doc: &JsonDocument) -> Option<usize> {
        doc.get("dimensions")
            .and_then(|d| d.as_array().map(Vec::len))
    }
}

impl Store for N5Store {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match route(key)? {
            Route::Meta(dir, name) => self.get_meta(dir, name),
            Route::Value(k) => self.inner.get(&k),
        }
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>) -> Result<bool> {
        match route(key)? {
            Route::Meta(dir, name) => {
                buf.clear();
                Ok(self
                    .get_meta(dir, name)?
                    .map(|v| buf.extend_from_slice(&v))
                    .is_some())
            }
            Route::Value(k) => self.inner.get_into(&k, buf),
        }
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        match route(key)? {
            Route::Meta(dir, name) => self.set_meta(dir, name, value),
            Route::Value(k) => self.inner.set(&k, value),
        }
    }

    fn erase(&self, key: &str) -> Result<()> {
        match route(key)? {
            Route::Meta(dir, name) => self.erase_meta(dir, name),
            Route::Value(k) => self.inner.erase(&k),
        }
    }

    fn open_value(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        match route(key)? {
            Route::Meta(dir, name) => Ok(self
                .get_meta(dir, name)?
                .map(|v| Box::new(v) as Box<dyn ValueReader>)),
            Route::Value(k) => self.inner.open_value(&k),
        }
    }

    fn contains(&self, key: &str) -> Result<bool> {
        match route(key)? {
            Route::Meta(dir, name) => Ok(self.get_meta(dir, name)?.is_some()),
            Route::Value(k) => self.inner.contains(&k),
        }
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        match route(key)? {
            Route::Meta(dir, name) => Ok(self.get_meta(dir, name)?.map(|v| v.len() as u64)),
            Route::Value(k) => self.inner.value_len(&k),
        }
    }

    fn value_file(&self, key: &str) -> Result<Option<PathBuf>> {
        match route(key)? {
            // Documents are made from attributes.json, never a file of their own.
            Route::Meta(..) => Ok(None),
            Route::Value(k) => self.inner.value_file(&k),
        }
    }

    fn set_from_file(&self, key: &str, source: &Path) -> Result<()> {
        match route(key)? {
            Route::Meta(dir, name) => {
                let value = std::fs::read(source)
                    .map_err(|e| Error::io(format!("reading {}", source.display()), e))?;
                self.set_meta(dir, name, &value)
            }
            Route::Value(k) => self.inner.set_from_file(&k, source),
        }
    }

    fn get_versioned(&self, key: &str, buf: &mut Vec<u8>) -> Result<(bool, Version)> {
        match route(key)? {
            Route::Meta(..) => Ok((self.get_into(key, buf)?, Version::Unchecked)),
            Route::Value(k) => self.inner.get_versioned(&k, buf),
        }
    }

    fn set_if(&self, key: &str, value: Option<&[u8]>, version: &Version) -> Result<bool> {
        match route(key)? {
            Route::Meta(dir, name) => {
                match value {
                    Some(v) => self.set_meta(dir, name, v)?,
                    None => self.erase_meta(dir, name)?,
                }
                Ok(true)
            }
            Route::Value(k) => self.inner.set_if(&k, value, version),
        }
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        let keys = self.inner.list_prefix(prefix)?;
        // Every node below the prefix, by its directory: the datasets with their dimensions.
        let mut nodes: BTreeMap<&str, Option<usize>> = BTreeMap::new();
        let mut out = Vec::with_capacity(keys.len());
        for key in &keys {
            let (dir, name) = split(key);
            if name != ATTRIBUTES_JSON {
                continue;
            }
            let doc = n5meta::parse(&self.inner.get(key)?.unwrap_or_default(), key)?;
            let ndim = Self::dataset_ndim(&doc);
            out.push(format!(
                "{dir}{}",
                if ndim.is_some() { ZARRAY } else { ZGROUP }
            ));
            if n5meta::user_attributes(&doc).is_some() {
                out.push(format!("{dir}{ZATTRS}"));
            }
            nodes.insert(dir, ndim);
        }
        let dataset_of = |key: &'_ str| -> Option<(String, usize)> {
            ancestors(key)
                .map(str::to_string)
                .filter_map(|d| Some((d.clone(), nodes.get(d.as_str()).copied()??)))
                .last()
        };
        let mut bare_groups = BTreeSet::new();
        for key in &keys {
            // A node's attributes.json says nothing of its own directory, only of those above.
            let attributes = split(key).1 == ATTRIBUTES_JSON;
            let probe = if attributes {
                split(key).0.trim_end_matches('/')
            } else {
                key.as_str()
            };
            match dataset_of(probe) {
                Some(_) if attributes => {}
                Some((dir, ndim)) => out.push(
                    chunk_name_of_block(&key[dir.len()..], ndim)
                        .map_or_else(|| key.clone(), |name| format!("{dir}{name}")),
                ),
                None => {
                    if !attributes {
                        out.push(key.clone());
                    }
                    for dir in ancestors(probe).filter(|d| d.len() >= prefix.len()) {
                        if !nodes.contains_key(dir) {
                            bare_groups.insert(dir);
                        }
                    }
                }
            }
        }
        out.extend(bare_groups.into_iter().map(|d| format!("{d}{ZGROUP}")));
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn prune(&self, prefix: &str) -> Result<()> {
        // A node's directory is the same in both layouts, and its blocks lie below it.
        self.inner.prune(prefix)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            n5: true,
            ..self.inner.capabilities()
        }
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        let names = self.inner.list_dir(prefix)?;
        let attrs = if names.iter().any(|n| n == ATTRIBUTES_JSON) {
            self.load(prefix)?
        } else {
            None
        };
        let mut out: Vec<String> = Vec::with_capacity(names.len() + 2);
        match &attrs {
            Some(doc) => {
                let ndim = Self::dataset_ndim(doc);
                out.push(if ndim.is_some() { ZARRAY } else { ZGROUP }.to_string());
                if n5meta::user_attributes(doc).is_some() {
                    out.push(ZATTRS.to_string());
                }
                for name in names.iter().filter(|n| *n != ATTRIBUTES_JSON) {
                    let blocks =
                        ndim.filter(|&n| n >= 2 && name.bytes().all(|b| b.is_ascii_digit()));
                    match blocks {
                        Some(ndim) => {
                            for key in self.inner.list_prefix(&format!("{prefix}{name}/"))? {
                                let rel = &key[prefix.len()..];
                                out.push(
                                    chunk_name_of_block(rel, ndim).unwrap_or_else(|| name.clone()),
                                );
                            }
                        }
                        None => out.push(name.clone()),
                    }
                }
            }
            None => {
                if !names.is_empty() && !self.inside_dataset(prefix)? {
                    out.push(ZGROUP.to_string());
                }
                out.extend(names);
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn request_stats(&self) -> Option<super::RequestStats> {
        self.inner.request_stats()
    }

    fn flush(&self) -> Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    fn store() -> N5Store {
        N5Store::new(Box::new(MemoryStore::default()))
    }

    const ZARRAY_DOC: &str = r#"{"zarr_format": 2, "shape": [5, 4], "chunks": [2, 3],
        "dtype": "<u2", "compressor": {"id": "n5_wrapper", "compressor_config": {"id": "gzip", "level": 1},
        "dtype": "<u2", "chunk_shape": [2, 3]}, "fill_value": 0, "order": "C", "filters": null,
        "dimension_separator": "."}"#;

    #[test]
    fn presents_zarr_keys_over_the_n5_layout() {
        let s = store();
        s.set(".zgroup", br#"{"zarr_format": 2}"#).unwrap();
        s.set("g/.zgroup", br#"{"zarr_format": 2}"#).unwrap();
        s.set("g/a/.zarray", ZARRAY_DOC.as_bytes()).unwrap();
        s.set("g/a/.zattrs", br#"{"units": "nm", "scale": NaN}"#)
            .unwrap();
        s.set("g/a/0.1", b"block").unwrap();
        s.set("g/a/2.0", b"edge").unwrap();
        let inner = |k: &str| s.inner.get(k).unwrap();
        assert_eq!(inner("g/a/1/0").unwrap(), b"block");
        assert_eq!(inner("g/a/0/2").unwrap(), b"edge");
        let attrs: serde_json::Value = serde_json::from_str(&metadata::python_constants_masked(
            std::str::from_utf8(&inner("g/a/attributes.json").unwrap()).unwrap(),
        ))
        .unwrap();
        assert_eq!(attrs["dimensions"], serde_json::json!([4, 5]));
        assert_eq!(attrs["blockSize"], serde_json::json!([3, 2]));
        assert_eq!(attrs["dataType"], "uint16");
        assert_eq!(attrs["compression"]["type"], "gzip");
        assert_eq!(attrs["units"], "nm");
        assert!(attrs.get("n5").is_none());
        assert!(inner("attributes.json").is_some());
        // Read back as Zarr.
        let zarray =
            metadata::parse_document(&s.get("g/a/.zarray").unwrap().unwrap(), "k").unwrap();
        assert_eq!(zarray["shape"], serde_json::json!([5, 4]));
        assert_eq!(zarray["compressor"]["compressor_config"]["id"], "gzip");
        assert!(String::from_utf8(s.get("g/a/.zattrs").unwrap().unwrap())
            .unwrap()
            .contains("NaN"));
        assert_eq!(s.get("g/.zattrs").unwrap(), None);
        assert!(s.contains("g/.zgroup").unwrap() && !s.contains("g/.zarray").unwrap());
        assert!(!s.contains("g/a/.zgroup").unwrap());
        assert_eq!(s.get("g/a/0.1").unwrap().unwrap(), b"block");
        assert_eq!(s.list_dir("").unwrap(), [".zgroup", "g"]);
        assert_eq!(s.list_dir("g/").unwrap(), [".zgroup", "a"]);
        assert_eq!(
            s.list_dir("g/a/").unwrap(),
            [".zarray", ".zattrs", "0.1", "2.0"]
        );
        assert_eq!(
            s.list_prefix("").unwrap(),
            [
                ".zgroup",
                "g/.zgroup",
                "g/a/.zarray",
                "g/a/.zattrs",
                "g/a/0.1",
                "g/a/2.0"
            ]
        );
        // Attributes replaced, then erased, keep the dataset.
        s.set("g/a/.zattrs", br#"{"other": 1}"#).unwrap();
        assert_eq!(
            s.get("g/a/.zattrs").unwrap().unwrap(),
            b"{\n  \"other\": 1\n}"
        );
        s.erase("g/a/.zattrs").unwrap();
        assert_eq!(s.get("g/a/.zattrs").unwrap(), None);
        assert!(s.contains("g/a/.zarray").unwrap());
        // Erasing a group's document leaves an array's alone, and the reverse.
        s.erase("g/a/.zgroup").unwrap();
        assert!(s.contains("g/a/.zarray").unwrap());
        s.erase("g/a/.zarray").unwrap();
        assert!(!s.contains("g/a/.zarray").unwrap());
        s.erase("g/a/0.1").unwrap();
        assert_eq!(s.inner.get("g/a/1/0").unwrap(), None);
    }

    #[test]
    fn directories_without_attributes_are_groups_outside_datasets() {
        let s = store();
        s.inner
            .set("attributes.json", br#"{"n5": "2.0.0"}"#)
            .unwrap();
        s.inner
            .set("plain/sub/attributes.json", br#"{"n5": "2.0.0"}"#)
            .unwrap();
        s.set("plain/d/.zarray", ZARRAY_DOC.as_bytes()).unwrap();
        s.set("plain/d/1.0", b"x").unwrap();
        assert!(s.contains("plain/.zgroup").unwrap());
        assert!(!s.contains("plain/d/0/.zgroup").unwrap());
        assert!(!s.contains("nothing/.zgroup").unwrap());
        assert_eq!(s.list_dir("plain/").unwrap(), [".zgroup", "d", "sub"]);
        assert_eq!(
            s.list_prefix("plain/").unwrap(),
            [
                "plain/.zgroup",
                "plain/d/.zarray",
                "plain/d/1.0",
                "plain/sub/.zgroup"
            ]
        );
    }

    #[test]
    fn bad_documents_are_errors_naming_the_key() {
        let s = store();
        s.inner.set("a/attributes.json", b"{not json").unwrap();
        for key in ["a/.zarray", "a/.zgroup", "a/.zattrs"] {
            let err = s.get(key).unwrap_err().to_string();
            assert!(err.contains("a/attributes.json"), "{err}");
        }
        assert!(s
            .list_prefix("")
            .unwrap_err()
            .to_string()
            .contains("a/attributes.json"));
        s.inner
            .set("b/attributes.json", br#"{"dimensions": [2], "blockSize": [1], "dataType": "uint8", "compression": {"type": "snappy"}}"#)
            .unwrap();
        let err = s.get("b/.zarray").unwrap_err();
        assert!(
            matches!(&err, Error::Unsupported(m) if m.contains("b/attributes.json") && m.contains("snappy")),
            "{err}"
        );
        let err = s
            .set("c/.zattrs", br#"{"dimensions": 1}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("c/.zattrs") && err.contains("reserved"),
            "{err}"
        );
        assert!(s.set("../x/0.0", b"").is_err());
    }
}
