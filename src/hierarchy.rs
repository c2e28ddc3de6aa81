//! Nodes of a hierarchy: what lives at a logical path, creating ancestor groups, attributes.

use crate::error::{Error, Result};
use crate::metadata::{self, ZARRAY, ZATTRS, ZGROUP};
use crate::path;
use crate::store::StoreHandle;

/// What a logical path holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// Nothing (neither `.zarray` nor `.zgroup`).
    None,
    /// An array.
    Array,
    /// A group.
    Group,
}

/// What lives at the normalised logical path `path`.
pub fn node_kind(store: &StoreHandle, path: &str) -> Result<NodeKind> {
    if store.contains(&path::join(path, ZARRAY))? {
        Ok(NodeKind::Array)
    } else if store.contains(&path::join(path, ZGROUP))? {
        Ok(NodeKind::Group)
    } else {
        Ok(NodeKind::None)
    }
}

/// Fails with [`Error::AlreadyExists`] when `path` holds an array or a group.
pub fn require_vacant(store: &StoreHandle, path: &str) -> Result<()> {
    match node_kind(store, path)? {
        NodeKind::None => Ok(()),
        NodeKind::Array => Err(Error::AlreadyExists(format!(
            "an array exists at path {path:?}"
        ))),
        NodeKind::Group => Err(Error::AlreadyExists(format!(
            "a group exists at path {path:?}"
        ))),
    }
}

/// Creates a group at every ancestor of `path` that has none, as the spec requires before an
/// array or group is created. An array among the ancestors is an error.
pub fn create_ancestor_groups(store: &StoreHandle, path: &str) -> Result<()> {
    for ancestor in path::ancestors(path) {
        match node_kind(store, &ancestor)? {
            NodeKind::Group => {}
            NodeKind::None => {
                store.set(&path::join(&ancestor, ZGROUP), &metadata::group_document())?
            }
            NodeKind::Array => {
                return Err(Error::AlreadyExists(format!(
                    "cannot create {path:?}: its ancestor {ancestor:?} is an array"
                )))
            }
        }
    }
    Ok(())
}

/// The user attributes of the node at `path` as stored JSON text (`{}` when there is no
/// `.zattrs`); see [`metadata::check_attributes`] for what is accepted.
pub fn attributes(store: &StoreHandle, path: &str) -> Result<String> {
    let key = path::join(path, ZATTRS);
    match store.get(&key)? {
        Some(bytes) => metadata::check_attributes(&bytes, &key),
        None => Ok("{}".to_string()),
    }
}

/// Replaces the user attributes of the node at `path` with the JSON object `json`, stored as
/// given.
pub fn set_attributes(store: &StoreHandle, path: &str, json: &str) -> Result<()> {
    let key = path::join(path, ZATTRS);
    store.check_writable(&key)?;
    let text = metadata::check_attributes(json.as_bytes(), "attributes")?;
    store.set(&key, text.as_bytes())
}
