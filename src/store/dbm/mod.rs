//! `dbm://PATH` stores: the database files Python's `dbm` module writes on Linux, as
//! zarr-python 2's `DBMStore` uses them (each key its ASCII bytes, each value the bytes
//! stored). Two formats: `dbm.dumb` (`PATH.dir` and `PATH.dat`, [`dumb`]) and `dbm.gnu`
//! (GDBM: the file `PATH`, [`gnu`]). An existing database is opened in the format it has,
//! told apart as Python's `dbm.whichdb` does; a new one is GDBM, as `dbm.open` makes it on a
//! Python with GDBM, unless the option `dbm_format` says `"dumb"`.

mod dumb;
mod dumb_index;
mod gnu;

use super::{sorted_keys, DbmFormat, OpenMode, Store};
use crate::error::{Error, Result};
use crate::path::{validate_key, validate_prefix};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// The databases open in this process, by canonical path: a second store opened on one shares
/// it (a GDBM file's lock would refuse a second opener, and two `dbm.dumb` writers would lose
/// each other's index lines). A read-only one is not shared with a writer.
static OPEN: Mutex<Vec<Shared>> = Mutex::new(Vec::new());

/// One entry of [`OPEN`].
struct Shared {
    path: String,
    mode: OpenMode,
    format: DbmFormat,
    db: Weak<dyn Database>,
}

/// What each format gives the store: values under byte keys, from any thread.
trait Database: Send + Sync + std::fmt::Debug {
    /// Reads the value under `key` into `buf` (replacing its contents); `false` if none.
    fn get_into(&self, key: &[u8], buf: &mut Vec<u8>) -> Result<bool>;
    /// The length of the value under `key`, if any.
    fn value_len(&self, key: &[u8]) -> Result<Option<u64>>;
    /// Stores `value` under `key`.
    fn set(&self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Removes `key`; a missing key is not an error.
    fn remove(&self, key: &[u8]) -> Result<()>;
    /// Every key, in any order.
    fn keys(&self) -> Result<Vec<Vec<u8>>>;
    /// Writes out what is held in memory.
    fn flush(&self) -> Result<()>;
}

/// A database of Python's `dbm` module as a store; see the module documentation.
#[derive(Debug)]
pub struct DbmStore {
    location: String,
    format: DbmFormat,
    db: Arc<dyn Database>,
    /// What names the database whatever the location's spelling.
    canonical: String,
}

impl DbmStore {
    /// Opens the database at `path` (`location` is what messages call it). An existing one is
    /// opened in its format (`format`, when given, must be that one); a missing one is an
    /// error in [`OpenMode::Read`], else created in `format` (GDBM when `None`). `fsync` makes
    /// every write reach the disk before it returns.
    pub fn open(
        location: &str,
        path: &str,
        mode: OpenMode,
        format: Option<DbmFormat>,
        fsync: bool,
    ) -> Result<DbmStore> {
        if path.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "store location {location:?} names no database file (dbm://PATH)"
            )));
        }
        let base = PathBuf::from(path);
        let canonical = super::canonical_file(path);
        let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
        open.retain(|s| s.db.strong_count() > 0);
        let shared = open
            .iter()
            .find(|s| s.path == canonical && (s.mode == OpenMode::Write || mode == OpenMode::Read));
        if let Some(shared) = shared {
            if let Some(db) = shared.db.upgrade() {
                check_format(location, shared.format, format)?;
                return Ok(DbmStore {
                    location: location.to_string(),
                    format: shared.format,
                    db,
                    canonical,
                });
            }
        }
        if open.iter().any(|s| s.path == canonical) {
            return Err(Error::InvalidArgument(format!(
                "dbm store {location:?}: this process has the database open read-only; close \
                 those stores before opening it for writing"
            )));
        }
        let found = detect(&base).map_err(|e| e.context(format!("dbm store {location:?}")))?;
        let chosen = match (found, format) {
            (Some(found), asked) => {
                check_format(location, found, asked)?;
                found
            }
            (None, _) if mode == OpenMode::Read => {
                return Err(Error::NotFound(format!(
                    "dbm store {location:?}: there is no database at {path:?} (neither a GDBM \
                     file nor {path}.dir and {path}.dat)"
                )))
            }
            (None, asked) => asked.unwrap_or(DbmFormat::Gnu),
        };
        let db: Arc<dyn Database> = match chosen {
            DbmFormat::Dumb => Arc::new(dumb::DumbDatabase::open(&base, mode, fsync)?),
            DbmFormat::Gnu => {
                Arc::new(gnu::GnuDatabase::open(&base, mode, found.is_none(), fsync)?)
            }
        };
        open.push(Shared {
            path: canonical.clone(),
            mode,
            format: chosen,
            db: Arc::downgrade(&db),
        });
        Ok(DbmStore {
            location: location.to_string(),
            format: chosen,
            db,
            canonical,
        })
    }

    /// The database's path, absolute and with links resolved: the same for every location
    /// naming it.
    pub fn canonical_path(&self) -> &str {
        &self.canonical
    }

    /// The database's format.
    pub fn format(&self) -> DbmFormat {
        self.format
    }

    /// Adds the store and `key` to an error's message.
    fn about(&self, key: &str) -> impl Fn(Error) -> Error + '_ {
        let context = format!("dbm store {:?}, key {key:?}", self.location);
        move |e| e.context(&context)
    }

    /// Every key (those that are not UTF-8 or not valid keys, which zarr never writes, left
    /// out), sorted, as a map for the sorted-key listings.
    fn key_map(&self) -> Result<BTreeMap<String, ()>> {
        let keys = self
            .db
            .keys()
            .map_err(|e| e.context(format!("listing dbm store {:?}", self.location)))?;
        Ok(keys
            .into_iter()
            .filter_map(|k| String::from_utf8(k).ok())
            .filter(|k| validate_key(k).is_ok())
            .map(|k| (k, ()))
            .collect())
    }
}

