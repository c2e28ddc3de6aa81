//! Copying a node as zarr-python 2's `copy` and `copy_all` do: an array re-encoded into a new
//! one (through [`super::array_copy`]), a group with its members, recursively (or its direct
//! arrays only: `shallow`), each array with the same metadata changes; what is in the way at
//! the destination raised, replaced or skipped, skipped arrays and groups logged and counted.

use super::array_copy::{copy_array_with, DEFAULT_BLOCK_BYTES};
use super::copy_log::{CopyCounts, LogFn};
use super::options::{IfExists, NodeCopyOptions};
use super::progress::ProgressFn;
use crate::array::Array;
use crate::dtype::{python_tuple, DataTypeKind};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::hierarchy::{self, NodeKind};
use crate::path;
use crate::store::StoreHandle;
use std::sync::Arc;

/// NumPy's item size of an object array (a pointer), which zarr-python counts as its bytes.
const OBJECT_ITEM_BYTES: u64 = 8;

/// Copies the array or group at `src_path` of `src` to `dst_path` of `dst` (zarr-python 2's
/// `copy(source, dest_group, name)`, `dst_path` being the group's path and the name), or, with
/// `options.copy_all`, every member of the group at `src_path` into the group at `dst_path`
/// (`copy_all`; the group is made when missing, and the source group's attributes are merged
/// into its own).
///
/// An array is re-encoded with `options.overrides` (as [`super::copy_array`]). If a node is at
/// its destination, `if_exists` says: `raise` (an error, [`Error::AlreadyExists`]), `replace`
/// (the node is deleted first), `skip` (left; logged and counted as skipped) or
/// `skip_initialized` (left if it is an array with every chunk stored, else replaced). A group
/// is copied into an existing group at its destination (its attributes merged into that group's);
/// only an array there is in the way, raised, replaced or skipped as for arrays (with
/// `skip_initialized` replaced). Members are copied in name order, depth first; with `shallow`
/// only the arrays directly in the copied group (zarr-python 2 passes over member groups then).
/// `without_attrs` copies no attributes. A dry run reads and decides but writes nothing.
///
/// `log` gets zarr-python's lines: `copy /PATH` for a group, `copy /PATH (SHAPE) DTYPE` for an
/// array (`skip` for what is left; the source's path), then the summary. The counts are of nodes
/// copied and skipped, and of the bytes of the arrays copied (elements times item size). The
/// progress reports are each array's in turn ([`super::copy_array`]). Within one store the
/// source and the destination must not contain each other ([`Error::InvalidPath`]).
pub fn copy_node(
    src: &Arc<StoreHandle>,
    src_path: &str,
    dst: &Arc<StoreHandle>,
    dst_path: &str,
    options: &NodeCopyOptions,
    log: &mut LogFn,
    progress: &mut ProgressFn,
) -> Result<CopyCounts> {
    let (src_path, dst_path) = (path::normalize(src_path)?, path::normalize(dst_path)?);
    if !options.dry_run {
        dst.check_writable(&dst_path)?;
    }
    let inside = |inner: &str, outer: &str| {
        outer.is_empty() || inner == outer || inner.starts_with(&format!("{outer}/"))
    };
    if src.is_same_store(dst) && (inside(&dst_path, &src_path) || inside(&src_path, &dst_path)) {
        return Err(Error::InvalidPath(format!(
            "cannot copy {src_path:?} to {dst_path:?} in the same store: one contains the other"
        )));
    }
    let source = hierarchy::node(src, &src_path)?;
    if source.kind == NodeKind::None {
        return Err(Error::NotFound(format!(
            "nothing to copy at path {src_path:?}"
        )));
    }
    refuse_array_above(dst, &dst_path)?;
    let mut copy = NodeCopy {
        src,
        dst,
        options,
        log,
        progress,
        counts: CopyCounts::default(),
    };
    // Nodes still to copy, the next one on top: (source path, destination path, is the root).
    let mut pending = Vec::new();
    if options.copy_all {
        if source.kind != NodeKind::Group {
            return Err(Error::InvalidArgument(format!(
                "copy_all copies the members of a group, and {src_path:?} is an array"
            )));
        }
        match hierarchy::node_kind(dst, &dst_path)? {
            NodeKind::Array => {
                return Err(Error::AlreadyExists(format!(
                    "the destination of copy_all, {dst_path:?}, is an array, not a group"
                )))
            }
            NodeKind::None if !options.dry_run => {
                Group::create_format(dst.clone(), &dst_path, source.format)?;
            }
            _ => {}
        }
        for name in member_names(src, &src_path)?.into_iter().rev() {
            pending.push((
                path::join(&src_path, &name),
                path::join(&dst_path, &name),
                false,
            ));
        }
    } else {
        pending.push((src_path.clone(), dst_path.clone(), true));
    }
    while let Some((from, to, root)) = pending.pop() {
        let copy_members = match hierarchy::node_kind(src, &from)? {
            NodeKind::Array => {
                copy.array(&from, &to)?;
                false
            }
            NodeKind::Group if root || !options.shallow => copy.group(&from, &to)?,
            _ => false,
        };
        if copy_members {
            for name in member_names(src, &from)?.into_iter().rev() {
                pending.push((path::join(&from, &name), path::join(&to, &name), false));
            }
        }
    }
    if options.copy_all && !options.dry_run && !options.without_attrs {
        copy.merge_attributes(&src_path, &dst_path)?;
    }
    let counts = copy.counts;
    (copy.log)(&counts.summary(options.dry_run));
    Ok(counts)
}

