//! Copying an array into a new one with another chunk shape, codec, layout or fill value:
//! the data is read and re-encoded block by block, each block aligned to the new chunk grid
//! and its chunks decoded and encoded in parallel, so memory stays at one block.

use super::blocks::BlockPlan;
use super::progress::{ProgressFn, Reporter};
use crate::array::Array;
use crate::dtype::v3::{self, ObjectKind};
use crate::dtype::{DataType, FillValue, ObjectCodec};
use crate::error::{try_alloc_zeroed, Error, Result};
use crate::hierarchy;
use crate::metadata::JsonDocument;
use crate::path;
use crate::store::StoreHandle;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The memory a block of a re-encoding copy may take, unless one destination chunk is larger.
pub(crate) const DEFAULT_BLOCK_BYTES: u64 = 128 << 20;

/// The `.zarray` keys a copy to a v2 array may change.
const CHANGEABLE_V2_KEYS: [&str; 6] = [
    "chunks",
    "compressor",
    "filters",
    "order",
    "dimension_separator",
    "fill_value",
];

/// The `zarr.json` members a copy to a v3 array may change.
const CHANGEABLE_V3_KEYS: [&str; 5] = [
    "chunk_grid",
    "chunk_key_encoding",
    "codecs",
    "fill_value",
    "dimension_names",
];

/// xarray's attribute naming a v2 array's dimensions (v3 has `dimension_names`).
const ARRAY_DIMENSIONS: &str = "_ARRAY_DIMENSIONS";

/// Object arrays: bytes assumed per element when sizing blocks (an `i64` offset plus a short
/// item; the items' real size is only known once read).
const OBJECT_ELEMENT_BYTES: u64 = 16;

/// Copies `src` into a new array at `dst_path` of `dst` whose metadata is the source's with
/// the keys of `overrides_json` (a JSON object) replaced. For a v2 copy `chunks`,
/// `compressor`, `filters`, `order`, `dimension_separator` and `fill_value` may change, for a
/// v3 copy `chunk_grid`, `chunk_key_encoding`, `codecs` (sharding included), `fill_value` and
/// `dimension_names`; `shape`, `dtype`/`data_type` may only be given unchanged. `"zarr_format":
/// 3` converts a v2 source (data type, fill value and chunk shape carried over, xarray's
/// `_ARRAY_DIMENSIONS` becoming `dimension_names`, the other members zarr-python 3's
/// defaults); a v3 source cannot become v2. The attributes are copied too.
///
/// The data moves in blocks of at most `block_bytes` (or one destination chunk, if larger),
/// aligned to the new chunk grid; blocks whose source chunks were never written are skipped
/// when the fill value is unchanged, and chunks that end up holding only the fill value are not
/// stored. Object arrays copy through their items (at most `block_bytes / 16` elements a
/// block). Progress counts elements (items) and their bytes; for object arrays, whose size is
/// only known once read, the byte total grows with the bytes done. A copy that stops early
/// (cancelled, or an error) leaves the new array with the blocks copied so far.
pub fn copy_array(
    src: &Array,
    dst: Arc<StoreHandle>,
    dst_path: &str,
    overrides_json: &str,
    block_bytes: u64,
    progress: &mut ProgressFn,
) -> Result<Array> {
    copy_array_with(
        src,
        dst,
        dst_path,
        overrides_json,
        true,
        block_bytes,
        progress,
    )
}

