//! The `zarr.json` document of a Zarr v3 array or group (v3.1 core specification).
//!
//! Reading is tolerant where the specification asks (short-hand names, unknown members that
//! say `"must_understand": false`, zarr-python's `"consolidated_metadata": null`) and strict
//! elsewhere: any other unknown member, chunk grid or chunk key encoding is
//! [`Error::Unsupported`] naming it, never silently ignored.

use super::array::{ArrayMetadata, ChunkKeyEncoding, FormatMetadata};
use super::chunk_grid::ChunkGrid;
use super::chunk_guess::{guess_chunks, OBJECT_ITEM_SIZE};
use super::document::JsonDocument;
use crate::dtype::v3::{name_and_configuration, parse_data_type};
use crate::dtype::FillValue;
use crate::error::{Error, Result};
use serde_json::{json, Value};

/// What a `zarr.json` describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeType {
    /// `"node_type": "array"`
    Array,
    /// `"node_type": "group"`
    Group,
}

/// The members of an array `zarr.json`, in the order zarr-python 3 writes them.
const ARRAY_MEMBERS: [&str; 11] = [
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
    "attributes",
    "dimension_names",
    "zarr_format",
    "node_type",
    "storage_transformers",
];

/// The members of a group `zarr.json`.
const GROUP_MEMBERS: [&str; 4] = [
    "attributes",
    "zarr_format",
    "consolidated_metadata",
    "node_type",
];

/// Checks `zarr_format` and `node_type` and says which node the document describes.
pub fn node_type(doc: &JsonDocument, key: &str) -> Result<NodeType> {
    match doc.get("zarr_format") {
        Some(v) if v.as_u64() == Some(3) => {}
        Some(v) => {
            return Err(Error::Unsupported(format!(
                "{key:?}: zarr_format {v} (a zarr.json must say 3)"
            )))
        }
        None => {
            return Err(Error::InvalidMetadata(format!(
                "{key:?} has no zarr_format"
            )))
        }
    }
    match doc.get("node_type").as_ref().and_then(Value::as_str) {
        Some("array") => Ok(NodeType::Array),
        Some("group") => Ok(NodeType::Group),
        _ => Err(Error::InvalidMetadata(format!(
            "{key:?}: node_type must be \"array\" or \"group\", got {}",
            doc.raw("node_type").unwrap_or("nothing")
        ))),
    }
}

/// Fails with [`Error::Unsupported`] for a member that is neither known nor marked
/// `"must_understand": false`.
fn check_members(doc: &JsonDocument, known: &[&str]) -> Result<()> {
    for name in doc.names() {
        if known.contains(&name) {
            continue;
        }
        let optional = doc
            .get(name)
            .and_then(|v| v.get("must_understand").cloned())
            == Some(Value::Bool(false));
        if !optional {
            return Err(Error::Unsupported(format!(
                "unknown member {name:?} (not marked \"must_understand\": false){}",
                v2_member_hint(name)
            )));
        }
    }
    Ok(())
}

/// What a Zarr v2 (`.zarray`) member a v3 document holds by mistake is called in v3, as a
/// hint for the message refusing it ("" for other names).
fn v2_member_hint(name: &str) -> &'static str {
    match name {
        "chunks" => ": Zarr v3 gives the chunk shape as \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [...]}}",
        "dtype" => ": Zarr v3 names the type \"data_type\" (e.g. \"float64\")",
        "compressor" | "filters" => ": Zarr v3 lists every codec in \"codecs\" (e.g. [{\"name\": \"bytes\"}, {\"name\": \"zstd\"}])",
        "dimension_separator" => ": Zarr v3 says it in \"chunk_key_encoding\": {\"name\": \"default\", \"configuration\": {\"separator\": \"/\"}}",
        "order" => ": Zarr v3 orders chunks with a \"transpose\" codec",
        _ => "",
    }
}

/// Checks a group `zarr.json`; `key` names it in errors.
pub fn check_group(doc: &JsonDocument, key: &str) -> Result<()> {
    let checked = || -> Result<()> {
        if node_type(doc, key)? != NodeType::Group {
            return Err(Error::InvalidMetadata("node_type is not \"group\"".into()));
        }
        check_members(doc, &GROUP_MEMBERS)?;
        match doc.get("attributes") {
            None | Some(Value::Object(_)) => Ok(()),
            Some(v) => Err(Error::InvalidMetadata(format!(
                "attributes must be an object, got {v}"
            ))),
        }
    };
    checked().map_err(|e| e.context(key))
}

/// The `zarr.json` of a new group, as zarr-python 3 writes it.
pub fn group_document() -> JsonDocument {
    JsonDocument::from_value(&json!({"attributes": {}, "zarr_format": 3, "node_type": "group"}))
}

