//! A store in an SQLite database file, in the layout of zarr-python 2's `SQLiteStore`: one
//! table `zarr(k TEXT PRIMARY KEY, v BLOB)`, a key per row, its value as a blob.

use super::{sorted_keys, OpenMode, Store};
use crate::error::{Error, Result};
use crate::path::{validate_key, validate_prefix};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// The table zarr-python 2's `SQLiteStore` creates, and this store too.
const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS zarr(k TEXT PRIMARY KEY, v BLOB)";

/// How long a statement waits for another connection or process holding the database's lock
/// before failing (Python's `sqlite3` waits 5 s; a writer of large chunks may hold it longer).
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Idle connections kept for reuse; more may be open at once while threads use them.
const IDLE_CONNECTIONS: usize = 16;

/// A store in an SQLite database file (`sqlite://PATH`), read and written as zarr-python 2's
/// `SQLiteStore` does (keys as text, values as blobs, `REPLACE INTO` to set).
///
/// Threads: every call takes a connection of its own from a small pool (opening one when none
/// is idle), so reads from the thread pool run in parallel, each through its own SQLite
/// connection and page cache; SQLite's file locks order writers, within the process and
/// across processes alike, and a statement that finds the database locked waits for it
/// ([`BUSY_TIMEOUT`]) rather than failing at once. Each write is one transaction in SQLite's
/// default rollback journal (the file's journal mode is left as zarr-python leaves it), so a
/// writer killed at any moment leaves every key with its old or its new value. Writes are not
/// flushed to the disk (`PRAGMA synchronous = OFF`) unless the store option `fsync` is given
/// (`FULL`), as for directory stores.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    mode: OpenMode,
    fsync: bool,
    idle: Mutex<Vec<Connection>>,
}

