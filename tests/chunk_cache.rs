//! The per-array chunk cache: hits and misses, invalidation by every write path of the same
//! handle, the byte budget, layouts read through the cache, and concurrent readers with a
//! writer never seeing a chunk older than the last completed write.

use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use zarr::array::{box_selection, ChunkCacheStats, ENTRY_OVERHEAD};
use zarr::selection::DimSelection;
use zarr::{Array, Error, OpenMode, StoreHandle};

fn zstd() -> serde_json::Value {
    json!({"id": "zstd", "level": 1})
}

fn create(store: &Arc<StoreHandle>, meta: serde_json::Value) -> Array {
    Array::create(store.clone(), "a", &meta.to_string()).unwrap()
}

fn memory() -> Arc<StoreHandle> {
    StoreHandle::open("memory:", OpenMode::Write).unwrap()
}

fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
        .collect()
}

fn bytes_of(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

fn read(a: &Array, start: &[u64], count: &[u64]) -> Vec<u32> {
    let n: u64 = count.iter().product();
    let mut out = vec![0u8; n as usize * 4];
    a.read_region(start, count, &mut out).unwrap();
    u32s(&out)
}

fn stats(hits: u64, misses: u64, bytes: usize) -> ChunkCacheStats {
    ChunkCacheStats {
        hits,
        misses,
        bytes: bytes as u64,
    }
}

#[test]
fn repeated_reads_hit_and_never_written_chunks_are_remembered() {
    let store = memory();
    let meta = json!({"shape": [16, 16], "chunks": [4, 4], "dtype": "<u4", "fill_value": 7, "compressor": zstd()});
    let a = create(&store, meta);
    let values: Vec<u32> = (0..256).collect();
    a.write_region(&[0, 0], &[8, 16], &bytes_of(&values[..128]))
        .unwrap();
    assert_eq!(a.chunk_cache_stats(), ChunkCacheStats::default());
    a.set_chunk_cache(1 << 20);
    let chunk = 16 * 4 + ENTRY_OVERHEAD;

    assert_eq!(read(&a, &[5, 5], &[1, 1]), [85]);
    assert_eq!(a.chunk_cache_stats(), stats(0, 1, chunk));
    assert_eq!(read(&a, &[5, 5], &[1, 1]), [85]);
    assert_eq!(read(&a, &[4, 6], &[2, 2]), [70, 71, 86, 87]);
    assert_eq!(a.chunk_cache_stats(), stats(2, 1, chunk));

    // The lower half was never written: fill values, remembered as such.
    assert_eq!(read(&a, &[12, 0], &[1, 1]), [7]);
    assert_eq!(read(&a, &[13, 1], &[1, 1]), [7]);
    assert_eq!(a.chunk_cache_stats(), stats(3, 2, chunk + ENTRY_OVERHEAD));

    // Points go through the cache too.
    let mut out = vec![0u8; 8];
    a.read_points(2, &[5, 4, 12, 3], &mut out).unwrap();
    assert_eq!(u32s(&out), [84, 7]);
    assert_eq!(a.chunk_cache_stats(), stats(5, 2, chunk + ENTRY_OVERHEAD));

    // A whole read: 16 chunks, 2 of them cached.
    let all = read(&a, &[0, 0], &[16, 16]);
    assert_eq!(&all[..128], &values[..128]);
    assert!(all[128..].iter().all(|&v| v == 7));
    assert_eq!(
        a.chunk_cache_stats(),
        stats(7, 16, 8 * chunk + 8 * ENTRY_OVERHEAD)
    );

    // Clearing keeps the budget and the counts; turning the cache off frees it.
    a.clear_chunk_cache();
    assert_eq!(a.chunk_cache_stats(), stats(7, 16, 0));
    assert_eq!(read(&a, &[5, 5], &[1, 1]), [85]);
    assert_eq!(a.chunk_cache_stats(), stats(7, 17, chunk));
    a.set_chunk_cache(0);
    assert_eq!(read(&a, &[5, 5], &[1, 1]), [85]);
    assert_eq!(a.chunk_cache_stats(), ChunkCacheStats::default());
}

/// A handle that writes with its cache on, and a fresh handle of the same store to compare
/// against after every write.
struct Twin {
    store: Arc<StoreHandle>,
    cached: Array,
    shape: Vec<u64>,
    item: usize,
}

impl Twin {
    fn new(meta: serde_json::Value) -> Twin {
        let store = memory();
        let cached = create(&store, meta);
        cached.set_chunk_cache(1 << 20);
        let shape = cached.metadata().shape.clone();
        let item = cached.item_size();
        Twin {
            store,
            cached,
            shape,
            item,
        }
    }

    fn whole(&self, a: &Array) -> Vec<u8> {
        let n: u64 = self.shape.iter().product();
        let mut out = vec![0u8; n as usize * self.item];
        a.read_region(&vec![0; self.shape.len()], &self.shape, &mut out)
            .unwrap();
        out
    }

    /// Caches every chunk, runs `write` on the cached handle, and checks that it reads what
    /// the store holds.
    fn check(&self, what: &str, write: impl FnOnce(&Array)) {
        self.whole(&self.cached);
        write(&self.cached);
        let truth = self.whole(&Array::open(self.store.clone(), "a").unwrap());
        assert_eq!(self.whole(&self.cached), truth, "after {what}");
    }
}

#[test]
fn every_write_path_of_the_handle_invalidates() {
    let meta = json!({"shape": [10, 9], "chunks": [4, 4], "dtype": "<u4", "fill_value": 0, "compressor": zstd()});
    every_write_path_invalidates(meta, Some("a/1.1"));
}

#[test]
fn every_write_path_of_a_sharded_array_invalidates() {
    let meta = json!({"zarr_format": 3, "shape": [10, 9], "data_type": "uint32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 8]}},
        "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4],
            "codecs": [{"name": "bytes"}, {"name": "zstd"}]}}]});
    let t = every_write_path_invalidates(meta, None);
    assert_eq!(t.cached.inner_chunks(), Some(vec![4, 4]));
    // Inner chunks are cached: a shrink that erases whole shards invalidates them too.
    t.check("a shrink and a regrowth", |a| {
        a.resize(&[7, 7]).unwrap();
        a.resize(&[10, 9]).unwrap();
    });
    assert_eq!(read(&t.cached, &[9, 8], &[1, 1]), [0]);
}

