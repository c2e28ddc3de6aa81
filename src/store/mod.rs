//! Key/value stores behind one trait, and the [`StoreHandle`] that arrays and groups share.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

mod access_mode;
#[cfg(feature = "s3")]
mod aws_profile;
#[cfg(feature = "azure")]
mod azure;
pub(crate) mod batches;
mod capabilities;
#[cfg(feature = "dbm")]
mod dbm;
mod directory;
#[cfg(feature = "gcs")]
mod gcs;
mod handle;
#[cfg(feature = "lmdb")]
mod lmdb;
mod location;
mod locks;
mod memory;
#[cfg(feature = "n5")]
mod n5;
mod options;
#[cfg(test)]
mod power_loss;
mod process_lock;
#[cfg(feature = "redis")]
mod redis;
mod reference;
pub mod reference_file;
#[cfg(feature = "parquet")]
mod reference_parquet;
#[cfg(feature = "remote")]
mod remote;
#[cfg(feature = "remote")]
mod request_counter;
mod request_stats;
#[cfg(feature = "s3")]
mod s3;
mod sorted_keys;
mod split;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "zip")]
mod zip;

pub use access_mode::AccessMode;
pub use capabilities::Capabilities;
#[cfg(feature = "dbm")]
pub use dbm::DbmStore;
pub use directory::DirectoryStore;
pub use handle::{MetadataDocuments, StoreHandle};
#[cfg(feature = "lmdb")]
pub use lmdb::LmdbStore;
#[cfg(feature = "dbm")]
use location::canonical_file;
pub use location::{backend_of, kind_of, local_file, local_path, n5_directory, StoreKind};
pub use locks::ChunkLock;
pub use memory::MemoryStore;
#[cfg(feature = "n5")]
pub use n5::N5Store;
pub use options::{Backend, DbmFormat, StoreOptions, ZipCompression};
#[cfg(feature = "redis")]
pub use redis::RedisStore;
pub use reference::ReferenceStore;
#[cfg(feature = "remote")]
pub use remote::RemoteStore;
pub use request_stats::RequestStats;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
#[cfg(feature = "zip")]
pub use zip::ZipStore;

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
    /// Opens the values under `key(0)`, ..., `key(count - 1)` (`None`: missing) for partial
    /// reads; `parts(i, lead bytes, value length)` says from the [`Lead`] fetched first which
    /// `(offset, length)` parts of value `i` will be read next (a shard's inner chunks, from
    /// its index at its end; a blosc chunk's blocks, from its header). A store on a network
    /// fetches the leads and then those parts for all the values at once; the others open
    /// them one by one.
    fn open_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        lead: Lead,
        parts: &Parts,
    ) -> Result<Vec<Option<Box<dyn ValueReader + '_>>>> {
        let _ = parts;
        batches::open_each(self, count, key, lead)
    }
    /// The `length` bytes of the value under `key` from `offset` on; `None` if there is no
    /// value. A range that reaches past the value's end is [`Error::CorruptChunk`] naming the
    /// key.
    fn get_range(&self, key: &str, offset: u64, length: u64) -> Result<Option<Vec<u8>>> {
        Ok(self
            .get_ranges(key, &[(offset, length)])?
            .map(|mut parts| parts.remove(0)))
    }
    /// The `(offset, length)` parts of the value under `key`, in the order given; `None` if
    /// there is no value. A part that reaches past the value's end is [`Error::CorruptChunk`]
    /// naming the key. A store on a network asks for the parts alone, nearby ones merged into
    /// one request, the requests sent at once.
    fn get_ranges(&self, key: &str, ranges: &[(u64, u64)]) -> Result<Option<Vec<Vec<u8>>>> {
        let Some(value) = self.open_value(key)? else {
            return Ok(None);
        };
        let read = |&(offset, length): &(u64, u64)| {
            check_range(key, offset, length, value.len())?;
            let mut bytes = crate::error::try_alloc_zeroed(length as usize, key)?;
            value.read_exact_at(offset, &mut bytes)?;
            Ok(bytes)
        };
        ranges.iter().map(read).collect::<Result<_>>().map(Some)
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
        batches::get_each(self, count, key, f)
    }
    /// Runs `produce(0)`, ..., `produce(count - 1)` on the thread pool and stores what each
    /// gives: `(key, Some(value))` is set, `(key, None)` erased, `None` skipped; stops at the
    /// first error. Stores on a network keep many requests in flight, sending each value as
    /// it is produced; the others store it on the pool thread that produced it.
    fn set_many(&self, count: usize, produce: &Produce) -> Result<()> {
        batches::set_each(self, count, produce)
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

/// Refuses the range of `length` bytes from `offset` of the value under `key`, `len` bytes
/// long, when it reaches past the end.
fn check_range(key: &str, offset: u64, length: u64, len: u64) -> Result<()> {
    if offset.checked_add(length).is_none_or(|end| end > len) {
        return Err(past_the_end(key, offset, length, &format!("{len} bytes")));
    }
    Ok(())
}

/// The error for the range of `length` bytes from `offset` of the value under `key`, which
/// reaches past its end (`len`: what is known of its length).
pub(crate) fn past_the_end(key: &str, offset: u64, length: u64, len: &str) -> Error {
    Error::CorruptChunk(format!(
        "{length} bytes from {offset} of {key:?} reach past its end ({len})"
    ))
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

/// Which bytes of a value [`Store::open_many`] fetches first, with its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lead {
    /// The last bytes (0: the store's default, a shard index's worth): a shard's index.
    Tail(u64),
    /// The first bytes: a blosc chunk's header and block starts.
    Head(u64),
}

/// What [`Store::open_many`] asks of each value's [`Lead`]: the parts to fetch next.
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
