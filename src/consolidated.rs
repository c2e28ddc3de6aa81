//! Consolidated metadata: every metadata document of a hierarchy in one place, so a hierarchy
//! opens with one read instead of one per node. Zarr v2 keeps them in a `.zmetadata` document
//! at the store's root, in zarr-python's format
//! (`{"metadata": {key: document, ...}, "zarr_consolidated_format": 1}`); Zarr v3 (as zarr-python
//! 3 writes it) in the root group's `zarr.json`, as its member
//! `"consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {path:
//! document, ...}}` with each node's `zarr.json` by its path.

use crate::error::{Error, Result};
use crate::metadata::{self, JsonDocument, ZARR_JSON, ZATTRS};
use crate::path;
use crate::store::{MetadataDocuments, StoreHandle};
use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;
use std::collections::HashMap;

/// Key of the v2 consolidated metadata document.
pub const ZMETADATA: &str = ".zmetadata";

/// The member of a v3 root group's `zarr.json` holding the consolidated metadata.
const V3_MEMBER: &str = "consolidated_metadata";

/// The one v2 consolidated format there is.
const FORMAT: u64 = 1;

/// Reads the consolidated metadata, if the store has any, and answers metadata keys from it
/// from now on; without, metadata is read from the store as usual. Returns whether it was
/// found. Also refreshes consolidated metadata that went stale. A v3 root (`zarr.json`) uses
/// its own consolidated metadata and never a `.zmetadata` beside it. On failure the store
/// keeps what it used.
pub fn load(store: &StoreHandle) -> Result<bool> {
    keeping_on_failure(store, load_afresh)
}

/// Runs `f` on the store with no consolidated metadata in use (so that it reads the stored
/// documents); when it fails, the store goes on with what it used before.
fn keeping_on_failure<T>(
    store: &StoreHandle,
    f: impl FnOnce(&StoreHandle) -> Result<T>,
) -> Result<T> {
    let before = store.consolidated_documents();
    store.use_consolidated(None);
    let result = f(store);
    if result.is_err() {
        store.use_consolidated(before);
    }
    result
}

fn load_afresh(store: &StoreHandle) -> Result<bool> {
    // Both asked for at once: one round trip on a remote store.
    let key = store.consolidated_key();
    let [root, zmetadata]: [Option<Vec<u8>>; 2] = store
        .get_all(&[ZARR_JSON.to_string(), key.to_string()])?
        .try_into()
        .expect("two values for two keys");
    if let Some(root) = root {
        let Some(documents) = parse_v3(&root)? else {
            return Ok(false);
        };
        store.use_consolidated(Some(documents));
        return Ok(true);
    }
    let Some(bytes) = zmetadata else {
        return Ok(false);
    };
    store.use_consolidated(Some(parse(&bytes, key)?));
    Ok(true)
}

/// The consolidated metadata the store answers from, as one document in `.zmetadata`'s format
/// holding every document by key (`zarr.json` ones too); `None` when it uses none. Nothing is
/// read: for another handle to [`adopt`].
pub fn in_use(store: &StoreHandle) -> Result<Option<Vec<u8>>> {
    store
        .consolidated_documents()
        .map(|d| render(&d))
        .transpose()
}

/// Answers metadata keys from `document`, consolidated metadata as [`in_use`] gives it, from
/// now on (`None`: from the store); nothing is read.
pub fn adopt(store: &StoreHandle, document: Option<&[u8]>) -> Result<()> {
    let documents = document
        .map(|d| parse(d, "the consolidated metadata given"))
        .transpose()?;
    store.use_consolidated(documents);
    Ok(())
}

/// Consolidates the store's metadata documents (read from the store itself, not from
/// consolidated metadata in use) and uses them from now on: into `.zmetadata` for a v2
/// hierarchy, into the root group's `zarr.json` for a v3 one. On failure the store keeps
/// what it used.
pub fn consolidate(store: &StoreHandle) -> Result<()> {
    keeping_on_failure(store, consolidate_afresh)
}

fn consolidate_afresh(store: &StoreHandle) -> Result<()> {
    if store.contains(ZARR_JSON)? {
        return consolidate_v3(store);
    }
    let key = store.consolidated_key();
    store.check_writable(key)?;
    let mut documents = MetadataDocuments::new();
    for listed in store.list_prefix("")? {
        // v3 nodes below a v2 root are not part of its `.zmetadata` (zarr-python 3 refuses one
        // that names them); they are read from the store.
        if !path::is_metadata_key(&listed) || path::last_segment(&listed) == ZARR_JSON {
            continue;
        }
        let Some(bytes) = store.get(&listed)? else {
            continue; // Removed since the listing.
        };
        check_document(&listed, &bytes)?;
        documents.insert(listed, bytes);
    }
    store.set(key, &render(&documents)?)?;
    store.use_consolidated(Some(documents));
    Ok(())
}

