//! `zarr info`: what a node is, as text (`name: value` lines) or JSON.

use crate::{kind_name, Node, Result};
use serde_json::{json, Value};
use zarr::hierarchy::NodeKind;
use zarr::{Array, Group};

/// The node's facts: for an array the library's `info` (type, shape, chunks, codecs, sizes,
/// chunks stored) with its fill value and attributes, for a group its members and attributes.
/// `store` is given as the location it was opened with.
pub fn run(node: &Node, json: bool) -> Result<String> {
    let (store, path, found) = node.find(false)?;
    let mut facts = json!({"kind": kind_name(found.kind), "zarr_format": found.format});
    let (details, attributes) = match found.kind {
        NodeKind::Array => {
            let array = Array::open(store, &path)?;
            let mut details = array.info()?;
            details["fill_value"] = array.metadata_json()?["fill_value"].clone();
            (details, array.attributes()?)
        }
        _ => {
            let group = Group::open(store, &path)?;
            (group.info()?, group.attributes()?)
        }
    };
    if let (Value::Object(facts), Value::Object(details)) = (&mut facts, details) {
        facts.extend(details);
    }
    facts["attributes"] = crate::attributes_json(attributes);
    Ok(match json {
        true => serde_json::to_string_pretty(&facts)?,
        false => as_text(&facts),
    })
}

/// One `name: value` line per fact, names aligned; strings bare, other values as compact JSON.
fn as_text(facts: &Value) -> String {
    let Some(facts) = facts.as_object() else {
        return facts.to_string();
    };
    let width = facts.keys().map(String::len).max().unwrap_or(0);
    facts
        .iter()
        .map(|(name, value)| match value {
            Value::String(text) => format!("{name:width$} : {text}"),
            other => format!("{name:width$} : {other}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