/// Fails unless the format `asked` for (if any) is the database's, `found`.
fn check_format(location: &str, found: DbmFormat, asked: Option<DbmFormat>) -> Result<()> {
    match asked {
        Some(asked) if asked != found => Err(Error::InvalidArgument(format!(
            "dbm store {location:?} is a dbm.{} database, not dbm.{} as the store option \
             \"dbm_format\" says",
            found.name(),
            asked.name()
        ))),
        _ => Ok(()),
    }
}

/// The format of the database at `path`, as Python's `dbm.whichdb` tells it (`None`: there is
/// none): `PATH.dat` beside a `PATH.dir` that is empty or starts with a quote is `dbm.dumb`;
/// a file `PATH` starting with a GDBM magic number is `dbm.gnu`. A `dbm.ndbm` database
/// (`PATH.pag` and `PATH.dir`) and any other file at `PATH` are errors.
fn detect(path: &Path) -> Result<Option<DbmFormat>> {
    let dir = dumb::with_suffix(path, ".dir");
    if dumb::with_suffix(path, ".pag").exists() && dir.exists() {
        return Err(Error::Unsupported(format!(
            "{} is a dbm.ndbm database (PATH.pag and PATH.dir): only dbm.dumb and dbm.gnu are read",
            path.display()
        )));
    }
    if dumb::with_suffix(path, ".dat").exists() {
        if let Ok(head) = first_bytes(&dir, 1) {
            if head.is_empty() || head[0] == b'\'' || head[0] == b'"' {
                return Ok(Some(DbmFormat::Dumb));
            }
        }
    }
    match first_bytes(path, 4) {
        Ok(head) if gnu::is_gdbm(&head) => Ok(Some(DbmFormat::Gnu)),
        Ok(head) => Err(Error::InvalidArgument(format!(
            "{} is neither a GDBM database nor a dbm.dumb index (its first bytes: {head:02x?})",
            path.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

/// Up to `n` bytes from the start of the file at `path`.
fn first_bytes(path: &Path, n: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(n);
    std::fs::File::open(path)?
        .take(n as u64)
        .read_to_end(&mut head)?;
    Ok(head)
}

impl Store for DbmStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let mut buf = Vec::new();
        Ok(self.get_into(key, &mut buf)?.then_some(buf))
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>) -> Result<bool> {
        validate_key(key)?;
        self.db
            .get_into(key.as_bytes(), buf)
            .map_err(self.about(key))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        validate_key(key)?;
        self.db.set(key.as_bytes(), value).map_err(self.about(key))
    }

    fn erase(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        self.db.remove(key.as_bytes()).map_err(self.about(key))
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        self.db.value_len(key.as_bytes()).map_err(self.about(key))
    }

    fn contains(&self, key: &str) -> Result<bool> {
        Ok(self.value_len(key)?.is_some())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Ok(sorted_keys::list_prefix(&self.key_map()?, prefix))
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Ok(sorted_keys::list_dir(&self.key_map()?, prefix))
    }

    fn flush(&self) -> Result<()> {
        self.db
            .flush()
            .map_err(|e| e.context(format!("closing dbm store {:?}", self.location)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("libzarr-dbm-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("db")
    }

    #[test]
    fn both_formats_behave_like_a_store_and_are_told_apart_when_opened_again() {
        for format in [DbmFormat::Dumb, DbmFormat::Gnu] {
            let path = place(format.name());
            let p = path.to_str().unwrap();
            let store = DbmStore::open("t", p, OpenMode::Write, Some(format), false).unwrap();
            crate::store::tests::exercise_store(&store);
            store.set("a/0", b"kept").unwrap();
            store.flush().unwrap();
            drop(store);
            let again = DbmStore::open("t", p, OpenMode::Read, None, false).unwrap();
            assert_eq!(again.format(), format);
            assert_eq!(again.get("a/0").unwrap().unwrap(), b"kept");
            assert!(matches!(again.set("a/1", b"!"), Err(Error::ReadOnly(_))));
            let other = match format {
                DbmFormat::Dumb => DbmFormat::Gnu,
                DbmFormat::Gnu => DbmFormat::Dumb,
            };
            drop(again);
            match DbmStore::open("t", p, OpenMode::Write, Some(other), false) {
                Err(Error::InvalidArgument(m)) => assert!(m.contains("dbm_format"), "{m}"),
                other => panic!("{other:?}"),
            }
            std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
        }
    }

    #[test]
    fn a_new_database_is_gdbm_and_missing_or_foreign_files_are_errors() {
        let path = place("new");
        let p = path.to_str().unwrap();
        match DbmStore::open("dbm://x", p, OpenMode::Read, None, false) {
            Err(Error::NotFound(m)) => assert!(m.contains("dbm://x") && m.contains(p), "{m}"),
            other => panic!("{other:?}"),
        }
        let store = DbmStore::open("dbm://x", p, OpenMode::Write, None, true).unwrap();
        assert_eq!(store.format(), DbmFormat::Gnu);
        store.set("k", b"v").unwrap();
        drop(store);
        assert!(gnu::is_gdbm(&std::fs::read(&path).unwrap()));
        std::fs::write(&path, b"not a database").unwrap();
        match DbmStore::open("dbm://x", p, OpenMode::Write, None, false) {
            Err(Error::InvalidArgument(m)) => {
                assert!(m.contains("neither") && m.contains(p), "{m}")
            }
            other => panic!("{other:?}"),
        }
        let mut damaged = vec![0xce, 0x9a, 0x57, 0x13];
        damaged.extend_from_slice(&[0xff; 60]);
        std::fs::write(&path, damaged).unwrap();
        match DbmStore::open("dbm://x", p, OpenMode::Read, None, false) {
            Err(Error::CorruptChunk(m)) => assert!(m.contains(p), "{m}"),
            other => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn stores_of_one_process_share_a_database_and_a_gdbm_writer_excludes_other_openers() {
        let path = place("shared");
        let p = path.to_str().unwrap();
        let writer = DbmStore::open("dbm://w", p, OpenMode::Write, None, false).unwrap();
        writer.set("k", b"v").unwrap();
        let reader = DbmStore::open("dbm://r", p, OpenMode::Read, None, false).unwrap();
        assert_eq!(reader.get("k").unwrap().unwrap(), b"v");
        writer.set("k", b"w").unwrap();
        assert_eq!(reader.get("k").unwrap().unwrap(), b"w");
        // Another opener of the file (as another process would be) finds it locked.
        match gnu::GnuDatabase::open(&path, OpenMode::Read, false, false) {
            Err(Error::Io(m)) => assert!(m.contains(p) && m.contains("another process"), "{m}"),
            other => panic!("{other:?}"),
        }
        drop((writer, reader));
        let reader = DbmStore::open("dbm://r", p, OpenMode::Read, None, false).unwrap();
        match DbmStore::open("dbm://w", p, OpenMode::Write, None, false) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("read-only"), "{m}"),
            other => panic!("{other:?}"),
        }
        drop(reader);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }
}