/// Writes every `zarr.json` below the root into the root group's `zarr.json` as zarr-python 3
/// does: by path, shallower first, then by name; nested groups with an empty consolidated
/// metadata of their own.
fn consolidate_v3(store: &StoreHandle) -> Result<()> {
    store.check_writable(ZARR_JSON)?;
    let mut nodes: Vec<(String, JsonDocument)> = Vec::new();
    for key in store.list_prefix("")? {
        let Some(node) = key.strip_suffix(&format!("/{ZARR_JSON}")) else {
            continue;
        };
        let Some(bytes) = store.get(&key)? else {
            continue; // Removed since the listing.
        };
        let mut doc = JsonDocument::parse(&bytes, &key)?;
        if doc.get("node_type") == Some(json!("group")) {
            doc.set_raw_before(V3_MEMBER, inline(&JsonDocument::default()), "node_type");
        }
        nodes.push((node.to_string(), doc));
    }
    nodes.sort_by(|(a, _), (b, _)| (a.matches('/').count(), a).cmp(&(b.matches('/').count(), b)));
    let mut listed = JsonDocument::default();
    for (node, doc) in &nodes {
        listed.set_raw(node, rendered(doc));
    }
    let written = {
        let _lock = store.lock_chunk(ZARR_JSON)?;
        let Some(bytes) = store.get(ZARR_JSON)? else {
            return Err(Error::NotFound(format!("{ZARR_JSON:?} vanished")));
        };
        let mut root = JsonDocument::parse(&bytes, ZARR_JSON)?;
        if root.get("node_type") != Some(json!("group")) {
            return Err(Error::InvalidArgument(format!(
                "{ZARR_JSON:?} is not a group: consolidated metadata belongs in a root group"
            )));
        }
        root.set_raw_before(V3_MEMBER, inline(&listed), "node_type");
        let written = root.render();
        store.set(ZARR_JSON, &written)?;
        written
    };
    // Used as written, not read back: once the document is stored the call has succeeded, and
    // a failed read now would report a failure for a store that did change.
    store.use_consolidated(parse_v3(&written)?);
    Ok(())
}

/// The text of the v3 consolidated metadata member listing `metadata`.
fn inline(metadata: &JsonDocument) -> String {
    let mut doc = JsonDocument::default();
    doc.set("kind", &json!("inline"));
    doc.set("must_understand", &json!(false));
    doc.set_raw("metadata", rendered(metadata));
    rendered(&doc)
}

fn rendered(doc: &JsonDocument) -> String {
    String::from_utf8(doc.render()).expect("documents are UTF-8")
}

/// The metadata documents of a v3 root `zarr.json`'s consolidated metadata, the root's own
/// document among them; `None` when it has none (absent or `null`).
fn parse_v3(root: &[u8]) -> Result<Option<MetadataDocuments>> {
    let bad = |why: String| Error::InvalidMetadata(format!("{ZARR_JSON:?}: {V3_MEMBER}: {why}"));
    let doc = JsonDocument::parse(root, ZARR_JSON)?;
    let Some(text) = doc.raw(V3_MEMBER) else {
        return Ok(None);
    };
    if text.trim() == "null" {
        return Ok(None);
    }
    #[derive(Deserialize)]
    struct Inline<'a> {
        kind: String,
        #[serde(borrow)]
        metadata: HashMap<String, &'a RawValue>,
    }
    let masked = metadata::python_constants_masked(text);
    let inline: Inline =
        serde_json::from_str(&masked).map_err(|e| bad(format!("not valid: {e}")))?;
    if inline.kind != "inline" {
        return Err(Error::Unsupported(format!(
            "{ZARR_JSON:?}: {V3_MEMBER} of kind {:?} (only \"inline\" is known)",
            inline.kind
        )));
    }
    let mut documents = MetadataDocuments::new();
    documents.insert(ZARR_JSON.to_string(), root.to_vec());
    for (node, raw) in inline.metadata {
        if node.is_empty() || path::normalize(&node).ok().as_deref() != Some(node.as_str()) {
            return Err(bad(format!("{node:?} is not a node path")));
        }
        let key = path::join(&node, ZARR_JSON);
        path::validate_key(&key)?;
        documents.insert(key, original_text(text, &masked, raw, &node, &bad)?);
    }
    Ok(Some(documents))
}

