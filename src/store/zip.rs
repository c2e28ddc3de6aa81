//! A zip archive as a store, read and written the way zarr-python's `ZipStore` does: member
//! `a/b/0.0` holds key `a/b/0.0`.
//!
//! Reading serves members straight from the archive file (stored members piece by piece,
//! deflated ones decompressed whole). Writing streams each value to disk as a member as soon
//! as it is set, stored (zarr-python's default, `ZIP_STORED`) or deflated (option
//! `zip_compression`), keeping only the directory in memory; a key set again gets a new
//! member, and the central directory, written by [`Store::flush`] (and when the store is
//! dropped), names the newest member of each key, so the last write wins as with Python's
//! `zipfile`. An existing archive opened for writing is appended to.
//!
//! The archive at the store's path is never written in place: the members go into a working
//! file beside it (a copy of the archive when there is one, made at the first change), and a
//! flush writes the central directory there and renames it over the archive. A process killed
//! at any moment thus leaves the archive as the last flush (or the open) found it, and at
//! worst a stray working file named `.NAME.libzarr-partial-PID-N`.

use super::{read_file_at, sorted_keys, OpenMode, Store, ValueReader, ZipCompression};
use crate::error::{Error, Result};
use crate::path::{validate_key, validate_prefix, TEMP_MARKER};
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};
use zip::{CompressionMethod, ZipArchive};

/// Deflate never expands data more than about 1032 times; a member declaring more is corrupt.
const MAX_DEFLATE_RATIO: u64 = 1032;

/// Sizes and offsets above this go into zip64 fields, as Python's `zipfile` decides
/// (`ZIP64_LIMIT`, kept below 2 GiB for readers that take the fields as signed).
const ZIP64_LIMIT: u64 = (1 << 31) - 1;

/// Member counts from this on go into the zip64 end record (`ZIP_FILECOUNT_LIMIT`).
const ZIP_FILECOUNT_LIMIT: u64 = 0xffff;

/// Central directory bytes gathered before they are written out.
const DIRECTORY_BUFFER: usize = 1 << 20;

/// Numbers the working files of this process.
static WORKING_FILES: AtomicU64 = AtomicU64::new(0);

/// Where one member's data lies in the archive.
#[derive(Debug, Clone, Copy)]
struct Member {
    data_start: u64,
    compressed_size: u64,
    size: u64,
    deflated: bool,
    crc32: u32,
}

/// A member of an archive being written: where to read it, and its central directory record.
#[derive(Debug)]
struct Entry {
    member: Member,
    /// Where its local header starts (the order of the central directory).
    header_offset: u64,
    /// Its central directory record, as it will be written.
    record: Box<[u8]>,
}

/// The members of an archive as its central directory lists them (the last of a name).
struct Listing {
    /// Each name's member, the offsets of its local header and of its central record.
    members: BTreeMap<String, (Member, u64, u64)>,
    /// Where the central directory starts: the end of the members.
    directory_start: u64,
    /// Bytes before the archive proper (a self-extracting stub).
    prefix: u64,
    /// The archive's comment.
    comment: Vec<u8>,
}

/// What readers and writers of an archive being written share.
#[derive(Debug, Default)]
struct Shared {
    entries: BTreeMap<String, Entry>,
    /// The file the entries' data is read from: the working file, or the archive before the
    /// first change; `None` while a new archive holds nothing.
    file: Option<Arc<File>>,
}

/// The writer's side of an archive being written, behind one lock.
#[derive(Debug)]
struct Work {
    /// The working file and its path, once something changed since the last flush.
    file: Option<(Arc<File>, PathBuf)>,
    /// Where the next member's local header goes.
    end: u64,
    /// The length of the archive at the store's path (`None`: there is none yet).
    published: Option<u64>,
    /// The archive comment, kept.
    comment: Vec<u8>,
    /// Whether anything changed since the archive was last written.
    dirty: bool,
}

#[derive(Debug)]
struct Writer {
    compression: ZipCompression,
    fsync: bool,
    work: Mutex<Work>,
    shared: RwLock<Shared>,
}

#[derive(Debug)]
enum Mode {
    Read {
        file: Arc<File>,
        members: BTreeMap<String, Member>,
    },
    Write(Writer),
}

