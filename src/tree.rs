//! A group's whole subtree, listed as zarr-python 2's `str(group.tree())` prints it, or as JSON.
//!
//! The subtree is walked without recursion into a flat list in display order, and both
//! renderings walk that list, so no depth of hierarchy can exhaust the stack.

use crate::dtype::python_tuple;
use crate::error::{Error, Result};
use crate::group::Group;
use crate::hierarchy;
use crate::metadata::{ArrayMetadata, ZARRAY};
use crate::path;
use crate::store::StoreHandle;
use serde_json::Value;
use std::fmt::Write;
use std::ops::ControlFlow;

/// What a listed node is.
#[derive(Debug)]
pub enum TreeNode {
    /// A group of the Zarr format given (its members follow it in the listing, one level
    /// deeper).
    Group(u8),
    /// An array, with its metadata.
    Array(Box<ArrayMetadata>),
}

/// One node of a listing.
#[derive(Debug)]
pub struct TreeEntry {
    /// The node's logical path from the store root.
    pub path: String,
    /// 0 for the listed group, 1 for its members, and so on.
    pub depth: usize,
    /// Whether the node is the last member of its group (names sorted); true for the root.
    pub last: bool,
    /// What the node is.
    pub node: TreeNode,
}

impl TreeEntry {
    /// The node's name: the last segment of its path (`""` for the store root).
    pub fn name(&self) -> &str {
        path::last_segment(&self.path)
    }

    /// The node's path relative to the group at `base` (the walk's start), as zarr-python's
    /// `visit` gives it: `""` for that group itself.
    pub fn relative_path(&self, base: &str) -> &str {
        self.path
            .strip_prefix(base)
            .unwrap_or(&self.path)
            .trim_start_matches('/')
    }

    /// The node's Zarr format, 2 or 3.
    pub fn zarr_format(&self) -> u8 {
        match &self.node {
            TreeNode::Group(format) => *format,
            TreeNode::Array(meta) => meta.zarr_format(),
        }
    }
}

/// A group and everything below it, in display order: each group followed by its members,
/// sorted by name (arrays and groups together), each member followed by its own subtree.
#[derive(Debug)]
pub struct Tree {
    entries: Vec<TreeEntry>,
}

