//! Nodes of a hierarchy in either format: what lives at a logical path, creating ancestor
//! groups, attributes.

use crate::error::{Error, Result};
use crate::metadata::{
    self, ArrayMetadata, JsonDocument, NodeType, ZARRAY, ZARR_JSON, ZATTRS, ZGROUP,
};
use crate::path;
use crate::store::StoreHandle;

/// What a logical path holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// Nothing (no `zarr.json`, `.zarray` or `.zgroup`).
    None,
    /// An array.
    Array,
    /// A group.
    Group,
}

/// What lives at a path, in which format, and the key of its metadata document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Array, group or nothing.
    pub kind: NodeKind,
    /// 2 or 3 (0 for nothing).
    pub format: u8,
    /// The key of the document that says so (empty for nothing).
    pub key: String,
}

/// What lives at the normalised logical path `path`: a `zarr.json` makes it a v3 node (it
/// wins where v2 documents exist too, as in zarr-python), else `.zarray` or `.zgroup` a v2 one.
pub fn node(store: &StoreHandle, path: &str) -> Result<Node> {
    node_with_document(store, path).map(|(node, _)| node)
}

/// [`node`] with the bytes of the document that says so (`None` for nothing). A node the
/// consolidated metadata in use holds is found without a request; otherwise `zarr.json` and
/// `.zarray` are asked for together, then `.zgroup`.
pub fn node_with_document(store: &StoreHandle, path: &str) -> Result<(Node, Option<Vec<u8>>)> {
    node_in(store, path, true)
}

/// [`node_with_document`], through the consolidated metadata in use (`through_view`) or from
/// the store's own documents.
fn node_in(store: &StoreHandle, path: &str, through_view: bool) -> Result<(Node, Option<Vec<u8>>)> {
    // From consolidated metadata in use, or from the store's own documents.
    let holds = |key: &str| through_view && store.consolidated_holds(key);
    let one = |key: &str| match through_view {
        true => store.node_document(key),
        false => store.get(key),
    };
    let v2_node = |key: String, kind: NodeKind| Node {
        kind,
        format: 2,
        key,
    };
    let (zarray, zgroup) = (path::join(path, ZARRAY), path::join(path, ZGROUP));
    for (key, kind) in [(&zarray, NodeKind::Array), (&zgroup, NodeKind::Group)] {
        if holds(key) {
            return Ok((v2_node(key.clone(), kind), one(key)?));
        }
    }
    let v3 = path::join(path, ZARR_JSON);
    let both = [v3.clone(), zarray.clone()];
    let [v3_bytes, zarray_bytes]: [Option<Vec<u8>>; 2] = match (holds(&v3), through_view) {
        (true, _) => [one(&v3)?, None],
        (false, true) => store
            .node_documents(&both)?
            .try_into()
            .expect("two for two"),
        (false, false) => store.get_all(&both)?.try_into().expect("two for two"),
    };
    if let Some(bytes) = v3_bytes {
        let doc = JsonDocument::parse(&bytes, &v3)?;
        let kind = match metadata::node_type(&doc, &v3)? {
            NodeType::Array => NodeKind::Array,
            NodeType::Group => NodeKind::Group,
        };
        let node = Node {
            kind,
            format: 3,
            key: v3,
        };
        return Ok((node, Some(bytes)));
    }
    if zarray_bytes.is_some() {
        return Ok((v2_node(zarray, NodeKind::Array), zarray_bytes));
    }
    if let Some(bytes) = one(&zgroup)? {
        return Ok((v2_node(zgroup, NodeKind::Group), Some(bytes)));
    }
    let nothing = Node {
        kind: NodeKind::None,
        format: 0,
        key: String::new(),
    };
    Ok((nothing, None))
}

/// What lives at the normalised logical path `path`.
pub fn node_kind(store: &StoreHandle, path: &str) -> Result<NodeKind> {
    node(store, path).map(|n| n.kind)
}

/// An array's stored metadata document and what it says.
#[derive(Debug)]
pub struct StoredArray {
    /// The document's key (`.zarray` or `zarr.json`).
    pub key: String,
    /// The document, member by member as stored.
    pub document: JsonDocument,
    /// The array model it gives.
    pub metadata: ArrayMetadata,
}

/// The metadata document of the array at the normalised path `path`, as a node lookup sees it
/// (from consolidated metadata in use) and as understood; `None` when no array is there.
/// Errors name the key.
pub fn read_array_metadata(store: &StoreHandle, path: &str) -> Result<Option<StoredArray>> {
    array_metadata_in(store, path, true)
}

/// [`read_array_metadata`] from the store's own document, never from consolidated metadata:
/// for rewriting it (a resize, a new fill value), so that a stale consolidated copy never
/// replaces a newer document.
pub fn stored_array_metadata(store: &StoreHandle, path: &str) -> Result<Option<StoredArray>> {
    array_metadata_in(store, path, false)
}

