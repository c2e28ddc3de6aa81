//! Key/value stores behind one trait, and the [`StoreHandle`] that arrays and groups share.

use crate::error::{Error, Result};
use crate::metadata::ZARR_JSON;
use crate::path;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

mod access_mode;
mod aws_profile;
mod azure;
mod capabilities;
mod dbm;
mod directory;
mod gcs;
mod lmdb;
mod memory;
mod n5;
mod options;
#[cfg(test)]
mod power_loss;
mod process_lock;
mod redis;
mod remote;
mod request_stats;
mod s3;
mod sorted_keys;
mod sqlite;
mod zip;

pub use access_mode::AccessMode;
pub use capabilities::Capabilities;
pub use dbm::{DbmFormat, DbmStore};
pub use directory::DirectoryStore;
pub use lmdb::LmdbStore;
pub use memory::MemoryStore;
pub use n5::N5Store;
pub use options::{Backend, StoreOptions};
use process_lock::{KeyLock, ProcessLocks};
pub use redis::RedisStore;
pub use remote::RemoteStore;
pub use request_stats::RequestStats;
pub use sqlite::SqliteStore;
pub use zip::{ZipCompression, ZipStore};

/// A key/value store. Keys are `/`-separated (see [`crate::path::validate_key`]); prefixes are
/// empty or end with `/`. Implementations must be safe to use from several threads at once.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// The value under `key`, or `None` if there is none.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    /// Reads the value under `key` into `buf` (replacing its contents, reusing its capacity);
    /// `false` if there is none.
    fn get_into(&self, key: &str, buf: &mut Vec<u8>) -> Result<bool> {
        buf.clear();
        Ok(self.get(key)?.map(|v| buf.extend_from_slice(&v)).is_some())
    }
    /// Stores `value` under `key`, replacing any previous value atomically.
    fn set(&self, key: &str, value: &[u8]) -> Result<()>;
    /// Removes `key`; removing a missing key is not an error.
    fn erase(&self, key: &str) -> Result<()>;
    /// Opens the value under `key` for reading parts of it; `None` if there is none. Lets
    /// callers read a value piece by piece straight into its final place.
    fn open_value(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        Ok(self.get(key)?.map(|v| Box::new(v) as Box<dyn ValueReader>))
    }
    /// [`Store::open_value`] for a value whose caller reads its last `tail` bytes first (a
    /// shard's index; 0: no hint): a store on a network fetches those with the value's
    /// length.
    fn open_value_tail(&self, key: &str, tail: u64) -> Result<Option<Box<dyn ValueReader + '_>>> {
        let _ = tail;
        self.open_value(key)
    }
    /// Opens the values under `key(0)`, ..., `key(count - 1)` (`None`: missing) as
    /// [`Store::open_value_tail`] does; `parts(i, tail bytes, value length)` says from the
    /// tail fetched first which `(offset, length)` parts of value `i` will be read next
    /// (a shard's inner chunks, from its index). A store on a network fetches the tails and
    /// then those parts for all the values at once; the others open them one by one.
    fn open_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        tail: u64,
        parts: &Parts,
    ) -> Result<Vec<Option<Box<dyn ValueReader + '_>>>> {
        let _ = parts;
        (0..count)
            .map(|i| self.open_value_tail(&key(i), tail))
            .collect()
    }
    /// Whether `key` holds a value.
    fn contains(&self, key: &str) -> Result<bool> {
        Ok(self.get(key)?.is_some())
    }
    /// The length in bytes of the value under `key`, without reading it where the backend
    /// allows; `None` if there is none.
    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        Ok(self.open_value(key)?.map(|v| v.len()))
    }
    /// The file holding the value under `key`, for stores that keep each value in a file of
    /// its own; `None` for the others, or when there is no value.
    fn value_file(&self, _key: &str) -> Result<Option<PathBuf>> {
        Ok(None)
    }
    /// Stores the contents of the file `source` under `key`, as [`Store::set`] would; stores
    /// that keep values in files copy it without reading it into memory.
    fn set_from_file(&self, key: &str, source: &Path) -> Result<()> {
        let value = std::fs::read(source)
            .map_err(|e| Error::io(format!("reading {}", source.display()), e))?;
        self.set(key, &value)
    }
    /// Fetches the values under `key(0)`, ..., `key(count - 1)` and runs `f(i, value)` for
    /// each (`None`: missing) on the thread pool, in any order, stopping at the first error.
    /// Stores on a network keep many requests in flight, handing each value over as it
    /// arrives; the others read in parallel on the pool.
    fn get_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        f: &Consume,
    ) -> Result<()> {
        use rayon::prelude::*;
        crate::parallel::run(|| {
            (0..count)
                .into_par_iter()
                .try_for_each(|i| f(i, self.get(&key(i))?.as_deref()))
        })
    }
    /// Runs `produce(0)`, ..., `produce(count - 1)` on the thread pool and stores what each
    /// gives: `(key, Some(value))` is set, `(key, None)` erased, `None` skipped; stops at the
    /// first error. Stores on a network keep many requests in flight, sending each value as
    /// it is produced; the others store it on the pool thread that produced it.
    fn set_many(&self, count: usize, produce: &Produce) -> Result<()> {
        use rayon::prelude::*;
        crate::parallel::run(|| {
            (0..count)
                .into_par_iter()
                .try_for_each(|i| match produce(i)? {
                    Some((key, Some(value))) => self.set(&key, &value),
                    Some((key, None)) => self.erase(&key),
                    None => Ok(()),
                })
        })
    }
    /// Every key that starts with `prefix`, at any depth, sorted.
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>>;
    /// Every key that starts with `prefix`, sorted, with the length of its value (a key that
    /// vanishes meanwhile is left out). Object stores answer from one listing; the others
    /// look each value up, in parallel.
    fn list_prefix_sized(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        use rayon::prelude::*;
        let keys = self.list_prefix(prefix)?;
        let sized: Result<Vec<Option<(String, u64)>>> = crate::parallel::run(|| {
            keys.into_par_iter()
                .map(|key| Ok(self.value_len(&key)?.map(|len| (key, len))))
                .collect()
        });
        Ok(sized?.into_iter().flatten().collect())
    }
    /// The names one level below `prefix` (keys and "directories" alike), sorted, without
    /// duplicates: for keys `a/x` and `a/y/0` the listing of `a/` is `x`, `y`.
    fn list_dir(&self, prefix: &str) -> Result<Vec<String>>;
    /// What the store can do beyond these calls ([`Capabilities`]): a local store's by default.
    fn capabilities(&self) -> Capabilities {
        Capabilities::LOCAL
    }
    /// Tidies up after every key below `prefix` (not empty) was erased: a directory store
    /// removes the directories left empty there, the prefix's own included, so that no name
    /// lingers in listings. Nothing to do for stores without directories.
    fn prune(&self, prefix: &str) -> Result<()> {
        let _ = prefix;
        Ok(())
    }
    /// What the store's HTTP requests have been since it was opened (`None`: a local store).
    fn request_stats(&self) -> Option<RequestStats> {
        None
    }
    /// Reads the value under `key` into `buf` (reusing its capacity; `false`: missing) with
    /// what identifies it for [`Store::set_if`]. Stores without conditional writes answer
    /// [`Version::Unchecked`].
    fn get_versioned(&self, key: &str, buf: &mut Vec<u8>) -> Result<(bool, Version)> {
        Ok((self.get_into(key, buf)?, Version::Unchecked))
    }
    /// Stores `value` under `key` (`None`: erases it) unless the key changed since it was read
    /// as `version`: `Ok(false)` then, and nothing was written. An unchecked version always
    /// writes.
    fn set_if(&self, key: &str, value: Option<&[u8]>, version: &Version) -> Result<bool> {
        let _ = version;
        match value {
            Some(value) => self.set(key, value)?,
            None => self.erase(key)?,
        }
        Ok(true)
    }
    /// Makes every change so far durable where the backend defers it (a zip store opened for
    /// writing writes its central directory and puts the archive in place, staying
    /// writable); nothing to do for the others.
    fn flush(&self) -> Result<()> {
        Ok(())
    }
}

