//! zarr-extensions' `zfp` codec against zarrs: libzarr reads the arrays zarrs 0.23.14 wrote
//! (`tests/fixtures/zarrs-zfp/arrays`: every integer type, promoted or not, float32, lossy
//! modes, sharded) value for value, fill values included, and writing the same values under
//! the same metadata stores the same chunk files, except where zarrs departs from zfp (its
//! fixed rate is always set as for 3-D fields; see the fixtures' README).

use serde_json::Value;
mod common;

use common::chunk_files;
use std::path::{Path, PathBuf};
use zarr::{Array, Error, OpenMode, StoreHandle};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/zarrs-zfp/arrays")
}

fn manifest() -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(fixtures().join("manifest.json")).unwrap();
    let doc: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    doc.into_iter().collect()
}

/// The manifest's numbers (`key`: "values" or "written") as native elements of `data_type`.
fn elements(entry: &Value, key: &str) -> Vec<u8> {
    let data_type = entry["data_type"].as_str().unwrap();
    entry[key]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|v| {
            let (i, u, f) = (v.as_i64(), v.as_u64(), v.as_f64());
            match data_type {
                "int8" => vec![i.unwrap() as i8 as u8],
                "uint8" => vec![u.unwrap() as u8],
                "int16" => (i.unwrap() as i16).to_ne_bytes().to_vec(),
                "uint16" => (u.unwrap() as u16).to_ne_bytes().to_vec(),
                "int32" => (i.unwrap() as i32).to_ne_bytes().to_vec(),
                "uint32" => (u.unwrap() as u32).to_ne_bytes().to_vec(),
                "uint64" => u.unwrap().to_ne_bytes().to_vec(),
                "float32" => (f.unwrap() as f32).to_ne_bytes().to_vec(),
                other => panic!("no fixture of {other}"),
            }
        })
        .collect()
}

fn read_all(array: &Array) -> Vec<u8> {
    let shape = array.shape();
    let mut out = vec![0xa5; array.item_size() * shape.iter().product::<u64>() as usize];
    array
        .read_region(&vec![0; shape.len()], &shape, &mut out)
        .unwrap();
    out
}

#[test]
fn reads_what_zarrs_wrote() {
    let store = StoreHandle::open(fixtures().to_str().unwrap(), OpenMode::Read).unwrap();
    let list = manifest();
    assert_eq!(list.len(), 11);
    for (name, entry) in list {
        let array = Array::open(store.clone(), &name).unwrap();
        let values = elements(&entry, "values");
        assert_eq!(read_all(&array), values, "{name}");
        // The last element alone (an edge chunk's, or the unwritten chunk's fill value).
        let shape = array.shape();
        let size = array.item_size();
        let last: Vec<u64> = shape.iter().map(|&n| n - 1).collect();
        let mut one = vec![0; size];
        array
            .read_region(&last, &vec![1; shape.len()], &mut one)
            .unwrap();
        assert_eq!(one, values[values.len() - size..], "{name}: last element");
    }
}

#[test]
fn writes_what_zarrs_writes() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("zarrs-zfp");
    let _ = std::fs::remove_dir_all(&out);
    let store = StoreHandle::open(out.to_str().unwrap(), OpenMode::Write).unwrap();
    for (name, entry) in manifest() {
        let document = std::fs::read_to_string(fixtures().join(&name).join("zarr.json")).unwrap();
        let array = Array::create(store.clone(), &name, &document).unwrap();
        let shape = array.shape();
        // The unwritten chunk holds the fill value: writing it stores nothing.
        array
            .write_region(&vec![0; shape.len()], &shape, &elements(&entry, "written"))
            .unwrap();
        if name != "int16_fixed_rate" {
            assert_eq!(read_all(&array), elements(&entry, "values"), "{name}");
        }
        let (ours, theirs) = (
            chunk_files(&out.join(&name)),
            chunk_files(&fixtures().join(&name)),
        );
        if name == "int16_fixed_rate" {
            // zarrs sizes 1-D blocks of rate 8 as 3-D ones: 512 bits where zfp's rate means
            // 32, so its chunks are 64 bytes and libzarr's 8 (read above either way).
            let sizes = |files: &[(PathBuf, Vec<u8>)]| {
                files.iter().map(|(_, b)| b.len()).collect::<Vec<_>>()
            };
            assert_eq!(sizes(&ours), [8; 4], "{name}");
            assert_eq!(sizes(&theirs), [64; 4], "{name}");
            // 8 bits a value keep int16s to within a few hundredths of their range.
            let int16 = |b: Vec<u8>| -> Vec<i32> {
                b.chunks(2)
                    .map(|c| i32::from(i16::from_ne_bytes([c[0], c[1]])))
                    .collect()
            };
            let (back, written) = (int16(read_all(&array)), int16(elements(&entry, "written")));
            for (b, w) in back.iter().zip(&written) {
                assert!((b - w).abs() < 256, "{name}: {b} for {w}");
            }
        } else {
            assert_eq!(ours, theirs, "{name}");
        }
    }
}

#[test]
fn values_zfp_cannot_hold_are_refused_naming_them() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("zarrs-zfp-refused");
    let _ = std::fs::remove_dir_all(&out);
    let store = StoreHandle::open(out.to_str().unwrap(), OpenMode::Write).unwrap();
    let document = std::fs::read_to_string(fixtures().join("uint32/zarr.json")).unwrap();
    let array = Array::create(store.clone(), "uint32", &document).unwrap();
    match array.write_region(&[0], &[1], &u32::MAX.to_ne_bytes()) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("4294967295"), "{m}"),
        other => panic!("{other:?}"),
    }
}