/// The exact text in `text` of the JSON object `raw` parsed from `masked` (the same text with
/// non-finite numbers masked); an error naming `name` when it is not an object.
fn original_text(
    text: &str,
    masked: &str,
    raw: &RawValue,
    name: &str,
    bad: &dyn Fn(String) -> Error,
) -> Result<Vec<u8>> {
    let start = raw.get().as_ptr() as usize - masked.as_ptr() as usize;
    let original = &text[start..start + raw.get().len()];
    if !original.starts_with('{') {
        return Err(bad(format!("{name:?} is not a JSON object")));
    }
    Ok(original.as_bytes().to_vec())
}

/// Checks a metadata document: attributes as zarr-python writes them (non-finite numbers
/// allowed), the other documents strict JSON objects.
fn check_document(key: &str, bytes: &[u8]) -> Result<()> {
    if path::last_segment(key) == ZATTRS {
        return metadata::check_attributes(bytes, key).map(drop);
    }
    match metadata::parse_document(bytes, key)? {
        serde_json::Value::Object(_) => Ok(()),
        other => Err(Error::InvalidMetadata(format!(
            "{key:?} must be a JSON object, got {other}"
        ))),
    }
}

/// The `.zmetadata` document for `documents`: keys sorted, four-space indent, each document
/// embedded as stored (so attributes keep their exact text, `NaN` included).
fn render(documents: &MetadataDocuments) -> Result<Vec<u8>> {
    let mut out = String::from("{\n    \"metadata\": {");
    for (i, (key, bytes)) in documents.iter().enumerate() {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| Error::InvalidMetadata(format!("{key:?} is not valid UTF-8")))?;
        let key = serde_json::to_string(key).expect("a string serialises");
        let separator = if i == 0 { "" } else { "," };
        out.push_str(&format!(
            "{separator}\n        {key}: {}",
            text.trim().replace('\n', "\n        ")
        ));
    }
    out.push_str(&format!(
        "\n    }},\n    \"zarr_consolidated_format\": {FORMAT}\n}}"
    ));
    Ok(out.into_bytes())
}

#[derive(Deserialize)]
struct Document<'a> {
    #[serde(borrow)]
    metadata: HashMap<String, &'a RawValue>,
    zarr_consolidated_format: u64,
}