/// Walks `group` and everything below it in display order (each group followed by its
/// members, sorted by name, arrays and groups together, each member followed by its own
/// subtree), handing each node to `visit` as it is reached; the group itself comes first, at
/// depth 0. Members deeper than `max_depth` (`None`: no limit) are neither visited nor listed.
/// The walk stops as soon as `visit` breaks, giving its value; nodes not reached yet are never
/// read. A member whose metadata cannot be read fails the walk with an error naming its key.
/// An explicit stack, no recursion: no depth of hierarchy exhausts the thread's stack.
pub fn walk<B>(
    group: &Group,
    max_depth: Option<usize>,
    mut visit: impl FnMut(TreeEntry) -> ControlFlow<B>,
) -> Result<Option<B>> {
    let store = group.store();
    // Nodes still to visit, the next one on top: (path, depth, last member, is a group).
    let mut pending = vec![(group.path().to_string(), 0, true, true)];
    while let Some((path, depth, last, is_group)) = pending.pop() {
        let node = if is_group {
            let group = Group::open(store.clone(), &path)?;
            if max_depth.is_none_or(|max| depth < max) {
                let members = group.members()?;
                let mut names: Vec<(String, bool)> = members
                    .arrays
                    .into_iter()
                    .map(|name| (name, false))
                    .chain(members.groups.into_iter().map(|name| (name, true)))
                    .collect();
                names.sort();
                let count = names.len();
                for (index, (name, is_group)) in names.into_iter().enumerate().rev() {
                    let member = path::join(&path, &name);
                    pending.push((member, depth + 1, index + 1 == count, is_group));
                }
            }
            TreeNode::Group(group.zarr_format())
        } else {
            TreeNode::Array(Box::new(array_metadata(store, &path)?))
        };
        let entry = TreeEntry {
            path,
            depth,
            last,
            node,
        };
        if let ControlFlow::Break(value) = visit(entry) {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

impl Tree {
    /// Lists `group` and everything below it. A member whose `.zarray` or `.zgroup` cannot be
    /// read fails the listing with an error naming its key.
    pub fn of_group(group: &Group) -> Result<Tree> {
        Tree::of_group_to_depth(group, None)
    }

    /// Lists `group` and its members down to `max_depth` levels below it (`None`: all), as
    /// zarr-python 2's `group.tree(level=max_depth)`: 0 lists the group alone, 1 its direct
    /// members too.
    pub fn of_group_to_depth(group: &Group, max_depth: Option<usize>) -> Result<Tree> {
        let mut entries = Vec::new();
        walk::<()>(group, max_depth, |entry| {
            entries.push(entry);
            ControlFlow::Continue(())
        })?;
        Ok(Tree { entries })
    }

    /// The listed nodes in display order (the group itself first).
    pub fn entries(&self) -> &[TreeEntry] {
        &self.entries
    }

    /// The listing exactly as zarr-python 2.18 prints `str(group.tree())`: the group's name
    /// (`/` for the root), then one line per member drawn with box-drawing characters, an
    /// array shown as `name (shape) dtype` with NumPy's names for shape and type. Lines are
    /// separated by `\n`, with none after the last.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        // For each open level below the root: whether its group was the last member.
        let mut last_at_level: Vec<bool> = Vec::new();
        for entry in &self.entries {
            if entry.depth == 0 {
                out.push_str(match entry.name() {
                    "" => "/",
                    name => name,
                });
            } else {
                out.push('\n');
                last_at_level.truncate(entry.depth - 1);
                for &last in &last_at_level {
                    out.push_str(if last { "    " } else { " \u{2502}  " });
                }
                out.push_str(if entry.last {
                    " \u{2514}\u{2500}\u{2500} "
                } else {
                    " \u{251c}\u{2500}\u{2500} "
                });
                last_at_level.push(entry.last);
                out.push_str(entry.name());
            }
            if let TreeNode::Array(meta) = &entry.node {
                let _ = write!(
                    out,
                    " {} {}",
                    python_tuple(&meta.shape),
                    meta.dtype.numpy_str()
                );
            }
        }
        out
    }

    /// The listing as nested JSON. Every node has `name` (`""` for the store root), `path`
    /// (from the store root) and `kind` (`"group"` or `"array"`); a group has `children`, its
    /// members sorted by name; an array has `shape`, `chunks` and `dtype` (as in `.zarray`).
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        // For each group whose `children` list is open: whether a child was written yet.
        let mut open_groups: Vec<bool> = Vec::new();
        for entry in &self.entries {
            while open_groups.len() > entry.depth {
                open_groups.pop();
                out.push_str("]}");
            }
            if let Some(has_child) = open_groups.last_mut() {
                if *has_child {
                    out.push(',');
                }
                *has_child = true;
            }
            let _ = write!(
                out,
                "{{\"name\":{},\"path\":{},",
                Value::from(entry.name()),
                Value::from(entry.path.as_str())
            );
            match &entry.node {
                TreeNode::Group(_) => {
                    out.push_str("\"kind\":\"group\",\"children\":[");
                    open_groups.push(false);
                }
                TreeNode::Array(meta) => {
                    let _ = write!(
                        out,
                        "\"kind\":\"array\",\"shape\":{},\"chunks\":{},\"dtype\":{}}}",
                        Value::from(meta.shape.clone()),
                        meta.grid.chunks_json(),
                        meta.dtype.to_json()
                    );
                }
            }
        }
        for _ in open_groups {
            out.push_str("]}");
        }
        out
    }
}

/// The parsed `.zarray` of the array at `path`.
fn array_metadata(store: &StoreHandle, path: &str) -> Result<ArrayMetadata> {
    match hierarchy::read_array_metadata(store, path)? {
        Some(stored) => Ok(stored.metadata),
        None => Err(Error::NotFound(format!(
            "{:?} vanished while listing the tree",
            path::join(path, ZARRAY)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Array, OpenMode};

    fn hierarchy() -> std::sync::Arc<StoreHandle> {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let array = |path: &str, doc: &str| {
            Array::create(store.clone(), path, doc).unwrap();
        };
        Group::create(store.clone(), "foo").unwrap();
        Group::create(store.clone(), "bar/baz").unwrap();
        array(
            "bar/quux/baz",
            r#"{"shape": [100], "chunks": [10], "dtype": "<f8"}"#,
        );
        array(
            "bar/quux/nested",
            r#"{"shape": [4, 6], "chunks": [2, 3], "dtype": ">i2", "dimension_separator": "/"}"#,
        );
        array("scalar", r#"{"shape": [], "chunks": [], "dtype": "|b1"}"#);
        store
    }

    #[test]
    fn prints_like_zarr_python() {
        let store = hierarchy();
        let root = Group::open(store.clone(), "").unwrap();
        let expected = "/\n \
                        ├── bar\n \
                        │   ├── baz\n \
                        │   └── quux\n \
                        │       ├── baz (100,) float64\n \
                        │       └── nested (4, 6) >i2\n \
                        ├── foo\n \
                        └── scalar () bool";
        assert_eq!(Tree::of_group(&root).unwrap().to_text(), expected);
        let bar = Group::open(store, "bar").unwrap();
        let expected = "bar\n \
                        ├── baz\n \
                        └── quux\n     \
                        ├── baz (100,) float64\n     \
                        └── nested (4, 6) >i2";
        assert_eq!(Tree::of_group(&bar).unwrap().to_text(), expected);
    }

    #[test]
    fn nests_json_children_sorted() {
        let store = hierarchy();
        let bar = Group::open(store, "bar").unwrap();
        let json: Value = serde_json::from_str(&Tree::of_group(&bar).unwrap().to_json()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"name": "bar", "path": "bar", "kind": "group", "children": [
                {"name": "baz", "path": "bar/baz", "kind": "group", "children": []},
                {"name": "quux", "path": "bar/quux", "kind": "group", "children": [
                    {"name": "baz", "path": "bar/quux/baz", "kind": "array",
                     "shape": [100], "chunks": [10], "dtype": "<f8"},
                    {"name": "nested", "path": "bar/quux/nested", "kind": "array",
                     "shape": [4, 6], "chunks": [2, 3], "dtype": ">i2"}]}]})
        );
        let empty = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let root = Group::create(empty, "").unwrap();
        let tree = Tree::of_group(&root).unwrap();
        assert_eq!(tree.to_text(), "/");
        assert_eq!(
            tree.to_json(),
            r#"{"name":"","path":"","kind":"group","children":[]}"#
        );
    }

    #[test]
    fn walks_depth_first_sorted_and_stops_early() {
        let store = hierarchy();
        let bar = Group::open(store.clone(), "bar").unwrap();
        let mut seen = Vec::new();
        let stopped = walk::<()>(&bar, None, |entry| {
            seen.push((entry.relative_path("bar").to_string(), entry.depth));
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(stopped, None);
        let expected = [
            ("", 0),
            ("baz", 1),
            ("quux", 1),
            ("quux/baz", 2),
            ("quux/nested", 2),
        ];
        let expected: Vec<_> = expected.iter().map(|(p, d)| (p.to_string(), *d)).collect();
        assert_eq!(seen, expected);
        // Stopping at the first array: nothing after it is read, not even a broken member.
        store.set("bar/quux/nested/.zarray", b"{broken").unwrap();
        let stopped = walk(&bar, None, |entry| match entry.node {
            TreeNode::Array(_) => ControlFlow::Break(entry.path),
            TreeNode::Group(_) => ControlFlow::Continue(()),
        });
        assert_eq!(stopped.unwrap().as_deref(), Some("bar/quux/baz"));
    }

    #[test]
    fn limits_the_depth_as_zarr_python_tree_level() {
        let store = hierarchy();
        let root = Group::open(store, "").unwrap();
        let text = |level| Tree::of_group_to_depth(&root, level).unwrap().to_text();
        assert_eq!(text(Some(0)), "/");
        assert_eq!(
            text(Some(1)),
            "/\n \u{251c}\u{2500}\u{2500} bar\n \u{251c}\u{2500}\u{2500} foo\n \u{2514}\u{2500}\u{2500} scalar () bool"
        );
        assert_eq!(text(Some(3)), text(None));
        let json = Tree::of_group_to_depth(&root, Some(1)).unwrap().to_json();
        assert!(
            json.contains(r#""path":"bar","kind":"group","children":[]"#),
            "{json}"
        );
    }

    #[test]
    fn walks_a_deep_hierarchy_on_a_small_stack() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let depth = 500;
        Group::create(store.clone(), &vec!["g"; depth].join("/")).unwrap();
        let root = Group::open(store, "").unwrap();
        // 64 KiB of stack: far too little for a walk that recursed once per level.
        let tree = std::thread::Builder::new()
            .stack_size(64 << 10)
            .spawn(move || Tree::of_group(&root).unwrap())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(tree.entries().len(), depth + 1);
        assert_eq!(tree.entries()[depth].depth, depth);
    }

    #[test]
    fn renders_a_deep_hierarchy_on_a_small_stack() {
        let depth = 3000;
        // Real paths would grow with depth; only the names matter here.
        let entries = (0..=depth)
            .map(|level| TreeEntry {
                path: if level == 0 { "" } else { "g" }.to_string(),
                depth: level,
                last: true,
                node: TreeNode::Group(2),
            })
            .collect();
        let tree = Tree { entries };
        let (json, text) = std::thread::Builder::new()
            .stack_size(64 << 10)
            .spawn(move || (tree.to_json(), tree.to_text()))
            .unwrap()
            .join()
            .unwrap();
        assert!(json.ends_with(&"]}".repeat(depth + 1)));
        assert_eq!(text.lines().count(), depth + 1);
        assert!(text.ends_with(&format!(
            "\n{} \u{2514}\u{2500}\u{2500} g",
            "    ".repeat(depth - 1)
        )));
    }

    #[test]
    fn names_the_member_that_cannot_be_read() {
        let store = hierarchy();
        store.set("bar/quux/baz/.zarray", b"{not json").unwrap();
        let err = Tree::of_group(&Group::open(store.clone(), "").unwrap()).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidMetadata(m) if m.contains("bar/quux/baz/.zarray")),
            "{err}"
        );
        store
            .set(
                "bar/quux/baz/.zarray",
                br#"{"zarr_format": 2, "shape": [1]}"#,
            )
            .unwrap();
        let err = Tree::of_group(&Group::open(store.clone(), "").unwrap()).unwrap_err();
        assert!(err.to_string().contains("bar/quux/baz/.zarray"), "{err}");
        store.erase("bar/quux/baz/.zarray").unwrap();
        store.set("foo/.zgroup", b"[]").unwrap();
        let err = Tree::of_group(&Group::open(store, "").unwrap()).unwrap_err();
        assert!(err.to_string().contains("foo/.zgroup"), "{err}");
    }

    /// Found by the `store_image` fuzz target: a group stored under a name that is no path
    /// segment (`\\`, which paths read as `/`) was listed as a member whose path led back to
    /// the root, and the listing grew without end.
    #[test]
    fn skips_names_that_are_no_path_segment() {
        let store = hierarchy();
        for name in ["\\", "a\\b", "c\\..", ".zarray"] {
            store
                .set(&format!("{name}/.zgroup"), b"{\"zarr_format\": 2}")
                .unwrap();
        }
        let root = Group::open(store.clone(), "").unwrap();
        let members = root.members().unwrap();
        assert_eq!(members.groups, ["bar", "foo"]);
        assert_eq!(Tree::of_group(&root).unwrap().entries().len(), 8);
    }
}