/// What a value was when read, for a conditional write ([`Store::set_if`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Version {
    /// The store cannot tell: the write happens whatever is there.
    Unchecked,
    /// The key held no value.
    Absent,
    /// The value the server identified so (an HTTP `ETag`, and the object version where the
    /// bucket keeps versions).
    Tag {
        /// The `ETag` the server sent.
        e_tag: String,
        /// The object version, where the server sent one.
        version: Option<String>,
    },
}

/// How many times [`StoreHandle::update`] reads a value again after another writer changed
/// it between its read and its write.
const UPDATE_ATTEMPTS: u32 = 16;

/// Buffers larger than this are not kept for the next [`StoreHandle::update`].
const KEEP_UPDATE_BUFFER_BYTES: usize = 64 << 20;

thread_local! {
    /// The old and new values of this thread's [`StoreHandle::update`], kept between calls.
    static UPDATE_BUFFERS: Cell<(Vec<u8>, Vec<u8>)> = const { Cell::new((Vec::new(), Vec::new())) };
}

/// Waits before reading a value again after conflict `round`: a random part of a pause that
/// doubles, so that racing writers fall apart.
fn pause_after_conflict(round: u32) {
    let pause = 5u64 << round.min(7);
    let jitter = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| u64::from(t.subsec_nanos()) % pause);
    std::thread::sleep(std::time::Duration::from_millis(pause + jitter));
}

/// How many times a value read in parts is read again after another writer replaced it
/// between its parts.
const READ_ATTEMPTS: u32 = 16;

/// Runs `read`, which opens a value and reads it in parts, again while it fails because the
/// value changed between its parts ([`Error::Changed`]: a network store's later parts come
/// from the version its first request read, or fail). After [`READ_ATTEMPTS`] the change is
/// reported as an I/O error naming the value.
pub fn read_again_if_changed<T>(mut read: impl FnMut() -> Result<T>) -> Result<T> {
    let mut round = 0;
    loop {
        match read() {
            Err(Error::Changed(m)) if round + 1 == READ_ATTEMPTS => {
                return Err(Error::Io(format!(
                    "{m}; it changed {READ_ATTEMPTS} times while it was being read"
                )))
            }
            Err(Error::Changed(_)) => {
                pause_after_conflict(round);
                round += 1;
            }
            done => return done,
        }
    }
}

