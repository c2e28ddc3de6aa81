//! The data types beyond plain numbers, through the engine: byte strings, UTF-32 text,
//! datetimes, raw bytes and records (nested, with sub-arrays, mixed byte order), including
//! fill values for missing chunks and reads and writes of selected fields.

use serde_json::json;
use zarr::{Array, OpenMode, StoreHandle};

fn array(meta: serde_json::Value) -> Array {
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    Array::create(store, "a", &meta.to_string()).unwrap()
}

fn utf32(text: &str, chars: usize) -> Vec<u8> {
    let mut units: Vec<u8> = text
        .chars()
        .flat_map(|c| (c as u32).to_ne_bytes())
        .collect();
    units.resize(chars * 4, 0);
    units
}

#[test]
fn text_types_round_trip_with_fill_values() {
    for (dtype, fill, value, fill_bytes) in [
        ("|S4", json!("YWI="), b"wxyz".to_vec(), b"ab\0\0".to_vec()),
        (">U3", json!("hé"), utf32("€ab", 3), utf32("hé", 3)),
        ("<U2", json!(""), utf32("x", 2), utf32("", 2)),
        ("|V2", json!("AAE="), vec![7, 9], vec![0, 1]),
    ] {
        let a = array(json!({"shape": [5], "chunks": [2], "dtype": dtype, "fill_value": fill}));
        a.write_region(&[1], &[1], &value).unwrap();
        let mut out = vec![0u8; 3 * value.len()];
        a.read_region(&[0], &[3], &mut out).unwrap();
        assert_eq!(
            out,
            [fill_bytes.clone(), value.clone(), fill_bytes].concat(),
            "{dtype}"
        );
    }
}

#[test]
fn datetimes_are_native_int64_counts() {
    let a = array(json!({"shape": [4], "chunks": [2], "dtype": ">M8[10s]", "fill_value": "NaT"}));
    a.write_region(&[0], &[1], &1234i64.to_ne_bytes()).unwrap();
    let mut out = vec![0u8; 32];
    a.read_region(&[0], &[4], &mut out).unwrap();
    let values: Vec<i64> = out
        .chunks(8)
        .map(|b| i64::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(values, vec![1234, i64::MIN, i64::MIN, i64::MIN]);
    assert_eq!(a.metadata_json().unwrap()["fill_value"], json!(i64::MIN));
}

/// A record `{a: >i2, z: <f4[2], inner: {s: |S2, b: >u4}}`: 16 bytes.
fn record(a: i16, z: [f32; 2], s: &[u8; 2], b: u32) -> Vec<u8> {
    [
        &a.to_ne_bytes()[..],
        &z[0].to_ne_bytes(),
        &z[1].to_ne_bytes(),
        s,
        &b.to_ne_bytes(),
    ]
    .concat()
}

#[test]
fn records_round_trip_and_select_fields() {
    let dtype = json!([
        ["a", ">i2"],
        ["z", "<f4", [2]],
        ["inner", [["s", "|S2"], ["b", ">u4"]]]
    ]);
    let fill = {
        // The fill value as stored: a = 1 (big endian), z = 0, s = "ok", b = 2 (big endian).
        use base64::Engine;
        let stored = [&[0u8, 1][..], &[0; 8], b"ok", &[0, 0, 0, 2]].concat();
        base64::engine::general_purpose::STANDARD.encode(stored)
    };
    let a = array(json!({"shape": [6], "chunks": [4], "dtype": dtype, "fill_value": fill}));
    assert_eq!(a.item_size(), 16);
    let written = [
        record(-3, [1.5, -2.0], b"hi", 70000),
        record(7, [0.25, 8.0], b"yo", 5),
    ]
    .concat();
    a.write_region(&[3], &[2], &written).unwrap();
    let mut out = vec![0u8; 6 * 16];
    a.read_region(&[0], &[6], &mut out).unwrap();
    let fill_record = record(1, [0.0, 0.0], b"ok", 2);
    let expected = [fill_record.repeat(3), written.clone(), fill_record.clone()].concat();
    assert_eq!(out, expected);

    // Fields "inner" then "a", packed: 6 + 2 bytes per element.
    let mut picked = vec![0u8; 2 * 8];
    a.read_fields(&[3], &[2], &["inner", "a"], &mut picked)
        .unwrap();
    assert_eq!(
        picked,
        [
            &written[10..16],
            &written[0..2],
            &written[26..32],
            &written[16..18]
        ]
        .concat()
    );

    // Writing one field keeps the others.
    a.write_fields(&[4], &[1], &["a"], &99i16.to_ne_bytes())
        .unwrap();
    let mut one = vec![0u8; 16];
    a.read_region(&[4], &[1], &mut one).unwrap();
    assert_eq!(one, record(99, [0.25, 8.0], b"yo", 5));
    assert!(a.read_fields(&[0], &[1], &["nope"], &mut [0u8; 2]).is_err());
    assert!(a.read_fields(&[0], &[1], &["a"], &mut [0u8; 3]).is_err());
}

/// Selection errors name the array they concern.
#[test]
fn selection_errors_name_the_array() {
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    let meta = json!({"shape": [4], "chunks": [2], "dtype": "<i4"}).to_string();
    let a = Array::create(store, "sensors/temperature", &meta).unwrap();
    let errors = [
        a.read_region(&[3], &[2], &mut [0u8; 8]).unwrap_err(),
        a.write_region(&[0], &[1], &[0u8; 3]).unwrap_err(),
        a.read_points(1, &[9], &mut [0u8; 4]).unwrap_err(),
        a.vlen_size(&[0], &[1]).unwrap_err(),
    ];
    for err in errors {
        assert!(err.to_string().contains("sensors/temperature"), "{err}");
    }
}
