"""Creation conveniences as zarr-python reads its `chunks` argument: chunks guessed when not given
(zarr-python's guess_chunks, for v2 and v3 arrays of several shapes and item sizes), one integer
for every dimension, -1 and None for a whole dimension, dimensions left out whole."""
import json

import numpy as np
import pytest

import libzarr
from zpy import ZARR3

if ZARR3:
    from zarr.core.chunk_grids import _guess_chunks as guess_chunks, normalize_chunks
else:
    from zarr.util import guess_chunks, normalize_chunks

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


@pytest.mark.parametrize("chunks", [5, [3], [-1, 4], [None, None], [2, -1, 3], True, False], ids=json.dumps)
def test_chunks_argument_as_zarr_python(chunks):
    shape = (10, 20, 30)
    want = normalize_chunks(chunks if not isinstance(chunks, list) else tuple(chunks), shape, 4)
    assert created_chunks({"shape": list(shape), "dtype": "<f4", "chunks": chunks}) == tuple(want)


@pytest.mark.parametrize("chunks", [0, [1, 2, 3, 4], "5", [1.5], -2])
def test_bad_chunks_are_refused(chunks):
    with pytest.raises(libzarr.LibzarrError, match="ZARR_ERR_INVALID_METADATA"):
        created_chunks({"shape": [10, 20, 30], "dtype": "<f4", "chunks": chunks})
