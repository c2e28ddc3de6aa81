//! `reference://X`: a read-only store over Kerchunk references, a JSON file
//! ([`super::reference_file`]) or a Parquet directory (`reference_parquet.rs`), where X is a
//! local path or the URL of any store libzarr opens (`https://host/refs.json`,
//! `s3://bucket/refs.json`). Values held in the references are answered from them; the others
//! are read from their targets, byte range by byte range, through the stores of the targets'
//! directories (opened once each, read-only, with the option `target_options`).
//!
//! A reference file read from the network may not make the library read local files: its
//! local targets (bare paths and `file://` URLs) are refused, naming the key and the target.

use super::location::{kind_of, local_path, open_backend, StoreKind};
use super::reference_file::{parse, Reference};
use super::{Capabilities, Consume, OpenMode, RequestStats, Store, StoreOptions};
use crate::error::{Error, Result};
use crate::redact::redact_url;
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// The scheme of reference store locations.
pub(super) const REFERENCE_SCHEME: &str = "reference://";

/// A Kerchunk reference file as a read-only store.
#[derive(Debug)]
pub struct ReferenceStore {
    /// The location as messages show it (`reference://...`, secrets hidden).
    shown: String,
    index: Index,
    targets: Targets,
    /// The store the reference file was read from (its requests count with the targets').
    file_store: Arc<dyn Store>,
}

/// Where a reference store finds its references.
#[derive(Debug)]
enum Index {
    /// A JSON reference file, read whole.
    Json(BTreeMap<String, Reference>),
    /// A Parquet reference directory, its record files read as they are needed.
    #[cfg(feature = "parquet")]
    Parquet(super::reference_parquet::ParquetIndex),
}

impl Index {
    /// The reference of `key`, if any: borrowed from a JSON file, made from a Parquet row.
    fn get(&self, key: &str) -> Result<Option<Cow<'_, Reference>>> {
        match self {
            Index::Json(references) => Ok(references.get(key).map(Cow::Borrowed)),
            #[cfg(feature = "parquet")]
            Index::Parquet(index) => Ok(index.get(key)?.map(Cow::Owned)),
        }
    }

    /// Every key that starts with `prefix`, sorted.
    fn keys_below(&self, prefix: &str) -> Result<Vec<String>> {
        match self {
            Index::Json(references) => Ok(references
                .range(prefix.to_string()..)
                .map(|(key, _)| key)
                .take_while(|key| key.starts_with(prefix))
                .cloned()
                .collect()),
            #[cfg(feature = "parquet")]
            Index::Parquet(index) => index.keys_below(prefix),
        }
    }
}

/// The stores of the targets' directories, opened as they are first needed.
#[derive(Debug)]
struct Targets {
    options: StoreOptions,
    /// Whether targets may be local files (the reference file itself is one).
    local_allowed: bool,
    /// Whether some target is on the network.
    any_remote: bool,
    opened: Mutex<HashMap<String, Arc<dyn Store>>>,
}

impl ReferenceStore {
    /// Opens `location` (`reference://X`) read-only: reads the reference file X, or the
    /// `.zmetadata` of the Parquet reference directory X, with `options` (those of X's own
    /// back end), the targets with `target_options` (the defaults when not given).
    pub fn open(
        location: &str,
        mode: OpenMode,
        options: &StoreOptions,
        target_options: StoreOptions,
    ) -> Result<ReferenceStore> {
        let shown = redact_url(location).into_owned();
        if mode != OpenMode::Read {
            return Err(Error::ReadOnly(format!(
                "{shown}: Kerchunk references are read-only (open them with mode \"r\")"
            )));
        }
        let file = local_path(
            location
                .strip_prefix(REFERENCE_SCHEME)
                .expect("a reference location"),
        );
        let local_allowed = kind_of(file) != StoreKind::Remote;
        let (store, index) = open_index(file, options)?;
        let any_remote = match &index {
            Index::Json(references) => references.values().any(|r| match r {
                Reference::Whole(url) | Reference::Range { url, .. } => {
                    kind_of(local_path(url)) == StoreKind::Remote
                }
                Reference::Inline(_) => false,
            }),
            // Not known before the record files are read: batches serve local targets too.
            #[cfg(feature = "parquet")]
            Index::Parquet(_) => true,
        };
        Ok(ReferenceStore {
            index,
            shown,
            file_store: store,
            targets: Targets {
                options: target_options,
                local_allowed,
                any_remote,
                opened: Mutex::new(HashMap::new()),
            },
        })
    }

