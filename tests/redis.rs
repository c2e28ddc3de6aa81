//! `redis://` stores: arrays, groups and consolidated metadata on the real Redis server
//! `scripts/test.sh` starts (`scripts/servers.sh`: `LIBZARR_TEST_REDIS_URL`); without it these
//! tests say so and pass, unless `LIBZARR_REMOTE_TESTS` is `required`. The failures need no
//! server: a port nobody listens on, and one that accepts connections and never answers.

mod common;

use common::server;
use zarr::{Error, OpenMode, StoreHandle};

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
    let Some(url) = database(3) else { return };
    common::hierarchy(&url);
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
