//! A store on the local file system: key `a/b/0.0` is the file `<root>/a/b/0.0`.

use super::{read_file_at, OpenMode, Store, ValueReader, ValueVersion};
use crate::error::{Error, Result};
use crate::path::{validate_key, validate_prefix, TEMP_MARKER};
use std::borrow::Cow;
use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Numbers the temporary files of this process, whichever store handle writes them, so that
/// two writes never share one.
static TEMP_FILES: AtomicU64 = AtomicU64::new(0);

/// A directory on disk holding one key per file; `/` in keys makes subdirectories.
/// Writes go to a temporary file in the same directory that is then renamed over the key,
/// so a crash never leaves a torn value behind. With `fsync`, a write is on the disk before
/// it returns: the temporary file is flushed before the rename, and the directory after it
/// (as are directories the write created), so it also survives a power loss.
#[derive(Debug)]
pub struct DirectoryStore {
    root: PathBuf,
    fsync: bool,
    /// Opened for writing: listings then remove the temporary files of writers that are gone.
    writable: bool,
    /// Keys are lower-cased before they name files ([`DirectoryStore::normalizing_keys`]).
    normalize_keys: bool,
}

impl DirectoryStore {
    /// Opens the directory `root`. In [`OpenMode::Write`] it is created if missing; in
    /// [`OpenMode::Read`] a missing directory is [`Error::NotFound`]. `fsync` makes every
    /// write durable before it returns.
    pub fn open(root: &str, mode: OpenMode, fsync: bool) -> Result<Self> {
        if root.is_empty() {
            return Err(Error::InvalidArgument("store location is empty".into()));
        }
        let path = PathBuf::from(root);
        match fs::metadata(&path) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::InvalidArgument(format!(
                    "store location {root:?} exists but is not a directory"
                )))
            }
            Err(e) if e.kind() == ErrorKind::NotFound => match mode {
                OpenMode::Read => {
                    return Err(Error::NotFound(format!(
                        "store directory {root:?} does not exist"
                    )))
                }
                OpenMode::Write => create_dirs(&path, fsync)
                    .map_err(|e| Error::io(format!("creating {root:?}"), e))?,
            },
            Err(e) => return Err(Error::io(format!("store location {root:?}"), e)),
        }
        Ok(DirectoryStore {
            root: path,
            fsync,
            writable: mode == OpenMode::Write,
            normalize_keys: false,
        })
    }

    /// The store with keys lower-cased (`normalize`) before they name files, as zarr-python
    /// 2's `DirectoryStore(normalize_keys=True)`; listings give keys below the prefix asked
    /// for as the file system holds them.
    pub fn normalizing_keys(self, normalize: bool) -> Self {
        DirectoryStore {
            normalize_keys: normalize,
            ..self
        }
    }

    /// `key` (or a prefix) as the file system holds it.
    fn stored<'a>(&self, key: &'a str) -> Cow<'a, str> {
        match self.normalize_keys {
            true => Cow::Owned(key.to_lowercase()),
            false => Cow::Borrowed(key),
        }
    }

    fn file(&self, key: &str) -> Result<PathBuf> {
        validate_key(key)?;
        let stored = self.stored(key);
        validate_key(&stored)?;
        Ok(self.root.join(&*stored))
    }

    /// Stores a value under `key` by having `write` fill a new temporary file in the key's
    /// directory, then renaming it over the key (with `fsync`: the file flushed before, the
    /// directory after). On failure the temporary file is removed and the key is unchanged.
    fn write_atomically(
        &self,
        key: &str,
        write: impl FnOnce(&Path) -> std::io::Result<()>,
    ) -> Result<()> {
        let file = self.file(key)?;
        let parent = file.parent().unwrap_or(&self.root);
        create_dirs(parent, self.fsync)
            .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("key");
        let counter = TEMP_FILES.fetch_add(1, Ordering::Relaxed);
        let temp = parent.join(format!(
            ".{name}{TEMP_MARKER}{}-{counter}",
            std::process::id()
        ));
        let mut dir = None;
        write(&temp)
            .and_then(|()| {
                journal::record(|| journal::Event::Created(temp.clone(), fs::read(&temp)));
                match self.fsync {
                    true => fs::File::open(&temp)?.sync_all(),
                    false => Ok(()),
                }
            })
            .and_then(|()| {
                if self.fsync {
                    journal::record(|| journal::Event::SyncedFile(temp.clone()));
                }
                dir = self.open_dir_to_sync(parent)?;
                fs::rename(&temp, &file)
            })
            .inspect(|()| journal::record(|| journal::Event::Renamed(temp.clone(), file.clone())))
            .map_err(|e| {
                let _ = fs::remove_file(&temp);
                Error::io(format!("writing {}", file.display()), e)
            })?;
        Self::flush_dir(dir).map_err(|e| {
            Error::io(
                format!("writing {} (flushing its directory)", file.display()),
                e,
            )
        })
    }

    /// With `fsync`, the directory `dir` opened to be flushed once a name in it changed. It is
    /// opened before the change, so that a failure to open it leaves the store as it was and
    /// only the flush itself can fail after the change.
    fn open_dir_to_sync(&self, dir: &Path) -> std::io::Result<Option<(fs::File, PathBuf)>> {
        match self.fsync {
            true => fs::File::open(dir).map(|file| Some((file, dir.to_path_buf()))),
            false => Ok(None),
        }
    }

    /// Flushes a directory from [`DirectoryStore::open_dir_to_sync`], so that names added or
    /// removed in it last.
    fn flush_dir(dir: Option<(fs::File, PathBuf)>) -> std::io::Result<()> {
        if let Some((file, path)) = dir {
            file.sync_all()?;
            journal::record(|| journal::Event::SyncedDir(path));
        }
        Ok(())
    }

    fn dir(&self, prefix: &str) -> Result<PathBuf> {
        validate_prefix(prefix)?;
        Ok(self.root.join(self.stored(prefix).trim_end_matches('/')))
    }

    /// Names in one directory, without temporary files; a missing directory is empty. In a
    /// store opened for writing, temporary files that killed writers left behind are removed
    /// ([`is_orphan`]).
    fn read_dir_names(&self, dir: &Path) -> Result<Vec<(String, bool)>> {
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if no_such_name(&e) => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(format!("listing {}", dir.display()), e)),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if name.contains(TEMP_MARKER) {
                if self.writable && is_orphan(&entry.path(), &name) {
                    // Another lister may have removed it first; either way it is gone.
                    let _ = fs::remove_file(entry.path());
                }
                continue;
            }
            let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
            names.push((name, is_dir));
        }
        names.sort();
        Ok(names)
    }

    fn collect_below(&self, dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<()> {
        for (name, is_dir) in self.read_dir_names(dir)? {
            let key = format!("{prefix}{name}");
            if is_dir {
                self.collect_below(&dir.join(&name), &format!("{key}/"), out)?;
            } else {
                out.push(key);
            }
        }
        Ok(())
    }
}

