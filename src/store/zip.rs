//! A zip archive as a store, read and written the way zarr-python's `ZipStore` does: member
//! `a/b/0.0` holds key `a/b/0.0`.
//!
//! Reading serves members straight from the archive file (stored members piece by piece,
//! deflated ones decompressed whole). Writing creates a new archive: keys are kept in memory
//! and the archive is written, members stored uncompressed as zarr-python's default
//! (`ZIP_STORED`), by [`Store::flush`] (and, for anything written after it, when the store is
//! dropped). An existing archive is never modified.

use super::{read_file_at, sorted_keys, OpenMode, Store, ValueReader};
use crate::error::{Error, Result};
use crate::path::{validate_key, validate_prefix};
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, RwLock};
use zip::{CompressionMethod, ZipArchive, ZipWriter};

/// Deflate never expands data more than about 1032 times; a member declaring more is corrupt.
const MAX_DEFLATE_RATIO: u64 = 1032;

/// Where one member's data lies in the archive.
#[derive(Debug, Clone, Copy)]
struct Member {
    data_start: u64,
    compressed_size: u64,
    size: u64,
    deflated: bool,
    crc32: u32,
}

#[derive(Debug)]
enum Mode {
    Read {
        file: File,
        members: BTreeMap<String, Member>,
    },
    Write {
        file: Mutex<File>,
        entries: RwLock<BTreeMap<String, Vec<u8>>>,
        /// Whether `entries` changed since the archive was last written.
        dirty: AtomicBool,
    },
}

/// A zip archive holding one key per member.
#[derive(Debug)]
pub struct ZipStore {
    path: PathBuf,
    mode: Mode,
}

impl ZipStore {
    /// Opens the archive at `path`. In [`OpenMode::Read`] it must exist and be a valid zip
    /// whose member names are valid keys; in [`OpenMode::Write`] it must not exist yet (an
    /// existing archive is refused with [`Error::Unsupported`]) and is created, with its parent
    /// directories, holding nothing until the first flush.
    pub fn open(path: &str, mode: OpenMode) -> Result<Self> {
        if path.is_empty() {
            return Err(Error::InvalidArgument("store location is empty".into()));
        }
        let path_buf = PathBuf::from(path);
        let mode = match mode {
            OpenMode::Read => Self::open_read(path, &path_buf)?,
            OpenMode::Write => Self::create(path, &path_buf)?,
        };
        Ok(ZipStore {
            path: path_buf,
            mode,
        })
    }

    fn open_read(name: &str, path: &Path) -> Result<Mode> {
        let file = File::open(path).map_err(|e| match e.kind() {
            ErrorKind::NotFound => Error::NotFound(format!("zip store {name:?} does not exist")),
            _ => Error::io(format!("opening zip store {name:?}"), e),
        })?;
        let file_len = file
            .metadata()
            .map_err(|e| Error::io(format!("zip store {name:?}"), e))?
            .len();
        let corrupt = |what: String| Error::CorruptChunk(format!("zip store {name:?}: {what}"));
        let mut archive = ZipArchive::new(&file)
            .map_err(|e| zip_error(name, "is not a readable zip archive", e))?;
        let mut members = BTreeMap::new();
        for index in 0..archive.len() {
            let entry = archive
                .by_index_raw(index)
                .map_err(|e| zip_error(name, &format!("member {index}"), e))?;
            let member_name = entry
                .name()
                .map_err(|e| zip_error(name, &format!("member {index}"), e))?
                .into_owned();
            if entry.is_dir() || member_name.ends_with('/') {
                continue;
            }
            validate_key(&member_name).map_err(|_| {
                Error::InvalidPath(format!(
                    "zip store {name:?}: member name {member_name:?} is not a valid key"
                ))
            })?;
            if entry.encrypted() {
                return Err(Error::Unsupported(format!(
                    "zip store {name:?}: member {member_name:?} is encrypted"
                )));
            }
            let method = entry.compression();
            let deflated = if method == CompressionMethod::Stored {
                false
            } else if method == CompressionMethod::DEFLATE {
                true
            } else {
                return Err(Error::Unsupported(format!(
                    "zip store {name:?}: member {member_name:?} uses compression method \
                     {method:?}; only stored and deflated members can be read"
                )));
            };
            let (compressed_size, size) = (entry.compressed_size(), entry.size());
            let data_start = entry
                .data_start()
                .ok_or_else(|| corrupt(format!("member {member_name:?} has no data offset")))?;
            let inside = data_start
                .checked_add(compressed_size)
                .is_some_and(|end| end <= file_len);
            let plausible = if deflated {
                size <= compressed_size.saturating_mul(MAX_DEFLATE_RATIO) + 64
            } else {
                size == compressed_size
            };
            if !inside || !plausible {
                return Err(corrupt(format!(
                    "member {member_name:?} ({compressed_size} stored bytes from byte \
                     {data_start}, {size} bytes declared) does not fit the archive of \
                     {file_len} bytes"
                )));
            }
            let member = Member {
                data_start,
                compressed_size,
                size,
                deflated,
                crc32: entry.crc32(),
            };
            // A name written twice (zarr-python does so when a key is set again) means its
            // last member, as Python's zipfile reads it.
            members.insert(member_name, member);
        }
        drop(archive);
        Ok(Mode::Read { file, members })
    }

