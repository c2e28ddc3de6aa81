"""Copies: zarr-python writes a hierarchy (nested "/" and flat "." chunk keys, attributes); libzarr's
zarr_store_copy copies it (or a subtree) into a new directory and into a new zip, key for key, and
zarr-python reads the copies identical. libzarr's zarr_array_copy_to re-encodes an array (new chunks,
compressor, order, separator, fill value) and zarr-python reads the same values and sees the new metadata."""
import os

import numcodecs
import numpy as np
import pytest
import zarr

import libzarr
import zpy
from test_zip import python_zip_store
from zpy import ZARR3

pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")

RNG = np.random.default_rng(5)
NESTED = RNG.integers(-1000, 1000, (37, 23), dtype="<i4")
FLAT = RNG.standard_normal((41,)).astype(">f8")
SMALL = np.arange(6, dtype="|u1").reshape(2, 3)
ARRAYS = {"g/nested": NESTED, "g/sub/flat": FLAT, "top": SMALL}


def python_writes_hierarchy(root):
    """Groups "", g, g/sub (with attributes) and the arrays of ARRAYS, written by zarr-python."""
    group = zpy.open_group(root, "w")
    group.attrs.update({"title": "copy me"})
    group.create_group("g").create_group("sub").attrs.update({"level": 2})
    zpy.create(root / "g" / "nested", shape=NESTED.shape, chunks=(5, 4), dtype=NESTED.dtype, separator="/",
               compressor=numcodecs.Zstd(level=3), fill_value=-1, attrs={"units": "K"})[...] = NESTED
    zpy.create(root / "g" / "sub" / "flat", shape=FLAT.shape, chunks=(8,), dtype=FLAT.dtype,
               compressor=numcodecs.Zlib(level=1), fill_value=0.5)[...] = FLAT
    zpy.create(root / "top", shape=SMALL.shape, chunks=(1, 2), dtype=SMALL.dtype)[...] = SMALL


def files(root):
    """{key: bytes} of every file below a directory (keys with "/")."""
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            path = os.path.join(d, n)
            out[os.path.relpath(path, root).replace(os.sep, "/")] = open(path, "rb").read()
    return out


def recorder(cancel_at=None):
    """A progress callback recording the counts it sees; it cancels once items_done reaches cancel_at."""
    seen = []

    def progress(counts):
        seen.append(counts)
        return cancel_at is not None and counts["items_done"] >= cancel_at
    return progress, seen


def check_progress(seen, items, nbytes):
    assert seen[0]["items_done"] == 0 and seen[0]["bytes_done"] == 0
    assert all(b["items_done"] > a["items_done"] and b["bytes_done"] >= a["bytes_done"]
               for a, b in zip(seen, seen[1:]))
    assert seen[-1] == {"items_done": items, "items_total": items, "bytes_done": nbytes, "bytes_total": nbytes}


def python_reads(group, paths=tuple(ARRAYS)):
    """zarr-python's reading of arrays of an open group: {path: (values, attrs)}."""
    return {path: (zpy.read(group[path]), dict(group[path].attrs)) for path in paths}


def assert_same_reads(got, want):
    assert got.keys() == want.keys()
    for path in want:
        np.testing.assert_array_equal(got[path][0], want[path][0], err_msg=path)
        assert got[path][1] == want[path][1], path


def test_whole_store_to_directory_and_zip(tmp_path):
    src = tmp_path / "src"
    python_writes_hierarchy(src)
    want = python_reads(zpy.open_group(src))
    source_files = files(src)
    assert "g/nested/7/5" in source_files  # nested chunk keys

    with libzarr.open_store(src, "r") as s, libzarr.open_store(tmp_path / "dir", "a") as d:
        progress, seen = recorder()
        s.copy("", d, "", progress)
    assert files(tmp_path / "dir") == source_files  # every key, byte for byte
    check_progress(seen, len(source_files), sum(map(len, source_files.values())))
    copy = zpy.open_group(tmp_path / "dir")
    assert_same_reads(python_reads(copy), want)
    assert dict(copy.attrs) == {"title": "copy me"} and dict(copy["g/sub"].attrs) == {"level": 2}

    with libzarr.open_store(src, "r") as s:
        z = libzarr.open_store(tmp_path / "copy.zip", "a")
        s.copy("", z, "")
        z.close()  # writes the archive
    zs = python_zip_store(tmp_path / "copy.zip", "r")
    root = zarr.open_group(store=zs, mode="r", zarr_format=2) if ZARR3 else zarr.open_group(store=zs, mode="r")
    assert_same_reads(python_reads(root), want)
    assert dict(root.attrs) == {"title": "copy me"}
    zs.close()


