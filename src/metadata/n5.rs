//! N5's `attributes.json` and the Zarr v2 documents it stands for, as zarr-python 2's
//! `N5Store` translates them (`zarr/n5.py`): an N5 dataset (`dimensions`, `blockSize`,
//! `dataType`, `compression`) reads as a `.zarray` whose shape and chunks are reversed and
//! whose compressor is the `n5_wrapper` codec around the numcodecs compressor N5's
//! `compression` names; every other member of `attributes.json` is a user attribute
//! (`.zattrs`); a directory whose `attributes.json` has no `dimensions` is a group.

use super::document::JsonDocument;
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// The N5 name of `attributes.json`.
pub const ATTRIBUTES_JSON: &str = "attributes.json";

/// The N5 version libzarr writes (as zarr-python 2 and z5py do; readers take any version).
pub const N5_VERSION: &str = "2.0.0";

/// The members of `attributes.json` that are N5's own, never user attributes.
pub const KEYWORDS: [&str; 5] = ["n5", "dataType", "dimensions", "blockSize", "compression"];

/// The id of the codec that frames N5 blocks (zarr-python's `N5ChunkWrapper`).
pub const WRAPPER_ID: &str = "n5_wrapper";

/// N5's data types with the NumPy type string zarr-python presents them as.
const DATA_TYPES: [(&str, &str); 10] = [
    ("uint8", "|u1"),
    ("uint16", "<u2"),
    ("uint32", "<u4"),
    ("uint64", "<u8"),
    ("int8", "|i1"),
    ("int16", "<i2"),
    ("int32", "<i4"),
    ("int64", "<i8"),
    ("float32", "<f4"),
    ("float64", "<f8"),
];

/// Parses a stored `attributes.json` (`key` names it in errors).
pub fn parse(bytes: &[u8], key: &str) -> Result<JsonDocument> {
    JsonDocument::parse(bytes, key)
}

/// Whether an `attributes.json` describes a dataset (an array).
pub fn is_dataset(attrs: &JsonDocument) -> bool {
    attrs.contains("dimensions")
}

/// The user attributes of an `attributes.json` (every member but N5's own), as a `.zattrs`
/// document; `None` when there are none.
pub fn user_attributes(attrs: &JsonDocument) -> Option<Vec<u8>> {
    let mut user = JsonDocument::default();
    for name in attrs.names().filter(|n| !KEYWORDS.contains(n)) {
        user.set_raw(name, attrs.raw(name).expect("listed").to_string());
    }
    let any = user.names().next().is_some();
    any.then(|| user.render())
}

/// The array dimensions of a dataset member (`dimensions`, `blockSize`): unsigned integers,
/// reversed into Zarr's order.
fn dims(attrs: &JsonDocument, name: &str, key: &str) -> Result<Vec<u64>> {
    let bad = || {
        Error::InvalidMetadata(format!(
            "{key:?}: \"{name}\" must be a list of non-negative integers, got {}",
            attrs.raw(name).unwrap_or("nothing")
        ))
    };
    let value = attrs.get(name).ok_or_else(bad)?;
    let mut out = value
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|v| v.as_u64().ok_or_else(bad))
        .collect::<Result<Vec<u64>>>()?;
    out.reverse();
    Ok(out)
}

