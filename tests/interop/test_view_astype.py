"""Views and type conversions (zarr-python 2's `Array.view` and `Array.astype`) against zarr-python:
the same stored chunks read through other metadata, values and fill values compared with zarr-python 2's
views both ways (zarr-python wrote the array, or libzarr did), writes through a writable view read back
by zarr-python, and v3 arrays zarr-python 3 wrote converted as NumPy's `astype` converts them."""
import numpy as np
import pytest

import libzarr
import zpy

NUMERIC = ["<f8", "<f4", "<i8", "<i2", "|u1", "<u4", "|b1", "<c16", ">i4"]
SOURCES = [("<f8", -1.5), ("<i4", 7), ("|u1", 3), ("<f4", np.nan)]

needs_zarr2 = pytest.mark.skipif(zpy.ZARR3, reason="Array.view and Array.astype are zarr-python 2's")


def _values(dtype, shape):
    v = np.arange(np.prod(shape)).reshape(shape) * 1.7 - 40
    return v.astype(dtype)


def _source(path, dtype, fill, writer):
    """A (10, 12) array in (4, 5) chunks with rows 7.. never written, by zarr-python or libzarr."""
    data = _values(dtype, (7, 12))
    if writer == "zarr":
        z = zpy.create(path, shape=(10, 12), chunks=(4, 5), dtype=dtype, fill_value=fill)
        z[:7, :] = data
    else:
        meta = {"zarr_format": 2, "shape": [10, 12], "chunks": [4, 5], "dtype": dtype,
                "fill_value": None if fill is None else ("NaN" if np.isnan(fill) else fill),
                "compressor": {"id": "zlib", "level": 1}, "filters": None, "order": "C"}
        with libzarr.open_store(path, "w") as s, s.create_array("", meta) as a:
            a.write(data)


@needs_zarr2
@pytest.mark.parametrize("writer", ["zarr", "libzarr"])
@pytest.mark.parametrize("src,fill", SOURCES)
@pytest.mark.parametrize("to", NUMERIC)
def test_astype_reads_as_zarr_python(tmp_path, writer, src, fill, to):
    import zarr
    _source(tmp_path, src, fill, writer)
    expect = zarr.open_array(str(tmp_path), mode="r").astype(to)
    with libzarr.open_store(tmp_path, "r") as s, s.open_array("") as a, a.astype(to) as v:
        assert v.dtype == np.dtype(to).newbyteorder("=") or v.dtype == np.dtype(to)
        with np.errstate(invalid="ignore"):
            try:
                want = expect[...]
            except ValueError:
                # zarr-python 2 cannot put a NaN fill value into an integer chunk. libzarr
                # converts stored chunks as NumPy's astype converts them, and the fill value of
                # chunks never written (rows 8 and 9) as NumPy converts that value alone (NaN to
                # an integer is undefined in C; NumPy's vectorised and scalar loops differ).
                want = zarr.open_array(str(tmp_path), mode="r")[...].astype(to)
                want[8:] = np.array(fill, src).astype(to)
        np.testing.assert_array_equal(v.read(), want)
        np.testing.assert_array_equal(v.read([8, 3], [2, 9]), want[8:, 3:])
        # zarr-python's view puts the same astype filter first.
        assert v.filters[0] == expect.filters[0].get_config() | {"decode_dtype": v.filters[0]["decode_dtype"]}
        with pytest.raises(libzarr.LibzarrError, match="READ_ONLY"):
            v.write(np.zeros((1, 1), v.dtype))


