//! Answers that used to be silently wrong (issue #11): each is now read right or refused with
//! an error naming what is wrong.

use zarr::{parallel, Array, Error, OpenMode, StoreHandle};

fn tempdir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("libzarr-silent-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn values(n: usize) -> Vec<u8> {
    (0..n as i32)
        .flat_map(|v| (v * 3 - 50).to_ne_bytes())
        .collect()
}

/// zarr-python 2's `NestedDirectoryStore` before 2.8 put chunks under `0/0` and wrote no
/// `dimension_separator`: they read as all fill value until the layout was looked at.
#[test]
fn nested_chunks_without_a_dimension_separator_read_right() {
    for separator in [".", "/"] {
        let dir = tempdir(if separator == "." { "flat" } else { "nested" });
        let location = dir.to_str().unwrap();
        let store = StoreHandle::open(location, OpenMode::Write).unwrap();
        let document = format!(
            r#"{{"shape": [6, 4], "chunks": [4, 3], "dtype": "<i4", "fill_value": 7,
                 "compressor": {{"id": "zlib", "level": 1}}, "dimension_separator": "{separator}"}}"#
        );
        let array = Array::create(store.clone(), "a", &document).unwrap();
        array.write_region(&[0, 0], &[6, 4], &values(24)).unwrap();
        drop(array);
        // The old layout: the same .zarray without the key.
        let zarray = dir.join("a/.zarray");
        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&zarray).unwrap()).unwrap();
        doc.as_object_mut().unwrap().remove("dimension_separator");
        std::fs::write(&zarray, serde_json::to_vec(&doc).unwrap()).unwrap();

        let store = StoreHandle::open(location, OpenMode::Write).unwrap();
        let array = Array::open(store.clone(), "a").unwrap();
        let mut got = vec![0u8; 24 * 4];
        array.read_region(&[0, 0], &[6, 4], &mut got).unwrap();
        assert_eq!(got, values(24), "separator {separator:?}");
        // Writes keep to the layout found.
        array.write_region(&[5, 3], &[1, 1], &[1, 0, 0, 0]).unwrap();
        let chunk = if separator == "." { "a/1.1" } else { "a/1/1" };
        assert!(dir.join(chunk).is_file(), "{chunk} was not written");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A misspelled key used to be ignored, leaving its setting at the default.
#[test]
fn creating_with_an_unknown_key_is_an_error_naming_it() {
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    for (document, key) in [
        (
            r#"{"shape": [4], "chunks": [2], "dtype": "<i4", "fill_vaule": 3}"#,
            "fill_vaule",
        ),
        (
            r#"{"shape": [4], "chunks": [2], "dtype": "<i4", "compresor": {"id": "zlib"}}"#,
            "compresor",
        ),
        (
            r#"{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                "fill_vaule": 3}"#,
            "fill_vaule",
        ),
    ] {
        match Array::create(store.clone(), "a", document) {
            Err(Error::InvalidMetadata(m)) | Err(Error::Unsupported(m)) => {
                assert!(m.contains(key), "{m}")
            }
            other => panic!("{key}: {other:?}"),
        }
    }
}

/// `ZARR_NUM_THREADS=abc` used to be ignored. Checked in a process of its own (this test
/// binary run again), as the variable is read once per process.
#[test]
fn a_bad_thread_count_in_the_environment_is_reported() {
    if std::env::var("LIBZARR_TEST_BAD_THREADS").is_ok() {
        for attempt in [
            parallel::num_threads().map(drop),
            parallel::set_num_threads(0),
        ] {
            match attempt {
                Err(Error::InvalidArgument(m)) => {
                    assert!(m.contains("ZARR_NUM_THREADS") && m.contains("abc"), "{m}")
                }
                other => panic!("{other:?}"),
            }
        }
        parallel::set_num_threads(2).unwrap();
        assert_eq!(parallel::num_threads().unwrap(), 2);
        return;
    }
    let test = "a_bad_thread_count_in_the_environment_is_reported";
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture"])
        .env("LIBZARR_TEST_BAD_THREADS", "1")
        .env("ZARR_NUM_THREADS", "abc")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && text.contains("1 passed"),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
