//! Object arrays through the engine: vlen-utf8, vlen-bytes and vlen-array items in the
//! Arrow-style layout (offsets + one data buffer), fill values, partial writes and bad input.

use serde_json::json;
use zarr::{Array, Error, OpenMode, StoreHandle};

fn array(filter: serde_json::Value, fill: serde_json::Value) -> Array {
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    let meta = json!({"shape": [7], "chunks": [3], "dtype": "|O", "filters": [filter], "fill_value": fill});
    Array::create(store, "a", &meta.to_string()).unwrap()
}

/// Offsets and data for a list of items.
fn pack(items: &[&[u8]]) -> (Vec<i64>, Vec<u8>) {
    let mut offsets = vec![0i64];
    for item in items {
        offsets.push(offsets[offsets.len() - 1] + item.len() as i64);
    }
    (offsets, items.concat())
}

fn read_all(a: &Array) -> Vec<Vec<u8>> {
    let size = a.vlen_size(&[0], &[7]).unwrap() as usize;
    let (mut offsets, mut data) = (vec![0i64; 8], vec![0u8; size]);
    a.read_vlen(&[0], &[7], &mut offsets, &mut data).unwrap();
    (0..7)
        .map(|i| data[offsets[i] as usize..offsets[i + 1] as usize].to_vec())
        .collect()
}

#[test]
fn text_and_bytes_round_trip_with_fill_values() {
    for (filter, fill, fill_item) in [
        (json!({"id": "vlen-utf8"}), json!("-"), b"-".to_vec()),
        (json!({"id": "vlen-utf8"}), json!(0), b"0".to_vec()),
        (json!({"id": "vlen-bytes"}), json!(null), Vec::new()),
    ] {
        let a = array(filter, fill);
        let items: [&[u8]; 4] = ["héllo".as_bytes(), b"", "𝄞".as_bytes(), b"longer text"];
        let (offsets, data) = pack(&items);
        a.write_vlen(&[2], &[4], &offsets, &data).unwrap();
        let got = read_all(&a);
        let mut expected = vec![fill_item.clone(); 7];
        expected[2..6]
            .iter_mut()
            .zip(items)
            .for_each(|(e, i)| *e = i.to_vec());
        assert_eq!(got, expected);
        // Overwrite one item inside a chunk: its neighbours keep their values.
        let (offsets, data) = pack(&[b"x"]);
        a.write_vlen(&[3], &[1], &offsets, &data).unwrap();
        expected[3] = b"x".to_vec();
        assert_eq!(read_all(&a), expected);
    }
}

#[test]
fn arrays_hold_native_elements_whatever_the_stored_order() {
    let a = array(json!({"id": "vlen-array", "dtype": ">i4"}), json!(null));
    let first: Vec<u8> = [1i32, -2, 3].iter().flat_map(|v| v.to_ne_bytes()).collect();
    let (offsets, data) = pack(&[&first, &[]]);
    a.write_vlen(&[0], &[2], &offsets, &data).unwrap();
    let got = read_all(&a);
    assert_eq!(got[0], first);
    assert!(got[1].is_empty());
    assert_eq!(
        a.object_codec().unwrap().config(),
        json!({"id": "vlen-array", "dtype": ">i4"})
    );
}

#[test]
fn refuses_bad_items_and_buffers() {
    let a = array(json!({"id": "vlen-utf8"}), json!(""));
    let bad_utf8 = a
        .write_vlen(&[0], &[1], &[0, 2], &[0xff, 0xfe])
        .unwrap_err();
    assert!(matches!(bad_utf8, Error::InvalidArgument(_)), "{bad_utf8}");
    assert!(a.write_vlen(&[0], &[2], &[0, 3, 1], b"abc").is_err());
    assert!(a.write_vlen(&[0], &[1], &[0, 9], b"abc").is_err());
    assert!(a.write_vlen(&[0], &[2], &[0, 1], b"abc").is_err());
    let (mut offsets, mut data) = (vec![0i64; 2], vec![0u8; 0]);
    a.write_vlen(&[0], &[1], &[0, 3], b"abc").unwrap();
    assert!(matches!(
        a.read_vlen(&[0], &[1], &mut offsets, &mut data),
        Err(Error::BufferSize(_))
    ));
    assert_eq!(offsets, vec![0, 0], "outputs untouched on failure");
    assert!(
        a.read_region(&[0], &[1], &mut [0u8; 0]).is_err(),
        "fixed-size calls refuse object arrays"
    );
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    let no_codec = json!({"shape": [2], "chunks": [2], "dtype": "|O"}).to_string();
    assert!(matches!(
        Array::create(store, "b", &no_codec),
        Err(Error::InvalidMetadata(_))
    ));
}

