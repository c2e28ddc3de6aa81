//! A store whose metadata lives in one backend and its chunks in another, as zarr-python 2's
//! `chunk_store=` (store option `chunk_store`): node documents (`.zarray`, `.zgroup`,
//! `.zattrs`, `zarr.json`) and consolidated metadata in the first, every other key in the
//! second; listings merge both.

use super::{
    batches, Capabilities, Consume, Lead, Parts, Produce, RequestStats, Store, ValueReader, Version,
};
use crate::consolidated::ZMETADATA;
use crate::error::Result;
use crate::path;
use std::path::{Path, PathBuf};

/// Metadata in `meta`, chunks in `chunks`; see the module documentation.
#[derive(Debug)]
pub struct SplitStore {
    meta: Box<dyn Store>,
    chunks: Box<dyn Store>,
    /// The key of the v2 consolidated metadata document, kept with the metadata.
    consolidated_key: String,
}

impl SplitStore {
    /// Node documents and `consolidated_key` (`.zmetadata` when `None`) in `meta`, the other
    /// keys in `chunks`.
    pub fn new(
        meta: Box<dyn Store>,
        chunks: Box<dyn Store>,
        consolidated_key: Option<String>,
    ) -> SplitStore {
        SplitStore {
            meta,
            chunks,
            consolidated_key: consolidated_key.unwrap_or_else(|| ZMETADATA.to_string()),
        }
    }

    /// Whether `key` is kept with the metadata.
    fn is_metadata(&self, key: &str) -> bool {
        path::is_metadata_key(key) || key == self.consolidated_key
    }

    /// The backend that holds `key`.
    fn holder(&self, key: &str) -> &dyn Store {
        match self.is_metadata(key) {
            true => &*self.meta,
            false => &*self.chunks,
        }
    }

    /// The backend that holds every key of `keys`, if one does.
    fn holder_of_all(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
    ) -> Option<&dyn Store> {
        match (0..count).filter(|&i| self.is_metadata(&key(i))).count() {
            0 => Some(&*self.chunks),
            metadata if metadata == count => Some(&*self.meta),
            _ => None,
        }
    }
}

/// `a` and `b`, two sorted lists, as one sorted list without repeats.
fn merged(mut a: Vec<String>, b: Vec<String>) -> Vec<String> {
    a.extend(b);
    a.sort();
    a.dedup();
    a
}

impl Store for SplitStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.holder(key).get(key)
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>) -> Result<bool> {
        self.holder(key).get_into(key, buf)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.holder(key).set(key, value)
    }

    fn erase(&self, key: &str) -> Result<()> {
        self.holder(key).erase(key)
    }

    fn open_value(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        self.holder(key).open_value(key)
    }

    fn open_value_tail(&self, key: &str, tail: u64) -> Result<Option<Box<dyn ValueReader + '_>>> {
        self.holder(key).open_value_tail(key, tail)
    }

    fn open_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        lead: Lead,
        parts: &Parts,
    ) -> Result<Vec<Option<Box<dyn ValueReader + '_>>>> {
        match self.holder_of_all(count, key) {
            Some(holder) => holder.open_many(count, key, lead, parts),
            None => batches::open_each(self, count, key, lead),
        }
    }

    fn contains(&self, key: &str) -> Result<bool> {
        self.holder(key).contains(key)
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        self.holder(key).value_len(key)
    }

    fn value_file(&self, key: &str) -> Result<Option<PathBuf>> {
        self.holder(key).value_file(key)
    }

    fn set_from_file(&self, key: &str, source: &Path) -> Result<()> {
        self.holder(key).set_from_file(key, source)
    }

    fn get_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        f: &Consume,
    ) -> Result<()> {
        match self.holder_of_all(count, key) {
            Some(holder) => holder.get_many(count, key, f),
            None => batches::get_each(self, count, key, f),
        }
    }

    fn set_many(&self, count: usize, produce: &Produce) -> Result<()> {
        // Chunks go to the chunk store's batches; a metadata document produced among them is
        // stored on the spot.
        let routed = |i: usize| match produce(i)? {
            Some((key, value)) if self.is_metadata(&key) => {
                match value {
                    Some(value) => self.meta.set(&key, &value)?,
                    None => self.meta.erase(&key)?,
                }
                Ok(None)
            }
            other => Ok(other),
        };
        self.chunks.set_many(count, &routed)
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        Ok(merged(
            self.meta.list_prefix(prefix)?,
            self.chunks.list_prefix(prefix)?,
        ))
    }

    fn list_prefix_sized(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        let mut all = self.meta.list_prefix_sized(prefix)?;
        all.extend(self.chunks.list_prefix_sized(prefix)?);
        all.sort();
        all.dedup_by(|a, b| a.0 == b.0);
        Ok(all)
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        Ok(merged(
            self.meta.list_dir(prefix)?,
            self.chunks.list_dir(prefix)?,
        ))
    }

    fn capabilities(&self) -> Capabilities {
        let (meta, chunks) = (self.meta.capabilities(), self.chunks.capabilities());
        Capabilities {
            batched: chunks.batched,
            listing: meta.listing && chunks.listing,
            n5: false,
        }
    }

    fn prune(&self, prefix: &str) -> Result<()> {
        self.meta.prune(prefix)?;
        self.chunks.prune(prefix)
    }

    fn request_stats(&self) -> Option<RequestStats> {
        match (self.meta.request_stats(), self.chunks.request_stats()) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        }
    }

    fn get_versioned(&self, key: &str, buf: &mut Vec<u8>) -> Result<(bool, Version)> {
        self.holder(key).get_versioned(key, buf)
    }

    fn set_if(&self, key: &str, value: Option<&[u8]>, version: &Version) -> Result<bool> {
        self.holder(key).set_if(key, value, version)
    }

    fn flush(&self) -> Result<()> {
        self.meta.flush()?;
        self.chunks.flush()
    }
}

