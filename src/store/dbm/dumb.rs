//! Python's `dbm.dumb` database: `PATH.dat` holds the values, each starting on a 512-byte
//! boundary (the gap before it filled with zero bytes), and `PATH.dir` the index, a text line
//! per key ([`super::dumb_index`]); `PATH.bak` keeps the index as it was before its last
//! rewrite. Python appends a new key's value and index line, overwrites a value in place when
//! the new one fits the old one's blocks, else appends it, and rewrites the whole index from
//! memory when a key is deleted and when the database is closed; a later line for a key
//! replaces an earlier one when the index is read.
//!
//! Here, so that a crash never leaves a torn or lost value: every value is appended (never
//! written over another), then its index line, so the index never points at bytes not yet
//! written; the index is rewritten (on a deletion, and at close when lines for replaced values
//! piled up) into a new file renamed over `PATH.dir`. A line torn by a crash at the end of the
//! index is ignored (the value it would have named was not stored) and mended by the next
//! writer. What the format cannot give: space is never reclaimed (as in Python, a replaced or
//! deleted value's blocks stay in `PATH.dat`, and since values are never overwritten in place
//! a rewritten chunk always takes new blocks); without `fsync` a power loss may lose the last
//! writes (with it, each write's data and index line reach the disk before it returns); and
//! there is no locking between processes (as in Python: one process writes at a time).

use super::dumb_index::{self, Entry};
use super::Database;
use crate::error::{Error, Result};
use crate::store::OpenMode;
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, RwLock};

/// Values start at multiples of this many bytes in `PATH.dat`.
const BLOCK: u64 = 512;

/// An open `dbm.dumb` database.
#[derive(Debug)]
pub struct DumbDatabase {
    dat_path: PathBuf,
    dir_path: PathBuf,
    bak_path: PathBuf,
    dat: File,
    index: RwLock<BTreeMap<Vec<u8>, Entry>>,
    /// `None` when opened read-only.
    writer: Option<Mutex<Writer>>,
    fsync: bool,
}

/// What writers share: the index file opened for appending and where the data ends.
#[derive(Debug)]
struct Writer {
    dir: File,
    /// The length of `PATH.dat`: the next value starts at the first block boundary from here.
    end: u64,
    /// Index lines naming a value a later line replaced: the index is rewritten at close when
    /// there are any.
    stale_lines: usize,
    /// Deletions made in memory, numbered, and how many of them an index rewrite has stored:
    /// a deletion waiting for its rewrite finds it done when another thread's rewrite came
    /// after it.
    deletions: u64,
    deletions_stored: u64,
    /// Set when an index rewrite failed after the index in memory changed: writes are then
    /// refused, since memory and file disagree.
    broken: Option<String>,
}

/// `PATH` with `suffix` appended to its file name.
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

