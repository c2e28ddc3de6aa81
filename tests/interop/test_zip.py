"""Zip stores: what zarr-python's ZipStore writes (stored or deflated members) libzarr reads, and
the zips libzarr writes (on zarr_store_close) zarr-python reads; libzarr appends to zarr-python's
archives (mode "a", as ZipStore(mode="a")) and zarr-python reads everything; deflated members
(option zip_compression); an archive flushed (zarr_store_flush) but not closed is complete for
Python's zipfile."""
import subprocess
import sys
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


def python_reads(path):
    """zarr-python's view of the archive at `path`: (store, root group)."""
    zs = python_zip_store(path, "r")
    root = zarr.open_group(store=zs, mode="r", zarr_format=2) if ZARR3 else zarr.open_group(store=zs, mode="r")
    return zs, root


META = {"zarr_format": 2, "shape": [6, 4], "chunks": [3, 2], "dtype": "<i2", "order": "C",
        "fill_value": 0, "compressor": {"id": "zlib", "level": 1}, "filters": None}
NEW = np.arange(24, dtype="<i2").reshape(6, 4) + 100


@pytest.mark.parametrize("compression", ["stored", "deflate"])
def test_libzarr_appends_to_python_zip(tmp_path, compression):
    """zarr-python writes a zip; libzarr opens it "a", adds an array and rewrites a chunk of
    zarr-python's array; zarr-python reads every array, old and new."""
    path = tmp_path / "py.zip"
    python_writes(path, zipfile.ZIP_STORED)
    with libzarr.Store.open_options(path, "a", {"zip_compression": compression}) as store:
        with store.create_array("new", META) as a:
            a.write(NEW)
        with store.open_array("g/a") as a:
            a.write(np.full((3, 2), 77, dtype="<i4"), (0, 0))  # chunk 0.0 written again
            np.testing.assert_array_equal(a.read((0, 0), (3, 2)), np.full((3, 2), 77))
        with store.open_group("") as root:
            root.set_attrs({"title": "zip", "appended": True})
    expected = DATA.copy()
    expected[:3, :2] = 77
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        names = zf.namelist()
        assert len(names) == len(set(names))  # the newest member of each name only
        kinds = {i.filename: i.compress_type for i in zf.infolist()}
        assert kinds["g/a/0.0"] == (zipfile.ZIP_DEFLATED if compression == "deflate" else zipfile.ZIP_STORED)
        assert kinds["g/a/1.0"] == zipfile.ZIP_STORED  # zarr-python's member, kept as it was
    zs, root = python_reads(path)
    assert dict(root.attrs) == {"title": "zip", "appended": True}
    np.testing.assert_array_equal(root["g/a"][...], expected)
    np.testing.assert_array_equal(root["b"][...], FLOATS)
    np.testing.assert_array_equal(root["new"][...], NEW)
    zs.close()
    # ... and zarr-python appends to libzarr's archive in turn (a duplicate name, read as the last).
    zs = python_zip_store(path, "a")
    root = zarr.open_group(store=zs, mode="a", zarr_format=2) if ZARR3 else zarr.open_group(store=zs, mode="a")
    root["new"][0, :] = -5
    zs.close()
    with libzarr.open_store(path) as store, store.open_array("new") as a:
        want = NEW.copy()
        want[0, :] = -5
        np.testing.assert_array_equal(a.read(), want)


def test_python_reads_deflated_libzarr_zip(tmp_path):
    path = tmp_path / "deflated.zip"
    values = np.tile(np.arange(4, dtype="<i2"), 6).reshape(6, 4)
    with libzarr.Store.open_options(path, "w", {"zip_compression": "deflate"}) as store:
        with store.create_group(""), store.create_array("x", dict(META, compressor=None)) as a:
            a.write(values)
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_DEFLATED}
    zs, root = python_reads(path)
    np.testing.assert_array_equal(root["x"][...], values)
    zs.close()


def test_flushed_archive_is_complete_before_the_close(tmp_path):
    path = tmp_path / "flushed.zip"
    store = libzarr.open_store(path, "a")
    with store.create_group(""), store.create_array("x", META) as a:
        a.write(NEW)
    assert not path.exists()  # nothing at the path before the first flush
    store.flush()
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert "x/.zarray" in zf.namelist()
    zs, root = python_reads(path)
    np.testing.assert_array_equal(root["x"][...], NEW)
    zs.close()
    # Still writable: a later write is in the archive after the next flush, not before.
    with store.create_array("y", META) as b:
        b.write(NEW * 2)
    assert "y/.zarray" not in zipfile.ZipFile(path).namelist()
    store.flush()
    zs, root = python_reads(path)
    np.testing.assert_array_equal(root["y"][...], NEW * 2)
    zs.close()
    store.close()
    assert [p.name for p in tmp_path.iterdir()] == ["flushed.zip"]  # no working file left


KILLED_WRITER = """
import sys, os, numpy as np, libzarr
store = libzarr.open_store(sys.argv[1], "a")
a = store.create_array("killed", {META!r})
a.write(np.ones((6, 4), dtype="<i2"))
sys.stdout.write("written\\n"); sys.stdout.flush()
os.kill(os.getpid(), 9)
"""


def test_writer_killed_before_close_leaves_the_archive_as_it_was(tmp_path):
    path = tmp_path / "py.zip"
    python_writes(path, zipfile.ZIP_STORED)
    before = path.read_bytes()
    run = subprocess.run([sys.executable, "-c", KILLED_WRITER.format(META=META), str(path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == -9 and run.stdout == "written\n", run.stderr
    assert path.read_bytes() == before
    zs, root = python_reads(path)
    np.testing.assert_array_equal(root["g/a"][...], DATA)
    assert "killed" not in root
    zs.close()


def test_existing_file_that_is_not_a_zip_is_not_written_into(tmp_path):
    path = tmp_path / "plain.zip"
    path.write_bytes(b"hello")
    with pytest.raises(libzarr.LibzarrError) as err:
        libzarr.open_store(path, "a")
    assert err.value.name == "ZARR_ERR_CORRUPT_CHUNK" and "plain.zip" in err.value.message
    assert path.read_bytes() == b"hello"


def test_python_reads_libzarr_zip64_directory(tmp_path):
    """70000 members: more than the classic end record counts, so libzarr writes the zip64 end
    record and its locator, as Python's zipfile does; zipfile reads every member."""
    path = tmp_path / "many.zip"
    with libzarr.open_store(path, "w") as store:
        for i in range(70000):
            store.set(f"c/{i}", i.to_bytes(4, "little"))
    with zipfile.ZipFile(path) as zf:
        assert len(zf.namelist()) == 70000 and zf.testzip() is None
        assert zf.read("c/69999") == (69999).to_bytes(4, "little")
