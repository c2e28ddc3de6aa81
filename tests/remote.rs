//! Remote stores against real servers on 127.0.0.1, which `scripts/test.sh` starts
//! (`scripts/servers.sh`): SeaweedFS as the S3 server and nginx as the web server. Without
//! them (a plain `cargo test`) these tests say so and pass, unless `LIBZARR_REMOTE_TESTS` is
//! `required`, as the test script sets it.

mod common;

use common::{round_trip, server, values, var, V2, V3_SHARDED};
use std::sync::{Arc, Once};
use zarr::store::{AccessMode, Lead};
use zarr::{consolidated, open_store, Array, Consolidated, Error, Group, OpenMode, StoreHandle};

/// The S3 endpoint, with the process environment set up for it; `None` to skip.
fn s3() -> Option<String> {
    let endpoint = server("LIBZARR_TEST_S3_ENDPOINT")?;
    static ENV: Once = Once::new();
    ENV.call_once(|| {
        // Set once, before any store of this test binary reads them.
        std::env::set_var("AWS_ENDPOINT_URL", &endpoint);
        std::env::set_var("AWS_ACCESS_KEY_ID", var("LIBZARR_TEST_S3_KEY"));
        std::env::set_var("AWS_SECRET_ACCESS_KEY", var("LIBZARR_TEST_S3_SECRET"));
        std::env::set_var("AWS_REGION", "us-east-1");
    });
    Some(endpoint)
}

/// A fresh prefix in the test bucket for one test.
fn bucket_prefix(test: &str) -> String {
    format!("s3://zarr-test/{test}-{}", std::process::id())
}

#[test]
fn s3_arrays_groups_and_consolidated_metadata() {
    if s3().is_none() {
        return;
    }
    common::hierarchy(&bucket_prefix("hierarchy"));
}

#[test]
fn s3_missing_bucket_names_the_url() {
    if s3().is_none() {
        return;
    }
    let store = StoreHandle::open("s3://no-such-bucket-here/x", OpenMode::Read).unwrap();
    let message = match Array::open(store, "a") {
        Err(e) => e.to_string(),
        Ok(_) => panic!("an array in a missing bucket"),
    };
    assert!(message.contains("s3://no-such-bucket-here/x"), "{message}");
}

#[test]
fn http_reads_a_consolidated_hierarchy_and_refuses_listing_and_writes() {
    let (Some(base), Some(root)) = (
        server("LIBZARR_TEST_HTTP_URL"),
        server("LIBZARR_TEST_HTTP_ROOT"),
    ) else {
        return;
    };
    let name = format!("served-{}.zarr", std::process::id());
    let local = StoreHandle::open(&format!("{root}/{name}"), OpenMode::Write).unwrap();
    Group::create(local.clone(), "").unwrap();
    round_trip(&local, "a", V2);
    round_trip(&local, "s", V3_SHARDED);
    consolidated::consolidate(&local).unwrap();

    let url = format!("{base}/{name}");
    let store = StoreHandle::open(&url, OpenMode::Read).unwrap();
    assert!(consolidated::load(&store).unwrap());
    for path in ["a", "s"] {
        let array = Array::open(store.clone(), path).unwrap();
        let mut all = vec![0u8; 40 * 30 * 4];
        array.read_region(&[0, 0], &[40, 30], &mut all).unwrap();
        assert_eq!(&all[..900 * 4], &values(900)[..], "{path}");
    }
    let bare = StoreHandle::open(&url, OpenMode::Read).unwrap();
    match Group::open(bare, "").unwrap().members() {
        Err(Error::Unsupported(m)) => assert!(m.contains(&url) && m.contains("list"), "{m}"),
        other => panic!("listing a web server: {other:?}"),
    }
    match StoreHandle::open(&url, OpenMode::Write) {
        Err(Error::Unsupported(m)) => assert!(m.contains("read-only"), "{m}"),
        other => panic!("writing to a web server: {other:?}"),
    }
}