/// [`copy_array`], with the attributes copied or not (`with_attributes`).
pub(super) fn copy_array_with(
    src: &Array,
    dst: Arc<StoreHandle>,
    dst_path: &str,
    overrides_json: &str,
    with_attributes: bool,
    block_bytes: u64,
    progress: &mut ProgressFn,
) -> Result<Array> {
    let doc = metadata_with_overrides(src, overrides_json)?;
    let dst_path = path::normalize(dst_path)?;
    dst.check_writable(&dst_path)?;
    hierarchy::require_vacant(&dst, &dst_path)?;
    let meta = src.metadata();
    let shape = src.shape();
    let elements: u64 = shape.iter().product();
    let is_object = src.object_codec().is_some();
    let bytes_total = match is_object {
        true => 0,
        false => elements.saturating_mul(src.item_size() as u64),
    };
    let what = format!("copying array {:?} to {dst_path:?}", src.path());
    let mut reporter = Reporter::start(what, bytes_total, elements, progress)?;
    let copy = Array::create(dst, &dst_path, &doc.to_string())?;
    if with_attributes {
        copy_attributes(src, &copy)?;
    }
    let element_bytes = match is_object {
        true => OBJECT_ELEMENT_BYTES,
        false => src.item_size() as u64,
    };
    let plan = BlockPlan::new(
        &shape,
        &copy.chunk_grid(),
        &src.chunk_grid(),
        element_bytes,
        block_bytes,
    );
    let skip_missing = copy.metadata().fill_value == meta.fill_value;
    let mut buffer = Vec::new();
    for index in 0..plan.len() {
        let (start, count) = plan.block(index);
        let n: u64 = count.iter().product();
        if skip_missing && !has_stored_chunks(src, &start, &count)? {
            reporter.advance(n, n * element_bytes * u64::from(!is_object))?;
            continue;
        }
        let bytes = match is_object {
            true => copy_object_block(src, &copy, &start, &count)?,
            false => copy_block(src, &copy, &start, &count, &mut buffer)?,
        };
        if is_object {
            reporter.grow_bytes_total(bytes);
        }
        reporter.advance(n, bytes)?;
    }
    Ok(copy)
}

/// The copy's metadata document: the source's, converted to v3 when asked, with the caller's
/// changes, checked. Attributes are left out (see [`copy_attributes`]).
fn metadata_with_overrides(src: &Array, overrides_json: &str) -> Result<Value> {
    let overrides: Map<String, Value> = match serde_json::from_str(overrides_json) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            return Err(Error::InvalidArgument(format!(
                "overrides must be a JSON object, got {other}"
            )))
        }
        Err(e) => {
            return Err(Error::InvalidArgument(format!(
                "overrides are not valid JSON: {e}"
            )))
        }
    };
    let source_format = u64::from(src.zarr_format());
    let format = match overrides.get("zarr_format") {
        None => source_format,
        Some(v) => match v.as_u64() {
            Some(f @ (2 | 3)) if f >= source_format => f,
            Some(2) => {
                return Err(Error::Unsupported(
                    "converting a Zarr v3 array to v2 (copies of v3 arrays stay v3)".into(),
                ))
            }
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "zarr_format must be 2 or 3, got {v}"
                )))
            }
        },
    };
    let mut doc = match (source_format, format) {
        (2, 3) => v3_document(src)?,
        _ => src.metadata_json()?,
    };
    if let Value::Object(members) = &mut doc {
        members.remove("attributes");
    }
    let (changeable, dtype_key): (&[&str], _) = match format {
        3 => (&CHANGEABLE_V3_KEYS, "data_type"),
        _ => (&CHANGEABLE_V2_KEYS, "dtype"),
    };
    for (key, value) in overrides {
        match key.as_str() {
            k if changeable.contains(&k) => {
                doc[k] = value;
            }
            "shape" if value != doc["shape"] => {
                return Err(Error::InvalidArgument(format!(
                    "a copy keeps the shape {} (asked for {value}): resize the copy afterwards",
                    doc["shape"]
                )))
            }
            k if k == dtype_key && value != doc[k] && !same_v2_dtype(src, &value, format) => {
                return Err(Error::Unsupported(format!(
                    "a copy keeps the {k} {} (asked for {value}): converting data types is not supported",
                    doc[k]
                )))
            }
            "shape" | "zarr_format" => {}
            k if k == dtype_key => {}
            other => {
                return Err(Error::InvalidArgument(format!(
                    "override {other:?} is not a key a Zarr v{format} copy can change (those are {})",
                    changeable.join(", ")
                )))
            }
        }
    }
    Ok(doc)
}

/// Whether `value` names the v2 source's data type (in another spelling of the typestr).
fn same_v2_dtype(src: &Array, value: &Value, format: u64) -> bool {
    format == 2 && DataType::parse(value).ok().as_ref() == Some(&src.metadata().dtype)
}

