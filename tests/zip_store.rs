//! Zip stores through the engine: arrays written into a new zip and read back, corrupt and
//! hostile archives refused with errors, existing archives appended to.

use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use zarr::{Array, Error, Group, OpenMode, StoreHandle};

fn temp_zip(tag: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("libzarr-zip-test-{tag}-{}.zip", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn open(path: &std::path::Path, mode: OpenMode) -> zarr::Result<std::sync::Arc<StoreHandle>> {
    StoreHandle::open(path.to_str().unwrap(), mode)
}

/// Writes a zip whose members are stored, with the given names and contents.
fn write_zip(path: &std::path::Path, members: &[(&str, &[u8])]) {
    let file = std::fs::File::create(path).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    for (name, data) in members {
        zip.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(data).unwrap();
    }
    zip.finish().unwrap();
}

#[test]
fn arrays_written_into_a_new_zip_read_back_read_only() {
    let path = temp_zip("roundtrip");
    let data: Vec<u8> = (0..30u16).flat_map(|v| v.to_le_bytes()).collect();
    {
        let store = open(&path, OpenMode::Write).unwrap();
        Group::create(store.clone(), "g").unwrap();
        let meta = json!({"shape": [5, 6], "chunks": [2, 4], "dtype": "<u2",
                          "compressor": {"id": "zlib", "level": 1}, "fill_value": 7});
        let a = Array::create(store.clone(), "g/a", &meta.to_string()).unwrap();
        a.write_region(&[0, 0], &[5, 6], &data).unwrap();
        let mut back = vec![0u8; data.len()];
        a.read_region(&[0, 0], &[5, 6], &mut back).unwrap();
        assert_eq!(back, data);
        store.close().unwrap();
    }
    let store = open(&path, OpenMode::Read).unwrap();
    let a = Array::open(store.clone(), "g/a").unwrap();
    let mut back = vec![0u8; data.len()];
    a.read_region(&[0, 0], &[5, 6], &mut back).unwrap();
    assert_eq!(back, data);
    assert!(Group::open(store.clone(), "g").is_ok());
    assert!(matches!(
        a.write_region(&[0, 0], &[1, 1], &[0, 0]),
        Err(Error::ReadOnly(_))
    ));
    assert!(matches!(store.set("x", b"1"), Err(Error::ReadOnly(_))));
    assert!(matches!(store.erase("g/.zgroup"), Err(Error::ReadOnly(_))));
    assert!(matches!(
        Group::create(store.clone(), "h"),
        Err(Error::ReadOnly(_))
    ));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn changes_after_close_are_written_when_the_store_goes_away() {
    let path = temp_zip("late");
    let store = open(&path, OpenMode::Write).unwrap();
    store.set("a", b"1").unwrap();
    store.close().unwrap();
    store.set("b", b"2").unwrap();
    drop(store);
    let store = open(&path, OpenMode::Read).unwrap();
    assert_eq!(store.list_dir("").unwrap(), vec!["a", "b"]);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn arrays_appended_to_an_existing_zip_read_back_with_the_old_keys() {
    let path = temp_zip("existing");
    write_zip(&path, &[(".zgroup", b"{\"zarr_format\": 2}")]);
    {
        let store = open(&path, OpenMode::Write).unwrap();
        let meta = json!({"shape": [4], "chunks": [2], "dtype": "<u1", "fill_value": 0});
        let a = Array::create(store.clone(), "a", &meta.to_string()).unwrap();
        a.write_region(&[0], &[4], &[1, 2, 3, 4]).unwrap();
        // A chunk rewritten with the fill value only is erased: left out of the directory.
        a.write_region(&[2], &[2], &[0, 0]).unwrap();
        store.close().unwrap();
    }
    let store = open(&path, OpenMode::Read).unwrap();
    assert_eq!(
        store.list_prefix("").unwrap(),
        vec![".zgroup", "a/.zarray", "a/0"]
    );
    let mut back = [9u8; 4];
    Array::open(store.clone(), "a")
        .unwrap()
        .read_region(&[0], &[4], &mut back)
        .unwrap();
    assert_eq!(back, [1, 2, 0, 0]);
    assert!(Group::open(store, "").is_ok());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn corrupt_and_truncated_archives_are_errors() {
    let path = temp_zip("corrupt");
    assert!(matches!(
        open(&path, OpenMode::Read),
        Err(Error::NotFound(_))
    ));
    std::fs::write(&path, b"not a zip at all").unwrap();
    assert!(open(&path, OpenMode::Read).is_err());
    std::fs::write(&path, b"").unwrap();
    assert!(open(&path, OpenMode::Read).is_err());

    let chunk = vec![9u8; 4000];
    write_zip(&path, &[("a/.zarray", b"{}"), ("a/0", &chunk)]);
    let whole = std::fs::read(&path).unwrap();
    for cut in [whole.len() - 1, whole.len() - 30, whole.len() / 2, 10, 0] {
        std::fs::write(&path, &whole[..cut]).unwrap();
        assert!(open(&path, OpenMode::Read).is_err(), "cut at {cut}");
    }
    // Flipped bytes inside a member's data fail its CRC check.
    let mut flipped = whole.clone();
    let at = whole.windows(4).position(|w| w == [9, 9, 9, 9]).unwrap() + 100;
    flipped[at] = 1;
    std::fs::write(&path, &flipped).unwrap();
    let store = open(&path, OpenMode::Read).unwrap();
    assert!(matches!(store.get("a/0"), Err(Error::CorruptChunk(_))));
    // Every single-byte corruption is an error or a value, never a panic.
    for at in (0..whole.len()).step_by(7) {
        let mut bad = whole.clone();
        bad[at] ^= 0x5a;
        std::fs::write(&path, &bad).unwrap();
        if let Ok(store) = open(&path, OpenMode::Read) {
            for key in store.list_prefix("").unwrap() {
                let _ = store.get(&key);
            }
        }
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn member_names_that_escape_are_refused() {
    let path = temp_zip("traversal");
    for bad in ["../evil", "a/../../evil", "/etc/passwd", "a//b", "./a"] {
        write_zip(&path, &[(".zgroup", b"{}"), (bad, b"x")]);
        let err = open(&path, OpenMode::Read).unwrap_err();
        assert!(matches!(err, Error::InvalidPath(_)), "{bad}: {err}");
    }
    // Directory entries are skipped.
    let file = std::fs::File::create(&path).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default();
    zip.add_directory("g/", options).unwrap();
    zip.start_file("g/.zgroup", options).unwrap();
    zip.write_all(b"{\"zarr_format\": 2}").unwrap();
    zip.finish().unwrap();
    let store = open(&path, OpenMode::Read).unwrap();
    assert_eq!(store.list_prefix("").unwrap(), vec!["g/.zgroup"]);
    assert!(Group::open(store, "g").is_ok());
    std::fs::remove_file(&path).unwrap();
}
