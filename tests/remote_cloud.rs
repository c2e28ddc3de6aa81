//! Azure Blob Storage (`az://`) and Google Cloud Storage (`gs://`) stores against emulators on
//! 127.0.0.1, which `scripts/test.sh` starts (`scripts/servers.sh`): Azurite and
//! fake-gcs-server. Without them (a plain `cargo test`) these tests say so and pass,
//! unless `LIBZARR_REMOTE_TESTS` is `required`, as the test script sets it.

mod common;

use common::{round_trip, server, V2};
use std::path::Path;
use std::sync::{Arc, Once};
use zarr::store::Lead;
use zarr::{Array, Error, OpenMode, StoreHandle};

/// Azurite's blob endpoint, with the process environment set up for it (the connection string
/// Azure users set); `None` to skip.
fn azure() -> Option<String> {
    let endpoint = server("LIBZARR_TEST_AZURE_ENDPOINT")?;
    static ENV: Once = Once::new();
    ENV.call_once(|| {
        // Set once, before any store of this test binary reads it.
        let connection = common::var("LIBZARR_TEST_AZURE_CONNECTION_STRING");
        std::env::set_var("AZURE_STORAGE_CONNECTION_STRING", connection);
    });
    Some(endpoint)
}

/// A fresh prefix in the test container for one test.
fn container_prefix(test: &str) -> String {
    format!("az://zarr-test/{test}-{}", std::process::id())
}

/// Opens `url` with `options`; its error.
fn open_error(url: &str, options: &str) -> Error {
    match StoreHandle::open_with_options(url, OpenMode::Read, Some(options)) {
        Err(e) => e,
        Ok(_) => panic!("{url} opened with {options}"),
    }
}

/// Reads the array `a` at `url` with `options`: its values, or the error.
fn read(url: &str, options: &str) -> zarr::Result<Vec<u8>> {
    let store = StoreHandle::open_with_options(url, OpenMode::Read, Some(options))?;
    let array = Array::open(store, "a")?;
    let mut all = vec![0u8; 40 * 30 * 4];
    array.read_region(&[0, 0], &[40, 30], &mut all)?;
    Ok(all)
}

/// Writes the array `a` at `url` (with the environment's settings).
fn write(url: &str) -> Arc<StoreHandle> {
    let store = StoreHandle::open(url, OpenMode::Write).unwrap();
    round_trip(&store, "a", V2);
    store
}

#[test]
fn azure_arrays_groups_and_consolidated_metadata() {
    if azure().is_none() {
        return;
    }
    common::hierarchy(&container_prefix("hierarchy"));
}

#[test]
fn azure_value_replaced_between_its_parts_is_refused() {
    if azure().is_none() {
        return;
    }
    let store = StoreHandle::open(&container_prefix("replaced"), OpenMode::Write).unwrap();
    let old = vec![1u8; 1 << 20];
    store.set("v", &old).unwrap();
    // Azure takes no suffix ranges: the first part is found with a HEAD, then read alone.
    let refused = common::replaced_value_is_not_mixed(&store, "v", &old, Lead::Tail(16), || {
        store.set("v", &vec![2u8; 1 << 20]).unwrap()
    });
    assert!(refused, "the first request fetched the value's end alone");
}

