//! Nodes of a hierarchy: what lives at a logical path, creating ancestor groups, attributes.

use crate::error::{Error, Result};
use crate::metadata::{self, ArrayMetadata, ZARRAY, ZATTRS, ZGROUP};
use crate::path;
use crate::store::StoreHandle;
use serde_json::Value;

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

/// The `.zarray` document of the array at the normalised path `path`, as stored (parsed JSON)
/// and as understood; `None` when there is no `.zarray`. Errors name the key.
pub fn read_array_metadata(
    store: &StoreHandle,
    path: &str,
) -> Result<Option<(Value, ArrayMetadata)>> {
    let key = path::join(path, ZARRAY);
    let Some(bytes) = store.get(&key)? else {
        return Ok(None);
    };
    let doc = metadata::parse_document(&bytes, &key)?;
    let meta = ArrayMetadata::parse(&doc, &key)?;
    Ok(Some((doc, meta)))
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

/// Deletes the array or group at `path` with everything below it (chunks, members,
/// attributes). The root cannot be deleted; a path holding nothing is [`Error::NotFound`].
pub fn delete_node(store: &StoreHandle, path: &str) -> Result<()> {
    let path = path::normalize(path)?;
    if path.is_empty() {
        return Err(Error::InvalidPath(
            "the root of a store cannot be deleted".into(),
        ));
    }
    store.check_writable(&path)?;
    if node_kind(store, &path)? == NodeKind::None {
        return Err(Error::NotFound(format!(
            "nothing to delete at path {path:?}"
        )));
    }
    for key in store.list_prefix(&format!("{path}/"))? {
        store.erase(&key)?;
    }
    Ok(())
}

/// Moves the array or group at `from` (with everything below it) to `to`, which must hold
/// nothing and must not lie inside `from`; missing ancestors of `to` become groups.
pub fn move_node(store: &StoreHandle, from: &str, to: &str) -> Result<()> {
    let (from, to) = (path::normalize(from)?, path::normalize(to)?);
    store.check_writable(&to)?;
    if from.is_empty() || to.is_empty() {
        return Err(Error::InvalidPath(
            "the root of a store cannot be moved or replaced".into(),
        ));
    }
    if to == from || to.starts_with(&format!("{from}/")) {
        return Err(Error::InvalidPath(format!(
            "cannot move {from:?} into itself ({to:?})"
        )));
    }
    if node_kind(store, &from)? == NodeKind::None {
        return Err(Error::NotFound(format!("nothing to move at path {from:?}")));
    }
    require_vacant(store, &to)?;
    create_ancestor_groups(store, &to)?;
    for key in store.list_prefix(&format!("{from}/"))? {
        let value = store
            .get(&key)?
            .ok_or_else(|| Error::NotFound(format!("key {key:?} vanished while moving")))?;
        store.set(&format!("{to}{}", &key[from.len()..]), &value)?;
        store.erase(&key)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::OpenMode;

    fn store_with_tree() -> std::sync::Arc<StoreHandle> {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        create_ancestor_groups(&store, "a/b/x").unwrap();
        store.set("a/b/x/.zarray", b"{}").unwrap();
        store.set("a/b/x/0.0", b"chunk").unwrap();
        store.set("a/b/.zattrs", b"{}").unwrap();
        store
    }

    #[test]
    fn deletes_a_subtree_only() {
        let store = store_with_tree();
        delete_node(&store, "a/b").unwrap();
        assert_eq!(store.list_prefix("").unwrap(), vec![".zgroup", "a/.zgroup"]);
        assert!(matches!(
            delete_node(&store, "a/b"),
            Err(Error::NotFound(_))
        ));
        assert!(matches!(
            delete_node(&store, ""),
            Err(Error::InvalidPath(_))
        ));
        assert!(matches!(
            delete_node(&store, "a/../b"),
            Err(Error::InvalidPath(_))
        ));
    }

    #[test]
    fn moves_a_subtree_and_creates_ancestors() {
        let store = store_with_tree();
        move_node(&store, "a/b", "c/d").unwrap();
        assert_eq!(node_kind(&store, "c").unwrap(), NodeKind::Group);
        assert_eq!(node_kind(&store, "c/d/x").unwrap(), NodeKind::Array);
        assert_eq!(store.get("c/d/x/0.0").unwrap().unwrap(), b"chunk");
        assert_eq!(node_kind(&store, "a/b").unwrap(), NodeKind::None);
        assert!(matches!(
            move_node(&store, "c", "c/d/e"),
            Err(Error::InvalidPath(_))
        ));
        assert!(matches!(
            move_node(&store, "nope", "z"),
            Err(Error::NotFound(_))
        ));
        assert!(matches!(
            move_node(&store, "c/d/x", "a"),
            Err(Error::AlreadyExists(_))
        ));
        let ro = StoreHandle::open("memory:", OpenMode::Read).unwrap();
        assert!(matches!(move_node(&ro, "a", "b"), Err(Error::ReadOnly(_))));
    }
}
