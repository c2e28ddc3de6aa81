//! The shard indexes an array handle has read, kept with the stored version of the shard they
//! came from: a read of a few inner chunks then reads only those chunks, not the whole index
//! again (a 16³-chunk shard's index is 64 KiB, read and checksummed for every call otherwise).
//!
//! An index is used only for the version of the shard it was read from ([`ValueVersion`]), so
//! a shard replaced or rewritten by anyone is read afresh; stores that cannot tell a value's
//! version cheaply (remote, zip, memory) keep nothing here.

use crate::store::ValueVersion;
use lru::LruCache;
use std::sync::{Arc, Mutex};

/// A shard's index: `(offset, length)` of each sub-chunk in index order, `None` where empty.
pub type ShardIndex = Vec<Option<(u64, u64)>>;

/// The most bytes of indexes one handle keeps.
const BUDGET_BYTES: usize = 4 << 20;

/// Indexes by shard key, with the version each was read from.
type Entries = LruCache<String, (ValueVersion, Arc<ShardIndex>)>;

/// Shard indexes by shard key, least recently used dropped first, within [`BUDGET_BYTES`]
/// (made on the first index kept, sized by it).
#[derive(Default)]
pub struct ShardIndexCache {
    entries: Mutex<Option<Entries>>,
}

/// Bytes an index of `count` entries takes.
fn index_bytes(count: usize) -> usize {
    count * std::mem::size_of::<Option<(u64, u64)>>()
}

impl ShardIndexCache {
    /// The index of the shard under `key` at `version`, if kept.
    pub fn get(&self, key: &str, version: ValueVersion) -> Option<Arc<ShardIndex>> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        match entries.as_mut()?.get(key) {
            Some((kept, index)) if *kept == version => Some(index.clone()),
            _ => None,
        }
    }

    /// Keeps `index`, read from the shard under `key` at `version` (indexes too large for the
    /// budget are not kept).
    pub fn put(&self, key: &str, version: ValueVersion, index: Arc<ShardIndex>) {
        let capacity = BUDGET_BYTES / index_bytes(index.len()).max(1);
        let Some(capacity) = std::num::NonZeroUsize::new(capacity) else {
            return;
        };
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get_or_insert_with(|| LruCache::new(capacity))
            .put(key.to_string(), (version, index));
    }
}

impl std::fmt::Debug for ShardIndexCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        f.debug_struct("ShardIndexCache")
            .field("kept", &entries.as_ref().map_or(0, LruCache::len))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(n: i64) -> ValueVersion {
        ValueVersion([n; 7])
    }

    #[test]
    fn gives_an_index_only_for_its_version() {
        let cache = ShardIndexCache::default();
        assert!(cache.get("c/0", version(1)).is_none());
        cache.put("c/0", version(1), Arc::new(vec![Some((0, 8)), None]));
        assert_eq!(*cache.get("c/0", version(1)).unwrap(), [Some((0, 8)), None]);
        assert!(cache.get("c/0", version(2)).is_none());
        assert!(cache.get("c/1", version(1)).is_none());
        cache.put("c/0", version(2), Arc::new(vec![None, None]));
        assert!(cache.get("c/0", version(1)).is_none());
        assert_eq!(*cache.get("c/0", version(2)).unwrap(), [None, None]);
    }

    #[test]
    fn stays_within_its_budget() {
        let cache = ShardIndexCache::default();
        let count = BUDGET_BYTES / index_bytes(1) / 4; // four such indexes fill the budget
        for shard in 0..6 {
            cache.put(
                &format!("c/{shard}"),
                version(0),
                Arc::new(vec![None; count]),
            );
        }
        let kept: Vec<bool> = (0..6)
            .map(|s| cache.get(&format!("c/{s}"), version(0)).is_some())
            .collect();
        assert_eq!(kept, [false, false, true, true, true, true]);
        cache.put("huge", version(0), Arc::new(vec![None; count * 5]));
        assert!(cache.get("huge", version(0)).is_none());
    }
}
