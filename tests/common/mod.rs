//! Helpers the integration tests share: for the remote-store tests the servers
//! `scripts/servers.sh` starts, test data, and the checks every back end goes through; for the
//! fixture tests the chunk files of an array.
#![allow(dead_code)] // each test binary uses its own part

use std::sync::Arc;
use zarr::store::Lead;
use zarr::{consolidated, Array, Error, Group, OpenMode, StoreHandle};

/// The value of the variable `name` that `scripts/servers.sh` exports; `None` to skip, a panic
/// when `LIBZARR_REMOTE_TESTS` is `required`.
pub fn server(name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(value) => Some(value),
        Err(_) if std::env::var("LIBZARR_REMOTE_TESTS").as_deref() == Ok("required") => {
            panic!("{name} is not set: start the servers (scripts/servers.sh)")
        }
        Err(_) => {
            eprintln!("skipped: {name} is not set (scripts/test.sh starts the servers)");
            None
        }
    }
}

/// The variable `name`, which must be set.
pub fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

/// The values written: `i * 7 - 1000` as native-endian `i32`.
pub fn values(n: usize) -> Vec<u8> {
    (0..n as i32)
        .flat_map(|v| (v * 7 - 1000).to_ne_bytes())
        .collect()
}

/// A zstd-compressed v2 array.
pub const V2: &str = r#"{"zarr_format": 2, "shape": [40, 30], "chunks": [16, 16], "dtype": "<i4",
    "compressor": {"id": "zstd", "level": 1}, "fill_value": -1, "filters": null, "order": "C"}"#;
/// A sharded v3 array.
pub const V3_SHARDED: &str = r#"{"zarr_format": 3, "node_type": "array", "shape": [40, 30],
    "data_type": "int32", "fill_value": -1,
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [20, 16]}},
    "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [5, 8],
        "codecs": [{"name": "bytes"}, {"name": "zstd"}]}}]}"#;

/// Rewrites the `.zarray` of the v2 array at `path` without `dimension_separator`, as
/// zarr-python 2 (and, with nested chunks, its 2.6 `NestedDirectoryStore`) wrote it.
pub fn leave_separator_out(store: &Arc<StoreHandle>, path: &str) {
    let key = format!("{path}/.zarray");
    let mut zarray: serde_json::Value =
        serde_json::from_slice(&store.get(&key).unwrap().unwrap()).unwrap();
    zarray
        .as_object_mut()
        .unwrap()
        .remove("dimension_separator");
    store.set(&key, zarray.to_string().as_bytes()).unwrap();
}

/// Writes a box, reads back the whole array (the rest is the fill value) and a box across
/// chunks.
pub fn round_trip(store: &Arc<StoreHandle>, path: &str, document: &str) {
    let array = Array::create(store.clone(), path, document).unwrap();
    array
        .write_region(&[0, 0], &[30, 30], &values(900))
        .unwrap();
    let reopened = Array::open(store.clone(), path).unwrap();
    let mut all = vec![0u8; 40 * 30 * 4];
    reopened.read_region(&[0, 0], &[40, 30], &mut all).unwrap();
    assert_eq!(&all[..900 * 4], &values(900)[..], "{path}");
    assert!(
        all[900 * 4..].chunks(4).all(|v| v == (-1i32).to_ne_bytes()),
        "{path}: fill"
    );
    let mut part = vec![0u8; 10 * 12 * 4];
    reopened
        .read_region(&[13, 9], &[10, 12], &mut part)
        .unwrap();
    let expected: Vec<u8> = (13..23)
        .flat_map(|r| (9..21).map(move |c| r * 30 + c))
        .flat_map(|i: i32| (i * 7 - 1000).to_ne_bytes())
        .collect();
    assert_eq!(part, expected, "{path}: box");
}

/// Arrays (v2 and v3 sharded) in groups at `url`, listed, consolidated, read back through a
/// read-only handle (which refuses writes), then a group deleted.
pub fn hierarchy(url: &str) {
    let store = StoreHandle::open(url, OpenMode::Write).unwrap();
    Group::create(store.clone(), "").unwrap();
    round_trip(&store, "grp/v2", V2);
    round_trip(&store, "v3/sharded", V3_SHARDED);
    let members = Group::open(store.clone(), "grp")
        .unwrap()
        .members()
        .unwrap();
    assert_eq!(
        format!("{members:?}").matches("v2").count(),
        1,
        "{members:?}"
    );
    consolidated::consolidate(&store).unwrap();

    let reader = StoreHandle::open(url, OpenMode::Read).unwrap();
    assert!(
        consolidated::load(&reader).unwrap(),
        "consolidated metadata found"
    );
    let array = Array::open(reader.clone(), "v3/sharded").unwrap();
    let mut all = vec![0u8; 40 * 30 * 4];
    array.read_region(&[0, 0], &[40, 30], &mut all).unwrap();
    assert_eq!(&all[..900 * 4], &values(900)[..]);
    match array.write_region(&[0, 0], &[1, 1], &[0; 4]) {
        Err(Error::ReadOnly(_)) => {}
        other => panic!("a read-only store wrote: {other:?}"),
    }
    zarr::hierarchy::delete_node(&store, "grp").unwrap();
    assert!(Group::open(store.clone(), "grp").is_err());
}

const WRITERS: usize = 4;
const ROUNDS: i32 = 40;

/// How the writer processes of [`writers_sharing_chunks_lose_nothing`] open the store and
/// write.
pub struct SharedWriters {
    /// The store options each writer opens the store at the given location with.
    pub options: fn(&str) -> String,
    /// Threads per writer process, each writing a column of its own.
    pub threads: usize,
}