/// The `zarr.json` of a v3 array like the v2 array `src`: its shape, chunk shape (the regular
/// grid), data type, fill value (`null`: the type's default) and dimension names; the codecs
/// and chunk keys left for creation to default as zarr-python 3 does.
fn v3_document(src: &Array) -> Result<Value> {
    let meta = src.metadata();
    let object = match src.object_codec() {
        None => None,
        Some(codec) if codec.holds_text() => Some(ObjectKind::Text),
        Some(ObjectCodec::Bytes) => Some(ObjectKind::Bytes),
        Some(codec) => {
            return Err(Error::Unsupported(format!(
                "object arrays encoded by {} have no Zarr v3 data type",
                codec.config()
            )))
        }
    };
    let fill_value = match meta.fill_value.0 {
        None => FillValue::default_json_v3(&meta.dtype),
        Some(_) => meta.fill_value.to_json_v3(&meta.dtype),
    };
    let mut doc = json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": src.shape(),
        "data_type": v3::to_json(&meta.dtype, object)?,
        "chunk_grid": src.chunk_grid().to_v3_json(),
        "fill_value": fill_value,
    });
    if let Some(names) = src.dimension_names()? {
        doc["dimension_names"] = json!(names);
    }
    Ok(doc)
}

/// Copies the source's attributes, if it has any (a v2 source's `_ARRAY_DIMENSIONS` become
/// the dimension names of a v3 copy instead).
fn copy_attributes(src: &Array, copy: &Array) -> Result<()> {
    let mut text = src.attributes()?;
    let mut attributes = JsonDocument::parse(text.as_bytes(), "attributes")?;
    if src.zarr_format() == 2 && copy.zarr_format() == 3 && attributes.contains(ARRAY_DIMENSIONS) {
        attributes.remove(ARRAY_DIMENSIONS);
        text = String::from_utf8(attributes.render()).expect("documents are UTF-8");
    }
    if attributes.names().next().is_none() {
        return Ok(());
    }
    copy.set_attributes(&text)
}

/// Whether any source chunk the box `start`/`count` touches is stored.
fn has_stored_chunks(src: &Array, start: &[u64], count: &[u64]) -> Result<bool> {
    let grid = src.chunk_grid();
    let first: Vec<u64> = (0..start.len())
        .map(|d| grid.axis(d).chunk_of(start[d]))
        .collect();
    let last: Vec<u64> = (0..start.len())
        .map(|d| grid.axis(d).chunk_of(start[d] + count[d] - 1))
        .collect();
    let mut coords = first.clone();
    loop {
        if src.chunk_is_stored(&coords)? {
            return Ok(true);
        }
        // Odometer over the chunk coordinates, last dimension fastest.
        let mut d = coords.len();
        loop {
            if d == 0 {
                return Ok(false);
            }
            d -= 1;
            if coords[d] < last[d] {
                coords[d] += 1;
                break;
            }
            coords[d] = first[d];
        }
    }
}

/// Copies one block of a fixed-size array through `buffer` (kept for the next block);
/// returns its bytes.
fn copy_block(
    src: &Array,
    copy: &Array,
    start: &[u64],
    count: &[u64],
    buffer: &mut Vec<u8>,
) -> Result<u64> {
    let bytes = count
        .iter()
        .try_fold(src.item_size() as u64, |acc, &n| acc.checked_mul(n))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| Error::TooLarge(format!("a block of {count:?} elements")))?;
    if buffer.len() < bytes {
        *buffer = try_alloc_zeroed(bytes, "a block of the copy")?;
    }
    let block = &mut buffer[..bytes];
    src.read_region(start, count, block)?;
    copy.write_region(start, count, block)?;
    Ok(bytes as u64)
}