/// Removes `dir` and the directories below it that hold no files, deepest first; directories
/// that still hold something (a writer's new file among them) stay.
fn remove_empty_dirs(dir: &Path) -> Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if no_such_name(&e) => return Ok(()),
        Err(e) => return Err(Error::io(format!("listing {}", dir.display()), e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            remove_empty_dirs(&entry.path())?;
        }
    }
    match fs::remove_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty || no_such_name(&e) => Ok(()),
        done => done.map_err(|e| Error::io(format!("removing {}", dir.display()), e)),
    }
}

/// Whether the failure `e` says that nothing is at a path: no such file, a file where a
/// directory of the path should be, or a name longer than the file system allows (no value was
/// ever stored under it: writing it fails).
fn no_such_name(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
        || e.raw_os_error() == Some(libc::ENAMETOOLONG)
}

/// Whether the failure `e` to read `key` at `path` means the key has no value (`Ok`): nothing
/// is there ([`no_such_name`]), or a directory (which holds keys below it, as in zarr-python's
/// stores). A link to nothing is an error naming the key, never a missing value (which would
/// read as the fill value).
fn missing_or_error(path: &Path, key: &str, e: std::io::Error) -> Result<()> {
    let nothing = no_such_name(&e);
    match fs::symlink_metadata(path) {
        Err(_) if nothing => Ok(()),
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) if m.is_symlink() && nothing => Err(Error::io(
            format!(
                "key {key:?}: {} is a link to {:?}, which",
                path.display(),
                fs::read_link(path).unwrap_or_default()
            ),
            e,
        )),
        _ => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

/// How long a temporary file must have been left unchanged before it may be an orphan.
const ORPHAN_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether the temporary file at `path` (named `name`) was left by a write that will never
/// finish: the process whose number its name holds no longer runs on this machine, and the
/// file has not changed for [`ORPHAN_AGE`] (a process of another machine sharing the
/// directory may have the same number).
fn is_orphan(path: &Path, name: &str) -> bool {
    let pid = name
        .split(TEMP_MARKER)
        .nth(1)
        .and_then(|rest| rest.split('-').next()?.parse::<libc::pid_t>().ok());
    let Some(pid) = pid.filter(|&p| p > 0) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists.
    let gone = unsafe { libc::kill(pid, 0) } != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    gone && fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|age| age >= ORPHAN_AGE))
}