/// What [`Store::get_many`] does with each value it fetched: `(index, value)`, `None` for a
/// missing key.
pub type Consume<'a> = dyn Fn(usize, Option<&[u8]>) -> Result<()> + Sync + 'a;

/// What [`Store::open_many`] asks of each value's tail: the parts to fetch next.
pub type Parts<'a> = dyn Fn(usize, &[u8], u64) -> Vec<(u64, u64)> + Sync + 'a;

/// What [`Store::set_many`] asks for each index: the key and its new value (`None`: erase
/// it), or nothing to store.
pub type Produce<'a> = dyn Fn(usize) -> Result<Option<(String, Option<Vec<u8>>)>> + Sync + 'a;

/// One stored version of a value, where a store can tell it without reading the value: a
/// value replaced or rewritten has another. For a local file: its device, inode, size,
/// modification and status-change times (a rewrite in place within one tick of the file
/// system's clock, a few milliseconds, after the version was taken can go unnoticed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueVersion(pub [i64; 7]);

/// Random access to one stored value, from any number of threads at once.
pub trait ValueReader: Send + Sync {
    /// The value's length in bytes.
    fn len(&self) -> u64;
    /// The stored version read, where the store can tell ([`ValueVersion`]).
    fn version(&self) -> Option<ValueVersion> {
        None
    }
    /// Whether the value is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fills `buf` with the value's bytes from `offset`; reading past the end is an error.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// Says that the `(offset, length)` parts will be read next: a value on a network fetches
    /// them now, with as few requests as it can; local values have nothing to do.
    fn prefetch(&self, _parts: &[(u64, u64)]) -> Result<()> {
        Ok(())
    }
}

impl ValueReader for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let range = usize::try_from(offset)
            .ok()
            .and_then(|start| Some(start..start.checked_add(buf.len())?))
            .filter(|r| r.end <= self.as_slice().len())
            .ok_or_else(|| {
                Error::CorruptChunk(format!(
                    "value of {} bytes ends before byte {offset} + {}",
                    self.as_slice().len(),
                    buf.len()
                ))
            })?;
        buf.copy_from_slice(&self[range]);
        Ok(())
    }
}

/// How a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Reading only: every mutation is refused with [`Error::ReadOnly`].
    Read,
    /// Reading and writing; a directory store's root is created if missing.
    Write,
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
}

impl StoreKind {
    /// `"directory"`, `"zip"`, `"memory"`, `"remote"`, `"caller"`, `"n5"`, `"dbm"`, `"redis"`,
    /// `"sqlite"` or `"lmdb"`.
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
        }
    }
}

/// Number of lock stripes guarding read-modify-write of chunks, shared by every store handle
/// of the process.
const CHUNK_LOCK_STRIPES: usize = 1024;

/// The chunk lock stripes: one set for the whole process, so that handles opened separately on
/// the same store (by different threads or libraries of one program) exclude each other too.
static CHUNK_LOCKS: [Mutex<()>; CHUNK_LOCK_STRIPES] =
    [const { Mutex::new(()) }; CHUNK_LOCK_STRIPES];

/// The lock of one key (see [`StoreHandle::lock_chunk`]), released when dropped: the lock
/// file first, then the stripe.
pub struct ChunkLock {
    _file: Option<KeyLock>,
    _stripe: MutexGuard<'static, ()>,
}

/// The scheme of SQLite store locations (`sqlite://PATH`).
const SQLITE_SCHEME: &str = "sqlite://";

/// The scheme of LMDB store locations (`lmdb://PATH`).
const LMDB_SCHEME: &str = "lmdb://";

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

/// Numbers the in-memory stores, which share no location with any other store.
static MEMORY_STORES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Metadata documents by key, read at once from consolidated metadata.
pub type MetadataDocuments = BTreeMap<String, Vec<u8>>;