/// A zip archive holding one key per member.
#[derive(Debug)]
pub struct ZipStore {
    path: PathBuf,
    mode: Mode,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ZipStore {
    /// Opens the archive at `path`. In [`OpenMode::Read`] it must exist and be a valid zip
    /// whose member names are valid keys. In [`OpenMode::Write`] an existing archive (which
    /// must be valid too; an empty file counts as none) is appended to, and a missing one is
    /// created, with its parent directories, by the first flush; members are written with
    /// `compression`, and with `fsync` a flush puts the archive on the disk before it returns.
    pub fn open(
        path: &str,
        mode: OpenMode,
        compression: ZipCompression,
        fsync: bool,
    ) -> Result<Self> {
        if path.is_empty() {
            return Err(Error::InvalidArgument("store location is empty".into()));
        }
        let mut path_buf = PathBuf::from(path);
        let mode = match mode {
            OpenMode::Read => {
                let file = open_existing(path, &path_buf)?;
                let listing = list_members(path, &file)?;
                let members = listing
                    .members
                    .into_iter()
                    .map(|(name, (member, _, _))| (name, member))
                    .collect();
                Mode::Read {
                    file: Arc::new(file),
                    members,
                }
            }
            OpenMode::Write => {
                // A link to an archive: the archive it names is the one replaced.
                if fs::symlink_metadata(&path_buf).is_ok_and(|m| m.file_type().is_symlink()) {
                    path_buf = fs::canonicalize(&path_buf)
                        .map_err(|e| Error::io(format!("zip store {path:?}"), e))?;
                }
                Mode::Write(Writer::open(path, &path_buf, compression, fsync)?)
            }
        };
        Ok(ZipStore {
            path: path_buf,
            mode,
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

    /// The member under `key` and the file holding it.
    fn find(&self, key: &str) -> Option<(Member, Arc<File>)> {
        match &self.mode {
            Mode::Read { file, members } => members.get(key).map(|m| (*m, file.clone())),
            Mode::Write(w) => {
                let shared = w.shared.read().unwrap_or_else(|p| p.into_inner());
                let member = shared.entries.get(key)?.member;
                Some((member, shared.file.clone()?))
            }
        }
    }

    /// Runs `f` on the names of the members.
    fn with_names<T>(&self, f: impl FnOnce(&dyn NameMap) -> T) -> T {
        match &self.mode {
            Mode::Read { members, .. } => f(members),
            Mode::Write(w) => f(&w.shared.read().unwrap_or_else(|p| p.into_inner()).entries),
        }
    }
}

/// The sorted names of members, whatever they map to.
trait NameMap {
    fn list_prefix(&self, prefix: &str) -> Vec<String>;
    fn list_dir(&self, prefix: &str) -> Vec<String>;
}

impl<V> NameMap for BTreeMap<String, V> {
    fn list_prefix(&self, prefix: &str) -> Vec<String> {
        sorted_keys::list_prefix(self, prefix)
    }
    fn list_dir(&self, prefix: &str) -> Vec<String> {
        sorted_keys::list_dir(self, prefix)
    }
}

/// Opens an existing archive for reading.
fn open_existing(name: &str, path: &Path) -> Result<File> {
    File::open(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => Error::NotFound(format!("zip store {name:?} does not exist")),
        _ => Error::io(format!("opening zip store {name:?}"), e),
    })
}

/// Reads the central directory of the archive `file` (named `name` in errors), checking that
/// every member is a readable file under a valid key that lies inside the file.
fn list_members(name: &str, file: &File) -> Result<Listing> {
    let file_len = file
        .metadata()
        .map_err(|e| Error::io(format!("zip store {name:?}"), e))?
        .len();
    let corrupt = |what: String| Error::CorruptChunk(format!("zip store {name:?}: {what}"));
    let mut archive =
        ZipArchive::new(file).map_err(|e| zip_error(name, "is not a readable zip archive", e))?;
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
        // last member, as Python's zipfile reads it (the zip crate keeps the last one).
        let at = (entry.header_start(), entry.central_header_start());
        members.insert(member_name, (member, at.0, at.1));
    }
    Ok(Listing {
        members,
        directory_start: archive.central_directory_start(),
        prefix: archive.offset(),
        comment: archive.comment().to_vec(),
    })
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

/// The central directory record of the member whose record starts at `at` in `file`.
fn read_record(name: &str, file: &File, at: u64, member: &str) -> Result<Box<[u8]>> {
    let corrupt = || {
        Error::CorruptChunk(format!(
            "zip store {name:?}: the central directory record of {member:?} is damaged"
        ))
    };
    let io = |e| Error::io(format!("zip store {name:?}: member {member:?}"), e);
    let mut fixed = [0u8; 46];
    read_file_at(file, at, &mut fixed).map_err(io)?;
    if fixed[..4] != 0x0201_4b50u32.to_le_bytes() {
        return Err(corrupt());
    }
    let field = |i: usize| usize::from(u16::from_le_bytes([fixed[i], fixed[i + 1]]));
    let mut record = vec![0u8; 46 + field(28) + field(30) + field(32)];
    read_file_at(file, at, &mut record).map_err(|_| corrupt())?;
    Ok(record.into_boxed_slice())
}

/// Writes all of `data` at `offset` of `file`, without moving a shared cursor.
fn write_file_at(file: &File, offset: u64, data: &[u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, data, offset)
    }
    #[cfg(windows)]
    {
        let (mut offset, mut data) = (offset, data);
        while !data.is_empty() {
            match std::os::windows::fs::FileExt::seek_write(file, data, offset)? {
                0 => return Err(ErrorKind::WriteZero.into()),
                n => {
                    data = &data[n..];
                    offset += n as u64;
                }
            }
        }
        Ok(())
    }
}

/// The local time as MS-DOS time and date fields, as Python's `zipfile` stamps members
/// (`time.localtime()`); 1980-01-01 where the time cannot be had.
fn dos_time_now() -> (u16, u16) {
    #[cfg(unix)]
    {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let seconds = libc::time_t::try_from(now).unwrap_or(0);
        // SAFETY: localtime_r only writes the `tm` it is given.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        if !unsafe { libc::localtime_r(&seconds, &mut tm) }.is_null() && tm.tm_year >= 80 {
            let time = (tm.tm_hour << 11) | (tm.tm_min << 5) | (tm.tm_sec / 2);
            let date = ((tm.tm_year - 80) << 9) | ((tm.tm_mon + 1) << 5) | tm.tm_mday;
            return (time as u16, date as u16);
        }
    }
    (0, (1 << 5) | 1)
}

fn put16(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&(v as u16).to_le_bytes());
}

