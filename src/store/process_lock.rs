//! Locks shared between processes, as zarr-python 2's `ProcessSynchronizer` takes them: the
//! lock of key `a/b/0.0` is the file `<lock directory>/a/b/0.0`, locked whole for writing with
//! an `fcntl` record lock (fasteners' `InterProcessLock` takes the same lock with `lockf`), so
//! a C writer and a Python writer sharing the lock directory exclude each other. The lock
//! belongs to the open file (an open-file-description lock on Linux), so threads of one
//! process exclude each other too, and closing another descriptor of the file does not drop
//! it. Lock files are left in place after use, as fasteners leaves them.

use crate::error::{Error, Result};
use crate::path::validate_key;
use std::fs::{self, File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// The `fcntl` command that waits for a record lock owned by the open file.
#[cfg(target_os = "linux")]
const SET_LOCK_WAIT: libc::c_int = libc::F_OFD_SETLKW;
#[cfg(not(target_os = "linux"))]
const SET_LOCK_WAIT: libc::c_int = libc::F_SETLKW;

/// A directory of lock files, one per key.
#[derive(Debug)]
pub struct ProcessLocks {
    root: PathBuf,
}

/// A key's lock, held until dropped.
#[derive(Debug)]
pub struct KeyLock {
    _file: File,
}

impl ProcessLocks {
    /// Uses the lock directory `dir`, creating it if missing.
    pub fn open(dir: &str) -> Result<ProcessLocks> {
        let root = PathBuf::from(dir);
        fs::create_dir_all(&root)
            .map_err(|e| Error::io(format!("creating the lock directory {dir:?}"), e))?;
        Ok(ProcessLocks { root })
    }

    /// Waits for the lock of `key` and takes it.
    pub fn lock(&self, key: &str) -> Result<KeyLock> {
        validate_key(key)?;
        let path = self.root.join(key);
        let failed = |e: std::io::Error| Error::io(format!("locking {}", path.display()), e);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(failed)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(failed)?;
        // SAFETY: an all-zero `flock` is valid; the fields that matter are set below.
        let mut whole: libc::flock = unsafe { std::mem::zeroed() };
        whole.l_type = libc::F_WRLCK as _;
        whole.l_whence = libc::SEEK_SET as _;
        loop {
            // SAFETY: the descriptor is open and `whole` a valid `flock` for the call.
            if unsafe { libc::fcntl(file.as_raw_fd(), SET_LOCK_WAIT, &whole) } == 0 {
                return Ok(KeyLock { _file: file });
            }
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(failed(error));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_held_lock_excludes_other_holders_until_dropped() {
        let dir = std::env::temp_dir().join(format!("libzarr-locks-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let locks = Arc::new(ProcessLocks::open(dir.to_str().unwrap()).unwrap());
        let held = locks.lock("a/0.0").unwrap();
        assert!(
            dir.join("a/0.0").is_file(),
            "the lock file sits at the key's path"
        );
        let taken = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (locks, taken) = (locks.clone(), taken.clone());
            std::thread::spawn(move || {
                let _lock = locks.lock("a/0.0").unwrap();
                taken.store(true, Ordering::SeqCst);
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(
            !taken.load(Ordering::SeqCst),
            "a second holder got the lock"
        );
        drop(held);
        waiter.join().unwrap();
        assert!(taken.load(Ordering::SeqCst));
        assert!(
            locks.lock("../x").is_err(),
            "keys stay inside the directory"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lock_directory_that_cannot_be_made_is_an_error_naming_it() {
        let file = std::env::temp_dir().join(format!("libzarr-lockfile-{}", std::process::id()));
        fs::write(&file, b"not a directory").unwrap();
        let below = file.join("locks");
        match ProcessLocks::open(below.to_str().unwrap()) {
            Err(Error::Io(m)) => {
                assert!(m.contains("lock directory") && m.contains("locks"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        // A key whose lock file cannot be made (its parent is a file) names the lock file.
        let dir = std::env::temp_dir().join(format!("libzarr-locks-bad-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let locks = ProcessLocks::open(dir.to_str().unwrap()).unwrap();
        fs::write(dir.join("a"), b"").unwrap();
        match locks.lock("a/0.0") {
            Err(Error::Io(m)) => assert!(m.contains("locking") && m.contains("a/0.0"), "{m}"),
            other => panic!("{other:?}"),
        }
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_file(&file).unwrap();
    }
}
