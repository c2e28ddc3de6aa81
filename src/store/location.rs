//! The location registry: which backend a location names (its scheme, or the form of a
//! path), and where a local store keeps its keys.

use super::reference::REFERENCE_SCHEME;
#[cfg(feature = "dbm")]
use super::DbmStore;
#[cfg(feature = "lmdb")]
use super::LmdbStore;
#[cfg(feature = "n5")]
use super::N5Store;
#[cfg(feature = "redis")]
use super::RedisStore;
#[cfg(feature = "remote")]
use super::RemoteStore;
#[cfg(feature = "sqlite")]
use super::SqliteStore;
#[cfg(feature = "zip")]
use super::ZipStore;
use super::{Backend, DirectoryStore, MemoryStore, OpenMode, ReferenceStore, Store, StoreOptions};
use crate::error::Result;
use std::path::Path;

/// The back end of each remote URL scheme.
pub(super) const REMOTE_SCHEMES: [(&str, Backend); 8] = [
    ("s3://", Backend::S3),
    ("az://", Backend::Azure),
    ("azure://", Backend::Azure),
    ("abfs://", Backend::Azure),
    ("abfss://", Backend::Azure),
    ("gs://", Backend::Gcs),
    ("http://", Backend::Http),
    ("https://", Backend::Http),
];

/// The remote back end `location` names by its scheme, if any.
fn remote_backend(location: &str) -> Option<Backend> {
    REMOTE_SCHEMES
        .iter()
        .find(|(scheme, _)| location.starts_with(scheme))
        .map(|(_, backend)| *backend)
}

/// The back end that serves `location` (after [`local_path`]), built or not.
pub fn backend_of(location: &str) -> Backend {
    match kind_of(location) {
        StoreKind::Directory | StoreKind::Caller => Backend::Directory,
        StoreKind::Zip => Backend::Zip,
        StoreKind::Memory => Backend::Memory,
        StoreKind::Remote => remote_backend(location).expect("a remote scheme"),
        StoreKind::N5 => Backend::N5,
        StoreKind::Dbm => Backend::Dbm,
        StoreKind::Redis => Backend::Redis,
        StoreKind::Sqlite => Backend::Sqlite,
        StoreKind::Lmdb => Backend::Lmdb,
        StoreKind::Reference => Backend::Reference,
    }
}

/// Which backend a store uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// A directory of files ([`DirectoryStore`]).
    Directory,
    /// A zip archive ([`ZipStore`]).
    Zip,
    /// Memory ([`MemoryStore`]).
    Memory,
    /// An S3-compatible bucket or a web server ([`RemoteStore`]).
    Remote,
    /// A backend of the caller's own ([`StoreHandle::over_backend`]), such as a C program's
    /// callbacks.
    Caller,
    /// An N5 container in a directory ([`N5Store`]).
    N5,
    /// A database of Python's `dbm` module ([`DbmStore`]).
    Dbm,
    /// A Redis database ([`RedisStore`]).
    Redis,
    /// An SQLite database file ([`SqliteStore`]).
    Sqlite,
    /// An LMDB environment directory ([`LmdbStore`]).
    Lmdb,
    /// Kerchunk references ([`ReferenceStore`]).
    Reference,
}

impl StoreKind {
    /// `"directory"`, `"zip"`, `"memory"`, `"remote"`, `"caller"`, `"n5"`, `"dbm"`, `"redis"`,
    /// `"sqlite"`, `"lmdb"` or `"reference"`.
    pub fn name(self) -> &'static str {
        match self {
            StoreKind::Directory => "directory",
            StoreKind::Zip => "zip",
            StoreKind::Memory => "memory",
            StoreKind::Remote => "remote",
            StoreKind::Caller => "caller",
            StoreKind::N5 => "n5",
            StoreKind::Dbm => "dbm",
            StoreKind::Redis => "redis",
            StoreKind::Sqlite => "sqlite",
            StoreKind::Lmdb => "lmdb",
            StoreKind::Reference => "reference",
        }
    }
}

/// The scheme of SQLite store locations (`sqlite://PATH`).
pub(super) const SQLITE_SCHEME: &str = "sqlite://";

/// The scheme of LMDB store locations (`lmdb://PATH`).
pub(super) const LMDB_SCHEME: &str = "lmdb://";