fn put32(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&(v as u32).to_le_bytes());
}

fn put64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// A member about to be written: its name, data as stored, and what the headers say of it.
struct NewMember<'a> {
    name: &'a str,
    data: &'a [u8],
    size: u64,
    crc32: u32,
    deflated: bool,
    time: (u16, u16),
}

impl NewMember<'_> {
    /// The fields local and central headers share, from "version needed" to the name length.
    fn common(&self, out: &mut Vec<u8>, zip64: bool, flags: u64) {
        put16(out, if zip64 { 45 } else { 20 });
        put16(out, flags);
        put16(out, if self.deflated { 8 } else { 0 });
        put16(out, u64::from(self.time.0));
        put16(out, u64::from(self.time.1));
        put32(out, u64::from(self.crc32));
    }

    /// Bit 11 (UTF-8 name) where the name is not ASCII, as Python sets it.
    fn flags(&self) -> u64 {
        if self.name.is_ascii() {
            0
        } else {
            0x800
        }
    }

    /// The local header, with a zip64 extra field holding both sizes when either is large.
    fn local_header(&self) -> Vec<u8> {
        let compressed = self.data.len() as u64;
        let zip64 = self.size > ZIP64_LIMIT || compressed > ZIP64_LIMIT;
        let mut out = Vec::with_capacity(30 + self.name.len() + 20);
        put32(&mut out, 0x0403_4b50);
        self.common(&mut out, zip64, self.flags());
        let (size, compressed32) = match zip64 {
            true => (0xffff_ffff, 0xffff_ffff),
            false => (self.size, compressed),
        };
        put32(&mut out, compressed32);
        put32(&mut out, size);
        put16(&mut out, self.name.len() as u64);
        put16(&mut out, if zip64 { 20 } else { 0 });
        out.extend_from_slice(self.name.as_bytes());
        if zip64 {
            put16(&mut out, 1);
            put16(&mut out, 16);
            put64(&mut out, self.size);
            put64(&mut out, compressed);
        }
        out
    }

    /// The central directory record of the member whose local header is at `offset`, zip64
    /// fields holding what exceeds [`ZIP64_LIMIT`], as Python writes them; Unix permissions
    /// `rw-r--r--` as zarr-python's `ZipStore` gives its members.
    fn central_record(&self, offset: u64) -> Box<[u8]> {
        let compressed = self.data.len() as u64;
        let large: Vec<u64> = [self.size, compressed, offset]
            .into_iter()
            .filter(|&v| v > ZIP64_LIMIT)
            .collect();
        let field = |v: u64| if v > ZIP64_LIMIT { 0xffff_ffff } else { v };
        let mut out = Vec::with_capacity(46 + self.name.len() + 28);
        put32(&mut out, 0x0201_4b50);
        put16(&mut out, (3 << 8) | if large.is_empty() { 20 } else { 45 });
        self.common(&mut out, !large.is_empty(), self.flags());
        put32(&mut out, field(compressed));
        put32(&mut out, field(self.size));
        put16(&mut out, self.name.len() as u64);
        put16(
            &mut out,
            if large.is_empty() {
                0
            } else {
                4 + 8 * large.len() as u64
            },
        );
        put16(&mut out, 0); // comment
        put16(&mut out, 0); // disk
        put16(&mut out, 0); // internal attributes
        put32(&mut out, 0o100644 << 16); // a regular file, rw-r--r--
        put32(&mut out, field(offset));
        out.extend_from_slice(self.name.as_bytes());
        if !large.is_empty() {
            put16(&mut out, 1);
            put16(&mut out, 8 * large.len() as u64);
            for v in large {
                put64(&mut out, v);
            }
        }
        out.into_boxed_slice()
    }
}

