"""N5 containers: what zarr-python 2's N5Store writes libzarr reads, what libzarr writes in a directory
ending in .n5 zarr-python 2 reads (zarr.open picks N5Store for it), for several types with edge blocks
and every compressor zarr-python maps to N5; groups and attributes; the z5py-written fixture; errors.
zarr-python 3 has no N5Store: the module is skipped there."""
import json
import lzma
import struct
from pathlib import Path

import numcodecs
import numpy as np
import pytest

import libzarr
from zpy import ZARR3

pytestmark = [
    pytest.mark.skipif(ZARR3, reason="zarr-python 3 has no N5Store"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore:Not all N5 implementations:RuntimeWarning"),
]

if not ZARR3:
    import zarr

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "z5py.n5"
DTYPES = ["|u1", "|i1", "<u2", "<i2", "<u4", "<i4", "<u8", "<i8", "<f4", "<f8"]
SHAPE, CHUNKS = (7, 5), (3, 2)
COMPRESSORS = {
    "raw": None,
    "gzip": numcodecs.GZip(level=5),
    "zlib": numcodecs.Zlib(level=1),
    "bz2": numcodecs.BZ2(level=9),
    "xz": numcodecs.LZMA(),
    "lzma-alone": numcodecs.LZMA(format=lzma.FORMAT_ALONE, check=-1, preset=1),
    "blosc": numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.SHUFFLE),
    "zstd": numcodecs.Zstd(level=3),
    "lz4": numcodecs.LZ4(),
}


def data(dtype, shape=SHAPE):
    values = np.arange(np.prod(shape)).reshape(shape) * 3 - 7
    if np.dtype(dtype).kind == "u":
        values = np.abs(values)
    return values.astype(dtype)


def n5_attributes(path):
    return json.loads((path / "attributes.json").read_text())


