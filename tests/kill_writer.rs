//! Crash safety: a writer process rewrites a v2 array, a sharded v3 array and attributes in a
//! loop and is killed with SIGKILL at a random moment, again and again; after every kill each
//! chunk decodes and holds one generation's values (the last one the writer reported done, or
//! the one it was writing), the metadata and attributes parse, and no temporary file shows as
//! a key. `LIBZARR_KILLS` sets the number of kills (default 100).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;
use zarr::{Array, Group, OpenMode, StoreHandle};

const N: u64 = 64;
const V2: &str = r#"{"zarr_format": 2, "shape": [64, 64], "chunks": [16, 16], "dtype": "<i4",
    "compressor": {"id": "zstd", "level": 1}, "fill_value": -1, "filters": null, "order": "C"}"#;
const V3: &str = r#"{"zarr_format": 3, "node_type": "array", "shape": [64, 64],
    "data_type": "int32", "fill_value": -1,
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [32, 32]}},
    "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8],
        "codecs": [{"name": "bytes"}, {"name": "zstd"}]}}]}"#;

/// The writer: from generation `first` on, every array written whole with the generation
/// as every value, then the group's attributes; each generation reported on stdout when done.
fn writer(location: &str, first: i32) {
    let store = StoreHandle::open(location, OpenMode::Write).unwrap();
    let arrays = [
        Array::open(store.clone(), "v2").unwrap(),
        Array::open(store.clone(), "v3").unwrap(),
    ];
    let group = Group::open(store, "").unwrap();
    for generation in first.. {
        let values = generation.to_ne_bytes().repeat((N * N) as usize);
        for array in &arrays {
            array.write_region(&[0, 0], &[N, N], &values).unwrap();
        }
        group
            .set_attributes(&format!(r#"{{"generation": {generation}}}"#))
            .unwrap();
        println!("{generation}");
    }
}

/// Every chunk of `path` (`side` elements square) holds one value, one of `allowed`.
fn check_chunks(store: &std::sync::Arc<StoreHandle>, path: &str, side: usize, allowed: &[i32]) {
    let array = Array::open(store.clone(), path).unwrap();
    let mut all = vec![0u8; (N * N * 4) as usize];
    array.read_region(&[0, 0], &[N, N], &mut all).unwrap();
    let values: Vec<i32> = all
        .chunks(4)
        .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    let n = N as usize;
    for (r0, c0) in (0..n)
        .step_by(side)
        .flat_map(|r| (0..n).step_by(side).map(move |c| (r, c)))
    {
        let first = values[r0 * n + c0];
        assert!(
            allowed.contains(&first),
            "{path} chunk at ({r0}, {c0}): {first} not in {allowed:?}"
        );
        for r in r0..r0 + side {
            assert!(
                values[r * n + c0..r * n + c0 + side]
                    .iter()
                    .all(|&v| v == first),
                "{path} chunk at ({r0}, {c0}) is torn"
            );
        }
    }
}

/// Files below `dir` whose name holds `marker`.
fn count_files(dir: &std::path::Path, marker: &str) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| {
            let path = entry.path();
            match path.is_dir() {
                true => count_files(&path, marker),
                false => usize::from(entry.file_name().to_string_lossy().contains(marker)),
            }
        })
        .sum()
}

/// Sets the modification time of every temporary file below `dir` to `age` ago.
fn age_temporary_files(dir: &std::path::Path, age: Duration) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            age_temporary_files(&path, age);
        } else if entry
            .file_name()
            .to_string_lossy()
            .contains(".libzarr-partial-")
        {
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(std::time::SystemTime::now() - age)
                .unwrap();
        }
    }
}

#[test]
fn a_writer_killed_at_random_moments_leaves_every_chunk_whole() {
    if let (Ok(location), Ok(first)) = (
        std::env::var("LIBZARR_KILL_STORE"),
        std::env::var("LIBZARR_KILL_FIRST"),
    ) {
        return writer(&location, first.parse().unwrap());
    }
    let kills: usize = std::env::var("LIBZARR_KILLS").map_or(100, |k| k.parse().unwrap());
    let dir = std::env::temp_dir().join(format!("libzarr-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let location = dir.to_str().unwrap().to_string();
    {
        let store = StoreHandle::open(&location, OpenMode::Write).unwrap();
        Group::create(store.clone(), "").unwrap();
        for (path, doc) in [("v2", V2), ("v3", V3)] {
            let array = Array::create(store.clone(), path, doc).unwrap();
            array
                .write_region(&[0, 0], &[N, N], &[0u8; (N * N * 4) as usize])
                .unwrap();
        }
        Group::open(store, "")
            .unwrap()
            .set_attributes(r#"{"generation": 0}"#)
            .unwrap();
    }
    // What each chunk may hold: the last generation reported done and the one being written.
    let mut allowed = vec![0];
    let mut next = 1;
    let mut seed = 0x2545_f491_4f6c_dd1d_u64 ^ std::process::id() as u64;
    let (mut acked_total, mut checks) = (0, 0);
    for _ in 0..kills {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "a_writer_killed_at_random_moments_leaves_every_chunk_whole",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("LIBZARR_KILL_STORE", &location)
            .env("LIBZARR_KILL_FIRST", next.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_micros(2_000 + seed % 60_000));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let acked: Vec<i32> = BufReader::new(child.stdout.take().unwrap())
            .lines()
            .map_while(Result::ok)
            // The harness prints the test's name before the first line, without a newline.
            .filter_map(|l| l.split_whitespace().last()?.parse().ok())
            .collect();
        acked_total += acked.len();
        let last_generation = next + acked.len() as i32;
        allowed = match acked.last() {
            Some(&done) => vec![done, done + 1],
            None => [allowed, vec![next]].concat(),
        };
        next = last_generation + 1;

        let store = StoreHandle::open(&location, OpenMode::Read).unwrap();
        check_chunks(&store, "v2", 16, &allowed);
        check_chunks(&store, "v3", 8, &allowed);
        let attributes: serde_json::Value = serde_json::from_str(
            &Group::open(store.clone(), "")
                .unwrap()
                .attributes()
                .unwrap(),
        )
        .unwrap();
        let generation = attributes["generation"].as_i64().unwrap() as i32;
        assert!(
            allowed.contains(&generation),
            "attributes say generation {generation}, allowed {allowed:?}"
        );
        let keys = store.list_prefix("").unwrap();
        assert!(
            keys.iter().all(|k| !k.contains(".libzarr-partial-")),
            "a temporary file shows as a key: {keys:?}"
        );
        checks += 1;
    }
    let orphans = count_files(&dir, ".libzarr-partial-");
    // A listing of the store opened for writing removes the temporary files of writers that
    // are gone, once they are a minute old: age them, as a later session would find them.
    age_temporary_files(&dir, Duration::from_secs(120));
    StoreHandle::open(&location, OpenMode::Write)
        .unwrap()
        .list_prefix("")
        .unwrap();
    let left = count_files(&dir, ".libzarr-partial-");
    assert_eq!(
        left, 0,
        "{left} of {orphans} orphaned temporary files were not removed"
    );
    eprintln!(
        "{kills} kills, {acked_total} generations done between them, {checks} checks: no torn \
         chunk; {orphans} temporary files left by killed writes (never keys), all removed by the \
         next listing for writing"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