/// The end of central directory record (and, where counts or offsets need it, the zip64 end
/// record and its locator before it) for `count` records of `size` bytes from `start`.
fn end_records(count: u64, start: u64, size: u64, comment: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(22 + 76 + comment.len());
    let zip64 = count >= ZIP_FILECOUNT_LIMIT || start > ZIP64_LIMIT || size > ZIP64_LIMIT;
    if zip64 {
        let record = start + size;
        put32(&mut out, 0x0606_4b50);
        put64(&mut out, 44);
        put16(&mut out, (3 << 8) | 45);
        put16(&mut out, 45);
        put32(&mut out, 0);
        put32(&mut out, 0);
        put64(&mut out, count);
        put64(&mut out, count);
        put64(&mut out, size);
        put64(&mut out, start);
        put32(&mut out, 0x0706_4b50);
        put32(&mut out, 0);
        put64(&mut out, record);
        put32(&mut out, 1);
    }
    put32(&mut out, 0x0605_4b50);
    put16(&mut out, 0);
    put16(&mut out, 0);
    let (count16, size32, start32) = match zip64 {
        true => (0xffff, 0xffff_ffff, 0xffff_ffff),
        false => (count, size, start),
    };
    put16(&mut out, count16);
    put16(&mut out, count16);
    put32(&mut out, size32);
    put32(&mut out, start32);
    put16(&mut out, comment.len() as u64);
    out.extend_from_slice(comment);
    out
}