/// The file or directory where the store at `location` (after [`local_path`]) keeps its keys:
/// a directory, zip, N5, SQLite or LMDB path without its scheme; `None` for the stores that
/// keep them elsewhere (memory, a server) or in several files (dbm).
pub fn local_file(location: &str) -> Option<&str> {
    match kind_of(location) {
        StoreKind::Directory | StoreKind::Zip => Some(location),
        StoreKind::N5 => n5_directory(location),
        StoreKind::Sqlite => location.strip_prefix(SQLITE_SCHEME),
        StoreKind::Lmdb => location.strip_prefix(LMDB_SCHEME),
        _ => None,
    }
}

/// A location without the `file://` that may precede a local path.
pub fn local_path(location: &str) -> &str {
    location.strip_prefix("file://").unwrap_or(location)
}

/// Which backend [`StoreHandle::open`] uses for `location` (after [`local_path`]): `memory:`,
/// `dbm://`, `redis://`, `sqlite://`, `lmdb://`, `reference://`, a remote URL, an N5 container ([`n5_directory`]), a path ending in `.zip` that is not an
/// existing directory, or a directory.
pub fn kind_of(location: &str) -> StoreKind {
    if location == "memory:" {
        StoreKind::Memory
    } else if location.starts_with("dbm://") {
        StoreKind::Dbm
    } else if location.starts_with("redis://") || location.starts_with("rediss://") {
        StoreKind::Redis
    } else if location.starts_with(SQLITE_SCHEME) {
        StoreKind::Sqlite
    } else if location.starts_with(LMDB_SCHEME) {
        StoreKind::Lmdb
    } else if location.starts_with(REFERENCE_SCHEME) {
        StoreKind::Reference
    } else if remote_backend(location).is_some() {
        StoreKind::Remote
    } else if n5_directory(location).is_some() {
        StoreKind::N5
    } else if location.ends_with(".zip") && !std::path::Path::new(location).is_dir() {
        StoreKind::Zip
    } else {
        StoreKind::Directory
    }
}

/// The directory of an N5 container: `n5://PATH`, or a path ending in `.n5` (as
/// zarr-python 2's `zarr.open` chooses its `N5Store`).
pub fn n5_directory(location: &str) -> Option<&str> {
    location.strip_prefix("n5://").or_else(|| {
        location
            .trim_end_matches('/')
            .ends_with(".n5")
            .then_some(location)
    })
}

/// The canonical form of the file or directory `path` (of its directory when the file does not
/// exist yet, as a database's name; `path` itself when neither exists).
pub(super) fn canonical_file(path: &str) -> String {
    let path = Path::new(path);
    if let Ok(full) = std::fs::canonicalize(path) {
        return full.to_string_lossy().into_owned();
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(dir), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name).to_string_lossy().into_owned(),
        _ => path.to_string_lossy().into_owned(),
    }
}

