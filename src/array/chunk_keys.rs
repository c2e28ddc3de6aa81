//! Chunk keys, and the separator of v2 arrays whose `.zarray` does not say it.
//!
//! zarr-python 2, xarray over it, GDAL and netCDF-C leave `dimension_separator` out, so the
//! spec's `.` applies (`1.0`); but zarr-python 2.6's `NestedDirectoryStore` wrote nested
//! chunks (`1/0`) before `.zarray` recorded the separator. Opening never lists the store to
//! tell them apart (web servers cannot list; on object stores a listing per array is slow).
//! Instead a read tries the `.` key, then, where it is missing, the `/` key, and the handle
//! remembers which form it found; a write first settles the question by listing the array's
//! keys (every writable store can), so it never adds keys of the other form.

use super::Array;
use crate::error::Result;
use crate::path;
use crate::store::Consume;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

/// The separator is the one the metadata states (or the array has at most one dimension).
const STATED: u8 = 0;
/// Not stated, and no chunk found yet: `.` keys are tried first, then `/` keys.
const UNKNOWN: u8 = 1;
/// Not stated; the chunks found have `.` keys.
const FLAT: u8 = 2;
/// Not stated; the chunks found have `/` keys.
const NESTED: u8 = 3;

/// What an array handle knows of its chunk keys' separator (see the module's doc).
#[derive(Debug)]
pub(super) struct KeySeparator(AtomicU8);

impl KeySeparator {
    /// For an array whose metadata states its separator (`stated`), or does not.
    pub(super) fn new(stated: bool) -> Self {
        KeySeparator(AtomicU8::new(if stated { STATED } else { UNKNOWN }))
    }

    fn get(&self) -> u8 {
        self.0.load(Ordering::Relaxed)
    }

    /// Records the form of a chunk key found in the store (only while it is not known; a
    /// plain load first, so that reads of a known form never write the shared state).
    fn found(&self, nested: bool) {
        if self.get() != UNKNOWN {
            return;
        }
        let form = if nested { NESTED } else { FLAT };
        let _ = self
            .0
            .compare_exchange(UNKNOWN, form, Ordering::Relaxed, Ordering::Relaxed);
    }
}

impl Array {
    /// Whether [`Array::chunk_key`] gives the form the chunks are stored under (stated, or
    /// found), so that a chunk it does not find is missing.
    pub(super) fn chunk_keys_known(&self) -> bool {
        self.key_separator.get() != UNKNOWN
    }

    /// The store key of the chunk (or shard) at grid position `coords`.
    pub fn chunk_key(&self, coords: &[u64]) -> String {
        let mut encoding = self.metadata.chunk_keys;
        if self.key_separator.get() == NESTED {
            encoding.separator = '/';
        }
        path::join(&self.path, &encoding.name(coords))
    }

    /// The chunk keys' separator as this handle knows it: the stated one or the one found;
    /// `None` while neither is known (no chunk read or written yet).
    pub fn chunk_key_separator(&self) -> Option<char> {
        match self.key_separator.get() {
            NESTED => Some('/'),
            UNKNOWN => None,
            _ => Some(self.metadata.chunk_keys.separator),
        }
    }

    /// The `/` form of the `.` chunk key `key`, where the separator is not stated and not
    /// known to be `.`; `None` otherwise.
    fn nested_form(&self, key: &str) -> Option<String> {
        if matches!(self.key_separator.get(), STATED | FLAT) {
            return None;
        }
        let name = key.strip_prefix(&path::join(&self.path, ""))?;
        name.contains('.')
            .then(|| path::join(&self.path, &name.replace('.', "/")))
    }

    /// Runs `fetch` on the chunk key `key` and, when that finds nothing and the separator is
    /// not stated, on its `/` form; remembers which form was found.
    pub(super) fn fetch_chunk<T>(
        &self,
        key: &str,
        mut fetch: impl FnMut(&str) -> Result<Option<T>>,
    ) -> Result<Option<T>> {
        if let Some(found) = fetch(key)? {
            // Still unknown: `key` was made in the `.` form.
            self.key_separator.found(false);
            return Ok(Some(found));
        }
        let Some(nested) = self.nested_form(key) else {
            return Ok(None);
        };
        let found = fetch(&nested)?;
        if found.is_some() {
            self.key_separator.found(true);
        }
        Ok(found)
    }