impl Writer {
    /// Opens `path` for writing: an existing archive's members are read (their data stays
    /// where it is), a missing or empty file is a new archive.
    fn open(name: &str, path: &Path, compression: ZipCompression, fsync: bool) -> Result<Writer> {
        let mut shared = Shared::default();
        let mut work = Work {
            file: None,
            end: 0,
            published: None,
            comment: Vec::new(),
            dirty: true,
        };
        match File::open(path) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    fs::create_dir_all(parent)
                        .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
                }
            }
            Err(e) => return Err(Error::io(format!("opening zip store {name:?}"), e)),
            Ok(file) => {
                let len = file
                    .metadata()
                    .map_err(|e| Error::io(format!("zip store {name:?}"), e))?
                    .len();
                if len > 0 {
                    let listing = list_members(name, &file)?;
                    if listing.prefix != 0 {
                        return Err(Error::Unsupported(format!(
                            "zip store {name:?} has {} bytes before its first member; such an \
                             archive can be read but not written",
                            listing.prefix
                        )));
                    }
                    for (key, (member, header, central)) in listing.members {
                        let record = read_record(name, &file, central, &key)?;
                        let entry = Entry {
                            member,
                            header_offset: header,
                            record,
                        };
                        shared.entries.insert(key, entry);
                    }
                    work.end = listing.directory_start;
                    work.comment = listing.comment;
                    work.dirty = false;
                    shared.file = Some(Arc::new(file));
                }
                work.published = Some(len);
            }
        }
        Ok(Writer {
            compression,
            fsync,
            work: Mutex::new(work),
            shared: RwLock::new(shared),
        })
    }

    fn shared_mut(&self) -> std::sync::RwLockWriteGuard<'_, Shared> {
        self.shared.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The working file, made at the first change after the open or a flush: a copy of the
    /// archive at `path` (checked to be the one read), or a new empty file.
    fn working_file(&self, path: &Path, work: &mut Work) -> Result<Arc<File>> {
        if let Some((file, _)) = &work.file {
            return Ok(file.clone());
        }
        let name = path
            .file_name()
            .map_or("archive".into(), |n| n.to_string_lossy());
        let temp = path.with_file_name(format!(
            ".{name}{TEMP_MARKER}{}-{}",
            std::process::id(),
            WORKING_FILES.fetch_add(1, Ordering::Relaxed)
        ));
        let made = (|| -> std::io::Result<File> {
            let published = work.published.filter(|&len| len > 0);
            if let Some(len) = published {
                let copied = fs::copy(path, &temp)?;
                if copied != len {
                    return Err(std::io::Error::other(format!(
                        "it changed since it was opened ({len} bytes then, {copied} now); \
                         another program wrote it"
                    )));
                }
                OpenOptions::new().read(true).write(true).open(&temp)
            } else {
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .open(&temp)
            }
        })();
        let file = Arc::new(made.map_err(|e| {
            let _ = fs::remove_file(&temp);
            Error::io(
                format!("zip store {:?}: making its working file", path.display()),
                e,
            )
        })?);
        work.file = Some((file.clone(), temp));
        self.shared_mut().file = Some(file.clone());
        Ok(file)
    }

    /// Writes `value` under `key` as a new member after the others.
    fn set(&self, path: &Path, key: &str, value: &[u8]) -> Result<()> {
        let mut crc = flate2::Crc::new();
        crc.update(value);
        let deflated = self.compression == ZipCompression::Deflate;
        let compressed;
        let data = if deflated {
            let mut encoder = flate2::write::DeflateEncoder::new(
                Vec::with_capacity(value.len() / 2 + 64),
                flate2::Compression::default(),
            );
            encoder
                .write_all(value)
                .map_err(|e| Error::Internal(format!("deflating {key:?}: {e}")))?;
            compressed = encoder
                .finish()
                .map_err(|e| Error::Internal(format!("deflating {key:?}: {e}")))?;
            &compressed[..]
        } else {
            value
        };
        let member = NewMember {
            name: key,
            data,
            size: value.len() as u64,
            crc32: crc.sum(),
            deflated,
            time: dos_time_now(),
        };
        let header = member.local_header();
        let mut work = lock(&self.work);
        let file = self.working_file(path, &mut work)?;
        let offset = work.end;
        let data_start = offset + header.len() as u64;
        write_file_at(&file, offset, &header)
            .and_then(|()| write_file_at(&file, data_start, data))
            .map_err(|e| {
                Error::io(
                    format!("zip store {:?}: writing {key:?}", path.display()),
                    e,
                )
            })?;
        work.end = data_start + data.len() as u64;
        work.dirty = true;
        let entry = Entry {
            member: Member {
                data_start,
                compressed_size: data.len() as u64,
                size: member.size,
                deflated,
                crc32: member.crc32,
            },
            header_offset: offset,
            record: member.central_record(offset),
        };
        self.shared_mut().entries.insert(key.to_string(), entry);
        Ok(())
    }

    /// Leaves `key` out of the central directory (its bytes stay, as those of a key set again).
    fn erase(&self, key: &str) {
        let mut work = lock(&self.work);
        if self.shared_mut().entries.remove(key).is_some() {
            work.dirty = true;
        }
    }

    /// Writes the central directory after the members and renames the working file over the
    /// archive at `path`, if anything changed since the last flush.
    fn flush(&self, path: &Path) -> Result<()> {
        let mut work = lock(&self.work);
        if !work.dirty {
            return Ok(());
        }
        let shown = path.display();
        let file = self.working_file(path, &mut work)?;
        let io = |e| {
            Error::io(
                format!("zip store {shown:?}: writing its central directory"),
                e,
            )
        };
        let start = work.end;
        let (count, size) = {
            let shared = self.shared.read().unwrap_or_else(|p| p.into_inner());
            let mut order: Vec<&Entry> = shared.entries.values().collect();
            order.sort_by_key(|e| e.header_offset);
            let mut at = start;
            let mut buf = Vec::with_capacity(DIRECTORY_BUFFER.min(order.len() * 64 + 64));
            for entry in &order {
                buf.extend_from_slice(&entry.record);
                if buf.len() >= DIRECTORY_BUFFER {
                    write_file_at(&file, at, &buf).map_err(io)?;
                    at += buf.len() as u64;
                    buf.clear();
                }
            }
            write_file_at(&file, at, &buf).map_err(io)?;
            at += buf.len() as u64;
            (order.len() as u64, at - start)
        };
        let end = end_records(count, start, size, &work.comment);
        write_file_at(&file, start + size, &end).map_err(io)?;
        let len = start + size + end.len() as u64;
        file.set_len(len).map_err(io)?;
        if self.fsync {
            file.sync_all().map_err(io)?;
        }
        let (_, temp) = work.file.take().expect("made above");
        if let Err(e) = fs::rename(&temp, path) {
            work.file = Some((file, temp));
            return Err(Error::io(format!("zip store {shown:?}: replacing it"), e));
        }
        work.published = Some(len);
        work.dirty = false;
        if self.fsync {
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
            File::open(dir.unwrap_or(Path::new(".")))
                .and_then(|d| d.sync_all())
                .map_err(|e| {
                    Error::io(format!("zip store {shown:?}: flushing its directory"), e)
                })?;
        }
        Ok(())
    }

    /// Removes a working file left by a flush that failed.
    fn discard(&self) {
        if let Some((_, temp)) = lock(&self.work).file.take() {
            let _ = fs::remove_file(temp);
        }
    }
}