    fn read_only(&self, key: &str) -> Error {
        Error::ReadOnly(format!(
            "writing {key:?} to {}: Kerchunk references are read-only",
            self.shown
        ))
    }
}

/// The store X's references are read from, and the references: a JSON file X, or a Parquet
/// reference directory X: a local directory, a URL ending in `/`, or a URL where no JSON file
/// can be read but `X/.zmetadata` can (a web server may answer a directory's URL with a
/// redirection and a refusal).
fn open_index(file: &str, options: &StoreOptions) -> Result<(Arc<dyn Store>, Index)> {
    let shown = redact_url(file).into_owned();
    let remote = kind_of(file) == StoreKind::Remote;
    let directory = file.ends_with('/') || (!remote && std::path::Path::new(file).is_dir());
    if directory {
        return parquet_index(file, &shown, options);
    }
    let (store, name) = file_store(file, options)?;
    let failure = match store.get(&name) {
        Ok(Some(bytes)) => {
            let references = parse(&bytes, &format!("{REFERENCE_SCHEME}{shown}"))?;
            return Ok((store, Index::Json(references)));
        }
        Ok(None) => Error::NotFound(format!("no reference file {shown}")),
        Err(e) => e,
    };
    if !remote {
        return Err(failure);
    }
    match parquet_index(file, &shown, options) {
        Err(Error::NotFound(_)) => Err(failure),
        other => other,
    }
}

/// The Parquet reference directory `dir` (shown as `shown`).
#[cfg(feature = "parquet")]
fn parquet_index(
    dir: &str,
    shown: &str,
    options: &StoreOptions,
) -> Result<(Arc<dyn Store>, Index)> {
    let dir = dir.trim_end_matches('/');
    let (store, _) = open_backend(dir, shown, OpenMode::Read, options)?;
    let store: Arc<dyn Store> = Arc::from(store);
    match super::reference_parquet::ParquetIndex::open(store.clone(), shown)? {
        Some(index) => Ok((store, Index::Parquet(index))),
        None => Err(Error::NotFound(format!(
            "no reference file {shown}, nor a Parquet reference directory (with .zmetadata)"
        ))),
    }
}

/// Without the `parquet` feature: Parquet reference directories are refused.
#[cfg(not(feature = "parquet"))]
fn parquet_index(_: &str, shown: &str, _: &StoreOptions) -> Result<(Arc<dyn Store>, Index)> {
    Err(Error::Unsupported(format!(
        "{shown}: no reference file there, and this libzarr was built without Kerchunk's Parquet references (cargo feature \"parquet\", CMake option LIBZARR_PARQUET=ON)"
    )))
}

/// The store of the directory holding the file `file` (a path or URL), and the file's name
/// in it.
fn file_store(file: &str, options: &StoreOptions) -> Result<(Arc<dyn Store>, String)> {
    let shown = redact_url(file);
    let (dir, name) = split_file(file)?;
    // Only a directory holds files here: anything else the path names (a .zip, an N5
    // container) is read as the directory it is in.
    let kind = kind_of(dir);
    if !matches!(kind, StoreKind::Directory | StoreKind::Remote) {
        return Err(Error::InvalidPath(format!(
            "{shown}: a referenced file must be a local file or a URL (its directory is a {} store)",
            kind.name()
        )));
    }
    let dir_shown = redact_url(dir).into_owned();
    let (store, _) = open_backend(dir, &dir_shown, OpenMode::Read, options)?;
    Ok((Arc::from(store), name.to_string()))
}

/// The directory of the file `file` (a path or URL) and its name there.
fn split_file(file: &str) -> Result<(&str, &str)> {
    match file.trim_end_matches('/').rsplit_once('/') {
        Some((dir, name)) if !name.is_empty() => Ok((if dir.is_empty() { "/" } else { dir }, name)),
        Some(_) => Err(Error::InvalidPath(format!(
            "{} names no file",
            redact_url(file)
        ))),
        None => Ok((".", file)),
    }
}

