"""Group diagnostics and tree listings, in both directions (zarr-python writes and libzarr lists; libzarr
writes and zarr-python lists), with nested groups, nested ("/") chunk keys and non-ASCII names:

* zarr_group_tree_text is byte for byte zarr-python 2's str(group.tree()) (zarr 3 prints another layout
  with its own dtype names, so the text is compared under zarr 2 only);
* zarr_group_tree_json is the hierarchy zarr-python's own walk finds (zarr 2's visititems, zarr 3's
  members(max_depth=None)), with each array's shape, chunks and dtype as zarr-python reads them;
* zarr_group_info_json reports what zarr 2's group.info does (counting direct members, as zarr 3's listing)."""
import numcodecs
import numpy as np
import pytest

import libzarr
import zpy
from zpy import ZARR3

TEXT_ONLY_ZARR2 = pytest.mark.skipif(ZARR3, reason="zarr 3's tree() prints another layout and dtype names")

# libzarr-written arrays of every kind of dtype, for the NumPy names in the tree text: (name, dtype, extra).
DTYPES = [
    ("b1", "|b1", {}), ("i1", "|i1", {}), ("i2", "<i2", {}), ("i4_be", ">i4", {}), ("u8", "<u8", {}),
    ("u2_be", ">u2", {}), ("f2", "<f2", {}), ("f8_be", ">f8", {}), ("c8", "<c8", {}), ("c16_be", ">c16", {}),
    ("bytes", "|S5", {}), ("text", "<U3", {}), ("text_be", ">U3", {}), ("raw", "|V7", {}),
    ("ns", "<M8[ns]", {}), ("ten_s_be", ">M8[10s]", {}), ("days", "<m8[D]", {}), ("us_be", ">m8[us]", {}),
    ("record", [["a", "<i4"], ["b", ">f8"]], {}),
    ("record_sub", [["a", "<i4"], ["b", ">f8", [2, 3]], ["it's", "|b1", [1]]], {}),
    ("record_nested", [["x", [["y", "|u1"], ["z", "<U2"]]], ["w", "|S3", [4]]], {}),
    ("strings", "|O", {"filters": [{"id": "vlen-utf8"}], "fill_value": None}),
]


def python_writes(path):
    """A hierarchy written by zarr-python: nested groups, arrays with nested chunk keys, unsorted names."""
    root = zpy.open_group(path, "w")
    root.require_group("foo")
    bar = root.require_group("bar")
    bar.require_group("baz")
    quux = bar.require_group("quux")
    zpy.create_member(quux, "baz", shape=(100,), chunks=(10,), dtype="<f8")
    nested = zpy.create_member(quux, "nested", shape=(4, 6), chunks=(2, 3), dtype=">i2", separator="/")
    nested[...] = np.arange(24).reshape(4, 6)
    deeper = root.require_group("B").require_group("é").require_group("deeper")
    z = zpy.create_member(deeper, "z", shape=(3, 4, 5), chunks=(2, 2, 2), dtype="<u2", separator="/")
    z[...] = 7
    zpy.create_member(root, "a", shape=(7,), chunks=(7,), dtype="|b1", fill_value=False)
    zpy.create_member(root, "words", shape=(3,), chunks=(2,), dtype=object, fill_value=None,
                      object_codec=numcodecs.VLenUTF8())


def libzarr_writes(path, dtypes=()):
    """The same shape of hierarchy written by libzarr, plus a 0-d array and one array per dtype given."""
    with libzarr.open_store(path, "a") as store:
        for group in ["", "foo", "bar/baz", "B/é/deeper"]:
            store.create_group(group).close()
        arrays = [("bar/quux/baz", [100], [10], "<f8", {}),
                  ("bar/quux/nested", [4, 6], [2, 3], ">i2", {"dimension_separator": "/"}),
                  ("B/é/deeper/z", [3, 4, 5], [2, 2, 2], "<u2", {"dimension_separator": "/"}),
                  ("a", [7], [7], "|b1", {"fill_value": False}),
                  ("scalar", [], [], "<i8", {})]
        arrays += [(f"types/{name}", [2, 3], [1, 2], dtype, extra) for name, dtype, extra in dtypes]
        for array_path, shape, chunks, dtype, extra in arrays:
            with store.create_array(array_path, {"shape": shape, "chunks": chunks, "dtype": dtype, **extra}) as a:
                if array_path == "bar/quux/nested":
                    a.write(np.arange(24, dtype="i2").reshape(4, 6))