@needs_zarr2
@pytest.mark.parametrize("writer", ["zarr", "libzarr"])
def test_views_read_as_zarr_python(tmp_path, writer):
    import zarr
    _source(tmp_path, "<f8", -1.5, writer)
    z = zarr.open_array(str(tmp_path), mode="r")
    cases = [dict(dtype="<i8"), dict(dtype="<u8", fill_value=9), dict(shape=(8, 12)),
             dict(shape=(12, 15)), dict(chunks=(2, 5)), dict(dtype="<f4", chunks=(4, 10)),
             dict(fill_value=0.25), dict(filters=[{"id": "delta", "dtype": "<f8"}])]
    for kw in cases:
        zkw = dict(kw)
        if "filters" in zkw:
            from numcodecs import get_codec
            zkw["filters"] = [get_codec(dict(f)) for f in zkw["filters"]]
        expect = z.view(**zkw)
        with libzarr.open_store(tmp_path, "r") as s, s.open_array("") as a:
            with a.view(**kw) as v:
                assert v.shape == expect.shape and v.chunks == expect.chunks, kw
                assert v.dtype == expect.dtype, kw
                try:
                    want = expect[...]
                except Exception:
                    # zarr-python cannot decode these chunks with this view (the sizes differ):
                    # libzarr says so too, rather than reading fill values.
                    with pytest.raises(libzarr.LibzarrError):
                        v.read()
                    continue
                np.testing.assert_array_equal(v.read(), want, err_msg=str(kw))


@needs_zarr2
def test_writable_view_writes_what_zarr_python_reads(tmp_path):
    import zarr
    _source(tmp_path, "<i4", 7, "zarr")
    with libzarr.open_store(tmp_path, "a") as s, s.open_array("") as a:
        with a.view(dtype="<f4", fill_value=0) as v:
            v.write(np.full((2, 3), 2.5, "<f4"), [8, 1])
            with pytest.raises(libzarr.LibzarrError, match="UNSUPPORTED"):
                v.resize((4, 4))
        with a.view(read_only=True) as v, pytest.raises(libzarr.LibzarrError, match="READ_ONLY"):
            v.write(np.zeros((1, 1), "<i4"))
    z = zarr.open_array(str(tmp_path), mode="r")
    assert z.dtype == np.dtype("<i4") and z.shape == (10, 12)  # the stored metadata is untouched
    np.testing.assert_array_equal(z.view(dtype="<f4", fill_value=0)[8:10, 1:4], np.full((2, 3), 2.5))


def test_view_refusals(tmp_path):
    _source(tmp_path, "<f8", -1.5, "libzarr")
    with libzarr.open_store(tmp_path, "r") as s, s.open_array("") as a:
        for kw, status in [(dict(compressor=None), "INVALID_ARGUMENT"), (dict(read_only=1), "INVALID_ARGUMENT"),
                           (dict(dtype="<x9"), "INVALID_METADATA|UNSUPPORTED"),
                           (dict(chunks=[0, 1]), "INVALID_METADATA")]:
            with pytest.raises(libzarr.LibzarrError, match=status):
                a.view(**kw)
        for to in ["|S4", "<U2", "|O", "<M8[s]", "nonsense"]:
            with pytest.raises(libzarr.LibzarrError):
                a.astype(to)


@pytest.mark.skipif(not zpy.ZARR3, reason="zarr-python 3 writes the v3 arrays")
@pytest.mark.parametrize("shards", [None, (4, 10)])
@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("to", NUMERIC)
def test_astype_of_v3_arrays(tmp_path, shards, endian, to):
    import zarr
    from zarr.codecs import BytesCodec
    z = zarr.create_array(str(tmp_path), shape=(10, 12), chunks=(2, 5), shards=shards, dtype="<f8",
                          fill_value=-1.5, serializer=BytesCodec(endian=endian))
    z[:7, :] = _values("<f8", (7, 12))
    with libzarr.open_store(tmp_path, "r") as s, s.open_array("") as a, a.astype(to) as v:
        assert v.metadata["codecs"][0]["name"] == "numcodecs.astype"
        np.testing.assert_array_equal(v.read(), z[...].astype(to))
        # The view's chunks decode as the source's: a libzarr view of a view.
        with v.view(shape=(8, 12)) as w:
            np.testing.assert_array_equal(w.read(), z[:8].astype(to))
