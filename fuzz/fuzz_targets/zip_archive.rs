//! Arbitrary bytes as a `.zip` store opened read-only (the zip store reads from a file, so the
//! input is written to a temporary file in memory-backed `/dev/shm` when there is one): every
//! key listed, sized, read whole and in part, the listings of its directories, then the
//! hierarchy explored as a user would (consolidated metadata, tree, bounded array reads).
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarr::{OpenMode, StoreHandle};

/// At most this many keys are read, each of at most this many bytes.
const KEYS: usize = 64;
const VALUE_BYTES: u64 = 16 << 20;

fuzz_target!(|input: &[u8]| {
    let file = libzarr_fuzz::temp_file(".zip", input);
    let location = file.path().to_str().expect("a UTF-8 temporary path");
    let Ok(store) = StoreHandle::open(location, OpenMode::Read) else {
        return;
    };
    assert!(
        store.set("x", b"1").is_err(),
        "a read-only zip took a write"
    );
    let keys = store.list_prefix("").unwrap_or_default();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, keys, "a listing is sorted and without repeats");
    for key in keys.iter().take(KEYS) {
        assert!(zarr::path::validate_key(key).is_ok(), "listed key {key:?}");
        assert!(
            store.contains(key).unwrap_or(true),
            "{key:?} listed, absent"
        );
        let Ok(Some(len)) = store.value_len(key) else {
            continue;
        };
        if len > VALUE_BYTES {
            continue;
        }
        if let Ok(Some(value)) = store.get(key) {
            assert_eq!(value.len() as u64, len, "{key:?}: size and value disagree");
            if let Ok(Some(reader)) = store.open_value(key) {
                let mut tail = vec![0u8; value.len().min(7)];
                let at = len - tail.len() as u64;
                if reader.read_exact_at(at, &mut tail).is_ok() {
                    assert_eq!(&tail[..], &value[at as usize..], "{key:?}: a part read");
                }
            }
        }
        if let Some((dir, _)) = key.rsplit_once('/') {
            let _ = store.list_dir(&format!("{dir}/"));
        }
    }
    let _ = store.list_dir("");
    libzarr_fuzz::explore(&store);
});