impl DumbDatabase {
    /// Opens the database at `base` (its files `base.dat`, `base.dir`, `base.bak`). In
    /// [`OpenMode::Write`] missing files are created, as Python's `dbm.dumb.open(base, "c")`
    /// does; a missing `base.dir` is an empty index, as in Python.
    pub fn open(base: &Path, mode: OpenMode, fsync: bool) -> Result<DumbDatabase> {
        let dat_path = with_suffix(base, ".dat");
        let dir_path = with_suffix(base, ".dir");
        let bak_path = with_suffix(base, ".bak");
        let writable = mode == OpenMode::Write;
        let dat = OpenOptions::new()
            .read(true)
            .write(writable)
            .create(writable)
            .truncate(false)
            .open(&dat_path)
            .map_err(|e| match e.kind() {
                ErrorKind::NotFound => Error::NotFound(format!(
                    "dbm.dumb database {}: {} does not exist",
                    base.display(),
                    dat_path.display()
                )),
                _ => Error::io(format!("opening {}", dat_path.display()), e),
            })?;
        let text = match fs::read(&dir_path) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(Error::io(format!("reading {}", dir_path.display()), e)),
        };
        let (index, stale_lines, mended) = read_index(&text, &dir_path)?;
        let writer = match writable {
            false => None,
            true => Some(Mutex::new(Writer {
                dir: open_for_appending(&dir_path)?,
                end: dat
                    .metadata()
                    .map_err(|e| Error::io(format!("reading {}", dat_path.display()), e))?
                    .len(),
                stale_lines,
                deletions: 0,
                deletions_stored: 0,
                broken: None,
            })),
        };
        let db = DumbDatabase {
            dat_path,
            dir_path,
            bak_path,
            dat,
            index: RwLock::new(index),
            writer,
            fsync,
        };
        if writable {
            // An index not ending in a line break (a line torn by a crash, or written by
            // hand) would have the next line appended to its last one: it is written anew.
            if mended || !(text.is_empty() || text.ends_with(b"\n")) {
                let mut writer = db.lock_writer()?;
                db.rewrite_index(&mut writer)?;
            }
            if fsync {
                sync_dir_of(&db.dat_path)?;
            }
        }
        Ok(db)
    }

    fn read_index(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<Vec<u8>, Entry>> {
        self.index.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write_index(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<Vec<u8>, Entry>> {
        self.index.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The writers' state, or why writing is refused.
    fn lock_writer(&self) -> Result<MutexGuard<'_, Writer>> {
        let writer = self
            .writer
            .as_ref()
            .ok_or_else(|| {
                Error::ReadOnly(format!("{} was opened read-only", self.dir_path.display()))
            })?
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match &writer.broken {
            Some(why) => Err(Error::Io(format!(
                "{} cannot be written until it is opened again: {why}",
                self.dir_path.display()
            ))),
            None => Ok(writer),
        }
    }

    /// Writes the index in memory to a new file and renames it over `PATH.dir`, keeping the
    /// old index as `PATH.bak` (as Python does); the writer then appends to the new file.
    fn rewrite_index(&self, writer: &mut Writer) -> Result<()> {
        let text: Vec<u8> = self
            .read_index()
            .iter()
            .flat_map(|(key, entry)| dumb_index::line(key, *entry))
            .collect();
        let temp = with_suffix(
            &self.dir_path,
            &format!(".libzarr-new-{}", std::process::id()),
        );
        let written = (|| {
            let mut file = File::create(&temp)?;
            file.write_all(&text)?;
            if self.fsync {
                file.sync_all()?;
            }
            match fs::remove_file(&self.bak_path) {
                Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            if self.dir_path.exists() && fs::hard_link(&self.dir_path, &self.bak_path).is_err() {
                fs::copy(&self.dir_path, &self.bak_path)?;
            }
            fs::rename(&temp, &self.dir_path)?;
            if self.fsync {
                sync_dir_of(&self.dir_path).map_err(std::io::Error::other)?;
            }
            Ok(())
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&temp);
            return Err(Error::io(
                format!("rewriting {}", self.dir_path.display()),
                e,
            ));
        }
        writer.dir = open_for_appending(&self.dir_path)?;
        writer.stale_lines = 0;
        Ok(())
    }

    /// Fails unless the entry lies within `PATH.dat`, naming both.
    fn check_within(&self, entry: Entry, dat_len: u64) -> Result<()> {
        match entry.pos.checked_add(entry.len) {
            Some(end) if end <= dat_len => Ok(()),
            _ => Err(Error::CorruptChunk(format!(
                "the index {} places the value at bytes {}..{}+{} of {}, which holds {dat_len} bytes",
                self.dir_path.display(),
                entry.pos,
                entry.pos,
                entry.len,
                self.dat_path.display()
            ))),
        }
    }
}

impl Database for DumbDatabase {
    fn get_into(&self, key: &[u8], buf: &mut Vec<u8>) -> Result<bool> {
        buf.clear();
        let Some(entry) = self.read_index().get(key).copied() else {
            return Ok(false);
        };
        let dat_len = self
            .dat
            .metadata()
            .map_err(|e| Error::io(format!("reading {}", self.dat_path.display()), e))?
            .len();
        self.check_within(entry, dat_len)?;
        let len = usize::try_from(entry.len)
            .map_err(|_| Error::TooLarge(format!("a value of {} bytes", entry.len)))?;
        buf.try_reserve_exact(len)
            .map_err(|_| Error::TooLarge(format!("a value of {len} bytes")))?;
        buf.resize(len, 0);
        crate::store::read_file_at(&self.dat, entry.pos, buf)
            .map_err(|e| Error::io(format!("reading {}", self.dat_path.display()), e))?;
        Ok(true)
    }

    fn value_len(&self, key: &[u8]) -> Result<Option<u64>> {
        Ok(self.read_index().get(key).map(|e| e.len))
    }

    fn set(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut writer = self.lock_writer()?;
        let pos = writer.end.div_ceil(BLOCK) * BLOCK;
        let entry = Entry {
            pos,
            len: value.len() as u64,
        };
        let data = (|| {
            let gap = (pos - writer.end) as usize;
            self.dat
                .write_all_at(&[0u8; BLOCK as usize][..gap], writer.end)?;
            self.dat.write_all_at(value, pos)?;
            match self.fsync {
                true => self.dat.sync_data(),
                false => Ok(()),
            }
        })();
        data.map_err(|e| Error::io(format!("writing {}", self.dat_path.display()), e))?;
        writer.end = pos + entry.len;
        let line = dumb_index::line(key, entry);
        let appended = writer.dir.write_all(&line).and_then(|()| match self.fsync {
            true => writer.dir.sync_data(),
            false => Ok(()),
        });
        if let Err(e) = appended {
            // Part of the line may have been written: the index is written anew from memory
            // (which does not have the new entry), else writing stops here.
            let error = Error::io(format!("appending to {}", self.dir_path.display()), e);
            if let Err(mend) = self.rewrite_index(&mut writer) {
                writer.broken = Some(mend.to_string());
            }
            return Err(error);
        }
        if self.write_index().insert(key.to_vec(), entry).is_some() {
            writer.stale_lines += 1;
        }
        Ok(())
    }

    fn remove(&self, key: &[u8]) -> Result<()> {
        let ticket = {
            let mut writer = self.lock_writer()?;
            if self.write_index().remove(key).is_none() {
                return Ok(());
            }
            writer.deletions += 1;
            writer.deletions
        };
        let mut writer = self.lock_writer()?;
        if writer.deletions_stored >= ticket {
            return Ok(());
        }
        let upto = writer.deletions;
        match self.rewrite_index(&mut writer) {
            Ok(()) => {
                writer.deletions_stored = upto;
                Ok(())
            }
            Err(e) => {
                writer.broken = Some(e.to_string());
                Err(e)
            }
        }
    }

    fn keys(&self) -> Result<Vec<Vec<u8>>> {
        Ok(self.read_index().keys().cloned().collect())
    }

    fn flush(&self) -> Result<()> {
        if self.writer.is_none() {
            return Ok(());
        }
        let mut writer = self.lock_writer()?;
        if writer.stale_lines > 0 {
            self.rewrite_index(&mut writer)?;
        }
        Ok(())
    }
}

impl Drop for DumbDatabase {
    fn drop(&mut self) {
        // Best effort, as Python's close: the index holds every value already.
        let _ = self.flush();
    }
}

/// Reads the index text: the entries (a later line for a key replacing an earlier one), how
/// many lines later ones replaced, and whether a torn last line was left out.
fn read_index(text: &[u8], path: &Path) -> Result<(BTreeMap<Vec<u8>, Entry>, usize, bool)> {
    let mut index = BTreeMap::new();
    let mut stale = 0;
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    for (n, line) in lines.iter().enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match dumb_index::parse(line) {
            Ok((key, entry)) => {
                if index.insert(key, entry).is_some() {
                    stale += 1;
                }
            }
            // The last line without its line break: a write cut short.
            Err(_) if n + 1 == lines.len() => return Ok((index, stale, true)),
            Err(why) => {
                return Err(Error::CorruptChunk(format!(
                    "{} is not a dbm.dumb index: line {}: {why}",
                    path.display(),
                    n + 1
                )))
            }
        }
    }
    Ok((index, stale, false))
}

fn open_for_appending(path: &Path) -> Result<File> {
    OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| Error::io(format!("opening {}", path.display()), e))
}

/// Flushes the directory holding `path`, so that a name created or renamed in it lasts.
fn sync_dir_of(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(format!("flushing {}", dir.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("libzarr-dumb-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir.join("db")
    }

    #[test]
    fn values_are_appended_on_block_boundaries_and_indexed_line_by_line() {
        let base = base("layout");
        let db = DumbDatabase::open(&base, OpenMode::Write, false).unwrap();
        db.set(b"a", b"12345").unwrap();
        db.set(b"b", b"xy").unwrap();
        db.set(b"a", b"abc").unwrap();
        let dat = fs::read(with_suffix(&base, ".dat")).unwrap();
        assert_eq!(dat.len(), 1024 + 3);
        assert_eq!(&dat[..5], b"12345");
        assert!(dat[5..512].iter().all(|&b| b == 0));
        assert_eq!(&dat[512..514], b"xy");
        assert_eq!(&dat[1024..], b"abc");
        let dir = fs::read(with_suffix(&base, ".dir")).unwrap();
        assert_eq!(dir, b"'a', (0, 5)\n'b', (512, 2)\n'a', (1024, 3)\n");
        let mut buf = Vec::new();
        assert!(db.get_into(b"a", &mut buf).unwrap());
        assert_eq!(buf, b"abc");
        db.flush().unwrap();
        let dir = fs::read(with_suffix(&base, ".dir")).unwrap();
        assert_eq!(dir, b"'a', (1024, 3)\n'b', (512, 2)\n");
        db.remove(b"b").unwrap();
        db.remove(b"b").unwrap();
        drop(db);
        assert_eq!(
            fs::read(with_suffix(&base, ".dir")).unwrap(),
            b"'a', (1024, 3)\n"
        );
        assert_eq!(
            fs::read(with_suffix(&base, ".bak")).unwrap(),
            b"'a', (1024, 3)\n'b', (512, 2)\n"
        );
        let ro = DumbDatabase::open(&base, OpenMode::Read, false).unwrap();
        assert_eq!(ro.keys().unwrap(), vec![b"a".to_vec()]);
        assert!(matches!(ro.set(b"c", b""), Err(Error::ReadOnly(_))));
        fs::remove_dir_all(base.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_torn_last_line_is_left_out_and_mended_and_damage_is_an_error() {
        let base = base("torn");
        fs::write(with_suffix(&base, ".dat"), b"hello").unwrap();
        fs::write(with_suffix(&base, ".dir"), b"'a', (0, 5)\n'b', (51").unwrap();
        let ro = DumbDatabase::open(&base, OpenMode::Read, false).unwrap();
        assert_eq!(ro.keys().unwrap(), vec![b"a".to_vec()]);
        drop(ro);
        let rw = DumbDatabase::open(&base, OpenMode::Write, false).unwrap();
        rw.set(b"c", b"!").unwrap();
        drop(rw);
        assert_eq!(
            fs::read(with_suffix(&base, ".dir")).unwrap(),
            b"'a', (0, 5)\n'c', (512, 1)\n"
        );
        fs::write(with_suffix(&base, ".dir"), b"'a', (0, 5)\nnot an entry\n").unwrap();
        match DumbDatabase::open(&base, OpenMode::Read, false) {
            Err(Error::CorruptChunk(m)) => {
                assert!(m.contains("line 2") && m.contains(".dir"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        fs::write(with_suffix(&base, ".dir"), b"'a', (0, 9999)\n").unwrap();
        let ro = DumbDatabase::open(&base, OpenMode::Read, false).unwrap();
        match ro.get_into(b"a", &mut Vec::new()) {
            Err(Error::CorruptChunk(m)) => {
                assert!(m.contains(".dat") && m.contains("0..0+9999"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        fs::remove_dir_all(base.parent().unwrap()).unwrap();
    }
}