/// The canonical form of the file or directory `path` (of its directory when the file does not
/// exist yet, as a database's name; `path` itself when neither exists).
fn canonical_file(path: &str) -> String {
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

/// Whether consolidated `documents` answer the metadata key `key`: those of a v3 root (it
/// holds `zarr.json`) answer v3 keys, the others (`.zmetadata`) v2 keys.
fn answers(documents: &MetadataDocuments, key: &str) -> bool {
    documents.contains_key(ZARR_JSON) == (path::last_segment(key) == ZARR_JSON)
}

/// A location without the `file://` that may precede a local path.
pub fn local_path(location: &str) -> &str {
    location.strip_prefix("file://").unwrap_or(location)
}

/// Which backend [`StoreHandle::open`] uses for `location` (after [`local_path`]): `memory:`,
/// `dbm://`, `redis://`, `sqlite://`, `lmdb://`, a remote URL, an N5 container ([`n5_directory`]), a path ending in `.zip` that is not an
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
    } else if remote::is_remote(location) {
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

/// An open store: the backend, the mode it was opened with, what names its place for the
/// process-wide chunk locks (which make partial-chunk writes through any handle of the same
/// store safe against each other), and the consolidated metadata in use, if any.
#[derive(Debug)]
pub struct StoreHandle {
    backend: Box<dyn Store>,
    kind: StoreKind,
    mode: OpenMode,
    location: String,
    /// The store's identity for the chunk locks: the canonical path of a directory or zip
    /// file, a number of its own for a memory store.
    lock_scope: String,
    /// The lock files shared with other processes (option `process_synchronizer`).
    process_locks: Option<ProcessLocks>,
    /// When set, node lookups ([`StoreHandle::node_document`]) read metadata keys
    /// ([`path::is_metadata_key`]) from here instead of the backend; raw key operations never
    /// do. Writes through this handle go to both.
    consolidated: RwLock<Option<MetadataDocuments>>,
}

impl StoreHandle {
    /// Opens `location`: `"memory:"` for a new in-memory store, `s3://bucket/prefix`,
    /// `az://container/prefix`, `gs://bucket/prefix` or `http[s]://host/path` for a
    /// [`RemoteStore`], `n5://PATH` or a directory path ending in `.n5` for an N5 container
    /// ([`N5Store`] over a [`DirectoryStore`]), `dbm://PATH` for a [`DbmStore`]
    /// (`dbm:///abs/path`, `dbm://rel/path`), `redis://HOST:PORT/DB` for a [`RedisStore`],
    /// `sqlite://PATH` for an [`SqliteStore`] and `lmdb://PATH` for an [`LmdbStore`] (`PATH`
    /// relative, or absolute after a third `/`), a path ending in `.zip` (that is not an
    /// existing directory) for a [`ZipStore`], anything else a directory path (`file://` may
    /// precede it). Consolidated metadata is not read here: front ends open stores through
    /// `crate::open::open_store`, which reads it.
    pub fn open(location: &str, mode: OpenMode) -> Result<Arc<StoreHandle>> {
        Self::open_with_options(location, mode, None)
    }

    /// Opens `location` as [`StoreHandle::open`] does, with settings given as a JSON object
    /// ([`StoreOptions`]; `None`, `""` and `{}` are the defaults). Options the location's back
    /// end does not read are refused.
    pub fn open_with_options(
        location: &str,
        mode: OpenMode,
        options: Option<&str>,
    ) -> Result<Arc<StoreHandle>> {
        let location = local_path(location);
        let options = StoreOptions::from_json(options.unwrap_or(""))?;
        // What names the store's keys for the chunk locks, where the location alone does not.
        let mut scope = None;
        let shown = crate::redact::redact_url(location).into_owned();
        let kind = kind_of(location);
        let backend: Box<dyn Store> = match kind {
            StoreKind::Memory => {
                options.check_backend(Backend::Memory, location)?;
                Box::new(MemoryStore::default())
            }
            StoreKind::Dbm => {
                options.check_backend(Backend::Dbm, location)?;
                let path = location.strip_prefix("dbm://").expect("a dbm location");
                let store =
                    DbmStore::open(location, path, mode, options.dbm_format, options.fsync)?;
                scope = Some(format!("dbm:{}", store.canonical_path()));
                Box::new(store)
            }
            StoreKind::Redis => {
                options.check_backend(Backend::Redis, &shown)?;
                let store = RedisStore::open(location, &options)?;
                scope = Some(format!("{shown}#{}", store.key_prefix()));
                Box::new(store)
            }
            StoreKind::Sqlite => {
                options.check_backend(Backend::Sqlite, location)?;
                let file = local_file(location).expect("an SQLite location");
                Box::new(SqliteStore::open(file, mode, options.fsync)?)
            }
            StoreKind::Lmdb => {
                options.check_backend(Backend::Lmdb, location)?;
                let dir = local_file(location).expect("an LMDB location");
                Box::new(LmdbStore::open(dir, mode, options.fsync)?)
            }
            StoreKind::Remote => Box::new(RemoteStore::open(location, mode, &options)?),
            StoreKind::N5 => {
                options.check_backend(Backend::N5, location)?;
                let dir = n5_directory(location).expect("an N5 location");
                let directory = DirectoryStore::open(dir, mode, options.fsync)?;
                Box::new(N5Store::new(Box::new(directory)))
            }
            StoreKind::Zip => {
                options.check_backend(Backend::Zip, location)?;
                Box::new(ZipStore::open(
                    location,
                    mode,
                    options.zip_compression,
                    options.fsync,
                )?)
            }
            _ => {
                options.check_backend(Backend::Directory, location)?;
                Box::new(DirectoryStore::open(location, mode, options.fsync)?)
            }
        };
        let lock_scope = match kind {
            StoreKind::Memory => format!(
                "memory:{}",
                MEMORY_STORES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ),
            // Its secrets hidden: they do not change which objects the URL names.
            StoreKind::Remote => shown.trim_end_matches('/').to_string(),
            _ => scope.unwrap_or_else(|| canonical_file(local_file(location).unwrap_or(location))),
        };
        // Only writes take locks: a read-only store leaves the lock directory alone.
        let process_locks = options
            .process_synchronizer
            .as_deref()
            .filter(|_| mode == OpenMode::Write)
            .map(ProcessLocks::open)
            .transpose()?;
        Ok(Arc::new(StoreHandle {
            backend,
            kind,
            mode,
            location: shown,
            lock_scope,
            process_locks,
            consolidated: RwLock::new(None),
        }))
    }

    /// A store over a backend of the caller's own: `name` is what messages call it, `scope`
    /// what identifies its keys for the chunk locks (handles over the same keys must give the
    /// same scope, so that their partial-chunk writes exclude each other). Consolidated
    /// metadata is not read here.
    pub fn over_backend(
        backend: Box<dyn Store>,
        name: &str,
        scope: &str,
        mode: OpenMode,
    ) -> Arc<StoreHandle> {
        Arc::new(StoreHandle {
            backend,
            kind: StoreKind::Caller,
            mode,
            location: name.to_string(),
            lock_scope: format!("caller:{scope}"),
            process_locks: None,
            consolidated: RwLock::new(None),
        })
    }

    /// The location the store was opened with.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Which backend the store uses.
    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// The mode the store was opened with.
    pub fn mode(&self) -> OpenMode {
        self.mode
    }

    /// Answers metadata keys from the given documents instead of the backend (`None` stops
    /// that). Later writes through this handle keep the documents up to date.
    pub fn use_consolidated(&self, documents: Option<MetadataDocuments>) {
        *self
            .consolidated
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = documents;
    }

    /// Whether metadata keys are answered from consolidated metadata.
    pub fn uses_consolidated(&self) -> bool {
        self.consolidated_view().is_some()
    }

    fn consolidated_view(&self) -> std::sync::RwLockReadGuard<'_, Option<MetadataDocuments>> {
        self.consolidated
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The consolidated document under `key` when consolidated metadata answers that key:
    /// the documents of its own format only (a v2 `.zmetadata` says nothing of the v3 nodes
    /// of a mixed hierarchy, nor a v3 root's of the v2 ones).
    fn consolidated_get(&self, key: &str) -> Option<Option<Vec<u8>>> {
        if !path::is_metadata_key(key) {
            return None;
        }
        let view = self.consolidated_view();
        let documents = view.as_ref().filter(|d| answers(d, key))?;
        Some(documents.get(key).cloned())
    }

    /// Whether consolidated metadata in use holds the document `key` (answering for it
    /// without a request).
    pub fn consolidated_holds(&self, key: &str) -> bool {
        path::is_metadata_key(key)
            && self
                .consolidated_view()
                .as_ref()
                .is_some_and(|d| answers(d, key) && d.contains_key(key))
    }

    /// Keeps consolidated metadata in use up to date with a write of `key`.
    fn update_consolidated(&self, key: &str, value: Option<&[u8]>) {
        if !path::is_metadata_key(key) {
            return;
        }
        let mut view = self
            .consolidated
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(documents) = view.as_mut().filter(|d| answers(d, key)) {
            match value {
                Some(v) => documents.insert(key.to_string(), v.to_vec()),
                None => documents.remove(key),
            };
        }
    }

    /// The value under `key`, if any, as stored (consolidated metadata is never consulted:
    /// node lookups use [`StoreHandle::node_document`]).
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.backend.get(key)
    }

    /// The values under `keys` (each `None` when missing), as stored, fetched together (on a
    /// remote store, in one round trip).
    pub fn get_all(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        self.fetch_all(keys, false)
    }

    /// The metadata document under `key` as a node lookup sees it: from the consolidated
    /// metadata in use when that answers the key (a document it does not hold is missing, as
    /// for zarr-python), else from the store. Only the hierarchy's node lookups read through
    /// here; every raw key operation sees the store's own bytes.
    pub fn node_document(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match self.consolidated_get(key) {
            Some(answer) => Ok(answer),
            None => self.backend.get(key),
        }
    }

    /// [`StoreHandle::node_document`] for several keys: those the consolidated metadata in
    /// use answers from it, the others fetched together (on a remote store, in one round
    /// trip).
    pub fn node_documents(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        self.fetch_all(keys, true)
    }

    /// The values under `keys`, fetched together; with `through_view`, those the consolidated
    /// metadata in use answers are taken from it.
    fn fetch_all(&self, keys: &[String], through_view: bool) -> Result<Vec<Option<Vec<u8>>>> {
        let answered: Vec<Option<Option<Vec<u8>>>> = keys
            .iter()
            .map(|key| through_view.then(|| self.consolidated_get(key)).flatten())
            .collect();
        let wanted: Vec<usize> = (0..keys.len()).filter(|&i| answered[i].is_none()).collect();
        let fetched: Vec<Mutex<Option<Vec<u8>>>> =
            wanted.iter().map(|_| Mutex::new(None)).collect();
        if self.capabilities().batched && wanted.len() > 1 {
            self.backend
                .get_many(wanted.len(), &|j| keys[wanted[j]].clone(), &|j, value| {
                    *fetched[j].lock().unwrap_or_else(|p| p.into_inner()) =
                        value.map(<[u8]>::to_vec);
                    Ok(())
                })?;
        } else {
            // A local value is read faster here than handed to the pool.
            for (j, &i) in wanted.iter().enumerate() {
                *fetched[j].lock().unwrap_or_else(|p| p.into_inner()) =
                    self.backend.get(&keys[i])?;
            }
        }
        let mut fetched = fetched
            .into_iter()
            .map(|v| v.into_inner().unwrap_or_else(|p| p.into_inner()));
        Ok(answered
            .into_iter()
            .map(|answer| answer.unwrap_or_else(|| fetched.next().expect("one per key")))
            .collect())
    }

    /// Reads the value under `key` into `buf`, reusing its capacity; `false` if there is none.
    pub fn get_into(&self, key: &str, buf: &mut Vec<u8>) -> Result<bool> {
        self.backend.get_into(key, buf)
    }

    /// Opens the value under `key` for reading parts of it; `None` if missing.
    pub fn open_value(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        self.backend.open_value(key)
    }

    /// Opens many chunk values at once (see [`Store::open_many`]).
    pub fn open_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        tail: u64,
        parts: &Parts,
    ) -> Result<Vec<Option<Box<dyn ValueReader + '_>>>> {
        self.backend.open_many(count, key, tail, parts)
    }

    /// Opens the chunk value under `key` whose last `tail` bytes are read first (see
    /// [`Store::open_value_tail`]); `None` if missing.
    pub fn open_value_tail(
        &self,
        key: &str,
        tail: u64,
    ) -> Result<Option<Box<dyn ValueReader + '_>>> {
        self.backend.open_value_tail(key, tail)
    }

    /// Fetches many chunk values at once (see [`Store::get_many`]); metadata is not fetched
    /// this way.
    pub fn get_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        f: &Consume,
    ) -> Result<()> {
        self.backend.get_many(count, key, f)
    }

    /// Stores many chunk values at once (see [`Store::set_many`]); metadata is not written
    /// this way.
    pub fn set_many(&self, count: usize, produce: &Produce) -> Result<()> {
        self.backend.set_many(count, produce)
    }

    /// The length of the value under `key`, if any, without reading it where possible.
    pub fn value_len(&self, key: &str) -> Result<Option<u64>> {
        self.backend.value_len(key)
    }

    /// Whether `key` holds a value.
    pub fn contains(&self, key: &str) -> Result<bool> {
        self.backend.contains(key)
    }

    /// Stores a value; refused on a read-only store.
    pub fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.check_writable(key)?;
        self.backend.set(key, value)?;
        self.update_consolidated(key, Some(value));
        Ok(())
    }

    /// Replaces the value under `key` by what `update(old, new)` makes of it: `old` is the
    /// value (`None`: missing), `update` writes the new value into the empty `new` and says
    /// whether to store it (`false`: erase the key). One read-modify-write: under the key's
    /// lock within the process, and on stores with conditional writes only if no other writer
    /// changed the value since it was read; `update` then runs again on the new value (a few
    /// times, after a short pause, before giving up with [`Error::Io`]). Erasing is never
    /// conditional. The two buffers are this thread's, reused from call to call.
    pub fn update(
        &self,
        key: &str,
        mut update: impl FnMut(Option<&[u8]>, &mut Vec<u8>) -> Result<bool>,
    ) -> Result<()> {
        self.check_writable(key)?;
        let _lock = self.lock_chunk(key)?;
        let (mut old, mut new) = UPDATE_BUFFERS.with(Cell::take);
        let mut attempt = || -> Result<bool> {
            let (found, version) = self.backend.get_versioned(key, &mut old)?;
            new.clear();
            let keep = update(found.then_some(old.as_slice()), &mut new)?;
            let value = keep.then_some(new.as_slice());
            let written = self.backend.set_if(key, value, &version)?;
            if written {
                self.update_consolidated(key, value);
            }
            Ok(written)
        };
        let mut result = Err(Error::Io(format!(
            "writing {key:?} in {}: another writer changed it {UPDATE_ATTEMPTS} times while it was being updated",
            self.location
        )));
        for round in 0..UPDATE_ATTEMPTS {
            match attempt() {
                Ok(false) => pause_after_conflict(round),
                done => {
                    result = done.map(drop);
                    break;
                }
            }
        }
        if old.capacity().max(new.capacity()) <= KEEP_UPDATE_BUFFER_BYTES {
            UPDATE_BUFFERS.with(|b| b.set((old, new)));
        }
        result
    }

    /// Copies the value under `src_key` of `src` to `key` of this store (`false` when `src`
    /// has none). When both keep values in files, the value goes file to file without
    /// passing through memory; metadata keys always go through [`StoreHandle::set`], so
    /// consolidated metadata in use on this side stays up to date. The value copied is the
    /// one stored, never one from consolidated metadata.
    pub fn copy_value_from(&self, src: &StoreHandle, src_key: &str, key: &str) -> Result<bool> {
        self.check_writable(key)?;
        if !path::is_metadata_key(key) && !path::is_metadata_key(src_key) {
            if let Some(file) = src.backend.value_file(src_key)? {
                self.backend.set_from_file(key, &file)?;
                return Ok(true);
            }
        }
        match src.get(src_key)? {
            Some(value) => self.set(key, &value).map(|()| true),
            None => Ok(false),
        }
    }

    /// Removes a key; refused on a read-only store.
    pub fn erase(&self, key: &str) -> Result<()> {
        self.check_writable(key)?;
        self.backend.erase(key)?;
        self.update_consolidated(key, None);
        Ok(())
    }

    /// Every key below `prefix`.
    pub fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.backend.list_prefix(prefix)
    }

    /// Tidies up below `prefix` after its keys were erased (see [`Store::prune`]).
    pub fn prune(&self, prefix: &str) -> Result<()> {
        self.check_writable(prefix)?;
        self.backend.prune(prefix)
    }

    /// Every key below `prefix` with its value's length (see [`Store::list_prefix_sized`]).
    pub fn list_prefix_sized(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        self.backend.list_prefix_sized(prefix)
    }

    /// The names one level below `prefix`.
    pub fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        self.backend.list_dir(prefix)
    }

    /// What the store can do beyond the calls every store has ([`Capabilities`]).
    pub fn capabilities(&self) -> Capabilities {
        self.backend.capabilities()
    }

    /// The names one level below `prefix` (empty or ending in `/`) that the consolidated
    /// metadata in use holds a node for, sorted; `None` when none is in use (then the store
    /// must be listed). Consolidated metadata is the whole truth about the hierarchy, as for
    /// zarr-python: nodes it does not hold are not members.
    pub fn consolidated_children(&self, prefix: &str) -> Option<Vec<String>> {
        let view = self.consolidated_view();
        let documents = view.as_ref()?;
        let mut names: Vec<String> = documents
            .keys()
            .filter_map(|key| {
                let (name, document) = key.strip_prefix(prefix)?.split_once('/')?;
                path::is_node_document(document).then(|| name.to_string())
            })
            .collect();
        names.sort();
        names.dedup();
        Some(names)
    }

    /// Finishes what the backend defers: a zip store opened for writing writes its central
    /// directory and puts the archive in place. The handle stays usable; later changes are
    /// written by the next flush or close (or, unreported, when the last reference to the
    /// store goes away).
    pub fn flush(&self) -> Result<()> {
        self.backend.flush()
    }

    /// What closing the handle writes: the same as [`StoreHandle::flush`].
    pub fn close(&self) -> Result<()> {
        self.flush()
    }

    /// What the store's HTTP requests have been since it was opened (`None`: a local store).
    pub fn request_stats(&self) -> Option<RequestStats> {
        self.backend.request_stats()
    }

    /// Fails with [`Error::ReadOnly`] naming `what` unless the store is writable.
    pub fn check_writable(&self, what: &str) -> Result<()> {
        match self.mode {
            OpenMode::Write => Ok(()),
            OpenMode::Read => Err(Error::ReadOnly(format!(
                "cannot modify {what:?}: store {:?} was opened read-only",
                self.location
            ))),
        }
    }

    /// Whether `other` reaches the same keys as this handle: it is this handle, or both open
    /// the same directory, zip file or dbm database, or the same prefix of one Redis database
    /// by one URL.
    pub fn is_same_store(&self, other: &StoreHandle) -> bool {
        if std::ptr::eq(self, other) {
            return true;
        }
        let by_scope = [
            StoreKind::Memory,
            StoreKind::Caller,
            StoreKind::Dbm,
            StoreKind::Redis,
        ];
        if by_scope.contains(&self.kind) || by_scope.contains(&other.kind) {
            return self.lock_scope == other.lock_scope;
        }
        match (
            std::fs::canonicalize(local_path(&self.location)),
            std::fs::canonicalize(local_path(&other.location)),
        ) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }

    /// Locks `key` of this store for a write or a read-modify-write cycle: the stripe that
    /// guards it in every handle of the process and, with a process synchronizer, its lock
    /// file. Callers hold one key's lock at a time.
    pub fn lock_chunk(&self, key: &str) -> Result<ChunkLock> {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one((&self.lock_scope, key));
        let stripe = &CHUNK_LOCKS[(hash % CHUNK_LOCK_STRIPES as u64) as usize];
        // A poisoned stripe only means another writer panicked; the data it guards is the
        // store's, which stays consistent because every write replaces a key atomically.
        let stripe = stripe
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let file = match &self.process_locks {
            Some(locks) => Some(locks.lock(key)?),
            None => None,
        };
        Ok(ChunkLock {
            _file: file,
            _stripe: stripe,
        })
    }

    /// Whether writes take lock files shared with other processes (a process synchronizer).
    pub fn locks_across_processes(&self) -> bool {
        self.process_locks.is_some()
    }
}

