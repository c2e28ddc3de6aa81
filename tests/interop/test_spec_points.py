"""Codecs beyond numcodecs' wheels and the spec's MUST/SHOULD points, against the real implementations.

* Blosc with snappy: numcodecs' c-blosc is built without snappy (`numcodecs.blosc.list_compressors()` lacks
  it), so zarr-python can neither write nor read such chunks. Debian's libblosc1 (c-blosc 1.21.3 with snappy
  1.1.9, the system library the consumer tests link) writes them: its chunks, under a `.zarray` naming
  blosc/snappy, are read by libzarr, and libzarr's snappy chunks are decoded by it. zarr-python's failure on
  them is checked too, so that the day numcodecs gains snappy this test says so.
* LZMA's raw format (`format=3`, the filter chain only in the metadata) and compressors in the filter list
  are in cases.COMPRESSORS (the matrix) and test_filters.TABLE (both directions, zarr-python 2 and 3).
* Node names: non-ASCII names in v2 (which the v2 spec calls ASCII) and v3, both directions; names the v3
  spec forbids (`__x`, `...`) refused when libzarr creates v3 nodes, read where zarr-python wrote them.
"""
import ctypes
import ctypes.util
import json

import numpy as np
import pytest

import libzarr
import zpy
from cases import load_json


# ---------------------------------------------------------------- blosc with snappy
def _system_blosc():
    for name in ("libblosc.so.1", ctypes.util.find_library("blosc")):
        try:
            lib = ctypes.CDLL(name) if name else None
        except OSError:
            continue
        if lib is None:
            continue
        lib.blosc_list_compressors.restype = ctypes.c_char_p
        if b"snappy" in lib.blosc_list_compressors().split(b","):
            return lib
    return None


BLOSC = _system_blosc()
needs_blosc = pytest.mark.skipif(BLOSC is None, reason="no system c-blosc with snappy (Debian: libblosc1)")
SNAPPY = {"id": "blosc", "cname": "snappy", "clevel": 5, "shuffle": 1, "blocksize": 0}


def blosc_compress(data, typesize, shuffle=1):
    out = ctypes.create_string_buffer(len(data) + 16)
    n = BLOSC.blosc_compress_ctx(5, shuffle, ctypes.c_size_t(typesize), ctypes.c_size_t(len(data)), data, out,
                                 ctypes.c_size_t(len(data) + 16), b"snappy", ctypes.c_size_t(0), 1)
    assert n > 0
    return out.raw[:n]


def blosc_decompress(frame, nbytes):
    out = ctypes.create_string_buffer(nbytes)
    n = BLOSC.blosc_decompress_ctx(frame, out, ctypes.c_size_t(nbytes), 1)
    assert n == nbytes, n
    return out.raw


