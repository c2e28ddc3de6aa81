//! A JSON object document kept as the exact text of each top-level member, so that rewriting
//! one member (a shape, the attributes) leaves the others byte for byte as they were, bare
//! `NaN`/`Infinity` attribute values included (zarr-python writes those, as Python's `json`
//! module does).

use super::python_constants_masked;
use crate::error::{Error, Result};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;

/// A JSON object: its members in document order, each as its exact text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JsonDocument {
    members: Vec<(String, String)>,
}

/// Collects the members of an object as raw values, in order.
struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Vec<(String, &'de RawValue)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
            out.push((key, value));
        }
        Ok(out)
    }
}

impl JsonDocument {
    /// Parses a stored document (`key` names it in errors): a JSON object whose values may
    /// hold bare `NaN`, `Infinity` and `-Infinity`. A member named twice keeps its last value.
    pub fn parse(bytes: &[u8], key: &str) -> Result<JsonDocument> {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| Error::InvalidMetadata(format!("{key:?} is not valid UTF-8")))?;
        let masked = python_constants_masked(text);
        let mut de = serde_json::Deserializer::from_str(&masked);
        let raw = de
            .deserialize_map(MembersVisitor)
            .and_then(|m| de.end().map(|()| m))
            .map_err(|e| {
                Error::InvalidMetadata(format!("{key:?} is not a valid JSON object: {e}"))
            })?;
        let mut doc = JsonDocument::default();
        for (name, value) in raw {
            let start = value.get().as_ptr() as usize - masked.as_ptr() as usize;
            let original = &text[start..start + value.get().len()];
            doc.set_raw(&name, dedented(original));
        }
        Ok(doc)
    }

    /// A document of the members of a JSON object, in its order.
    pub fn from_value(value: &Value) -> JsonDocument {
        let mut doc = JsonDocument::default();
        if let Value::Object(map) = value {
            for (k, v) in map {
                doc.set(k, v);
            }
        }
        doc
    }

    /// The member `name` parsed (bare `NaN`/`Infinity` read as zeros: metadata fields never
    /// hold them, and attributes are read as text with [`JsonDocument::raw`]).
    pub fn get(&self, name: &str) -> Option<Value> {
        let raw = self.raw(name)?;
        Some(serde_json::from_str(&python_constants_masked(raw)).unwrap_or(Value::Null))
    }

    /// The exact text of the member `name`.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.members
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the member `name` is present.
    pub fn contains(&self, name: &str) -> bool {
        self.raw(name).is_some()
    }

    /// The member names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|(k, _)| k.as_str())
    }

    /// Sets the member `name` to `value` (in place if present, else last).
    pub fn set(&mut self, name: &str, value: &Value) {
        self.set_raw(name, pretty(value));
    }

    /// Sets the member `name` to the JSON text `text`, kept exactly.
    pub fn set_raw(&mut self, name: &str, text: String) {
        match self.members.iter_mut().find(|(k, _)| k == name) {
            Some((_, v)) => *v = text,
            None => self.members.push((name.to_string(), text)),
        }
    }

    /// Sets the member `name` to the JSON text `text`: in place if present, else just before
    /// the member `before` (last when there is none).
    pub fn set_raw_before(&mut self, name: &str, text: String, before: &str) {
        if self.contains(name) {
            return self.set_raw(name, text);
        }
        let at = self
            .members
            .iter()
            .position(|(k, _)| k == before)
            .unwrap_or(self.members.len());
        self.members.insert(at, (name.to_string(), text));
    }

    /// Removes the member `name`.
    pub fn remove(&mut self, name: &str) {
        self.members.retain(|(k, _)| k != name);
    }

    /// The document as zarr-python 3 writes it: two-space indent, members in order.
    pub fn render(&self) -> Vec<u8> {
        if self.members.is_empty() {
            return b"{}".to_vec();
        }
        let body: Vec<String> = self
            .members
            .iter()
            .map(|(k, v)| {
                let key = serde_json::to_string(k).expect("a string serialises");
                format!("  {key}: {}", v.trim().replace('\n', "\n  "))
            })
            .collect();
        format!("{{\n{}\n}}", body.join(",\n")).into_bytes()
    }
}

/// A member's text without the indentation its continuation lines share: the document's own
/// nesting, which [`JsonDocument::render`] adds back, so that a document read and written
/// again keeps its layout instead of indenting its members further each time. Only whitespace
/// between tokens changes (JSON strings hold no line breaks).
fn dedented(value: &str) -> String {
    let leading = |line: &str| line.len() - line.trim_start_matches(' ').len();
    let indent = value
        .split('\n')
        .skip(1)
        .filter(|line| !line.trim().is_empty())
        .map(leading)
        .min()
        .unwrap_or(0);
    if indent == 0 {
        return value.to_string();
    }
    let lines: Vec<&str> = value
        .split('\n')
        .enumerate()
        .map(|(i, line)| match i {
            0 => line,
            _ => &line[leading(line).min(indent)..],
        })
        .collect();
    lines.join("\n")
}

/// `value` with two-space indent, as zarr-python 3 writes its documents.
fn pretty(value: &Value) -> String {
    use serde::Serialize;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"  ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    value
        .serialize(&mut ser)
        .expect("serialising a JSON value cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_members_exactly_and_in_order() {
        let text =
            "{\"b\": [1,  2], \"attributes\": {\"x\": NaN, \"s\": \"NaN\"}, \"a\": -Infinity}";
        let mut doc = JsonDocument::parse(text.as_bytes(), "k").unwrap();
        assert_eq!(doc.names().collect::<Vec<_>>(), ["b", "attributes", "a"]);
        assert_eq!(doc.raw("attributes"), Some("{\"x\": NaN, \"s\": \"NaN\"}"));
        assert_eq!(doc.get("b"), Some(json!([1, 2])));
        doc.set("b", &json!([3]));
        doc.set("c", &json!({"d": null}));
        let again = JsonDocument::parse(&doc.render(), "k").unwrap();
        assert_eq!(again.raw("attributes"), doc.raw("attributes"));
        assert_eq!(again.get("b"), Some(json!([3])));
        assert_eq!(again.get("c"), Some(json!({"d": null})));
        assert_eq!(
            String::from_utf8(JsonDocument::from_value(&json!({"a": [1]})).render()).unwrap(),
            "{\n  \"a\": [\n    1\n  ]\n}"
        );
        doc.remove("a");
        assert!(!doc.contains("a"));
    }

    #[test]
    fn refuses_what_is_not_an_object() {
        for bad in [&b"[1]"[..], b"{", b"{} x", b"\xff", b"{\"a\": nan}"] {
            let err = JsonDocument::parse(bad, "a/zarr.json").unwrap_err();
            assert!(err.to_string().contains("a/zarr.json"), "{err}");
        }
    }

    #[test]
    fn rewriting_leaves_a_rendered_document_as_it_was() {
        let mut doc = JsonDocument::default();
        doc.set("shape", &json!([8, 12]));
        doc.set(
            "chunk_grid",
            &json!({"name": "regular", "configuration": {"chunk_shape": [4]}}),
        );
        doc.set_raw("attributes", "{\"x\": NaN}".to_string());
        let first = doc.render();
        let mut again = JsonDocument::parse(&first, "k").unwrap();
        again.set("shape", &json!([8, 12]));
        assert_eq!(
            String::from_utf8(again.render()).unwrap(),
            String::from_utf8(first).unwrap()
        );
    }
}
