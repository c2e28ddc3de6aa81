//! A store in an LMDB environment, in the layout of zarr-python 2's `LMDBStore` (py-lmdb's
//! defaults): a directory holding `data.mdb` and `lock.mdb`, the unnamed database holding every
//! key as its UTF-8 bytes and every value as its raw bytes.

use super::{sorted_keys, OpenMode, Store, ValueReader};
use crate::error::{Error, Result};
use crate::path::{validate_key, validate_prefix};
use heed::types::Bytes;
use heed::{Database, Env, EnvFlags, EnvOpenOptions, MdbError, RoTxn, WithoutTls};
use std::collections::HashMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// The map size zarr-python 2 gives LMDB (from zict): 1 TiB on 64-bit systems, 256 MiB on
/// 32-bit ones. It is address space, not disk: the data file grows as values are written.
const MAP_SIZE: usize = if usize::BITS >= 64 { 1 << 40 } else { 1 << 28 };

/// The smallest map tried when the system refuses to map [`MAP_SIZE`] (a limit on address
/// space, `ulimit -v`, or valgrind's 128 GiB): each try maps a quarter of the last.
const SMALLEST_MAP_SIZE: usize = 1 << 28;

/// The keys and values of the environment's unnamed database, as bytes.
type Db = Database<Bytes, Bytes>;

/// One open LMDB environment, shared by every store handle of the process on the same
/// directory: LMDB forbids opening an environment twice in one process (closing one copy would
/// drop the other's file locks).
struct Shared {
    env: Env<WithoutTls>,
    db: Db,
    read_only: bool,
}

/// The environments open in this process, by canonical directory.
static OPEN: Mutex<Option<HashMap<PathBuf, Weak<Shared>>>> = Mutex::new(None);

/// How long opening waits for another handle of the process to finish closing the same
/// environment.
const CLOSING_WAIT: Duration = Duration::from_secs(10);

/// A store in an LMDB environment directory (`lmdb://PATH`), read and written as zarr-python
/// 2's `LMDBStore` does.
///
/// Threads and processes: LMDB serialises writers itself (a lock in `lock.mdb` shared by every
/// process that has the environment open) and lets readers run beside them, each read in a snapshot
/// transaction (opened without thread-local slots, as py-lmdb does, so any thread may read).
/// Each write is one transaction: a writer killed at any moment leaves every key with its old
/// or its new value. As in zarr-python, commits are not flushed to the disk (LMDB's
/// `MDB_NOSYNC`, `MDB_NOMETASYNC`) unless the store option `fsync` is given; a power loss can
/// then lose the last writes. The map is zarr-python's 1 TiB of address space, or less where
/// the system refuses that much (an address-space limit, valgrind). Opened read-only, the environment is mapped read-only: LMDB still
/// writes its reader table in `lock.mdb` (which must then be writable, unless the file system
/// is read-only), never the directory or `data.mdb`.
///
/// LMDB here is heed's `mdb.master` build: its data file is LMDB 0.9's (format 1), so files
/// py-lmdb (LMDB 0.9) wrote open here and the other way round, but its lock file is of another
/// format (version 2, against 0.9's 1), so the two cannot have an environment open at the same
/// time: whichever opens second fails (here [`Error::Unsupported`] saying so, in py-lmdb
/// `VersionMismatchError`), and neither damages it.
pub struct LmdbStore {
    shared: Arc<Shared>,
    path: PathBuf,
}

impl std::fmt::Debug for LmdbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LmdbStore")
            .field("path", &self.path)
            .finish()
    }
}

