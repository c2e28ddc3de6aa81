//! zarr-python's modes of opening a store: `r`, `r+`, `a`, `w`, `w-`.

use super::{
    kind_of, local_file, local_path, Backend, OpenMode, StoreHandle, StoreKind, StoreOptions,
};
use crate::error::{Error, Result};
use std::sync::Arc;

/// How a store is opened, as zarr-python's `mode` argument says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessMode {
    /// `r`: reading only; the store must exist.
    Read,
    /// `r+`: reading and writing; the store must exist (a directory or zip file is not
    /// created).
    Update,
    /// `a`: reading and writing; a directory store is created if missing.
    Append,
    /// `w`: reading and writing; everything the store holds is removed at open (an existing zip
    /// file is replaced by a new one).
    Overwrite,
    /// `w-`: reading and writing; a store that holds any key is [`Error::AlreadyExists`].
    CreateNew,
}

impl AccessMode {
    /// Whether the store may be written.
    pub fn open_mode(self) -> OpenMode {
        match self {
            AccessMode::Read => OpenMode::Read,
            _ => OpenMode::Write,
        }
    }
}

impl StoreHandle {
    /// Opens `location` as [`StoreHandle::open_with_options`] does, in one of zarr-python's
    /// modes ([`AccessMode`]).
    pub fn open_in_mode(
        location: &str,
        mode: AccessMode,
        options: Option<&str>,
    ) -> Result<Arc<StoreHandle>> {
        let path = local_path(location);
        let exists = |f: &str| std::path::Path::new(f).exists();
        let missing = match kind_of(path) {
            // A dbm database is one file (GDBM) or `PATH.dir` with `PATH.dat` (dbm.dumb).
            StoreKind::Dbm => path
                .strip_prefix("dbm://")
                .is_some_and(|f| !exists(f) && !exists(&format!("{f}.dir"))),
            _ => local_file(path).is_some_and(|f| !exists(f)),
        };
        if mode == AccessMode::Update && missing {
            return Err(Error::NotFound(format!(
                "no store at {location:?} (mode r+ opens an existing store)"
            )));
        }
        if mode == AccessMode::Overwrite && kind_of(path) == StoreKind::Zip {
            // Bad options fail before the old archive is gone.
            StoreOptions::from_json(options.unwrap_or(""))?.check_backend(Backend::Zip, path)?;
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(Error::io(format!("replacing {path}"), e))
                }
                _ => {}
            }
        }
        let store = StoreHandle::open_with_options(location, mode.open_mode(), options)?;
        store.prepare_for(mode)?;
        Ok(store)
    }

    /// Does what `mode` asks of a store just opened: [`AccessMode::Overwrite`] removes
    /// everything, [`AccessMode::CreateNew`] refuses a store that holds any key.
    pub fn prepare_for(&self, mode: AccessMode) -> Result<()> {
        match mode {
            AccessMode::Overwrite => crate::keys::remove_prefix(self, ""),
            AccessMode::CreateNew => match self.list_prefix("")?.first() {
                Some(key) => Err(Error::AlreadyExists(format!(
                    "store {:?} is not empty (it holds {key:?}); mode w- creates a new one",
                    self.location()
                ))),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }
}