/// zarr-python 2, xarray, GDAL and netCDF-C leave `dimension_separator` out of `.zarray`, and
/// zarr-python 2.6's `NestedDirectoryStore` wrote nested chunks without it: over a web server,
/// which cannot list, both open and read (the `/` form tried where the `.` one is missing),
/// and opening a consolidated store, an array and reading one chunk takes at most 4 requests.
#[test]
fn http_reads_v2_arrays_whose_zarray_leaves_the_separator_out() {
    let (Some(base), Some(root)) = (
        server("LIBZARR_TEST_HTTP_URL"),
        server("LIBZARR_TEST_HTTP_ROOT"),
    ) else {
        return;
    };
    let name = format!("unstated-{}.zarr", std::process::id());
    let local = StoreHandle::open(&format!("{root}/{name}"), OpenMode::Write).unwrap();
    Group::create(local.clone(), "").unwrap();
    for (path, separator) in [("flat", "."), ("nested", "/")] {
        let document = V2.replace(
            r#""order": "C""#,
            &format!(r#""order": "C", "dimension_separator": "{separator}""#),
        );
        round_trip(&local, path, &document);
        common::leave_separator_out(&local, path);
    }
    assert!(local.contains("nested/1/1").unwrap() && local.contains("flat/1.1").unwrap());
    consolidated::consolidate(&local).unwrap();

    let url = format!("{base}/{name}");
    for path in ["flat", "nested"] {
        let store = open_store(&url, AccessMode::Read, None, Consolidated::Use).unwrap();
        let array = Array::open(store.clone(), path).unwrap();
        let mut chunk = vec![0u8; 16 * 14 * 4];
        array.read_region(&[16, 16], &[16, 14], &mut chunk).unwrap();
        let requests = store.request_stats().unwrap().requests;
        assert!(requests <= 4, "{path}: {requests} requests");
        let expected: Vec<u8> = (16..32)
            .flat_map(|r| (16..30).map(move |c| if r < 30 { r * 30 + c } else { -1 }))
            .flat_map(|i: i32| if i < 0 { i } else { i * 7 - 1000 }.to_ne_bytes())
            .collect();
        assert_eq!(chunk, expected, "{path}: one chunk");
        let mut all = vec![0u8; 40 * 30 * 4];
        array.read_region(&[0, 0], &[40, 30], &mut all).unwrap();
        assert_eq!(&all[..900 * 4], &values(900)[..], "{path}");
        assert_eq!(
            array.metadata_json().unwrap()["dimension_separator"],
            if path == "flat" { "." } else { "/" },
            "{path}: the separator found"
        );
        // What only a listing can tell is unknown on a web server; the rest is there.
        let info = array.info().unwrap();
        assert!(info["nbytes_stored"].is_null() && info["chunks_initialized"].is_null());
        assert_eq!(info["chunks_total"], 6);
        assert!(array
            .info_text()
            .unwrap()
            .contains("Chunks initialized : unknown/6"));
    }
}

#[test]
fn s3_shards_larger_than_the_first_request_read_through_prefetched_ranges() {
    if s3().is_none() {
        return;
    }
    // 4 MiB shards (uncompressed int32): the first request of a read fetches the last MiB (the
    // index and some inner chunks); the others come from merged ranged requests. The index at
    // the start is not in that tail.
    for location in ["end", "start"] {
        let url = bucket_prefix(&format!("big-shards-{location}"));
        let store = StoreHandle::open(&url, OpenMode::Write).unwrap();
        let document = format!(
            r#"{{"zarr_format": 3, "node_type": "array", "shape": [1536, 1024],
            "data_type": "int32", "fill_value": 0,
            "chunk_grid": {{"name": "regular", "configuration": {{"chunk_shape": [1024, 1024]}}}},
            "codecs": [{{"name": "sharding_indexed", "configuration": {{"chunk_shape": [128, 256],
                "codecs": [{{"name": "bytes"}}], "index_location": "{location}"}}}}]}}"#
        );
        let array = Array::create(store.clone(), "a", &document).unwrap();
        let all: Vec<u8> = values(1536 * 1024);
        array.write_region(&[0, 0], &[1536, 1024], &all).unwrap();
        let reader = Array::open(StoreHandle::open(&url, OpenMode::Read).unwrap(), "a").unwrap();
        let mut got = vec![0u8; all.len()];
        reader
            .read_region(&[0, 0], &[1536, 1024], &mut got)
            .unwrap();
        assert!(got == all, "{location}: whole array");
        let mut part = vec![0u8; 300 * 500 * 4];
        reader
            .read_region(&[900, 300], &[300, 500], &mut part)
            .unwrap();
        let expected: Vec<u8> = (900..1200)
            .flat_map(|r| (300..800).map(move |c| r * 1024 + c))
            .flat_map(|i: i32| (i * 7 - 1000).to_ne_bytes())
            .collect();
        assert!(part == expected, "{location}: box");
    }
}

