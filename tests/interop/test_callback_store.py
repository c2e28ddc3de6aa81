"""Stores of the caller's own (zarr_store_open_callbacks) through the binding's open_mapping: a
Python dict that libzarr fills is a store zarr-python reads, and a dict zarr-python fills is one
libzarr reads (zarr-python 2 takes the dict itself; zarr-python 3's MemoryStore holds Buffers, so
the dict is converted). Failures of the mapping reach the caller with their message; the raw key
calls (get, set, erase, list_keys, list_dir, getsize, rmdir) on the same dict."""
import numcodecs
import numpy as np
import pytest
import zarr

import libzarr
from zpy import ZARR3

DATA = np.arange(12 * 10, dtype="<f8").reshape(12, 10) / 4


def python_store(mapping):
    """A zarr-python store over the bytes of `mapping`."""
    if not ZARR3:
        return mapping
    from zarr.core.buffer import cpu
    return zarr.storage.MemoryStore({k: cpu.Buffer.from_bytes(v) for k, v in mapping.items()})


def plain_bytes(store):
    """The keys and bytes of a zarr-python store made by python_store (or written to by zarr-python)."""
    if not ZARR3:
        return dict(store)
    return {k: v.to_bytes() for k, v in store._store_dict.items()}


def libzarr_writes(mapping, **open_args):
    write_hierarchy(libzarr.open_mapping(mapping, "a", **open_args))


def write_hierarchy(store):
    with store as s:
        with s.create_group("g") as g:
            g.set_attrs({"title": "from C"})
        meta = {"shape": [12, 10], "chunks": [5, 4], "dtype": "<f8", "fill_value": "NaN",
                "compressor": {"id": "zlib", "level": 3}, "dimension_separator": "/"}
        with s.create_array("g/a", meta) as a:
            a.write(DATA)


@pytest.mark.parametrize("thread_safe", [False, True])
def test_zarr_python_reads_the_dict_libzarr_filled(thread_safe):
    libzarr.set_num_threads(4)
    mapping = {}
    libzarr_writes(mapping, thread_safe=thread_safe)
    assert all(isinstance(k, str) and isinstance(v, bytes) for k, v in mapping.items())
    assert "g/a/2/2" in mapping and "g/a/.zarray" in mapping
    if ZARR3:
        root = zarr.open_group(python_store(mapping), mode="r", zarr_format=2)
    else:
        root = zarr.open_group(store=mapping, mode="r")
    np.testing.assert_array_equal(root["g/a"][...], DATA)
    assert root["g"].attrs["title"] == "from C"


def test_the_dict_holds_what_a_directory_store_holds(tmp_path):
    mapping = {}
    libzarr_writes(mapping)
    write_hierarchy(libzarr.open_store(tmp_path / "d", "a"))
    files = {str(p.relative_to(tmp_path / "d")): p.read_bytes()
             for p in (tmp_path / "d").rglob("*") if p.is_file()}
    assert mapping == files


def test_libzarr_reads_the_dict_zarr_python_filled():
    if ZARR3:
        store = zarr.storage.MemoryStore()
        root = zarr.group(store=store, zarr_format=2)
        a = root.create_array("x/y", shape=(9, 7), chunks=(4, 3), dtype="<i2",
                              compressors=numcodecs.Zstd(level=2), fill_value=5)
    else:
        store = {}
        root = zarr.group(store=store)
        a = root.create_dataset("x/y", shape=(9, 7), chunks=(4, 3), dtype="<i2",
                                compressor=numcodecs.Zstd(level=2), fill_value=5)
    values = np.arange(63, dtype="<i2").reshape(9, 7)
    values[:4, :3] = 5  # a chunk of fill values only: not stored
    a[...] = values
    root["x"].attrs["units"] = "m"
    zarr.consolidate_metadata(store)
    mapping = plain_bytes(store)
    with libzarr.open_mapping(mapping, "r") as s:
        assert s.uses_consolidated
        with s.open_array("x/y") as arr:
            np.testing.assert_array_equal(arr.read(), values)
        with s.open_group("x") as g:
            assert g.attrs() == {"units": "m"}
            assert g.list() == {"arrays": ["y"], "groups": []}


class Flaky(dict):
    """A mapping whose reads of one key fail as a database would."""

    def __getitem__(self, key):
        if key.endswith("1/1"):
            raise OSError("the database went away")
        return super().__getitem__(key)


def test_a_failing_mapping_is_an_error_with_its_message_never_the_fill_value():
    mapping = Flaky()
    libzarr_writes(mapping)
    with libzarr.open_mapping(mapping, "r") as s, s.open_array("g/a") as a:
        with pytest.raises(libzarr.LibzarrError) as e:
            a.read()
    assert e.value.name == "ZARR_ERR_IO"
    assert "the database went away" in e.value.message and "g/a/1/1" in e.value.message


def test_raw_keys_on_a_mapping():
    mapping = {}
    libzarr_writes(mapping)
    with libzarr.open_mapping(mapping, "a") as s:
        assert s.list_dir("g/a") == [".zarray", "0", "1", "2"]
        assert s.list_keys("g/a/2") == [f"g/a/2/{j}" for j in range(3)]
        assert s.getsize("g/a") == sum(len(v) for k, v in mapping.items() if k.startswith("g/a/"))
        assert s.get("g/.zattrs") == mapping["g/.zattrs"]
        assert s.get("g/.zattrs", 2, 5) == mapping["g/.zattrs"][2:7]
        s.set("notes/readme", b"kept by the caller")
        assert mapping["notes/readme"] == b"kept by the caller"
        s.erase("notes/readme")
        assert "notes/readme" not in mapping
        with pytest.raises(libzarr.LibzarrError, match="ZARR_ERR_NOT_FOUND"):
            s.erase("notes/readme")
        s.rmdir("g/a")
        assert sorted(mapping) == [".zgroup", "g/.zattrs", "g/.zgroup"]
        s.rmdir("")
        assert mapping == {}
