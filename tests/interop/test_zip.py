"""Zip stores: what zarr-python's ZipStore writes (stored or deflated members) libzarr reads, and
the zips libzarr writes (on zarr_store_close) zarr-python reads. Existing zips are never written into."""
import zipfile

import numcodecs
import numpy as np
import pytest
import zarr

import libzarr
from zpy import ZARR3

DATA = np.arange(35, dtype="<i4").reshape(7, 5)
FLOATS = np.linspace(0, 1, 9)
# zarr 3's ZipStore writes a key set twice as a second member (the last one counts, as libzarr reads it).
pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")


def python_zip_store(path, mode, compression=zipfile.ZIP_STORED):
    if ZARR3:
        return zarr.storage.ZipStore(str(path), mode=mode, compression=compression)
    return zarr.ZipStore(str(path), mode=mode, compression=compression)


def python_writes(path, compression):
    store = python_zip_store(path, "w", compression)
    root = zarr.group(store=store, zarr_format=2) if ZARR3 else zarr.group(store=store)
    root.attrs["title"] = "zip"
    g = root.create_group("g")
    if ZARR3:
        a = g.create_array("a", shape=DATA.shape, chunks=(3, 2), dtype="<i4", fill_value=-1,
                           compressors=numcodecs.Zlib(level=1))
        b = root.create_array("b", shape=FLOATS.shape, chunks=(4,), dtype="<f8", fill_value=0,
                              compressors=None)
    else:
        a = g.create_dataset("a", shape=DATA.shape, chunks=(3, 2), dtype="<i4", fill_value=-1,
                             compressor=numcodecs.Zlib(level=1))
        b = root.create_dataset("b", shape=FLOATS.shape, chunks=(4,), dtype="<f8", fill_value=0,
                                compressor=None)
    a[...] = DATA
    b[...] = FLOATS
    store.close()


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED], ids=["stored", "deflated"])
def test_libzarr_reads_python_zip(tmp_path, compression):
    path = tmp_path / "py.zip"
    python_writes(path, compression)
    with zipfile.ZipFile(path) as zf:
        assert {i.compress_type for i in zf.infolist()} == {compression}
    with libzarr.open_store(path) as store:
        with store.open_group("") as root:
            assert root.attrs() == {"title": "zip"}
            assert json_list(root) == {"arrays": ["b"], "groups": ["g"]}
        with store.open_array("g/a") as a:
            np.testing.assert_array_equal(a.read(), DATA)
            np.testing.assert_array_equal(a.read((5, 3), (2, 2)), DATA[5:, 3:])
        with store.open_array("b") as b:
            np.testing.assert_array_equal(b.read(), FLOATS)
            with pytest.raises(libzarr.LibzarrError) as err:
                b.write(np.zeros(2), (0,))
            assert err.value.name == "ZARR_ERR_READ_ONLY"
        with pytest.raises(libzarr.LibzarrError) as err:
            store.create_group("h")
        assert err.value.name == "ZARR_ERR_READ_ONLY"


def json_list(group):
    listing = group.list()
    return {"arrays": sorted(listing["arrays"]), "groups": sorted(listing["groups"])}


def test_python_reads_libzarr_zip(tmp_path):
    path = tmp_path / "lib.zip"
    store = libzarr.open_store(path, "a")
    with store.create_group("") as root:
        root.set_attrs({"made": "libzarr"})
    meta = {"zarr_format": 2, "shape": [7, 5], "chunks": [3, 2], "dtype": "<i4", "order": "C",
            "fill_value": -1, "compressor": {"id": "zlib", "level": 1}, "filters": None}
    with store.create_group("g"), store.create_array("g/a", meta) as a:
        a.write(DATA)
    store.close()  # writes the archive
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}  # as zarr-python writes
    zs = python_zip_store(path, "r")
    root = zarr.open_group(store=zs, mode="r", zarr_format=2) if ZARR3 else zarr.open_group(store=zs, mode="r")
    assert dict(root.attrs) == {"made": "libzarr"}
    np.testing.assert_array_equal(root["g/a"][...], DATA)
    zs.close()


def test_existing_zip_is_not_written_into(tmp_path):
    path = tmp_path / "py.zip"
    python_writes(path, zipfile.ZIP_STORED)
    before = path.read_bytes()
    with pytest.raises(libzarr.LibzarrError) as err:
        libzarr.open_store(path, "a")
    assert err.value.name == "ZARR_ERR_UNSUPPORTED" and "existing zip" in err.value.message
    assert path.read_bytes() == before
