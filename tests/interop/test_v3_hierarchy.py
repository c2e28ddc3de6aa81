"""Zarr v3 hierarchies against zarr-python 3: groups and attributes both ways, dimension names (v3
dimension_names and the v2 _ARRAY_DIMENSIONS attribute), consolidated metadata both ways (inline in the root
zarr.json), format detection (zarr.json beside .zarray/.zgroup, arrays opened as groups, creating over nodes of
either format), resize and append of v3 arrays, and bad input (unknown codecs, data types, extensions and
fields; must_understand; storage transformers; malformed documents; truncated shards).

zarr-python 3.1.6 quirks met here (see README.md): it writes NaN/Infinity attributes as bare JSON tokens; its
consolidated metadata gives every nested group entry its own (empty) "consolidated_metadata"; it opens a node
holding both zarr.json and .zarray as v3, with a warning.
"""
import json
import math
import shutil
import warnings

import pytest

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("Zarr v3 needs zarr-python 3", allow_module_level=True)

import numpy as np  # noqa: E402

# zarr-python's warnings about numcodecs codecs, consolidated metadata and data types without a v3 spec
pytestmark = [pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning"),
              pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")]
pytest.register_assert_rewrite("v3cases")
import libzarr  # noqa: E402
from v3cases import assert_same, chunk_files, codecs_meaning, load_json, shard_index, sharding_levels, \
    store_files  # noqa: E402

ATTRS = {"title": "interop ✓ é ключ", "n": 42, "big": 2**63 - 1, "neg": -2**63,
         "floats": [0.1, 1 / 3, -0.0, 1e21],
         "flag": True, "none": None, "list": [1, "two", [3.5, None]], "nested": {"a": {"b": []}, "empty": {}},
         "nan": math.nan, "inf": math.inf, "ninf": -math.inf}
ARRAY_ATTRS = {"units": "m/s", "scale": [1.5, 2], "missing": math.nan}
A = np.arange(7 * 9, dtype="<i4").reshape(7, 9) - 20
B = np.linspace(-1, 1, 11)
S = np.array(["héllo", "", "𝄞", "x" * 30, "a\nb"], dtype=object)


def same_json(a, b):
    """JSON values equal, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and not isinstance(a, bool)
                                            and isinstance(b, (int, float)) and not isinstance(b, bool) and a == b)


def expect_error(names, fn, *args, naming=()):
    """fn(*args) fails with one of the statuses `names` ("A|B"), with a message naming each of `naming`."""
    with pytest.raises(libzarr.LibzarrError) as e:
        fn(*args)
    assert e.value.name in names.split("|"), str(e.value)
    for word in [naming] if isinstance(naming, str) else naming:
        assert word.lower() in e.value.message.lower(), f"{word!r} not named in: {e.value.message}"
    return e.value


def v3doc(shape, chunks, data_type="int32", fill=0, codecs=None, **extra):
    doc = {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": data_type,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": fill,
           "codecs": codecs or [{"name": "bytes", "configuration": {"endian": "little"}},
                                {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
           "attributes": {}, "storage_transformers": []}
    doc.update(extra)
    return doc


def read_strings(arr, start=None, count=None):
    return np.array([b.decode() for b in arr.read_vlen(start, count)], dtype=object)


def python_hierarchy(root):
    """zarr-python 3 writes: / (ATTRS) with x (int32), a/ ({"level": 1}) with a/b/y (float64, sharded, named
    dimensions, ARRAY_ATTRS), a/c/ (empty group) and a/s (strings)."""
    g = zarr.open_group(str(root), mode="w", zarr_format=3)
    g.attrs.update(ATTRS)
    x = g.create_array("x", shape=A.shape, chunks=(4, 4), dtype="<i4", fill_value=-1)
    x[...] = A
    a = g.create_group("a")
    a.attrs.update({"level": 1})
    a.create_group("b")
    a.create_group("c")
    y = g.create_array("a/b/y", shape=B.shape, chunks=(3,), shards=(6,), dtype="<f8", fill_value=math.nan,
                       dimension_names=["t"], attributes=ARRAY_ATTRS)
    y[:4] = B[:4]
    s = g.create_array("a/s", shape=S.shape, chunks=(2,), dtype=str, fill_value="-")
    s[:4] = S[:4]
    expected_y = np.full(B.shape, math.nan)
    expected_y[:4] = B[:4]
    expected_s = S.copy()
    expected_s[4] = "-"
    return expected_y, expected_s


LISTINGS = {"": {"arrays": ["x"], "groups": ["a"]}, "a": {"arrays": ["s"], "groups": ["b", "c"]},
            "a/b": {"arrays": ["y"], "groups": []}, "a/c": {"arrays": [], "groups": []}}
GROUP_ATTRS = {"": ATTRS, "a": {"level": 1}, "a/b": {}, "a/c": {}}


def check_hierarchy_in_libzarr(store, expected_y, expected_s):
    for path, listing in LISTINGS.items():
        with store.open_group(path) as grp:
            assert grp.zarr_format == 3, path
            assert grp.list() == listing, path
            assert same_json(grp.attrs(), GROUP_ATTRS[path]), (path, grp.attrs())
    with store.open_array("x") as x:
        assert x.zarr_format == 3 and x.attrs() == {} and x.dimension_names is None
        assert_same(x.read(), A)
    with store.open_array("a/b/y") as y:
        assert y.chunks == (6,) and y.inner_chunks == (3,)
        assert same_json(y.attrs(), ARRAY_ATTRS)
        assert y.dimension_names == ["t"]
        assert_same(y.read(), expected_y)
    with store.open_array("a/s") as s:
        assert s.dtype_string == "|O"
        assert_same(read_strings(s), expected_s)


# ---------------------------------------------------------------- groups and attributes
def test_zarr_python_hierarchy_to_libzarr(tmp_path):
    expected_y, expected_s = python_hierarchy(tmp_path)
    assert "NaN" in (tmp_path / "zarr.json").read_text()  # a bare token: zarr-python's JSON is not strict
    with libzarr.open_store(tmp_path, "r") as store:
        assert not store.uses_consolidated
        check_hierarchy_in_libzarr(store, expected_y, expected_s)
        expect_error("ZARR_ERR_NOT_FOUND", store.open_group, "nope")
        expect_error("ZARR_ERR_NOT_FOUND", store.open_array, "a/nope")


def test_libzarr_hierarchy_to_zarr_python(tmp_path):
    with libzarr.open_store(tmp_path, "a") as store:
        with store.create_group_format("", 3) as root:
            assert root.zarr_format == 3
            root.set_attrs(ATTRS)
        with store.create_group_format("a/b", 3) as b:  # creates a in v3 too
            b.set_attrs({"level": 2})
        with store.create_array("a/c/y", v3doc(B.shape, (4,), "float64", "NaN", dimension_names=["t"],
                                               attributes={"units": "m/s"})) as y:
            assert y.attrs() == {"units": "m/s"}
            y.set_attrs(ARRAY_ATTRS)  # (NaN: through the attributes call, which takes Python's bare NaN)
            y.write(B)  # a/c: a missing ancestor group, created in the array's format
        with store.create_group("a/d") as d:  # the format of the nearest existing ancestor: v3
            assert d.zarr_format == 3
        with store.create_group_format("a", 3) as a:  # an existing group of that format: opened
            assert a.zarr_format == 3 and a.attrs() == {}
            assert a.list() == {"arrays": [], "groups": ["b", "c", "d"]}
        with store.create_group("a/b") as b:
            assert b.attrs() == {"level": 2}
        with store.create_array("x", v3doc(A.shape, (4, 4), fill=-1)) as x:
            x.write(A)
        with store.open_group("") as root:
            assert root.list() == {"arrays": ["x"], "groups": ["a"]}
            assert same_json(root.attrs(), ATTRS)
    for d in ["", "a", "a/b", "a/c", "a/d"]:
        doc = load_json(tmp_path / d / "zarr.json") if d else json.loads((tmp_path / "zarr.json").read_text())
        assert doc["zarr_format"] == 3 and doc["node_type"] == "group", d
        assert set(doc) <= {"zarr_format", "node_type", "attributes"}, d
        assert same_json(doc.get("attributes", {}), {"": ATTRS, "a/b": {"level": 2}}.get(d, {})), d
    assert not [f for f in store_files(tmp_path) if f.rsplit("/", 1)[-1] in (".zgroup", ".zattrs", ".zarray")]

    g = zarr.open_group(str(tmp_path), mode="r")
    assert g.metadata.zarr_format == 3
    assert sorted(g.group_keys()) == ["a"] and sorted(g.array_keys()) == ["x"]
    assert same_json(dict(g.attrs), ATTRS)
    assert sorted(g["a"].group_keys()) == ["b", "c", "d"]
    assert sorted(k for k, _ in g.members(max_depth=None)) == ["a", "a/b", "a/c", "a/c/y", "a/d", "x"]
    assert dict(g["a/b"].attrs) == {"level": 2}
    y = g["a/c/y"]
    assert same_json(dict(y.attrs), ARRAY_ATTRS) and list(y.metadata.dimension_names) == ["t"]
    assert_same(np.asarray(y[...]), B)
    assert_same(np.asarray(g["x"][...]), A)


def test_group_create_in_an_empty_store_is_v2(tmp_path):
    with libzarr.open_store(tmp_path, "a") as store:
        with store.create_group("g") as g:
            assert g.zarr_format == 2
        with store.create_group_format("v3/inner", 3) as g:
            assert g.zarr_format == 3
        with store.create_group("v3/inner/deeper") as g:  # nearest existing ancestor: v3
            assert g.zarr_format == 3
        with store.create_group("g/sub") as g:
            assert g.zarr_format == 2
        expect_error("ZARR_ERR_INVALID_ARGUMENT", store.create_group_format, "bad", 4)
    assert (tmp_path / "g" / ".zgroup").exists() and (tmp_path / "g" / "sub" / ".zgroup").exists()
    assert (tmp_path / "v3" / "inner" / "deeper" / "zarr.json").exists()
    assert zarr.open_group(str(tmp_path / "v3"), mode="r").metadata.zarr_format == 3
    assert zarr.open_group(str(tmp_path / "g"), mode="r").metadata.zarr_format == 2


# ---------------------------------------------------------------- dimension names
def test_dimension_names_zarr_python_to_libzarr(tmp_path):
    g = zarr.open_group(str(tmp_path), mode="w", zarr_format=3)
    g.create_array("named", shape=(2, 3, 4), chunks=(2, 3, 4), dtype="u1", dimension_names=["z", None, "x"])
    g.create_array("unnamed", shape=(2, 3), chunks=(2, 3), dtype="u1")
    g.create_array("all_null", shape=(2,), chunks=(2,), dtype="u1", dimension_names=[None])
    g.create_array("scalar", shape=(), chunks=(), dtype="u1")
    v2 = zarr.open_group(str(tmp_path / "v2"), mode="w", zarr_format=2)
    v2.create_array("xr", shape=(3, 2), chunks=(3, 2), dtype="<i2").attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
    v2.create_array("plain", shape=(3,), chunks=(3,), dtype="<i2")
    with libzarr.open_store(tmp_path, "r") as store:
        for path, names in [("named", ["z", None, "x"]), ("unnamed", None), ("all_null", [None]), ("scalar", None),
                            ("v2/xr", ["y", "x"]), ("v2/plain", None)]:
            with store.open_array(path) as arr:
                assert arr.dimension_names == names, path
                assert arr.zarr_format == (2 if path.startswith("v2/") else 3), path


def test_dimension_names_libzarr_to_zarr_python(tmp_path):
    with libzarr.open_store(tmp_path, "a") as store:
        with store.create_array("named", v3doc((2, 3), (2, 2), dimension_names=["lat", None])) as arr:
            assert arr.dimension_names == ["lat", None]
        with store.create_array("unnamed", v3doc((2, 3), (2, 2))) as arr:
            assert arr.dimension_names is None
        v2 = {"zarr_format": 2, "shape": [3, 2], "chunks": [3, 2], "dtype": "<i2", "compressor": None,
              "fill_value": 0, "order": "C", "filters": None}
        with store.create_array("xr", v2) as arr:
            arr.set_attrs({"_ARRAY_DIMENSIONS": ["y", "x"], "units": "m"})
            assert arr.dimension_names == ["y", "x"]
    assert load_json(tmp_path / "named" / "zarr.json")["dimension_names"] == ["lat", None]
    assert "dimension_names" not in load_json(tmp_path / "unnamed" / "zarr.json")
    assert list(zarr.open_array(str(tmp_path / "named"), mode="r").metadata.dimension_names) == ["lat", None]
    assert zarr.open_array(str(tmp_path / "unnamed"), mode="r").metadata.dimension_names is None
    assert zarr.open_array(str(tmp_path / "xr"), mode="r").attrs["_ARRAY_DIMENSIONS"] == ["y", "x"]


# ---------------------------------------------------------------- consolidated metadata
def per_node_documents(root):
    """{relative node path: its zarr.json} for every node below the root."""
    return {str(p.parent.relative_to(root)).replace("\\", "/"): json.loads(p.read_text())
            for p in root.rglob("zarr.json") if p.parent != root}


def remove_per_node_documents(root):
    for p in root.rglob("zarr.json"):
        if p.parent != root:
            p.unlink()


def test_libzarr_opens_zarr_python_consolidated(tmp_path):
    expected_y, expected_s = python_hierarchy(tmp_path)
    zarr.consolidate_metadata(str(tmp_path))
    consolidated = json.loads((tmp_path / "zarr.json").read_text())["consolidated_metadata"]
    assert consolidated["kind"] == "inline" and consolidated["must_understand"] is False
    assert set(consolidated["metadata"]) == {"x", "a", "a/b", "a/c", "a/s", "a/b/y"}
    remove_per_node_documents(tmp_path)  # only the consolidated copy can answer now
    with libzarr.open_store(tmp_path, "r") as store:
        assert store.uses_consolidated
        check_hierarchy_in_libzarr(store, expected_y, expected_s)
    with libzarr.open_store(tmp_path, libzarr.MODE_READ | libzarr.OPEN_IGNORE_CONSOLIDATED) as store:
        assert not store.uses_consolidated
        expect_error("ZARR_ERR_NOT_FOUND", store.open_array, "x")


def test_zarr_python_opens_libzarr_consolidated(tmp_path):
    with libzarr.open_store(tmp_path, "a") as store:
        with store.create_group_format("", 3) as root:
            root.set_attrs(ATTRS)
        with store.create_group_format("a/b", 3) as b:
            b.set_attrs({"level": 2, "nan": math.nan})
        with store.create_array("a/y", v3doc(B.shape, (4,), "float64", "NaN", dimension_names=["t"])) as y:
            y.set_attrs(ARRAY_ATTRS)
            y.write(B)
        with store.create_array("x", v3doc(A.shape, (4, 4), fill=-1)) as x:
            x.write(A)
        sharded = v3doc(A.shape, (4, 6), codecs=[{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 3], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}])
        with store.create_array("a/b/sh", sharded) as sh:
            sh.write(A)
        store.consolidate()
    assert not (tmp_path / ".zmetadata").exists()
    root_doc = json.loads((tmp_path / "zarr.json").read_text())
    assert same_json(root_doc["attributes"], ATTRS)
    cm = root_doc["consolidated_metadata"]
    assert cm["kind"] == "inline" and cm["must_understand"] is False
    nodes = per_node_documents(tmp_path)
    assert set(cm["metadata"]) == set(nodes) == {"a", "a/b", "a/y", "x", "a/b/sh"}
    for path, doc in nodes.items():  # the consolidated documents are the per-node ones (zarr-python also
        entry = dict(cm["metadata"][path])  # gives nested groups an empty "consolidated_metadata" of their own)
        entry.pop("consolidated_metadata", None)
        assert same_json(entry, doc), path
    remove_per_node_documents(tmp_path)  # zarr-python must use the consolidated copy
    g = zarr.open_group(str(tmp_path), mode="r", use_consolidated=True)
    assert g.metadata.consolidated_metadata is not None
    assert sorted(k for k, _ in g.members(max_depth=None)) == ["a", "a/b", "a/b/sh", "a/y", "x"]
    assert same_json(dict(g.attrs), ATTRS)
    assert same_json(dict(g["a/b"].attrs), {"level": 2, "nan": math.nan})
    assert same_json(dict(g["a/y"].attrs), ARRAY_ATTRS)
    assert_same(np.asarray(g["a/y"][...]), B)
    assert_same(np.asarray(g["x"][...]), A)
    assert_same(np.asarray(g["a/b/sh"][...]), A)
    with libzarr.open_store(tmp_path, "r") as store:  # and libzarr reads its own consolidated copy
        assert store.uses_consolidated
        with store.open_array("a/b/sh") as sh:
            assert sh.inner_chunks == (2, 3)
            assert_same(sh.read(), A)


def test_consolidated_metadata_of_a_mixed_hierarchy(tmp_path):
    """A v2 root group with a v3 array below it: its .zmetadata holds only the v2 documents (zarr-python 3 fails
    on a zarr.json key there), and libzarr, reading through it, still finds the v3 array in the store."""
    with libzarr.open_store(tmp_path, "a") as store:
        with store.create_group_format("", 2):
            pass
        with store.create_array("v2", json.dumps({"zarr_format": 2, "shape": [6], "chunks": [4], "dtype": "<i4",
                                                  "compressor": None, "fill_value": 0, "filters": None,
                                                  "order": "C"})) as a:
            a.write(np.arange(6, dtype="<i4"))
        with store.create_array("v3", v3doc(A.shape, (4, 4), fill=-1)) as x:
            x.write(A)
        store.consolidate()
    documents = json.loads((tmp_path / ".zmetadata").read_text())["metadata"]
    assert sorted(documents) == [".zgroup", "v2/.zarray"], sorted(documents)
    g = zarr.open_consolidated(str(tmp_path), mode="r", zarr_format=2)
    assert_same(np.asarray(g["v2"][...]), np.arange(6, dtype="<i4"))
    with libzarr.open_store(tmp_path, "r") as store:
        assert store.uses_consolidated
        with store.open_array("v3") as x:
            assert_same(x.read(), A)


# ---------------------------------------------------------------- format detection and creation conflicts
def test_node_with_both_formats_opens_as_v3(tmp_path):
    v2 = zarr.create_array(str(tmp_path / "both"), shape=(3,), chunks=(3,), dtype="<i4", zarr_format=2)
    v2[:] = [1, 2, 3]
    v3 = zarr.create_array(str(tmp_path / "v3tmp"), shape=(3,), chunks=(3,), dtype="<i4", fill_value=5)
    v3[:2] = [7, 8]
    shutil.copy(tmp_path / "v3tmp" / "zarr.json", tmp_path / "both" / "zarr.json")
    shutil.copytree(tmp_path / "v3tmp" / "c", tmp_path / "both" / "c")
    zarr.open_group(str(tmp_path / "g"), mode="w", zarr_format=2).attrs["format"] = 2
    zarr.open_group(str(tmp_path / "g3tmp"), mode="w", zarr_format=3).attrs["format"] = 3
    shutil.copy(tmp_path / "g3tmp" / "zarr.json", tmp_path / "g" / "zarr.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert list(zarr.open_array(str(tmp_path / "both"), mode="r")[:]) == [7, 8, 5]  # zarr-python: v3 wins
        assert zarr.open_group(str(tmp_path / "g"), mode="r").attrs["format"] == 3
    with libzarr.open_store(tmp_path, "r") as store:
        with store.open_array("both") as arr:
            assert arr.zarr_format == 3
            assert arr.metadata == load_json(tmp_path / "both" / "zarr.json")
            assert list(arr.read()) == [7, 8, 5]
        with store.open_group("g") as g:
            assert g.zarr_format == 3 and g.attrs() == {"format": 3}


def test_opening_the_wrong_kind_of_node(tmp_path):
    python_hierarchy(tmp_path)
    with libzarr.open_store(tmp_path, "r") as store:
        expect_error("ZARR_ERR_WRONG_NODE_TYPE", store.open_group, "x", naming="array")
        expect_error("ZARR_ERR_WRONG_NODE_TYPE", store.open_group, "a/b/y", naming="array")
        expect_error("ZARR_ERR_WRONG_NODE_TYPE", store.open_array, "a", naming="group")
        expect_error("ZARR_ERR_WRONG_NODE_TYPE", store.open_array, "", naming="group")
        expect_error("ZARR_ERR_NOT_FOUND", store.open_array, "nothing/here")


def test_creating_over_existing_nodes(tmp_path):
    v2doc = {"zarr_format": 2, "shape": [3], "chunks": [3], "dtype": "<i4", "compressor": None, "fill_value": 0,
             "order": "C", "filters": None}
    with libzarr.open_store(tmp_path, "a") as store:
        store.create_group_format("", 3).close()
        store.create_array("arr3", v3doc((3,), (3,))).close()
        store.create_array("arr2", v2doc).close()
        store.create_group_format("grp3", 3).close()
        store.create_group_format("grp2", 2).close()
        before = {f: (tmp_path / f).read_bytes() for f in store_files(tmp_path)}
        for path in ["arr3", "arr2", "grp3", "grp2"]:
            expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_array, path, v3doc((3,), (3,)))
            expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_array, path, v2doc)
            expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_array, f"{path}/", v3doc((3,), (3,)))
        for path in ["arr3", "arr2"]:
            for fmt in (2, 3):
                expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_group_format, path, fmt)
            expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_group, path)
        expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_group_format, "grp3", 2)
        expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_group_format, "grp2", 3)
        with store.create_group("grp3") as g:  # the format of the root (v3) and of the group there: opened
            assert g.zarr_format == 3
        # zarr_group_create would make a v3 group (the root's format), and a v2 group is there
        expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_group, "grp2")
        with store.create_group_format("grp2", 2) as g:  # asked for its own format: opened
            assert g.zarr_format == 2
        after = {f: (tmp_path / f).read_bytes() for f in store_files(tmp_path)}
        assert after == before, "a refused creation changed the store"


# ---------------------------------------------------------------- resize and append
FILL = -7
SHARDED = [{"name": "sharding_indexed", "configuration": {
    "chunk_shape": [2, 3], "codecs": [{"name": "bytes", "configuration": {"endian": "big"}},
                                      {"name": "gzip", "configuration": {"level": 1}}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
    "index_location": "start"}}]
TRANSPOSED = [{"name": "transpose", "configuration": {"order": [1, 0]}},
              {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]
RESIZE_CODECS = {"plain": None, "sharded": SHARDED, "transposed": TRANSPOSED}


def grown(model, shape, fill=FILL):
    out = np.full(shape, fill, dtype=model.dtype)
    keep = tuple(slice(0, min(a, b)) for a, b in zip(model.shape, shape))
    out[keep] = model[keep]
    return out


@pytest.mark.parametrize("codecs", RESIZE_CODECS)
def test_zarr_python_reads_what_libzarr_resized(tmp_path, codecs):
    model = np.arange(13 * 11, dtype="<i4").reshape(13, 11)
    doc = v3doc(model.shape, (4, 6), fill=FILL, codecs=RESIZE_CODECS[codecs])
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("a", doc) as a:
        a.write(model)
        for shape in [(6, 5), (6, 20), (2, 2), (9, 13)]:
            a.resize(shape)
            model = grown(model, shape)
            assert a.shape == shape
            assert_same(a.read(), model)
            assert load_json(tmp_path / "a" / "zarr.json")["shape"] == list(shape)
        extra = np.arange(2 * 13, dtype="<i4").reshape(2, 13) + 1000
        a.append(extra, axis=0)
        model = np.concatenate([model, extra], axis=0)
        col = np.arange(11, dtype="<i4").reshape(11, 1) + 2000
        a.append(col, axis=1)
        model = np.concatenate([model, col], axis=1)
        assert a.metadata == load_json(tmp_path / "a" / "zarr.json")
    stored = load_json(tmp_path / "a" / "zarr.json")
    assert stored["shape"] == list(model.shape)
    assert set(stored) == set(doc) and codecs_meaning(stored["codecs"]) == codecs_meaning(doc["codecs"])
    assert all(stored[k] == doc[k] for k in doc if k not in ("shape", "codecs")), "only the shape changes"
    z = zarr.open_array(str(tmp_path / "a"), mode="r")
    assert z.shape == model.shape
    assert_same(np.asarray(z[...]), model)
    grid = [-(-n // c) for n, c in zip(model.shape, (4, 6))]
    for key in chunk_files(tmp_path / "a"):
        coords = [int(c) for c in key.split("/")[1:]]
        assert all(c < g for c, g in zip(coords, grid)), key


def test_zarr_python_reads_strings_libzarr_appended(tmp_path):
    doc = v3doc((3,), (2,), "string", "", codecs=[{"name": "vlen-utf8", "configuration": {}},
                                                 {"name": "zstd", "configuration": {"level": 0, "checksum": False}}])
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("s", doc) as s:
        s.write_vlen([v.encode() for v in S[:3]], (0,), (3,))
        s.append_vlen([v.encode() for v in S[3:]], 2, axis=0)
        s.resize((7,))
        assert_same(read_strings(s), np.array(list(S) + ["", ""], dtype=object))
    z = zarr.open_array(str(tmp_path / "s"), mode="r")
    assert [str(v) for v in z[...]] == list(S) + ["", ""]


@pytest.mark.parametrize("codecs", RESIZE_CODECS)
def test_libzarr_reads_what_zarr_python_resized(tmp_path, codecs):
    model = np.arange(10 * 9, dtype="<i4").reshape(10, 9)
    doc = v3doc(model.shape, (4, 6), fill=FILL, codecs=RESIZE_CODECS[codecs])
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "zarr.json").write_text(json.dumps(doc))
    z = zarr.open_array(str(tmp_path / "a"), mode="r+")
    z[...] = model
    z.resize((5, 14))
    model = grown(model, (5, 14))
    z[:, 9:] = 3
    model[:, 9:] = 3
    extra = np.full((3, 14), 9, "<i4")
    z.append(extra, axis=0)
    model = np.concatenate([model, extra])
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("a") as a:
        assert a.shape == model.shape
        assert_same(a.read(), model)


# ---------------------------------------------------------------- bad input
def edited_store(tmp_path, edits):
    """A v3 group holding the good array `good`, and for each (name, edit) of `edits` a copy of it whose
    zarr.json went through edit(doc) (a dict to write as JSON, or text to write as it is)."""
    g = zarr.open_group(str(tmp_path), mode="w", zarr_format=3)
    good = g.create_array("good", shape=(5, 4), chunks=(2, 3), dtype="<i2", fill_value=3)
    good[:3] = 1
    for name, edit in edits.items():
        shutil.copytree(tmp_path / "good", tmp_path / name)
        out = edit(load_json(tmp_path / "good" / "zarr.json"))
        (tmp_path / name / "zarr.json").write_text(out if isinstance(out, str) else json.dumps(out))
    return np.where(np.arange(5)[:, None] < 3, 1, 3).astype("<i2") * np.ones((1, 4), "<i2")


def _set(key, value):
    return lambda d: dict(d, **{key: value})


def _codecs(*extra):
    return lambda d: dict(d, codecs=d["codecs"] + list(extra))


UNSUPPORTED = {  # name: (edit, what the message must name)
    "codec": (_codecs({"name": "frobnicate", "configuration": {"level": 1}}), "frobnicate"),
    "inner_codec": (_set("codecs", [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1, 3], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                          {"name": "frobnicate"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]), "frobnicate"),
    "data_type": (_set("data_type", "float8_e9m9"), "float8_e9m9"),
    "data_type_object": (_set("data_type", {"name": "zarrs.optional", "configuration": {}}), "zarrs.optional"),
    "chunk_grid": (_set("chunk_grid", {"name": "rectangular", "configuration": {
        "chunk_shape": [[2, 3], [3, 1]]}}), "rectangular"),
    "key_encoding": (_set("chunk_key_encoding", {"name": "template", "configuration": {}}), "template"),
    "extension_field": (_set("frobnicate_ext", {"name": "x", "configuration": {}}), "frobnicate_ext"),
    "extension_must_understand": (_set("frobnicate_ext", {"name": "x", "must_understand": True}), "frobnicate_ext"),
    "storage_transformer": (_set("storage_transformers", [{"name": "frob_transformer", "configuration": {}}]),
                            "frob_transformer"),
}
INVALID = {  # malformed documents: ZARR_ERR_INVALID_METADATA naming the key
    "shape_text": (_set("shape", "five"), "shape"),
    "shape_missing": (lambda d: {k: v for k, v in d.items() if k != "shape"}, "shape"),
    "data_type_missing": (lambda d: {k: v for k, v in d.items() if k != "data_type"}, "data_type"),
    "chunk_grid_rank": (_set("chunk_grid", {"name": "regular", "configuration": {"chunk_shape": [2]}}), "chunk"),
    "fill_value_text": (_set("fill_value", "three"), "fill_value"),
    "codecs_not_a_list": (_set("codecs", {"name": "bytes"}), "codecs"),
}
NOT_JSON = (lambda d: json.dumps(d)[:-7], "json")


def test_bad_nodes_fail_alone(tmp_path):
    edits = {name: edit for name, (edit, _) in {**UNSUPPORTED, **INVALID}.items()}
    edits["ignorable"] = _set("frobnicate_ext", {"must_understand": False, "anything": [1, 2]})
    expected = edited_store(tmp_path, edits)
    with warnings.catch_warnings():  # sanity: zarr-python agrees on what is acceptable
        warnings.simplefilter("ignore")
        assert_same(np.asarray(zarr.open_array(str(tmp_path / "ignorable"), mode="r")[...]), expected)
        for name in ["codec", "data_type", "extension_field", "chunk_grid", "shape_text"]:
            with pytest.raises(Exception):
                zarr.open_array(str(tmp_path / name), mode="r")[...]
    with libzarr.open_store(tmp_path, "r") as store:
        for name, (_, word) in UNSUPPORTED.items():
            expect_error("ZARR_ERR_UNSUPPORTED", store.open_array, name, naming=word)
        for name, (_, word) in INVALID.items():
            expect_error("ZARR_ERR_INVALID_METADATA", store.open_array, name, naming=word)
        with store.open_array("ignorable") as arr:  # an unknown field with must_understand: false
            assert_same(arr.read(), expected)
        with store.open_array("good") as arr:  # the siblings still work
            assert_same(arr.read(), expected)
        with store.open_group("") as root:  # and so does the listing
            assert root.list() == {"arrays": sorted(["good", "ignorable", *UNSUPPORTED, *INVALID]), "groups": []}


def test_zarr_json_that_is_not_json(tmp_path):
    edited_store(tmp_path, {"not_json": NOT_JSON[0]})
    with libzarr.open_store(tmp_path, "r") as store:
        expect_error("ZARR_ERR_INVALID_METADATA", store.open_array, "not_json", naming="not_json/zarr.json")
        expect_error("ZARR_ERR_INVALID_METADATA", store.open_group, "not_json", naming="not_json/zarr.json")


def test_creating_bad_documents(tmp_path):
    good = v3doc((5, 4), (2, 3))
    with libzarr.open_store(tmp_path, "a") as store:
        for name, (edit, word) in UNSUPPORTED.items():
            expect_error("ZARR_ERR_UNSUPPORTED", store.create_array, name, json.dumps(edit(dict(good))), naming=word)
        for name, (edit, word) in {**INVALID, "not_json": NOT_JSON}.items():
            doc = edit(dict(good))
            expect_error("ZARR_ERR_INVALID_METADATA", store.create_array, name,
                         doc if isinstance(doc, str) else json.dumps(doc), naming=word)
        expect_error("ZARR_ERR_INVALID_METADATA", store.create_array, "badgrid",
                     dict(good, chunk_grid={"name": "regular"}), naming="chunk_grid")
    assert store_files(tmp_path) <= {"zarr.json", ".zgroup"}, "nothing left of the refused arrays"
    with libzarr.open_store(tmp_path, "a") as store:  # without a chunk grid, chunks are guessed
        with store.create_array("nogrid", {k: v for k, v in good.items() if k != "chunk_grid"}) as a:
            assert a.chunks == (5, 4)


@pytest.mark.parametrize("location", ["start", "end"])
def test_truncated_shard(tmp_path, location):
    z = zarr.create_array(str(tmp_path), shape=(8, 6), chunks=(4, 6), dtype="<f4", fill_value=0,
                          serializer={"name": "sharding_indexed", "configuration": {
                              "chunk_shape": [2, 3],
                              "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                              "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                               {"name": "crc32c"}], "index_location": location}},
                          compressors=None)
    model = np.arange(48, dtype="<f4").reshape(8, 6) + 1
    z[...] = model
    shard = tmp_path / "c" / "0" / "0"
    raw = shard.read_bytes()
    cut = len(raw) - 10
    shard.write_bytes(raw[:cut])  # index at the start: it survives, an inner chunk does not; at the end: gone
    level = sharding_levels(load_json(tmp_path / "zarr.json")["codecs"], 2)[0]
    entries = shard_index(raw, level, 4)
    cut_off = [k for k, (offset, nbytes) in enumerate(entries) if offset + nbytes > cut]
    assert cut_off or location == "end", "the truncation must cut an inner chunk"
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        expect_error("ZARR_ERR_CORRUPT_CHUNK", arr.read, naming="c/0/0")
        for k in cut_off if location == "start" else range(4):  # inner chunk k covers rows 2*(k//2), cols 3*(k%2)
            expect_error("ZARR_ERR_CORRUPT_CHUNK", arr.read, (2 * (k // 2), 3 * (k % 2)), (2, 3), naming="c/0/0")
        assert_same(arr.read((4, 0), (4, 6)), model[4:])  # the other shard is fine