/// Creates `dir` and its missing ancestors; with `fsync`, flushes each new directory's parent
/// so that the new name lasts.
fn create_dirs(dir: &Path, fsync: bool) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(parent) = parent {
        create_dirs(parent, fsync)?;
    }
    match fs::create_dir(dir) {
        Err(e) if e.kind() == ErrorKind::AlreadyExists && dir.is_dir() => return Ok(()),
        Err(e) => return Err(e),
        Ok(()) => journal::record(|| journal::Event::Made(dir.to_path_buf())),
    }
    match fsync {
        true => sync_dir(parent.unwrap_or(Path::new("."))),
        false => Ok(()),
    }
}

/// Flushes the directory `dir`, so that the names added or removed in it last.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    fs::File::open(dir)?.sync_all()?;
    journal::record(|| journal::Event::SyncedDir(dir.to_path_buf()));
    Ok(())
}

/// What the store does to the file system, recorded by the tests for their simulated power
/// losses (`power_loss.rs`); outside the tests nothing is recorded.
pub(crate) mod journal {
    use std::path::PathBuf;

    /// One step of a write.
    #[derive(Debug)]
    #[cfg_attr(not(test), allow(dead_code))] // built only to be recorded
    pub enum Event {
        /// A new file was written whole (its contents as read back).
        Created(PathBuf, std::io::Result<Vec<u8>>),
        /// A file's contents were flushed.
        SyncedFile(PathBuf),
        /// A file was renamed over another name in the same directory.
        Renamed(PathBuf, PathBuf),
        /// A file was removed.
        Removed(PathBuf),
        /// A directory was created.
        Made(PathBuf),
        /// A directory was flushed.
        SyncedDir(PathBuf),
        /// The store call returned (recorded by the test).
        Returned,
    }

    #[cfg(test)]
    thread_local! {
        static EVENTS: std::cell::RefCell<Option<Vec<Event>>> = const { std::cell::RefCell::new(None) };
    }

    /// Records the events of this thread from now on.
    #[cfg(test)]
    pub fn start() {
        EVENTS.with(|e| *e.borrow_mut() = Some(Vec::new()));
    }

    /// Stops recording and gives the events recorded.
    #[cfg(test)]
    pub fn take() -> Vec<Event> {
        EVENTS.with(|e| e.borrow_mut().take().unwrap_or_default())
    }