/// The `.zarray` document zarr-python 2 presents for an N5 dataset (`key` names its
/// `attributes.json` in errors): shape and chunks reversed, fill value 0, order C, separator
/// `.`, and the `n5_wrapper` compressor carrying the numcodecs compressor, the type and the
/// chunk shape.
pub fn zarray_of_dataset(attrs: &JsonDocument, key: &str) -> Result<Value> {
    let shape = dims(attrs, "dimensions", key)?;
    let chunks = dims(attrs, "blockSize", key)?;
    if shape.len() != chunks.len() {
        return Err(Error::InvalidMetadata(format!(
            "{key:?}: \"dimensions\" has {} entries but \"blockSize\" {}",
            shape.len(),
            chunks.len()
        )));
    }
    if chunks.contains(&0) {
        return Err(Error::InvalidMetadata(format!(
            "{key:?}: \"blockSize\" {chunks:?} has a zero"
        )));
    }
    let data_type = attrs.get("dataType");
    let dtype = data_type
        .as_ref()
        .and_then(Value::as_str)
        .and_then(|name| DATA_TYPES.iter().find(|(n, _)| *n == name))
        .map(|(_, typestr)| *typestr)
        .ok_or_else(|| match &data_type {
            Some(Value::String(name)) => Error::Unsupported(format!(
                "{key:?}: N5 data type {name:?} (libzarr reads the numeric types uint8 to float64)"
            )),
            _ => Error::InvalidMetadata(format!(
                "{key:?}: \"dataType\" must be a string, got {}",
                attrs.raw("dataType").unwrap_or("nothing")
            )),
        })?;
    let compression = match (attrs.get("compression"), attrs.get("compressionType")) {
        (Some(Value::Object(c)), _) => c,
        // N5 before 1.0 named the compression alone, without parameters.
        (None, Some(Value::String(t))) => Map::from_iter([("type".to_string(), Value::String(t))]),
        (c, _) => {
            return Err(Error::InvalidMetadata(format!(
                "{key:?}: \"compression\" must be an object with a \"type\", got {}",
                c.map_or("nothing".to_string(), |c| c.to_string())
            )))
        }
    };
    let compressor = numcodecs_of_compression(&compression)
        .map_err(|e| e.context(format!("{key:?}: compression")))?;
    Ok(json!({
        "chunks": chunks,
        "compressor": {
            "chunk_shape": chunks,
            "compressor_config": compressor,
            "dtype": dtype,
            "id": WRAPPER_ID,
        },
        "dimension_separator": ".",
        "dtype": dtype,
        "fill_value": 0,
        "filters": null,
        "order": "C",
        "shape": shape,
        "zarr_format": 2,
    }))
}

/// An integer parameter of an N5 compression, with its default when absent.
fn int_param(c: &Map<String, Value>, name: &str, default: i64) -> Result<i64> {
    match c.get(name) {
        None => Ok(default),
        Some(v) => v.as_i64().ok_or_else(|| {
            Error::InvalidMetadata(format!("\"{name}\" must be an integer, got {v}"))
        }),
    }
}