@pytest.mark.parametrize("compressor", COMPRESSORS, ids=list(COMPRESSORS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_libzarr_reads_python_n5(tmp_path, dtype, compressor):
    path = tmp_path / "py.n5"
    root = zarr.group(store=zarr.N5Store(str(path)))
    root.attrs["title"] = "n5"
    a = root.create_group("g").create_dataset("a", shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                                              compressor=COMPRESSORS[compressor])
    a[...] = data(dtype)
    a.attrs["units"] = "nm"
    with libzarr.open_store(path) as store:
        with store.open_group("") as g:
            assert g.attrs() == {"title": "n5"}
            assert g.list()["groups"] == ["g"]
        with store.open_array("g/a") as arr:
            assert arr.shape == SHAPE and arr.chunks == CHUNKS
            assert arr.attrs() == {"units": "nm"}
            np.testing.assert_array_equal(arr.read(), data(dtype))
            np.testing.assert_array_equal(arr.read((5, 3), (2, 2)), data(dtype)[5:, 3:])


@pytest.mark.parametrize("compressor", COMPRESSORS, ids=list(COMPRESSORS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_python_reads_libzarr_n5(tmp_path, dtype, compressor):
    path = tmp_path / "lib.n5"
    config = COMPRESSORS[compressor]
    meta = {"shape": list(SHAPE), "chunks": list(CHUNKS), "dtype": dtype,
            "compressor": config.get_config() if config else None}
    with libzarr.open_store(path, "a") as store:
        with store.create_group("") as g:
            g.set_attrs({"made": "libzarr"})
        with store.create_group("g"), store.create_array("g/a", meta) as a:
            a.write(data(dtype))
            a.set_attrs({"units": "nm", "scale": [1.5, 2]})
    # The N5 layout: the root's version, reversed dimensions, the block of chunk (2, 1) at 1/2
    # holding its actual part (1 x 2, N5 order 2, 1).
    assert n5_attributes(path)["n5"] == "2.0.0"
    attrs = n5_attributes(path / "g" / "a")
    assert attrs["dimensions"] == [5, 7] and attrs["blockSize"] == [2, 3]
    assert attrs["dataType"] == np.dtype(dtype).name and attrs["units"] == "nm"
    edge = (path / "g" / "a" / "1" / "2").read_bytes()
    assert struct.unpack(">HHII", edge[:12]) == (0, 2, 2, 1)
    root = zarr.open(str(path), mode="r")
    assert isinstance(root.store, zarr.N5Store)
    assert dict(root.attrs) == {"made": "libzarr"}
    a = root["g/a"]
    assert dict(a.attrs) == {"units": "nm", "scale": [1.5, 2]}
    assert a.dtype == np.dtype(dtype) and a.chunks == CHUNKS
    np.testing.assert_array_equal(a[...], data(dtype))


def test_libzarr_updates_python_n5(tmp_path):
    """Partial writes (across edge blocks) and attribute changes through libzarr on an array zarr-python made."""
    path = tmp_path / "both.n5"
    root = zarr.group(store=zarr.N5Store(str(path)))
    a = root.create_dataset("a", shape=(6, 6, 6), chunks=(4, 4, 4), dtype="<f8", compressor=numcodecs.Zstd())
    a[...] = data("<f8", (6, 6, 6))
    expected = data("<f8", (6, 6, 6))
    with libzarr.open_store(path, "a") as store, store.open_array("a") as arr:
        arr.write(np.full((3, 2, 5), -1.0), (3, 3, 1))
        expected[3:, 3:5, 1:] = -1
        arr.set_attrs({"k": 1})
    again = zarr.open(str(path), mode="r")
    np.testing.assert_array_equal(again["a"][...], expected)
    assert dict(again["a"].attrs) == {"k": 1}
    assert "dimensions" in n5_attributes(path / "a")


def test_z5py_fixture_reads_the_same_in_both(tmp_path):
    py = zarr.open(zarr.N5Store(str(FIXTURE)), mode="r")
    with libzarr.open_store(FIXTURE) as store:
        assert sorted(store.open_group("").list()["arrays"]) == ["gzip", "raw"]
        for name in ["raw", "gzip"]:
            with store.open_array(name) as arr:
                assert arr.shape == (512, 512, 3) and arr.chunks == (100, 100, 1)
                ours = arr.read()
                np.testing.assert_array_equal(ours, py[name][...])
                # The edge block 5/5/0 (N5 0/5/5): 12 x 12 values, not all zero.
                assert ours[500:, 500:, 0].any() and ours[0:100, 0:100, 0].any()
                # Blocks not in the fixture read as 0.
                assert not ours[100:200, 100:200].any()
                if name == "raw":
                    raw = ours
        np.testing.assert_array_equal(ours, raw)
        # The raw block's bytes are the values.
        block = (FIXTURE / "raw" / "0" / "5" / "5").read_bytes()
        assert struct.unpack(">HHIII", block[:16]) == (0, 3, 1, 12, 12)
        np.testing.assert_array_equal(raw[500:, 500:, 0], np.frombuffer(block[16:], "|u1").reshape(12, 12))


def test_errors_name_the_key(tmp_path):
    path = tmp_path / "bad.n5"
    root = zarr.group(store=zarr.N5Store(str(path)))
    root.create_dataset("a", shape=(4, 4), chunks=(2, 2), dtype="<u2", compressor=None)[...] = 1
    block = path / "a" / "0" / "0"
    good = block.read_bytes()
    with libzarr.open_store(path) as store, store.open_array("a") as arr:
        for damaged, name in [
            (struct.pack(">HHIII", 0, 3, 2, 2, 1) + good[12:], "3 dimensions"),
            (struct.pack(">HHII", 0, 2, 3, 2) + good[12:], "larger than"),
            (good[:6], "inside its header"),
            (good[:-1], "bytes"),
        ]:
            block.write_bytes(damaged)
            with pytest.raises(libzarr.LibzarrError) as err:
                arr.read()
            assert err.value.name == "ZARR_ERR_CORRUPT_CHUNK", err.value
            assert '"a/0.0"' in err.value.message and name in err.value.message, err.value.message
    attrs = path / "a" / "attributes.json"
    for text, status, needle in [
        ("{not json", "ZARR_ERR_INVALID_METADATA", "a/attributes.json"),
        (json.dumps({**json.loads(attrs.read_text()), "compression": {"type": "snappy"}}),
         "ZARR_ERR_UNSUPPORTED", "snappy"),
        (json.dumps({**json.loads(attrs.read_text()), "dataType": "object"}),
         "ZARR_ERR_UNSUPPORTED", "object"),
    ]:
        saved = attrs.read_text()
        attrs.write_text(text)
        with libzarr.open_store(path) as store:
            with pytest.raises(libzarr.LibzarrError) as err:
                store.open_array("a")
            assert err.value.name == status and needle in err.value.message, err.value.message
            assert "a/attributes.json" in err.value.message
        attrs.write_text(saved)


def test_what_n5_cannot_hold_is_refused(tmp_path):
    with libzarr.open_store(tmp_path / "x.n5", "a") as store:
        for change in [{"fill_value": 3}, {"order": "F"}, {"dtype": "|b1"},
                       {"filters": [{"id": "delta", "dtype": "<u2"}]}]:
            meta = {"shape": [4], "chunks": [2], "dtype": "<u2", **change}
            with pytest.raises(libzarr.LibzarrError) as err:
                store.create_array("a", meta)
            assert err.value.name == "ZARR_ERR_UNSUPPORTED", err.value
        with store.create_array("a", {"shape": [4], "chunks": [2], "dtype": "<u2"}) as a:
            with pytest.raises(libzarr.LibzarrError) as err:
                a.set_attrs({"dimensions": [1]})
            assert "reserved" in err.value.message


def test_hierarchy_and_copies(tmp_path):
    """Listings, consolidation and copies on an N5 container zarr-python wrote."""
    path = tmp_path / "tree.n5"
    root = zarr.group(store=zarr.N5Store(str(path)))
    a = root.create_group("g").create_group("h").create_dataset("a", shape=(5, 4, 3), chunks=(2, 3, 2),
                                                                 dtype="<i2", compressor=numcodecs.GZip())
    a[...] = data("<i2", (5, 4, 3))
    root.create_dataset("b", shape=(10,), chunks=(4,), dtype="<f4", compressor=None)[...] = np.arange(10)
    with libzarr.open_store(path, "a") as store:
        tree = store.open_group("").tree()
        assert [m["name"] for m in tree["children"]] == ["b", "g"]
        assert sorted(store.list_keys("g/h/a/")) == sorted(
            ["g/h/a/.zarray"] + [f"g/h/a/{i}.{j}.{k}" for i in range(3) for j in range(2) for k in range(2)])
        store.consolidate()
        # Verbatim out of N5: chunks keep their N5 framing under the n5_wrapper compressor.
        with libzarr.open_store(tmp_path / "plain", "a") as plain:
            store.copy("g", plain, "copied")
            with plain.open_array("copied/h/a") as copied:
                np.testing.assert_array_equal(copied.read(), data("<i2", (5, 4, 3)))
            # Verbatim into N5 from Zarr is refused; re-encoding works.
            with pytest.raises(libzarr.LibzarrError) as err:
                plain.copy("copied", store, "back")
            assert err.value.name == "ZARR_ERR_UNSUPPORTED"
            with plain.create_array("z", {"shape": [6, 5], "chunks": [4, 4], "dtype": "<u4",
                                          "compressor": {"id": "zlib", "level": 1}}) as z:
                z.write(data("<u4", (6, 5)))
                z.copy_to(store, "from_zarr")
    py_plain = zarr.open(str(tmp_path / "plain"), mode="r")
    np.testing.assert_array_equal(py_plain["copied/h/a"][...], data("<i2", (5, 4, 3)))
    again = zarr.open_consolidated(zarr.N5Store(str(path)), mode="r")
    np.testing.assert_array_equal(again["g/h/a"][...], data("<i2", (5, 4, 3)))
    np.testing.assert_array_equal(zarr.open(str(path), mode="r")["from_zarr"][...], data("<u4", (6, 5)))


def test_resize_keeps_n5_blocks_right(tmp_path):
    """Growing and shrinking through libzarr: dimensions rewritten, zarr-python reads the NumPy model."""
    path = tmp_path / "resize.n5"
    with libzarr.open_store(path, "a") as store:
        with store.create_array("a", {"shape": [5, 5], "chunks": [2, 3], "dtype": "<i4",
                                      "compressor": {"id": "zstd", "level": 1}}) as a:
            a.write(data("<i4", (5, 5)))
            a.resize([7, 4])
            model = np.zeros((7, 4), "<i4")
            model[:5] = data("<i4", (5, 5))[:, :4]
            np.testing.assert_array_equal(a.read(), model)
            a.write(np.full((2, 4), 9, "<i4"), (5, 0))
            model[5:] = 9
    assert n5_attributes(path / "a")["dimensions"] == [4, 7]
    np.testing.assert_array_equal(zarr.open(str(path), mode="r")["a"][...], model)