/// One member of an archive. Its size is known without reading it; the first read reads it
/// whole (decompressing it and checking its CRC), so no byte of a member that fails its check
/// is ever handed out.
struct MemberReader<'a> {
    store: &'a ZipStore,
    file: Arc<File>,
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
                .read_member(&self.file, &self.key, &self.member, &mut data)?;
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
        match self.find(key) {
            Some((member, file)) => self.read_member(&file, key, &member, buf).map(|()| true),
            None => Ok(false),
        }
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        validate_key(key)?;
        match &self.mode {
            Mode::Read { .. } => Err(self.read_only(key)),
            Mode::Write(w) => w.set(&self.path, key, value),
        }
    }

    /// Leaves the key's member out of the next central directory: readers of the archive no
    /// longer see it (its bytes stay in the file, unreferenced).
    fn erase(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        match &self.mode {
            Mode::Read { .. } => Err(self.read_only(key)),
            Mode::Write(w) => {
                w.erase(key);
                Ok(())
            }
        }
    }

    fn open_value(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        validate_key(key)?;
        Ok(self.find(key).map(|(member, file)| {
            Box::new(MemberReader {
                store: self,
                file,
                key: key.to_string(),
                member,
                data: OnceLock::new(),
            }) as Box<dyn ValueReader>
        }))
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        Ok(self.find(key).map(|(m, _)| m.size))
    }

    fn contains(&self, key: &str) -> Result<bool> {
        validate_key(key)?;
        Ok(self.find(key).is_some())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Ok(self.with_names(|names| names.list_prefix(prefix)))
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Ok(self.with_names(|names| names.list_dir(prefix)))
    }

    /// Writes the central directory and puts the archive in place, if anything changed since
    /// it was last written; the store stays writable.
    fn flush(&self) -> Result<()> {
        match &self.mode {
            Mode::Read { .. } => Ok(()),
            Mode::Write(w) => w.flush(&self.path),
        }
    }
}

impl Drop for ZipStore {
    /// Writes what changed after the last flush; a failure here cannot be reported, and the
    /// working file is then removed, leaving the archive as the last flush wrote it.
    fn drop(&mut self) {
        if let Mode::Write(w) = &self.mode {
            if w.flush(&self.path).is_err() {
                w.discard();
            }
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn open(name: &str, mode: OpenMode) -> Result<ZipStore> {
        ZipStore::open(name, mode, ZipCompression::Stored, false)
    }

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
            let store = open(name, OpenMode::Write).unwrap();
            super::super::tests::exercise_store(&store);
            store.flush().unwrap();
        }
        let store = open(name, OpenMode::Read).unwrap();
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
        fs::remove_file(&path).unwrap();
    }

    /// What Python's `zipfile` (and so zarr-python) sees of an archive: every central
    /// directory name, in order.
    fn directory_names(path: &Path) -> Vec<String> {
        let archive = ZipArchive::new(File::open(path).unwrap()).unwrap();
        assert!(!archive.has_duplicate_names());
        archive
            .file_names()
            .map(|n| n.unwrap().into_owned())
            .collect()
    }