    /// Fetches the stored bytes of the chunks at `coords(0)`, ..., `coords(count - 1)` with
    /// many requests in flight ([`crate::store::StoreHandle::get_many`]) and runs `f(i, bytes)` for each
    /// (`None`: not stored); where the separator is not stated, those missing are fetched
    /// again in the `/` form.
    pub(super) fn get_chunks(
        &self,
        count: usize,
        coords: &(dyn Fn(usize) -> Vec<u64> + Sync),
        f: &Consume,
    ) -> Result<()> {
        if self.key_separator.get() == STATED {
            return self
                .store
                .get_many(count, &|i| self.chunk_key(&coords(i)), f);
        }
        let keys: Vec<String> = (0..count).map(|i| self.chunk_key(&coords(i))).collect();
        let again = Mutex::new(Vec::new());
        self.store
            .get_many(count, &|i| keys[i].clone(), &|i, raw| {
                if raw.is_some() {
                    // Still unknown: `keys[i]` was made in the `.` form.
                    self.key_separator.found(false);
                } else if let Some(nested) = self.nested_form(&keys[i]) {
                    again
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((i, nested));
                    return Ok(());
                }
                f(i, raw)
            })?;
        let again = again.into_inner().unwrap_or_else(|p| p.into_inner());
        if again.is_empty() {
            return Ok(());
        }
        self.store
            .get_many(again.len(), &|j| again[j].1.clone(), &|j, raw| {
                if raw.is_some() {
                    self.key_separator.found(true);
                }
                f(again[j].0, raw)
            })
    }

    /// Whether the chunk (or shard) at grid position `coords` is stored.
    pub fn chunk_is_stored(&self, coords: &[u64]) -> Result<bool> {
        let found = self.fetch_chunk(&self.chunk_key(coords), |key| {
            Ok(self.store.contains(key)?.then_some(()))
        })?;
        Ok(found.is_some())
    }

