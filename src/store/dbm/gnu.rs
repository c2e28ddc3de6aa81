//! Python's `dbm.gnu` database (GDBM), through the pure-Rust `gdbm-native`, which reads and
//! writes the files C GDBM does (and so Python's `_gdbm`) without the C library. As C GDBM,
//! it locks the file: a writer excludes every other user, a reader the writers. Changes reach
//! the file when the store is closed, or with `fsync` after every write (GDBM's sync mode);
//! a writer killed before that can leave the database needing recovery (`gdbmtool recover`),
//! as with C GDBM.

use super::Database;
use crate::error::{Error, Result};
use crate::store::OpenMode;
use gdbm_native::{Gdbm, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The magic numbers that open a GDBM file, in either byte order: the original one and those
/// of 32- and 64-bit offsets, with and without a numsync header.
const MAGICS: [u32; 5] = [
    0x1357_9ace,
    0x1357_9acd,
    0x1357_9acf,
    0x1357_9ad0,
    0x1357_9ad1,
];

/// Whether `head` (a file's first bytes) starts with a GDBM magic number.
pub fn is_gdbm(head: &[u8]) -> bool {
    let Some(first) = head.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()) else {
        return false;
    };
    [u32::from_le_bytes(first), u32::from_be_bytes(first)]
        .iter()
        .any(|m| MAGICS.contains(m))
}

/// An open GDBM database; `gdbm-native` does one thing at a time.
#[derive(Debug)]
pub struct GnuDatabase {
    path: PathBuf,
    db: Mutex<Gdbm>,
}

impl GnuDatabase {
    /// Opens the GDBM file `path`: read-only (a shared lock), or for writing (an exclusive
    /// lock), creating it when `create`; `sync` writes every change through to the disk.
    pub fn open(path: &Path, mode: OpenMode, create: bool, sync: bool) -> Result<GnuDatabase> {
        let mut db = OpenOptions::new()
            .write(mode == OpenMode::Write)
            .create(create)
            .sync(sync)
            // As C GDBM's gdbm_open creates them (and so Python's dbm.gnu.open).
            .numsync(false)
            .open(path)
            .map_err(|e| error(path, "opening", e))?;
        if create {
            // Its header written at once, so that others opening it meanwhile find a database.
            db.sync().map_err(|e| error(path, "creating", e))?;
        }
        Ok(GnuDatabase {
            path: path.to_path_buf(),
            db: Mutex::new(db),
        })
    }

    fn db(&self) -> MutexGuard<'_, Gdbm> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A GDBM failure as the library's error, naming the file and what was being done.
fn error(path: &Path, doing: &str, e: gdbm_native::Error) -> Error {
    use gdbm_native::Error as G;
    let what = format!("{doing} GDBM database {}", path.display());
    match e {
        G::Io(io) if io.kind() == std::io::ErrorKind::NotFound => {
            Error::NotFound(format!("{what}: it does not exist"))
        }
        G::Io(io) => Error::io(what, io),
        G::Locked => Error::Io(format!(
            "{what}: another process has it open (a writer excludes everyone, a reader the writers)"
        )),
        G::ReadOnly => Error::ReadOnly(format!("{what}: it was opened read-only")),
        G::RecordTooLarge { .. } | G::FileTooLarge { .. } => {
            Error::TooLarge(format!("{what}: {e}"))
        }
        G::Inconsistent => Error::Io(format!("{what}: {e}")),
        _ => Error::CorruptChunk(format!("{what}: {e}")),
    }
}

impl Database for GnuDatabase {
    fn get_into(&self, key: &[u8], buf: &mut Vec<u8>) -> Result<bool> {
        buf.clear();
        let value: Option<Vec<u8>> = self
            .db()
            .get(key)
            .map_err(|e| error(&self.path, "reading", e))?;
        Ok(value.map(|v| *buf = v).is_some())
    }

    fn value_len(&self, key: &[u8]) -> Result<Option<u64>> {
        let mut buf = Vec::new();
        Ok(self.get_into(key, &mut buf)?.then_some(buf.len() as u64))
    }

    fn set(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.db()
            .insert(key, value)
            .map(drop)
            .map_err(|e| error(&self.path, "writing", e))
    }

    fn remove(&self, key: &[u8]) -> Result<()> {
        self.db()
            .remove(key)
            .map(drop)
            .map_err(|e| error(&self.path, "erasing from", e))
    }

    fn keys(&self) -> Result<Vec<Vec<u8>>> {
        self.db()
            .keys::<Vec<u8>>()
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| error(&self.path, "listing", e))
    }

    fn flush(&self) -> Result<()> {
        let mut db = self.db();
        if !db.is_writable() {
            return Ok(());
        }
        db.sync().map_err(|e| error(&self.path, "writing out", e))
    }
}
