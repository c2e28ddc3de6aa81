//! [`StoreHandle`]: an open store as arrays and groups share it — the backend, the mode it
//! was opened with, its place for the chunk locks and the consolidated metadata node lookups use.

use super::location::{canonical_file, kind_of, local_file, local_path, open_backend};
use super::locks::{stripe, ChunkLock};
use super::process_lock::ProcessLocks;
use super::split::SplitStore;
use super::{
    pause_after_conflict, Capabilities, Consume, Lead, OpenMode, Parts, Produce, RequestStats,
    Store, StoreKind, StoreOptions, ValueReader,
};
use crate::error::{Error, Result};
use crate::metadata::ZARR_JSON;
use crate::path;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

/// How many times [`StoreHandle::update`] reads a value again after another writer changed
/// it between its read and its write.
const UPDATE_ATTEMPTS: u32 = 16;

/// Buffers larger than this are not kept for the next [`StoreHandle::update`].
const KEEP_UPDATE_BUFFER_BYTES: usize = 64 << 20;

thread_local! {
    /// The old and new values of this thread's [`StoreHandle::update`], kept between calls.
    static UPDATE_BUFFERS: Cell<(Vec<u8>, Vec<u8>)> = const { Cell::new((Vec::new(), Vec::new())) };
}

/// Numbers the in-memory stores, which share no location with any other store.
static MEMORY_STORES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Metadata documents by key, read at once from consolidated metadata.
pub type MetadataDocuments = BTreeMap<String, Vec<u8>>;

/// Whether consolidated `documents` answer the metadata key `key`: those of a v3 root (it
/// holds `zarr.json`) answer v3 keys, the others (`.zmetadata`) v2 keys.
fn answers(documents: &MetadataDocuments, key: &str) -> bool {
    documents.contains_key(ZARR_JSON) == (path::last_segment(key) == ZARR_JSON)
}

/// An open store: the backend, the mode it was opened with, what names its place for the
/// process-wide chunk locks (which make partial-chunk writes through any handle of the same
/// store safe against each other), and the consolidated metadata in use, if any.
#[derive(Debug)]
pub struct StoreHandle {
    backend: Box<dyn Store>,
    kind: StoreKind,
    mode: OpenMode,
    location: String,
    /// The store's identity for the chunk locks: the canonical path of a directory or zip
    /// file, a number of its own for a memory store.
    lock_scope: String,
    /// The lock files shared with other processes (option `process_synchronizer`).
    process_locks: Option<ProcessLocks>,
    /// When set, node lookups ([`StoreHandle::node_document`]) read metadata keys
    /// ([`path::is_metadata_key`]) from here instead of the backend; raw key operations never
    /// do. Writes through this handle go to both.
    consolidated: RwLock<Option<MetadataDocuments>>,
    /// The key of the v2 consolidated metadata document (option `metadata_key`).
    consolidated_key: String,
}

impl StoreHandle {
    /// Opens `location`: `"memory:"` for a new in-memory store, `s3://bucket/prefix`,
    /// `az://container/prefix`, `gs://bucket/prefix` or `http[s]://host/path` for a
    /// [`RemoteStore`], `n5://PATH` or a directory path ending in `.n5` for an N5 container
    /// ([`N5Store`] over a [`DirectoryStore`]), `dbm://PATH` for a [`DbmStore`]
    /// (`dbm:///abs/path`, `dbm://rel/path`), `redis://HOST:PORT/DB` for a [`RedisStore`],
    /// `sqlite://PATH` for an [`SqliteStore`] and `lmdb://PATH` for an [`LmdbStore`] (`PATH`
    /// relative, or absolute after a third `/`), a path ending in `.zip` (that is not an
    /// existing directory) for a [`ZipStore`], anything else a directory path (`file://` may
    /// precede it). Consolidated metadata is not read here: front ends open stores through
    /// `crate::open::open_store`, which reads it.
    pub fn open(location: &str, mode: OpenMode) -> Result<Arc<StoreHandle>> {
        Self::open_with_options(location, mode, None)
    }