/// Parses a `.zmetadata` document into its metadata documents, each kept as its exact text.
/// Only metadata keys with valid store keys are accepted.
fn parse(bytes: &[u8], key: &str) -> Result<MetadataDocuments> {
    let bad = |why: String| Error::InvalidMetadata(format!("{key:?}: {why}"));
    let text = std::str::from_utf8(bytes).map_err(|_| bad("not valid UTF-8".into()))?;
    // zarr-python writes non-finite attribute values as bare NaN/Infinity: parse a copy where
    // they are numbers of the same length, then take each document's text from the original.
    let masked = metadata::python_constants_masked(text);
    let doc: Document =
        serde_json::from_str(&masked).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    if doc.zarr_consolidated_format != FORMAT {
        return Err(Error::Unsupported(format!(
            "{key:?}: zarr_consolidated_format {} (only {FORMAT} is supported)",
            doc.zarr_consolidated_format
        )));
    }
    let mut documents = MetadataDocuments::new();
    for (key, raw) in doc.metadata {
        path::validate_key(&key).map_err(|e| bad(e.to_string()))?;
        if !path::is_metadata_key(&key) {
            return Err(bad(format!("{key:?} is not a metadata key")));
        }
        let original = original_text(text, &masked, raw, &key, &bad)?;
        documents.insert(key, original);
    }
    Ok(documents)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::OpenMode;
    use crate::{Array, Group};

    #[test]
    fn round_trips_documents_exactly() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        Group::create(store.clone(), "g").unwrap();
        let a = Array::create(
            store.clone(),
            "g/a",
            r#"{"shape": [2], "chunks": [2], "dtype": "<f8"}"#,
        )
        .unwrap();
        a.set_attributes(r#"{"x": NaN, "y": [-Infinity], "s": "NaN \" \u00e9"}"#)
            .unwrap();
        consolidate(&store).unwrap();
        let documents = parse(&store.get(ZMETADATA).unwrap().unwrap(), ZMETADATA).unwrap();
        let keys: Vec<&String> = documents.keys().collect();
        assert_eq!(keys, [".zgroup", "g/.zgroup", "g/a/.zarray", "g/a/.zattrs"]);
        // The same documents, up to indentation, NaN and all.
        let as_value = |bytes: &[u8]| -> serde_json::Value {
            let text = std::str::from_utf8(bytes).unwrap();
            serde_json::from_str(&metadata::python_constants_masked(text)).unwrap()
        };
        for (key, value) in &documents {
            let stored = store.get(key).unwrap().unwrap();
            assert_eq!(as_value(value), as_value(&stored), "{key}");
        }
        assert!(std::str::from_utf8(&documents["g/a/.zattrs"])
            .unwrap()
            .contains("[-Infinity]"));
    }

    #[test]
    fn answers_metadata_from_the_consolidated_document() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        Array::create(
            store.clone(),
            "a",
            r#"{"shape": [2], "chunks": [2], "dtype": "<i4"}"#,
        )
        .unwrap();
        consolidate(&store).unwrap();
        assert!(store.uses_consolidated());
        // Documents that went stale hide the array until a refresh.
        store.use_consolidated(Some(MetadataDocuments::new()));
        assert!(Array::open(store.clone(), "a").is_err());
        assert!(load(&store).unwrap());
        assert_eq!(Array::open(store.clone(), "a").unwrap().shape(), vec![2]);
        // Writes through the handle keep it current.
        Group::create(store.clone(), "g").unwrap();
        crate::hierarchy::delete_node(&store, "a").unwrap();
        let root = Group::open(store.clone(), "").unwrap();
        assert_eq!(root.members().unwrap().groups, vec!["g"]);
        assert!(root.members().unwrap().arrays.is_empty());
    }

    /// Consolidated metadata answers node lookups only: raw key operations (gets, copies)
    /// see the documents as stored, byte for byte, even where a stale `.zmetadata` holds
    /// older ones.
    #[test]
    fn raw_key_operations_see_the_stored_documents() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        Group::create(store.clone(), "").unwrap();
        Array::create(
            store.clone(),
            "a",
            r#"{"shape": [2], "chunks": [2], "dtype": "<i4"}"#,
        )
        .unwrap();
        store.set("a/.zattrs", b"{\"v\":   1}").unwrap();
        consolidate(&store).unwrap();
        // Newer documents than `.zmetadata` holds, in their own layout.
        let newer = b"{\n  \"v\": 2\n}";
        store.use_consolidated(None);
        store.set("a/.zattrs", newer).unwrap();
        assert!(load(&store).unwrap());
        assert!(Array::open(store.clone(), "a")
            .unwrap()
            .attributes()
            .unwrap()
            .contains('1'));
        assert_eq!(store.get("a/.zattrs").unwrap().unwrap(), newer);
        assert_eq!(
            store.get_all(&["a/.zattrs".into()]).unwrap()[0].as_deref(),
            Some(&newer[..])
        );
        let copy = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        crate::copy::copy_store(&store, "", &copy, "", &mut |_| {
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
        for key in store.list_prefix("").unwrap() {
            assert_eq!(copy.get(&key).unwrap(), store.get(&key).unwrap(), "{key}");
        }
        // Rewriting a document starts from the stored one, not the stale consolidated copy.
        store.use_consolidated(None);
        let zarray = String::from_utf8(store.get("a/.zarray").unwrap().unwrap()).unwrap();
        store
            .set(
                "a/.zarray",
                zarray
                    .replace("\"fill_value\": 0", "\"fill_value\": 7")
                    .as_bytes(),
            )
            .unwrap();
        assert!(load(&store).unwrap());
        Array::open(store.clone(), "a")
            .unwrap()
            .resize(&[5])
            .unwrap();
        let zarray = String::from_utf8(store.get("a/.zarray").unwrap().unwrap()).unwrap();
        assert!(
            zarray.contains("\"fill_value\": 7") && zarray.contains("5"),
            "{zarray}"
        );
    }

    #[test]
    fn consolidating_names_a_document_it_cannot_read() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        Group::create(store.clone(), "g").unwrap();
        for (key, bad) in [("g/.zattrs", &b"[1]"[..]), ("g/.zgroup", b"{")] {
            store.set(key, bad).unwrap();
            let err = consolidate(&store).unwrap_err();
            assert!(matches!(err, Error::InvalidMetadata(_)), "{err}");
            assert!(err.to_string().contains(key), "{err}");
            assert!(store.get(ZMETADATA).unwrap().is_none());
            store.erase(key).unwrap();
        }
    }

    #[test]
    fn consolidates_a_v3_hierarchy_into_its_root_zarr_json() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        Group::create_format(store.clone(), "", 3).unwrap();
        Group::create(store.clone(), "g/h").unwrap();
        let doc = r#"{"zarr_format": 3, "shape": [2], "data_type": "int8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}}}"#;
        let a = Array::create(store.clone(), "g/a", doc).unwrap();
        a.write_region(&[0], &[2], &[1, 2]).unwrap();
        a.set_attributes(r#"{"x": NaN}"#).unwrap();
        consolidate(&store).unwrap();
        assert!(!store.contains(ZMETADATA).unwrap());
        let root = store.get(ZARR_JSON).unwrap().unwrap();
        let root = JsonDocument::parse(&root, ZARR_JSON).unwrap();
        let names: Vec<&str> = root.names().collect();
        assert_eq!(names, ["attributes", "zarr_format", V3_MEMBER, "node_type"]);
        let member = root.get(V3_MEMBER).unwrap();
        assert_eq!(
            (&member["kind"], &member["must_understand"]),
            (&json!("inline"), &json!(false))
        );
        let listed: Vec<&String> = member["metadata"].as_object().unwrap().keys().collect();
        assert_eq!(listed, ["g", "g/a", "g/h"]);
        assert_eq!(member["metadata"]["g/h"][V3_MEMBER]["metadata"], json!({}));
        assert!(root.raw(V3_MEMBER).unwrap().contains("\"x\": NaN"));
        // Only the consolidated copy can answer once the per-node documents are gone.
        for key in ["g/zarr.json", "g/h/zarr.json", "g/a/zarr.json"] {
            store.erase(key).unwrap();
        }
        assert!(load(&store).unwrap());
        let a = Array::open(store.clone(), "g/a").unwrap();
        let mut out = [0u8; 2];
        a.read_region(&[0], &[2], &mut out).unwrap();
        assert_eq!(out, [1, 2]);
        assert_eq!(Group::open(store.clone(), "g/h").unwrap().zarr_format(), 3);
        store.use_consolidated(None);
        assert!(Array::open(store.clone(), "g/a").is_err());
    }

    #[test]
    fn refuses_bad_v3_consolidated_metadata() {
        let root = |member: &str| {
            format!(
                r#"{{"zarr_format": 3, "node_type": "group", "consolidated_metadata": {member}}}"#
            )
        };
        assert_eq!(parse_v3(root("null").as_bytes()).unwrap(), None);
        for (member, unsupported) in [
            (
                r#"{"kind": "remote", "must_understand": false, "metadata": {}}"#,
                true,
            ),
            (r#"{"kind": "inline", "metadata": {"../a": {}}}"#, false),
            (r#"{"kind": "inline", "metadata": {"a": []}}"#, false),
            (r#"{"kind": "inline", "metadata": {"": {}}}"#, false),
            (r#"{"kind": "inline"}"#, false),
        ] {
            let err = parse_v3(root(member).as_bytes()).unwrap_err();
            assert_eq!(
                matches!(err, Error::Unsupported(_)),
                unsupported,
                "{member}: {err}"
            );
            assert!(err.to_string().contains("zarr.json"), "{err}");
        }
        let ok =
            parse_v3(root(r#"{"kind": "inline", "metadata": {"a/b": {"n": NaN}}}"#).as_bytes());
        assert_eq!(ok.unwrap().unwrap()["a/b/zarr.json"], br#"{"n": NaN}"#);
    }

    #[test]
    fn refuses_bad_documents() {
        for bad in [
            &b"{"[..],
            b"[]",
            b"{\"metadata\": {}, \"zarr_consolidated_format\": 2}",
            b"{\"metadata\": {\"a/0.0\": {}}, \"zarr_consolidated_format\": 1}",
            b"{\"metadata\": {\"../.zarray\": {}}, \"zarr_consolidated_format\": 1}",
            b"{\"metadata\": {\".zgroup\": 3}, \"zarr_consolidated_format\": 1}",
            b"{\"metadata\": {}}",
            b"\xff",
        ] {
            let err = parse(bad, "meta").unwrap_err();
            assert!(err.to_string().contains("\"meta\""), "{err}");
        }
        let ok = br#"{"metadata": {".zattrs": {"a": NaN}}, "zarr_consolidated_format": 1}"#;
        assert_eq!(parse(ok, ZMETADATA).unwrap()[".zattrs"], br#"{"a": NaN}"#);
    }
}
