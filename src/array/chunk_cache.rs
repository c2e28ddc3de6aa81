//! An optional in-memory LRU cache of decoded chunks, one per array handle, bounded in bytes
//! and off by default.
//!
//! An entry is keyed by the chunk's store key and holds exactly what decoding produces (the
//! chunk's stored layout and byte order, so the copy kernel scatters from it as from a freshly
//! decoded chunk), or the mark of a chunk that was never written (it reads as the fill value;
//! remembering that spares a store lookup). Each entry is charged its decoded bytes plus
//! [`ENTRY_OVERHEAD`]; the least recently used entries go when a new one would pass the budget.
//!
//! Invalidation: every chunk store or erase through the array (`Array::encode_and_store`,
//! `Array::erase_chunk`), after it reaches the store, bumps the generation of the key's stripe
//! and drops the key's entry. A reader that misses takes the stripe's generation before it reads
//! the store and inserts what it decoded only if the generation is unchanged, so a chunk read
//! before a write completed is never inserted after that write invalidated it.
//! Read-modify-write cycles read the old chunk from the store, never from the cache.

use super::chunk_form::ChunkForm;
use super::chunk_io::ChunkName;
use super::Array;
use crate::error::{try_alloc_zeroed, Result};
use crate::store::read_again_if_changed;
use lru::LruCache;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Bytes charged per entry on top of its decoded bytes (key, list node, hash slot), so that
/// marks of never-written chunks count against the budget too.
pub const ENTRY_OVERHEAD: usize = 64;

/// Stripes of the generation counters that guard against inserting stale chunks.
const GENERATION_STRIPES: usize = 64;

/// A cached chunk: its decoded bytes, or `None` when it was never written.
pub(super) type CachedChunk = Option<Arc<Vec<u8>>>;

/// What the chunk cache of an array holds and how it served reads since it was turned on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChunkCacheStats {
    /// Chunk reads served from the cache.
    pub hits: u64,
    /// Chunk reads that went to the store (whether or not the chunk was then cached).
    pub misses: u64,
    /// Bytes charged for the entries held now (decoded bytes plus [`ENTRY_OVERHEAD`] each).
    pub bytes: u64,
}

/// The result of looking a chunk up.
pub(super) enum Lookup {
    /// The cached chunk.
    Hit(CachedChunk),
    /// Not cached: insert what the store holds with this ticket.
    Miss(Ticket),
}

/// The generation of a key's stripe when a reader missed; an insert with a ticket that a
/// write has since outdated is dropped.
#[derive(Clone, Copy)]
pub(super) struct Ticket {
    stripe: usize,
    generation: u64,
}

/// A byte-budgeted LRU of decoded chunks, safe to share between threads.
pub(super) struct ChunkCache {
    /// The budget in bytes; 0 when the cache is off. Changed only under `state`'s lock.
    max_bytes: AtomicUsize,
    /// Bumped (outside the lock) by every write of a key of the stripe.
    generations: [AtomicU64; GENERATION_STRIPES],
    state: Mutex<CacheState>,
}

struct CacheState {
    entries: LruCache<String, CachedChunk>,
    /// Bytes charged for `entries`.
    bytes: usize,
    hits: u64,
    misses: u64,
}

impl Default for ChunkCache {
    fn default() -> Self {
        ChunkCache {
            max_bytes: AtomicUsize::new(0),
            generations: std::array::from_fn(|_| AtomicU64::new(0)),
            state: Mutex::new(CacheState {
                entries: LruCache::unbounded(),
                bytes: 0,
                hits: 0,
                misses: 0,
            }),
        }
    }
}

impl std::fmt::Debug for ChunkCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkCache")
            .field("max_bytes", &self.max_bytes.load(Ordering::Relaxed))
            .field("stats", &self.stats())
            .finish()
    }
}

/// Bytes an entry is charged.
fn charge(chunk: &CachedChunk) -> usize {
    chunk.as_ref().map_or(0, |c| c.len()) + ENTRY_OVERHEAD
}