def python_tree(group, path):
    """The JSON tree zarr_group_tree_json promises for `group` at `path`, built from zarr-python's walk."""
    def node(node_path, obj):
        name = node_path.rsplit("/", 1)[-1]
        if hasattr(obj, "shape"):
            return {"name": name, "path": node_path, "kind": "array", "shape": list(obj.shape),
                    "chunks": list(obj.chunks), "dtype": zpy.stored_dtype(obj)}
        return {"name": name, "path": node_path, "kind": "group", "children": []}
    root = node(path, group)
    by_relative_path = {"": root}
    for relative, obj in sorted(zpy.walk(group), key=lambda item: item[0].split("/")):
        parent = relative.rpartition("/")[0]
        child = node(f"{path}/{relative}" if path else relative, obj)
        by_relative_path[parent]["children"].append(child)
        by_relative_path[relative] = child
    return root


def python_info(group):
    """The facts of zarr-python 2's group.info that zarr_group_info_json reports too. zarr 3's
    info_complete() counts the members of the whole subtree, so there the counts of direct members come
    from its listing."""
    arrays, groups = sorted(group.array_keys()), sorted(group.group_keys())
    if ZARR3:
        facts = {"name": group.name, "read_only": group.info._read_only, "num_members": len(group.members()),
                 "num_arrays": len(arrays), "num_groups": len(groups)}
    else:
        items = dict(group.info_items())
        facts = {"name": items["Name"], "read_only": items["Read-only"] == "True",
                 "num_members": items["No. members"], "num_arrays": items["No. arrays"],
                 "num_groups": items["No. groups"]}
    return {**facts, "arrays": arrays, "groups": groups}


def listed_info(group):
    info = group.info()
    return {key: info[key] for key in ["name", "read_only", "num_members", "num_arrays", "num_groups",
                                       "arrays", "groups"]}


@pytest.mark.parametrize("group_path", ["", "bar", "B/é"])
def test_libzarr_lists_python_hierarchy_as_json(tmp_path, group_path):
    python_writes(tmp_path)
    expected = python_tree(zpy.open_group(tmp_path)[group_path] if group_path else zpy.open_group(tmp_path),
                           group_path)
    with libzarr.open_store(tmp_path) as store, store.open_group(group_path) as group:
        assert group.tree() == expected


@TEXT_ONLY_ZARR2
@pytest.mark.parametrize("group_path", ["", "bar", "B/é"])
def test_libzarr_tree_text_is_zarr2s(tmp_path, group_path):
    python_writes(tmp_path)
    root = zpy.open_group(tmp_path)
    expected = str((root[group_path] if group_path else root).tree())
    with libzarr.open_store(tmp_path) as store, store.open_group(group_path) as group:
        assert group.tree_text() == expected


@pytest.mark.parametrize("group_path", ["", "bar", "bar/baz"])
def test_group_info_matches_python(tmp_path, group_path):
    python_writes(tmp_path)
    root = zpy.open_group(tmp_path)
    expected = python_info(root[group_path] if group_path else root)
    with libzarr.open_store(tmp_path) as store, store.open_group(group_path) as group:
        assert listed_info(group) == expected
        info = group.info()
        assert (info["path"], info["store"], info["store_type"]) == (group_path, str(tmp_path), "directory")


def test_python_lists_libzarr_hierarchy(tmp_path):
    readable = [(name, dtype, extra) for name, dtype, extra in DTYPES
                if dtype == "|O" or not zpy.cannot_open(libzarr.dtype_from_json(dtype))]
    libzarr_writes(tmp_path, readable)
    root = zpy.open_group(tmp_path)
    with libzarr.open_store(tmp_path) as store:
        for group_path in ["", "bar", "types"]:
            with store.open_group(group_path) as group:
                assert group.tree() == python_tree(root[group_path] if group_path else root, group_path)
                assert listed_info(group) == python_info(root[group_path] if group_path else root)
    np.testing.assert_array_equal(root["bar/quux/nested"][...], np.arange(24).reshape(4, 6))


