"""Creation conveniences as zarr-python reads its `chunks` argument: chunks guessed when not given
(zarr-python's guess_chunks, for v2 and v3 arrays of several shapes and item sizes), one integer
for every dimension, -1 and None for a whole dimension, dimensions left out whole. (zarr-python 3.3 and
later dropped the last two and True for a guess; libzarr keeps zarr-python 2's and 3.1's reading.)"""
import json

import numpy as np
import pytest

import libzarr
import zpy
from zpy import guess_chunks

SHAPES = [(), (0,), (7,), (100,), (10000, 10000), (1 << 24,), (3, 5000, 7000), (12, 0, 4), (1 << 40,),
          (50, 60, 70, 80)]
DTYPES = ["|b1", "<i2", "<f4", "<f8", "<c16", "|S100"]


def created_chunks(meta):
    with libzarr.open_store("memory:", "a") as s, s.create_array("a", meta) as a:
        return tuple(a.chunks)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_guessed_chunks_are_zarr_pythons(shape):
    for dtype in DTYPES:
        want = guess_chunks(shape, np.dtype(dtype).itemsize)
        assert created_chunks({"shape": list(shape), "dtype": dtype}) == want, dtype
        assert created_chunks({"shape": list(shape), "dtype": dtype, "chunks": None}) == want, dtype
        v3_type = {"|b1": "bool", "<i2": "int16", "<f4": "float32", "<f8": "float64",
                   "<c16": "complex128"}.get(dtype)
        if v3_type:
            assert created_chunks({"zarr_format": 3, "shape": list(shape), "data_type": v3_type}) == want


SHAPE = (10, 20, 30)


# chunks argument -> what zarr-python 2 and 3.1 make of it for SHAPE and 4-byte items (None: the guess)
@pytest.mark.parametrize("chunks, want", [
    pytest.param(c, w, id=json.dumps(c)) for c, w in [
        (5, (5, 5, 5)), ([3], (3, 20, 30)), ([-1, 4], (10, 4, 30)), ([None, None], (10, 20, 30)),
        ([2, -1, 3], (2, 20, 3)), (True, None), (False, (10, 20, 30))]])
def test_chunks_argument_as_zarr_python(chunks, want):
    want = want or guess_chunks(SHAPE, 4)
    zarr_pythons = zpy.normalize_chunks(chunks if not isinstance(chunks, list) else tuple(chunks), SHAPE, 4)
    if zarr_pythons is None:  # zarr-python 3.3 and later: lists shorter than the shape, None in them, True
        dropped = chunks is True or isinstance(chunks, list) and (len(chunks) < len(SHAPE) or None in chunks)
        assert zpy.ZARR_VERSION >= (3, 3) and dropped, \
            f"this zarr-python refuses chunks={chunks!r}"
    else:
        assert zarr_pythons == want, "zarr-python's reading"
    assert created_chunks({"shape": list(SHAPE), "dtype": "<f4", "chunks": chunks}) == want


@pytest.mark.parametrize("chunks", [0, [1, 2, 3, 4], "5", [1.5], -2])
def test_bad_chunks_are_refused(chunks):
    with pytest.raises(libzarr.LibzarrError, match="ZARR_ERR_INVALID_METADATA"):
        created_chunks({"shape": [10, 20, 30], "dtype": "<f4", "chunks": chunks})
