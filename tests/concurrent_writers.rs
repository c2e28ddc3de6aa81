//! Concurrent partial writes of shared chunks and shards through separate store handles (as
//! separate threads or libraries of one program open the same store): nothing may be lost,
//! for v2 chunks and for v3 shards; and through processes sharing a lock directory (the store
//! option `process_synchronizer`).

mod common;

use std::sync::Arc;
use zarr::{Array, OpenMode, StoreHandle};

const THREADS: usize = 4;
const ROWS: u64 = 24;
const COLS: u64 = 20;

fn v2_document() -> String {
    r#"{"zarr_format": 2, "shape": [24, 20], "chunks": [8, 8], "dtype": "<i4",
        "compressor": {"id": "zstd", "level": 1}, "fill_value": 0, "filters": null,
        "order": "C"}"#
        .into()
}

fn v3_sharded_document() -> String {
    r#"{"zarr_format": 3, "node_type": "array", "shape": [24, 20], "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [12, 10]}},
        "fill_value": 0,
        "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 5],
            "codecs": [{"name": "bytes"}, {"name": "zstd"}]}}]}"#
        .into()
}

/// Each thread opens its own store handle and array, and writes its own rows one at a time
/// (so every chunk is shared by all threads), then the same for columns.
fn writes_through_separate_handles_lose_nothing(document: &str) {
    let dir = tempdir(document.len());
    let location = dir.to_str().unwrap().to_string();
    {
        let store = StoreHandle::open(&location, OpenMode::Write).unwrap();
        Array::create(store, "a", document).unwrap();
    }
    let value = |r: u64, c: u64, pass: i32| (r * COLS + c) as i32 * 2 + pass;
    for pass in 1..=2 {
        std::thread::scope(|scope| {
            for t in 0..THREADS {
                let location = location.clone();
                scope.spawn(move || {
                    let store: Arc<StoreHandle> =
                        StoreHandle::open(&location, OpenMode::Write).unwrap();
                    let a = Array::open(store, "a").unwrap();
                    if pass == 1 {
                        for r in (t as u64..ROWS).step_by(THREADS) {
                            let row: Vec<u8> = (0..COLS)
                                .flat_map(|c| value(r, c, pass).to_ne_bytes())
                                .collect();
                            a.write_region(&[r, 0], &[1, COLS], &row).unwrap();
                        }
                    } else {
                        for c in (t as u64..COLS).step_by(THREADS) {
                            let col: Vec<u8> = (0..ROWS)
                                .flat_map(|r| value(r, c, pass).to_ne_bytes())
                                .collect();
                            a.write_region(&[0, c], &[ROWS, 1], &col).unwrap();
                        }
                    }
                });
            }
        });
        let store = StoreHandle::open(&location, OpenMode::Read).unwrap();
        let a = Array::open(store, "a").unwrap();
        let mut out = vec![0u8; (ROWS * COLS * 4) as usize];
        a.read_region(&[0, 0], &[ROWS, COLS], &mut out).unwrap();
        for (i, v) in out.chunks_exact(4).enumerate() {
            let (r, c) = (i as u64 / COLS, i as u64 % COLS);
            let got = i32::from_ne_bytes(v.try_into().unwrap());
            assert_eq!(got, value(r, c, pass), "pass {pass}: ({r}, {c}) lost");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempdir(tag: usize) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("libzarr-concurrent-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn v2_chunks() {
    for _ in 0..20 {
        writes_through_separate_handles_lose_nothing(&v2_document());
    }
}

#[test]
fn v3_shards() {
    for _ in 0..20 {
        writes_through_separate_handles_lose_nothing(&v3_sharded_document());
    }
}

/// 4 processes × 2 threads write their own columns of one v2 chunk and one v3 shard of a
/// directory store, 40 times each, with a process synchronizer: nothing is lost (without one,
/// a run lost 32 of the 64 values).
#[test]
fn processes_sharing_a_lock_directory_lose_nothing() {
    common::writers_sharing_chunks_lose_nothing(
        "processes_sharing_a_lock_directory_lose_nothing",
        || tempdir(0).to_str().unwrap().to_string(),
        common::SharedWriters {
            options: |url| format!(r#"{{"process_synchronizer": "{url}.locks"}}"#),
            threads: 2,
        },
    );
}