/// Destinations of reads at least this long start on a [`READ_ALIGNMENT`] boundary.
#[cfg(unix)]
const ALIGNED_READ_MIN: usize = 64 * 1024;

/// The alignment large reads give their destination: on some x86 processors (AMD EPYC with
/// `fsrm` among them) the kernel copies into user memory at 15–18 GB/s when the destination is
/// 64-byte aligned and at 2.7 GB/s when it is 16 bytes past, which is where glibc's `malloc`
/// puts large buffers.
#[cfg(unix)]
const READ_ALIGNMENT: usize = 64;

/// Fills `buf` from `offset` of `file` without moving a shared cursor (so threads may share
/// the file). A large `buf` not on a 64-byte boundary is filled in two reads: the few bytes up
/// to the boundary, then the rest, so the bulk of the copy lands aligned whoever allocated
/// `buf`.
#[cfg(unix)]
pub(crate) fn read_file_at(
    file: &std::fs::File,
    offset: u64,
    buf: &mut [u8],
) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let head = buf.as_ptr().align_offset(READ_ALIGNMENT);
    if buf.len() < ALIGNED_READ_MIN || head == 0 || head >= buf.len() {
        return file.read_exact_at(buf, offset);
    }
    let (first, rest) = buf.split_at_mut(head);
    file.read_exact_at(first, offset)?;
    file.read_exact_at(rest, offset + head as u64)
}