/// The numcodecs compressor of an N5 `compression` object (`None`: raw), as zarr-python's
/// `compressor_config_to_zarr` maps it, with N5's documented defaults for absent parameters
/// and the parameters other writers add (n5-zstandard's `nbWorkers`, n5-blosc's `nthreads`)
/// left out.
pub fn numcodecs_of_compression(c: &Map<String, Value>) -> Result<Option<Value>> {
    let kind = c.get("type").and_then(Value::as_str).ok_or_else(|| {
        Error::InvalidMetadata(format!(
            "no string \"type\" in {}",
            Value::Object(c.clone())
        ))
    })?;
    Ok(Some(match kind {
        "raw" => return Ok(None),
        "gzip" => {
            let level = int_param(c, "level", -1)?;
            if c.get("useZlib").and_then(Value::as_bool) == Some(true) {
                json!({"id": "zlib", "level": level})
            } else {
                json!({"id": "gzip", "level": level})
            }
        }
        "bzip2" => json!({"id": "bz2", "level": int_param(c, "blockSize", 9)?}),
        "xz" => json!({
            "id": "lzma", "format": 1, "check": -1,
            "preset": int_param(c, "preset", 6)?, "filters": null,
        }),
        "lzma" => json!({
            "id": "lzma",
            "format": int_param(c, "format", 1)?,
            "check": int_param(c, "check", -1)?,
            "preset": c.get("preset").cloned().unwrap_or(Value::Null),
            "filters": c.get("filters").cloned().unwrap_or(Value::Null),
        }),
        "blosc" => json!({
            "id": "blosc",
            "cname": c.get("cname").cloned().unwrap_or_else(|| json!("lz4")),
            "clevel": int_param(c, "clevel", 5)?,
            "shuffle": int_param(c, "shuffle", 1)?,
            "blocksize": int_param(c, "blocksize", 0)?,
        }),
        "zstd" => {
            let checksum = c
                .get("checksum")
                .or_else(|| c.get("useChecksums"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            json!({"id": "zstd", "level": int_param(c, "level", 3)?, "checksum": checksum})
        }
        // zarr-python writes numcodecs' LZ4 framing (with `acceleration`); n5-java's `lz4`
        // (with `blockSize`) is lz4-java's block stream, another format.
        "lz4" if !c.contains_key("blockSize") => {
            json!({"id": "lz4", "acceleration": int_param(c, "acceleration", 1)?})
        }
        "lz4" => {
            return Err(Error::Unsupported(
                "N5 compression \"lz4\" with \"blockSize\" (n5-java's lz4-java block stream; libzarr reads numcodecs' LZ4 framing, as zarr-python writes it)".into(),
            ))
        }
        other => {
            return Err(Error::Unsupported(format!(
                "N5 compression type {other:?} (libzarr reads raw, gzip, bzip2, xz, lzma, blosc, zstd and lz4)"
            )))
        }
    }))
}

/// The N5 `compression` object of a numcodecs compressor (`None`: raw; an `n5_wrapper` is
/// peeled first), as zarr-python's `compressor_config_to_n5` writes it.
pub fn compression_of_numcodecs(config: Option<&Value>) -> Result<Value> {
    let mut config = match config {
        None | Some(Value::Null) => return Ok(json!({"type": "raw"})),
        Some(c) => c,
    };
    if config.get("id").and_then(Value::as_str) == Some(WRAPPER_ID) {
        match config.get("compressor_config") {
            None | Some(Value::Null) => return Ok(json!({"type": "raw"})),
            Some(inner) => config = inner,
        }
    }
    let get = |name: &str| config.get(name).cloned().unwrap_or(Value::Null);
    let id = config.get("id").and_then(Value::as_str).unwrap_or("");
    Ok(match id {
        "bz2" => json!({"type": "bzip2", "blockSize": get("level")}),
        "blosc" => json!({
            "type": "blosc", "cname": get("cname"), "clevel": get("clevel"),
            "shuffle": get("shuffle"), "blocksize": get("blocksize"),
        }),
        "lzma" => {
            let preset = match get("preset") {
                Value::Null => json!(6),
                p => p,
            };
            let check = config.get("check").and_then(Value::as_i64);
            if config.get("format").and_then(Value::as_i64) == Some(1)
                && matches!(check, Some(-1 | 4))
            {
                json!({"type": "xz", "preset": preset})
            } else {
                json!({
                    "type": "lzma", "format": get("format"), "check": get("check"),
                    "filters": get("filters"), "preset": preset,
                })
            }
        }
        "zlib" => json!({"type": "gzip", "level": get("level"), "useZlib": true}),
        "gzip" => json!({"type": "gzip", "level": get("level"), "useZlib": false}),
        "zstd" | "lz4" => {
            let mut out = config.as_object().cloned().unwrap_or_default();
            out.remove("id");
            out.insert("type".into(), json!(id));
            Value::Object(out)
        }
        other => {
            return Err(Error::Unsupported(format!(
                "compressor {other:?} in an N5 container (N5 has raw, gzip, zlib, bz2, lzma, blosc, zstd and lz4)"
            )))
        }
    })
}

/// The N5 members of a `.zarray` document (`key` names it in errors), as zarr-python's
/// `array_metadata_to_n5` writes them: reversed `dimensions` and `blockSize`, the N5 type
/// name, the N5 compression. N5 has no fill value but 0, no order but C and no filters, so
/// anything else is refused.
pub fn dataset_of_zarray(zarray: &Value, key: &str) -> Result<Vec<(&'static str, Value)>> {
    let fail = |what: String| Error::Unsupported(format!("{key:?}: {what}"));
    let reversed = |name: &str| -> Result<Value> {
        let mut list = zarray
            .get(name)
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| Error::InvalidMetadata(format!("{key:?}: \"{name}\" must be a list")))?;
        list.reverse();
        Ok(Value::Array(list))
    };
    let typestr = zarray.get("dtype").and_then(Value::as_str).unwrap_or("");
    let name = DATA_TYPES
        .iter()
        .find(|(_, t)| {
            t.get(1..) == typestr.get(1..) && typestr.get(..1).is_some_and(|o| "<>|=".contains(o))
        })
        .map(|(n, _)| *n)
        .ok_or_else(|| {
            fail(format!(
                "data type {typestr:?} is not supported by N5 (it has the integers and floats of 1 to 8 bytes)"
            ))
        })?;
    match zarray.get("fill_value") {
        None | Some(Value::Null) => {}
        Some(v) if v.as_f64() == Some(0.0) => {}
        Some(v) => return Err(fail(format!("fill value {v}: N5 only has fill value 0"))),
    }
    match zarray.get("order").and_then(Value::as_str) {
        None | Some("C") => {}
        Some(o) => return Err(fail(format!("order {o:?}: N5 only has order C"))),
    }
    match zarray.get("filters") {
        None | Some(Value::Null) => {}
        Some(Value::Array(f)) if f.is_empty() => {}
        Some(_) => return Err(fail("filters: N5 has none".into())),
    }
    if zarray
        .get("shape")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        return Err(fail(
            "a zero-dimensional array: N5 datasets have dimensions".into(),
        ));
    }
    Ok(vec![
        ("blockSize", reversed("chunks")?),
        (
            "compression",
            compression_of_numcodecs(zarray.get("compressor"))?,
        ),
        ("dataType", json!(name)),
        ("dimensions", reversed("shape")?),
    ])
}