impl ChunkCache {
    fn lock(&self) -> MutexGuard<'_, CacheState> {
        // A panic while holding the lock leaves the state consistent: every update of it is a
        // single LRU operation followed by the byte count.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stripe(key: &str) -> usize {
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(key);
        (hash % GENERATION_STRIPES as u64) as usize
    }

    /// Whether the cache is on and an entry of `decoded_bytes` fits its budget: the one branch
    /// readers take when the cache is off.
    pub(super) fn admits(&self, decoded_bytes: usize) -> bool {
        decoded_bytes.saturating_add(ENTRY_OVERHEAD) <= self.max_bytes.load(Ordering::SeqCst)
    }

    /// Sets the budget, evicting down to it; 0 turns the cache off and frees its memory.
    /// The hit and miss counts start again from zero.
    pub(super) fn set_max_bytes(&self, max_bytes: usize) {
        let mut state = self.lock();
        self.max_bytes.store(max_bytes, Ordering::SeqCst);
        if max_bytes == 0 {
            state.entries = LruCache::unbounded();
            state.bytes = 0;
        } else {
            state.evict_to(max_bytes);
        }
        state.hits = 0;
        state.misses = 0;
    }

    /// Looks a chunk up, counting a hit or a miss.
    pub(super) fn lookup(&self, key: &str) -> Lookup {
        let stripe = Self::stripe(key);
        let mut state = self.lock();
        if let Some(chunk) = state.entries.get(key) {
            let chunk = chunk.clone();
            state.hits += 1;
            return Lookup::Hit(chunk);
        }
        state.misses += 1;
        Lookup::Miss(Ticket {
            stripe,
            generation: self.generations[stripe].load(Ordering::SeqCst),
        })
    }

    /// Caches a chunk read after a miss, unless a write of its stripe came since the ticket
    /// was issued, the cache was turned off, or the entry exceeds the budget.
    pub(super) fn insert(&self, key: String, chunk: CachedChunk, ticket: Ticket) {
        let mut state = self.lock();
        let max_bytes = self.max_bytes.load(Ordering::SeqCst);
        let cost = charge(&chunk);
        if cost > max_bytes
            || self.generations[ticket.stripe].load(Ordering::SeqCst) != ticket.generation
        {
            return;
        }
        if let Some(old) = state.entries.put(key, chunk) {
            // Another reader of the same generation cached it first: the same bytes.
            state.bytes -= charge(&old);
        }
        state.bytes += cost;
        state.evict_to(max_bytes);
    }

    /// Forgets the chunk under `key`; called after every store or erase of it.
    pub(super) fn invalidate(&self, key: &str) {
        // The bump comes first and always (even when off), so a reader that read the old
        // chunk before the write finished cannot insert it afterwards; if the cache is on, or
        // was turned off after such an insert (which cleared it), the entry is gone too.
        self.generations[Self::stripe(key)].fetch_add(1, Ordering::SeqCst);
        if self.max_bytes.load(Ordering::SeqCst) != 0 {
            let mut state = self.lock();
            if let Some(old) = state.entries.pop(key) {
                state.bytes -= charge(&old);
            }
        }
    }

    /// Forgets every chunk (for changes that touch many chunks at once).
    pub(super) fn clear(&self) {
        let mut state = self.lock();
        self.generations
            .iter()
            .for_each(|g| _ = g.fetch_add(1, Ordering::SeqCst));
        state.entries.clear();
        state.bytes = 0;
    }

    /// The current counts.
    pub(super) fn stats(&self) -> ChunkCacheStats {
        let state = self.lock();
        ChunkCacheStats {
            hits: state.hits,
            misses: state.misses,
            bytes: state.bytes as u64,
        }
    }
}

impl CacheState {
    fn evict_to(&mut self, max_bytes: usize) {
        while self.bytes > max_bytes {
            match self.entries.pop_lru() {
                Some((_, old)) => self.bytes -= charge(&old),
                None => break,
            }
        }
    }
}

impl Array {
    /// Turns this handle's chunk cache on with a budget of `max_bytes` (evicting down to it
    /// when lowered), or off with 0, which frees it. Reads of fixed-size arrays then keep
    /// decoded chunks (and the mark of never-written chunks) in memory, least recently used
    /// first out; chunks whose decoded size exceeds the budget are read as without a cache.
    /// Writes through this handle invalidate the chunks they touch; writes through other
    /// handles or processes are not seen while a chunk stays cached. Object arrays are not
    /// cached. Resets the hit and miss counts.
    pub fn set_chunk_cache(&self, max_bytes: u64) {
        self.chunk_cache
            .set_max_bytes(usize::try_from(max_bytes).unwrap_or(usize::MAX));
    }

    /// The chunk cache's hits, misses and bytes held.
    pub fn chunk_cache_stats(&self) -> ChunkCacheStats {
        self.chunk_cache.stats()
    }

    /// Empties the chunk cache, keeping its budget and counts: for changes that touch many
    /// chunks at once (such as a resize), or after other handles or processes wrote the array.
    pub fn clear_chunk_cache(&self) {
        self.chunk_cache.clear();
    }

    /// Whether chunk reads go through the cache.
    pub(super) fn caches_chunks(&self) -> bool {
        self.object.is_none() && self.chunk_cache.admits(self.forms().max_nbytes())
    }

