//! `zarr_group`: create, open, list and annotate groups; their diagnostics and tree listing.

use super::boundary::{close_handle, give_handle, give_string, out_arg, ref_arg, run, str_arg};
use super::node::{zarr_node_kind, ZARR_NODE_ARRAY, ZARR_NODE_GROUP};
use super::status::zarr_status;
use super::store::zarr_store;
use crate::error::{Error, Result};
use crate::group::Group;
use crate::hierarchy::CreateMode;
use crate::store::StoreHandle;
use crate::tree::{self, Tree, TreeNode};
use std::ffi::{c_char, c_void, CString};
use std::ops::ControlFlow;
use std::sync::Arc;

/// An open group. Safe to use from several threads at once.
#[allow(non_camel_case_types)]
pub struct zarr_group {
    pub(crate) inner: Group,
}

/// Hands text about a group (JSON or a listing) to the caller through the output argument
/// `out`, named `out_name` in errors.
fn text_out(
    group: *const zarr_group,
    out: *mut *mut c_char,
    out_name: &str,
    make: fn(&Group) -> Result<String>,
) -> zarr_status {
    run(|| {
        let group = &ref_arg(group, "group")?.inner;
        give_string(out_arg(out, out_name)?, make(group)?)
    })
}

/// Shared body of the calls that create or open a group.
fn group_call(
    store: *mut zarr_store,
    path: *const c_char,
    out_group: *mut *mut zarr_group,
    make: impl FnOnce(Arc<StoreHandle>, &str) -> crate::error::Result<Group>,
) -> zarr_status {
    run(|| {
        let store = ref_arg(store, "store")?;
        let path = str_arg(path, "path")?;
        let out = out_arg(out_group, "out_group")?;
        give_handle(
            out,
            zarr_group {
                inner: make(store.inner.clone(), path)?,
            },
        );
        Ok(())
    })
}

/// Creates a group at `path` ("" is the root) and any missing ancestor groups, in the format
/// of the nearest existing group above it: new groups join a hierarchy in its format, and an
/// empty store gets Zarr v2 (use `zarr_group_create_format` to choose). If a group already
/// exists there it is opened; an array there is `ZARR_ERR_ALREADY_EXISTS`.
///
/// # Safety
/// `store` must be a live handle, `path` a NUL-terminated string, `out_group` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create(
    store: *mut zarr_store,
    path: *const c_char,
    out_group: *mut *mut zarr_group,
) -> zarr_status {
    group_call(store, path, out_group, Group::create)
}

/// Creates a group at `path` in Zarr format `zarr_format` (2: `.zgroup`, 3: `zarr.json`), with
/// any missing ancestor groups in the same format. A group of that format already there is
/// opened; an array, or a group of the other format, is `ZARR_ERR_ALREADY_EXISTS`; a format
/// other than 2 or 3 is `ZARR_ERR_INVALID_ARGUMENT`. Names may be any Unicode in either
/// format, but a v3 group's path may hold no name made only of periods or starting with `__`
/// (the v3 spec's node names: `ZARR_ERR_INVALID_PATH`).
///
/// # Safety
/// `store` must be a live handle, `path` a NUL-terminated string, `out_group` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create_format(
    store: *mut zarr_store,
    path: *const c_char,
    zarr_format: i32,
    out_group: *mut *mut zarr_group,
) -> zarr_status {
    group_call(store, path, out_group, |store, path| {
        let format = u8::try_from(zarr_format).unwrap_or(0);
        Group::create_format(store, path, format)
    })
}