@needs_blosc
def test_snappy_chunks_of_system_c_blosc_read_by_libzarr(tmp_path):
    data = (np.arange(40 * 30, dtype="<i4") // 7).reshape(40, 30)
    zarray = {"zarr_format": 2, "shape": [40, 30], "chunks": [20, 30], "dtype": "<i4", "compressor": SNAPPY,
              "fill_value": 0, "order": "C", "filters": None, "dimension_separator": "."}
    (tmp_path / ".zarray").write_text(json.dumps(zarray))
    for i in range(2):
        frame = blosc_compress(data[20 * i:20 * (i + 1)].tobytes(), 4)
        assert frame[2] >> 5 == 2, "the frame names snappy"
        (tmp_path / f"{i}.0").write_bytes(frame)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        assert arr.compressor["cname"] == "snappy"
        np.testing.assert_array_equal(arr.read(), data)
    with pytest.raises(Exception):  # numcodecs' c-blosc has no snappy
        zpy.read(zpy.open_array(tmp_path))


@needs_blosc
def test_libzarr_snappy_chunks_decoded_by_system_c_blosc(tmp_path):
    data = (np.arange(50 * 16, dtype=">f8") / 3).reshape(50, 16)
    doc = {"shape": [50, 16], "chunks": [25, 16], "dtype": ">f8", "compressor": SNAPPY}
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("s", doc) as arr:
        arr.write(data)
    assert load_json(tmp_path / "s" / ".zarray")["compressor"] == SNAPPY
    for i in range(2):
        frame = (tmp_path / "s" / f"{i}.0").read_bytes()
        assert frame[2] >> 5 == 2 and frame[3] == 8, "snappy, typesize 8"
        got = np.frombuffer(blosc_decompress(frame, 25 * 16 * 8), ">f8").reshape(25, 16)
        np.testing.assert_array_equal(got, data[25 * i:25 * (i + 1)])


# ---------------------------------------------------------------- node names
NAMES = ["données", "温度", "a b", "😀"]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_non_ascii_names_both_directions(zarr_format, tmp_path):
    if zarr_format == 3 and not zpy.ZARR3:
        pytest.skip("zarr-python 2 has no Zarr v3")
    # libzarr writes, zarr-python reads
    with libzarr.open_store(tmp_path / "lib", "a") as store:
        store.create_group_format("", zarr_format)
        for i, name in enumerate(NAMES):
            doc = ({"zarr_format": 3, "shape": [3], "data_type": "int16", "chunk_grid": {
                "name": "regular", "configuration": {"chunk_shape": [2]}}} if zarr_format == 3
                   else {"shape": [3], "chunks": [2], "dtype": "<i2"})
            with store.create_array(f"g/{name}", doc) as arr:
                arr.write(np.arange(3, dtype="<i2") + i)
    g = _zpy_group_read(tmp_path / "lib", zarr_format)
    for i, name in enumerate(NAMES):
        np.testing.assert_array_equal(zpy.read(g[f"g/{name}"]), np.arange(3) + i)
    # zarr-python writes, libzarr reads (zarr-python accepts any name in both formats)
    root = _zpy_group(tmp_path / "zpy", zarr_format)
    g = root.create_group("g")
    for i, name in enumerate(NAMES):
        if zarr_format == 3:
            a = g.create_array(name, shape=(3,), chunks=(2,), dtype="<i2")
        else:
            a = zpy.create_member(g, name, shape=(3,), chunks=(2,), dtype="<i2")
        a[...] = np.arange(3) + i
    with libzarr.open_store(tmp_path / "zpy", "r") as store:
        with store.open_group("g") as grp:
            assert grp.list()["arrays"] == sorted(NAMES)
        for i, name in enumerate(NAMES):
            with store.open_array(f"g/{name}") as arr:
                np.testing.assert_array_equal(arr.read(), np.arange(3) + i)


def _zpy_group_read(path, zarr_format):
    import zarr
    if zpy.ZARR3:
        return zarr.open_group(str(path), mode="r", zarr_format=zarr_format)
    return zpy.open_group(path)


def _zpy_group(path, zarr_format):
    import zarr
    if zpy.ZARR3:
        return zarr.open_group(str(path), mode="w", zarr_format=zarr_format)
    return zarr.open_group(store=zarr.DirectoryStore(str(path)), mode="w")


@pytest.mark.parametrize("name", ["__reserved", "...", "a/__b"])
def test_v3_forbidden_names_refused_v2_accepted(name, tmp_path):
    v3 = {"zarr_format": 3, "shape": [2], "data_type": "uint8",
          "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}}}
    with libzarr.open_store(tmp_path, "a") as store:
        for create in (lambda: store.create_group_format(name, 3), lambda: store.create_array(name, v3)):
            with pytest.raises(libzarr.LibzarrError) as e:
                create()
            assert e.value.name == "ZARR_ERR_INVALID_PATH" and "v3" in e.value.message, str(e.value)
        assert store.list_keys() == []
        # Zarr v2 has no such rule: zarr-python 2 creates these names, and so does libzarr.
        with store.create_array(f"v2/{name}", {"shape": [2], "chunks": [2], "dtype": "|u1"}) as arr:
            arr.write(np.array([1, 2], "u1"))


@pytest.mark.skipif(not zpy.ZARR3, reason="zarr-python 3 writes Zarr v3")
def test_v3_names_zarr_python_wrote_are_read(tmp_path):
    """zarr-python 3 does not enforce the v3 node-name rules; what it wrote, libzarr reads."""
    import zarr
    root = zarr.open_group(str(tmp_path), mode="w", zarr_format=3)
    try:
        a = root.create_array("__odd", shape=(2,), chunks=(2,), dtype="uint8")
    except Exception as e:  # a zarr-python that enforces them: nothing to read
        pytest.skip(f"this zarr-python refuses the name: {e}")
    a[...] = [3, 4]
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("__odd") as arr:
        np.testing.assert_array_equal(arr.read(), [3, 4])