fn array_metadata_in(
    store: &StoreHandle,
    path: &str,
    through_view: bool,
) -> Result<Option<StoredArray>> {
    let (found, bytes) = node_in(store, path, through_view)?;
    let (NodeKind::Array, Some(bytes)) = (found.kind, bytes) else {
        return Ok(None);
    };
    parse_stored_array(found.key, &bytes, found.format).map(Some)
}

/// An array's metadata document `bytes`, stored at `key`, of Zarr format `format`.
fn parse_stored_array(key: String, bytes: &[u8], format: u8) -> Result<StoredArray> {
    let document = JsonDocument::parse(bytes, &key)?;
    let metadata = if format == 3 {
        ArrayMetadata::parse_v3(&document, &key)?
    } else {
        let value = metadata::parse_document(bytes, &key)?;
        ArrayMetadata::parse(&value, &key)?
    };
    Ok(StoredArray {
        key,
        document,
        metadata,
    })
}

/// The array metadata document `text` (a `.zarray` or an array's `zarr.json`, told apart by
/// its `zarr_format`) as if read from the store at the normalised path `path`.
pub fn given_array_metadata(path: &str, text: &str) -> Result<StoredArray> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::InvalidMetadata(format!("array metadata document: {e}")))?;
    let (key, format) = match value.get("zarr_format").and_then(serde_json::Value::as_u64) {
        Some(3) => (path::join(path, ZARR_JSON), 3),
        _ => (path::join(path, ZARRAY), 2),
    };
    if format == 3 {
        let doc = JsonDocument::parse(text.as_bytes(), &key)?;
        if metadata::node_type(&doc, &key)? != NodeType::Array {
            return Err(Error::WrongNodeType(format!(
                "the document for {key:?} describes a group, not an array"
            )));
        }
    }
    parse_stored_array(key, text.as_bytes(), format)
}

/// Stores a node's metadata document in its format's layout: v3 `zarr.json` as zarr-python 3
/// writes it, v2 documents with sorted keys and four-space indent.
pub fn write_document(store: &StoreHandle, key: &str, document: &JsonDocument) -> Result<()> {
    if path::last_segment(key) == ZARR_JSON {
        return store.set(key, &document.render());
    }
    let value = serde_json::Value::Object(
        document
            .names()
            .map(|n| (n.to_string(), document.get(n).unwrap_or_default()))
            .collect(),
    );
    store.set(key, &metadata::to_document(&value))
}

/// Fails with [`Error::AlreadyExists`] naming the key found when `path` holds an array or a
/// group of either format.
pub fn require_vacant(store: &StoreHandle, path: &str) -> Result<()> {
    let found = node(store, path)?;
    let what = match found.kind {
        NodeKind::None => return Ok(()),
        NodeKind::Array => "an array",
        NodeKind::Group => "a group",
    };
    Err(Error::AlreadyExists(format!(
        "{what} exists at path {path:?} ({:?})",
        found.key
    )))
}

/// How a create call treats what is already at its path: zarr-python's modes `w-`, `w` and
/// `a` (`overwrite=True` is `w`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateMode {
    /// `w-`: a node already there is [`Error::AlreadyExists`].
    New,
    /// `w`: whatever is at the path (its node and every key below it; at the root, the whole
    /// store) is removed first.
    Overwrite,
    /// `a`: an existing node of the kind asked for is opened instead (an array only if its shape
    /// and data type are the ones asked for, as zarr-python's `require_dataset` checks).
    Open,
}

/// Removes everything at and below `path` so that a node can be created there in its place
/// ([`CreateMode::Overwrite`]). An array above `path`, where no node could be created, is
/// [`Error::AlreadyExists`] before anything is removed.
pub fn clear_for_overwrite(store: &StoreHandle, path: &str) -> Result<()> {
    for ancestor in path::ancestors(path) {
        if node_kind(store, &ancestor)? == NodeKind::Array {
            return Err(Error::AlreadyExists(format!(
                "cannot create {path:?}: its ancestor {ancestor:?} is an array"
            )));
        }
    }
    crate::keys::remove_prefix(store, path)
}

/// The format of the nearest existing group above `path` (`None` when there is none).
pub fn inherited_format(store: &StoreHandle, path: &str) -> Result<Option<u8>> {
    for ancestor in path::ancestors(path).iter().rev() {
        let found = node(store, ancestor)?;
        if found.kind == NodeKind::Group {
            return Ok(Some(found.format));
        }
    }
    Ok(None)
}

/// The metadata document of a new group in `format` (2 or 3), and its key below `path`.
pub fn new_group_document(path: &str, format: u8) -> (String, Vec<u8>) {
    match format {
        3 => (
            path::join(path, ZARR_JSON),
            metadata::group_document_v3().render(),
        ),
        _ => (path::join(path, ZGROUP), metadata::group_document()),
    }
}