/// The `.zarray` an array created on an N5 container has: the caller's document through
/// N5 and back, so the handle encodes chunks as it will read them (framed by `n5_wrapper`).
pub fn zarray_for_create(zarray: &Value) -> Result<Value> {
    let mut doc = JsonDocument::default();
    for (name, value) in dataset_of_zarray(zarray, "array metadata")? {
        doc.set(name, &value);
    }
    zarray_of_dataset(&doc, "array metadata")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> JsonDocument {
        JsonDocument::parse(text.as_bytes(), "attributes.json").unwrap()
    }

    #[test]
    fn presents_datasets_as_zarr_python_does() {
        let attrs = doc(
            r#"{"dataType": "uint16", "dimensions": [3, 512, 500], "blockSize": [1, 100, 64],
                "compression": {"type": "gzip", "level": 5}, "n5": "2.0.0", "units": "nm"}"#,
        );
        let z = zarray_of_dataset(&attrs, "a/attributes.json").unwrap();
        assert_eq!(z["shape"], json!([500, 512, 3]));
        assert_eq!(z["chunks"], json!([64, 100, 1]));
        assert_eq!(z["dtype"], json!("<u2"));
        assert_eq!(
            z["compressor"]["compressor_config"],
            json!({"id": "gzip", "level": 5})
        );
        assert_eq!(z["compressor"]["id"], json!("n5_wrapper"));
        assert_eq!(
            user_attributes(&attrs).unwrap(),
            b"{\n  \"units\": \"nm\"\n}"
        );
        assert!(user_attributes(&doc(r#"{"n5": "2.0.0"}"#)).is_none());
        // And back.
        let n5 = dataset_of_zarray(&z, "a/.zarray").unwrap();
        assert_eq!(n5[0], ("blockSize", json!([1, 100, 64])));
        assert_eq!(
            n5[1],
            (
                "compression",
                json!({"type": "gzip", "level": 5, "useZlib": false})
            )
        );
        assert_eq!(n5[3], ("dimensions", json!([3, 512, 500])));
    }

    #[test]
    fn maps_every_compression_both_ways() {
        for (n5, zarr) in [
            (json!({"type": "raw"}), Value::Null),
            (
                json!({"type": "gzip", "level": 1, "useZlib": true}),
                json!({"id": "zlib", "level": 1}),
            ),
            (
                json!({"type": "bzip2", "blockSize": 9}),
                json!({"id": "bz2", "level": 9}),
            ),
            (
                json!({"type": "xz", "preset": 6}),
                json!({"id": "lzma", "format": 1, "check": -1, "preset": 6, "filters": null}),
            ),
            (
                json!({"type": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 1, "blocksize": 0}),
                json!({"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 1, "blocksize": 0}),
            ),
            (
                json!({"type": "zstd", "level": 3, "checksum": false}),
                json!({"id": "zstd", "level": 3, "checksum": false}),
            ),
            (
                json!({"type": "lz4", "acceleration": 1}),
                json!({"id": "lz4", "acceleration": 1}),
            ),
        ] {
            let map = n5.as_object().unwrap();
            assert_eq!(
                numcodecs_of_compression(map).unwrap(),
                zarr.as_object().map(|_| zarr.clone())
            );
            assert_eq!(compression_of_numcodecs(Some(&zarr)).unwrap(), n5);
        }
        // n5-zstandard's members.
        let z = json!({"type": "zstd", "level": 3, "nbWorkers": 0, "useChecksums": true});
        assert_eq!(
            numcodecs_of_compression(z.as_object().unwrap()).unwrap(),
            Some(json!({"id": "zstd", "level": 3, "checksum": true}))
        );
    }

    #[test]
    fn refuses_what_n5_cannot_hold_naming_the_key() {
        for (text, needle) in [
            (
                r#"{"dimensions": [4], "blockSize": [2], "dataType": "uint8", "compression": {"type": "snappy"}}"#,
                "snappy",
            ),
            (
                r#"{"dimensions": [4], "blockSize": [2], "dataType": "object", "compression": {"type": "raw"}}"#,
                "object",
            ),
            (
                r#"{"dimensions": [4, 4], "blockSize": [2], "dataType": "uint8", "compression": {"type": "raw"}}"#,
                "blockSize",
            ),
            (
                r#"{"dimensions": "4", "blockSize": [2], "dataType": "uint8", "compression": {"type": "raw"}}"#,
                "dimensions",
            ),
            (
                r#"{"dimensions": [4], "blockSize": [0], "dataType": "uint8", "compression": {"type": "raw"}}"#,
                "zero",
            ),
            (
                r#"{"dimensions": [4], "blockSize": [2], "dataType": "uint8"}"#,
                "compression",
            ),
            (
                r#"{"dimensions": [4], "blockSize": [2], "dataType": "uint8", "compression": {"type": "lz4", "blockSize": 65536}}"#,
                "lz4",
            ),
        ] {
            let err = zarray_of_dataset(&doc(text), "d/attributes.json")
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("d/attributes.json") && err.contains(needle),
                "{err}"
            );
        }
        let z = json!({"shape": [4], "chunks": [2], "dtype": "<u2", "compressor": null,
                       "fill_value": 0, "order": "C", "filters": null});
        assert!(zarray_for_create(&z).is_ok());
        for (name, value) in [
            ("fill_value", json!(3)),
            ("order", json!("F")),
            ("filters", json!([{"id": "delta", "dtype": "<u2"}])),
            ("dtype", json!("|b1")),
            ("compressor", json!({"id": "crc32"})),
        ] {
            let mut bad = z.clone();
            bad[name] = value;
            assert!(zarray_for_create(&bad).is_err(), "{name}");
        }
    }
}
