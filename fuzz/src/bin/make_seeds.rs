//! Writes the seed corpora into `fuzz/corpus/<target>/` (committed): for `chunk_decode` a
//! chunk libzarr wrote through each array of `libzarr_fuzz::CODECS`; for `shard` a shard
//! written through each configuration of `libzarr_fuzz::SHARDS`; for `metadata` valid
//! documents of each kind; for `store_image` packed stores: the repository's fixture stores
//! and small v2 and v3 hierarchies libzarr writes; for `zip_archive` those stores as zip
//! stores libzarr writes; for the structured targets (`selection`, `c_api`, `key_path`) a few
//! byte patterns. Files it does not write are left alone: `fuzz/seeds/python_seeds.py` adds
//! stores zarr-python writes.
//!
//!     cargo run --release --manifest-path fuzz/Cargo.toml --bin make_seeds

use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarr::{consolidated, Array, Group, OpenMode, StoreHandle};

fn main() {
    let fuzz = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let corpus = |target: &str| {
        let dir = fuzz.join("corpus").join(target);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    };
    let dir = corpus("chunk_decode");
    for i in 0..libzarr_fuzz::CODECS.len() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let array = Array::create(store.clone(), "a", &libzarr_fuzz::codec_document(i)).unwrap();
        fill(&array);
        let chunk = store
            .get(&format!("a/{}", libzarr_fuzz::CODECS[i].1))
            .unwrap();
        let seed = [&[i as u8][..], &chunk.expect("a chunk written")].concat();
        std::fs::write(dir.join(format!("codec-{i:02}")), seed).unwrap();
    }

    let dir = corpus("shard");
    for i in 0..libzarr_fuzz::SHARDS.len() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let array = Array::create(store.clone(), "a", &libzarr_fuzz::shard_document(i)).unwrap();
        fill(&array);
        // Inner chunks of the fill value are left out of the shard: empty index entries.
        if array.object_codec().is_none() {
            let fill = array.fill_native().repeat(16 * 4);
            array.write_region(&[4, 0], &[4, 16], &fill).unwrap();
        }
        let shard = store.get("a/c/0/0").unwrap().expect("a shard written");
        // The pick byte, then two boxes: one inner chunk's corner, and a middle band.
        let head = [i as u8, 0, 0, 0, 0, 3, 2, 6, 9];
        let seed = [&head[..], &shard].concat();
        std::fs::write(dir.join(format!("shard-{i:02}")), seed).unwrap();
    }

    for (target, patterns) in [("selection", 4u8), ("c_api", 4), ("key_path", 2)] {
        let dir = corpus(target);
        for p in 0..patterns {
            let seed: Vec<u8> = (0..256u32)
                .map(|k| (k * (2 * p as u32 + 1) + 7 * p as u32) as u8)
                .collect();
            std::fs::write(dir.join(format!("pattern-{p}")), seed).unwrap();
        }
    }

    let dir = corpus("metadata");
    let hierarchy = hierarchy();
    let doc = |key: &str| hierarchy.get(key).unwrap().expect(key);
    for (pick, key) in [
        (0, "v2/a/.zarray"),
        (1, "v3/a/zarr.json"),
        (1, "v3/s/zarr.json"),
        (2, "v2/.zgroup"),
        (3, "v2/a/.zattrs"),
        (4, "v2/.zmetadata"),
        (5, "v3/zarr.json"),
    ] {
        let seed = [&[pick][..], &doc(key)].concat();
        std::fs::write(dir.join(key.replace('/', "_")), seed).unwrap();
    }

    let dir = corpus("store_image");
    for (name, prefix) in [("v2", "v2/"), ("v3", "v3/")] {
        let keys = hierarchy.list_prefix(prefix).unwrap();
        let values: Vec<(String, Vec<u8>)> = keys
            .iter()
            .map(|k| {
                (
                    k[prefix.len()..].to_string(),
                    hierarchy.get(k).unwrap().unwrap(),
                )
            })
            .collect();
        let packed = libzarr_fuzz::pack(values.iter().map(|(k, v)| (k.as_str(), v.as_slice())));
        std::fs::write(dir.join(name), packed).unwrap();
    }
    let zips = corpus("zip_archive");
    let scratch = std::env::temp_dir().join(format!("libzarr-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    for (name, prefix) in [("v2", "v2/"), ("v3", "v3/")] {
        let path = scratch.join(format!("{name}.zip"));
        let zip = StoreHandle::open(path.to_str().unwrap(), OpenMode::Write).unwrap();
        for key in hierarchy.list_prefix(prefix).unwrap() {
            zip.set(&key[prefix.len()..], &hierarchy.get(&key).unwrap().unwrap())
                .unwrap();
        }
        zip.close().unwrap();
        drop(zip);
        std::fs::copy(&path, zips.join(format!("libzarr-{name}.zip"))).unwrap();
    }
    std::fs::remove_dir_all(&scratch).unwrap();
    let dir = corpus("store_image");
    let fixtures = fuzz.join("../tests/fixtures");
    for store in stores_below(&fixtures) {
        let mut members = Vec::new();
        files(&store, &store, &mut members);
        let packed = libzarr_fuzz::pack(members.iter().map(|(k, v)| (k.as_str(), v.as_slice())));
        let name = store
            .strip_prefix(&fixtures)
            .unwrap()
            .to_string_lossy()
            .replace('/', "_");
        std::fs::write(dir.join(&name), packed).unwrap();
        // The same store as a zip libzarr writes.
        let path = std::env::temp_dir().join(format!("libzarr-seed-{}.zip", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let zip = StoreHandle::open(path.to_str().unwrap(), OpenMode::Write).unwrap();
        for (key, value) in &members {
            zip.set(key, value).unwrap();
        }
        zip.close().unwrap();
        drop(zip);
        std::fs::rename(&path, zips.join(format!("{name}.zip"))).unwrap();
    }
}

/// Writes values into every element of a 16 × 16 array.
fn fill(array: &Array) {
    let (start, count) = ([0, 0], [16, 16]);
    if array.object_codec().is_some() {
        // Pickle arrays take JSON: records of the fields x, o and n (a plain object array
        // holds the same text as a JSON object).
        let text: Vec<String> = (0..256)
            .map(|i| match array.json_items() {
                true => format!(r#"{{"x":{i},"o":["item",{i}],"n":[{i},-1]}}"#),
                false => format!("item {i}"),
            })
            .collect();
        let mut offsets = vec![0i64];
        for t in &text {
            offsets.push(offsets.last().unwrap() + t.len() as i64);
        }
        array
            .write_vlen(&start, &count, &offsets, text.concat().as_bytes())
            .unwrap();
        return;
    }
    let item = array.item_size();
    let data: Vec<u8> = match item {
        1 => (0..256).map(|i| (i % 3 == 0) as u8).collect(),
        8 => (0..256)
            .flat_map(|i| (i as f64 * 0.1).to_ne_bytes())
            .collect(),
        _ => (0..256i32)
            .flat_map(|i| (i * 37 % 1000).to_ne_bytes())
            .collect(),
    };
    array.write_region(&start, &count, &data).unwrap();
}

/// A v2 hierarchy under `v2/` and a v3 one under `v3/`, with consolidated metadata.
fn hierarchy() -> Arc<StoreHandle> {
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    Group::create(store.clone(), "v2").unwrap();
    let a = Array::create(
        store.clone(),
        "v2/a",
        r#"{"shape": [20, 12], "chunks": [8, 8], "dtype": "<f8", "fill_value": "NaN",
            "compressor": {"id": "zstd", "level": 1}, "order": "F"}"#,
    )
    .unwrap();
    let values: Vec<u8> = (0..240).flat_map(|i| (i as f64).to_ne_bytes()).collect();
    a.write_region(&[0, 0], &[20, 12], &values).unwrap();
    a.set_attributes(r#"{"units": "m", "scale": [1, 2]}"#)
        .unwrap();
    store
        .set(
            "v3/zarr.json",
            br#"{"zarr_format": 3, "node_type": "group", "attributes": {}}"#,
        )
        .unwrap();
    let b = Array::create(
        store.clone(),
        "v3/a",
        r#"{"zarr_format": 3, "node_type": "array", "shape": [20, 12], "data_type": "int16",
            "fill_value": -1, "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 8]}},
            "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip"}]}"#,
    )
    .unwrap();
    let shorts: Vec<u8> = (0..240i16).flat_map(|i| i.to_ne_bytes()).collect();
    b.write_region(&[0, 0], &[20, 12], &shorts).unwrap();
    let s = Array::create(
        store.clone(),
        "v3/s",
        r#"{"zarr_format": 3, "node_type": "array", "shape": [20, 12], "data_type": "int16",
            "fill_value": 0, "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 12]}},
            "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [5, 4],
                "codecs": [{"name": "bytes"}, {"name": "zstd"}]}}]}"#,
    )
    .unwrap();
    s.write_region(&[0, 0], &[20, 12], &shorts).unwrap();
    for root in ["v2", "v3"] {
        let sub = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        for key in store.list_prefix(&format!("{root}/")).unwrap() {
            sub.set(&key[root.len() + 1..], &store.get(&key).unwrap().unwrap())
                .unwrap();
        }
        consolidated::consolidate(&sub).unwrap();
        for key in [".zmetadata", "zarr.json"] {
            if let Some(v) = sub.get(key).unwrap() {
                store.set(&format!("{root}/{key}"), &v).unwrap();
            }
        }
    }
    store
}

/// The directories below `dir` that are stores (hold a `.zarray`, `.zgroup` or `zarr.json`).
fn stores_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if ["zarr.json", ".zarray", ".zgroup"]
            .iter()
            .any(|m| path.join(m).exists())
        {
            out.push(path);
        } else {
            out.extend(stores_below(&path));
        }
    }
    out.sort();
    out
}

/// Every file below `dir` as (key relative to `root`, bytes).
fn files(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(root, &path, out);
        } else {
            let key = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            out.push((key, std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
}