def test_subtree_under_new_ancestors(tmp_path):
    src = tmp_path / "src"
    python_writes_hierarchy(src)
    subtree = ["g/nested", "g/sub/flat"]
    want = python_reads(zpy.open_group(src), subtree)
    with libzarr.open_store(src, "r") as s, libzarr.open_store(tmp_path / "dst", "a") as d:
        s.copy("g", d, "backup/2024/g")
        s.copy("g/nested", d, "just_nested")
    dst = zpy.open_group(tmp_path / "dst")
    assert zpy.listing(dst) == {"arrays": ["just_nested"], "groups": ["backup"]}
    assert zpy.listing(dst["backup/2024"]) == {"arrays": [], "groups": ["g"]}
    assert_same_reads(python_reads(dst["backup/2024"], subtree), want)
    np.testing.assert_array_equal(zpy.read(dst["just_nested"]), NESTED)
    assert files(tmp_path / "dst" / "just_nested") == files(src / "g" / "nested")


def test_cancelled_copy_leaves_no_partial_node_and_can_be_retried(tmp_path):
    src = tmp_path / "src"
    zpy.open_group(src, "w")
    many = np.arange(600, dtype="<i2")
    zpy.create(src / "many", shape=many.shape, chunks=(1,), dtype=many.dtype, fill_value=-1)[...] = many
    with libzarr.open_store(src, "r") as s, libzarr.open_store(tmp_path / "dst", "a") as d:
        progress, seen = recorder(cancel_at=1)
        with pytest.raises(libzarr.LibzarrError) as err:
            s.copy("", d, "copy", progress)
        assert err.value.name == "ZARR_ERR_CANCELLED"
        assert 0 < seen[-1]["items_done"] < seen[-1]["items_total"]
    assert len(files(tmp_path / "dst" / "copy")) == seen[-1]["items_done"]
    with pytest.raises(Exception):  # the chunks are there, but not the array's metadata yet
        zpy.open_array(tmp_path / "dst" / "copy" / "many")
    with libzarr.open_store(src, "r") as s, libzarr.open_store(tmp_path / "dst", "a") as d:
        s.copy("", d, "copy")
    np.testing.assert_array_equal(zpy.read(zpy.open_group(tmp_path / "dst")["copy/many"]), many)


@pytest.mark.parametrize("overrides", [
    {"chunks": [4, 7], "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}},
    {"chunks": [37, 23], "compressor": None, "order": "F", "dimension_separator": "."},
    {"chunks": [3, 30], "compressor": {"id": "zlib", "level": 9}, "fill_value": 7,
     "filters": [{"id": "delta", "dtype": "<i4", "astype": "<i4"}]},
], ids=["blosc", "F-none-flat", "zlib-delta-fill"])
def test_rechunk_with_new_compressor(tmp_path, overrides):
    src = tmp_path / "src"
    python_writes_hierarchy(src)
    with libzarr.open_store(src, "r") as s, libzarr.open_store(tmp_path / "dst", "a") as d:
        with s.open_array("g/nested") as a:
            progress, seen = recorder()
            a.copy_to(d, "re/chunked", overrides, progress)
    check_progress(seen, NESTED.size, NESTED.nbytes)
    copy = zpy.open_array(tmp_path / "dst" / "re" / "chunked")
    np.testing.assert_array_equal(zpy.read(copy), NESTED)
    assert dict(copy.attrs) == {"units": "K"}
    props, source = zpy.properties(copy), zpy.properties(zpy.open_array(src / "g" / "nested"))
    assert props["chunks"] == overrides["chunks"]
    assert props["compressor"] == overrides["compressor"]
    assert props["order"] == overrides.get("order", "C")
    assert props["separator"] == overrides.get("dimension_separator", "/")
    assert props["fill_value"] == overrides.get("fill_value", -1)
    assert props["filters"] == overrides.get("filters")
    assert props["dtype"] == source["dtype"] and props["shape"] == source["shape"]
    assert zpy.listing(zpy.open_group(tmp_path / "dst" / "re")) == {"arrays": ["chunked"], "groups": []}


def test_rechunk_refuses_conversions(tmp_path):
    src = tmp_path / "src"
    python_writes_hierarchy(src)
    with libzarr.open_store(src, "r") as s, libzarr.open_store(tmp_path / "dst", "a") as d:
        with s.open_array("top") as a:
            for overrides, status in [({"dtype": "<i8"}, "ZARR_ERR_UNSUPPORTED"),
                                      ({"shape": [3, 3]}, "ZARR_ERR_INVALID_ARGUMENT"),
                                      ({"attributes": {}}, "ZARR_ERR_INVALID_ARGUMENT")]:
                with pytest.raises(libzarr.LibzarrError) as err:
                    a.copy_to(d, "x", overrides)
                assert err.value.name == status
            with pytest.raises(libzarr.LibzarrError) as err:
                a.copy_to(d, "x", progress=lambda counts: True)
            assert err.value.name == "ZARR_ERR_CANCELLED"
    assert files(tmp_path / "dst") == {}
