"""The per-handle chunk cache against zarr-python: with the cache on, libzarr reads (boxes, orthogonal
selections, points, repeated so that the second pass is served from memory) what zarr-python reads, and after
each write through the caching handle (whole chunks, partial boxes, points, fill-only chunks that get erased)
reads what zarr-python reads from the store."""
import itertools

import numpy as np
import pytest

import libzarr
import zpy
from cases import Case, assert_same, fill_for, fill_scalar, native, random_data, windows, zarr_python_writes

CACHE_CASES = [Case(dt, comp, order, ".", (23, 17), (5, 4), fill_for(dt, i), seed=3000 + i)
               for i, (dt, comp, order) in enumerate(itertools.product([">i2", "<f8", "|b1"], ["raw", "zstd3",
                                                                                              "blosc-lz4-shuf"], "CF"))]


@pytest.mark.parametrize("case", CACHE_CASES, ids=str)
def test_cached_reads_match_zarr_python(case, tmp_path):
    expected = zarr_python_writes(case, tmp_path)
    rng = np.random.default_rng(case.seed)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        arr.set_chunk_cache(1 << 20)
        for _ in range(2):
            for start, count in windows(case.shape):
                assert_same(arr.read(start, count), expected[tuple(slice(o, o + c) for o, c in zip(start, count))])
            sel = [rng.integers(0, s, 6) for s in case.shape]
            assert_same(arr.read_orthogonal(sel), expected[np.ix_(*sel)])
            coords = np.stack([rng.integers(0, s, 20) for s in case.shape], axis=1)
            assert_same(arr.read_points(coords), expected[tuple(coords.T)])
        hits, misses, held = arr.chunk_cache_stats()
        assert misses == len(case.grid())  # every chunk (written or not) went to the store once
        assert hits > misses and 0 < held <= 1 << 20


@pytest.mark.parametrize("case", CACHE_CASES[::3], ids=str)
def test_writes_through_the_caching_handle_are_read_back(case, tmp_path):
    expected = zarr_python_writes(case, tmp_path)
    assert (tmp_path / "2.1").exists()
    fill = fill_scalar(case.fill, case.dtype)
    data = random_data(case.dtype, case.shape, case.seed + 1)
    writes = [
        ((5, 4), data[5:10, 4:8]),  # one whole chunk
        ((3, 2), data[3:9, 2:11]),  # parts of several chunks
        ((20, 16), data[20:23, 16:17]),  # an edge chunk
        ((10, 4), np.full((5, 4), fill, native(case.dtype))),  # a chunk of fill values: erased
    ]
    with libzarr.open_store(tmp_path, "a") as store, store.open_array("") as arr:
        arr.set_chunk_cache(1 << 20)
        for start, block in writes:
            arr.read()  # every chunk cached before the write
            arr.write(block, start)
            expected[tuple(slice(o, o + n) for o, n in zip(start, block.shape))] = block
            assert_same(arr.read(), expected)
            assert_same(zpy.read(zpy.open_array(tmp_path)), expected)
        coords = np.array([[0, 0], [22, 16], [7, 5]])
        arr.read()
        arr.write_points(coords, data[tuple(coords.T)])
        expected[tuple(coords.T)] = data[tuple(coords.T)]
        assert_same(arr.read(), expected)
        assert_same(zpy.read(zpy.open_array(tmp_path)), expected)
    assert not (tmp_path / "2.1").exists()