/// Creates a group in `format` at every ancestor of `path` that has none, as the spec requires
/// before an array or group is created. An array among the ancestors is an error.
pub fn create_ancestor_groups(store: &StoreHandle, path: &str, format: u8) -> Result<()> {
    for ancestor in path::ancestors(path) {
        match node_kind(store, &ancestor)? {
            NodeKind::Group => {}
            NodeKind::None => {
                let (key, doc) = new_group_document(&ancestor, format);
                store.set(&key, &doc)?
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

/// The user attributes of the node at `path` as stored JSON text (`{}` when there are none):
/// the `attributes` member of a v3 `zarr.json`, or a v2 `.zattrs`; see
/// [`metadata::check_attributes`] for what is accepted.
pub fn attributes(store: &StoreHandle, path: &str) -> Result<String> {
    let v3 = path::join(path, ZARR_JSON);
    if let Some(bytes) = store.node_document(&v3)? {
        let doc = JsonDocument::parse(&bytes, &v3)?;
        return match doc.raw("attributes") {
            Some(text) => metadata::check_attributes(text.as_bytes(), &format!("{v3} attributes")),
            None => Ok("{}".to_string()),
        };
    }
    let key = path::join(path, ZATTRS);
    match store.node_document(&key)? {
        Some(bytes) => metadata::check_attributes(&bytes, &key),
        None => Ok("{}".to_string()),
    }
}

/// Replaces the user attributes of the node at `path` with the JSON object `json`, stored as
/// given: in its `zarr.json` for a v3 node (the other members kept as stored), else `.zattrs`.
pub fn set_attributes(store: &StoreHandle, path: &str, json: &str) -> Result<()> {
    let text = metadata::check_attributes(json.as_bytes(), "attributes")?;
    edit_attributes(store, path, |_| Ok(text))
}

/// Sets the members of the JSON object `json` in the user attributes of the node at `path`,
/// keeping the others (Python's `attrs.update`); each value is stored as given.
pub fn update_attributes(store: &StoreHandle, path: &str, json: &str) -> Result<()> {
    metadata::check_attributes(json.as_bytes(), "attribute changes")?;
    let changes = JsonDocument::parse(json.as_bytes(), "attribute changes")?;
    edit_attributes(store, path, |current| {
        let mut attributes = JsonDocument::parse(current.as_bytes(), "attributes")?;
        for name in changes.names() {
            let value = changes.raw(name).expect("a member of the changes");
            attributes.set_raw(name, value.to_string());
        }
        Ok(String::from_utf8(attributes.render()).expect("JSON text is UTF-8"))
    })
}

/// Removes the member `name` of the user attributes of the node at `path`; a missing one is
/// [`Error::NotFound`] (as Python's `del attrs[name]`).
pub fn delete_attribute(store: &StoreHandle, path: &str, name: &str) -> Result<()> {
    edit_attributes(store, path, |current| {
        let mut attributes = JsonDocument::parse(current.as_bytes(), "attributes")?;
        if !attributes.contains(name) {
            return Err(Error::NotFound(format!(
                "the attributes of {path:?} have no {name:?}"
            )));
        }
        attributes.remove(name);
        Ok(String::from_utf8(attributes.render()).expect("JSON text is UTF-8"))
    })
}

/// Replaces the user attributes of the node at `path` by what `edit` makes of the current ones
/// (their JSON text, `{}` when there are none), in one read-modify-write: in its `zarr.json`
/// for a v3 node (the other members kept as stored), else `.zattrs`.
fn edit_attributes(
    store: &StoreHandle,
    path: &str,
    edit: impl FnOnce(String) -> Result<String>,
) -> Result<()> {
    let v3 = path::join(path, ZARR_JSON);
    store.check_writable(&v3)?;
    // Read under the lock, so a concurrent resize or attribute write is not undone. Across
    // processes a v2 node's attributes are locked by their own key, as zarr-python 2 does.
    let zattrs = path::join(path, ZATTRS);
    let lock_key = match store.locks_across_processes() && !store.contains(&v3)? {
        true => &zattrs,
        false => &v3,
    };
    let _lock = store.lock_chunk(lock_key)?;
    if let Some(bytes) = store.get(&v3)? {
        let mut doc = JsonDocument::parse(&bytes, &v3)?;
        let current = doc.raw("attributes").unwrap_or("{}").to_string();
        doc.set_raw("attributes", edit(current)?);
        return write_document(store, &v3, &doc);
    }
    let current = match store.get(&zattrs)? {
        Some(bytes) => metadata::check_attributes(&bytes, &zattrs)?,
        None => "{}".to_string(),
    };
    store.set(&zattrs, edit(current)?.as_bytes())
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
    let prefix = format!("{path}/");
    crate::keys::erase_keys(store, store.list_prefix(&prefix)?)?;
    store.prune(&prefix)
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
    create_ancestor_groups(store, &to, node(store, &from)?.format)?;
    for key in store.list_prefix(&format!("{from}/"))? {
        let value = store
            .get(&key)?
            .ok_or_else(|| Error::NotFound(format!("key {key:?} vanished while moving")))?;
        store.set(&format!("{to}{}", &key[from.len()..]), &value)?;
        store.erase(&key)?;
    }
    store.prune(&format!("{from}/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::OpenMode;

    fn store_with_tree() -> std::sync::Arc<StoreHandle> {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        create_ancestor_groups(&store, "a/b/x", 2).unwrap();
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