    /// Opens `location` as [`StoreHandle::open`] does, with settings given as a JSON object
    /// ([`StoreOptions`]; `None`, `""` and `{}` are the defaults). Options the location's back
    /// end does not read are refused.
    pub fn open_with_options(
        location: &str,
        mode: OpenMode,
        options: Option<&str>,
    ) -> Result<Arc<StoreHandle>> {
        let location = local_path(location);
        let options = StoreOptions::from_json(options.unwrap_or(""))?;
        let shown = crate::redact::redact_url(location).into_owned();
        let kind = kind_of(location);
        let (mut backend, scope) = open_backend(location, &shown, mode, &options)?;
        if let Some(chunk_location) = &options.chunk_store {
            let chunk_location = local_path(chunk_location);
            let chunk_shown = crate::redact::redact_url(chunk_location).into_owned();
            let chunk_options = options.chunk_store_options.as_deref();
            let chunk_options = chunk_options.cloned().unwrap_or_default();
            let (chunks, _) = open_backend(chunk_location, &chunk_shown, mode, &chunk_options)?;
            backend = Box::new(SplitStore::new(
                backend,
                chunks,
                options.metadata_key.clone(),
            ));
        }
        let lock_scope = match kind {
            StoreKind::Memory => format!(
                "memory:{}",
                MEMORY_STORES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ),
            // Its secrets hidden: they do not change which objects the URL names.
            StoreKind::Remote => shown.trim_end_matches('/').to_string(),
            _ => scope.unwrap_or_else(|| canonical_file(local_file(location).unwrap_or(location))),
        };
        // Only writes take locks: a read-only store leaves the lock directory alone.
        let process_locks = options
            .process_synchronizer
            .as_deref()
            .filter(|_| mode == OpenMode::Write)
            .map(ProcessLocks::open)
            .transpose()?;
        Ok(Arc::new(StoreHandle {
            backend,
            kind,
            mode,
            location: shown,
            lock_scope,
            process_locks,
            consolidated: RwLock::new(None),
            consolidated_key: options
                .metadata_key
                .unwrap_or_else(|| crate::consolidated::ZMETADATA.to_string()),
        }))
    }

    /// A store over a backend of the caller's own: `name` is what messages call it, `scope`
    /// what identifies its keys for the chunk locks (handles over the same keys must give the
    /// same scope, so that their partial-chunk writes exclude each other). Consolidated
    /// metadata is not read here.
    pub fn over_backend(
        backend: Box<dyn Store>,
        name: &str,
        scope: &str,
        mode: OpenMode,
    ) -> Arc<StoreHandle> {
        Arc::new(StoreHandle {
            backend,
            kind: StoreKind::Caller,
            mode,
            location: name.to_string(),
            lock_scope: format!("caller:{scope}"),
            process_locks: None,
            consolidated: RwLock::new(None),
            consolidated_key: crate::consolidated::ZMETADATA.to_string(),
        })
    }

    /// The location the store was opened with.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Which backend the store uses.
    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// The mode the store was opened with.
    pub fn mode(&self) -> OpenMode {
        self.mode
    }

    /// The key of the v2 consolidated metadata document: `.zmetadata`, or the store option
    /// `metadata_key`.
    pub fn consolidated_key(&self) -> &str {
        &self.consolidated_key
    }

    /// Answers metadata keys from the given documents instead of the backend (`None` stops
    /// that). Later writes through this handle keep the documents up to date.
    pub fn use_consolidated(&self, documents: Option<MetadataDocuments>) {
        *self
            .consolidated
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = documents;
    }

    /// The consolidated metadata in use, if any: a copy.
    pub fn consolidated_documents(&self) -> Option<MetadataDocuments> {
        self.consolidated_view().clone()
    }

    /// Whether metadata keys are answered from consolidated metadata.
    pub fn uses_consolidated(&self) -> bool {
        self.consolidated_view().is_some()
    }

    fn consolidated_view(&self) -> std::sync::RwLockReadGuard<'_, Option<MetadataDocuments>> {
        self.consolidated
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The consolidated document under `key` when consolidated metadata answers that key:
    /// the documents of its own format only (a v2 `.zmetadata` says nothing of the v3 nodes
    /// of a mixed hierarchy, nor a v3 root's of the v2 ones).
    fn consolidated_get(&self, key: &str) -> Option<Option<Vec<u8>>> {
        if !path::is_metadata_key(key) {
            return None;
        }
        let view = self.consolidated_view();
        let documents = view.as_ref().filter(|d| answers(d, key))?;
        Some(documents.get(key).cloned())
    }