/// One node copy under way.
struct NodeCopy<'a, 'l, 'p> {
    src: &'a Arc<StoreHandle>,
    dst: &'a Arc<StoreHandle>,
    options: &'a NodeCopyOptions,
    log: &'a mut LogFn<'l>,
    progress: &'a mut ProgressFn<'p>,
    counts: CopyCounts,
}

impl NodeCopy<'_, '_, '_> {
    /// Copies (or skips) the array at `from` to `to`.
    fn array(&mut self, from: &str, to: &str) -> Result<()> {
        let array = Array::open(self.src.clone(), from)?;
        let label = format!(
            "{} {} {}",
            python_name(from),
            python_tuple(&array.shape()),
            array.metadata().dtype.numpy_str()
        );
        let existing = hierarchy::node_kind(self.dst, to)?;
        let skip = match (existing, self.options.if_exists) {
            (NodeKind::None, _) => false,
            (_, IfExists::Raise) => return Err(in_the_way("an object", to)),
            (_, IfExists::Skip) => true,
            (NodeKind::Array, IfExists::SkipInitialized) => {
                fully_initialized(&Array::open(self.dst.clone(), to)?)?
            }
            _ => false,
        };
        if skip {
            (self.log)(&format!("skip {label}"));
            self.counts.skipped += 1;
            return Ok(());
        }
        (self.log)(&format!("copy {label}"));
        if !self.options.dry_run {
            if existing != NodeKind::None {
                hierarchy::clear_for_overwrite(self.dst, to)?;
            }
            copy_array_with(
                &array,
                self.dst.clone(),
                to,
                &self.options.overrides,
                !self.options.without_attrs,
                DEFAULT_BLOCK_BYTES,
                self.progress,
            )?;
            let item_bytes = match array.metadata().dtype.kind {
                DataTypeKind::Object => OBJECT_ITEM_BYTES,
                _ => array.item_size() as u64,
            };
            let elements: u64 = array.shape().iter().product();
            self.counts.bytes_copied += elements.saturating_mul(item_bytes);
        }
        self.counts.copied += 1;
        Ok(())
    }

    /// Copies (or skips) the group at `from` to `to`, without its members; whether its members
    /// are to be copied.
    fn group(&mut self, from: &str, to: &str) -> Result<bool> {
        let existing = hierarchy::node(self.dst, to)?;
        let array_in_the_way = existing.kind == NodeKind::Array;
        if array_in_the_way {
            match self.options.if_exists {
                IfExists::Raise => return Err(in_the_way("an array", to)),
                IfExists::Skip => {
                    (self.log)(&format!("skip {}", python_name(from)));
                    self.counts.skipped += 1;
                    return Ok(false);
                }
                IfExists::Replace | IfExists::SkipInitialized => {}
            }
        }
        (self.log)(&format!("copy {}", python_name(from)));
        if !self.options.dry_run {
            if array_in_the_way {
                hierarchy::clear_for_overwrite(self.dst, to)?;
            }
            if existing.kind != NodeKind::Group {
                let format = hierarchy::node(self.src, from)?.format;
                Group::create_format(self.dst.clone(), to, format)?;
            }
            if !self.options.without_attrs {
                self.merge_attributes(from, to)?;
            }
        }
        self.counts.copied += 1;
        Ok(true)
    }

    /// Merges the attributes of the node at `from` into those of the node at `to` (zarr-python's
    /// `attrs.update`); nothing is written when the source has none.
    fn merge_attributes(&self, from: &str, to: &str) -> Result<()> {
        let attributes = hierarchy::attributes(self.src, from)?;
        let has_any =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&attributes)
                .map(|members| !members.is_empty())
                .unwrap_or(true);
        match has_any {
            true => hierarchy::update_attributes(self.dst, to, &attributes),
            false => Ok(()),
        }
    }
}