    fn create(name: &str, path: &Path) -> Result<Mode> {
        let refuse = || {
            Error::Unsupported(format!(
                "writing into an existing zip {name:?} is not supported; create a new one \
                 (or open it read-only)"
            ))
        };
        if fs::symlink_metadata(path).is_ok() {
            return Err(refuse());
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                ErrorKind::AlreadyExists => refuse(),
                _ => Error::io(format!("creating zip store {name:?}"), e),
            })?;
        Ok(Mode::Write {
            file: Mutex::new(file),
            entries: RwLock::default(),
            dirty: AtomicBool::new(true),
        })
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn read_only(&self, key: &str) -> Error {
        Error::ReadOnly(format!(
            "cannot modify {key:?}: zip store {:?} was opened for reading",
            self.name()
        ))
    }

    /// Reads one member whole into `buf`, decompressing it and checking its CRC.
    fn read_member(&self, file: &File, key: &str, m: &Member, buf: &mut Vec<u8>) -> Result<()> {
        let corrupt = |what: &str| {
            Error::CorruptChunk(format!(
                "zip store {:?}: member {key:?} {what}",
                self.name()
            ))
        };
        let too_large = || {
            Error::TooLarge(format!(
                "zip store {:?}: member {key:?} of {} bytes does not fit in memory",
                self.name(),
                m.size
            ))
        };
        buf.clear();
        if m.deflated {
            let mut compressed =
                vec![0; usize::try_from(m.compressed_size).map_err(|_| too_large())?];
            read_file_at(file, m.data_start, &mut compressed).map_err(|e| {
                Error::io(format!("zip store {:?}: member {key:?}", self.name()), e)
            })?;
            // Grow with the data actually decompressed, never trusting the declared size alone.
            let hint = m.size.min(m.compressed_size.saturating_mul(4) + 64);
            buf.reserve(usize::try_from(hint).map_err(|_| too_large())?);
            flate2::read::DeflateDecoder::new(compressed.as_slice())
                .take(m.size.saturating_add(1))
                .read_to_end(buf)
                .map_err(|e| corrupt(&format!("cannot be decompressed: {e}")))?;
            if buf.len() as u64 != m.size {
                return Err(corrupt(&format!(
                    "decompresses to {} bytes, not the {} declared",
                    buf.len(),
                    m.size
                )));
            }
        } else {
            buf.resize(usize::try_from(m.size).map_err(|_| too_large())?, 0);
            read_file_at(file, m.data_start, buf).map_err(|e| {
                Error::io(format!("zip store {:?}: member {key:?}", self.name()), e)
            })?;
        }
        let mut crc = flate2::Crc::new();
        crc.update(buf);
        if crc.sum() != m.crc32 {
            return Err(corrupt("fails its CRC check"));
        }
        Ok(())
    }