/// A blosc v2 array of 4 MiB chunks, 2 by 1 (int32 that compress to about 3 MiB a chunk),
/// written at `url`'s array `b` through `writer`; read through `url`, a small box of each chunk
/// fetches the chunk's head and the blocks holding the box (less than a quarter of the stored
/// chunk), and a box covering the chunks whole fetches them whole; both read what was written.
fn small_boxes_of_blosc_chunks_fetch_their_blocks(writer: &Arc<StoreHandle>, url: &str) {
    let document = r#"{"zarr_format": 2, "shape": [2048, 1024], "chunks": [1024, 1024],
        "dtype": "<i4", "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5,
        "shuffle": 1, "blocksize": 65536}, "fill_value": 0, "filters": null, "order": "C",
        "dimension_separator": "."}"#;
    let array = Array::create(writer.clone(), "b", document).unwrap();
    let mix = |i: u32| {
        let x = i.wrapping_mul(0x9E37_79B9);
        let x = (x ^ (x >> 15)).wrapping_mul(0x85EB_CA6B);
        x ^ (x >> 13)
    };
    let all: Vec<u8> = (0..2048 * 1024u32)
        .flat_map(|i| (mix(i) >> 8).to_ne_bytes())
        .collect();
    array.write_region(&[0, 0], &[2048, 1024], &all).unwrap();
    let stored: u64 = ["b/0.0", "b/1.0"]
        .iter()
        .map(|key| writer.get(key).unwrap().unwrap().len() as u64)
        .sum();
    let store = StoreHandle::open(url, OpenMode::Read).unwrap();
    let reader = Array::open(store.clone(), "b").unwrap();
    let expected = |rows: std::ops::Range<usize>, cols: std::ops::Range<usize>| -> Vec<u8> {
        rows.flat_map(|r| cols.clone().map(move |c| r * 1024 + c))
            .flat_map(|i| all[4 * i..4 * i + 4].to_vec())
            .collect()
    };
    let before = store.request_stats().unwrap();
    let mut part = vec![0u8; 48 * 20 * 4];
    reader
        .read_region(&[1000, 500], &[48, 20], &mut part)
        .unwrap();
    assert!(part == expected(1000..1048, 500..520), "{url}: box");
    let read = store.request_stats().unwrap().bytes_received - before.bytes_received;
    assert!(
        read < stored / 4,
        "{url}: {read} of {stored} stored bytes fetched"
    );
    let mut whole = vec![0u8; all.len()];
    reader
        .read_region(&[0, 0], &[2048, 1024], &mut whole)
        .unwrap();
    assert!(whole == all, "{url}: whole");
}

#[test]
fn s3_small_boxes_of_large_blosc_chunks_fetch_only_their_blocks() {
    if s3().is_none() {
        return;
    }
    let url = bucket_prefix("blosc-blocks");
    let writer = StoreHandle::open(&url, OpenMode::Write).unwrap();
    small_boxes_of_blosc_chunks_fetch_their_blocks(&writer, &url);
}

#[test]
fn http_small_boxes_of_large_blosc_chunks_fetch_only_their_blocks() {
    let (Some(base), Some(root)) = (
        server("LIBZARR_TEST_HTTP_URL"),
        server("LIBZARR_TEST_HTTP_ROOT"),
    ) else {
        return;
    };
    let name = format!("blosc-blocks-{}.zarr", std::process::id());
    let writer = StoreHandle::open(&format!("{root}/{name}"), OpenMode::Write).unwrap();
    small_boxes_of_blosc_chunks_fetch_their_blocks(&writer, &format!("{base}/{name}"));
}

