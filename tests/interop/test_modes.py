"""zarr-python's modes through libzarr on what zarr-python wrote: a store opened "w" is emptied,
"w-" refuses a store that holds anything, "r+" needs the store; arrays created "a" open
zarr-python's array of the same shape and type (as require_dataset), "w" replaces a group and
its members with an array zarr-python then reads."""
import numcodecs
import numpy as np
import pytest
import zarr

import libzarr
import zpy

VALUES = np.arange(20, dtype="<i4").reshape(4, 5)


def python_writes(path):
    root = zpy.open_group(path, "w")
    zpy.create_member(root, "a", shape=(4, 5), chunks=(2, 2), dtype="<i4")[...] = VALUES
    g = root.create_group("g")
    g.attrs["x"] = 1
    zpy.create_member(g, "inner", shape=(3,), chunks=(3,), dtype="<f8")[...] = [1.0, 2.0, 3.0]


def test_store_modes_on_what_zarr_python_wrote(tmp_path):
    python_writes(tmp_path)
    with pytest.raises(libzarr.LibzarrError, match="ZARR_ERR_ALREADY_EXISTS"):
        libzarr.open_store(tmp_path, "w-")
    with pytest.raises(libzarr.LibzarrError, match="ZARR_ERR_NOT_FOUND"):
        libzarr.open_store(tmp_path / "missing", "r+")
    with libzarr.open_store(tmp_path, "r+") as s, s.open_array("a") as a:
        np.testing.assert_array_equal(a.read(), VALUES)
    with libzarr.open_store(tmp_path, "w") as s:
        assert s.list_keys() == []
        s.create_group_mode("", "w-").close()
    assert zpy.listing(zpy.open_group(tmp_path)) == {"arrays": [], "groups": []}


def test_array_modes_on_what_zarr_python_wrote(tmp_path):
    python_writes(tmp_path)
    meta = {"shape": [4, 5], "chunks": [4, 5], "dtype": "<i4", "compressor": {"id": "zstd", "level": 1}}
    with libzarr.open_store(tmp_path, "a") as s:
        with s.create_array("a", meta, mode="a") as a:  # zarr-python's array, chunks and all
            np.testing.assert_array_equal(a.read(), VALUES)
            assert a.chunks == (2, 2)
        with pytest.raises(libzarr.LibzarrError, match="shape"):
            s.create_array("a", dict(meta, shape=[4, 6]), mode="a")
        with pytest.raises(libzarr.LibzarrError, match="ZARR_ERR_ALREADY_EXISTS"):
            s.create_array("a", meta, mode="w-")
        with s.create_array("g", meta, mode="w") as a:  # the group and its members go
            a.write(VALUES * 2)
    g = zpy.open_group(tmp_path)
    assert zpy.listing(g) == {"arrays": ["a", "g"], "groups": []}
    np.testing.assert_array_equal(zpy.read(g["g"]), VALUES * 2)
    assert not (tmp_path / "g" / "inner").exists()
    assert zpy.properties(g["g"])["compressor"] == numcodecs.Zstd(level=1).get_config()