    /// Writes every key into the archive, replacing what an earlier flush wrote.
    fn write_archive(
        &self,
        file: &Mutex<File>,
        entries: &RwLock<BTreeMap<String, Vec<u8>>>,
    ) -> Result<()> {
        let file = file.lock().unwrap_or_else(|p| p.into_inner());
        let entries = entries.read().unwrap_or_else(|p| p.into_inner());
        let name = self.name();
        let io = |e: std::io::Error| Error::io(format!("writing zip store {name:?}"), e);
        file.set_len(0).map_err(io)?;
        (&*file).seek(SeekFrom::Start(0)).map_err(io)?;
        let mut writer = ZipWriter::new(BufWriter::new(&*file));
        for (key, value) in entries.iter() {
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(CompressionMethod::Stored)
                .large_file(value.len() as u64 >= u64::from(u32::MAX));
            writer
                .start_file(key.as_str(), options)
                .map_err(|e| zip_error(&name, &format!("writing member {key:?}"), e))?;
            writer.write_all(value).map_err(io)?;
        }
        let mut out = writer
            .finish()
            .map_err(|e| zip_error(&name, "writing the central directory", e))?;
        out.flush().map_err(io)?;
        Ok(())
    }
}

/// Maps a zip-crate error on archive `name` to the library's error.
fn zip_error(name: &str, what: &str, err: zip::result::ZipError) -> Error {
    use zip::result::ZipError;
    match err {
        ZipError::Io(e) => Error::io(format!("zip store {name:?}: {what}"), e),
        ZipError::UnsupportedArchive(m) => {
            Error::Unsupported(format!("zip store {name:?}: {what}: {m}"))
        }
        other => Error::CorruptChunk(format!("zip store {name:?}: {what}: {other}")),
    }
}

/// One member of an archive opened for reading. Its size is known without reading it; the
/// first read reads it whole (decompressing it and checking its CRC), so no byte of a member
/// that fails its check is ever handed out.
struct MemberReader<'a> {
    store: &'a ZipStore,
    file: &'a File,
    key: String,
    member: Member,
    data: OnceLock<Vec<u8>>,
}

impl ValueReader for MemberReader<'_> {
    fn len(&self) -> u64 {
        self.member.size
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if self.data.get().is_none() {
            let mut data = Vec::new();
            self.store
                .read_member(self.file, &self.key, &self.member, &mut data)?;
            // Threads racing here read the same bytes: whichever is set first serves all.
            let _ = self.data.set(data);
        }
        self.data
            .get()
            .expect("set above")
            .read_exact_at(offset, buf)
    }
}

impl Store for ZipStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let mut buf = Vec::new();
        Ok(self.get_into(key, &mut buf)?.then_some(buf))
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>) -> Result<bool> {
        validate_key(key)?;
        match &self.mode {
            Mode::Read { file, members } => match members.get(key) {
                Some(member) => self.read_member(file, key, member, buf).map(|()| true),
                None => Ok(false),
            },
            Mode::Write { entries, .. } => {
                buf.clear();
                let entries = entries.read().unwrap_or_else(|p| p.into_inner());
                Ok(entries.get(key).map(|v| buf.extend_from_slice(v)).is_some())
            }
        }
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        validate_key(key)?;
        match &self.mode {
            Mode::Read { .. } => Err(self.read_only(key)),
            Mode::Write { entries, dirty, .. } => {
                let mut entries = entries.write().unwrap_or_else(|p| p.into_inner());
                entries.insert(key.to_string(), value.to_vec());
                dirty.store(true, Ordering::SeqCst);
                Ok(())
            }
        }
    }

    fn erase(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        match &self.mode {
            Mode::Read { .. } => Err(self.read_only(key)),
            Mode::Write { entries, dirty, .. } => {
                let mut entries = entries.write().unwrap_or_else(|p| p.into_inner());
                if entries.remove(key).is_some() {
                    dirty.store(true, Ordering::SeqCst);
                }
                Ok(())
            }
        }
    }

    fn open_value(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        validate_key(key)?;
        match &self.mode {
            Mode::Read { file, members } => Ok(members.get(key).map(|&member| {
                Box::new(MemberReader {
                    store: self,
                    file,
                    key: key.to_string(),
                    member,
                    data: OnceLock::new(),
                }) as Box<dyn ValueReader>
            })),
            Mode::Write { .. } => Ok(self.get(key)?.map(|v| Box::new(v) as Box<dyn ValueReader>)),
        }
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        Ok(match &self.mode {
            Mode::Read { members, .. } => members.get(key).map(|m| m.size),
            Mode::Write { entries, .. } => entries
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .get(key)
                .map(|v| v.len() as u64),
        })
    }

    fn contains(&self, key: &str) -> Result<bool> {
        validate_key(key)?;
        Ok(match &self.mode {
            Mode::Read { members, .. } => members.contains_key(key),
            Mode::Write { entries, .. } => entries
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .contains_key(key),
        })
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Ok(match &self.mode {
            Mode::Read { members, .. } => sorted_keys::list_prefix(members, prefix),
            Mode::Write { entries, .. } => {
                sorted_keys::list_prefix(&entries.read().unwrap_or_else(|p| p.into_inner()), prefix)
            }
        })
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Ok(match &self.mode {
            Mode::Read { members, .. } => sorted_keys::list_dir(members, prefix),
            Mode::Write { entries, .. } => {
                sorted_keys::list_dir(&entries.read().unwrap_or_else(|p| p.into_inner()), prefix)
            }
        })
    }

    /// Writes the archive if anything changed since it was last written.
    fn flush(&self) -> Result<()> {
        let Mode::Write {
            file,
            entries,
            dirty,
        } = &self.mode
        else {
            return Ok(());
        };
        if !dirty.swap(false, Ordering::SeqCst) {
            return Ok(());
        }
        self.write_archive(file, entries).inspect_err(|_| {
            dirty.store(true, Ordering::SeqCst);
        })
    }
}