    /// Whether consolidated metadata in use holds the document `key` (answering for it
    /// without a request).
    pub fn consolidated_holds(&self, key: &str) -> bool {
        path::is_metadata_key(key)
            && self
                .consolidated_view()
                .as_ref()
                .is_some_and(|d| answers(d, key) && d.contains_key(key))
    }

    /// Keeps consolidated metadata in use up to date with a write of `key`.
    fn update_consolidated(&self, key: &str, value: Option<&[u8]>) {
        if !path::is_metadata_key(key) {
            return;
        }
        let mut view = self
            .consolidated
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(documents) = view.as_mut().filter(|d| answers(d, key)) {
            match value {
                Some(v) => documents.insert(key.to_string(), v.to_vec()),
                None => documents.remove(key),
            };
        }
    }

    /// The value under `key`, if any, as stored (consolidated metadata is never consulted:
    /// node lookups use [`StoreHandle::node_document`]).
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.backend.get(key)
    }

    /// The values under `keys` (each `None` when missing), as stored, fetched together (on a
    /// remote store, in one round trip).
    pub fn get_all(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        self.fetch_all(keys, false)
    }

    /// The metadata document under `key` as a node lookup sees it: from the consolidated
    /// metadata in use when that answers the key (a document it does not hold is missing, as
    /// for zarr-python), else from the store. Only the hierarchy's node lookups read through
    /// here; every raw key operation sees the store's own bytes.
    pub fn node_document(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match self.consolidated_get(key) {
            Some(answer) => Ok(answer),
            None => self.backend.get(key),
        }
    }

    /// [`StoreHandle::node_document`] for several keys: those the consolidated metadata in
    /// use answers from it, the others fetched together (on a remote store, in one round
    /// trip).
    pub fn node_documents(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        self.fetch_all(keys, true)
    }

    /// The values under `keys`, fetched together; with `through_view`, those the consolidated
    /// metadata in use answers are taken from it.
    fn fetch_all(&self, keys: &[String], through_view: bool) -> Result<Vec<Option<Vec<u8>>>> {
        let answered: Vec<Option<Option<Vec<u8>>>> = keys
            .iter()
            .map(|key| through_view.then(|| self.consolidated_get(key)).flatten())
            .collect();
        let wanted: Vec<usize> = (0..keys.len()).filter(|&i| answered[i].is_none()).collect();
        let fetched: Vec<Mutex<Option<Vec<u8>>>> =
            wanted.iter().map(|_| Mutex::new(None)).collect();
        if self.capabilities().batched && wanted.len() > 1 {
            self.backend
                .get_many(wanted.len(), &|j| keys[wanted[j]].clone(), &|j, value| {
                    *fetched[j].lock().unwrap_or_else(|p| p.into_inner()) =
                        value.map(<[u8]>::to_vec);
                    Ok(())
                })?;
        } else {
            // A local value is read faster here than handed to the pool.
            for (j, &i) in wanted.iter().enumerate() {
                *fetched[j].lock().unwrap_or_else(|p| p.into_inner()) =
                    self.backend.get(&keys[i])?;
            }
        }
        let mut fetched = fetched
            .into_iter()
            .map(|v| v.into_inner().unwrap_or_else(|p| p.into_inner()));
        Ok(answered
            .into_iter()
            .map(|answer| answer.unwrap_or_else(|| fetched.next().expect("one per key")))
            .collect())
    }

    /// Reads the value under `key` into `buf`, reusing its capacity; `false` if there is none.
    pub fn get_into(&self, key: &str, buf: &mut Vec<u8>) -> Result<bool> {
        self.backend.get_into(key, buf)
    }

    /// Opens the value under `key` for reading parts of it; `None` if missing.
    pub fn open_value(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        self.backend.open_value(key)
    }

    /// Opens many chunk values at once (see [`Store::open_many`]).
    pub fn open_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        lead: Lead,
        parts: &Parts,
    ) -> Result<Vec<Option<Box<dyn ValueReader + '_>>>> {
        self.backend.open_many(count, key, lead, parts)
    }

    /// Opens the chunk value under `key` whose last `tail` bytes are read first (see
    /// [`Store::open_value_tail`]); `None` if missing.
    pub fn open_value_tail(
        &self,
        key: &str,
        tail: u64,
    ) -> Result<Option<Box<dyn ValueReader + '_>>> {
        self.backend.open_value_tail(key, tail)
    }

    /// Fetches many chunk values at once (see [`Store::get_many`]); metadata is not fetched
    /// this way.
    pub fn get_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        f: &Consume,
    ) -> Result<()> {
        self.backend.get_many(count, key, f)
    }

    /// Stores many chunk values at once (see [`Store::set_many`]); metadata is not written
    /// this way.
    pub fn set_many(&self, count: usize, produce: &Produce) -> Result<()> {
        self.backend.set_many(count, produce)
    }

    /// The length of the value under `key`, if any, without reading it where possible.
    pub fn value_len(&self, key: &str) -> Result<Option<u64>> {
        self.backend.value_len(key)
    }

    /// Whether `key` holds a value.
    pub fn contains(&self, key: &str) -> Result<bool> {
        self.backend.contains(key)
    }

    /// Stores a value; refused on a read-only store.
    pub fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.check_writable(key)?;
        self.backend.set(key, value)?;
        self.update_consolidated(key, Some(value));
        Ok(())
    }

    /// Replaces the value under `key` by what `update(old, new)` makes of it: `old` is the
    /// value (`None`: missing), `update` writes the new value into the empty `new` and says
    /// whether to store it (`false`: erase the key). One read-modify-write: under the key's
    /// lock within the process, and on stores with conditional writes only if no other writer
    /// changed the value since it was read; `update` then runs again on the new value (a few
    /// times, after a short pause, before giving up with [`Error::Io`]). Erasing is never
    /// conditional. The two buffers are this thread's, reused from call to call.
    pub fn update(
        &self,
        key: &str,
        mut update: impl FnMut(Option<&[u8]>, &mut Vec<u8>) -> Result<bool>,
    ) -> Result<()> {
        self.check_writable(key)?;
        let _lock = self.lock_chunk(key)?;
        let (mut old, mut new) = UPDATE_BUFFERS.with(Cell::take);
        let mut attempt = || -> Result<bool> {
            let (found, version) = self.backend.get_versioned(key, &mut old)?;
            new.clear();
            let keep = update(found.then_some(old.as_slice()), &mut new)?;
            let value = keep.then_some(new.as_slice());
            let written = self.backend.set_if(key, value, &version)?;
            if written {
                self.update_consolidated(key, value);
            }
            Ok(written)
        };
        let mut result = Err(Error::Io(format!(
            "writing {key:?} in {}: another writer changed it {UPDATE_ATTEMPTS} times while it was being updated",
            self.location
        )));
        for round in 0..UPDATE_ATTEMPTS {
            match attempt() {
                Ok(false) => pause_after_conflict(round),
                done => {
                    result = done.map(drop);
                    break;
                }
            }
        }
        if old.capacity().max(new.capacity()) <= KEEP_UPDATE_BUFFER_BYTES {
            UPDATE_BUFFERS.with(|b| b.set((old, new)));
        }
        result
    }

    /// Copies the value under `src_key` of `src` to `key` of this store (`false` when `src`
    /// has none). When both keep values in files, the value goes file to file without
    /// passing through memory; metadata keys always go through [`StoreHandle::set`], so
    /// consolidated metadata in use on this side stays up to date. The value copied is the
    /// one stored, never one from consolidated metadata.
    pub fn copy_value_from(&self, src: &StoreHandle, src_key: &str, key: &str) -> Result<bool> {
        self.check_writable(key)?;
        if !path::is_metadata_key(key) && !path::is_metadata_key(src_key) {
            if let Some(file) = src.backend.value_file(src_key)? {
                self.backend.set_from_file(key, &file)?;
                return Ok(true);
            }
        }
        match src.get(src_key)? {
            Some(value) => self.set(key, &value).map(|()| true),
            None => Ok(false),
        }
    }

    /// Removes a key; refused on a read-only store.
    pub fn erase(&self, key: &str) -> Result<()> {
        self.check_writable(key)?;
        self.backend.erase(key)?;
        self.update_consolidated(key, None);
        Ok(())
    }

    /// Every key below `prefix`.
    pub fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.backend.list_prefix(prefix)
    }

    /// Tidies up below `prefix` after its keys were erased (see [`Store::prune`]).
    pub fn prune(&self, prefix: &str) -> Result<()> {
        self.check_writable(prefix)?;
        self.backend.prune(prefix)
    }

    /// Every key below `prefix` with its value's length (see [`Store::list_prefix_sized`]).
    pub fn list_prefix_sized(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        self.backend.list_prefix_sized(prefix)
    }

    /// The names one level below `prefix`.
    pub fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        self.backend.list_dir(prefix)
    }

    /// What the store can do beyond the calls every store has ([`Capabilities`]).
    pub fn capabilities(&self) -> Capabilities {
        self.backend.capabilities()
    }

    /// The names one level below `prefix` (empty or ending in `/`) that the consolidated
    /// metadata in use holds a node for, sorted; `None` when none is in use (then the store
    /// must be listed). Consolidated metadata is the whole truth about the hierarchy, as for
    /// zarr-python: nodes it does not hold are not members.
    pub fn consolidated_children(&self, prefix: &str) -> Option<Vec<String>> {
        let view = self.consolidated_view();
        let documents = view.as_ref()?;
        let mut names: Vec<String> = documents
            .keys()
            .filter_map(|key| {
                let (name, document) = key.strip_prefix(prefix)?.split_once('/')?;
                path::is_node_document(document).then(|| name.to_string())
            })
            .collect();
        names.sort();
        names.dedup();
        Some(names)
    }

    /// Finishes what the backend defers: a zip store opened for writing writes its central
    /// directory and puts the archive in place. The handle stays usable; later changes are
    /// written by the next flush or close (or, unreported, when the last reference to the
    /// store goes away).
    pub fn flush(&self) -> Result<()> {
        self.backend.flush()
    }

    /// What closing the handle writes: the same as [`StoreHandle::flush`].
    pub fn close(&self) -> Result<()> {
        self.flush()
    }

    /// What the store's HTTP requests have been since it was opened (`None`: a local store).
    pub fn request_stats(&self) -> Option<RequestStats> {
        self.backend.request_stats()
    }

    /// Fails with [`Error::ReadOnly`] naming `what` unless the store is writable.
    pub fn check_writable(&self, what: &str) -> Result<()> {
        match self.mode {
            OpenMode::Write => Ok(()),
            OpenMode::Read => Err(Error::ReadOnly(format!(
                "cannot modify {what:?}: store {:?} was opened read-only",
                self.location
            ))),
        }
    }

    /// Whether `other` reaches the same keys as this handle: it is this handle, or both open
    /// the same directory, zip file or dbm database, or the same prefix of one Redis database
    /// by one URL.
    pub fn is_same_store(&self, other: &StoreHandle) -> bool {
        if std::ptr::eq(self, other) {
            return true;
        }
        let by_scope = [
            StoreKind::Memory,
            StoreKind::Caller,
            StoreKind::Dbm,
            StoreKind::Redis,
        ];
        if by_scope.contains(&self.kind) || by_scope.contains(&other.kind) {
            return self.lock_scope == other.lock_scope;
        }
        match (
            std::fs::canonicalize(local_path(&self.location)),
            std::fs::canonicalize(local_path(&other.location)),
        ) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }

    /// Locks `key` of this store for a write or a read-modify-write cycle: the stripe that
    /// guards it in every handle of the process and, with a process synchronizer, its lock
    /// file. Callers hold one key's lock at a time.
    pub fn lock_chunk(&self, key: &str) -> Result<ChunkLock> {
        let stripe = stripe(&self.lock_scope, key);
        let file = match &self.process_locks {
            Some(locks) => Some(locks.lock(key)?),
            None => None,
        };
        Ok(ChunkLock::new(stripe, file))
    }

    /// Whether writes take lock files shared with other processes (a process synchronizer).
    pub fn locks_across_processes(&self) -> bool {
        self.process_locks.is_some()
    }
}