/// The names of a group's arrays and groups, sorted together (zarr-python 2's `Group.keys()`).
fn member_names(store: &Arc<StoreHandle>, path: &str) -> Result<Vec<String>> {
    let members = Group::open(store.clone(), path)?.members()?;
    let mut names: Vec<String> = members.arrays.into_iter().chain(members.groups).collect();
    names.sort();
    Ok(names)
}

/// Whether every chunk (shard) of the array's grid is stored (zarr-python's
/// `nchunks_initialized == nchunks`).
fn fully_initialized(array: &Array) -> Result<bool> {
    let grid = array.chunk_grid().grid_shape(&array.shape());
    let total = grid.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n));
    let stored = array
        .stored_chunks()?
        .iter()
        .filter(|coords| coords.iter().zip(&grid).all(|(c, n)| c < n))
        .count() as u64;
    Ok(Some(stored) == total)
}

/// A node's name as zarr-python shows it: its path from the root, `/` first.
fn python_name(path: &str) -> String {
    format!("/{path}")
}

/// zarr-python's `CopyError` for a node in the way at `to`: "an object 'a' already exists in
/// destination '/g'".
fn in_the_way(what: &str, to: &str) -> Error {
    let name = path::last_segment(to);
    let parent = to.rsplit_once('/').map_or("", |(parent, _)| parent);
    Error::AlreadyExists(format!(
        "{what} '{name}' already exists in destination '{}' (path {to:?})",
        python_name(parent)
    ))
}