#[test]
fn corrupt_object_chunks_are_errors() {
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    let meta =
        json!({"shape": [3], "chunks": [3], "dtype": "|O", "filters": [{"id": "vlen-utf8"}]});
    let a = Array::create(store.clone(), "c", &meta.to_string()).unwrap();
    for bad in [
        &b"\x03\x00\x00\x00\xff\xff\xff\x7f"[..],
        b"\x02\x00\x00\x00",
        b"",
    ] {
        store.set("c/0", bad).unwrap();
        let err = a.vlen_size(&[0], &[3]).unwrap_err();
        assert!(
            matches!(err, Error::CorruptChunk(_)) && err.to_string().contains("c/0"),
            "{err}"
        );
    }
}

/// Reads every item a selection picks.
fn read_selected(a: &Array, selection: &zarr::selection::Selection) -> Vec<Vec<u8>> {
    let (n, size) = a.vlen_selection_size(selection).unwrap();
    let (mut offsets, mut data) = (vec![0i64; n as usize + 1], vec![0u8; size as usize]);
    a.read_vlen_selection(selection, &mut offsets, &mut data)
        .unwrap();
    (0..n as usize)
        .map(|i| data[offsets[i] as usize..offsets[i + 1] as usize].to_vec())
        .collect()
}

#[test]
fn every_selection_kind_on_plain_and_sharded_string_arrays() {
    use zarr::selection::{DimSelection, Selection};
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    let plain = json!({"zarr_format": 3, "node_type": "array", "shape": [6, 4], "data_type": "string",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 3]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "",
        "codecs": [{"name": "vlen-utf8"}]});
    let mut sharded = plain.clone();
    sharded["codecs"] = json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 3], "codecs": [{"name": "vlen-utf8"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]);
    for (path, meta) in [("plain", plain), ("sharded", sharded)] {
        let a = Array::create(store.clone(), path, &meta.to_string()).unwrap();
        let texts: Vec<String> = (0..24).map(|k| format!("{k}é")).collect();
        let items: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
        let (offsets, data) = pack(&items);
        a.write_vlen(&[0, 0], &[6, 4], &offsets, &data).unwrap();
        let item = |i: usize, j: usize| texts[i * 4 + j].as_bytes().to_vec();
        let orth = Selection::Orthogonal(vec![
            DimSelection::Indices(vec![5, 0, 5]),
            DimSelection::Range {
                start: 1,
                count: 2,
                step: 2,
            },
        ]);
        assert_eq!(
            read_selected(&a, &orth),
            [
                item(5, 1),
                item(5, 3),
                item(0, 1),
                item(0, 3),
                item(5, 1),
                item(5, 3)
            ],
            "{path}"
        );
        let coords = [3, 3, 0, 0, 3, 3];
        let points = Selection::Points {
            npoints: 3,
            coords: &coords,
        };
        assert_eq!(
            read_selected(&a, &points),
            [item(3, 3), item(0, 0), item(3, 3)],
            "{path}"
        );
        let mut mask = vec![0u8; 24];
        mask[7] = 1;
        mask[22] = 1;
        assert_eq!(
            read_selected(&a, &Selection::Mask(&mask)),
            [item(1, 3), item(5, 2)]
        );
        // Points written (the last of a repeat wins), the other items of their chunks kept.
        let wcoords = [4, 1, 1, 2, 4, 1];
        let (offsets, data) = pack(&[b"x", b"yy", b"zzz"]);
        let wpoints = Selection::Points {
            npoints: 3,
            coords: &wcoords,
        };
        a.write_vlen_selection(&wpoints, &offsets, &data).unwrap();
        let all = read_all_2d(&a);
        for (k, got) in all.iter().enumerate() {
            let want = match k {
                17 => b"zzz".to_vec(),
                6 => b"yy".to_vec(),
                _ => texts[k].as_bytes().to_vec(),
            };
            assert_eq!(*got, want, "{path} item {k}");
        }
        assert!(matches!(
            a.read_vlen_selection(&Selection::Mask(&mask[..5]), &mut [0; 3], &mut []),
            Err(Error::BufferSize(_))
        ));
    }
}

fn read_all_2d(a: &Array) -> Vec<Vec<u8>> {
    read_selected(
        a,
        &zarr::selection::Selection::Orthogonal(
            zarr::array::box_selection(&[0, 0], &[6, 4], None).unwrap(),
        ),
    )
}
