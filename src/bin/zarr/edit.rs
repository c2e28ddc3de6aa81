//! `zarr create`, `rm`, `mv` and `consolidate`: changing a hierarchy.

use crate::{kind_name, Node, Result};
use std::path::Path;
use zarr::hierarchy;
use zarr::store::{local_file, local_path};
use zarr::{consolidated, Array, Error, Group};

/// Creates an array from a metadata document (`.zarray` or v3 `zarr.json`, inline or `@FILE`),
/// or a group of `format` when there is none. Says what it made. A store directory that the
/// failed creation made is removed again while it holds nothing.
pub fn create(node: &Node, metadata: Option<&str>, format: u8) -> Result<String> {
    let directory = local_file(local_path(&node.location)).map(Path::new);
    let made_here = directory.is_some_and(|d| !d.exists());
    let created = create_in(node, metadata, format);
    if let (Err(_), true, Some(directory)) = (&created, made_here, directory) {
        if directory.is_dir() {
            let _ = std::fs::remove_dir(directory); // fails, as it should, unless empty
        }
    }
    created
}

/// [`create`] without the tidying up.
fn create_in(node: &Node, metadata: Option<&str>, format: u8) -> Result<String> {
    let store = node.store(true)?;
    let path = zarr::path::normalize(&node.path)?;
    let made = match metadata {
        Some(document) => {
            let document = match document.strip_prefix('@') {
                Some(file) => std::fs::read_to_string(file)
                    .map_err(|e| Error::io(format!("reading the metadata document {file}"), e))?,
                None => document.to_string(),
            };
            let array = Array::create(store.clone(), &path, &document)
                .map_err(|e| e.context(format!("creating array {path:?} in {}", node.shown())))?;
            format!("created array {path:?} (Zarr v{})", array.zarr_format())
        }
        None => {
            Group::create_format(store.clone(), &path, format)?;
            format!("created group {path:?} (Zarr v{format})")
        }
    };
    store.close()?;
    Ok(made)
}

/// Deletes the array or group at the node's path with everything below it.
pub fn rm(node: &Node) -> Result<String> {
    let (store, path, found) = node.find(true)?;
    if path.is_empty() {
        return Err(Error::InvalidPath(format!(
            "refusing to delete the root of {}: delete the store itself",
            node.shown()
        ))
        .into());
    }
    hierarchy::delete_node(&store, &path)?;
    store.close()?;
    Ok(format!("deleted {} {path:?}", kind_name(found.kind)))
}

/// Moves the array or group at the node's path to `to` in the same store.
pub fn mv(node: &Node, to: &str) -> Result<String> {
    let (store, from, found) = node.find(true)?;
    let to = zarr::path::normalize(to)?;
    hierarchy::move_node(&store, &from, &to)?;
    store.close()?;
    Ok(format!(
        "moved {} {from:?} to {to:?}",
        kind_name(found.kind)
    ))
}

/// Writes the store's consolidated metadata (`.zmetadata` for v2, the root `zarr.json` for v3).
pub fn consolidate(node: &Node) -> Result<String> {
    let store = node.store(true)?;
    consolidated::consolidate(&store)?;
    store.close()?;
    Ok(format!("consolidated the metadata of {}", node.shown()))
}
