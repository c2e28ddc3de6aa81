//! Groups: nodes that hold arrays and other groups.

use crate::error::{Error, Result};
use crate::hierarchy::{self, NodeKind};
use crate::metadata::{self, ZGROUP};
use crate::path;
use crate::store::StoreHandle;
use serde_json::{json, Value};
use std::sync::Arc;

/// An open group. Safe to share between threads.
#[derive(Debug)]
pub struct Group {
    store: Arc<StoreHandle>,
    path: String,
}

/// The direct members of a group, by kind, names sorted.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Members {
    /// Names of member arrays.
    pub arrays: Vec<String>,
    /// Names of member groups.
    pub groups: Vec<String>,
}

impl Members {
    /// `{"arrays": [...], "groups": [...]}`
    pub fn to_json(&self) -> Value {
        json!({ "arrays": self.arrays, "groups": self.groups })
    }
}

impl Group {
    /// Creates the group at `path` and any missing ancestor groups; an existing group is simply
    /// opened, an existing array is [`Error::AlreadyExists`].
    pub fn create(store: Arc<StoreHandle>, path: &str) -> Result<Group> {
        let path = path::normalize(path)?;
        match hierarchy::node_kind(&store, &path)? {
            NodeKind::Group => return Self::open(store, &path),
            NodeKind::Array => {
                return Err(Error::AlreadyExists(format!(
                    "an array exists at path {path:?}"
                )))
            }
            NodeKind::None => {}
        }
        store.check_writable(&path::join(&path, ZGROUP))?;
        hierarchy::create_ancestor_groups(&store, &path)?;
        store.set(&path::join(&path, ZGROUP), &metadata::group_document())?;
        Ok(Group { store, path })
    }

    /// Opens the group at `path`; [`Error::NotFound`] when there is no `.zgroup`.
    pub fn open(store: Arc<StoreHandle>, path: &str) -> Result<Group> {
        let path = path::normalize(path)?;
        let key = path::join(&path, ZGROUP);
        let Some(bytes) = store.get(&key)? else {
            return Err(Error::NotFound(format!("no group at path {path:?}")));
        };
        metadata::check_group_document(&metadata::parse_document(&bytes, &key)?, &key)?;
        Ok(Group { store, path })
    }

    /// The normalised logical path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The store the group lives in.
    pub fn store(&self) -> &Arc<StoreHandle> {
        &self.store
    }

    /// The arrays and groups directly below this group.
    pub fn members(&self) -> Result<Members> {
        let prefix = if self.path.is_empty() {
            String::new()
        } else {
            format!("{}/", self.path)
        };
        let mut members = Members::default();
        for name in self.store.list_dir(&prefix)? {
            match hierarchy::node_kind(&self.store, &path::join(&self.path, &name))? {
                NodeKind::Array => members.arrays.push(name),
                NodeKind::Group => members.groups.push(name),
                NodeKind::None => {}
            }
        }
        Ok(members)
    }

    /// The user attributes (`.zattrs`) as JSON text.
    pub fn attributes(&self) -> Result<String> {
        hierarchy::attributes(&self.store, &self.path)
    }

    /// Replaces the user attributes with a JSON object.
    pub fn set_attributes(&self, json: &str) -> Result<()> {
        hierarchy::set_attributes(&self.store, &self.path, json)
    }
}