    /// Records `event()` when this thread is recording.
    #[cfg(test)]
    pub fn record(event: impl FnOnce() -> Event) {
        EVENTS.with(|e| {
            if let Some(events) = e.borrow_mut().as_mut() {
                events.push(event());
            }
        });
    }

    /// Outside the tests, nothing.
    #[cfg(not(test))]
    #[inline(always)]
    pub fn record(_event: impl FnOnce() -> Event) {}
}

/// An open file read in parts.
struct FileValue {
    file: fs::File,
    len: u64,
    path: PathBuf,
    version: Option<ValueVersion>,
}

/// The version of the file `metadata` describes (Unix only).
fn file_version(metadata: &fs::Metadata) -> Option<ValueVersion> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = metadata;
        Some(ValueVersion([
            m.dev() as i64,
            m.ino() as i64,
            m.size() as i64,
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        ]))
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        None
    }
}

impl ValueReader for FileValue {
    fn len(&self) -> u64 {
        self.len
    }

    fn version(&self) -> Option<ValueVersion> {
        self.version
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        read_file_at(&self.file, offset, buf).map_err(|e| match e.kind() {
            ErrorKind::UnexpectedEof => Error::CorruptChunk(format!(
                "{} ends before byte {offset} + {}",
                self.path.display(),
                buf.len()
            )),
            _ => Error::io(format!("reading {}", self.path.display()), e),
        })
    }
}