    /// The working files left beside `path`.
    fn leftovers(path: &Path) -> Vec<String> {
        let name = path.file_name().unwrap().to_str().unwrap();
        fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!(".{name}{TEMP_MARKER}")))
            .collect()
    }

    #[test]
    fn appends_to_an_existing_archive_and_the_last_write_wins() {
        let path = temp_path("append");
        let name = path.to_str().unwrap();
        // An archive with a duplicate name, as zarr-python writes a key set twice.
        {
            let mut zip = zip::ZipWriter::new(File::create(&path).unwrap());
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(CompressionMethod::Stored);
            zip.start_file("a/0", options).unwrap();
            zip.write_all(b"first").unwrap();
            zip.start_file("keep", options).unwrap();
            zip.write_all(b"kept").unwrap();
            zip.set_comment("made by a test").unwrap();
            zip.finish().unwrap();
        }
        let before = fs::read(&path).unwrap();
        let store = open(name, OpenMode::Write).unwrap();
        assert_eq!(store.get("a/0").unwrap().unwrap(), b"first");
        store.flush().unwrap(); // nothing changed: the archive is not touched
        assert_eq!(fs::read(&path).unwrap(), before);
        store.set("a/0", b"second").unwrap();
        store.set("b/0", &[7u8; 5000]).unwrap();
        store.set("b/0", b"short").unwrap();
        assert_eq!(store.get("a/0").unwrap().unwrap(), b"second");
        assert_eq!(store.get("b/0").unwrap().unwrap(), b"short");
        assert_eq!(store.get("keep").unwrap().unwrap(), b"kept");
        // Until the flush the archive is as it was.
        assert_eq!(fs::read(&path).unwrap(), before);
        assert_eq!(leftovers(&path).len(), 1);
        store.flush().unwrap();
        assert!(leftovers(&path).is_empty());
        assert_eq!(directory_names(&path), vec!["keep", "a/0", "b/0"]);
        let archive = ZipArchive::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(archive.comment(), b"made by a test");
        // Still writable after the flush; reads see both.
        store.set("c", b"after").unwrap();
        store.erase("keep").unwrap();
        store.erase("never-there").unwrap();
        assert!(!store.contains("keep").unwrap());
        drop(store);
        let store = open(name, OpenMode::Read).unwrap();
        assert_eq!(store.list_prefix("").unwrap(), vec!["a/0", "b/0", "c"]);
        assert_eq!(store.get("a/0").unwrap().unwrap(), b"second");
        assert_eq!(store.get("b/0").unwrap().unwrap(), b"short");
        assert_eq!(store.get("c").unwrap().unwrap(), b"after");
        drop(store);
        assert!(leftovers(&path).is_empty());
        fs::remove_file(&path).unwrap();
    }

    #[test]
    fn writes_deflated_members_and_reads_them_back() {
        let path = temp_path("deflate-write");
        let name = path.to_str().unwrap();
        let value = b"zarr zarr zarr zarr ".repeat(500);
        {
            let store =
                ZipStore::open(name, OpenMode::Write, ZipCompression::Deflate, true).unwrap();
            super::super::tests::exercise_store(&store);
            store.set("big", &value).unwrap();
            assert_eq!(store.get("big").unwrap().unwrap(), value);
        }
        assert!(fs::metadata(&path).unwrap().len() < value.len() as u64 / 4);
        let mut archive = ZipArchive::new(File::open(&path).unwrap()).unwrap();
        let member = archive.by_name_raw(b"big").unwrap();
        assert_eq!(member.compression(), CompressionMethod::DEFLATE);
        drop(member);
        let store = open(name, OpenMode::Read).unwrap();
        assert_eq!(store.get("big").unwrap().unwrap(), value);
        assert_eq!(store.get("b").unwrap().unwrap(), b"zz");
        drop(store);
        fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_flushed_archive_is_complete_while_the_store_stays_open() {
        let path = temp_path("flush");
        let name = path.to_str().unwrap();
        let store = open(name, OpenMode::Write).unwrap();
        assert!(!path.exists(), "nothing is written before the first flush");
        store.set("x/0", b"one").unwrap();
        store.flush().unwrap();
        let reader = open(name, OpenMode::Read).unwrap();
        assert_eq!(reader.get("x/0").unwrap().unwrap(), b"one");
        store.set("x/1", b"two").unwrap();
        // The reader's archive is untouched by later writes, and still the one at the path.
        assert_eq!(reader.get("x/0").unwrap().unwrap(), b"one");
        assert!(!reader.contains("x/1").unwrap());
        assert_eq!(directory_names(&path), vec!["x/0"]);
        store.flush().unwrap();
        assert_eq!(directory_names(&path), vec!["x/0", "x/1"]);
        assert_eq!(store.get("x/0").unwrap().unwrap(), b"one");
        drop((store, reader));
        fs::remove_file(&path).unwrap();
    }

    #[test]
    fn many_members_take_a_zip64_end_record() {
        let path = temp_path("zip64");
        let name = path.to_str().unwrap();
        let count = ZIP_FILECOUNT_LIMIT as usize + 10;
        {
            let store = open(name, OpenMode::Write).unwrap();
            for i in 0..count {
                store
                    .set(&format!("c/{i}"), &(i as u32).to_le_bytes())
                    .unwrap();
            }
        }
        let archive = ZipArchive::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(archive.len(), count);
        drop(archive);
        // Appending to it keeps every member.
        let store = open(name, OpenMode::Write).unwrap();
        store.set("c/0", b"new").unwrap();
        drop(store);
        let store = open(name, OpenMode::Read).unwrap();
        assert_eq!(store.list_prefix("c/").unwrap().len(), count);
        assert_eq!(store.get("c/0").unwrap().unwrap(), b"new");
        assert_eq!(
            store.get("c/65540").unwrap().unwrap(),
            65540u32.to_le_bytes()
        );
        drop(store);
        fs::remove_file(&path).unwrap();
    }

    #[test]
    fn existing_files_that_are_not_archives_are_refused_for_writing() {
        let path = temp_path("not-a-zip");
        let name = path.to_str().unwrap();
        fs::write(&path, b"hello").unwrap();
        let err = open(name, OpenMode::Write).unwrap_err();
        assert!(
            matches!(&err, Error::CorruptChunk(m) if m.contains(name)),
            "{err}"
        );
        assert_eq!(fs::read(&path).unwrap(), b"hello");
        // An empty file is a new archive.
        fs::write(&path, b"").unwrap();
        let store = open(name, OpenMode::Write).unwrap();
        store.set("k", b"v").unwrap();
        drop(store);
        assert_eq!(directory_names(&path), vec!["k"]);
        // Bytes before the first member: readable, not writable.
        let mut prefixed = b"#!/bin/sh\nexit 0\n".to_vec();
        prefixed.extend(fs::read(&path).unwrap());
        fs::write(&path, &prefixed).unwrap();
        if open(name, OpenMode::Read).is_ok() {
            let err = open(name, OpenMode::Write).unwrap_err();
            assert!(
                matches!(&err, Error::Unsupported(m) if m.contains("before")),
                "{err}"
            );
        }
        fs::remove_file(&path).unwrap();
    }

    #[test]
    fn stored_members_are_checked_when_read_in_parts_too() {
        let path = temp_path("stored-crc");
        let name = path.to_str().unwrap();
        {
            let store = open(name, OpenMode::Write).unwrap();
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
        let store = open(name, OpenMode::Read).unwrap();
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
        let store = open(path.to_str().unwrap(), OpenMode::Read).unwrap();
        assert_eq!(store.get("x/0").unwrap().unwrap(), data);
        let reader = store.open_value("x/0").unwrap().unwrap();
        let mut part = [0u8; 5];
        reader.read_exact_at(6, &mut part).unwrap();
        assert_eq!(&part, b"hello");
        drop(reader);
        drop(store);

        write(crc.sum() ^ 1, data.len() as u32);
        let store = open(path.to_str().unwrap(), OpenMode::Read).unwrap();
        assert!(matches!(store.get("x/0"), Err(Error::CorruptChunk(_))));
        drop(store);

        write(crc.sum(), data.len() as u32 + 1);
        let store = open(path.to_str().unwrap(), OpenMode::Read).unwrap();
        assert!(matches!(store.get("x/0"), Err(Error::CorruptChunk(_))));
        drop(store);

        write(crc.sum(), u32::MAX);
        assert!(matches!(
            open(path.to_str().unwrap(), OpenMode::Read),
            Err(Error::CorruptChunk(_))
        ));
        fs::remove_file(&path).unwrap();
    }
}
