"""Resizing and appending: arrays libzarr resizes or appends to read back in zarr-python exactly as a
NumPy model says, and arrays zarr-python resized or appended to read back in libzarr."""
import numcodecs
import numpy as np
import pytest

import libzarr
import zpy
from zpy import ZARR3

FILL = -7


def chunk_keys(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))


def grown(model, shape):
    """The model after a resize: kept where both shapes overlap, the fill value elsewhere."""
    out = np.full(shape, FILL, dtype=model.dtype)
    keep = tuple(slice(0, min(a, b)) for a, b in zip(model.shape, shape))
    out[keep] = model[keep]
    return out


@pytest.mark.parametrize("separator", [".", "/"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_python_reads_what_libzarr_resized(tmp_path, separator, order):
    model = np.arange(13 * 11, dtype="<i4").reshape(13, 11)
    meta = {"shape": list(model.shape), "chunks": [4, 3], "dtype": "<i4", "fill_value": FILL, "order": order,
            "compressor": {"id": "zstd", "level": 1}, "dimension_separator": separator}
    with libzarr.open_store(tmp_path, "a") as store:
        with store.create_array("a", meta) as a:
            a.write(model)
            a.set_attrs({"units": "m", "nan": float("nan")})
            for shape in [(6, 5), (6, 20), (2, 2), (9, 7)]:
                a.resize(shape)
                model = grown(model, shape)
                assert a.shape == tuple(shape)
                np.testing.assert_array_equal(a.read(), model)
            extra = np.arange(2 * 7, dtype="<i4").reshape(2, 7) + 1000
            a.append(extra, axis=0)
            model = np.concatenate([model, extra], axis=0)
            col = np.arange(11, dtype="<i4").reshape(11, 1) + 2000
            a.append(col, axis=1)
            model = np.concatenate([model, col], axis=1)
    z = zpy.open_array(tmp_path / "a")
    assert z.shape == model.shape
    np.testing.assert_array_equal(zpy.read(z), model)
    assert z.attrs["units"] == "m" and np.isnan(z.attrs["nan"])
    # Every stored chunk lies inside the final shape's chunk grid.
    grid = [-(-n // c) for n, c in zip(model.shape, (4, 3))]
    for key in chunk_keys(tmp_path / "a"):
        coords = [int(c) for c in key.replace("/", ".").split(".")]
        assert all(c < g for c, g in zip(coords, grid)), key


def test_shrinking_deletes_the_chunks_zarr_python_deletes(tmp_path):
    model = np.arange(100, dtype="<u2").reshape(10, 10)
    for who in ("libzarr", "python"):
        path = tmp_path / who
        arr = zpy.create(path, shape=model.shape, chunks=(3, 3), dtype="<u2", fill_value=0,
                         compressor=numcodecs.Zlib(1))
        arr[...] = model
        if who == "python":
            zpy.open_array(path, mode="r+").resize((4, 5))
        else:
            with libzarr.open_store(path, "a") as store, store.open_array("") as a:
                a.resize((4, 5))
    # The same chunks survive (both keep the edge chunks that still hold data) and read the same.
    assert chunk_keys(tmp_path / "libzarr") == chunk_keys(tmp_path / "python")
    np.testing.assert_array_equal(zpy.read(zpy.open_array(tmp_path / "libzarr")), model[:4, :5])


def test_libzarr_reads_what_python_resized_and_appended(tmp_path):
    model = np.linspace(0, 1, 24).reshape(4, 6)
    arr = zpy.create(tmp_path, shape=model.shape, chunks=(3, 4), dtype="<f8", fill_value=0.0,
                     compressor=numcodecs.Blosc("lz4"))
    arr[...] = model
    arr.resize((5, 9))
    model = np.pad(model, ((0, 1), (0, 3)))
    extra = np.full((2, 9), 0.5)
    arr.append(extra, axis=0)
    model = np.concatenate([model, extra])
    with libzarr.open_store(tmp_path) as store, store.open_array("") as a:
        assert a.shape == (7, 9)
        np.testing.assert_array_equal(a.read(), model)


def test_resize_errors(tmp_path):
    with libzarr.open_store(tmp_path, "a") as store, store.create_array(
            "a", {"shape": [4], "chunks": [2], "dtype": "<i4"}) as a:
        with pytest.raises(libzarr.LibzarrError, match="INVALID_ARGUMENT"):
            a.resize((4, 4))
        with pytest.raises(libzarr.LibzarrError, match="BUFFER_SIZE"):
            _ = libzarr._call("zarr_array_append", a.handle, 0, 2, np.zeros(3, "<i4").ctypes.data, 12)
        assert a.shape == (4,)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("a") as a:
        with pytest.raises(libzarr.LibzarrError, match="READ_ONLY"):
            a.resize((8,))


def test_python_reads_text_libzarr_appended(tmp_path):
    meta = {"shape": [2, 2], "chunks": [2, 3], "dtype": "|O", "fill_value": "", "filters": [{"id": "vlen-utf8"}]}
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("t", meta) as t:
        t.write_vlen([b"a", b"b", b"c", b"d"], (0, 0), (2, 2))
        t.append_vlen(["é".encode(), b"", "日本".encode(), b"z"], 2, axis=0)
        t.append_vlen([b"x", b"y", b"w", b"v"], 1, axis=1)
    z = zpy.open_array(tmp_path / "t")
    assert z.shape == (4, 3)
    assert z[...].tolist() == [["a", "b", "x"], ["c", "d", "y"], ["é", "", "w"], ["日本", "z", "v"]]