/// Opens the backend `location` (after [`local_path`]; `shown` is the location as messages
/// show it) names, with the options its backend reads, and what names its keys for the chunk
/// locks where the location alone does not (a dbm database's file, a Redis prefix).
pub(super) fn open_backend(
    location: &str,
    shown: &str,
    mode: OpenMode,
    options: &StoreOptions,
) -> Result<(Box<dyn Store>, Option<String>)> {
    // What names the store's keys for the chunk locks, where the location alone does not.
    #[allow(unused_mut)] // set by the dbm and redis stores, when built
    let mut scope = None;
    let serving = backend_of(location);
    if !serving.built() {
        return Err(serving.not_built(shown));
    }
    let backend: Box<dyn Store> = match kind_of(location) {
        StoreKind::Memory => {
            options.check_backend(Backend::Memory, location)?;
            Box::new(MemoryStore::default())
        }
        #[cfg(feature = "dbm")]
        StoreKind::Dbm => {
            options.check_backend(Backend::Dbm, location)?;
            let path = location.strip_prefix("dbm://").expect("a dbm location");
            let store = DbmStore::open(location, path, mode, options.dbm_format, options.fsync)?;
            scope = Some(format!("dbm:{}", store.canonical_path()));
            Box::new(store)
        }
        #[cfg(feature = "redis")]
        StoreKind::Redis => {
            options.check_backend(Backend::Redis, shown)?;
            let store = RedisStore::open(location, options)?;
            scope = Some(format!("{shown}#{}", store.key_prefix()));
            Box::new(store)
        }
        #[cfg(feature = "sqlite")]
        StoreKind::Sqlite => {
            options.check_backend(Backend::Sqlite, location)?;
            let file = local_file(location).expect("an SQLite location");
            Box::new(SqliteStore::open(file, mode, options.fsync)?)
        }
        #[cfg(feature = "lmdb")]
        StoreKind::Lmdb => {
            options.check_backend(Backend::Lmdb, location)?;
            let dir = local_file(location).expect("an LMDB location");
            Box::new(LmdbStore::open(dir, mode, options.fsync)?)
        }
        #[cfg(feature = "remote")]
        StoreKind::Remote => Box::new(RemoteStore::open(location, mode, options)?),
        #[cfg(feature = "n5")]
        StoreKind::N5 => {
            options.check_backend(Backend::N5, location)?;
            let dir = n5_directory(location).expect("an N5 location");
            let directory = DirectoryStore::open(dir, mode, options.fsync)?;
            Box::new(N5Store::new(Box::new(directory)))
        }
        #[cfg(feature = "zip")]
        StoreKind::Zip => {
            options.check_backend(Backend::Zip, location)?;
            Box::new(ZipStore::open(
                location,
                mode,
                options.zip_compression,
                options.fsync,
            )?)
        }
        StoreKind::Reference => {
            // The other options are the reference file's own store's.
            let file = location.strip_prefix(REFERENCE_SCHEME).unwrap_or(location);
            let mut own = options.clone();
            own.given.retain(|name| name != "target_options");
            own.check_backend(backend_of(local_path(file)), shown)?;
            let targets = options
                .target_options
                .as_deref()
                .cloned()
                .unwrap_or_default();
            Box::new(ReferenceStore::open(location, mode, &own, targets)?)
        }
        StoreKind::Directory | StoreKind::Caller => {
            options.check_backend(Backend::Directory, location)?;
            Box::new(
                DirectoryStore::open(location, mode, options.fsync)?
                    .normalizing_keys(options.normalize_keys),
            )
        }
        #[allow(unreachable_patterns)] // with every back end built
        _ => unreachable!("{serving:?} is built (checked above) and matched"),
    };
    Ok((backend, scope))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::store::{OpenMode, StoreHandle};

    /// Each location names its back end; one this build left out is refused naming the
    /// cargo feature and the CMake option that bring it (the minimal build's CI run checks
    /// them all).
    #[test]
    fn locations_name_their_back_end_and_a_left_out_one_is_unsupported() {
        let dir = std::env::temp_dir().join(format!("libzarr-backends-{}", std::process::id()));
        let at = |name: &str| dir.join(name).to_string_lossy().into_owned();
        let locations = [
            (at("d.zarr"), Backend::Directory),
            ("memory:".to_string(), Backend::Memory),
            (at("a.zip"), Backend::Zip),
            ("s3://bucket/p".to_string(), Backend::S3),
            ("az://container/p".to_string(), Backend::Azure),
            ("gs://bucket/p".to_string(), Backend::Gcs),
            ("http://127.0.0.1:1/x".to_string(), Backend::Http),
            (format!("n5://{}", at("c.n5")), Backend::N5),
            (format!("dbm://{}", at("db")), Backend::Dbm),
            ("redis://127.0.0.1:1/0".to_string(), Backend::Redis),
            (format!("sqlite://{}", at("s.db")), Backend::Sqlite),
            (format!("lmdb://{}", at("l")), Backend::Lmdb),
            (format!("reference://{}", at("r.json")), Backend::Reference),
        ];
        for (location, backend) in &locations {
            assert_eq!(backend_of(location), *backend, "{location}");
            if backend.built() {
                continue;
            }
            match StoreHandle::open(location, OpenMode::Write) {
                Err(Error::Unsupported(m)) => assert!(
                    m.contains(&format!("cargo feature \"{}\"", backend.name()))
                        && m.contains("CMake option LIBZARR_"),
                    "{m}"
                ),
                other => panic!("{location}: {other:?}"),
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