impl LmdbStore {
    /// Opens the environment directory `path`: for [`OpenMode::Write`] it is created if
    /// missing; for [`OpenMode::Read`] a missing directory or `data.mdb` is
    /// [`Error::NotFound`]. A `data.mdb` that is not an LMDB file is [`Error::CorruptChunk`]
    /// naming it.
    pub fn open(path: &str, mode: OpenMode, fsync: bool) -> Result<Self> {
        if path.is_empty() {
            return Err(Error::InvalidArgument(
                "lmdb:// store location has no directory path (lmdb://PATH)".into(),
            ));
        }
        let dir = PathBuf::from(path);
        let shown = dir.display();
        match std::fs::metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::InvalidArgument(format!(
                    "lmdb store {shown} is not a directory (an LMDB environment is a directory holding data.mdb and lock.mdb)"
                )))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match mode {
                OpenMode::Read => {
                    return Err(Error::NotFound(format!("lmdb store {shown} does not exist")))
                }
                OpenMode::Write => std::fs::create_dir_all(&dir)
                    .map_err(|e| Error::io(format!("creating lmdb store {shown}"), e))?,
            },
            Err(e) => return Err(Error::io(format!("lmdb store {shown}"), e)),
        }
        if mode == OpenMode::Read && !dir.join("data.mdb").exists() {
            return Err(Error::NotFound(format!(
                "lmdb store {shown} has no data.mdb (not an LMDB environment)"
            )));
        }
        let canonical = dir
            .canonicalize()
            .map_err(|e| Error::io(format!("lmdb store {shown}"), e))?;
        let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
        let open = open.get_or_insert_with(HashMap::new);
        open.retain(|_, shared| shared.strong_count() > 0);
        let shared = match open.get(&canonical).and_then(Weak::upgrade) {
            Some(shared) if shared.read_only && mode == OpenMode::Write => {
                return Err(Error::InvalidArgument(format!(
                    "lmdb store {shown} is open read-only in this process: LMDB cannot open it again for writing until every read-only handle on it is closed"
                )))
            }
            Some(shared) => shared,
            None => {
                let shared = Arc::new(open_env(&canonical, &dir, mode, fsync)?);
                open.insert(canonical, Arc::downgrade(&shared));
                shared
            }
        };
        Ok(LmdbStore { shared, path: dir })
    }

    /// An LMDB failure while doing `what`, naming the environment.
    fn error(&self, what: impl std::fmt::Display, e: heed::Error) -> Error {
        lmdb_error(&self.path, what, e)
    }

    /// A read transaction (a snapshot of the database).
    fn read(&self) -> Result<RoTxn<'_, WithoutTls>> {
        self.shared
            .env
            .read_txn()
            .map_err(|e| self.error("starting a read", e))
    }

    /// Whether `key` is longer than LMDB's keys can be: no value can be stored under it.
    fn too_long(&self, key: &str) -> bool {
        key.len() > self.shared.env.max_key_size()
    }

    /// Runs `f` on the value of `key` in a snapshot (`None`: missing).
    fn with_value<T>(&self, key: &str, f: impl FnOnce(&[u8]) -> T) -> Result<Option<T>> {
        validate_key(key)?;
        if self.too_long(key) {
            return Ok(None);
        }
        let txn = self.read()?;
        let value = self
            .shared
            .db
            .get(&txn, key.as_bytes())
            .map_err(|e| self.error(format_args!("reading {key:?}"), e))?;
        Ok(value.map(f))
    }

    /// Runs `f` on every UTF-8 key from `bound` on (after it when `after`), in order, with its
    /// value's length, until it says stop (`false`). Keys that are not UTF-8 (which
    /// zarr-python never writes) are left out.
    fn scan(&self, bound: &str, after: bool, mut f: impl FnMut(&str, u64) -> bool) -> Result<()> {
        let failed = |e| self.error(format_args!("listing keys from {bound:?}"), e);
        let txn = self.read()?;
        // LMDB refuses an empty key, even to seek to: the root's listing starts unbounded.
        let range = match after {
            true => (Bound::Excluded(bound.as_bytes()), Bound::Unbounded),
            false if bound.is_empty() => (Bound::Unbounded, Bound::Unbounded),
            false => (Bound::Included(bound.as_bytes()), Bound::Unbounded),
        };
        for entry in self.shared.db.range(&txn, &range).map_err(failed)? {
            let (key, value) = entry.map_err(failed)?;
            let Ok(key) = std::str::from_utf8(key) else {
                continue;
            };
            if !f(key, value.len() as u64) {
                break;
            }
        }
        Ok(())
    }

    /// Runs `f` in a write transaction and commits it.
    fn write(
        &self,
        what: impl std::fmt::Display,
        f: impl FnOnce(&mut heed::RwTxn) -> heed::Result<()>,
    ) -> Result<()> {
        let mut txn = self
            .shared
            .env
            .write_txn()
            .map_err(|e| self.error(format_args!("{what}"), e))?;
        f(&mut txn)
            .and_then(|()| txn.commit())
            .map_err(|e| self.error(format_args!("{what}"), e))
    }
}