/// What a create call does with a node already at its path, as zarr-python's modes
/// (`zarr_group_create_mode`, `zarr_array_create_mode`).
#[allow(non_camel_case_types)]
pub type zarr_create_mode = i32;
/// `"w-"`: an array or group already at the path is `ZARR_ERR_ALREADY_EXISTS`.
pub const ZARR_CREATE_NEW: zarr_create_mode = 0;
/// `"w"` (`overwrite=True`): whatever is at the path, its node and every key below it (at the
/// root: the whole store), is removed first. An array above the path is
/// `ZARR_ERR_ALREADY_EXISTS` before anything is removed.
pub const ZARR_CREATE_OVERWRITE: zarr_create_mode = 1;
/// `"a"`: an existing node of the kind asked for is opened instead (for arrays, only one of
/// the shape and data type asked for, as zarr-python's `require_dataset`; any other is
/// `ZARR_ERR_ALREADY_EXISTS` saying what differs); otherwise the node is created.
pub const ZARR_CREATE_OPEN: zarr_create_mode = 2;

/// The engine's create mode of a `zarr_create_mode`.
pub(super) fn create_mode(mode: zarr_create_mode) -> Result<CreateMode> {
    match mode {
        ZARR_CREATE_NEW => Ok(CreateMode::New),
        ZARR_CREATE_OVERWRITE => Ok(CreateMode::Overwrite),
        ZARR_CREATE_OPEN => Ok(CreateMode::Open),
        _ => Err(Error::InvalidArgument(format!(
            "unknown create mode {mode}"
        ))),
    }
}

/// Creates a group at `path` ("" is the root) and any missing ancestor groups, in Zarr format
/// `zarr_format` (2 or 3; 0: that of the nearest group above it, v2 in an empty store),
/// treating what is already at `path` as `mode` says (`ZARR_CREATE_OPEN` is
/// `zarr_group_create_format`; `ZARR_CREATE_OVERWRITE` at the root empties the store, as
/// zarr-python's `zarr.group(store, overwrite=True)`).
///
/// # Safety
/// `store` must be a live handle, `path` a NUL-terminated string, `out_group` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create_mode(
    store: *mut zarr_store,
    path: *const c_char,
    zarr_format: i32,
    mode: zarr_create_mode,
    out_group: *mut *mut zarr_group,
) -> zarr_status {
    group_call(store, path, out_group, |store, path| {
        let format = match zarr_format {
            0 => None,
            f => Some(u8::try_from(f).unwrap_or(0)),
        };
        Group::create_with_mode(store, path, format, create_mode(mode)?)
    })
}

/// The group's Zarr format, 2 or 3, into `*out_format`.
///
/// # Safety
/// `group` must be a live handle and `out_format` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_zarr_format(
    group: *const zarr_group,
    out_format: *mut i32,
) -> zarr_status {
    run(|| {
        let format = ref_arg(group, "group")?.inner.zarr_format();
        *out_arg(out_format, "out_format")? = i32::from(format);
        Ok(())
    })
}

/// Opens the group at `path` (v2 or v3); `ZARR_ERR_NOT_FOUND` when nothing is there,
/// `ZARR_ERR_WRONG_NODE_TYPE` when an array is (the message names its metadata key).
///
/// # Safety
/// `store` must be a live handle, `path` a NUL-terminated string, `out_group` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_open(
    store: *mut zarr_store,
    path: *const c_char,
    out_group: *mut *mut zarr_group,
) -> zarr_status {
    group_call(store, path, out_group, Group::open)
}

/// Releases a group handle. NULL is a harmless no-op.
///
/// # Safety
/// `group` must be NULL or a handle that was not closed yet.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_close(group: *mut zarr_group) -> zarr_status {
    close_handle(group)
}

/// The group's direct members as JSON: `{"arrays": [names...], "groups": [names...]}`,
/// names sorted; free with `zarr_string_free`.
///
/// # Safety
/// `group` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_list(
    group: *const zarr_group,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(group, out_json, "out_json", |group| {
        Ok(group.members()?.to_json().to_string())
    })
}

/// The group's user attributes (`.zattrs`) as the stored JSON object text (`"{}"` when none;
/// `NaN`/`Infinity` values pass through as zarr-python writes them); free with
/// `zarr_string_free`.
///
/// # Safety
/// `group` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attrs_get(
    group: *const zarr_group,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(group, out_json, "out_json", Group::attributes)
}

