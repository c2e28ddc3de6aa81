//! Key-level operations on a store, below the hierarchy: what a prefix holds in total, and
//! removing a prefix with everything under it.

use crate::error::{Error, Result};
use crate::path;
use crate::store::StoreHandle;

/// The key prefix a raw path names: `""` for the whole store, else `path` (a key, with or
/// without a trailing `/`) followed by `/`. Refused with [`Error::InvalidPath`] when it could
/// not be a key.
pub fn prefix_of(path: &str) -> Result<String> {
    let key = path.strip_suffix('/').unwrap_or(path);
    if key.is_empty() {
        return Ok(String::new());
    }
    path::validate_key(key)?;
    Ok(format!("{key}/"))
}

/// The total length of the values under `path`: the value of the key `path` itself, if any,
/// and every key below it at any depth (`""`: the whole store).
pub fn stored_size(store: &StoreHandle, path: &str) -> Result<u64> {
    let prefix = prefix_of(path)?;
    let own = match prefix.strip_suffix('/') {
        Some(key) => store.value_len(key)?.unwrap_or(0),
        None => 0,
    };
    let below = store.list_prefix_sized(&prefix)?;
    Ok(below
        .iter()
        .fold(own, |sum, (_, len)| sum.saturating_add(*len)))
}

/// Removes the key `path` and every key below it (`""`: everything in the store); nothing
/// there is not an error.
pub fn remove_prefix(store: &StoreHandle, path: &str) -> Result<()> {
    let prefix = prefix_of(path)?;
    store.check_writable(if path.is_empty() {
        "the store's root"
    } else {
        path
    })?;
    let mut keys = store.list_prefix(&prefix)?;
    if let Some(key) = prefix.strip_suffix('/') {
        if store.contains(key)? {
            keys.push(key.to_string());
        }
    }
    erase_keys(store, keys)?;
    store.prune(&prefix)
}

/// Erases `keys`: the node documents first, shallowest first, then the rest in parallel, so
/// that a failure part-way leaves no node whose chunks are gone (they would read as the fill
/// value) but at worst keys no node owns.
pub fn erase_keys(store: &StoreHandle, keys: Vec<String>) -> Result<()> {
    use rayon::prelude::*;
    let (mut documents, rest): (Vec<String>, Vec<String>) = keys
        .into_iter()
        .partition(|key| path::is_node_document(path::last_segment(key)));
    documents.sort_by_key(|key| (key.matches('/').count(), key.clone()));
    for key in &documents {
        store.erase(key)?;
    }
    crate::parallel::run(|| rest.par_iter().try_for_each(|key| store.erase(key)))
}

/// Fails with [`Error::NotFound`] naming `key` unless it holds a value.
pub fn require_value(store: &StoreHandle, key: &str) -> Result<u64> {
    store.value_len(key)?.ok_or_else(|| {
        Error::NotFound(format!(
            "no value under key {key:?} in {}",
            store.location()
        ))
    })
}