/// Runs every write path on a cached handle of an array of `meta` (10 x 9 `u4` in 4 x 4
/// chunks, fill 0), checking after each that it reads what the store holds; `erased` is the
/// key a write of fill values over chunk (1, 1) erases.
fn every_write_path_invalidates(meta: serde_json::Value, erased: Option<&str>) -> Twin {
    let t = Twin::new(meta);
    let full: Vec<u32> = (1..=90).collect();
    t.check("a whole write", |a| {
        a.write_region(&[0, 0], &[10, 9], &bytes_of(&full)).unwrap()
    });
    t.check("a write of one whole chunk", |a| {
        a.write_region(&[4, 4], &[4, 4], &bytes_of(&[500; 16]))
            .unwrap()
    });
    t.check("a partial write", |a| {
        a.write_region(&[3, 3], &[2, 2], &bytes_of(&[600; 4]))
            .unwrap()
    });
    t.check("an edge chunk write", |a| {
        a.write_region(&[8, 8], &[2, 1], &bytes_of(&[700; 2]))
            .unwrap()
    });
    t.check("a strided write", |a| {
        let sel = box_selection(&[0, 0], &[5, 3], Some(&[2, 4])).unwrap();
        a.write_orthogonal(&sel, None, &bytes_of(&[800; 15]))
            .unwrap()
    });
    t.check("an orthogonal write", |a| {
        let sel = [
            DimSelection::Indices(vec![9, 1]),
            DimSelection::Range {
                start: 2,
                count: 3,
                step: 3,
            },
        ];
        a.write_orthogonal(&sel, None, &bytes_of(&[900; 6]))
            .unwrap()
    });
    t.check("a point write", |a| {
        a.write_points(2, &[0, 0, 9, 8], &bytes_of(&[1000, 1001]))
            .unwrap()
    });
    t.check("a write of fill values that erases a chunk", |a| {
        a.write_region(&[4, 4], &[4, 4], &bytes_of(&[0; 16]))
            .unwrap()
    });
    if let Some(key) = erased {
        assert!(!t.store.contains(key).unwrap());
    }
    t.check("a write into an erased chunk", |a| {
        a.write_region(&[5, 5], &[1, 1], &bytes_of(&[1100]))
            .unwrap()
    });
    t.check("a failed write (nothing changes)", |a| {
        assert!(a.write_region(&[9, 0], &[2, 1], &[0; 8]).is_err())
    });
    let stats = t.cached.chunk_cache_stats();
    assert!(stats.hits > 0 && stats.misses > 0, "{stats:?}");
    t
}