#[cfg(test)]
mod tests {
    use crate::array::Array;
    use crate::store::{OpenMode, StoreHandle};
    use std::path::PathBuf;

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("libzarr-split-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn files(dir: &std::path::Path) -> Vec<String> {
        let mut out: Vec<String> = walk(dir)
            .iter()
            .map(|p| p.strip_prefix(dir).unwrap().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }

    fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .flat_map(|e| match e.path().is_dir() {
                true => walk(&e.path()),
                false => vec![e.path()],
            })
            .collect()
    }

    /// Node documents and consolidated metadata in the first store, chunks in the second;
    /// listings see both; overwriting empties both.
    #[test]
    fn metadata_and_chunks_go_to_their_stores() {
        let (meta, chunks) = (temp_dir("meta"), temp_dir("chunks"));
        let options = format!(r#"{{"chunk_store": {:?}}}"#, chunks.to_str().unwrap());
        let store =
            StoreHandle::open_with_options(meta.to_str().unwrap(), OpenMode::Write, Some(&options))
                .unwrap();
        let doc = r#"{"zarr_format": 2, "shape": [4, 4], "chunks": [2, 4], "dtype": "<i2",
            "compressor": null, "fill_value": 0, "filters": null}"#;
        let array = Array::create(store.clone(), "g/a", doc).unwrap();
        let values: Vec<u8> = (0..16i16).flat_map(|v| v.to_ne_bytes()).collect();
        array.write_region(&[0, 0], &[4, 4], &values).unwrap();
        array.set_attributes(r#"{"units": "m"}"#).unwrap();
        crate::consolidated::consolidate(&store).unwrap();
        assert_eq!(
            files(&meta),
            [
                ".zgroup",
                ".zmetadata",
                "g/.zgroup",
                "g/a/.zarray",
                "g/a/.zattrs"
            ]
        );
        assert_eq!(files(&chunks), ["g/a/0.0", "g/a/1.0"]);
        assert_eq!(
            store.list_prefix("g/").unwrap(),
            [
                "g/.zgroup",
                "g/a/.zarray",
                "g/a/.zattrs",
                "g/a/0.0",
                "g/a/1.0"
            ]
        );
        let mut back = vec![0u8; 32];
        Array::open(store.clone(), "g/a")
            .unwrap()
            .read_region(&[0, 0], &[4, 4], &mut back)
            .unwrap();
        assert_eq!(back, values);
        drop((array, store));
        let emptied = crate::open::open_store(
            meta.to_str().unwrap(),
            crate::store::AccessMode::Overwrite,
            Some(&options),
            crate::open::Consolidated::Use,
        )
        .unwrap();
        assert!(emptied.list_prefix("").unwrap().is_empty());
        assert!(files(&meta).is_empty() && files(&chunks).is_empty());
        for dir in [meta, chunks] {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
