"""libzarr's C API from Python through ctypes, reading into and writing from NumPy arrays: what
a Python (or Julia, R) program that loads libzarr.so gets, buffers allocated by NumPy included.
peers.py's `libzarr-numpy` worker uses it; the library is target/release/libzarr.so, or
LIBZARR_PATH.
"""

import ctypes
import json
import os
from pathlib import Path

import numpy as np

import data

ROOT = Path(__file__).resolve().parent.parent
ZARR_MODE_READ, ZARR_MODE_WRITE = 0, 1
U64 = ctypes.POINTER(ctypes.c_uint64)


def load():
    """libzarr.so with the signatures of the functions used here."""
    lib = ctypes.CDLL(os.environ.get("LIBZARR_PATH", str(ROOT / "target" / "release" / "libzarr.so")))
    handle = ctypes.c_void_p
    signatures = {
        "zarr_version": ([], ctypes.c_char_p),
        "zarr_last_error": ([], ctypes.c_char_p),
        "zarr_store_open": ([ctypes.c_char_p, ctypes.c_int32, ctypes.POINTER(handle)], ctypes.c_int32),
        "zarr_store_close": ([handle], ctypes.c_int32),
        "zarr_array_open": ([handle, ctypes.c_char_p, ctypes.POINTER(handle)], ctypes.c_int32),
        "zarr_array_create": ([handle, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(handle)],
                              ctypes.c_int32),
        "zarr_array_close": ([handle], ctypes.c_int32),
        "zarr_array_grid_shape": ([handle, ctypes.c_size_t, U64], ctypes.c_int32),
        "zarr_array_block_box": ([handle, ctypes.c_size_t, U64, U64, U64, U64], ctypes.c_int32),
        "zarr_array_read": ([handle, ctypes.c_size_t, U64, U64, ctypes.c_void_p, ctypes.c_size_t],
                            ctypes.c_int32),
        "zarr_array_read_strided": ([handle, ctypes.c_size_t, U64, U64, U64, U64, ctypes.c_void_p,
                                     ctypes.c_size_t], ctypes.c_int32),
        "zarr_array_write": ([handle, ctypes.c_size_t, U64, U64, ctypes.c_void_p, ctypes.c_size_t],
                             ctypes.c_int32),
    }
    for name, (args, result) in signatures.items():
        function = getattr(lib, name)
        function.argtypes, function.restype = args, result
    return lib


def _u64s(values):
    return (ctypes.c_uint64 * len(values))(*values)


class Array:
    """An open store and array; `read` fills a new NumPy array (or `out`)."""

    def __init__(self, lib, path, metadata=None):
        self.lib, self.store, self.array = lib, ctypes.c_void_p(), ctypes.c_void_p()
        mode = ZARR_MODE_WRITE if metadata else ZARR_MODE_READ
        self.check(lib.zarr_store_open(path.encode(), mode, ctypes.byref(self.store)))
        if metadata:
            self.check(lib.zarr_array_create(self.store, b"", json.dumps(metadata).encode(),
                                             ctypes.byref(self.array)))
        else:
            self.check(lib.zarr_array_open(self.store, b"", ctypes.byref(self.array)))

    def check(self, status):
        if status != 0:
            raise RuntimeError(f"libzarr status {status}: {self.lib.zarr_last_error().decode()}")

    def close(self):
        self.lib.zarr_array_close(self.array)
        self.lib.zarr_store_close(self.store)

    def chunk_boxes(self):
        """Every chunk of the grid (every shard when sharded) as (starts, counts), in C order of
        the grid, edge chunks clipped: from zarr_array_grid_shape and zarr_array_block_box, so
        the unequal chunks of a rectilinear grid too (zarr_array_chunks has no one shape for
        them)."""
        ndim = len(data.SHAPE)
        grid = (ctypes.c_uint64 * ndim)()
        self.check(self.lib.zarr_array_grid_shape(self.array, ndim, grid))
        starts, counts = [], []
        for index in np.ndindex(*grid):
            start, count = (ctypes.c_uint64 * ndim)(), (ctypes.c_uint64 * ndim)()
            self.check(self.lib.zarr_array_block_box(self.array, ndim, _u64s(index), _u64s([1] * ndim),
                                                     start, count))
            starts.append(list(start))
            counts.append(list(count))
        return starts, counts

    def read(self, start, count, out=None):
        out = np.empty(count, dtype=data.DTYPE) if out is None else out
        self.check(self.lib.zarr_array_read(self.array, len(start), _u64s(start), _u64s(count),
                                            out.ctypes.data, out.nbytes))
        return out

    def read_strided(self, start, count, step):
        out = np.empty(count, dtype=data.DTYPE)
        self.check(self.lib.zarr_array_read_strided(
            self.array, len(start), _u64s(start), _u64s(count), _u64s(step), None,
            out.ctypes.data, out.nbytes))
        return out

    def write(self, values):
        start, count = [0] * values.ndim, list(values.shape)
        self.check(self.lib.zarr_array_write(self.array, values.ndim, _u64s(start), _u64s(count),
                                             values.ctypes.data, values.nbytes))

