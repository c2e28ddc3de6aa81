//! The JSON documents of a hierarchy: `.zarray`, `.zgroup`, `.zattrs` (Zarr v2) and
//! `zarr.json` (Zarr v3), parsed into one array model ([`ArrayMetadata`]).

use crate::error::{Error, Result};
use serde_json::Value;

mod array;
mod chunk_grid;
mod chunk_guess;
mod document;
pub mod n5;
mod zarr_json;
mod zarray;

pub use array::{ArrayMetadata, ChunkKeyEncoding, FormatMetadata, Order};
pub use chunk_grid::{Axis, ChunkGrid, CHUNK_GRIDS};
pub use document::JsonDocument;
pub use zarr_json::{
    check_group as check_group_v3, group_document as group_document_v3, node_type, NodeType,
    CHUNK_KEY_ENCODINGS,
};

/// Key of a Zarr v3 node's metadata document (array or group, attributes included).
pub const ZARR_JSON: &str = "zarr.json";
/// Key of an array's metadata document.
pub const ZARRAY: &str = ".zarray";
/// Key of a group's metadata document.
pub const ZGROUP: &str = ".zgroup";
/// Key of a node's user attributes.
pub const ZATTRS: &str = ".zattrs";

/// Serialises JSON the way zarr-python does: keys sorted at every level, four-space indent.
pub fn to_document(value: &Value) -> Vec<u8> {
    use serde::Serialize;
    let sorted = sort_keys(value);
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    sorted
        .serialize(&mut ser)
        .expect("serialising a JSON value cannot fail");
    out
}

/// A copy of `value` with the keys of every object sorted, as zarr-python writes them.
pub fn sort_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sort_keys(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}

/// Parses a stored JSON document, naming its key on failure.
pub fn parse_document(bytes: &[u8], key: &str) -> Result<Value> {
    serde_json::from_slice(bytes)
        .map_err(|e| Error::InvalidMetadata(format!("{key:?} is not valid JSON: {e}")))
}

/// Checks a `.zgroup` document: an object whose `zarr_format` is 2.
pub fn check_group_document(doc: &Value, key: &str) -> Result<()> {
    match doc.get("zarr_format") {
        Some(v) if v.as_u64() == Some(2) => Ok(()),
        Some(v) => Err(Error::Unsupported(format!(
            "{key:?}: zarr_format {v} (only 2 is supported)"
        ))),
        None => Err(Error::InvalidMetadata(format!(
            "{key:?} has no zarr_format"
        ))),
    }
}

/// The `.zgroup` document libzarr writes.
pub fn group_document() -> Vec<u8> {
    to_document(&serde_json::json!({ "zarr_format": 2 }))
}

/// Checks user attributes (`.zattrs` or a caller's JSON) and returns them as text: a JSON
/// object, where the bare tokens `NaN`, `Infinity` and `-Infinity` are allowed as values
/// because zarr-python writes non-finite floats that way (Python's `json` module).
pub fn check_attributes(text: &[u8], what: &str) -> Result<String> {
    let text = std::str::from_utf8(text)
        .map_err(|_| Error::InvalidMetadata(format!("{what} is not valid UTF-8")))?;
    let value: Value = serde_json::from_str(&python_constants_masked(text))
        .map_err(|e| Error::InvalidMetadata(format!("{what} is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(Error::InvalidMetadata(format!(
            "{what} must be a JSON object, got {value}"
        )));
    }
    Ok(text.to_string())
}

/// `text` with every `NaN`, `Infinity` and `-Infinity` token outside strings replaced by a
/// zero of the same length, so that a strict JSON parser can check the rest and the byte
/// offsets of what it parses are those of `text`.
pub fn python_constants_masked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            (in_string, escaped) = (escaped || c != '"', !escaped && c == '\\');
        } else if c == '"' {
            in_string = true;
        } else if let Some((token, zero)) = [
            ("NaN", "0.0"),
            ("Infinity", "0.000000"),
            ("-Infinity", "-0.000000"),
        ]
        .iter()
        .find(|(t, _)| rest.starts_with(*t))
        {
            out.push_str(zero);
            rest = &rest[token.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn documents_are_sorted_and_indented_like_zarr_python() {
        let doc = to_document(&json!({"b": 1, "a": {"z": [1, 2], "c": null}}));
        let text = String::from_utf8(doc).unwrap();
        assert_eq!(
            text,
            "{\n    \"a\": {\n        \"c\": null,\n        \"z\": [\n            1,\n            2\n        ]\n    },\n    \"b\": 1\n}"
        );
    }

    #[test]
    fn attributes_must_be_objects() {
        assert!(check_attributes(b"{\"a\": 1}", "x").is_ok());
        for bad in [
            &b"[1]"[..],
            b"{",
            b"{\"a\": nan}",
            b"{\"a\": NaNa}",
            b"\xff",
        ] {
            assert!(matches!(
                check_attributes(bad, "x"),
                Err(Error::InvalidMetadata(_))
            ));
        }
    }

    #[test]
    fn attributes_may_hold_python_constants() {
        let text = r#"{"a": NaN, "b": [Infinity, -Infinity], "NaN": "x\" NaN"}"#;
        assert_eq!(check_attributes(text.as_bytes(), "x").unwrap(), text);
        assert_eq!(
            python_constants_masked(text),
            r#"{"a": 0.0, "b": [0.000000, -0.000000], "NaN": "x\" NaN"}"#
        );
    }

    #[test]
    fn group_documents_need_format_2() {
        assert!(check_group_document(&json!({"zarr_format": 2}), "k").is_ok());
        assert!(check_group_document(&json!({"zarr_format": 3}), "k").is_err());
        assert!(check_group_document(&json!({}), "k").is_err());
    }
}
