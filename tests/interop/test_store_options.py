"""zarr-python 2's store arguments that libzarr takes as store options, both directions against
zarr-python 2.18 (zarr-python 3 has none of them):

* `normalize_keys` (`DirectoryStore(normalize_keys=True)`): keys lower-cased before they name files, so
  nodes opened by any spelling of their names are one node;
* `metadata_key` (`metadata_key=` of `consolidate_metadata` and `open_consolidated`): consolidated metadata
  under another key than `.zmetadata`;
* `chunk_store` (`chunk_store=`): node documents and consolidated metadata in one store, chunks in another.
"""
import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) >= 3:
    pytest.skip("these are zarr-python 2's store arguments", allow_module_level=True)

import libzarr  # noqa: E402

META = {"zarr_format": 2, "shape": [6, 5], "chunks": [4, 4], "dtype": "<i4", "compressor": {"id": "zlib", "level": 1},
        "fill_value": -1, "order": "C", "filters": None}


def files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_normalize_keys_both_ways(tmp_path):
    values = np.arange(30, dtype="<i4").reshape(6, 5)
    # zarr-python 2 writes "Group/Temp" through a normalizing store: the files are lower-case
    theirs = zarr.DirectoryStore(str(tmp_path / "zpy"), normalize_keys=True)
    root = zarr.group(store=theirs)
    root.create_group("Group").create_dataset("Temp", data=values, chunks=(4, 4), fill_value=-1)
    assert "group/temp/.zarray" in files(tmp_path / "zpy")
    options = {"normalize_keys": True}
    with libzarr.Store.open_options(tmp_path / "zpy", "r", options) as store:
        for path in ("Group/Temp", "group/temp", "GROUP/tEmP"):
            with store.open_array(path) as arr:
                np.testing.assert_array_equal(arr.read(), values)
        assert store.open_group("Group").list()["arrays"] == ["temp"]
    # without the option the upper-case spelling names nothing
    with libzarr.Store.open(tmp_path / "zpy", "r") as store, pytest.raises(libzarr.LibzarrError) as e:
        store.open_array("Group/Temp")
    assert e.value.name == "ZARR_ERR_NOT_FOUND"

    # libzarr writes "Data/X" through the option; zarr-python 2's normalizing store reads every spelling
    with libzarr.Store.open_options(tmp_path / "lib", "w", options) as store:
        store.create_group("Data").close()
        with store.create_array("Data/X", META) as arr:
            arr.write(values)
            arr.write(np.full((1, 5), 7, "<i4"), (5, 0))  # a partial write of the edge chunk
    assert files(tmp_path / "lib") == [".zgroup", "data/.zgroup", "data/x/.zarray", "data/x/0.0", "data/x/0.1",
                                       "data/x/1.0", "data/x/1.1"]
    expected = values.copy()
    expected[5] = 7
    theirs = zarr.DirectoryStore(str(tmp_path / "lib"), normalize_keys=True)
    for path in ("Data/X", "data/x"):
        np.testing.assert_array_equal(zarr.open_array(store=theirs, path=path, mode="r")[...], expected)


def test_normalize_keys_is_for_directories(tmp_path):
    with pytest.raises(libzarr.LibzarrError) as e:
        libzarr.Store.open_options(f"zip://{tmp_path / 'a.zip'}", "w", {"normalize_keys": True})
    assert e.value.name == "ZARR_ERR_INVALID_ARGUMENT" and "normalize_keys" in str(e.value)


def test_metadata_key_both_ways(tmp_path):
    """`metadata_key` (`consolidate_metadata(store, metadata_key=...)`, `open_consolidated(..., metadata_key=...)`):
    consolidated metadata under another key, read on open and written by consolidating."""
    values = np.arange(30, dtype="<i4").reshape(6, 5)
    theirs = zarr.DirectoryStore(str(tmp_path / "zpy"))
    zarr.group(store=theirs).create_dataset("a", data=values, chunks=(4, 4))
    zarr.consolidate_metadata(theirs, metadata_key="meta/consolidated")
    assert not (tmp_path / "zpy" / ".zmetadata").exists()
    options = {"metadata_key": "meta/consolidated"}
    with libzarr.Store.open_options(tmp_path / "zpy", "r", options) as store:
        assert store.uses_consolidated
        (tmp_path / "zpy" / "a" / ".zarray").unlink()  # found in the consolidated document only
        with store.open_array("a") as arr:
            np.testing.assert_array_equal(arr.read(), values)
    with libzarr.Store.open(tmp_path / "zpy", "r") as store:
        assert not store.uses_consolidated

    with libzarr.Store.open_options(tmp_path / "lib", "w", {"metadata_key": "zmeta"}) as store:
        store.create_group("g").close()
        with store.create_array("g/b", META) as arr:
            arr.write(values)
        store.consolidate()
    assert (tmp_path / "lib" / "zmeta").is_file() and not (tmp_path / "lib" / ".zmetadata").exists()
    (tmp_path / "lib" / "g" / "b" / ".zarray").unlink()  # found in the consolidated document only
    root = zarr.open_consolidated(zarr.DirectoryStore(str(tmp_path / "lib")), metadata_key="zmeta", mode="r")
    np.testing.assert_array_equal(root["g/b"][...], values)


def test_chunk_store_both_ways(tmp_path):
    """`chunk_store` (zarr-python 2's `chunk_store=`): node documents in one store, chunks in another."""
    values = np.arange(30, dtype="<i4").reshape(6, 5)
    meta, chunks = zarr.DirectoryStore(str(tmp_path / "zm")), zarr.DirectoryStore(str(tmp_path / "zc"))
    root = zarr.group(store=meta, chunk_store=chunks)
    root.create_dataset("g/a", data=values, chunks=(4, 4), fill_value=-1).attrs["units"] = "m"
    zarr.consolidate_metadata(meta)
    assert "g/a/0.0" in files(tmp_path / "zc") and "g/a/0.0" not in files(tmp_path / "zm")
    options = {"chunk_store": str(tmp_path / "zc")}
    with libzarr.Store.open_options(tmp_path / "zm", "r", options) as store:
        assert store.uses_consolidated
        with store.open_array("g/a") as arr:
            np.testing.assert_array_equal(arr.read(), values)
            assert arr.attrs() == {"units": "m"}
        assert store.open_group("g").list()["arrays"] == ["a"]
    # the chunks are not where the metadata is: without the option the array reads as its fill value
    with libzarr.Store.open(tmp_path / "zm", "r") as store, store.open_array("g/a") as arr:
        assert (arr.read() == -1).all()

    options = {"chunk_store": str(tmp_path / "lc"), "chunk_store_options": {"fsync": True}}
    with libzarr.Store.open_options(tmp_path / "lm", "w", options) as store:
        with store.create_array("x", META) as arr:
            arr.write(values)
        store.consolidate()
    assert files(tmp_path / "lm") == [".zgroup", ".zmetadata", "x/.zarray"]
    assert files(tmp_path / "lc") == ["x/0.0", "x/0.1", "x/1.0", "x/1.1"]
    z = zarr.open_array(store=zarr.DirectoryStore(str(tmp_path / "lm")), path="x", mode="r",
                        chunk_store=zarr.DirectoryStore(str(tmp_path / "lc")))
    np.testing.assert_array_equal(z[...], values)
