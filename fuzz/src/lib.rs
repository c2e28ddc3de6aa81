//! What the fuzz targets share: stores packed into one input, the codec configurations a
//! chunk is decoded with, and bounded reads of whatever arrays a store holds. Every call may
//! fail with an error; none may panic, hang or allocate without bound.

use std::sync::Arc;
use zarr::{consolidated, Array, Group, OpenMode, StoreHandle};

/// The separator of a packed store (as GDAL's fuzzers pack one): each member is this marker,
/// its key, a newline and its bytes.
pub const MEMBER: &[u8] = b"***NEWFILE***:";

/// At most this many bytes are read from one array.
const READ_BYTES: u64 = 1 << 20;

/// The largest (innermost) chunk an array may have for [`read_some`] to read it, in bytes.
const CHUNK_BYTES: u64 = 64 << 20;

/// A memory store holding the members of a packed store.
pub fn unpack(input: &[u8]) -> Arc<StoreHandle> {
    let store = StoreHandle::open("memory:", OpenMode::Write).expect("a memory store");
    for member in split(input) {
        let Some(newline) = member.iter().position(|&b| b == b'\n') else {
            continue;
        };
        if let Ok(key) = std::str::from_utf8(&member[..newline]) {
            // Keys the store refuses are part of the input, not a failure.
            let _ = store.set(key, &member[newline + 1..]);
        }
    }
    store
}

/// Packs `(key, value)` members into one input (for seeds).
pub fn pack<'a>(members: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, value) in members {
        out.extend_from_slice(MEMBER);
        out.extend_from_slice(key.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(value);
    }
    out
}