/// Fills `buf` from `offset` of `file` without moving a shared cursor (so threads may share
/// the file).
#[cfg(windows)]
pub(crate) fn read_file_at(
    file: &std::fs::File,
    mut offset: u64,
    mut buf: &mut [u8],
) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A read that finds its value replaced is run again until it reads one version; any
    /// other error ends it at once.
    #[test]
    fn reads_run_again_while_the_value_changes() {
        let mut runs = 0;
        let read = read_again_if_changed(|| {
            runs += 1;
            match runs {
                1 | 2 => Err(Error::Changed("\"k\" was replaced".into())),
                _ => Ok(runs),
            }
        });
        assert_eq!(read.unwrap(), 3);
        let mut runs = 0;
        let failed: Result<()> = read_again_if_changed(|| {
            runs += 1;
            Err(Error::Io("\"k\": disk gone".into()))
        });
        assert!(matches!(failed, Err(Error::Io(m)) if m.contains("\"k\"")) && runs == 1);
    }

    #[test]
    fn reads_into_buffers_at_any_address_fill_them_exactly() {
        let path = std::env::temp_dir().join(format!("libzarr-read-at-{}", std::process::id()));
        let value: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &value).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut buf = vec![0u8; 200_000];
        for shift in [0, 1, 16, 63, 64] {
            for (offset, len) in [(0, 150_000), (7, 100), (3, 199_000), (100_000, 65_536)] {
                let out = &mut buf[shift..shift + len];
                read_file_at(&file, offset as u64, out).unwrap();
                assert!(
                    out[..] == value[offset..offset + len],
                    "{shift} {offset} {len}"
                );
            }
        }
        let tail = &mut buf[1..100_001];
        let err = read_file_at(&file, 250_000, tail).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
        std::fs::remove_file(&path).unwrap();
    }

    /// Behaviour every backend must share.
    pub fn exercise_store(store: &dyn Store) {
        assert_eq!(store.get("a/.zarray").unwrap(), None);
        store.set("a/.zarray", b"{}").unwrap();
        store.set("a/0.0", b"x").unwrap();
        store.set("a/1/0", b"y").unwrap();
        store.set("b", b"z").unwrap();
        store.set("b", b"zz").unwrap();
        assert_eq!(store.get("b").unwrap().unwrap(), b"zz");
        let mut buf = b"old contents".to_vec();
        assert!(store.get_into("b", &mut buf).unwrap());
        assert_eq!(buf, b"zz");
        assert!(!store.get_into("missing", &mut buf).unwrap());
        let reader = store.open_value("b").unwrap().unwrap();
        let mut part = [0u8; 1];
        reader.read_exact_at(1, &mut part).unwrap();
        assert_eq!((part, reader.len()), ([b'z'], 2));
        assert!(matches!(
            reader.read_exact_at(2, &mut part),
            Err(Error::CorruptChunk(_))
        ));
        assert!(store.open_value("missing").unwrap().is_none());
        assert_eq!(store.value_len("b").unwrap(), Some(2));
        assert_eq!(store.value_len("missing").unwrap(), None);
        assert!(store.contains("a/0.0").unwrap());
        assert_eq!(store.list_dir("").unwrap(), vec!["a", "b"]);
        assert_eq!(store.list_dir("a/").unwrap(), vec![".zarray", "0.0", "1"]);
        assert_eq!(
            store.list_prefix("a/").unwrap(),
            vec!["a/.zarray", "a/0.0", "a/1/0"]
        );
        assert!(store.list_dir("missing/").unwrap().is_empty());
        store.erase("a/0.0").unwrap();
        store.erase("a/0.0").unwrap();
        assert!(!store.contains("a/0.0").unwrap());
        for bad in ["../x", "a/../../x", "/etc/passwd", "", "a//b"] {
            assert!(
                matches!(store.set(bad, b"!"), Err(Error::InvalidPath(_))),
                "{bad}"
            );
            assert!(store.get(bad).is_err(), "{bad}");
        }
        assert!(store.list_dir("../").is_err());
        let source = std::env::temp_dir().join(format!(
            "libzarr-source-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&source, b"from a file").unwrap();
        store.set_from_file("c/0", &source).unwrap();
        assert_eq!(store.get("c/0").unwrap().unwrap(), b"from a file");
        if let Some(file) = store.value_file("c/0").unwrap() {
            assert_eq!(std::fs::read(file).unwrap(), b"from a file");
        }
        assert_eq!(store.value_file("c/missing").unwrap(), None);
        assert!(store
            .set_from_file("c/1", &source.with_extension("missing"))
            .is_err());
        assert!(!store.contains("c/1").unwrap());
        store.erase("c/0").unwrap();
        std::fs::remove_file(&source).unwrap();
    }

    #[test]
    fn read_only_handle_refuses_mutation() {
        let dir = std::env::temp_dir().join(format!("libzarr-ro-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let rw = StoreHandle::open(dir.to_str().unwrap(), OpenMode::Write).unwrap();
        rw.set("k", b"v").unwrap();
        let ro = StoreHandle::open(dir.to_str().unwrap(), OpenMode::Read).unwrap();
        assert!(matches!(ro.set("k", b"w"), Err(Error::ReadOnly(_))));
        assert!(matches!(ro.erase("k"), Err(Error::ReadOnly(_))));
        assert_eq!(ro.get("k").unwrap().unwrap(), b"v");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
