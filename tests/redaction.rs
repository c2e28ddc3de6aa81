//! No secret leaves the library in text: for every location that carries one (a password in
//! the URL, a signed query string, an Azure SAS, S3 keys given as options) and every way a
//! server can fail (unreachable, 403, 500), neither the C API's `zarr_last_error()`, nor the
//! Rust API's errors, nor a store's `Debug` output holds the secret, while they still name
//! the server. The servers are small HTTP servers on 127.0.0.1 answering every request with
//! one status.

use std::ffi::{CStr, CString};
use std::io::{Read, Write};
use std::net::TcpListener;
use zarr::ffi::{zarr_array_close, zarr_array_open, zarr_last_error, zarr_store_close};
use zarr::ffi::{zarr_store_open_options, ZARR_MODE_READ};
use zarr::store::AccessMode;
use zarr::{open_store, Array, Consolidated};

/// Every secret the locations below carry.
const SECRETS: [&str; 6] = [
    "S3CRET-PASSWORD",
    "S3CRET-SIGNATURE",
    "S3CRET-SAS",
    "S3CRET-KEY",
    "S3CRET-TOKEN",
    "AKIDEXAMPLE",
];

/// A server on 127.0.0.1 answering every request with `status` and an empty body, for as
/// long as the test binary runs; its port.
fn answering(status: u16) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let answer = format!(
                "HTTP/1.1 {status} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    port
}

/// A port on 127.0.0.1 where nothing listens.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Each location with its options, for a server at `port`.
fn locations(port: u16) -> Vec<(String, String)> {
    let quick = r#""retries": 0, "retry_seconds": 2, "connect_timeout_seconds": 2"#;
    vec![
        (
            format!("http://reader:S3CRET-PASSWORD@127.0.0.1:{port}/data.zarr"),
            format!("{{{quick}}}"),
        ),
        (
            format!(
                "http://127.0.0.1:{port}/data.zarr?X-Amz-Algorithm=AWS4-HMAC-SHA256\
                 &X-Amz-Credential=AKIDEXAMPLE%2F20261128&X-Amz-Signature=S3CRET-SIGNATURE"
            ),
            format!("{{{quick}}}"),
        ),
        (
            format!(
                "http://127.0.0.1:{port}/container/data.zarr?sv=2022-11-02&sp=r&sig=S3CRET-SAS"
            ),
            format!("{{{quick}}}"),
        ),
        (
            "s3://bucket/data.zarr".to_string(),
            format!(
                r#"{{"endpoint": "http://127.0.0.1:{port}", "access_key_id": "AKIDEXAMPLE",
                    "secret_access_key": "S3CRET-KEY", "session_token": "S3CRET-TOKEN", {quick}}}"#
            ),
        ),
    ]
}

/// Fails the test when `text` holds a secret or does not name the server.
fn check(text: &str, what: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what}: {secret} in {text:?}");
    }
    assert!(
        text.contains("127.0.0.1") || text.contains("bucket"),
        "{what}: {text:?}"
    );
}

/// The C API: opening the store and then an array fails, at one step or the other, and
/// every message is free of secrets.
fn through_the_c_api(location: &str, options: &str, what: &str) -> usize {
    let (location, options) = (
        CString::new(location).unwrap(),
        CString::new(options).unwrap(),
    );
    let mut store = std::ptr::null_mut();
    let last_error = || {
        unsafe { CStr::from_ptr(zarr_last_error()) }
            .to_str()
            .unwrap()
            .to_string()
    };
    let mut failures = 0;
    // SAFETY: valid NUL-terminated strings and out-pointers, handles closed once.
    unsafe {
        if zarr_store_open_options(
            location.as_ptr(),
            ZARR_MODE_READ,
            options.as_ptr(),
            &mut store,
        ) != 0
        {
            check(&last_error(), &format!("{what}: zarr_store_open_options"));
            return 1;
        }
        let mut array = std::ptr::null_mut();
        let path = CString::new("a").unwrap();
        if zarr_array_open(store, path.as_ptr(), &mut array) != 0 {
            check(&last_error(), &format!("{what}: zarr_array_open"));
            failures += 1;
        } else {
            zarr_array_close(array);
        }
        zarr_store_close(store);
    }
    failures
}

#[test]
fn no_secret_in_any_message_for_any_location_and_failure() {
    let failures = [
        ("unreachable", closed_port()),
        ("403", answering(403)),
        ("500", answering(500)),
    ];
    let mut checked = 0;
    for (failure, port) in failures {
        for (location, options) in locations(port) {
            let what = format!("{failure}, {location}");
            checked += through_the_c_api(&location, &options, &what);
            match open_store(
                &location,
                AccessMode::Read,
                Some(&options),
                Consolidated::Use,
            ) {
                Err(e) => {
                    check(&e.to_string(), &what);
                    check(&format!("{e:?}"), &what);
                    checked += 1;
                }
                Ok(store) => {
                    check(&format!("{store:?}"), &format!("{what}: Debug"));
                    check(store.location(), &format!("{what}: location"));
                    let e = Array::open(store, "a").unwrap_err();
                    check(&e.to_string(), &what);
                    checked += 1;
                }
            }
        }
    }
    // Every location failed at every failure kind, through both APIs.
    assert_eq!(checked, 3 * 4 * 2);
}