fn split(input: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = input;
    std::iter::from_fn(move || {
        let start = find(rest, MEMBER)? + MEMBER.len();
        let body = &rest[start..];
        let end = find(body, MEMBER).unwrap_or(body.len());
        rest = &body[end..];
        Some(&body[..end])
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Opens the store's hierarchy as a user would: its consolidated metadata, the tree of its
/// root, and every array a metadata key names, each read in part.
pub fn explore(store: &Arc<StoreHandle>) {
    let _ = consolidated::load(store);
    if let Ok(root) = Group::open(store.clone(), "") {
        let _ = root.members();
        let _ = root.attributes();
        if let Ok(tree) = zarr::tree::Tree::of_group(&root) {
            let _ = tree.to_json();
        }
    }
    let keys = store.list_prefix("").unwrap_or_default();
    for key in keys.iter().take(16) {
        let path = match key.rsplit_once('/') {
            Some((path, ".zarray" | "zarr.json")) => path,
            None if key == ".zarray" || key == "zarr.json" => "",
            _ => continue,
        };
        if let Ok(array) = Array::open(store.clone(), path) {
            read_some(&array);
        }
    }
}

/// Reads the first chunk's box (shrunk to at most [`READ_BYTES`]) and the last element.
pub fn read_some(array: &Array) {
    let _ = array.info();
    let _ = array.attributes();
    let shape = array.shape();
    if shape.contains(&0) {
        return;
    }
    let grid = array.chunk_grid();
    let first = grid.chunk_shape(&vec![0; shape.len()]);
    let mut count: Vec<u64> = shape.iter().zip(first).map(|(&s, c)| s.min(c)).collect();
    let item = array.item_size().max(1) as u64;
    // Any read decodes whole (innermost) chunks: valid metadata may declare chunks of any
    // size, which the fuzzer's memory limit cannot hold, so arrays of larger ones are skipped
    // (a rectilinear grid's largest chunk counts).
    let inner = array
        .inner_chunks()
        .unwrap_or_else(|| grid.max_chunk_shape());
    let chunk_bytes = inner.iter().try_fold(item, |n, &c| n.checked_mul(c));
    if chunk_bytes.is_none_or(|n| n > CHUNK_BYTES) {
        return;
    }
    while count.iter().product::<u64>().saturating_mul(item) > READ_BYTES {
        let largest = (0..count.len())
            .max_by_key(|&d| count[d])
            .expect("a dimension");
        count[largest] = count[largest].div_ceil(2);
    }
    let start = vec![0; shape.len()];
    read_box(array, &start, &count);
    let last: Vec<u64> = shape.iter().map(|&s| s - 1).collect();
    read_box(array, &last, &vec![1; shape.len()]);
}

fn read_box(array: &Array, start: &[u64], count: &[u64]) {
    if array.object_codec().is_some() {
        let Ok(bytes) = array.vlen_size(start, count) else {
            return;
        };
        if bytes > READ_BYTES {
            return;
        }
        let n = count.iter().product::<u64>() as usize;
        let (mut offsets, mut data) = (vec![0i64; n + 1], vec![0u8; bytes as usize]);
        let _ = array.read_vlen(start, count, &mut offsets, &mut data);
        return;
    }
    let n = count.iter().product::<u64>() * array.item_size() as u64;
    let mut out = vec![0u8; n as usize];
    let _ = array.read_region(start, count, &mut out);
}

/// The arrays a chunk is decoded through: each a metadata document of a 16 × 16 array in one
/// chunk, and that chunk's key. The first byte of a `chunk_decode` input picks one.
pub const CODECS: &[(&str, &str)] = &[
    (r#"{"compressor": {"id": "zlib", "level": 1}}"#, "0.0"),
    (r#"{"compressor": {"id": "gzip", "level": 1}}"#, "0.0"),
    (r#"{"compressor": {"id": "bz2", "level": 1}}"#, "0.0"),
    (r#"{"compressor": {"id": "lzma"}}"#, "0.0"),
    (r#"{"compressor": {"id": "zstd", "level": 1}}"#, "0.0"),
    (r#"{"compressor": {"id": "lz4"}}"#, "0.0"),
    (
        r#"{"compressor": {"id": "blosc", "cname": "lz4", "shuffle": 1}}"#,
        "0.0",
    ),
    (
        r#"{"compressor": {"id": "blosc", "cname": "blosclz", "shuffle": 2}}"#,
        "0.0",
    ),
    (
        r#"{"compressor": {"id": "blosc", "cname": "zstd", "shuffle": 0}}"#,
        "0.0",
    ),
    (
        r#"{"compressor": {"id": "blosc", "cname": "zlib", "shuffle": 1}}"#,
        "0.0",
    ),
    (
        r#"{"compressor": null, "filters": [{"id": "delta", "dtype": "<i4"}, {"id": "shuffle", "elementsize": 4}]}"#,
        "0.0",
    ),
    (
        r#"{"compressor": {"id": "zstd"}, "filters": [{"id": "fixedscaleoffset", "offset": 1, "scale": 10, "dtype": "<f8", "astype": "<i4"}], "dtype": "<f8"}"#,
        "0.0",
    ),
    (
        r#"{"compressor": null, "filters": [{"id": "vlen-utf8"}], "dtype": "|O"}"#,
        "0.0",
    ),
    (
        r#"{"compressor": {"id": "zlib"}, "filters": [{"id": "vlen-bytes"}], "dtype": "|O"}"#,
        "0.0",
    ),
    (
        r#"{"compressor": null, "filters": [{"id": "json2"}], "dtype": "|O"}"#,
        "0.0",
    ),
    (
        r#"{"compressor": null, "filters": [{"id": "msgpack2"}], "dtype": "|O"}"#,
        "0.0",
    ),
    (
        r#"{"zarr_format": 3, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}]}"#,
        "c/0/0",
    ),
    (
        r#"{"zarr_format": 3, "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip"}, {"name": "crc32c"}]}"#,
        "c/0/0",
    ),
    (
        r#"{"zarr_format": 3, "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 8], "codecs": [{"name": "bytes"}, {"name": "zstd"}], "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}]}}]}"#,
        "c/0/0",
    ),
    (
        r#"{"zarr_format": 3, "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8], "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 4], "codecs": [{"name": "bytes"}]}}], "index_location": "start"}}]}"#,
        "c/0/0",
    ),
    (
        r#"{"zarr_format": 3, "data_type": "bool", "codecs": [{"name": "packbits"}]}"#,
        "c/0/0",
    ),
    (
        r#"{"zarr_format": 3, "data_type": "string", "codecs": [{"name": "vlen-utf8"}]}"#,
        "c/0/0",
    ),
    (r#"{"compressor": {"id": "pcodec"}}"#, "0.0"),
    (r#"{"compressor": {"id": "base64"}}"#, "0.0"),
    (
        r#"{"zarr_format": 3, "data_type": "float64", "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8], "codecs": [{"name": "numcodecs.pcodec", "configuration": {"level": 3}}], "index_codecs": [{"name": "bytes"}, {"name": "numcodecs.adler32", "configuration": {}}]}}]}"#,
        "c/0/0",
    ),
    (
        r#"{"zarr_format": 3, "data_type": "int4", "codecs": [{"name": "packbits", "configuration": {"padding_encoding": "first_byte"}}]}"#,
        "c/0/0",
    ),
    (
        r#"{"zarr_format": 3, "data_type": "float6_e3m2fn", "codecs": [{"name": "bytes"}]}"#,
        "c/0/0",
    ),
    (
        r#"{"zarr_format": 3, "data_type": "float32", "codecs": [{"name": "cast_value", "configuration": {"data_type": "float8_e4m3fnuz", "out_of_range": "clamp"}}, {"name": "bytes"}]}"#,
        "c/0/0",
    ),
    (
        r#"{"compressor": null, "filters": [{"id": "pickle", "protocol": 5}], "dtype": "|O", "fill_value": null}"#,
        "0.0",
    ),
    (
        r#"{"compressor": null, "filters": [{"id": "pickle"}], "dtype": [["x", "<f8"], ["o", "|O"], ["n", "<i2", [2]]], "fill_value": null}"#,
        "0.0",
    ),
];

/// The full metadata document of `CODECS[i]`: its members over a 16 × 16 default.
pub fn codec_document(i: usize) -> String {
    let extra: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(CODECS[i].0).expect("a JSON object");
    let mut doc: serde_json::Map<String, serde_json::Value> = match extra.get("zarr_format") {
        Some(_) => serde_json::from_str(
            r#"{"zarr_format": 3, "node_type": "array", "shape": [16, 16], "data_type": "int32",
            "fill_value": 0, "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16, 16]}},
            "chunk_key_encoding": {"name": "default"}}"#,
        ),
        None => serde_json::from_str(
            r#"{"zarr_format": 2, "shape": [16, 16], "chunks": [16, 16], "dtype": "<i4",
            "fill_value": 0, "order": "C", "filters": null}"#,
        ),
    }
    .expect("a JSON object");
    doc.extend(extra);
    if doc.get("data_type").and_then(|t| t.as_str()) == Some("bool") {
        doc.insert("fill_value".into(), false.into());
    }
    if doc.get("data_type").and_then(|t| t.as_str()) == Some("string") {
        doc.insert("fill_value".into(), "".into());
    }
    if doc.get("dtype").and_then(|t| t.as_str()) == Some("|O") {
        doc.insert("fill_value".into(), serde_json::Value::Null);
    }
    serde_json::Value::Object(doc).to_string()
}

/// A small deterministic generator (xorshift64*) for the bulk values of structured targets,
/// so that an input stays small and reproduces.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (any value).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next_u64() >> 32) as u8).collect()
    }
}

/// A new temporary file holding `bytes`, its name ending in `suffix`; in `/dev/shm` when
/// there is one (no disk writes per execution). Removed when dropped.
pub fn temp_file(suffix: &str, bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut builder = tempfile::Builder::new();
    builder.prefix("libzarr-fuzz-").suffix(suffix);
    let mut file = match builder.tempfile_in(scratch_dir()) {
        Ok(file) => file,
        Err(_) => builder.tempfile().expect("a temporary file"),
    };
    std::io::Write::write_all(&mut file, bytes).expect("writing a temporary file");
    file
}

/// A new temporary directory, in `/dev/shm` when there is one. Removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    let mut builder = tempfile::Builder::new();
    builder.prefix("libzarr-fuzz-");
    match builder.tempdir_in(scratch_dir()) {
        Ok(dir) => dir,
        Err(_) => builder.tempdir().expect("a temporary directory"),
    }
}

fn scratch_dir() -> std::path::PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// The sharding configurations of the `shard` target: each the `codecs` of a 16 × 16 `int32`
/// array in one shard (key `c/0/0`); the data type when not `int32`.
pub const SHARDS: &[(&str, &str)] = &[
    (
        r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}], "index_location": "end"}}]"#,
        "int32",
    ),
    (
        r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 8], "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "zstd"}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_location": "start"}}]"#,
        "int32",
    ),
    (
        r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8], "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 4], "codecs": [{"name": "bytes"}, {"name": "gzip"}], "index_location": "start"}}], "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}]}}]"#,
        "int32",
    ),
    (
        r#"[{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 16], "codecs": [{"name": "bytes"}, {"name": "crc32c"}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}]}}]"#,
        "int32",
    ),
    (
        r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4], "codecs": [{"name": "bytes"}]}}, {"name": "gzip"}]"#,
        "int32",
    ),
    (
        r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 4], "codecs": [{"name": "vlen-utf8"}, {"name": "zstd"}]}}]"#,
        "string",
    ),
    (
        r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [16, 16], "codecs": [{"name": "packbits"}]}}]"#,
        "bool",
    ),
];

/// The `zarr.json` of `SHARDS[i]`.
pub fn shard_document(i: usize) -> String {
    let (codecs, dtype) = SHARDS[i];
    let fill = match dtype {
        "string" => serde_json::json!(""),
        "bool" => serde_json::json!(false),
        _ => serde_json::json!(-1),
    };
    serde_json::json!({"zarr_format": 3, "node_type": "array", "shape": [16, 16],
        "data_type": dtype, "fill_value": fill,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16, 16]}},
        "chunk_key_encoding": {"name": "default"},
        "codecs": serde_json::from_str::<serde_json::Value>(codecs).expect("JSON")})
    .to_string()
}