#[test]
fn azure_settings_from_options_and_their_errors() {
    let Some(endpoint) = azure() else {
        return;
    };
    let url = container_prefix("options");
    write(&url);
    let expected = read(&url, "{}").unwrap();
    // Azurite's defaults, the endpoint given: account devstoreaccount1 and its key.
    let emulator = format!(r#"{{"use_emulator": true, "endpoint": "{endpoint}"}}"#);
    assert_eq!(read(&url, &emulator).unwrap(), expected);
    // A missing key reads as the fill value.
    let store = StoreHandle::open(&url, OpenMode::Read).unwrap();
    assert_eq!(store.get("a/9.9").unwrap(), None);
    for (options, what) in [
        (r#"{"account_key": "d3Jvbmc="}"#, "a wrong key"),
        (
            r#"{"sas_token": "sv=2021-08-06&sig=d3Jvbmc%3D"}"#,
            "a wrong SAS token",
        ),
        (r#"{"anonymous": true}"#, "unsigned requests"),
    ] {
        match read(&url, options) {
            Err(Error::PermissionDenied(m)) => assert!(m.contains(&url), "{what}: {m}"),
            other => panic!("{what}: {other:?}"),
        }
    }
    // Public containers read without signing.
    let public = format!("az://public/options-{}", std::process::id());
    write(&public);
    assert_eq!(read(&public, r#"{"anonymous": true}"#).unwrap(), expected);
    match read("az://no-such-container/x", "{}") {
        Err(Error::NotFound(m)) => assert!(m.contains("az://no-such-container/x"), "{m}"),
        other => panic!("a missing container: {other:?}"),
    }
    let nowhere = r#"{"endpoint": "http://127.0.0.1:9/devstoreaccount1", "retries": 0}"#;
    match read(&url, nowhere) {
        Err(Error::Unreachable(m)) => assert!(m.contains(&url), "{m}"),
        other => panic!("nothing listening: {other:?}"),
    }
    for (options, naming) in [
        (r#"{"account": 1}"#, "account"),
        (r#"{"use_emulator": "yes"}"#, "use_emulator"),
        (r#"{"account_name": "x"}"#, "account_name"),
        (r#"{"region": "eu-west-1"}"#, "region"),
        (
            r#"{"service_account_path": "/x.json"}"#,
            "service_account_path",
        ),
    ] {
        match open_error(&url, options) {
            Error::InvalidArgument(m) => assert!(m.contains(naming), "{options}: {m}"),
            other => panic!("{options}: {other:?}"),
        }
    }
    match open_error("az:///x", "{}") {
        Error::InvalidArgument(m) => assert!(m.contains("no container"), "{m}"),
        other => panic!("{other:?}"),
    }
}

/// A GCS server's base URL (`LIBZARR_TEST_GCS_ENDPOINT`), with the process environment set up
/// for it (`STORAGE_EMULATOR_HOST`, as Google's clients read it); `None` to skip. The test
/// script starts fake-gcs-server with the zarrs fixtures in its bucket `zarr-test`.
fn gcs() -> Option<String> {
    let endpoint = server("LIBZARR_TEST_GCS_ENDPOINT")?;
    static ENV: Once = Once::new();
    ENV.call_once(|| {
        // As Google's clients take it: a host and port, `http://` implied.
        let host = endpoint.trim_start_matches("http://");
        std::env::set_var("STORAGE_EMULATOR_HOST", host);
    });
    Some(endpoint)
}

/// Reads what `scripts/servers.sh` uploaded (the arrays the zarrs crate wrote, one sharded)
/// through `gs://` and from their directories: the same keys, sizes and values. Only reads:
/// fake-gcs-server takes no plain XML API PUT, which is how object_store writes.
#[test]
fn gcs_reads_what_zarrs_wrote() {
    if gcs().is_none() {
        return;
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for name in ["zarrs-packbits", "zarrs-dtypes"] {
        let dir = fixtures.join(name).join("arrays");
        let local = StoreHandle::open(dir.to_str().unwrap(), OpenMode::Read).unwrap();
        let url = format!("gs://zarr-test/fixtures/{name}");
        let remote = StoreHandle::open(&url, OpenMode::Read).unwrap();
        let listed = local.list_prefix_sized("").unwrap();
        assert_eq!(remote.list_prefix_sized("").unwrap(), listed, "{url}");
        let names = local.list_dir("").unwrap();
        assert_eq!(remote.list_dir("").unwrap(), names, "{url}");
        let arrays: Vec<_> = names
            .iter()
            .filter(|name| dir.join(name).join("zarr.json").exists())
            .collect();
        assert!(arrays.len() > 5, "{url}: {names:?}");
        for path in arrays {
            let theirs = Array::open(local.clone(), path).unwrap();
            let ours = Array::open(remote.clone(), path).unwrap();
            let shape = theirs.shape();
            let size = theirs.item_size() * shape.iter().product::<u64>() as usize;
            let (mut expected, mut all) = (vec![0xa5; size], vec![0x5a; size]);
            let origin = vec![0; shape.len()];
            theirs.read_region(&origin, &shape, &mut expected).unwrap();
            ours.read_region(&origin, &shape, &mut all).unwrap();
            assert_eq!(all, expected, "{url}/{path}");
            // The last element alone: ranged reads (a shard's index from the shard's end).
            let last: Vec<u64> = shape.iter().map(|&n| n - 1).collect();
            let mut one = vec![0; theirs.item_size()];
            ours.read_region(&last, &vec![1; shape.len()], &mut one)
                .unwrap();
            assert_eq!(
                one,
                expected[size - one.len()..],
                "{url}/{path}: last element"
            );
        }
        assert_eq!(remote.get("no/such/key").unwrap(), None, "{url}");
    }
    // fake-gcs-server answers a missing bucket as a missing object (a bare 404, where GCS
    // says `NoSuchBucket`): nothing is found.
    match read("gs://no-such-bucket-here/x", "{}") {
        Err(Error::NotFound(_)) => {}
        other => panic!("a missing bucket: {other:?}"),
    }
}

#[test]
fn gcs_options_are_checked_before_any_request() {
    for (url, options, naming) in [
        (
            "gs://b/x",
            r#"{"service_account_path": true}"#,
            "service_account_path",
        ),
        ("gs://b/x", r#"{"account": "a"}"#, "account"),
        ("gs://b/x", r#"{"use_emulator": true}"#, "use_emulator"),
        ("gs://b/x", r#"{"profile": "p"}"#, "profile"),
        (
            "gs://b/x",
            r#"{"service_account_path": "/no/such/key.json"}"#,
            "/no/such/key.json",
        ),
        ("gs:///x", "{}", "no bucket"),
        ("s3://b/x", r#"{"sas_token": "sv=1"}"#, "sas_token"),
        (
            "http://127.0.0.1:9/x",
            r#"{"endpoint": "http://x"}"#,
            "endpoint",
        ),
    ] {
        match open_error(url, options) {
            Error::InvalidArgument(m) => assert!(m.contains(naming), "{url} {options}: {m}"),
            other => panic!("{url} {options}: {other:?}"),
        }
    }
}

#[test]
fn azure_writers_in_other_processes_sharing_chunks_lose_nothing() {
    if azure().is_none() {
        return;
    }
    common::writers_sharing_chunks_lose_nothing(
        "azure_writers_in_other_processes_sharing_chunks_lose_nothing",
        || container_prefix("shared-chunks"),
        common::SharedWriters {
            options: |_| String::new(),
            threads: 1,
        },
    );
}