impl SqliteStore {
    /// Opens the database file `path`: for [`OpenMode::Write`] it is created if missing (its
    /// directory must exist) and the table `zarr` with it; for [`OpenMode::Read`] a missing file
    /// is [`Error::NotFound`] and a database without the table an error. A file that is not an
    /// SQLite database is [`Error::CorruptChunk`] naming it.
    pub fn open(path: &str, mode: OpenMode, fsync: bool) -> Result<Self> {
        if path.is_empty() {
            return Err(Error::InvalidArgument(
                "sqlite:// store location has no file path (sqlite://PATH)".into(),
            ));
        }
        let path = PathBuf::from(path);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                return Err(Error::InvalidArgument(format!(
                    "sqlite store {} is a directory, not a database file",
                    path.display()
                )))
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && mode == OpenMode::Read => {
                return Err(Error::NotFound(format!(
                    "sqlite store {} does not exist",
                    path.display()
                )))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(format!("sqlite store {}", path.display()), e)),
        }
        let store = SqliteStore {
            path,
            mode,
            fsync,
            idle: Mutex::new(Vec::new()),
        };
        let connection = store.connect(true)?;
        match mode {
            OpenMode::Write => connection
                .execute(CREATE_TABLE, [])
                .map(drop)
                .map_err(|e| store.error("creating table zarr", e))?,
            OpenMode::Read => {
                let exists = connection
                    .query_row(
                        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'zarr'",
                        [],
                        |row| row.get::<_, i64>(0),
                    )
                    .map_err(|e| store.error("reading its schema", e))?;
                if exists == 0 {
                    return Err(Error::InvalidArgument(format!(
                        "sqlite store {}: the database has no table \"zarr\" (not written by a Zarr SQLite store)",
                        store.path.display()
                    )));
                }
            }
        };
        connection
            .prepare("SELECT k, v FROM zarr LIMIT 0")
            .map_err(|e| store.error("reading table zarr", e))?;
        store.put_back(connection);
        Ok(store)
    }

    /// A new connection: read-only or read-write as the store, creating the file when
    /// `create` (only the first, at open).
    fn connect(&self, create: bool) -> Result<Connection> {
        let flags = match self.mode {
            OpenMode::Read => OpenFlags::SQLITE_OPEN_READ_ONLY,
            OpenMode::Write if create => {
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
            }
            OpenMode::Write => OpenFlags::SQLITE_OPEN_READ_WRITE,
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection =
            Connection::open_with_flags(&self.path, flags).map_err(|e| self.error("opening", e))?;
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| self.error("setting its busy timeout", e))?;
        if self.mode == OpenMode::Write {
            let synchronous = if self.fsync { "FULL" } else { "OFF" };
            connection
                .pragma_update(None, "synchronous", synchronous)
                .map_err(|e| self.error("setting synchronous", e))?;
        }
        Ok(connection)
    }

    /// Runs `f` on an idle connection (or a new one), then keeps the connection for reuse.
    fn with<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let connection = match idle {
            Some(c) => c,
            None => self.connect(false)?,
        };
        let result = f(&connection);
        self.put_back(connection);
        result
    }

    fn put_back(&self, connection: Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < IDLE_CONNECTIONS {
            idle.push(connection);
        }
    }

    /// An SQLite failure while doing `what`, naming the database file; damage is
    /// [`Error::CorruptChunk`], a database still locked after [`BUSY_TIMEOUT`] an I/O error
    /// saying so.
    fn error(&self, what: impl std::fmt::Display, e: rusqlite::Error) -> Error {
        let message = format!("sqlite store {}: {what}: {e}", self.path.display());
        match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
                Error::CorruptChunk(message)
            }
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Error::Io(format!(
                "{message} (another connection or process held it for {} s)",
                BUSY_TIMEOUT.as_secs()
            )),
            Some(ErrorCode::ReadOnly) if self.mode == OpenMode::Write => {
                Error::PermissionDenied(message)
            }
            Some(ErrorCode::PermissionDenied) => Error::PermissionDenied(message),
            _ => Error::Io(message),
        }
    }

    /// The bytes of `key`'s value as stored: a blob, or text (which zarr-python does not write
    /// but SQLite may hold); any other type is an error naming the key, never a missing value.
    fn bytes<'a>(&self, key: &str, value: ValueRef<'a>) -> Result<&'a [u8]> {
        match value {
            ValueRef::Blob(b) | ValueRef::Text(b) => Ok(b),
            other => Err(Error::CorruptChunk(format!(
                "sqlite store {}: key {key:?} holds {:?}, not bytes",
                self.path.display(),
                other.data_type()
            ))),
        }
    }

    /// Runs `f` on the value of `key` (`None`: no row).
    fn with_value<T>(&self, key: &str, f: impl FnOnce(&[u8]) -> T) -> Result<Option<T>> {
        validate_key(key)?;
        self.with(|c| {
            let mut statement = c
                .prepare_cached("SELECT v FROM zarr WHERE k = ?1")
                .map_err(|e| self.error(format_args!("reading {key:?}"), e))?;
            let mut rows = statement
                .query([key])
                .map_err(|e| self.error(format_args!("reading {key:?}"), e))?;
            match rows
                .next()
                .map_err(|e| self.error(format_args!("reading {key:?}"), e))?
            {
                Some(row) => {
                    let value = row
                        .get_ref(0)
                        .map_err(|e| self.error(format_args!("reading {key:?}"), e))?;
                    Ok(Some(f(self.bytes(key, value)?)))
                }
                None => Ok(None),
            }
        })
    }

    /// Runs `f` on every key from `bound` on (after it when `after`), in order, until it says
    /// stop (`false`); `f` also gets the key's value length. Keys that are not text (which
    /// zarr-python never writes) are left out.
    fn scan(&self, bound: &str, after: bool, mut f: impl FnMut(&str, u64) -> bool) -> Result<()> {
        let sql = match after {
            true => "SELECT k, octet_length(v) FROM zarr WHERE k > ?1 ORDER BY k",
            false => "SELECT k, octet_length(v) FROM zarr WHERE k >= ?1 ORDER BY k",
        };
        self.with(|c| {
            let failed = |e| self.error(format_args!("listing keys from {bound:?}"), e);
            let mut statement = c.prepare_cached(sql).map_err(failed)?;
            let mut rows = statement.query([bound]).map_err(failed)?;
            while let Some(row) = rows.next().map_err(failed)? {
                // Blob keys sort after every text key: none of them comes later.
                let ValueRef::Text(key) = row.get_ref(0).map_err(failed)? else {
                    break;
                };
                let Ok(key) = std::str::from_utf8(key) else {
                    continue;
                };
                let len = row.get::<_, Option<i64>>(1).map_err(failed)?.unwrap_or(0);
                if !f(key, len as u64) {
                    break;
                }
            }
            Ok(())
        })
    }
}

