"""Consolidated metadata (.zmetadata): what zarr-python consolidates libzarr opens from that one document,
and what libzarr consolidates zarr-python's open_consolidated reads. Each side proves it used .zmetadata by
reading the hierarchy after the per-node .zarray/.zgroup/.zattrs documents were removed."""
import json

import numcodecs
import numpy as np
import pytest
import zarr

import libzarr
from zpy import ZARR3

A = np.arange(30, dtype="<i4").reshape(5, 6)
B = np.linspace(-1, 1, 7)


def node_documents(root):
    return sorted(p for p in root.rglob(".z*") if p.name != ".zmetadata")


def remove_node_documents(root, keep_root=False):
    for p in node_documents(root):
        if not (keep_root and p.parent == root):
            p.unlink()


def python_writes_consolidated(path):
    if ZARR3:
        root = zarr.open_group(str(path), mode="w", zarr_format=2)
        a = root.create_array("g/a", shape=A.shape, chunks=(2, 4), dtype="<i4", fill_value=-1,
                              compressors=numcodecs.Zstd(1), chunk_key_encoding={"name": "v2", "separator": "/"})
        b = root.create_array("b", shape=B.shape, chunks=(3,), dtype="<f8", fill_value=0, compressors=None)
    else:
        root = zarr.open_group(store=zarr.DirectoryStore(str(path)), mode="w")
        a = root.create_dataset("g/a", shape=A.shape, chunks=(2, 4), dtype="<i4", fill_value=-1,
                                compressor=numcodecs.Zstd(1), dimension_separator="/")
        b = root.create_dataset("b", shape=B.shape, chunks=(3,), dtype="<f8", fill_value=0, compressor=None)
    a[...] = A
    b[...] = B
    root.attrs["title"] = "consolidated"
    a.attrs["scale"] = float("nan")
    if ZARR3:
        zarr.consolidate_metadata(str(path), zarr_format=2)
    else:
        zarr.consolidate_metadata(zarr.DirectoryStore(str(path)))


def python_opens_consolidated(path):
    if ZARR3:
        return zarr.open_consolidated(str(path), zarr_format=2)
    return zarr.open_consolidated(zarr.DirectoryStore(str(path)))


def test_libzarr_opens_python_consolidated(tmp_path):
    python_writes_consolidated(tmp_path)
    remove_node_documents(tmp_path)
    with libzarr.open_store(tmp_path) as store:
        assert store.uses_consolidated
        with store.open_group("") as root:
            assert root.attrs() == {"title": "consolidated"}
            assert root.list() == {"arrays": ["b"], "groups": ["g"]}
        with store.open_array("g/a") as a:
            np.testing.assert_array_equal(a.read(), A)
            assert np.isnan(a.attrs()["scale"])
        with store.open_array("b") as b:
            np.testing.assert_array_equal(b.read(), B)
    with libzarr.open_store(tmp_path, libzarr.MODE_READ | libzarr.OPEN_IGNORE_CONSOLIDATED) as store:
        assert not store.uses_consolidated
        with pytest.raises(libzarr.LibzarrError, match="NOT_FOUND"):
            store.open_array("g/a")


def libzarr_writes(path):
    with libzarr.open_store(path, "a") as store:
        with store.create_group("") as root:
            root.set_attrs({"title": "consolidated"})
        meta = {"shape": list(A.shape), "chunks": [2, 4], "dtype": "<i4", "fill_value": -1,
                "compressor": {"id": "zstd", "level": 1}, "dimension_separator": "/"}
        with store.create_array("g/a", meta) as a:
            a.write(A)
            a.set_attrs({"scale": float("nan")})
        with store.create_array("b", {"shape": [7], "chunks": [3], "dtype": "<f8"}) as b:
            b.write(B)
        store.consolidate()
        assert store.uses_consolidated


def test_python_opens_libzarr_consolidated(tmp_path):
    libzarr_writes(tmp_path)
    # The consolidated documents are the per-node ones.
    doc = json.loads((tmp_path / ".zmetadata").read_text())
    assert doc["zarr_consolidated_format"] == 1
    for p in node_documents(tmp_path):
        key = p.relative_to(tmp_path).as_posix()
        assert doc["metadata"][key] == json.loads(p.read_text()), key
    assert set(doc["metadata"]) == {p.relative_to(tmp_path).as_posix() for p in node_documents(tmp_path)}
    # zarr 3 reads the root group's own documents from the store, and only its members' from .zmetadata.
    remove_node_documents(tmp_path, keep_root=ZARR3)
    root = python_opens_consolidated(tmp_path)
    assert root.attrs["title"] == "consolidated"
    np.testing.assert_array_equal(root["g/a"][...], A)
    assert np.isnan(root["g/a"].attrs["scale"])
    np.testing.assert_array_equal(root["b"][...], B)


def test_stale_consolidated_metadata_is_refreshed(tmp_path):
    python_writes_consolidated(tmp_path)
    with libzarr.open_store(tmp_path, "a") as writer, libzarr.open_store(tmp_path) as reader:
        with writer.create_array("c", {"shape": [2], "chunks": [2], "dtype": "|u1"}):
            pass
        with pytest.raises(libzarr.LibzarrError, match="NOT_FOUND"):
            reader.open_array("c")
        writer.consolidate()
        assert reader.refresh_consolidated()
        with reader.open_array("c") as c:
            assert c.shape == (2,)
    # zarr-python sees the refreshed document too.
    assert "c" in python_opens_consolidated(tmp_path)