/// An array at `path` or above it, where a copy's destination group cannot be, is
/// [`Error::AlreadyExists`].
fn refuse_array_above(store: &StoreHandle, path: &str) -> Result<()> {
    for ancestor in path::ancestors(path) {
        if hierarchy::node_kind(store, &ancestor)? == NodeKind::Array {
            return Err(Error::AlreadyExists(format!(
                "cannot copy to {path:?}: its ancestor {ancestor:?} is an array"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::Progress;
    use crate::store::OpenMode;
    use serde_json::{json, Value};
    use std::ops::ControlFlow;

    fn memory() -> Arc<StoreHandle> {
        StoreHandle::open("memory:", OpenMode::Write).unwrap()
    }

    /// Groups "", g (attributes), g/sub; arrays g/a (3 x 4 `<i4`, written), g/sub/b (5 `<f8`,
    /// one chunk of two written), top (2 `|u1`).
    fn hierarchy(store: &Arc<StoreHandle>) {
        Group::create(store.clone(), "g/sub").unwrap();
        hierarchy::set_attributes(store, "g", r#"{"level": 1}"#).unwrap();
        let a = Array::create(
            store.clone(),
            "g/a",
            r#"{"shape": [3, 4], "chunks": [2, 2], "dtype": "<i4", "compressor": {"id": "zlib", "level": 1}}"#,
        )
        .unwrap();
        let values: Vec<u8> = (0..12i32).flat_map(|v| v.to_ne_bytes()).collect();
        a.write_region(&[0, 0], &[3, 4], &values).unwrap();
        a.set_attributes(r#"{"units": "K"}"#).unwrap();
        let b = Array::create(
            store.clone(),
            "g/sub/b",
            r#"{"shape": [5], "chunks": [3], "dtype": "<f8", "fill_value": 0.5}"#,
        )
        .unwrap();
        b.write_region(&[0], &[3], &[1u8; 24]).unwrap();
        Array::create(
            store.clone(),
            "top",
            r#"{"shape": [2], "chunks": [2], "dtype": "|u1"}"#,
        )
        .unwrap()
        .write_region(&[0], &[2], &[1, 2])
        .unwrap();
    }

    fn copy(
        src: &Arc<StoreHandle>,
        from: &str,
        dst: &Arc<StoreHandle>,
        to: &str,
        options: &str,
    ) -> Result<(CopyCounts, Vec<String>)> {
        let options = NodeCopyOptions::parse(Some(options))?;
        let mut lines = Vec::new();
        let counts = copy_node(
            src,
            from,
            dst,
            to,
            &options,
            &mut |line: &str| lines.push(line.to_string()),
            &mut |_: &Progress| ControlFlow::Continue(()),
        )?;
        Ok((counts, lines))
    }

    fn values(store: &Arc<StoreHandle>, path: &str) -> Vec<u8> {
        let a = Array::open(store.clone(), path).unwrap();
        let shape = a.shape();
        let n: u64 = shape.iter().product();
        let mut out = vec![0u8; n as usize * a.item_size()];
        a.read_region(&vec![0; shape.len()], &shape, &mut out)
            .unwrap();
        out
    }

    fn attrs(store: &Arc<StoreHandle>, path: &str) -> Value {
        serde_json::from_str(&hierarchy::attributes(store, path).unwrap()).unwrap()
    }

    const A_BYTES: u64 = 12 * 4;
    const B_BYTES: u64 = 5 * 8;

    #[test]
    fn copies_a_group_recursively_with_new_codecs_and_logs_as_zarr_python() {
        let (src, dst) = (memory(), memory());
        hierarchy(&src);
        let (counts, lines) = copy(
            &src,
            "g",
            &dst,
            "x/g2",
            r#"{"overrides": {"compressor": {"id": "zstd", "level": 3}}}"#,
        )
        .unwrap();
        assert_eq!(
            lines,
            vec![
                "copy /g",
                "copy /g/a (3, 4) int32",
                "copy /g/sub",
                "copy /g/sub/b (5,) float64",
                "all done: 4 copied, 0 skipped, 88 bytes copied",
            ]
        );
        assert_eq!(
            counts,
            CopyCounts {
                copied: 4,
                skipped: 0,
                bytes_copied: A_BYTES + B_BYTES
            }
        );
        assert_eq!(values(&dst, "x/g2/a"), values(&src, "g/a"));
        assert_eq!(values(&dst, "x/g2/sub/b"), values(&src, "g/sub/b"));
        let copied = Array::open(dst.clone(), "x/g2/sub/b").unwrap();
        let compressor = &copied.metadata_json().unwrap()["compressor"];
        assert_eq!(
            (&compressor["id"], &compressor["level"]),
            (&json!("zstd"), &json!(3))
        );
        assert_eq!(attrs(&dst, "x/g2"), json!({"level": 1}));
        assert_eq!(attrs(&dst, "x/g2/a"), json!({"units": "K"}));
        assert_eq!(hierarchy::node_kind(&dst, "x").unwrap(), NodeKind::Group);
        // The root, as an array alone.
        let (counts, lines) = copy(&src, "", &memory(), "r", "{}").unwrap();
        assert_eq!(lines[0], "copy /");
        assert_eq!(counts.copied, 6);
        let (counts, lines) = copy(&src, "top", &dst, "t", "{}").unwrap();
        assert_eq!(lines[0], "copy /top (2,) uint8");
        assert_eq!((counts.copied, counts.bytes_copied), (1, 2));
    }

    #[test]
    fn shallow_without_attrs_and_dry_runs() {
        let src = memory();
        hierarchy(&src);
        let dst = memory();
        let (counts, lines) = copy(&src, "g", &dst, "g", r#"{"shallow": true}"#).unwrap();
        assert_eq!(lines[..2], ["copy /g", "copy /g/a (3, 4) int32"]);
        assert_eq!(counts.copied, 2, "member groups are not copied");
        assert_eq!(hierarchy::node_kind(&dst, "g/sub").unwrap(), NodeKind::None);
        let dst = memory();
        copy(&src, "g", &dst, "g", r#"{"without_attrs": true}"#).unwrap();
        assert_eq!(attrs(&dst, "g"), json!({}));
        assert_eq!(attrs(&dst, "g/a"), json!({}));
        assert!(!dst.contains("g/a/.zattrs").unwrap());
        let read_only = StoreHandle::open("memory:", OpenMode::Read).unwrap();
        let (counts, lines) = copy(&src, "g", &read_only, "g", r#"{"dry_run": true}"#).unwrap();
        assert_eq!((counts.copied, counts.bytes_copied), (4, 0));
        assert_eq!(lines.last().unwrap(), "dry run: 4 copied, 0 skipped");
    }

    #[test]
    fn copy_all_copies_the_members_into_a_group() {
        let (src, dst) = (memory(), memory());
        hierarchy(&src);
        Group::create(dst.clone(), "d").unwrap();
        hierarchy::set_attributes(&dst, "d", r#"{"mine": true}"#).unwrap();
        let (counts, lines) = copy(&src, "g", &dst, "d", r#"{"copy_all": true}"#).unwrap();
        assert_eq!(lines[0], "copy /g/a (3, 4) int32");
        assert_eq!(counts.copied, 3);
        assert_eq!(values(&dst, "d/a"), values(&src, "g/a"));
        assert_eq!(attrs(&dst, "d"), json!({"mine": true, "level": 1}));
        let (counts, _) = copy(
            &src,
            "g",
            &dst,
            "new",
            r#"{"copy_all": true, "shallow": true}"#,
        )
        .unwrap();
        assert_eq!(counts.copied, 1, "the array only");
        assert_eq!(hierarchy::node_kind(&dst, "new").unwrap(), NodeKind::Group);
        let err = copy(&src, "g/a", &dst, "e", r#"{"copy_all": true}"#).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        let err = copy(&src, "g", &dst, "d/a", r#"{"copy_all": true}"#).unwrap_err();
        assert!(matches!(err, Error::AlreadyExists(_)), "{err}");
    }

    #[test]
    fn if_exists_raise_skip_replace_and_skip_initialized() {
        let src = memory();
        hierarchy(&src);
        let prepare = || {
            let dst = memory();
            // g/a with every chunk stored (other values), g/sub/b with one of two.
            let a = Array::create(
                dst.clone(),
                "g/a",
                r#"{"shape": [3, 4], "chunks": [2, 2], "dtype": "<i4"}"#,
            )
            .unwrap();
            a.write_region(&[0, 0], &[3, 4], &[7u8; 48]).unwrap();
            let b = Array::create(
                dst.clone(),
                "g/sub/b",
                r#"{"shape": [5], "chunks": [3], "dtype": "<f8"}"#,
            )
            .unwrap();
            b.write_region(&[0], &[1], &[9u8; 8]).unwrap();
            dst
        };
        let dst = prepare();
        let err = copy(&src, "g", &dst, "g", "{}").unwrap_err();
        assert!(
            matches!(&err, Error::AlreadyExists(m) if m.contains("an object 'a' already exists in destination '/g'")),
            "{err}"
        );
        let (counts, lines) = copy(&src, "g", &dst, "g", r#"{"if_exists": "skip"}"#).unwrap();
        assert!(lines.contains(&"skip /g/a (3, 4) int32".to_string()));
        assert_eq!((counts.copied, counts.skipped), (2, 2));
        assert_eq!(values(&dst, "g/a"), vec![7u8; 48]);
        let (counts, lines) =
            copy(&src, "g", &dst, "g", r#"{"if_exists": "skip_initialized"}"#).unwrap();
        assert!(lines.contains(&"skip /g/a (3, 4) int32".to_string()));
        assert!(lines.contains(&"copy /g/sub/b (5,) float64".to_string()));
        assert_eq!((counts.copied, counts.skipped), (3, 1));
        assert_eq!(values(&dst, "g/sub/b"), values(&src, "g/sub/b"));
        let dst = prepare();
        let (counts, _) = copy(&src, "g", &dst, "g", r#"{"if_exists": "replace"}"#).unwrap();
        assert_eq!((counts.copied, counts.skipped), (4, 0));
        assert_eq!(values(&dst, "g/a"), values(&src, "g/a"));
        // An array where a group goes.
        let dst = memory();
        Array::create(
            dst.clone(),
            "g/sub",
            r#"{"shape": [1], "chunks": [1], "dtype": "|u1"}"#,
        )
        .unwrap();
        let err = copy(&src, "g", &dst, "g", "{}").unwrap_err();
        assert!(
            matches!(&err, Error::AlreadyExists(m) if m.contains("an array 'sub'")),
            "{err}"
        );
        // g and g/a were copied before the refusal.
        let (counts, lines) = copy(&src, "g", &dst, "g", r#"{"if_exists": "skip"}"#).unwrap();
        assert!(lines.contains(&"skip /g/sub".to_string()));
        assert_eq!((counts.copied, counts.skipped), (1, 2));
        copy(&src, "g", &dst, "g", r#"{"if_exists": "replace"}"#).unwrap();
        assert_eq!(values(&dst, "g/sub/b"), values(&src, "g/sub/b"));
    }

    #[test]
    fn refuses_bad_sources_and_destinations() {
        let (src, dst) = (memory(), memory());
        hierarchy(&src);
        for (from, to, kind) in [
            ("g", "g/x", "InvalidPath"),
            ("g/a", "g", "InvalidPath"),
            ("", "r", "InvalidPath"),
        ] {
            let err = copy(&src, from, &src, to, "{}").unwrap_err();
            assert!(format!("{err:?}").starts_with(kind), "{from} {to}: {err:?}");
        }
        let err = copy(&src, "nope", &dst, "x", "{}").unwrap_err();
        assert!(matches!(err, Error::NotFound(_)), "{err}");
        copy(&src, "top", &dst, "top", "{}").unwrap();
        let err = copy(&src, "g", &dst, "top/g", "{}").unwrap_err();
        assert!(matches!(err, Error::AlreadyExists(_)), "{err}");
        let err = copy(&src, "g", &dst, "y", r#"{"overrides": {"colour": 1}}"#).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidArgument(m) if m.contains("colour")),
            "{err:?}"
        );
        let read_only = StoreHandle::open("memory:", OpenMode::Read).unwrap();
        let err = copy(&src, "g", &read_only, "g", "{}").unwrap_err();
        assert!(matches!(err, Error::ReadOnly(_)), "{err}");
    }

    #[test]
    fn cancelling_stops_the_whole_copy() {
        let (src, dst) = (memory(), memory());
        hierarchy(&src);
        let options = NodeCopyOptions::parse(None).unwrap();
        let mut arrays_started = 0;
        let err = copy_node(
            &src,
            "g",
            &dst,
            "g",
            &options,
            &mut |_: &str| {},
            &mut |p: &Progress| {
                if p.items_done == 0 {
                    arrays_started += 1;
                }
                match arrays_started {
                    2 => ControlFlow::Break(()),
                    _ => ControlFlow::Continue(()),
                }
            },
        )
        .unwrap_err();
        assert!(matches!(err, Error::Cancelled(_)), "{err}");
        assert_eq!(values(&dst, "g/a"), values(&src, "g/a"));
        assert_eq!(
            hierarchy::node_kind(&dst, "g/sub/b").unwrap(),
            NodeKind::None
        );
    }
}