@TEXT_ONLY_ZARR2
def test_python_tree_text_of_libzarr_hierarchy(tmp_path):
    libzarr_writes(tmp_path, DTYPES)
    root = zpy.open_group(tmp_path)
    with libzarr.open_store(tmp_path) as store:
        for group_path in ["", "types", "B"]:
            with store.open_group(group_path) as group:
                assert group.tree_text() == str((root[group_path] if group_path else root).tree())


def test_read_only_and_unreadable_members(tmp_path):
    python_writes(tmp_path)
    with libzarr.open_store(tmp_path) as store, store.open_group("") as root:
        assert root.info()["read_only"] is True
    (tmp_path / "bar" / "quux" / "baz" / ".zarray").write_text('{"zarr_format": 2, "shape": [3]}')
    with libzarr.open_store(tmp_path) as store, store.open_group("bar") as bar:
        for listing in (bar.tree, bar.tree_text):
            with pytest.raises(libzarr.LibzarrError) as err:
                listing()
            assert err.value.name == "ZARR_ERR_INVALID_METADATA"
            assert "bar/quux/baz/.zarray" in err.value.message and "chunks" in err.value.message
        assert bar.info()["groups"] == ["baz", "quux"]  # its own members are still listed


def python_visit(group):
    """(path, kind) of every member in zarr-python 2's visititems order."""
    seen = []
    group.visititems(lambda path, obj: seen.append((path, "array" if hasattr(obj, "shape") else "group")))
    return seen


VISIT_ZARR2 = pytest.mark.skipif(ZARR3, reason="zarr 3 has no visit/visititems")


@VISIT_ZARR2
@pytest.mark.parametrize("writer", ["python", "libzarr"])
@pytest.mark.parametrize("group_path", ["", "bar", "B/é"])
def test_visit_order_is_zarr2s(tmp_path, writer, group_path):
    (python_writes if writer == "python" else libzarr_writes)(tmp_path)
    root = zpy.open_group(tmp_path)
    expected = python_visit(root[group_path] if group_path else root)
    seen = []
    with libzarr.open_store(tmp_path) as store, store.open_group(group_path) as group:
        assert group.visit(lambda path, kind, fmt: seen.append((path, kind))) == 0
    assert seen == expected
    # zarr-python's visit gives the same paths as visititems.
    paths = []
    (root[group_path] if group_path else root).visit(paths.append)
    assert paths == [path for path, _ in seen]


@VISIT_ZARR2
@pytest.mark.parametrize("writer", ["python", "libzarr"])
def test_visit_stops_where_zarr2_stops(tmp_path, writer):
    """zarr-python returns the first non-None value of the callback; libzarr the first nonzero one."""
    (python_writes if writer == "python" else libzarr_writes)(tmp_path)
    root = zpy.open_group(tmp_path)
    first_array = root.visititems(lambda path, obj: path if hasattr(obj, "shape") else None)
    found = []

    def stop_at_array(path, kind, fmt):
        found.append(path)
        return 5 if kind == "array" else 0
    with libzarr.open_store(tmp_path) as store, store.open_group("") as group:
        assert group.visit(stop_at_array) == 5
    assert found[-1] == first_array
    assert found == [path for path, _ in python_visit(root)][:len(found)]


@TEXT_ONLY_ZARR2
@pytest.mark.parametrize("writer", ["python", "libzarr"])
@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_tree_level_text_is_zarr2s(tmp_path, writer, level):
    (python_writes if writer == "python" else libzarr_writes)(tmp_path)
    expected = str(zpy.open_group(tmp_path).tree(level=level))
    with libzarr.open_store(tmp_path) as store, store.open_group("") as group:
        assert group.tree_text(level) == expected
        tree = group.tree(level)

    def depth(node):
        return 1 + max(map(depth, node.get("children") or []), default=-1) if node["kind"] == "group" else 0
    assert depth(tree) <= level
