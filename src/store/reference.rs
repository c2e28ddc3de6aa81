//! `reference://X`: a read-only store over a Kerchunk reference file ([`super::reference_file`]),
//! where X is a local path or the URL of any store libzarr opens (`https://host/refs.json`,
//! `s3://bucket/refs.json`). Keys held in the file are answered from it; the others are read
//! from their targets, byte range by byte range, through the stores of the targets'
//! directories (opened once each, read-only, with the option `target_options`).
//!
//! A reference file read from the network may not make the library read local files: its
//! local targets (bare paths and `file://` URLs) are refused, naming the key and the target.

use super::location::{kind_of, local_path, open_backend, StoreKind};
use super::reference_file::{parse, Reference};
use super::{Capabilities, OpenMode, Store, StoreOptions};
use crate::error::{Error, Result};
use crate::redact::redact_url;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// The scheme of reference store locations.
pub(super) const REFERENCE_SCHEME: &str = "reference://";

/// A Kerchunk reference file as a read-only store.
#[derive(Debug)]
pub struct ReferenceStore {
    /// The location as messages show it (`reference://...`, secrets hidden).
    shown: String,
    references: BTreeMap<String, Reference>,
    targets: Targets,
}

/// The stores of the targets' directories, opened as they are first needed.
#[derive(Debug)]
struct Targets {
    options: StoreOptions,
    /// Whether targets may be local files (the reference file itself is one).
    local_allowed: bool,
    opened: Mutex<HashMap<String, Arc<dyn Store>>>,
}

impl ReferenceStore {
    /// Opens `location` (`reference://X`) read-only: reads the reference file X with `options`
    /// (those of X's own back end), its targets with `target_options` (the defaults when not
    /// given).
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
        let (store, name) = file_store(file, options)?;
        let bytes = store.get(&name)?.ok_or_else(|| {
            Error::NotFound(format!("{shown}: no reference file {}", redact_url(file)))
        })?;
        Ok(ReferenceStore {
            references: parse(&bytes, &shown)?,
            shown,
            targets: Targets {
                options: target_options,
                local_allowed,
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

/// The store of the directory holding the file `file` (a path or URL), and the file's name
/// in it.
fn file_store(file: &str, options: &StoreOptions) -> Result<(Arc<dyn Store>, String)> {
    let shown = redact_url(file);
    let (dir, name) = match file.trim_end_matches('/').rsplit_once('/') {
        Some((dir, name)) if !name.is_empty() => (if dir.is_empty() { "/" } else { dir }, name),
        Some(_) => return Err(Error::InvalidPath(format!("{shown} names no file"))),
        None => (".", file),
    };
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
        let (dir, name) = match file.rsplit_once('/') {
            Some((dir, name)) => (dir.to_string(), name.to_string()),
            None => (".".to_string(), file.to_string()),
        };
        let mut opened = self.opened.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(store) = opened.get(&dir) {
            return Ok((store.clone(), name));
        }
        let (store, name) = file_store(file, &self.options)?;
        opened.insert(dir, store.clone());
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
        match self.references.get(key) {
            None => Ok(None),
            Some(reference) => self.targets.read(key, reference).map(Some),
        }
    }

    fn set(&self, key: &str, _value: &[u8]) -> Result<()> {
        Err(self.read_only(key))
    }

    fn erase(&self, key: &str) -> Result<()> {
        Err(self.read_only(key))
    }

    fn contains(&self, key: &str) -> Result<bool> {
        Ok(self.references.contains_key(key))
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        Ok(self
            .references
            .range(prefix.to_string()..)
            .map(|(key, _)| key)
            .take_while(|key| key.starts_with(prefix))
            .cloned()
            .collect())
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

    fn capabilities(&self) -> Capabilities {
        Capabilities::LOCAL
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