#[test]
fn field_writes_invalidate() {
    let dtype = json!([["a", "<u2"], ["b", ">u4"]]);
    let t = Twin::new(json!({"shape": [6], "chunks": [4], "dtype": dtype, "compressor": zstd()}));
    t.check("a whole write", |a| {
        a.write_region(&[0], &[6], &[3u8; 36]).unwrap()
    });
    t.check("a field write", |a| {
        a.write_fields(&[2], &[3], &["b"], &bytes_of(&[9, 10, 11]))
            .unwrap()
    });
    let mut b = vec![0u8; 12];
    t.cached.read_fields(&[2], &[3], &["b"], &mut b).unwrap();
    assert_eq!(u32s(&b), [9, 10, 11]);
}

#[test]
fn layouts_read_through_the_cache_as_without_it() {
    let metas = [
        json!({"shape": [9, 7], "chunks": [4, 3], "dtype": ">u4", "order": "F", "compressor": zstd()}),
        json!({"shape": [9, 7], "chunks": [4, 3], "dtype": "<u4", "compressor": null}),
        json!({"shape": [9, 7], "chunks": [4, 3], "dtype": "<u4", "filters": [{"id": "delta", "dtype": "<u4"}], "compressor": {"id": "zlib", "level": 1}}),
    ];
    for meta in metas {
        let store = memory();
        let plain = create(&store, meta.clone());
        let values: Vec<u32> = (0..63u32).map(|i| i.wrapping_mul(2654435761)).collect();
        plain
            .write_region(&[0, 0], &[9, 7], &bytes_of(&values))
            .unwrap();
        let cached = Array::open(store.clone(), "a").unwrap();
        cached.set_chunk_cache(1 << 20);
        for round in 0..2 {
            // A region of a larger, strided buffer; an orthogonal selection; points.
            let sel = box_selection(&[1, 1], &[7, 5], None).unwrap();
            let (mut x, mut y) = (vec![0u8; 7 * 10 * 4], vec![0u8; 7 * 10 * 4]);
            plain.read_orthogonal(&sel, Some(&[10, 1]), &mut x).unwrap();
            cached
                .read_orthogonal(&sel, Some(&[10, 1]), &mut y)
                .unwrap();
            assert_eq!(x, y, "{meta} round {round}");
            let sel = [
                DimSelection::Indices(vec![8, 0, 4]),
                DimSelection::Indices(vec![6, 2, 5]),
            ];
            let (mut x, mut y) = (vec![0u8; 36], vec![0u8; 36]);
            plain.read_orthogonal(&sel, None, &mut x).unwrap();
            cached.read_orthogonal(&sel, None, &mut y).unwrap();
            assert_eq!(x, y, "{meta} round {round}");
            assert_eq!(u32s(&y)[0], values[8 * 7 + 6]);
        }
        let s = cached.chunk_cache_stats();
        assert!(s.hits > 0 && s.misses > 0, "{meta}: {s:?}");
    }
}

#[test]
fn the_budget_evicts_and_larger_chunks_bypass_the_cache() {
    let store = memory();
    let a = create(
        &store,
        json!({"shape": [40], "chunks": [10], "dtype": "<u4", "compressor": zstd()}),
    );
    let values: Vec<u32> = (100..140).collect();
    a.write_region(&[0], &[40], &bytes_of(&values)).unwrap();
    let entry = 40 + ENTRY_OVERHEAD;
    a.set_chunk_cache(2 * entry as u64);
    for i in [0, 10, 20, 0, 10] {
        assert_eq!(read(&a, &[i], &[1]), [100 + i as u32]);
    }
    // Three chunks, room for two: each read evicted the least recently used one.
    assert_eq!(a.chunk_cache_stats(), stats(0, 5, 2 * entry));
    assert_eq!(read(&a, &[5], &[1]), [105]);
    assert_eq!(read(&a, &[15], &[1]), [115]);
    assert_eq!(read(&a, &[25], &[1]), [125]);
    assert_eq!(a.chunk_cache_stats(), stats(2, 6, 2 * entry));

    // A budget below one chunk: reads are correct and go straight to the store.
    a.set_chunk_cache(entry as u64 - 1);
    assert_eq!(read(&a, &[0], &[40]), values);
    assert_eq!(read(&a, &[0], &[40]), values);
    assert_eq!(a.chunk_cache_stats(), ChunkCacheStats::default());
}