/// Opens the environment at `canonical` (shown as `dir`) with zarr-python's settings.
fn open_env(canonical: &Path, dir: &Path, mode: OpenMode, fsync: bool) -> Result<Shared> {
    if mode == OpenMode::Write {
        create_files(dir)?;
    }
    let mut options = EnvOpenOptions::new().read_txn_without_tls();
    let mut map_size = MAP_SIZE;
    options.map_size(map_size);
    let mut flags = EnvFlags::empty();
    if mode == OpenMode::Read {
        flags |= EnvFlags::READ_ONLY;
    }
    if !fsync {
        flags |= EnvFlags::NO_SYNC | EnvFlags::NO_META_SYNC;
    }
    // SAFETY: NO_SYNC and NO_META_SYNC only defer flushing to the disk (a power loss may lose
    // the last commits); the map is never written through (no WRITE_MAP), and each
    // environment is opened once per process (`OPEN`).
    unsafe { options.flags(flags) };
    let mut waited = false;
    let env = loop {
        // SAFETY: as above; LMDB's lock file orders this process's access with the others'.
        match unsafe { options.open(canonical) } {
            Err(heed::Error::EnvAlreadyOpened) if !waited => {
                // Another handle's environment is being closed as this one opens.
                if let Some(closing) = heed::env_closing_event(canonical) {
                    closing.wait_timeout(CLOSING_WAIT);
                }
                waited = true;
            }
            Err(heed::Error::Io(e))
                if map_size > SMALLEST_MAP_SIZE
                    && matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOMEM)) =>
            {
                map_size /= 4;
                options.map_size(map_size);
            }
            other => break other.map_err(|e| lmdb_error(dir, "opening", e))?,
        }
    };
    let txn = env
        .read_txn()
        .map_err(|e| lmdb_error(dir, "starting a read", e))?;
    let db = env
        .open_database::<Bytes, Bytes>(&txn, None)
        .map_err(|e| lmdb_error(dir, "opening its database", e))?
        .ok_or_else(|| {
            Error::CorruptChunk(format!("lmdb store {}: no main database", dir.display()))
        })?;
    txn.commit()
        .map_err(|e| lmdb_error(dir, "opening its database", e))?;
    Ok(Shared {
        env,
        db,
        read_only: mode == OpenMode::Read,
    })
}

/// Creates the environment's files when missing, as any new file (readable by others unless
/// the umask says otherwise), before LMDB would create them readable by their owner alone.
fn create_files(dir: &Path) -> Result<()> {
    for name in ["data.mdb", "lock.mdb"] {
        let file = dir.join(name);
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&file)
            .map_err(|e| Error::io(format!("creating {}", file.display()), e))?;
    }
    Ok(())
}