impl Store for DirectoryStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let mut buf = Vec::new();
        Ok(self.get_into(key, &mut buf)?.then_some(buf))
    }

    /// A directory at `key` holds the keys below it and is no value itself (as `contains`
    /// and `value_len` say, and as zarr-python's stores read it).
    fn get_into(&self, key: &str, buf: &mut Vec<u8>) -> Result<bool> {
        let file = self.file(key)?;
        buf.clear();
        match fs::File::open(&file).and_then(|mut f| f.read_to_end(buf)) {
            Ok(_) => Ok(true),
            Err(e) => missing_or_error(&file, key, e).map(|()| false),
        }
    }

    fn open_value(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        let path = self.file(key)?;
        let opened = fs::File::open(&path).and_then(|f| Ok((f.metadata()?, f)));
        match opened {
            // A directory holds keys below it and no value, as in zarr-python's stores.
            Ok((m, _)) if m.is_dir() => Ok(None),
            Ok((m, file)) => Ok(Some(Box::new(FileValue {
                file,
                len: m.len(),
                path,
                version: file_version(&m),
            }))),
            Err(e) => missing_or_error(&path, key, e).map(|()| None),
        }
    }

    fn contains(&self, key: &str) -> Result<bool> {
        Ok(self.file(key)?.is_file())
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.write_atomically(key, |temp| fs::File::create(temp)?.write_all(value))
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        let file = self.file(key)?;
        match fs::metadata(&file) {
            Ok(m) if m.is_dir() => Ok(None),
            Ok(m) => Ok(Some(m.len())),
            Err(e) => missing_or_error(&file, key, e).map(|()| None),
        }
    }

    fn value_file(&self, key: &str) -> Result<Option<PathBuf>> {
        let file = self.file(key)?;
        Ok(file.is_file().then_some(file))
    }

    fn set_from_file(&self, key: &str, source: &Path) -> Result<()> {
        // `fs::copy` copies inside the kernel where it can (copy_file_range on Linux).
        self.write_atomically(key, |temp| fs::copy(source, temp).map(drop))
    }

    fn erase(&self, key: &str) -> Result<()> {
        let file = self.file(key)?;
        let gone = no_such_name;
        let dir = match self.open_dir_to_sync(file.parent().unwrap_or(&self.root)) {
            Ok(dir) => dir,
            Err(e) if gone(&e) => return Ok(()),
            Err(e) => return Err(Error::io(format!("removing {}", file.display()), e)),
        };
        match fs::remove_file(&file) {
            Ok(()) => {
                journal::record(|| journal::Event::Removed(file.clone()));
                Self::flush_dir(dir).map_err(|e| {
                    Error::io(
                        format!("removing {} (flushing its directory)", file.display()),
                        e,
                    )
                })
            }
            Err(e) if gone(&e) => Ok(()),
            Err(e) => Err(Error::io(format!("removing {}", file.display()), e)),
        }
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let mut out = Vec::new();
        self.collect_below(&self.dir(prefix)?, prefix, &mut out)?;
        Ok(out)
    }

    fn prune(&self, prefix: &str) -> Result<()> {
        if prefix.is_empty() {
            for (name, is_dir) in self.read_dir_names(&self.root)? {
                if is_dir {
                    remove_empty_dirs(&self.root.join(name))?;
                }
            }
            return Ok(());
        }
        remove_empty_dirs(&self.dir(prefix)?)
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        Ok(self
            .read_dir_names(&self.dir(prefix)?)?
            .into_iter()
            .map(|(n, _)| n)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_root(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("libzarr-dir-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn behaves_like_a_store() {
        let root = temp_root("store");
        let store = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Write, false).unwrap();
        super::super::tests::exercise_store(&store);
        assert!(
            root.join("a/1/0").is_file(),
            "nested keys become subdirectories"
        );
        assert!(!root.parent().unwrap().join("x").exists());
        fs::remove_dir_all(&root).unwrap();
        let durable = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Write, true).unwrap();
        super::super::tests::exercise_store(&durable);
        fs::remove_dir_all(&root).unwrap();
    }

    /// A key with a name longer than the file system allows (255 bytes) holds no value, as in
    /// a memory store: reads, listings and erasing see nothing; writing it is an error naming
    /// it. (Fuzzing found reads failing with "File name too long" instead.)
    #[test]
    fn keys_too_long_for_the_file_system_hold_nothing() {
        let root = temp_root("long");
        let store = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Write, false).unwrap();
        let long = format!("a/{}", "x".repeat(300));
        assert!(store.get(&long).unwrap().is_none());
        assert!(store.open_value(&long).unwrap().is_none());
        assert!(store.list_dir(&format!("{long}/")).unwrap().is_empty());
        store.erase(&long).unwrap();
        match store.set(&long, b"v") {
            Err(Error::Io(m)) => assert!(m.contains("xxxx"), "{m}"),
            other => panic!("writing a key too long: {other:?}"),
        }
        fs::remove_dir_all(&root).unwrap();
    }

    /// With `normalize_keys`, every spelling of a key is the lower-case file; listings keep
    /// the prefix as asked for.
    #[test]
    fn normalized_keys_are_lower_case_files() {
        let root = temp_root("normalize");
        let store = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Write, false)
            .unwrap()
            .normalizing_keys(true);
        store.set("Group/Temp/0.0", b"v").unwrap();
        assert!(root.join("group/temp/0.0").is_file());
        assert_eq!(
            store.get("GROUP/temp/0.0").unwrap().as_deref(),
            Some(&b"v"[..])
        );
        assert!(store.contains("group/TEMP/0.0").unwrap());
        assert_eq!(store.list_prefix("Group/").unwrap(), ["Group/temp/0.0"]);
        assert_eq!(store.list_dir("GROUP/").unwrap(), ["temp"]);
        store.erase("Group/Temp/0.0").unwrap();
        assert!(!root.join("group/temp/0.0").exists());
        let plain = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Write, false).unwrap();
        plain.set("Upper", b"u").unwrap();
        assert!(root.join("Upper").is_file() && !root.join("upper").exists());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn read_mode_needs_an_existing_directory() {
        let root = temp_root("missing");
        let err = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Read, false).unwrap_err();
        assert!(matches!(err, Error::NotFound(_)));
        assert!(!root.exists());
    }

    /// A directory is where keys below it live, not a value: reading it finds nothing, as
    /// `contains` and `value_len` say (and as zarr-python's stores read it), instead of
    /// failing with an I/O error.
    #[test]
    fn a_directory_is_not_a_value() {
        let root = temp_root("dir-key");
        let store = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Write, false).unwrap();
        store.set("a/b", b"v").unwrap();
        assert!(!store.contains("a").unwrap());
        assert_eq!(store.value_len("a").unwrap(), None);
        assert_eq!(store.get("a").unwrap(), None);
        let mut buf = b"old".to_vec();
        assert!(!store.get_into("a", &mut buf).unwrap());
        assert!(store.open_value("a").unwrap().is_none());
        assert_eq!(store.get("a/b").unwrap().as_deref(), Some(&b"v"[..]));
        fs::remove_dir_all(&root).unwrap();
    }

    /// Listings hide every name holding the temporary-file marker, so a key holding it would
    /// be stored but never listed (and could be taken for a temporary file): it is refused.
    #[test]
    fn a_key_named_like_a_temporary_file_is_refused() {
        let root = temp_root("marker-key");
        let store = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Write, false).unwrap();
        for key in [
            format!(".k{TEMP_MARKER}1-0"),
            format!("a/x{TEMP_MARKER}"),
            format!("a{TEMP_MARKER}b/c"),
        ] {
            assert!(
                matches!(store.set(&key, b"v"), Err(Error::InvalidPath(_))),
                "{key:?}"
            );
        }
        assert!(store.list_prefix("").unwrap().is_empty());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn listing_hides_temporary_files() {
        let root = temp_root("temp");
        let store = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Write, false).unwrap();
        store.set("k", b"v").unwrap();
        fs::write(root.join(format!(".k{TEMP_MARKER}1-1")), b"partial").unwrap();
        assert_eq!(store.list_dir("").unwrap(), vec!["k"]);
        assert_eq!(store.list_prefix("").unwrap(), vec!["k"]);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_link_to_nothing_is_an_error_not_a_missing_value() {
        let root = temp_root("unreadable");
        let store = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Write, false).unwrap();
        std::os::unix::fs::symlink("/nonexistent/libzarr", root.join("dangling")).unwrap();
        let mut buf = Vec::new();
        for outcome in [
            store.get_into("dangling", &mut buf).map(drop),
            store.open_value("dangling").map(drop),
            store.value_len("dangling").map(drop),
        ] {
            match outcome {
                Err(Error::Io(m)) => assert!(m.contains("dangling"), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        assert!(!store.get_into("missing", &mut buf).unwrap());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn listing_a_writable_store_removes_what_killed_writers_left() {
        let root = temp_root("orphans");
        let store = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Write, false).unwrap();
        store.set("a/k", b"v").unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let old = std::time::SystemTime::now() - ORPHAN_AGE * 2;
        let temp = |pid: u32, age: Option<std::time::SystemTime>| {
            let path = root.join(format!("a/.k{TEMP_MARKER}{pid}-7"));
            let file = fs::File::create(&path).unwrap();
            if let Some(time) = age {
                file.set_modified(time).unwrap();
            }
            path
        };
        let orphan = temp(gone, Some(old));
        let fresh = temp(gone + 1_000_000, None);
        let mine = root.join(format!("a/.j{TEMP_MARKER}{}-7", std::process::id()));
        fs::File::create(&mine).unwrap().set_modified(old).unwrap();
        let reader = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Read, false).unwrap();
        assert_eq!(reader.list_prefix("").unwrap(), vec!["a/k"]);
        assert!(orphan.exists(), "a read-only store removed a file");
        assert_eq!(store.list_prefix("").unwrap(), vec!["a/k"]);
        assert!(
            !orphan.exists(),
            "an old file of a process that is gone stays"
        );
        assert!(
            fresh.exists(),
            "a file changed within the last minute was removed"
        );
        assert!(mine.exists(), "a file of a running process was removed");
        fs::remove_dir_all(&root).unwrap();
    }
}