impl Store for SqliteStore {
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
        self.with(|c| {
            c.prepare_cached("REPLACE INTO zarr VALUES (?1, ?2)")
                .and_then(|mut s| s.execute(rusqlite::params![key, value]))
                .map_err(|e| self.error(format_args!("writing {key:?}"), e))
                .map(drop)
        })
    }

    fn erase(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        self.with(|c| {
            c.prepare_cached("DELETE FROM zarr WHERE k = ?1")
                .and_then(|mut s| s.execute([key]))
                .map_err(|e| self.error(format_args!("erasing {key:?}"), e))
                .map(drop)
        })
    }

    fn contains(&self, key: &str) -> Result<bool> {
        validate_key(key)?;
        self.with(|c| {
            c.prepare_cached("SELECT 1 FROM zarr WHERE k = ?1")
                .and_then(|mut s| s.exists([key]))
                .map_err(|e| self.error(format_args!("looking up {key:?}"), e))
        })
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        let failed = |e| self.error(format_args!("sizing {key:?}"), e);
        let found = self.with(|c| {
            c.prepare_cached("SELECT typeof(v), octet_length(v) FROM zarr WHERE k = ?1")
                .and_then(|mut s| {
                    s.query_row([key], |row| {
                        Ok((row.get::<_, String>(0)?, row.get::<_, Option<i64>>(1)?))
                    })
                    .optional()
                })
                .map_err(failed)
        })?;
        match found {
            None => Ok(None),
            Some((kind, Some(len))) if kind == "blob" || kind == "text" => Ok(Some(len as u64)),
            Some((kind, _)) => Err(Error::CorruptChunk(format!(
                "sqlite store {}: key {key:?} holds {kind}, not bytes",
                self.path.display()
            ))),
        }
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
        let path =
            std::env::temp_dir().join(format!("libzarr-sqlite-{}-{name}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        path
    }

    #[test]
    fn behaves_like_a_store() {
        let path = temp("store");
        let store = SqliteStore::open(path.to_str().unwrap(), OpenMode::Write, false).unwrap();
        super::super::tests::exercise_store(&store);
        drop(store);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn read_only_missing_and_damaged_files_are_errors_naming_them() {
        let path = temp("missing");
        match SqliteStore::open(path.to_str().unwrap(), OpenMode::Read, false) {
            Err(Error::NotFound(m)) => assert!(m.contains(path.to_str().unwrap()), "{m}"),
            other => panic!("{other:?}"),
        }
        std::fs::write(&path, vec![b'x'; 4096]).unwrap();
        for mode in [OpenMode::Read, OpenMode::Write] {
            match SqliteStore::open(path.to_str().unwrap(), mode, false) {
                Err(Error::CorruptChunk(m)) => {
                    assert!(m.contains(path.to_str().unwrap()), "{m}")
                }
                other => panic!("{other:?}"),
            }
        }
        std::fs::remove_file(&path).unwrap();
        let other = temp("other");
        Connection::open(&other)
            .unwrap()
            .execute("CREATE TABLE t(x)", [])
            .unwrap();
        match SqliteStore::open(other.to_str().unwrap(), OpenMode::Read, false) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("no table"), "{m}"),
            other => panic!("{other:?}"),
        }
        std::fs::remove_file(&other).unwrap();
    }

    #[test]
    fn values_of_other_types_are_errors_not_missing() {
        let path = temp("types");
        let store = SqliteStore::open(path.to_str().unwrap(), OpenMode::Write, false).unwrap();
        let c = Connection::open(&path).unwrap();
        c.execute(
            "INSERT INTO zarr VALUES ('n', NULL), ('i', 7), ('t', 'text')",
            [],
        )
        .unwrap();
        for key in ["n", "i"] {
            assert!(matches!(store.get(key), Err(Error::CorruptChunk(m)) if m.contains(key)));
            assert!(matches!(store.value_len(key), Err(Error::CorruptChunk(_))));
        }
        assert_eq!(store.get("t").unwrap().unwrap(), b"text");
        assert_eq!(store.value_len("t").unwrap(), Some(4));
        drop(store);
        std::fs::remove_file(&path).unwrap();
    }

    /// Writers in two threads with connections of their own, and a second store handle on the
    /// same file, all wait for each other's locks instead of failing.
    #[test]
    fn concurrent_writers_wait_for_the_lock() {
        let path = temp("writers");
        let a = SqliteStore::open(path.to_str().unwrap(), OpenMode::Write, false).unwrap();
        let b = SqliteStore::open(path.to_str().unwrap(), OpenMode::Write, false).unwrap();
        std::thread::scope(|s| {
            for (t, store) in [&a, &b, &a, &b].into_iter().enumerate() {
                s.spawn(move || {
                    for i in 0..50 {
                        store.set(&format!("t{t}/{i}"), &[t as u8; 1000]).unwrap();
                    }
                });
            }
        });
        for t in 0..4 {
            assert_eq!(b.list_prefix(&format!("t{t}/")).unwrap().len(), 50);
        }
        drop((a, b));
        std::fs::remove_file(&path).unwrap();
    }
}