/// An LMDB failure while doing `what` in the environment `dir`: damage (a file that is not
/// LMDB's, or corrupt pages) is [`Error::CorruptChunk`], a lock file or data file of another
/// LMDB version [`Error::Unsupported`], a full map [`Error::TooLarge`].
fn lmdb_error(dir: &Path, what: impl std::fmt::Display, e: heed::Error) -> Error {
    let message = format!("lmdb store {}: {what}: {e}", dir.display());
    match e {
        heed::Error::Mdb(MdbError::VersionMismatch) => Error::Unsupported(format!(
            "{message} (another process has the environment open with an LMDB whose lock file \
             format differs, such as py-lmdb's LMDB 0.9: libzarr's LMDB (mdb.master) reads and \
             writes its data file but cannot share its lock file; close it there first, or the \
             data file is of another LMDB version)"
        )),
        heed::Error::Mdb(
            MdbError::Invalid
            | MdbError::Corrupted
            | MdbError::PageNotFound
            | MdbError::Incompatible,
        ) => Error::CorruptChunk(message),
        heed::Error::Mdb(MdbError::MapFull) => Error::TooLarge(format!(
            "{message} (the environment's map size, {MAP_SIZE} bytes where the system allows it, is reached)"
        )),
        heed::Error::Io(io) if io.kind() == std::io::ErrorKind::PermissionDenied => {
            Error::PermissionDenied(message)
        }
        _ => Error::Io(message),
    }
}

/// A value read in parts from one snapshot: each part is looked up again in the same read
/// transaction, so a writer replacing the value meanwhile is never seen.
struct SnapshotValue {
    txn: Mutex<RoTxn<'static, WithoutTls>>,
    db: Db,
    key: String,
    len: u64,
    path: PathBuf,
}

impl ValueReader for SnapshotValue {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let txn = self.txn.lock().unwrap_or_else(|p| p.into_inner());
        let value = self
            .db
            .get(&txn, self.key.as_bytes())
            .map_err(|e| lmdb_error(&self.path, format_args!("reading {:?}", self.key), e))?
            .ok_or_else(|| Error::Internal(format!("{:?} vanished from its snapshot", self.key)))?;
        let range = usize::try_from(offset)
            .ok()
            .and_then(|start| Some(start..start.checked_add(buf.len())?))
            .filter(|r| r.end <= value.len())
            .ok_or_else(|| {
                Error::CorruptChunk(format!(
                    "lmdb store {}: value {:?} of {} bytes ends before byte {offset} + {}",
                    self.path.display(),
                    self.key,
                    value.len(),
                    buf.len()
                ))
            })?;
        buf.copy_from_slice(&value[range]);
        Ok(())
    }
}