impl ArrayMetadata {
    /// Parses an array `zarr.json`; `key` names it in errors. The data type is given in
    /// little-endian order: the codec chain decides the stored order.
    pub fn parse_v3(doc: &JsonDocument, key: &str) -> Result<ArrayMetadata> {
        Self::parse_v3_document(doc).map_err(|e| e.context(key))
    }

    fn parse_v3_document(doc: &JsonDocument) -> Result<ArrayMetadata> {
        if node_type(doc, "")? != NodeType::Array {
            return Err(Error::InvalidMetadata("node_type is not \"array\"".into()));
        }
        check_members(doc, &ARRAY_MEMBERS)?;
        let required = |name: &str| {
            doc.get(name).ok_or_else(|| {
                Error::InvalidMetadata(format!("missing required member \"{name}\""))
            })
        };
        let shape = dims(&required("shape")?, "shape", 0)?;
        let parsed = parse_data_type(&required("data_type")?)?;
        let grid = chunk_grid(&required("chunk_grid")?)?;
        if grid.ndim() != shape.len() {
            return Err(Error::InvalidMetadata(format!(
                "shape has {} dimensions but the chunk shape has {}",
                shape.len(),
                grid.ndim()
            )));
        }
        grid.check_covers(&shape)?;
        let chunk_keys = chunk_key_encoding(&required("chunk_key_encoding")?)?;
        let fill_value = FillValue::parse_v3(&required("fill_value")?, &parsed.dtype)?;
        let codecs = match required("codecs")? {
            Value::Array(list) if !list.is_empty() => list,
            other => {
                return Err(Error::InvalidMetadata(format!(
                    "codecs must be a non-empty list, got {other}"
                )))
            }
        };
        match doc.get("storage_transformers") {
            None => {}
            Some(Value::Array(list)) if list.is_empty() => {}
            Some(Value::Array(list)) => {
                let names: Vec<String> = list
                    .iter()
                    .map(|t| {
                        name_and_configuration(t, "storage transformer")
                            .map_or_else(|_| t.to_string(), |(n, _)| n.to_string())
                    })
                    .collect();
                return Err(Error::Unsupported(format!(
                    "storage_transformers {names:?}"
                )));
            }
            Some(other) => {
                return Err(Error::InvalidMetadata(format!(
                    "storage_transformers must be a list, got {other}"
                )))
            }
        }
        let dimension_names = match doc.get("dimension_names") {
            None | Some(Value::Null) => None,
            Some(Value::Array(names)) if names.len() == shape.len() => Some(
                names
                    .iter()
                    .map(|n| match n {
                        Value::Null => Ok(None),
                        Value::String(s) => Ok(Some(s.clone())),
                        other => Err(Error::InvalidMetadata(format!(
                            "dimension_names must hold strings or null, got {other}"
                        ))),
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
            Some(other) => {
                return Err(Error::InvalidMetadata(format!(
                    "dimension_names must be a list of {} names, got {other}",
                    shape.len()
                )))
            }
        };
        match doc.get("attributes") {
            None | Some(Value::Object(_)) => {}
            Some(v) => {
                return Err(Error::InvalidMetadata(format!(
                    "attributes must be an object, got {v}"
                )))
            }
        }
        Ok(ArrayMetadata {
            shape,
            grid,
            dtype: parsed.dtype,
            fill_value,
            chunk_keys,
            format: FormatMetadata::V3 {
                codecs,
                object: parsed.object,
                dimension_names,
                document: doc.clone(),
            },
        })
    }

    /// Completes the `zarr.json` a caller gives to create an array: `shape` and `data_type` are
    /// required; `chunk_grid` (a regular grid of chunks guessed as zarr-python guesses them,
    /// [`guess_chunks`]), `chunk_key_encoding` (`default` with `/`), `fill_value`
    /// (zero of the type, as zarr-python 3 writes it), `codecs` (`bytes` then `zstd`;
    /// `vlen-utf8` or `vlen-bytes` then `zstd` for text and bytes), `attributes` (`{}`),
    /// `storage_transformers` (`[]`) and `node_type` are filled in when omitted, and the
    /// members put in zarr-python's order. The codecs are completed by the codec layer.
    pub fn complete_v3_for_create(user: &Value) -> Result<JsonDocument> {
        let obj = user.as_object().ok_or_else(|| {
            Error::InvalidMetadata(format!(
                "array metadata: expected a JSON object, got {user}"
            ))
        })?;
        let given = |name: &str| obj.get(name).cloned();
        let data_type = given("data_type").ok_or_else(|| {
            Error::InvalidMetadata("array metadata: missing required member \"data_type\"".into())
        })?;
        let parsed = parse_data_type(&data_type).map_err(|e| e.context("array metadata"))?;
        let default_codecs = match parsed.object {
            Some(crate::dtype::v3::ObjectKind::Text) => {
                json!([{"name": "vlen-utf8"}, {"name": "zstd"}])
            }
            Some(crate::dtype::v3::ObjectKind::Bytes) => {
                json!([{"name": "vlen-bytes"}, {"name": "zstd"}])
            }
            None => json!([{"name": "bytes"}, {"name": "zstd"}]),
        };
        // Without a chunk grid, chunks are guessed as zarr-python 3 guesses them.
        let shape = dims(
            obj.get("shape").ok_or_else(|| {
                Error::InvalidMetadata("array metadata: missing required member \"shape\"".into())
            })?,
            "array metadata: shape",
            0,
        )?;
        let item_size = match parsed.object {
            Some(_) => OBJECT_ITEM_SIZE,
            None => parsed.dtype.size as u64,
        };
        let guessed = guess_chunks(&shape, item_size);
        let defaults = [
            (
                "chunk_grid",
                json!({"name": "regular", "configuration": {"chunk_shape": guessed}}),
            ),
            (
                "chunk_key_encoding",
                json!({"name": "default", "configuration": {"separator": "/"}}),
            ),
            ("fill_value", FillValue::default_json_v3(&parsed.dtype)),
            ("codecs", default_codecs),
            ("attributes", json!({})),
            ("zarr_format", json!(3)),
            ("node_type", json!("array")),
            ("storage_transformers", json!([])),
        ];
        let mut doc = JsonDocument::default();
        for name in ARRAY_MEMBERS {
            let value = given(name).or_else(|| {
                defaults
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.clone())
            });
            if let Some(v) = value {
                doc.set(name, &v);
            }
        }
        for (name, value) in obj {
            if !ARRAY_MEMBERS.contains(&name.as_str()) {
                doc.set(name, value);
            }
        }
        Ok(doc)
    }
}

/// Reads a list of dimension lengths, each at least `min`.
pub(super) fn dims(value: &Value, name: &str, min: u64) -> Result<Vec<u64>> {
    value
        .as_array()
        .and_then(|list| {
            list.iter()
                .map(|v| v.as_u64().filter(|&n| n >= min))
                .collect::<Option<Vec<u64>>>()
        })
        .ok_or_else(|| {
            Error::InvalidMetadata(format!(
                "{name} must be a list of integers >= {min}, got {value}"
            ))
        })
}

/// The `regular` or `rectilinear` chunk grid of a `chunk_grid` member.
fn chunk_grid(value: &Value) -> Result<ChunkGrid> {
    let (name, config) = name_and_configuration(value, "chunk_grid")?;
    ChunkGrid::parse_v3(name, config)
}

/// The `chunk_key_encoding` names of Zarr v3 read.
pub const CHUNK_KEY_ENCODINGS: [&str; 2] = ["default", "v2"];

/// The `default` and `v2` chunk key encodings.
fn chunk_key_encoding(value: &Value) -> Result<ChunkKeyEncoding> {
    let (name, config) = name_and_configuration(value, "chunk_key_encoding")?;
    let (prefixed, default) = match name {
        "default" => (true, '/'),
        "v2" => (false, '.'),
        other => return Err(Error::Unsupported(format!("chunk_key_encoding {other:?}"))),
    };
    let separator = match config.and_then(|c| c.get("separator")) {
        None => default,
        Some(v) if v == "/" => '/',
        Some(v) if v == "." => '.',
        Some(v) => {
            return Err(Error::InvalidMetadata(format!(
                "chunk_key_encoding {name:?}: separator must be \"/\" or \".\", got {v}"
            )))
        }
    };
    Ok(ChunkKeyEncoding {
        prefixed,
        separator,
        unstated: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zarr_python_doc() -> Value {
        json!({
            "shape": [10, 7], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": "NaN",
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "zstd", "configuration": {"level": 0, "checksum": false}}],
            "attributes": {}, "dimension_names": ["y", null], "zarr_format": 3,
            "node_type": "array", "storage_transformers": []
        })
    }

    fn parse(v: &Value) -> Result<ArrayMetadata> {
        ArrayMetadata::parse_v3(&JsonDocument::from_value(v), "a/zarr.json")
    }

    #[test]
    fn parses_what_zarr_python_writes() {
        let m = parse(&zarr_python_doc()).unwrap();
        assert_eq!(
            (m.shape.clone(), m.grid.regular_shape()),
            (vec![10, 7], Some(&[4, 4][..]))
        );
        assert_eq!(m.chunk_keys.name(&[1, 0]), "c/1/0");
        assert_eq!(m.dimension_names().unwrap(), [Some("y".to_string()), None]);
        assert!(f32::from_ne_bytes(m.fill_value.0.clone().unwrap().try_into().unwrap()).is_nan());
        assert_eq!(m.zarr_format(), 3);
        assert_eq!(m.document_json(&[3, 7], &m.grid)["shape"], json!([3, 7]));
    }

    #[test]
    fn refuses_unknown_and_malformed_members() {
        for (name, value, unsupported) in [
            ("zarr_format", json!(2), true),
            ("node_type", json!("grp"), false),
            ("shape", json!([-1, 2]), false),
            (
                "chunk_grid",
                json!({"name": "rectangular", "configuration": {}}),
                true,
            ),
            (
                "chunk_grid",
                json!({"name": "rectilinear", "configuration": {}}),
                false,
            ),
            (
                "chunk_grid",
                json!({"name": "rectilinear", "configuration":
                    {"kind": "inline", "chunk_shapes": [[1, 2], 3]}}),
                false,
            ),
            (
                "chunk_grid",
                json!({"name": "regular", "configuration": {"chunk_shape": [0, 1]}}),
                false,
            ),
            (
                "chunk_grid",
                json!({"name": "regular", "configuration": {"chunk_shape": [1]}}),
                false,
            ),
            ("chunk_key_encoding", json!({"name": "template"}), true),
            (
                "chunk_key_encoding",
                json!({"name": "default", "configuration": {"separator": "-"}}),
                false,
            ),
            ("fill_value", json!("nope"), false),
            ("fill_value", Value::Null, false),
            ("codecs", json!([]), false),
            (
                "storage_transformers",
                json!([{"name": "chunk-manifest-json"}]),
                true,
            ),
            ("dimension_names", json!(["a"]), false),
            ("dimension_names", json!([1, 2]), false),
            ("attributes", json!([]), false),
            ("data_type", json!("int128"), true),
            ("something_new", json!({"must_understand": true}), true),
            ("something_new", json!(1), true),
        ] {
            let mut doc = zarr_python_doc();
            doc[name] = value.clone();
            let err = parse(&doc).unwrap_err();
            assert_eq!(
                matches!(err, Error::Unsupported(_)),
                unsupported,
                "{name} {value}: {err}"
            );
            assert!(err.to_string().contains("a/zarr.json"), "{err}");
        }
        let mut doc = zarr_python_doc();
        doc["something_new"] = json!({"must_understand": false, "x": 1});
        assert!(parse(&doc).is_ok());
        doc.as_object_mut().unwrap().remove("fill_value");
        assert!(parse(&doc).unwrap_err().to_string().contains("fill_value"));
        // A .zarray member in a v3 document is refused with its v3 spelling.
        for (v2, v3) in [
            ("chunks", "chunk_grid"),
            ("dtype", "data_type"),
            ("compressor", "codecs"),
        ] {
            let mut doc = zarr_python_doc();
            doc[v2] = json!([2]);
            let err = parse(&doc).unwrap_err().to_string();
            assert!(err.contains(v2) && err.contains(v3), "{err}");
        }
    }

    #[test]
    fn groups_and_creation_defaults() {
        let doc = JsonDocument::parse(
            br#"{"attributes": {"a": NaN}, "zarr_format": 3, "consolidated_metadata": null, "node_type": "group"}"#,
            "zarr.json",
        )
        .unwrap();
        check_group(&doc, "zarr.json").unwrap();
        assert_eq!(node_type(&group_document(), "k").unwrap(), NodeType::Group);
        let bad =
            JsonDocument::from_value(&json!({"zarr_format": 3, "node_type": "group", "x": 1}));
        assert!(matches!(check_group(&bad, "k"), Err(Error::Unsupported(_))));
        let doc = ArrayMetadata::complete_v3_for_create(&json!({
            "zarr_format": 3, "shape": [4], "data_type": "string",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}}
        }))
        .unwrap();
        let names: Vec<&str> = doc.names().collect();
        assert_eq!(
            names,
            [
                "shape",
                "data_type",
                "chunk_grid",
                "chunk_key_encoding",
                "fill_value",
                "codecs",
                "attributes",
                "zarr_format",
                "node_type",
                "storage_transformers"
            ]
        );
        assert_eq!(doc.get("codecs").unwrap()[0]["name"], "vlen-utf8");
        assert_eq!(doc.get("fill_value").unwrap(), json!(""));
    }
}
