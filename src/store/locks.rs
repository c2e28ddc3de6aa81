//! The process-wide lock stripes that make read-modify-write of a key through any handle of
//! the same store safe against each other.

use super::process_lock::KeyLock;
use std::sync::{Mutex, MutexGuard};

/// Number of lock stripes guarding read-modify-write of chunks, shared by every store handle
/// of the process.
const CHUNK_LOCK_STRIPES: usize = 1024;

/// The chunk lock stripes: one set for the whole process, so that handles opened separately on
/// the same store (by different threads or libraries of one program) exclude each other too.
static CHUNK_LOCKS: [Mutex<()>; CHUNK_LOCK_STRIPES] =
    [const { Mutex::new(()) }; CHUNK_LOCK_STRIPES];

/// The lock of one key (see [`StoreHandle::lock_chunk`]), released when dropped: the lock
/// file first, then the stripe.
pub struct ChunkLock {
    _file: Option<KeyLock>,
    _stripe: MutexGuard<'static, ()>,
}

impl ChunkLock {
    /// The lock made of a held stripe and, with a process synchronizer, a held lock file.
    pub(super) fn new(stripe: MutexGuard<'static, ()>, file: Option<KeyLock>) -> ChunkLock {
        ChunkLock {
            _file: file,
            _stripe: stripe,
        }
    }
}

/// Locks the stripe that guards `key` of the store identified by `scope` in every handle of
/// the process.
pub(super) fn stripe(scope: &str, key: &str) -> MutexGuard<'static, ()> {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one((scope, key));
    // A poisoned stripe only means another writer panicked; the data it guards is the store's,
    // which stays consistent because every write replaces a key atomically.
    CHUNK_LOCKS[(hash % CHUNK_LOCK_STRIPES as u64) as usize]
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
