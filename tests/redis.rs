//! `redis://` stores: arrays, groups and consolidated metadata on the real Redis server
//! `scripts/test.sh` starts (`scripts/servers.sh`: `LIBZARR_TEST_REDIS_URL`); without it these
//! tests say so and pass, unless `LIBZARR_REMOTE_TESTS` is `required`. The failures need no
//! server: a port nobody listens on, and one that accepts connections and never answers.

mod common;

use common::server;
use std::sync::Mutex;
use zarr::{Array, Error, OpenMode, StoreHandle};

/// Held by the tests that use the server, so that one's command counts are its own.
static SERVER: Mutex<()> = Mutex::new(());

/// Database `db` of the test server, emptied of the keys of zarr-python's default prefix.
fn database(db: u32) -> Option<String> {
    let url = server("LIBZARR_TEST_REDIS_URL")?;
    let base = url.rsplit_once('/').map_or(url.as_str(), |(base, _)| base);
    let url = format!("{base}/{db}");
    let store = StoreHandle::open(&url, OpenMode::Write).unwrap();
    for key in store.list_prefix("").unwrap() {
        store.erase(&key).unwrap();
    }
    Some(url)
}

#[test]
fn redis_arrays_groups_and_consolidated_metadata() {
    let _server = SERVER.lock().unwrap_or_else(|p| p.into_inner());
    let Some(url) = database(3) else { return };
    common::hierarchy(&url);
}

/// The calls the server has answered so far of each command in `commands` (INFO
/// commandstats).
fn command_calls(url: &str, commands: &[&str]) -> Vec<u64> {
    let mut connection = redis::Client::open(url).unwrap().get_connection().unwrap();
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut connection)
        .unwrap();
    commands
        .iter()
        .map(|command| {
            info.lines()
                .find_map(|line| line.strip_prefix(&format!("cmdstat_{command}:calls=")))
                .map_or(0, |rest| rest.split(',').next().unwrap().parse().unwrap())
        })
        .collect()
}

#[test]
fn reads_fetch_chunks_in_batches() {
    let _server = SERVER.lock().unwrap_or_else(|p| p.into_inner());
    let Some(url) = database(4) else { return };
    let store = StoreHandle::open(&url, OpenMode::Write).unwrap();
    // 256 chunks of 16 × 16, and a sharded array of 16 shards.
    let documents = [
        (
            "v2",
            r#"{"zarr_format": 2, "shape": [256, 256], "chunks": [16, 16], "dtype": "<i4",
            "compressor": {"id": "zstd", "level": 1}, "fill_value": -1, "filters": null}"#,
        ),
        (
            "v3",
            r#"{"zarr_format": 3, "node_type": "array", "shape": [256, 256],
            "data_type": "int32", "fill_value": -1,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [64, 64]}},
            "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [16, 16],
                "codecs": [{"name": "bytes"}, {"name": "zstd"}]}}]}"#,
        ),
    ];
    let values = common::values(256 * 256);
    for (path, document) in documents {
        let array = Array::create(store.clone(), path, document).unwrap();
        array.write_region(&[0, 0], &[256, 256], &values).unwrap();
        let before = command_calls(&url, &["get", "mget"]);
        let reopened = Array::open(store.clone(), path).unwrap();
        let mut all = vec![0u8; values.len()];
        reopened
            .read_region(&[0, 0], &[256, 256], &mut all)
            .unwrap();
        assert!(all == values, "{path}: values read back");
        let after = command_calls(&url, &["get", "mget"]);
        let (gets, mgets) = (after[0] - before[0], after[1] - before[1]);
        // v2: 256 chunks in batches of 16; v3: 16 shards in one batch. Before batching, a
        // read sent a GET per chunk or shard.
        assert!(gets <= 2, "{path}: {gets} GETs");
        assert!((1..=20).contains(&mgets), "{path}: {mgets} MGETs");
    }
}

#[test]
fn batched_writes_replace_and_erase_every_chunk() {
    let _server = SERVER.lock().unwrap_or_else(|p| p.into_inner());
    let Some(url) = database(5) else { return };
    let store = StoreHandle::open(&url, OpenMode::Write).unwrap();
    let array = Array::create(store.clone(), "a", common::V2).unwrap();
    array
        .write_region(&[0, 0], &[40, 30], &common::values(1200))
        .unwrap();
    assert_eq!(store.list_prefix("a/").unwrap().len(), 1 + 3 * 2);
    // Writing the fill value everywhere erases every chunk (`write_empty_chunks` off).
    let fill: Vec<u8> = (0..1200).flat_map(|_| (-1i32).to_ne_bytes()).collect();
    array.write_region(&[0, 0], &[40, 30], &fill).unwrap();
    assert_eq!(store.list_prefix("a/").unwrap(), ["a/.zarray"]);
}

#[test]
fn an_unreachable_server_is_an_error_naming_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://127.0.0.1:{port}/0");
    match StoreHandle::open(&url, OpenMode::Read) {
        Err(Error::Unreachable(m)) => assert!(m.contains(&url), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_server_that_never_answers_is_a_timeout_naming_the_url() {
    // The kernel accepts the connection into the listener's backlog; nothing ever reads it.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "redis://127.0.0.1:{}/0",
        silent.local_addr().unwrap().port()
    );
    let started = std::time::Instant::now();
    match StoreHandle::open_with_options(
        &url,
        OpenMode::Read,
        Some(r#"{"timeout_seconds": 0.3, "connect_timeout_seconds": 0.3}"#),
    ) {
        Err(Error::Timeout(m)) => assert!(m.contains(&url), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn a_password_in_the_url_is_hidden_in_messages() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://user:hunter2@127.0.0.1:{port}/0");
    match StoreHandle::open(&url, OpenMode::Read) {
        Err(e) => {
            let m = e.to_string();
            assert!(
                !m.contains("hunter2") && m.contains("user:***@127.0.0.1"),
                "{m}"
            )
        }
        Ok(_) => panic!("nobody listens there"),
    }
}
