//! Groups: nodes that hold arrays and other groups.

use crate::error::{Error, Result};
use crate::hierarchy::{self, CreateMode, NodeKind};
use crate::metadata::{self, JsonDocument};
use crate::path;
use crate::store::StoreHandle;
use serde_json::{json, Value};
use std::sync::Arc;

/// An open group. Safe to share between threads.
#[derive(Debug)]
pub struct Group {
    store: Arc<StoreHandle>,
    path: String,
    /// 2 or 3.
    format: u8,
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
    /// Creates the group at `path` and any missing ancestor groups, in the format of the
    /// nearest existing group above it (v2 in an empty store); an existing group is simply
    /// opened, an existing array is [`Error::AlreadyExists`].
    pub fn create(store: Arc<StoreHandle>, path: &str) -> Result<Group> {
        Self::create_with_mode(store, path, None, CreateMode::Open)
    }

    /// Creates the group at `path` in `format` (2 or 3), with any missing ancestors in the
    /// same format. An existing group of that format is opened; an array, or a group of the
    /// other format, is [`Error::AlreadyExists`].
    pub fn create_format(store: Arc<StoreHandle>, path: &str, format: u8) -> Result<Group> {
        Self::create_with_mode(store, path, Some(format), CreateMode::Open)
    }

    /// Creates the group at `path` in `format` (2 or 3; `None`: that of the nearest group
    /// above it, v2 in an empty store), with any missing ancestors in the same format; what is
    /// already at `path` is treated as `mode` says: with [`CreateMode::Open`] an existing group
    /// of that format is opened, and an array or a group of the other format is
    /// [`Error::AlreadyExists`].
    pub fn create_with_mode(
        store: Arc<StoreHandle>,
        path: &str,
        format: Option<u8>,
        mode: CreateMode,
    ) -> Result<Group> {
        let path = path::normalize(path)?;
        if format.is_some_and(|f| !matches!(f, 2 | 3)) {
            return Err(Error::InvalidArgument(format!(
                "zarr_format must be 2 or 3, got {}",
                format.unwrap_or_default()
            )));
        }
        let inherited = || hierarchy::inherited_format(&store, &path);
        let format = match format {
            Some(format) => format,
            None => inherited()?.unwrap_or(2),
        };
        if format == 3 {
            path::check_v3_node_names(&path)?;
        }
        let (key, doc) = hierarchy::new_group_document(&path, format);
        match mode {
            CreateMode::Open => {
                let found = hierarchy::node(&store, &path)?;
                if found.kind == NodeKind::Group && found.format == format {
                    return Self::open(store, &path);
                }
                hierarchy::require_vacant(&store, &path)?;
            }
            CreateMode::New => hierarchy::require_vacant(&store, &path)?,
            CreateMode::Overwrite => hierarchy::clear_for_overwrite(&store, &path)?,
        }
        store.check_writable(&key)?;
        hierarchy::create_ancestor_groups(&store, &path, format)?;
        store.set(&key, &doc)?;
        Ok(Group {
            store,
            path,
            format,
        })
    }

    /// Opens the group at `path` (a v3 `zarr.json` or a v2 `.zgroup`); [`Error::NotFound`]
    /// when nothing is there, [`Error::WrongNodeType`] naming the array's document when an
    /// array is.
    pub fn open(store: Arc<StoreHandle>, path: &str) -> Result<Group> {
        let path = path::normalize(path)?;
        let (found, bytes) = hierarchy::node_with_document(&store, &path)?;
        let bytes = match (found.kind, bytes) {
            (NodeKind::Group, Some(bytes)) => bytes,
            (NodeKind::Array, _) => {
                return Err(Error::WrongNodeType(format!(
                    "path {path:?} holds an array ({:?}), not a group",
                    found.key
                )))
            }
            _ => {
                return Err(Error::NotFound(format!(
                    "no group at path {path:?} (found nothing)"
                )))
            }
        };
        if found.format == 3 {
            metadata::check_group_v3(&JsonDocument::parse(&bytes, &found.key)?, &found.key)?;
        } else {
            metadata::check_group_document(
                &metadata::parse_document(&bytes, &found.key)?,
                &found.key,
            )?;
        }
        Ok(Group {
            store,
            path,
            format: found.format,
        })
    }

    /// 2 or 3.
    pub fn zarr_format(&self) -> u8 {
        self.format
    }

    /// The normalised logical path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The store the group lives in.
    pub fn store(&self) -> &Arc<StoreHandle> {
        &self.store
    }

    /// The arrays and groups directly below this group. A stored name no path can address
    /// (one that normalises to something else, such as `\\` or `a\\b`, which paths read as
    /// `/` and `a/b`, or a reserved name) is not a member: walking it would lead elsewhere.
    pub fn members(&self) -> Result<Members> {
        let prefix = if self.path.is_empty() {
            String::new()
        } else {
            format!("{}/", self.path)
        };
        let mut members = Members::default();
        let names = match self.store.consolidated_children(&prefix) {
            Some(names) => names,
            None => self.store.list_dir(&prefix)?,
        };
        for name in names {
            if path::normalize(&name).ok().as_deref() != Some(name.as_str()) {
                continue;
            }
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

    /// Sets the members of a JSON object in the user attributes, keeping the others.
    pub fn update_attributes(&self, json: &str) -> Result<()> {
        hierarchy::update_attributes(&self.store, &self.path, json)
    }

    /// Removes one member of the user attributes ([`Error::NotFound`] when there is none).
    pub fn delete_attribute(&self, name: &str) -> Result<()> {
        hierarchy::delete_attribute(&self.store, &self.path, name)
    }
}