    /// The decoded chunk under `key` (`None` if it was never written) from the cache, or read
    /// from the store, decoded and cached.
    pub(super) fn cached_chunk(&self, form: &ChunkForm, key: &str) -> Result<CachedChunk> {
        let ticket = match self.chunk_cache.lookup(key) {
            Lookup::Hit(chunk) => return Ok(chunk),
            Lookup::Miss(ticket) => ticket,
        };
        let new_entry = || try_alloc_zeroed(form.nbytes, "a cached chunk");
        let chunk = if form.pipeline.is_identity() {
            // The stored bytes are the decoded chunk: read them into the entry (size checked first).
            read_again_if_changed(|| {
                self.open_uncompressed(form, key)?
                    .map(|value| {
                        let mut chunk = new_entry()?;
                        value
                            .read_exact_at(0, &mut chunk)
                            .map_err(|e| e.context(format!("chunk {key:?}")))?;
                        Ok(chunk)
                    })
                    .transpose()
            })?
        } else {
            self.with_stored_chunk(key, |raw| {
                raw.map(|raw| {
                    let mut chunk = new_entry()?;
                    self.decode_chunk(form, raw, &mut chunk, &ChunkName::Key(key.into()))?;
                    Ok(chunk)
                })
                .transpose()
            })?
        };
        let chunk = chunk.map(Arc::new);
        self.chunk_cache
            .insert(key.to_string(), chunk.clone(), ticket);
        Ok(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(byte: u8, len: usize) -> CachedChunk {
        Some(Arc::new(vec![byte; len]))
    }

    fn miss(cache: &ChunkCache, key: &str) -> Ticket {
        match cache.lookup(key) {
            Lookup::Miss(ticket) => ticket,
            Lookup::Hit(_) => panic!("{key} should not be cached"),
        }
    }

    fn hit(cache: &ChunkCache, key: &str) -> CachedChunk {
        match cache.lookup(key) {
            Lookup::Hit(chunk) => chunk,
            Lookup::Miss(_) => panic!("{key} should be cached"),
        }
    }

    #[test]
    fn a_write_between_miss_and_insert_drops_the_insert() {
        let cache = ChunkCache::default();
        cache.set_max_bytes(1 << 20);
        let ticket = miss(&cache, "a/0.0");
        cache.invalidate("a/0.0");
        cache.insert("a/0.0".into(), chunk(1, 8), ticket);
        let ticket = miss(&cache, "a/0.0");
        // A fresh ticket inserts; clearing outdates every ticket.
        cache.insert("a/0.0".into(), chunk(2, 8), ticket);
        assert_eq!(hit(&cache, "a/0.0").unwrap()[0], 2);
        let ticket = miss(&cache, "a/1.0");
        cache.clear();
        cache.insert("a/1.0".into(), None, ticket);
        miss(&cache, "a/1.0");
        assert_eq!(cache.stats().bytes, 0);
    }

    #[test]
    fn evicts_least_recently_used_within_the_budget() {
        let cache = ChunkCache::default();
        let entry = 100 + ENTRY_OVERHEAD;
        cache.set_max_bytes(2 * entry);
        assert!(cache.admits(100) && !cache.admits(2 * entry));
        for key in ["a", "b"] {
            let ticket = miss(&cache, key);
            cache.insert(key.into(), chunk(0, 100), ticket);
        }
        hit(&cache, "a");
        let ticket = miss(&cache, "c");
        cache.insert("c".into(), chunk(0, 100), ticket);
        hit(&cache, "a");
        hit(&cache, "c");
        miss(&cache, "b");
        assert_eq!(cache.stats().bytes, 2 * entry as u64);
        // Never-written marks cost the overhead only; an entry over the budget is not kept.
        let ticket = miss(&cache, "d");
        cache.insert("d".into(), None, ticket);
        assert_eq!(cache.stats().bytes, (entry + ENTRY_OVERHEAD) as u64);
        assert_eq!(hit(&cache, "d"), None);
        let ticket = miss(&cache, "e");
        cache.insert("e".into(), chunk(0, 2 * entry), ticket);
        miss(&cache, "e");
        // Lowering the budget evicts (here "c", used before "d"); 0 turns the cache off and
        // frees everything.
        cache.set_max_bytes(entry);
        let only_d = ChunkCacheStats {
            hits: 0,
            misses: 0,
            bytes: ENTRY_OVERHEAD as u64,
        };
        assert_eq!(cache.stats(), only_d);
        hit(&cache, "d");
        cache.set_max_bytes(0);
        assert!(!cache.admits(0));
        assert_eq!(cache.stats().bytes, 0);
        let ticket = miss(&cache, "f");
        cache.insert("f".into(), None, ticket);
        assert_eq!(cache.stats().bytes, 0);
    }
}