/// Replaces the group's user attributes with `attrs_json`, a JSON object (stored as given).
///
/// # Safety
/// `group` must be a live handle and `attrs_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attrs_set(
    group: *mut zarr_group,
    attrs_json: *const c_char,
) -> zarr_status {
    run(|| {
        ref_arg(group, "group")?
            .inner
            .set_attributes(str_arg(attrs_json, "attrs_json")?)
    })
}

/// Sets the members of the JSON object `changes_json` in the group's user attributes,
/// keeping the others (see `zarr_array_attrs_update`).
///
/// # Safety
/// `group` must be a live handle and `changes_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attrs_update(
    group: *mut zarr_group,
    changes_json: *const c_char,
) -> zarr_status {
    run(|| {
        ref_arg(group, "group")?
            .inner
            .update_attributes(str_arg(changes_json, "changes_json")?)
    })
}

/// Removes the member `name` from the group's user attributes; a name they do not have is
/// `ZARR_ERR_NOT_FOUND`.
///
/// # Safety
/// `group` must be a live handle and `name` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attrs_delete(
    group: *mut zarr_group,
    name: *const c_char,
) -> zarr_status {
    run(|| {
        ref_arg(group, "group")?
            .inner
            .delete_attribute(str_arg(name, "name")?)
    })
}

/// Diagnostics like zarr-python's `group.info`, as JSON: `name` (`"/"` for the root, else
/// `"/"` + path), `path`, `store` (the location it was opened with), `store_type`
/// (`"directory"`, `"zip"`, `"memory"`, `"remote"`, `"caller"`, `"n5"`, `"dbm"`, `"redis"`,
/// `"sqlite"`, `"lmdb"` or `"reference"`), `read_only`, `num_members`,
/// `num_arrays`, `num_groups`, and the sorted member names in `arrays` and `groups`. Free with
/// `zarr_string_free`.
///
/// # Safety
/// `group` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_info_json(
    group: *const zarr_group,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(group, out_json, "out_json", |group| {
        Ok(group.info()?.to_string())
    })
}

/// A depth limit from C: a negative `level` is none.
fn level_arg(level: i32) -> Option<usize> {
    usize::try_from(level).ok()
}

/// A visiting callback (`zarr_group_visit`): called with a member's path relative to the
/// visited group (NUL-terminated UTF-8, valid during the call only), its kind
/// (`ZARR_NODE_ARRAY` or `ZARR_NODE_GROUP`), its Zarr format (2 or 3) and the visit's
/// `user_data`. It returns 0 to go on; any other value stops the visit, which hands that
/// value back through `out_stopped`.
#[allow(non_camel_case_types)]
pub type zarr_visit_fn = Option<
    unsafe extern "C" fn(
        path: *const c_char,
        kind: zarr_node_kind,
        zarr_format: i32,
        user_data: *mut c_void,
    ) -> i32,
>;

/// Visits every member below the group, as zarr-python 2's `group.visititems` (and `visit`,
/// `visitkeys`, `visitvalues`, which differ only in what Python hands the callback): depth
/// first, each group's members sorted by name (arrays and groups together), each member
/// followed by its own members; the group itself is not visited. Paths are relative to the
/// group (`"bar"`, `"bar/baz"`). `max_depth` limits how deep (1: the direct members only; a
/// negative value: no limit). `visit` is called on the calling thread, one member at a time; a
/// nonzero return stops the visit at once, and nodes not reached are never read.
///
/// The call returns `ZARR_OK` whether or not it was stopped; `*out_stopped` (may be NULL) is
/// 0 when every member was visited, else the callback's nonzero value (zarr-python returns
/// the callback's first non-`None` value). A member whose metadata cannot be read stops the
/// visit with an error naming its key (`ZARR_ERR_INVALID_METADATA` and the like); a NULL `visit`
/// is `ZARR_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `group` must be a live handle, `visit` a function that `user_data` suits, `out_stopped` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_visit(
    group: *const zarr_group,
    max_depth: i32,
    visit: zarr_visit_fn,
    user_data: *mut c_void,
    out_stopped: *mut i32,
) -> zarr_status {
    run(|| {
        let group = &ref_arg(group, "group")?.inner;
        let callback =
            visit.ok_or_else(|| Error::InvalidArgument("visit must not be NULL".to_string()))?;
        let base = group.path().to_string();
        let stopped = tree::walk(group, level_arg(max_depth), |entry| {
            if entry.depth == 0 {
                return ControlFlow::Continue(());
            }
            let kind = match entry.node {
                TreeNode::Group(_) => ZARR_NODE_GROUP,
                TreeNode::Array(_) => ZARR_NODE_ARRAY,
            };
            // Paths are store keys: never with an interior NUL.
            let path = CString::new(entry.relative_path(&base)).unwrap_or_default();
            // SAFETY: the caller gives a valid function, to be called with its own user_data.
            match unsafe { callback(path.as_ptr(), kind, entry.zarr_format().into(), user_data) } {
                0 => ControlFlow::Continue(()),
                value => ControlFlow::Break(value),
            }
        })?;
        if !out_stopped.is_null() {
            // SAFETY: checked non-NULL; the caller says it is writable.
            unsafe { *out_stopped = stopped.unwrap_or(0) };
        }
        Ok(())
    })
}