/// Copies one block of an object array through its items; returns the items' bytes.
fn copy_object_block(src: &Array, copy: &Array, start: &[u64], count: &[u64]) -> Result<u64> {
    let n: u64 = count.iter().product();
    let size = src.vlen_size(start, count)?;
    let size_bytes = usize::try_from(size)
        .map_err(|_| Error::TooLarge(format!("{size} bytes of items in a block")))?;
    let mut offsets = vec![0i64; n as usize + 1];
    let mut data = try_alloc_zeroed(size_bytes, "the items of a block of the copy")?;
    src.read_vlen(start, count, &mut offsets, &mut data)?;
    copy.write_vlen(start, count, &offsets, &data)?;
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::Progress;
    use crate::store::OpenMode;
    use std::ops::ControlFlow;

    fn memory() -> Arc<StoreHandle> {
        StoreHandle::open("memory:", OpenMode::Write).unwrap()
    }

    /// A 37 x 23 array of distinct `<f8` values (chunks 8 x 5, zlib, fill NaN) whose chunk
    /// row 2 was never written; returns it with its values (NaN where unwritten).
    fn source(store: &Arc<StoreHandle>, order: &str) -> (Array, Vec<f64>) {
        let meta = format!(
            r#"{{"shape": [37, 23], "chunks": [8, 5], "dtype": "<f8", "fill_value": "NaN",
                "order": "{order}", "compressor": {{"id": "zlib", "level": 1}}}}"#
        );
        let a = Array::create(store.clone(), "src", &meta).unwrap();
        let mut values: Vec<f64> = (0..37 * 23).map(|i| i as f64 * 0.5 - 100.0).collect();
        for row in 16..24 {
            values[row * 23..(row + 1) * 23].fill(f64::NAN);
        }
        let bytes = |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_ne_bytes()).collect() };
        a.write_region(&[0, 0], &[16, 23], &bytes(&values[..16 * 23]))
            .unwrap();
        a.write_region(&[24, 0], &[13, 23], &bytes(&values[24 * 23..]))
            .unwrap();
        a.set_attributes(r#"{"title": "source", "n": [1, 2]}"#)
            .unwrap();
        (a, values)
    }

    fn read_all(a: &Array) -> Vec<f64> {
        let n: u64 = a.metadata().shape.iter().product();
        let mut out = vec![0u8; n as usize * 8];
        a.read_region(
            &vec![0; a.metadata().shape.len()],
            &a.metadata().shape,
            &mut out,
        )
        .unwrap();
        out.chunks_exact(8)
            .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
            .collect()
    }

    fn same_values(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
    }

    fn copy_recording(
        src: &Array,
        dst: &Arc<StoreHandle>,
        path: &str,
        overrides: &str,
        block_bytes: u64,
    ) -> Result<(Array, Vec<Progress>)> {
        let mut seen = Vec::new();
        let copy = copy_array(
            src,
            dst.clone(),
            path,
            overrides,
            block_bytes,
            &mut |p: &Progress| {
                seen.push(*p);
                ControlFlow::Continue(())
            },
        )?;
        Ok((copy, seen))
    }

    /// Stored chunk keys below `path`.
    fn chunk_count(store: &StoreHandle, path: &str) -> usize {
        store
            .list_prefix(&format!("{path}/"))
            .unwrap()
            .iter()
            .filter(|k| !k.ends_with(".zarray") && !k.ends_with(".zattrs"))
            .count()
    }

    #[test]
    fn rechunks_and_recompresses_to_identical_data() {
        let store = memory();
        let (src, values) = source(&store, "C");
        let cases = [
            (r#"{"chunks": [3, 2]}"#, 1 << 10),
            (
                r#"{"chunks": [20, 30], "compressor": {"id": "zstd", "level": 3}}"#,
                1 << 20,
            ),
            (
                r#"{"chunks": [7, 9], "compressor": null, "order": "F"}"#,
                1000,
            ),
            (
                r#"{"chunks": [5, 23], "dimension_separator": "/", "filters": [{"id": "shuffle", "elementsize": 8}]}"#,
                1 << 12,
            ),
            (
                r#"{"chunks": [37, 23], "shape": [37, 23], "dtype": "<f8"}"#,
                8,
            ),
        ];
        for (i, (overrides, budget)) in cases.into_iter().enumerate() {
            let path = format!("copies/{i}");
            let (copy, seen) = copy_recording(&src, &store, &path, overrides, budget).unwrap();
            assert!(same_values(&read_all(&copy), &values), "{overrides}");
            let reopened = Array::open(store.clone(), &path).unwrap();
            assert!(same_values(&read_all(&reopened), &values), "{overrides}");
            let want: Value = serde_json::from_str(overrides).unwrap();
            for (key, value) in want.as_object().unwrap() {
                if key != "compressor" || value.is_null() {
                    assert_eq!(&reopened.metadata_json().unwrap()[key], value, "{key}");
                }
            }
            assert_eq!(
                reopened.attributes().unwrap(),
                r#"{"title": "source", "n": [1, 2]}"#
            );
            // Fill-only chunks (the unwritten rows) are not stored.
            let chunks = reopened.metadata().grid.regular_shape().unwrap();
            let rows_with_data: u64 = (0..37u64.div_ceil(chunks[0]))
                .filter(|r| {
                    let (a, b) = (r * chunks[0], ((r + 1) * chunks[0]).min(37));
                    a < 16 || b > 24
                })
                .count() as u64;
            assert_eq!(
                chunk_count(&store, &path) as u64,
                rows_with_data * 23u64.div_ceil(chunks[1]),
                "{overrides}"
            );
            let last = seen.last().unwrap();
            assert_eq!((last.items_done, last.items_total), (37 * 23, 37 * 23));
            assert_eq!(
                (last.bytes_done, last.bytes_total),
                (37 * 23 * 8, 37 * 23 * 8)
            );
            assert_eq!(seen[0].items_done, 0);
            assert!(seen.windows(2).all(|w| w[1].items_done > w[0].items_done));
        }
    }

    #[test]
    fn copies_fortran_order_and_between_stores() {
        let (store, other) = (memory(), memory());
        let (src, values) = source(&store, "F");
        let (copy, _) = copy_recording(
            &src,
            &other,
            "a/b",
            r#"{"order": "C", "chunks": [4, 4]}"#,
            2048,
        )
        .unwrap();
        assert!(same_values(&read_all(&copy), &values));
        assert_eq!(
            hierarchy::node_kind(&other, "a").unwrap(),
            hierarchy::NodeKind::Group
        );
        let (back, _) = copy_recording(&copy, &store, "back", r#"{"order": "F"}"#, 2048).unwrap();
        assert!(same_values(&read_all(&back), &values));
    }

    #[test]
    fn a_new_fill_value_keeps_the_values() {
        let store = memory();
        let (src, values) = source(&store, "C");
        let (copy, _) =
            copy_recording(&src, &store, "c", r#"{"fill_value": -1.0}"#, 1 << 20).unwrap();
        assert!(
            same_values(&read_all(&copy), &values),
            "unwritten rows read NaN as before"
        );
        // The NaN rows are stored now, as values: every chunk is.
        assert_eq!(chunk_count(&store, "c"), 5 * 5);
    }

    #[test]
    fn converts_v2_to_v3_sharded_or_not() {
        let store = memory();
        let (src, values) = source(&store, "F");
        src.set_attributes(r#"{"title": "source", "_ARRAY_DIMENSIONS": ["y", "x"]}"#)
            .unwrap();
        let sharded = r#"{"zarr_format": 3, "chunk_grid": {"name": "regular",
            "configuration": {"chunk_shape": [16, 10]}}, "codecs": [{"name": "sharding_indexed",
            "configuration": {"chunk_shape": [4, 5], "codecs": [{"name": "bytes"},
            {"name": "gzip"}]}}]}"#;
        for (path, overrides) in [("plain", r#"{"zarr_format": 3}"#), ("sharded", sharded)] {
            let (copy, _) = copy_recording(&src, &store, path, overrides, 1 << 12).unwrap();
            assert_eq!(copy.zarr_format(), 3);
            assert!(same_values(&read_all(&copy), &values), "{path}");
            let doc = copy.metadata_json().unwrap();
            assert_eq!(doc["data_type"], json!("float64"));
            assert_eq!(doc["fill_value"], json!("NaN"));
            assert_eq!(doc["dimension_names"], json!(["y", "x"]));
            let attributes: Value = serde_json::from_str(&copy.attributes().unwrap()).unwrap();
            assert_eq!(attributes, json!({"title": "source"}));
            let reopened = Array::open(store.clone(), path).unwrap();
            assert!(same_values(&read_all(&reopened), &values), "{path}");
        }
        assert_eq!(
            Array::open(store.clone(), "sharded")
                .unwrap()
                .inner_chunks(),
            Some(vec![4, 5])
        );
        // Unwritten source chunks stay unwritten.
        assert!(store.contains("plain/c/1/0").unwrap());
        assert!(!store.contains("plain/c/2/0").unwrap());
        // A v3 array copies as v3 with other codecs; it cannot become v2.
        let v3 = Array::open(store.clone(), "sharded").unwrap();
        let (again, _) = copy_recording(
            &v3,
            &store,
            "again",
            r#"{"codecs": [{"name": "bytes"}]}"#,
            1 << 12,
        )
        .unwrap();
        assert!(same_values(&read_all(&again), &values));
        let err = copy_recording(&v3, &store, "v2", r#"{"zarr_format": 2}"#, 1 << 12).unwrap_err();
        assert!(matches!(err, Error::Unsupported(_)), "{err}");
        let err =
            copy_recording(&v3, &store, "v2", r#"{"compressor": null}"#, 1 << 12).unwrap_err();
        assert!(err.to_string().contains("chunk_grid"), "{err}");
    }

    #[test]
    fn converts_v2_strings_to_v3() {
        let store = memory();
        let meta = r#"{"shape": [5], "chunks": [2], "dtype": "|O", "fill_value": "",
            "filters": [{"id": "vlen-utf8"}]}"#;
        let src = Array::create(store.clone(), "s", meta).unwrap();
        src.write_vlen(&[0], &[5], &[0, 1, 1, 3, 6, 10], b"abcdefghij")
            .unwrap();
        let (copy, _) =
            copy_recording(&src, &store, "s3", r#"{"zarr_format": 3}"#, 1 << 20).unwrap();
        assert_eq!(copy.metadata_json().unwrap()["data_type"], json!("string"));
        let (mut offsets, mut data) = (vec![0i64; 6], vec![0u8; 10]);
        copy.read_vlen(&[0], &[5], &mut offsets, &mut data).unwrap();
        assert_eq!(
            (offsets.as_slice(), data.as_slice()),
            (&[0, 1, 1, 3, 6, 10][..], &b"abcdefghij"[..])
        );
    }

    #[test]
    fn refuses_changes_a_copy_cannot_make() {
        let store = memory();
        let (src, _) = source(&store, "C");
        for (overrides, kind) in [
            (r#"{"shape": [37, 24]}"#, "InvalidArgument"),
            (r#"{"dtype": "<f4"}"#, "Unsupported"),
            (r#"{"dtype": "bogus"}"#, "Unsupported"),
            (r#"{"zarr_format": 4}"#, "InvalidArgument"),
            (r#"{"codecs": []}"#, "InvalidArgument"),
            (r#"{"colour": "blue"}"#, "InvalidArgument"),
            ("[1]", "InvalidArgument"),
            ("{", "InvalidArgument"),
            (r#"{"chunks": [0, 1]}"#, "InvalidMetadata"),
            (r#"{"compressor": {"id": "nope"}}"#, "Unsupported"),
        ] {
            let err = copy_recording(&src, &store, "c", overrides, 1 << 20).unwrap_err();
            assert!(format!("{err:?}").starts_with(kind), "{overrides}: {err:?}");
            assert_eq!(
                hierarchy::node_kind(&store, "c").unwrap(),
                hierarchy::NodeKind::None
            );
        }
        let err = copy_recording(&src, &store, "src", "{}", 1 << 20).unwrap_err();
        assert!(matches!(err, Error::AlreadyExists(_)), "{err}");
        let err = copy_recording(&src, &store, "src/inner", "{}", 1 << 20).unwrap_err();
        assert!(matches!(err, Error::AlreadyExists(_)), "{err}");
        let ro = StoreHandle::open("memory:", OpenMode::Read).unwrap();
        let err = copy_recording(&src, &ro, "c", "{}", 1 << 20).unwrap_err();
        assert!(matches!(err, Error::ReadOnly(_)), "{err}");
    }

    #[test]
    fn a_cancelled_copy_keeps_the_blocks_done() {
        let store = memory();
        let (src, values) = source(&store, "C");
        let mut calls = 0;
        let err = copy_array(
            &src,
            store.clone(),
            "c",
            r#"{"chunks": [1, 23]}"#,
            23 * 8,
            &mut |p: &Progress| {
                calls += 1;
                match p.items_done >= 10 * 23 {
                    true => ControlFlow::Break(()),
                    false => ControlFlow::Continue(()),
                }
            },
        )
        .unwrap_err();
        assert!(
            matches!(err, Error::Cancelled(ref m) if m.contains("230 of 851 items")),
            "{err}"
        );
        assert_eq!(calls, 11, "the start and one call per row");
        let copy = Array::open(store.clone(), "c").unwrap();
        let got = read_all(&copy);
        assert!(same_values(&got[..230], &values[..230]));
        assert!(got[230..].iter().all(|v| v.is_nan()));
        assert_eq!(chunk_count(&store, "c"), 10);
        let err = copy_array(
            &src,
            store.clone(),
            "d",
            "{}",
            1 << 20,
            &mut |_: &Progress| ControlFlow::Break(()),
        )
        .unwrap_err();
        assert!(matches!(err, Error::Cancelled(_)));
        assert_eq!(
            hierarchy::node_kind(&store, "d").unwrap(),
            hierarchy::NodeKind::None
        );
    }

    #[test]
    fn copies_object_arrays_through_their_items() {
        let store = memory();
        let meta = r#"{"shape": [11], "chunks": [4], "dtype": "|O", "fill_value": "",
            "filters": [{"id": "vlen-utf8"}], "compressor": {"id": "zlib", "level": 1}}"#;
        let src = Array::create(store.clone(), "text", meta).unwrap();
        let items: Vec<String> = (0..8).map(|i| "é".repeat(i)).collect();
        let mut offsets = vec![0i64];
        for item in &items {
            offsets.push(offsets.last().unwrap() + item.len() as i64);
        }
        src.write_vlen(&[0], &[8], &offsets, items.concat().as_bytes())
            .unwrap();
        let (copy, seen) = copy_recording(
            &src,
            &store,
            "text2",
            r#"{"chunks": [3], "compressor": null}"#,
            48,
        )
        .unwrap();
        let size = copy.vlen_size(&[0], &[11]).unwrap();
        assert_eq!(size, src.vlen_size(&[0], &[11]).unwrap());
        let (mut got_offsets, mut got) = (vec![0i64; 12], vec![0u8; size as usize]);
        copy.read_vlen(&[0], &[11], &mut got_offsets, &mut got)
            .unwrap();
        assert_eq!(&got_offsets[..9], &offsets[..]);
        assert_eq!(got, items.concat().as_bytes());
        let last = seen.last().unwrap();
        assert_eq!(
            (last.items_done, last.bytes_done, last.bytes_total),
            (11, size, size)
        );
        assert_eq!(seen.len(), 5, "blocks of 3 elements (48 / 16)");
        assert_eq!(
            chunk_count(&store, "text2"),
            3,
            "the chunk of empty strings is not stored"
        );
    }

    #[test]
    fn copies_scalar_and_empty_arrays() {
        let store = memory();
        let scalar = Array::create(
            store.clone(),
            "s",
            r#"{"shape": [], "chunks": [], "dtype": "<i2"}"#,
        )
        .unwrap();
        scalar.write_region(&[], &[], &7i16.to_ne_bytes()).unwrap();
        let (copy, seen) = copy_recording(&scalar, &store, "s2", "{}", 1 << 20).unwrap();
        let mut out = [0u8; 2];
        copy.read_region(&[], &[], &mut out).unwrap();
        assert_eq!(i16::from_ne_bytes(out), 7);
        assert_eq!(seen.len(), 2);
        let empty = Array::create(
            store.clone(),
            "e",
            r#"{"shape": [0, 4], "chunks": [2, 2], "dtype": "<i2"}"#,
        )
        .unwrap();
        let (copy, seen) =
            copy_recording(&empty, &store, "e2", r#"{"chunks": [1, 1]}"#, 1 << 20).unwrap();
        assert_eq!(copy.metadata().grid.regular_shape(), Some(&[1, 1][..]));
        assert_eq!(seen, vec![Progress::default()]);
    }

    /// A handle resized since it was opened copies the shape it has now, all of it.
    #[test]
    fn copies_the_shape_after_a_resize() {
        let store = memory();
        let a = Array::create(
            store.clone(),
            "a",
            r#"{"shape": [3], "chunks": [2], "dtype": "<i2"}"#,
        )
        .unwrap();
        a.append(0, 4, &[1i16, 2, 3, 4].map(i16::to_ne_bytes).concat())
            .unwrap();
        let (copy, _) = copy_recording(&a, &store, "b", "{}", 1 << 20).unwrap();
        assert_eq!(copy.shape(), vec![7]);
        let mut out = [0u8; 14];
        copy.read_region(&[3], &[4], &mut out[..8]).unwrap();
        assert_eq!(out[..8], [1i16, 2, 3, 4].map(i16::to_ne_bytes).concat());
    }
}