impl Targets {
    /// The store of `url`'s directory and the file's name in it.
    fn open(&self, url: &str) -> Result<(Arc<dyn Store>, String)> {
        let file = local_path(url);
        if kind_of(file) != StoreKind::Remote && !self.local_allowed {
            return Err(Error::PermissionDenied(
                "a reference file read from the network may not make libzarr read local files"
                    .into(),
            ));
        }
        let (dir, name) = split_file(file)?;
        let mut opened = self.opened.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(store) = opened.get(dir) {
            return Ok((store.clone(), name.to_string()));
        }
        let (store, name) = file_store(file, &self.options)?;
        opened.insert(dir.to_string(), store.clone());
        Ok((store, name))
    }

    /// The bytes `reference` names, for the value of `key`.
    fn read(&self, key: &str, reference: &Reference) -> Result<Vec<u8>> {
        let (url, range) = match reference {
            Reference::Inline(bytes) => return Ok(bytes.clone()),
            Reference::Whole(url) => (url, None),
            Reference::Range {
                url,
                offset,
                length,
            } => (url, Some((*offset, *length))),
        };
        let context = || format!("{key:?} (in {})", redact_url(url));
        let (store, name) = self.open(url).map_err(|e| e.context(context()))?;
        let value = match range {
            None => store.get(&name),
            Some((offset, length)) => store.get_range(&name, offset, length),
        };
        value
            .map_err(|e| e.context(context()))?
            .ok_or_else(|| Error::NotFound(format!("{}: the file does not exist", context())))
    }
}

impl Store for ReferenceStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match self.index.get(key)? {
            None => Ok(None),
            Some(Cow::Owned(Reference::Inline(bytes))) => Ok(Some(bytes)),
            Some(reference) => self.targets.read(key, &reference).map(Some),
        }
    }

    fn set(&self, key: &str, _value: &[u8]) -> Result<()> {
        Err(self.read_only(key))
    }

    fn erase(&self, key: &str) -> Result<()> {
        Err(self.read_only(key))
    }

    fn contains(&self, key: &str) -> Result<bool> {
        Ok(self.index.get(key)?.is_some())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.index.keys_below(prefix)
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        let mut names: Vec<String> = self
            .list_prefix(prefix)?
            .iter()
            .filter_map(|key| key[prefix.len()..].split('/').next().map(str::to_string))
            .collect();
        names.dedup();
        Ok(names)
    }

    /// Inline values and missing keys at once; the ranges of each target file in batches of
    /// neighbours ([`Store::get_ranges`]: merged into few requests on a remote store), the
    /// batches on the thread pool.
    fn get_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        f: &Consume,
    ) -> Result<()> {
        let keys: Vec<String> = (0..count).map(key).collect();
        let references: Vec<Option<Cow<Reference>>> = keys
            .iter()
            .map(|key| self.index.get(key))
            .collect::<Result<_>>()?;
        let mut batches: Vec<Batch> = Vec::new();
        let mut by_target: BTreeMap<&str, Vec<(usize, u64, u64)>> = BTreeMap::new();
        for (i, reference) in references.iter().enumerate() {
            match reference.as_deref() {
                None => f(i, None)?,
                Some(Reference::Inline(bytes)) => f(i, Some(bytes))?,
                Some(reference @ Reference::Whole(url)) => batches.push(Batch {
                    url,
                    parts: vec![(i, 0, 0)],
                    whole: Some(reference),
                }),
                Some(Reference::Range {
                    url,
                    offset,
                    length,
                }) => by_target
                    .entry(url)
                    .or_default()
                    .push((i, *offset, *length)),
            }
        }
        for (url, mut parts) in by_target {
            parts.sort_unstable_by_key(|&(_, offset, _)| offset);
            let mut batch = Batch::new(url);
            let mut bytes = 0;
            for part in parts {
                if batch.parts.len() == BATCH_PARTS || bytes + part.2 > BATCH_BYTES {
                    batches.push(std::mem::replace(&mut batch, Batch::new(url)));
                    bytes = 0;
                }
                bytes += part.2;
                batch.parts.push(part);
            }
            batches.push(batch);
        }
        crate::parallel::run(|| {
            batches
                .into_par_iter()
                .try_for_each(|batch| batch.fetch(self, &keys, &references, f))
        })
    }

    /// The requests of the reference file's store and of the targets' stores, summed (`None`
    /// when all are local).
    fn request_stats(&self) -> Option<RequestStats> {
        let opened = self
            .targets
            .opened
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let own = self.file_store.request_stats();
        let counted = own.is_some() || self.targets.any_remote;
        let sum = std::iter::once(&self.file_store)
            .chain(opened.values())
            .filter_map(|store| store.request_stats())
            .fold(RequestStats::default(), |a, b| a + b);
        counted.then_some(sum)
    }

    fn capabilities(&self) -> Capabilities {
        // Batches where a target is remote: their ranges go together.
        Capabilities {
            batched: self.targets.any_remote,
            ..Capabilities::LOCAL
        }
    }
}