impl Drop for ZipStore {
    /// Writes what changed after the last flush; a failure here cannot be reported.
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_path(tag: &str) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("libzarr-zip-{tag}-{}.zip", std::process::id()));
        let _ = fs::remove_file(&path);
        path
    }

    #[test]
    fn behaves_like_a_store_and_reads_back_what_it_wrote() {
        let path = temp_path("store");
        let name = path.to_str().unwrap();
        {
            let store = ZipStore::open(name, OpenMode::Write).unwrap();
            super::super::tests::exercise_store(&store);
            store.flush().unwrap();
        }
        let store = ZipStore::open(name, OpenMode::Read).unwrap();
        assert_eq!(store.list_dir("").unwrap(), vec!["a", "b"]);
        assert_eq!(store.get("b").unwrap().unwrap(), b"zz");
        assert_eq!(store.value_len("b").unwrap(), Some(2));
        assert_eq!(store.value_len("a/0.0").unwrap(), None);
        assert_eq!(store.get("a/1/0").unwrap().unwrap(), b"y");
        assert!(!store.contains("a/0.0").unwrap());
        let reader = store.open_value("b").unwrap().unwrap();
        let mut part = [0u8; 1];
        reader.read_exact_at(1, &mut part).unwrap();
        assert_eq!(part, [b'z']);
        assert!(reader.read_exact_at(2, &mut part).is_err());
        drop(reader);
        assert!(matches!(store.set("b", b"x"), Err(Error::ReadOnly(_))));
        assert!(matches!(store.erase("b"), Err(Error::ReadOnly(_))));
        drop(store);
        assert!(matches!(
            ZipStore::open(name, OpenMode::Write),
            Err(Error::Unsupported(_))
        ));
        fs::remove_file(&path).unwrap();
    }

    #[test]
    fn stored_members_are_checked_when_read_in_parts_too() {
        let path = temp_path("stored-crc");
        let name = path.to_str().unwrap();
        {
            let store = ZipStore::open(name, OpenMode::Write).unwrap();
            store.set("a/0", b"0123456789abcdef").unwrap();
            store.flush().unwrap();
        }
        let mut bytes = fs::read(&path).unwrap();
        let at = bytes
            .windows(16)
            .position(|w| w == b"0123456789abcdef")
            .unwrap();
        bytes[at + 3] ^= 0x40;
        fs::write(&path, &bytes).unwrap();
        let store = ZipStore::open(name, OpenMode::Read).unwrap();
        assert!(matches!(store.get("a/0"), Err(Error::CorruptChunk(_))));
        let reader = store.open_value("a/0").unwrap().unwrap();
        assert_eq!(reader.len(), 16);
        let mut part = [0u8; 2];
        let read = reader.read_exact_at(0, &mut part);
        assert!(matches!(read, Err(Error::CorruptChunk(_))), "{read:?}");
        drop(reader);
        drop(store);
        fs::remove_file(&path).unwrap();
    }

    #[test]
    fn reads_deflated_members_and_checks_them() {
        let path = temp_path("deflated");
        let data = b"hello hello hello hello hello".repeat(100);
        let mut compressed = Vec::new();
        flate2::write::DeflateEncoder::new(&mut compressed, flate2::Compression::default())
            .write_all(&data)
            .unwrap();
        let mut crc = flate2::Crc::new();
        crc.update(&data);
        // A minimal one-member archive with a deflated member, written by hand.
        let write = |crc32: u32, size: u32| {
            let name = b"x/0";
            let mut zip = Vec::new();
            let common = |zip: &mut Vec<u8>| {
                zip.extend_from_slice(&20u16.to_le_bytes()); // version needed
                zip.extend_from_slice(&0u16.to_le_bytes()); // flags
                zip.extend_from_slice(&8u16.to_le_bytes()); // deflate
                zip.extend_from_slice(&[0; 4]); // time, date
                zip.extend_from_slice(&crc32.to_le_bytes());
                zip.extend_from_slice(&(compressed.len() as u32).to_le_bytes());
                zip.extend_from_slice(&size.to_le_bytes());
                zip.extend_from_slice(&(name.len() as u16).to_le_bytes());
                zip.extend_from_slice(&0u16.to_le_bytes()); // extra length
            };
            zip.extend_from_slice(b"PK\x03\x04");
            common(&mut zip);
            zip.extend_from_slice(name);
            zip.extend_from_slice(&compressed);
            let cd_start = zip.len() as u32;
            zip.extend_from_slice(b"PK\x01\x02");
            zip.extend_from_slice(&20u16.to_le_bytes()); // version made by
            common(&mut zip);
            zip.extend_from_slice(&[0; 10]); // comment len, disk, internal and external attrs
            zip.extend_from_slice(&0u32.to_le_bytes()); // local header offset
            zip.extend_from_slice(name);
            let cd_len = zip.len() as u32 - cd_start;
            zip.extend_from_slice(b"PK\x05\x06");
            zip.extend_from_slice(&[0; 4]);
            zip.extend_from_slice(&1u16.to_le_bytes());
            zip.extend_from_slice(&1u16.to_le_bytes());
            zip.extend_from_slice(&cd_len.to_le_bytes());
            zip.extend_from_slice(&cd_start.to_le_bytes());
            zip.extend_from_slice(&0u16.to_le_bytes());
            fs::write(&path, zip).unwrap();
        };
        write(crc.sum(), data.len() as u32);
        let store = ZipStore::open(path.to_str().unwrap(), OpenMode::Read).unwrap();
        assert_eq!(store.get("x/0").unwrap().unwrap(), data);
        let reader = store.open_value("x/0").unwrap().unwrap();
        let mut part = [0u8; 5];
        reader.read_exact_at(6, &mut part).unwrap();
        assert_eq!(&part, b"hello");
        drop(reader);
        drop(store);

        write(crc.sum() ^ 1, data.len() as u32);
        let store = ZipStore::open(path.to_str().unwrap(), OpenMode::Read).unwrap();
        assert!(matches!(store.get("x/0"), Err(Error::CorruptChunk(_))));
        drop(store);

        write(crc.sum(), data.len() as u32 + 1);
        let store = ZipStore::open(path.to_str().unwrap(), OpenMode::Read).unwrap();
        assert!(matches!(store.get("x/0"), Err(Error::CorruptChunk(_))));
        drop(store);

        write(crc.sum(), u32::MAX);
        assert!(matches!(
            ZipStore::open(path.to_str().unwrap(), OpenMode::Read),
            Err(Error::CorruptChunk(_))
        ));
        fs::remove_file(&path).unwrap();
    }
}