/// One writer process of [`writers_sharing_chunks_lose_nothing`]: each of its `threads`
/// threads writes its own column of each array, `ROUNDS` times, with the round in the values.
fn shared_chunk_writer(url: &str, options: &str, process: usize, threads: usize) {
    let store = StoreHandle::open_with_options(url, OpenMode::Write, Some(options)).unwrap();
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let store = store.clone();
            scope.spawn(move || {
                let column = process * threads + thread;
                for path in ["v2", "v3"] {
                    let array = Array::open(store.clone(), path).unwrap();
                    for round in 0..ROUNDS {
                        let value = round * 100 + column as i32;
                        let data = value.to_ne_bytes().repeat(8);
                        array
                            .write_region(&[0, column as u64], &[8, 1], &data)
                            .unwrap();
                    }
                }
            });
        }
    });
    if let Some(stats) = store.request_stats() {
        println!(
            "writer {process}: {} requests, {} conflicts (another writer was first)",
            stats.requests, stats.conflicts
        );
    }
}

/// The test `test` (of the calling test binary): `WRITERS` processes (the binary run again,
/// as a writer of its own columns) write disjoint parts of the same chunk (v2) and shard (v3)
/// of arrays at `url()` at once, `ROUNDS` times each; at the end every column holds its
/// writer's last values.
pub fn writers_sharing_chunks_lose_nothing(
    test: &str,
    url: impl FnOnce() -> String,
    how: SharedWriters,
) {
    if let (Ok(url), Ok(process)) = (
        std::env::var("LIBZARR_TEST_WRITER_URL"),
        std::env::var("LIBZARR_TEST_WRITER_PROCESS"),
    ) {
        let options = (how.options)(&url);
        return shared_chunk_writer(&url, &options, process.parse().unwrap(), how.threads);
    }
    let url = url();
    let columns = WRITERS * how.threads;
    let store = StoreHandle::open(&url, OpenMode::Write).unwrap();
    let shape = format!(r#""shape": [8, {columns}]"#);
    Array::create(
        store.clone(),
        "v2",
        &format!(
            r#"{{"zarr_format": 2, {shape}, "chunks": [8, {columns}], "dtype": "<i4",
            "compressor": null, "fill_value": -1, "filters": null, "order": "C"}}"#
        ),
    )
    .unwrap();
    Array::create(
        store.clone(),
        "v3",
        &format!(
            r#"{{"zarr_format": 3, "node_type": "array", {shape}, "data_type": "int32",
            "fill_value": -1,
            "chunk_grid": {{"name": "regular", "configuration": {{"chunk_shape": [8, {columns}]}}}},
            "codecs": [{{"name": "sharding_indexed", "configuration": {{"chunk_shape": [4, 2],
                "codecs": [{{"name": "bytes"}}, {{"name": "zstd"}}]}}}}]}}"#
        ),
    )
    .unwrap();
    let writers: Vec<_> = (0..WRITERS)
        .map(|process| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args([test, "--exact", "--nocapture", "--test-threads=1"])
                .env("LIBZARR_TEST_WRITER_URL", &url)
                .env("LIBZARR_TEST_WRITER_PROCESS", process.to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect::<Vec<_>>();
    for writer in writers {
        let output = writer.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        for line in text
            .lines()
            .filter_map(|l| l.find("writer ").map(|i| &l[i..]))
        {
            eprintln!("{line}");
        }
    }
    for path in ["v2", "v3"] {
        let array = Array::open(store.clone(), path).unwrap();
        let mut all = vec![0u8; 8 * columns * 4];
        array
            .read_region(&[0, 0], &[8, columns as u64], &mut all)
            .unwrap();
        let got: Vec<i32> = all
            .chunks(4)
            .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        let expected: Vec<i32> = (0..8 * columns)
            .map(|i| (ROUNDS - 1) * 100 + (i % columns) as i32)
            .collect();
        let lost = got.iter().zip(&expected).filter(|(g, e)| g != e).count();
        assert_eq!(
            lost, 0,
            "{path}: {lost} of a writer's last values were lost"
        );
    }
}

/// Opens `key` of `store` (holding `old`) reading its `lead` (16 bytes of its end or its
/// start) first, has `replace` put another value there, and reads 64 bytes at the value's
/// other end: an error saying it changed (`true`), or the old value's bytes (`false`, where
/// the first request fetched it whole); never the new value's bytes read as the old one's.
pub fn replaced_value_is_not_mixed(
    store: &StoreHandle,
    key: &str,
    old: &[u8],
    lead: Lead,
    replace: impl FnOnce(),
) -> bool {
    let (value, at) = match lead {
        Lead::Tail(tail) => (store.open_value_tail(key, tail).unwrap(), 0),
        Lead::Head(_) => {
            let mut opened = store
                .open_many(1, &|_| key.to_string(), lead, &|_, _, _| Vec::new())
                .unwrap();
            (opened.pop().unwrap(), old.len() - 64)
        }
    };
    let value = value.expect("the value");
    replace();
    let mut part = vec![0u8; 64];
    match value.read_exact_at(at as u64, &mut part) {
        Err(Error::Changed(m)) => {
            assert!(m.contains(key), "{m}");
            true
        }
        Ok(()) if part == old[at..at + 64] => false,
        other => panic!("a value replaced between its parts gave {other:?}, {part:?}"),
    }
}

/// Every file under `dir` but `zarr.json`, by path relative to it, sorted: an array's chunk
/// files, to compare with another writer's.
pub fn chunk_files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.file_name().unwrap() != "zarr.json" {
                files.push((
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&path).unwrap(),
                ));
            }
        }
    }
    files.sort();
    files
}