#[test]
fn corrupt_chunks_are_reported_and_not_cached() {
    let store = memory();
    let a = create(
        &store,
        json!({"shape": [8], "chunks": [4], "dtype": "<u4", "compressor": null}),
    );
    a.set_chunk_cache(1 << 20);
    store.set("a/1", &[0u8; 5]).unwrap();
    for _ in 0..2 {
        assert!(matches!(
            a.read_region(&[4], &[1], &mut [0u8; 4]),
            Err(Error::CorruptChunk(_))
        ));
    }
    assert_eq!(a.chunk_cache_stats(), stats(0, 2, 0));
}

#[test]
fn object_arrays_are_read_without_the_cache() {
    let store = memory();
    let a = create(
        &store,
        json!({"shape": [4], "chunks": [2], "dtype": "|O", "filters": [{"id": "vlen-utf8"}]}),
    );
    a.set_chunk_cache(1 << 20);
    a.write_vlen(&[0], &[2], &[0, 1, 3], b"abc").unwrap();
    let (mut offsets, mut data) = (vec![0i64; 3], vec![0u8; 3]);
    a.read_vlen(&[0], &[2], &mut offsets, &mut data).unwrap();
    assert_eq!((offsets, data), (vec![0, 1, 3], b"abc".to_vec()));
    assert_eq!(a.chunk_cache_stats(), ChunkCacheStats::default());
}

/// Readers on several threads (small boxes, and whole reads that fan out on the pool) while a
/// writer rewrites the array with increasing values: a read that starts after write `v`
/// returned never sees a value below `v`, so no stale chunk outlives its invalidation.
#[test]
fn concurrent_readers_never_see_a_chunk_older_than_the_last_write() {
    let store = memory();
    let a = create(
        &store,
        json!({"shape": [48, 48], "chunks": [8, 8], "dtype": "<u4", "compressor": zstd()}),
    );
    a.set_chunk_cache(1 << 20);
    const VERSIONS: u32 = 400;
    let completed = AtomicU32::new(0);
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        for reader in 0..3u64 {
            let (a, completed, done) = (&a, &completed, &done);
            s.spawn(move || {
                let mut rng = reader.wrapping_mul(0x9E3779B97F4A7C15) | 1;
                let mut reads = 0u64;
                while !done.load(Ordering::SeqCst) || reads < 100 {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let before = completed.load(Ordering::SeqCst);
                    let got = if rng % 16 == 0 {
                        read(a, &[0, 0], &[48, 48])
                    } else {
                        let (i, j) = ((rng >> 8) % 46, (rng >> 20) % 46);
                        read(a, &[i, j], &[3, 3])
                    };
                    let low = got.iter().min().copied().unwrap();
                    assert!(
                        low >= before,
                        "read {low} after version {before} was written"
                    );
                    reads += 1;
                }
            });
        }
        for v in 1..=VERSIONS {
            if v % 3 == 0 {
                // Partial-chunk writes: every chunk is read, patched and re-encoded.
                for i in (0..48).step_by(4) {
                    a.write_region(&[i, 0], &[4, 48], &bytes_of(&[v; 4 * 48]))
                        .unwrap();
                }
            } else {
                a.write_region(&[0, 0], &[48, 48], &bytes_of(&[v; 48 * 48]))
                    .unwrap();
            }
            completed.store(v, Ordering::SeqCst);
        }
        done.store(true, Ordering::SeqCst);
    });
    assert!(read(&a, &[0, 0], &[48, 48]).iter().all(|&v| v == VERSIONS));
    let s = a.chunk_cache_stats();
    assert!(s.hits > 0 && s.misses > 0, "{s:?}");
}