/// The group and everything below it as text, byte for byte as zarr-python 2.18 prints
/// `str(group.tree())`: the group's name (`/` for the root), then one line per member drawn
/// with box-drawing characters (UTF-8), members sorted by name, an array shown as
/// `name (shape) dtype` with NumPy's names (`(100,) float64`, `(4, 6) >i2`). Lines end with
/// `\n` except the last. A member whose metadata cannot be read fails the call with an error
/// naming its key. Free with `zarr_string_free`.
///
/// # Safety
/// `group` must be a live handle and `out_text` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_tree_text(
    group: *const zarr_group,
    out_text: *mut *mut c_char,
) -> zarr_status {
    text_out(group, out_text, "out_text", |group| {
        Ok(Tree::of_group(group)?.to_text())
    })
}

/// The group and everything below it as nested JSON. Every node has `name` (`""` for the
/// store root), `path` (from the store root) and `kind` (`"group"` or `"array"`); a group has
/// `children` (its members, sorted by name), an array has `shape`, `chunks` and `dtype` (as in
/// `.zarray`). Example: `{"name": "", "path": "", "kind": "group", "children": [{"name": "a",
/// "path": "a", "kind": "array", "shape": [10], "chunks": [5], "dtype": "<i4"}]}`. A member
/// whose metadata cannot be read fails the call with an error naming its key. Free with
/// `zarr_string_free`.
///
/// # Safety
/// `group` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_tree_json(
    group: *const zarr_group,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(group, out_json, "out_json", |group| {
        Ok(Tree::of_group(group)?.to_json())
    })
}

/// `zarr_group_tree_text` down to `level` levels below the group, as zarr-python 2's
/// `str(group.tree(level=level))`: 0 prints the group alone, 1 its direct members too (groups
/// among them without theirs); a negative `level` is no limit (`zarr_group_tree_text`).
///
/// # Safety
/// `group` must be a live handle and `out_text` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_tree_text_level(
    group: *const zarr_group,
    level: i32,
    out_text: *mut *mut c_char,
) -> zarr_status {
    run(|| {
        let group = &ref_arg(group, "group")?.inner;
        let tree = Tree::of_group_to_depth(group, level_arg(level))?;
        give_string(out_arg(out_text, "out_text")?, tree.to_text())
    })
}

/// `zarr_group_tree_json` down to `level` levels below the group (as
/// `zarr_group_tree_text_level`): groups at the limit have empty `children`; a negative
/// `level` is no limit.
///
/// # Safety
/// `group` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_tree_json_level(
    group: *const zarr_group,
    level: i32,
    out_json: *mut *mut c_char,
) -> zarr_status {
    run(|| {
        let group = &ref_arg(group, "group")?.inner;
        let tree = Tree::of_group_to_depth(group, level_arg(level))?;
        give_string(out_arg(out_json, "out_json")?, tree.to_json())
    })
}