    /// Settles the separator before a write, where it is not stated and not found yet: by the
    /// names stored below the array (a name of digits alone is a subdirectory of nested
    /// chunks; a flat chunk key has a `.`), `.` when it holds no chunk.
    pub(super) fn settle_separator_for_writing(&self) -> Result<()> {
        if self.key_separator.get() != UNKNOWN {
            return Ok(());
        }
        let nested = self
            .store
            .list_dir(&path::join(&self.path, ""))?
            .iter()
            .any(|name| !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()));
        self.key_separator.found(nested);
        Ok(())
    }

    /// The grid position of the chunk (or shard) a key name below the array names (`"3.1"`,
    /// `"c/3/1"`, ...); `None` for other names. Where the separator is not stated, either
    /// form is a chunk.
    pub(super) fn chunk_coords(&self, name: &str) -> Option<Vec<u64>> {
        let encoding = self.metadata.chunk_keys;
        encoding.coords(name, self.ndim()).or_else(|| {
            let mut nested = encoding;
            nested.separator = '/';
            (self.key_separator.get() != STATED)
                .then(|| nested.coords(name, self.ndim()))
                .flatten()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::store::{MemoryStore, OpenMode, Store, StoreHandle};
    use std::sync::Arc;

    /// A memory store that cannot list, as a web server.
    #[derive(Debug, Default)]
    struct Unlistable(MemoryStore);

    impl Store for Unlistable {
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
            self.0.get(key)
        }
        fn set(&self, key: &str, value: &[u8]) -> Result<()> {
            self.0.set(key, value)
        }
        fn erase(&self, key: &str) -> Result<()> {
            self.0.erase(key)
        }
        fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
            Err(Error::Unsupported(format!("listing {prefix:?}")))
        }
        fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
            Err(Error::Unsupported(format!("listing {prefix:?}")))
        }
    }

    const SIDE: u64 = 6;

    fn values() -> Vec<u8> {
        (1..=(SIDE * SIDE) as u8).collect()
    }

    /// Writes a 6×6 `|u1` array of 4×4 chunks (compressed or not) at `path` whose `.zarray`
    /// is then stored without `dimension_separator`, its chunks under `separator` keys.
    fn write_unstated(store: &Arc<StoreHandle>, path: &str, separator: char, zlib: bool) {
        let compressor = if zlib {
            r#"{"id": "zlib", "level": 1}"#
        } else {
            "null"
        };
        let document = format!(
            r#"{{"shape": [{SIDE}, {SIDE}], "chunks": [4, 4], "dtype": "|u1", "fill_value": 0,
                "compressor": {compressor}, "dimension_separator": "{separator}"}}"#
        );
        let array = Array::create(store.clone(), path, &document).unwrap();
        array
            .write_region(&[0, 0], &[SIDE, SIDE], &values())
            .unwrap();
        let key = format!("{path}/.zarray");
        let mut zarray: serde_json::Value =
            serde_json::from_slice(&store.get(&key).unwrap().unwrap()).unwrap();
        zarray
            .as_object_mut()
            .unwrap()
            .remove("dimension_separator");
        store.set(&key, zarray.to_string().as_bytes()).unwrap();
    }

    /// Reads the whole array at `path` through a fresh handle.
    fn read_all(store: &Arc<StoreHandle>, path: &str) -> (Array, Vec<u8>) {
        let array = Array::open(store.clone(), path).unwrap();
        let mut out = vec![0u8; (SIDE * SIDE) as usize];
        array.read_region(&[0, 0], &[SIDE, SIDE], &mut out).unwrap();
        (array, out)
    }

    /// Chunks under `.` and under `/` keys both read back without a listing, whatever the
    /// read path (a chunk read whole into the buffer, cut out of a decoded one, streamed),
    /// and the handle remembers the form it found.
    #[test]
    fn reads_find_either_form_without_listing() {
        let store =
            StoreHandle::over_backend(Box::<Unlistable>::default(), "web", "web", OpenMode::Write);
        for zlib in [false, true] {
            for (path, separator) in [("flat", '.'), ("nested", '/')] {
                let path = format!("{path}-{zlib}");
                write_unstated(&store, &path, separator, zlib);
                let (array, all) = read_all(&store, &path);
                assert_eq!(all, values(), "{path}");
                assert_eq!(array.chunk_key_separator(), Some(separator), "{path}");
                assert_eq!(array.chunk_key(&[1, 0]), format!("{path}/1{separator}0"));
                let fresh = Array::open(store.clone(), &path).unwrap();
                assert_eq!(
                    fresh.chunk_key_separator(),
                    None,
                    "{path}: not known at open"
                );
                let mut corner = [0u8; 4];
                fresh.read_region(&[4, 4], &[2, 2], &mut corner).unwrap();
                assert_eq!(corner, [29, 30, 35, 36], "{path}: an edge chunk");
                assert!(fresh.chunk_is_stored(&[1, 1]).unwrap(), "{path}");
                assert_eq!(fresh.chunk_key_separator(), Some(separator), "{path}");
            }
        }
    }

    /// A write into an array whose separator is not stated adds keys of the form stored
    /// (found by listing the array's keys); into one holding no chunk yet, `.` keys.
    #[test]
    fn writes_add_keys_of_the_form_stored() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        write_unstated(&store, "nested", '/', true);
        store.erase("nested/1/1").unwrap();
        let array = Array::open(store.clone(), "nested").unwrap();
        array.write_region(&[5, 5], &[1, 1], &[99]).unwrap();
        assert!(store.contains("nested/1/1").unwrap());
        assert!(!store.contains("nested/1.1").unwrap());

        write_unstated(&store, "empty", '/', true);
        for key in ["empty/0/0", "empty/0/1", "empty/1/0", "empty/1/1"] {
            store.erase(key).unwrap();
        }
        let array = Array::open(store.clone(), "empty").unwrap();
        array.write_region(&[0, 0], &[1, 1], &[7]).unwrap();
        assert!(store.contains("empty/0.0").unwrap());
        assert_eq!(array.chunk_key_separator(), Some('.'));
        let (_, all) = read_all(&store, "empty");
        assert_eq!(all[0], 7);
    }
}
