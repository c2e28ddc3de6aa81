//! `zarr tree` and `zarr ls`: a group's subtree, or its direct members.

use crate::{Node, Result};
use serde_json::json;
use zarr::dtype::python_tuple;
use zarr::hierarchy::{self, NodeKind};
use zarr::tree::Tree;
use zarr::{Error, Group};

/// Opens the group `node` names (an error naming it if it is no group).
fn group(node: &Node) -> Result<Group> {
    let (store, path, found) = node.find(false)?;
    if found.kind != NodeKind::Group {
        return Err(Error::NotFound(format!("no group at {path:?} in {}", node.shown())).into());
    }
    Ok(Group::open(store, &path)?)
}

/// The subtree as zarr-python 2 prints `group.tree()`, or as JSON.
pub fn tree(node: &Node, json: bool) -> Result<String> {
    let tree = Tree::of_group(&group(node)?)?;
    Ok(match json {
        true => tree.to_json(),
        false => tree.to_text(),
    })
}

/// The direct members, sorted by name (groups and arrays together): `group NAME` or
/// `array NAME (SHAPE) DTYPE` lines (NumPy's names, as the tree shows them), or a JSON list of
/// `{"name", "kind"}` objects, arrays with `shape`, `chunks` and `dtype` (as in `.zarray`).
pub fn ls(node: &Node, json: bool) -> Result<String> {
    let group = group(node)?;
    let members = group.members()?;
    let mut names: Vec<(&String, bool)> = (members.arrays.iter().map(|n| (n, true)))
        .chain(members.groups.iter().map(|n| (n, false)))
        .collect();
    names.sort();
    let mut lines = Vec::new();
    let mut listed = Vec::new();
    for (name, is_array) in names {
        if !is_array {
            lines.push(format!("group {name}"));
            listed.push(json!({"name": name, "kind": "group"}));
            continue;
        }
        let path = zarr::path::join(group.path(), name);
        let meta = hierarchy::read_array_metadata(group.store(), &path)?
            .ok_or_else(|| Error::NotFound(format!("array {path:?} vanished while listing")))?
            .metadata;
        lines.push(format!(
            "array {name} {} {}",
            python_tuple(&meta.shape),
            meta.dtype.numpy_str()
        ));
        listed.push(json!({"name": name, "kind": "array", "shape": meta.shape,
                           "chunks": meta.grid.chunks_json(), "dtype": meta.dtype.to_json()}));
    }
    Ok(match json {
        true => serde_json::to_string_pretty(&listed)?,
        false => lines.join("\n"),
    })
}