#[test]
fn s3_store_copies_upload_and_download() {
    if s3().is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("libzarr-remote-copy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let local = StoreHandle::open(dir.join("src").to_str().unwrap(), OpenMode::Write).unwrap();
    round_trip(&local, "grp/v2", V2);
    round_trip(&local, "grp/sharded", V3_SHARDED);
    let bucket = StoreHandle::open(&bucket_prefix("copy"), OpenMode::Write).unwrap();
    let mut reports = 0;
    let mut progress = |_: &zarr::copy::Progress| {
        reports += 1;
        std::ops::ControlFlow::Continue(())
    };
    zarr::copy::copy_store(&local, "grp", &bucket, "uploaded", &mut progress).unwrap();
    let back = StoreHandle::open(dir.join("back").to_str().unwrap(), OpenMode::Write).unwrap();
    zarr::copy::copy_store(&bucket, "uploaded", &back, "grp", &mut progress).unwrap();
    assert!(reports > 4, "{reports} progress reports");
    for path in ["grp/v2", "grp/sharded"] {
        let (a, b) = (
            Array::open(local.clone(), path).unwrap(),
            Array::open(back.clone(), path).unwrap(),
        );
        let (mut x, mut y) = (vec![0u8; 40 * 30 * 4], vec![1u8; 40 * 30 * 4]);
        a.read_region(&[0, 0], &[40, 30], &mut x).unwrap();
        b.read_region(&[0, 0], &[40, 30], &mut y).unwrap();
        assert_eq!(x, y, "{path}");
    }
}

#[test]
fn s3_writes_send_covered_chunks_together_and_erase_fill_only_ones() {
    if s3().is_none() {
        return;
    }
    let store = StoreHandle::open(&bucket_prefix("writes"), OpenMode::Write).unwrap();
    let array = Array::create(store.clone(), "a", V2).unwrap();
    array
        .write_region(&[0, 0], &[40, 30], &values(1200))
        .unwrap();
    let keys = |store: &StoreHandle| -> Vec<String> {
        store
            .list_prefix("a/")
            .unwrap()
            .into_iter()
            .filter(|k| !k.ends_with(".zarray"))
            .collect()
    };
    assert_eq!(keys(&store).len(), 6, "{:?}", keys(&store));
    // The fill value over the first chunk (covered: sent with the others) and over part of
    // the last one (read, patched, rewritten).
    let fill = (-1i32).to_ne_bytes().repeat(16 * 16);
    array.write_region(&[0, 0], &[16, 16], &fill).unwrap();
    array
        .write_region(&[32, 16], &[2, 2], &(-1i32).to_ne_bytes().repeat(4))
        .unwrap();
    assert!(
        !keys(&store).contains(&"a/0.0".to_string()),
        "{:?}",
        keys(&store)
    );
    let mut all = vec![0u8; 1200 * 4];
    array.read_region(&[0, 0], &[40, 30], &mut all).unwrap();
    let expected: Vec<i32> = (0..1200)
        .map(|i| {
            let (r, c) = (i / 30, i % 30);
            let filled = (r < 16 && c < 16) || ((32..34).contains(&r) && (16..18).contains(&c));
            if filled {
                -1
            } else {
                i * 7 - 1000
            }
        })
        .collect();
    let got: Vec<i32> = all
        .chunks(4)
        .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(got, expected);
}

/// Writers on different machines (here: processes, which share no lock) that write disjoint
/// parts of the same chunk or shard lose nothing: each read-modify-write is a conditional
/// PUT, repeated on the new value when another writer got there first.
#[test]
fn s3_writers_in_other_processes_sharing_chunks_lose_nothing() {
    if s3().is_none() {
        return;
    }
    common::writers_sharing_chunks_lose_nothing(
        "s3_writers_in_other_processes_sharing_chunks_lose_nothing",
        || bucket_prefix("shared-chunks"),
        common::SharedWriters {
            options: |_| String::new(),
            threads: 1,
        },
    );
}

/// `scripts/http_proxy.py` in front of the S3 server (127.0.0.1 only), adding latency or
/// failures on request; stopped when dropped.
struct Proxy {
    child: std::process::Child,
    port: u16,
}

impl Proxy {
    fn start(upstream: &str, settings: &[&str]) -> Proxy {
        let port_file = std::env::temp_dir().join(format!(
            "libzarr-proxy-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_file(&port_file);
        let child = std::process::Command::new("python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/scripts/http_proxy.py"
            ))
            .args(["--upstream", upstream, "--port-file"])
            .arg(&port_file)
            .args(settings)
            .spawn()
            .expect("python3 runs scripts/http_proxy.py");
        for _ in 0..200 {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|p| p.trim().parse().ok())
            {
                let _ = std::fs::remove_file(&port_file);
                return Proxy { child, port };
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let mut proxy = Proxy { child, port: 0 };
        proxy.stop();
        panic!("scripts/http_proxy.py did not start within 10 s");
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Sends a control request (`GET stats`, `POST reset`, ...) and returns the answer's body.
    fn control(&self, method: &str, target: &str) -> String {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            stream,
            "{method} /__proxy__/{target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer.split_once("\r\n\r\n").unwrap().1.to_string()
    }

    fn stats(&self) -> serde_json::Value {
        serde_json::from_str(&self.control("GET", "stats")).unwrap()
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The test keys and the given endpoint as store options, with `extra` members.
fn options_via(endpoint: &str, extra: &str) -> String {
    format!(
        r#"{{"endpoint": "{endpoint}", "access_key_id": "{}", "secret_access_key": "{}" {extra}}}"#,
        var("LIBZARR_TEST_S3_KEY"),
        var("LIBZARR_TEST_S3_SECRET")
    )
}

#[test]
fn s3_reads_and_writes_through_injected_503s_succeed_by_retrying_and_count_them() {
    let Some(endpoint) = s3() else {
        return;
    };
    let proxy = Proxy::start(&endpoint, &["--fail-every", "3"]);
    let url = bucket_prefix("flaky");
    let options = options_via(&proxy.endpoint(), r#", "retries": 6"#);
    let store = StoreHandle::open_with_options(&url, OpenMode::Write, Some(&options)).unwrap();
    round_trip(&store, "v2", V2);
    round_trip(&store, "v3", V3_SHARDED);
    let (ours, theirs) = (store.request_stats().unwrap(), proxy.stats());
    eprintln!("through a proxy failing every 3rd request: {ours:?}; the proxy saw {theirs}");
    assert_eq!(ours.requests, theirs["requests"].as_u64().unwrap());
    assert_eq!(
        ours.retryable_failures,
        theirs["injected_failures"].as_u64().unwrap()
    );
    assert!(ours.retryable_failures >= ours.requests / 3 - 1, "{ours:?}");
}

#[test]
fn s3_stores_opened_with_the_same_options_share_connections_and_count_their_own_requests() {
    let Some(endpoint) = s3() else {
        return;
    };
    let url = bucket_prefix("shared-client");
    let writer = StoreHandle::open(&url, OpenMode::Write).unwrap();
    Array::create(writer, "a", V2).unwrap();
    let proxy = Proxy::start(&endpoint, &[]);
    let options = options_via(&proxy.endpoint(), "");
    // One request each, so that how many connections the first store opened does not depend
    // on whether its requests overlapped.
    let open = || {
        let store = StoreHandle::open_with_options(&url, OpenMode::Read, Some(&options)).unwrap();
        assert!(store.get("a/.zarray").unwrap().is_some());
        store.request_stats().unwrap().requests
    };
    let first = open();
    let after_first = proxy.stats();
    let second = open();
    let after_second = proxy.stats();
    eprintln!("two stores opened one after the other: the proxy saw {after_second}");
    assert_eq!((first, second), (1, 1));
    assert_eq!(after_first["requests"].as_u64().unwrap(), first);
    assert_eq!(after_second["requests"].as_u64().unwrap(), first + second);
    // The only new connection is the one that asked the proxy for its stats.
    let connections = |stats: &serde_json::Value| stats["connections"].as_u64().unwrap();
    assert_eq!(connections(&after_second), connections(&after_first) + 1);
}

#[test]
fn s3_server_gone_in_the_middle_of_a_read_is_an_error_within_the_retry_time() {
    let Some(endpoint) = s3() else {
        return;
    };
    let url = bucket_prefix("gone");
    let writer = StoreHandle::open(&url, OpenMode::Write).unwrap();
    let document = r#"{"zarr_format": 2, "shape": [64, 1024], "chunks": [1, 1024], "dtype": "<i4",
        "compressor": null, "fill_value": 0, "filters": null, "order": "C"}"#;
    let array = Array::create(writer, "a", document).unwrap();
    array
        .write_region(&[0, 0], &[64, 1024], &values(64 * 1024))
        .unwrap();
    // 50 ms per request and 2 requests in flight: the 64 chunks take about 1.6 s.
    let mut proxy = Proxy::start(&endpoint, &["--delay-ms", "50"]);
    let options = options_via(
        &proxy.endpoint(),
        r#", "requests_in_flight": 2, "retry_seconds": 2, "connect_timeout_seconds": 1"#,
    );
    let store = StoreHandle::open_with_options(&url, OpenMode::Read, Some(&options)).unwrap();
    let array = Array::open(store.clone(), "a").unwrap();
    let started = std::time::Instant::now();
    let read = std::thread::spawn(move || {
        let mut all = vec![0u8; 64 * 1024 * 4];
        array
            .read_region(&[0, 0], &[64, 1024], &mut all)
            .map(|()| all)
    });
    std::thread::sleep(std::time::Duration::from_millis(400));
    proxy.stop();
    let result = read.join().unwrap();
    let took = started.elapsed();
    match result {
        Err(e @ (Error::Unreachable(_) | Error::Io(_))) => {
            let message = e.to_string();
            assert!(
                message.contains(&url) && message.contains("a/"),
                "{message}"
            );
            eprintln!("server stopped after 400 ms: {e} (after {took:?})");
        }
        other => panic!("a read whose server went away gave {other:?}"),
    }
    assert!(took.as_secs() < 10, "took {took:?}");
    let stats = store.request_stats().unwrap();
    assert!(stats.retryable_failures > 0, "{stats:?}");
}

#[test]
fn s3_server_that_does_not_answer_is_a_timeout() {
    let Some(endpoint) = s3() else {
        return;
    };
    let url = bucket_prefix("slow");
    let writer = StoreHandle::open(&url, OpenMode::Write).unwrap();
    Array::create(writer, "a", V2).unwrap();
    let proxy = Proxy::start(&endpoint, &["--delay-ms", "3000"]);
    let options = options_via(
        &proxy.endpoint(),
        r#", "timeout_seconds": 0.3, "retries": 1, "retry_seconds": 2"#,
    );
    let store = StoreHandle::open_with_options(&url, OpenMode::Read, Some(&options)).unwrap();
    let started = std::time::Instant::now();
    match Array::open(store, "a") {
        Err(Error::Timeout(m)) => assert!(m.contains(&url), "{m}"),
        other => panic!("a server that does not answer gave {other:?}"),
    }
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    drop(proxy);
}

#[test]
fn s3_bucket_that_denies_listing_reads_through_consolidated_metadata() {
    let Some(endpoint) = s3() else {
        return;
    };
    let url = bucket_prefix("no-listing");
    let writer = StoreHandle::open(&url, OpenMode::Write).unwrap();
    Group::create(writer.clone(), "").unwrap();
    round_trip(&writer, "g/v2", V2);
    round_trip(&writer, "g/other", V2);
    consolidated::consolidate(&writer).unwrap();
    let options = format!(
        r#"{{"endpoint": "{endpoint}", "access_key_id": "{}", "secret_access_key": "{}"}}"#,
        var("LIBZARR_TEST_S3_READER_KEY"),
        var("LIBZARR_TEST_S3_READER_SECRET")
    );
    let reader = StoreHandle::open_with_options(&url, OpenMode::Read, Some(&options)).unwrap();
    assert!(consolidated::load(&reader).unwrap());
    let members = Group::open(reader.clone(), "g").unwrap().members().unwrap();
    assert_eq!(members.arrays, ["other", "v2"], "{members:?}");
    for path in ["g/v2", "g/other"] {
        let mut all = vec![0u8; 40 * 30 * 4];
        Array::open(reader.clone(), path)
            .unwrap()
            .read_region(&[0, 0], &[40, 30], &mut all)
            .unwrap();
        assert_eq!(&all[..900 * 4], &values(900)[..], "{path}");
    }
    // Without consolidated metadata, listing is refused, naming the URL.
    let bare = StoreHandle::open_with_options(&url, OpenMode::Read, Some(&options)).unwrap();
    match Group::open(bare, "g").unwrap().members() {
        Err(Error::PermissionDenied(m)) => assert!(m.contains(&url), "{m}"),
        other => panic!("listing a bucket that denies it gave {other:?}"),
    }
    // Writing with those keys is refused too.
    let store = StoreHandle::open_with_options(&url, OpenMode::Write, Some(&options)).unwrap();
    match Array::open(store, "g/v2").and_then(|a| a.write_region(&[0, 0], &[1, 1], &[0; 4])) {
        Err(Error::PermissionDenied(m)) => {
            assert!(m.contains(&url) && m.contains("g/v2/0.0"), "{m}")
        }
        other => panic!("a write the bucket denies gave {other:?}"),
    }
}

#[test]
fn s3_large_values_go_up_in_parts_and_read_back_whole() {
    if s3().is_none() {
        return;
    }
    let store = StoreHandle::open(&bucket_prefix("multipart"), OpenMode::Write).unwrap();
    // An uncompressed 40 MiB chunk: a multipart upload of 8 MiB parts.
    let document = r#"{"zarr_format": 2, "shape": [10485760], "chunks": [10485760],
        "dtype": "<i4", "compressor": null, "fill_value": 0, "filters": null, "order": "C"}"#;
    let array = Array::create(store.clone(), "big", document).unwrap();
    let before = store.request_stats().unwrap();
    let all = values(10485760);
    array.write_region(&[0], &[10485760], &all).unwrap();
    let sent = store.request_stats().unwrap();
    // Start and completion are POSTs, the 5 parts PUTs.
    assert_eq!(
        (sent.other - before.other, sent.put - before.put),
        (2, 5),
        "{sent:?}"
    );
    let mut got = vec![0u8; all.len()];
    array.read_region(&[0], &[10485760], &mut got).unwrap();
    assert!(got == all);
}

#[test]
fn s3_many_threads_read_and_write_through_one_array_handle_at_once() {
    if s3().is_none() {
        return;
    }
    let store = StoreHandle::open(&bucket_prefix("threads"), OpenMode::Write).unwrap();
    let array = Arc::new(Array::create(store.clone(), "a", V3_SHARDED).unwrap());
    // 8 threads (GDAL's pattern) each write, then read, their own 5-row band.
    let band = |t: u64| -> Vec<u8> {
        (0..5 * 30)
            .flat_map(|i| (t as i32 * 1000 + i).to_ne_bytes())
            .collect()
    };
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let array = array.clone();
            std::thread::spawn(move || {
                array.write_region(&[t * 5, 0], &[5, 30], &band(t)).unwrap();
                let mut got = vec![0u8; 5 * 30 * 4];
                array.read_region(&[t * 5, 0], &[5, 30], &mut got).unwrap();
                assert!(got == band(t), "thread {t}");
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let mut all = vec![0u8; 40 * 30 * 4];
    array.read_region(&[0, 0], &[40, 30], &mut all).unwrap();
    let expected: Vec<u8> = (0..8).flat_map(band).collect();
    assert!(all == expected, "every band kept");
}

#[test]
fn s3_value_replaced_between_its_parts_is_refused() {
    if s3().is_none() {
        return;
    }
    let store = StoreHandle::open(&bucket_prefix("replaced"), OpenMode::Write).unwrap();
    // A shard's index first (its tail), or a blosc chunk's header (its head).
    for lead in [Lead::Tail(16), Lead::Head(16)] {
        let old = vec![1u8; 1 << 20];
        store.set("v", &old).unwrap();
        let refused = common::replaced_value_is_not_mixed(&store, "v", &old, lead, || {
            store.set("v", &vec![2u8; 1 << 20]).unwrap()
        });
        assert!(
            refused,
            "{lead:?}: the first request fetched the value whole"
        );
    }
}

#[test]
fn http_value_replaced_between_its_parts_is_refused() {
    let (Some(base), Some(root)) = (
        server("LIBZARR_TEST_HTTP_URL"),
        server("LIBZARR_TEST_HTTP_ROOT"),
    ) else {
        return;
    };
    let name = format!("replaced-{}", std::process::id());
    let file = format!("{root}/{name}/v");
    std::fs::create_dir_all(format!("{root}/{name}")).unwrap();
    let old = vec![1u8; 1 << 20];
    std::fs::write(&file, &old).unwrap();
    let store = StoreHandle::open(&format!("{base}/{name}"), OpenMode::Read).unwrap();
    // nginx's ETag is the modification second and the size: the new value has another size.
    let refused = common::replaced_value_is_not_mixed(&store, "v", &old, Lead::Tail(16), || {
        std::fs::write(&file, vec![2u8; (1 << 20) + 1]).unwrap()
    });
    assert!(refused, "the first request fetched the index alone");
}