/// At most this many parts, and bytes, in one batch of a target's ranges.
const BATCH_PARTS: usize = 256;
const BATCH_BYTES: u64 = 64 << 20;

/// Values read from one target file together: ranges of it (`(index, offset, length)`), or
/// the whole file.
struct Batch<'r> {
    url: &'r str,
    parts: Vec<(usize, u64, u64)>,
    whole: Option<&'r Reference>,
}

impl<'r> Batch<'r> {
    fn new(url: &'r str) -> Self {
        Batch {
            url,
            parts: Vec::new(),
            whole: None,
        }
    }

    /// Reads the batch and hands each value to `f`. When a batch of ranges fails, its keys
    /// are read one by one, so that the error names the key that fails.
    fn fetch(
        &self,
        store: &ReferenceStore,
        keys: &[String],
        references: &[Option<Cow<Reference>>],
        f: &Consume,
    ) -> Result<()> {
        if let Some(whole) = self.whole {
            let i = self.parts[0].0;
            return f(i, Some(&store.targets.read(&keys[i], whole)?));
        }
        let ranges: Vec<(u64, u64)> = self.parts.iter().map(|&(_, o, l)| (o, l)).collect();
        let got = store.targets.open(self.url).and_then(|(target, name)| {
            target
                .get_ranges(&name, &ranges)?
                .ok_or_else(|| Error::NotFound("the file does not exist".into()))
        });
        let values = match got {
            Ok(values) => values,
            Err(e) => {
                for &(i, _, _) in &self.parts {
                    if let Some(reference) = &references[i] {
                        store.targets.read(&keys[i], reference)?;
                    }
                }
                let first = &keys[self.parts[0].0];
                return Err(e.context(format!("{first:?} (in {})", redact_url(self.url))));
            }
        };
        self.parts
            .par_iter()
            .zip(values.par_iter())
            .try_for_each(|(&(i, _, _), value)| f(i, Some(value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new directory for test `tag`.
    fn temp_dir(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("libzarr-refs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A reference file in `dir` over the target file `data.bin` (bytes 0..=255) beside it.
    fn setup(dir: &std::path::Path, refs: &str) -> String {
        std::fs::write(dir.join("data.bin"), (0..=255u8).collect::<Vec<_>>()).unwrap();
        let refs = refs.replace("DIR", &dir.to_string_lossy());
        std::fs::write(dir.join("refs.json"), refs).unwrap();
        format!("reference://{}/refs.json", dir.display())
    }

    fn open(location: &str) -> Result<ReferenceStore> {
        let defaults = StoreOptions::default();
        ReferenceStore::open(location, OpenMode::Read, &defaults, StoreOptions::default())
    }

    #[test]
    fn answers_inline_values_and_ranges_of_local_targets() {
        let dir = temp_dir("inline");
        let location = setup(
            dir.as_path(),
            r#"{"version": 1, "templates": {"u": "file://DIR/data.bin"}, "refs": {".zgroup": "{\"zarr_format\": 2}", "a/0": ["{{u}}", 10, 3], "a/1": ["DIR/data.bin"], "a/2": "base64:/w=="}}"#,
        );
        let store = open(&location).unwrap();
        assert_eq!(
            store.get(".zgroup").unwrap().unwrap(),
            br#"{"zarr_format": 2}"#
        );
        assert_eq!(store.get("a/0").unwrap().unwrap(), vec![10, 11, 12]);
        assert_eq!(store.get("a/1").unwrap().unwrap().len(), 256);
        assert_eq!(store.get("a/2").unwrap().unwrap(), vec![255]);
        assert_eq!(store.get("a/3").unwrap(), None);
        assert_eq!(store.list_dir("").unwrap(), vec![".zgroup", "a"]);
        assert_eq!(store.list_prefix("a/").unwrap(), vec!["a/0", "a/1", "a/2"]);
        assert!(matches!(store.set("a/0", b"x"), Err(Error::ReadOnly(_))));
        let writing = ReferenceStore::open(
            &location,
            OpenMode::Write,
            &StoreOptions::default(),
            StoreOptions::default(),
        );
        assert!(matches!(writing, Err(Error::ReadOnly(m)) if m.contains("read-only")));
    }

    #[test]
    fn batches_give_every_value_and_name_the_key_that_fails() {
        let dir = temp_dir("batches");
        let mut refs: Vec<String> = (0..300)
            .map(|i| format!("\"a/{i}\": [\"DIR/data.bin\", {}, 2]", (i * 7) % 250))
            .collect();
        refs.push(r#""a/300": "base64:/w==", "a/301": ["DIR/data.bin"]"#.into());
        let location = setup(dir.as_path(), &format!("{{{}}}", refs.join(", ")));
        let store = open(&location).unwrap();
        let got = Mutex::new(vec![None; 303]);
        let key = |i: usize| format!("a/{i}");
        store
            .get_many(303, &key, &|i, value| {
                got.lock().unwrap()[i] = Some(value.map(<[u8]>::to_vec));
                Ok(())
            })
            .unwrap();
        let got = got.into_inner().unwrap();
        for (i, value) in got.iter().enumerate().take(300) {
            let at = ((i * 7) % 250) as u8;
            assert_eq!(value, &Some(Some(vec![at, at + 1])), "a/{i}");
        }
        assert_eq!(got[300], Some(Some(vec![255])));
        assert_eq!(got[301].as_ref().unwrap().as_ref().unwrap().len(), 256);
        assert_eq!(got[302], Some(None));
        let bad = setup(
            dir.as_path(),
            r#"{"a/0": ["DIR/data.bin", 0, 2], "a/1": ["DIR/data.bin", 255, 2]}"#,
        );
        let e = open(&bad)
            .unwrap()
            .get_many(2, &key, &|_, _| Ok(()))
            .unwrap_err();
        assert!(e.to_string().contains("\"a/1\" (in "), "{e}");
    }

    #[test]
    fn a_missing_target_or_a_range_past_its_end_names_the_key_and_the_target() {
        let dir = temp_dir("missing");
        let location = setup(
            dir.as_path(),
            r#"{"a/0": ["DIR/gone.bin", 0, 4], "a/1": ["DIR/data.bin", 250, 10], "a/2": ["DIR/nodir/x.bin"]}"#,
        );
        let store = open(&location).unwrap();
        for (key, words) in [("a/0", "gone.bin"), ("a/1", "data.bin"), ("a/2", "x.bin")] {
            let e = store.get(key).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains(words), "{key}: {e}");
        }
    }

    #[test]
    fn options_go_to_the_reference_files_store_and_target_options_to_the_targets() {
        use crate::store::StoreHandle;
        let dir = temp_dir("options");
        let location = setup(dir.as_path(), r#"{"a/0": ["DIR/data.bin", 1, 2]}"#);
        let open = |options: &str| {
            StoreHandle::open_with_options(&location, OpenMode::Read, Some(options))
        };
        let store = open(r#"{"target_options": {"fsync": true}}"#).unwrap();
        assert_eq!(store.get("a/0").unwrap().unwrap(), vec![1, 2]);
        for (options, words) in [
            (r#"{"endpoint": "http://127.0.0.1:1"}"#, "\"endpoint\""),
            (r#"{"target_options": 3}"#, "target_options"),
            (r#"{"target_options": {"colour": 1}}"#, "\"colour\""),
        ] {
            let e = open(options).unwrap_err().to_string();
            assert!(e.contains(words), "{options}: {e}");
        }
        let plain = dir.join("plain.zarr").to_string_lossy().into_owned();
        let e = StoreHandle::open_with_options(
            &plain,
            OpenMode::Write,
            Some(r#"{"target_options": {}}"#),
        );
        assert!(e.unwrap_err().to_string().contains("target_options"));
    }

    #[test]
    fn a_missing_or_damaged_reference_file_is_a_clear_error() {
        let dir = temp_dir("damaged");
        let missing = format!("reference://{}/none.json", dir.as_path().display());
        assert!(matches!(open(&missing), Err(Error::NotFound(m)) if m.contains("none.json")));
        let location = setup(dir.as_path(), "{\"a/0\": 7}");
        let e = open(&location).unwrap_err().to_string();
        assert!(e.contains("refs.json") && e.contains("\"a/0\""), "{e}");
    }
}
