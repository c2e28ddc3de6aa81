//! Consolidated metadata: every `.zarray`, `.zgroup` and `.zattrs` of a hierarchy in one
//! `.zmetadata` document at the store's root, in zarr-python's format
//! (`{"metadata": {key: document, ...}, "zarr_consolidated_format": 1}`), so a hierarchy opens
//! with one read instead of one per node.

use crate::error::{Error, Result};
use crate::metadata::{self, ZATTRS};
use crate::path;
use crate::store::{MetadataDocuments, StoreHandle};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::HashMap;

/// Key of the consolidated metadata document.
pub const ZMETADATA: &str = ".zmetadata";

/// The one consolidated format there is.
const FORMAT: u64 = 1;

/// Reads `.zmetadata` (if the store has one) and answers metadata keys from it from now on;
/// without one, metadata is read from the store as usual. Returns whether it was found. Also
/// refreshes consolidated metadata that went stale.
pub fn load(store: &StoreHandle) -> Result<bool> {
    store.use_consolidated(None);
    let Some(bytes) = store.get(ZMETADATA)? else {
        return Ok(false);
    };
    store.use_consolidated(Some(parse(&bytes)?));
    Ok(true)
}

/// Writes `.zmetadata` holding every metadata document of the store (read from the store
/// itself, not from consolidated metadata in use) and uses it from now on.
pub fn consolidate(store: &StoreHandle) -> Result<()> {
    store.check_writable(ZMETADATA)?;
    if store.contains(crate::metadata::ZARR_JSON)? {
        return Err(Error::Unsupported(
            "consolidated metadata of a Zarr v3 hierarchy (in its root zarr.json) is not supported yet".into(),
        ));
    }
    store.use_consolidated(None);
    let mut documents = MetadataDocuments::new();
    for key in store.list_prefix("")? {
        if !path::is_metadata_key(&key) {
            continue;
        }
        let Some(bytes) = store.get(&key)? else {
            continue; // Removed since the listing.
        };
        check_document(&key, &bytes)?;
        documents.insert(key, bytes);
    }
    store.set(ZMETADATA, &render(&documents)?)?;
    store.use_consolidated(Some(documents));
    Ok(())
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
fn parse(bytes: &[u8]) -> Result<MetadataDocuments> {
    let bad = |why: String| Error::InvalidMetadata(format!("{ZMETADATA:?}: {why}"));
    let text = std::str::from_utf8(bytes).map_err(|_| bad("not valid UTF-8".into()))?;
    // zarr-python writes non-finite attribute values as bare NaN/Infinity: parse a copy where
    // they are numbers of the same length, then take each document's text from the original.
    let masked = metadata::python_constants_masked(text);
    let doc: Document =
        serde_json::from_str(&masked).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    if doc.zarr_consolidated_format != FORMAT {
        return Err(Error::Unsupported(format!(
            "{ZMETADATA:?}: zarr_consolidated_format {} (only {FORMAT} is supported)",
            doc.zarr_consolidated_format
        )));
    }
    let mut documents = MetadataDocuments::new();
    for (key, raw) in doc.metadata {
        path::validate_key(&key)?;
        if !path::is_metadata_key(&key) {
            return Err(bad(format!("{key:?} is not a metadata key")));
        }
        let start = raw.get().as_ptr() as usize - masked.as_ptr() as usize;
        let original = &text[start..start + raw.get().len()];
        if !original.starts_with('{') {
            return Err(bad(format!("{key:?} is not a JSON object")));
        }
        documents.insert(key, original.as_bytes().to_vec());
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
        let documents = parse(&store.get(ZMETADATA).unwrap().unwrap()).unwrap();
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
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        let ok = br#"{"metadata": {".zattrs": {"a": NaN}}, "zarr_consolidated_format": 1}"#;
        assert_eq!(parse(ok).unwrap()[".zattrs"], br#"{"a": NaN}"#);
    }
}