impl Store for LmdbStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.with_value(key, <[u8]>::to_vec)
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>) -> Result<bool> {
        buf.clear();
        Ok(self
            .with_value(key, |v| buf.extend_from_slice(v))?
            .is_some())
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        validate_key(key)?;
        if self.too_long(key) {
            return Err(Error::InvalidPath(format!(
                "lmdb store {}: key {key:?} is {} bytes long; LMDB keys hold at most {}",
                self.path.display(),
                key.len(),
                self.shared.env.max_key_size()
            )));
        }
        let db = self.shared.db;
        self.write(format_args!("writing {key:?}"), |txn| {
            db.put(txn, key.as_bytes(), value)
        })
    }

    fn erase(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        if self.too_long(key) {
            return Ok(());
        }
        let db = self.shared.db;
        self.write(format_args!("erasing {key:?}"), |txn| {
            db.delete(txn, key.as_bytes()).map(drop)
        })
    }

    fn open_value(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        validate_key(key)?;
        if self.too_long(key) {
            return Ok(None);
        }
        let txn = self
            .shared
            .env
            .clone()
            .static_read_txn()
            .map_err(|e| self.error("starting a read", e))?;
        let len = self
            .shared
            .db
            .get(&txn, key.as_bytes())
            .map_err(|e| self.error(format_args!("reading {key:?}"), e))?
            .map(|v| v.len() as u64);
        Ok(len.map(|len| {
            Box::new(SnapshotValue {
                txn: Mutex::new(txn),
                db: self.shared.db,
                key: key.to_string(),
                len,
                path: self.path.clone(),
            }) as Box<dyn ValueReader>
        }))
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        self.with_value(key, |v| v.len() as u64)
    }

    fn contains(&self, key: &str) -> Result<bool> {
        Ok(self.with_value(key, |_| ())?.is_some())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let sized = self.list_prefix_sized(prefix)?;
        Ok(sized.into_iter().map(|(k, _)| k).collect())
    }

    fn list_prefix_sized(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        validate_prefix(prefix)?;
        sorted_keys::sized_by_scanning(prefix, &|bound, after, f| self.scan(bound, after, f))
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        sorted_keys::dir_by_scanning(prefix, &|bound, after, f| self.scan(bound, after, f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("libzarr-lmdb-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        path
    }

    #[test]
    fn behaves_like_a_store() {
        let path = temp("store");
        let store = LmdbStore::open(path.to_str().unwrap(), OpenMode::Write, false).unwrap();
        super::super::tests::exercise_store(&store);
        let long = "k".repeat(600);
        assert_eq!(store.get(&long).unwrap(), None);
        assert!(matches!(store.set(&long, b"x"), Err(Error::InvalidPath(m)) if m.contains("511")));
        // A second handle shares the environment; a read-only one reads what it wrote.
        let again = LmdbStore::open(path.to_str().unwrap(), OpenMode::Read, false).unwrap();
        assert_eq!(again.get("b").unwrap().unwrap(), b"zz");
        drop((store, again));
        assert!(path.join("data.mdb").is_file() && path.join("lock.mdb").is_file());
        std::fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn a_value_read_in_parts_stays_the_version_opened() {
        let path = temp("snapshot");
        let store = LmdbStore::open(path.to_str().unwrap(), OpenMode::Write, false).unwrap();
        store.set("v", &[1; 100]).unwrap();
        let reader = store.open_value("v").unwrap().unwrap();
        store.set("v", &[2; 50]).unwrap();
        let mut part = [0u8; 10];
        reader.read_exact_at(90, &mut part).unwrap();
        assert_eq!((part, reader.len()), ([1; 10], 100));
        drop(reader);
        assert_eq!(store.get("v").unwrap().unwrap(), vec![2; 50]);
        drop(store);
        std::fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn missing_read_only_and_damaged_environments_are_errors_naming_them() {
        let path = temp("missing");
        for missing in [path.clone(), std::env::temp_dir()] {
            match LmdbStore::open(missing.to_str().unwrap(), OpenMode::Read, false) {
                Err(Error::NotFound(m)) => assert!(m.contains(missing.to_str().unwrap()), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("data.mdb"), vec![b'x'; 16384]).unwrap();
        for mode in [OpenMode::Read, OpenMode::Write] {
            match LmdbStore::open(path.to_str().unwrap(), mode, false) {
                Err(Error::CorruptChunk(m)) => assert!(m.contains(path.to_str().unwrap()), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        std::fs::remove_dir_all(&path).unwrap();
        std::fs::write(&path, b"a file").unwrap();
        assert!(matches!(
            LmdbStore::open(path.to_str().unwrap(), OpenMode::Write, false),
            Err(Error::InvalidArgument(m)) if m.contains("not a directory")
        ));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_read_only_environment_refuses_a_writer_of_the_same_process() {
        let path = temp("modes");
        drop(LmdbStore::open(path.to_str().unwrap(), OpenMode::Write, false).unwrap());
        let ro = LmdbStore::open(path.to_str().unwrap(), OpenMode::Read, false).unwrap();
        assert!(matches!(
            LmdbStore::open(path.to_str().unwrap(), OpenMode::Write, false),
            Err(Error::InvalidArgument(m)) if m.contains("read-only")
        ));
        drop(ro);
        let rw = LmdbStore::open(path.to_str().unwrap(), OpenMode::Write, false).unwrap();
        rw.set("k", b"v").unwrap();
        drop(rw);
        std::fs::remove_dir_all(&path).unwrap();
    }
}
