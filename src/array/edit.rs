//! Changing what zarr-python lets users change in an existing array's metadata: the fill value.

use super::Array;
use crate::error::{Error, Result};
use crate::hierarchy;
use crate::metadata::{self, ArrayMetadata, JsonDocument};
use crate::path;
use crate::store::StoreHandle;
use serde_json::Value;
use std::sync::Arc;

impl Array {
    /// Stores `fill_json` (a fill value as the array's format writes it: a number, `"NaN"`,
    /// base64 text for byte strings, `null` in v2, ...) as the fill value of the array at
    /// `path`, like zarr-python's `z.fill_value = x`. The document is checked as an open
    /// would check it before it is written; its other members are kept as stored. Chunks not
    /// stored then read as the new value through handles opened afterwards.
    pub fn set_fill_value(store: &Arc<StoreHandle>, path: &str, fill_json: &str) -> Result<()> {
        let path = path::normalize(path)?;
        let value: Value = serde_json::from_str(fill_json).map_err(|e| {
            Error::InvalidMetadata(format!("fill value {fill_json:?} is not valid JSON: {e}"))
        })?;
        let missing = || Error::NotFound(format!("no array at path {path:?}"));
        let key = hierarchy::node(store, &path)?.key;
        store.check_writable(&key)?;
        // The lock of resizes and attribute edits, so none of them is undone.
        let _lock = store.lock_chunk(&key)?;
        let stored = hierarchy::stored_array_metadata(store, &path)?.ok_or_else(missing)?;
        let mut document = stored.document;
        document.set("fill_value", &value);
        let meta = reparse(&document, &stored.metadata, &stored.key)?;
        Self::from_metadata(store.clone(), path, meta).map_err(|e| e.context(&stored.key))?;
        hierarchy::write_document(store, &stored.key, &document)
    }
}

/// The metadata of the document `document` (read from `key`), an edited copy of the one
/// `original` came from, checked as an open checks it. A v2 document that does not say its
/// `dimension_separator` keeps the chunk keys `original` found stored.
pub(super) fn reparse(
    document: &JsonDocument,
    original: &ArrayMetadata,
    key: &str,
) -> Result<ArrayMetadata> {
    if original.zarr_format() == 3 {
        return ArrayMetadata::parse_v3(document, key);
    }
    let parsed = metadata::parse_document(&document.render(), key)?;
    let mut meta = ArrayMetadata::parse(&parsed, key)?;
    if parsed.get("dimension_separator").is_none_or(Value::is_null) {
        meta.chunk_keys = original.chunk_keys;
    }
    Ok(meta)
}
