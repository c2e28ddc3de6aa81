"""What libzarr_mpi's collective writes store, read by zarr-python: mpi/test_mpi.c, run by CTest under mpiexec on
1, 2, 4 and 7 ranks, leaves build/cmake/mpi-N.zarr with v2, v3, sharded v3 and rectilinear arrays that many
ranks wrote in rows, columns, tiles, irregular boxes and partial writes over stored values, and beside each the
values it should hold (PATH.expected, int32 little-endian). zarr-python must read exactly those. Needs
LIBZARR_MPI_STORES (the directory holding mpi-*.zarr; scripts/test.sh sets it); skipped without it unless
LIBZARR_MPI_REQUIRED is set.
"""
import os
from pathlib import Path

import numpy as np
import pytest
import zarr

import zpy

STORES = os.environ.get("LIBZARR_MPI_STORES")
if STORES is None or not sorted(Path(STORES).glob("mpi-*.zarr")):
    if os.environ.get("LIBZARR_MPI_REQUIRED"):
        raise RuntimeError(f"no mpi-*.zarr under LIBZARR_MPI_STORES={STORES!r} (CTest's mpi_* tests write them)")
    pytest.skip("no stores written by the MPI tests (scripts/test.sh runs them)", allow_module_level=True)

RANKS = [1, 2, 4, 7]
ARRAYS = ["v2", "v3", "sharded", "rectilinear"]


def readable(path):
    """Whether this zarr-python reads the array: v3 needs zarr 3, rectilinear grids 3.2 and the config flag."""
    if path == "v2":
        return True
    if path == "rectilinear":
        return zpy.ZARR_VERSION >= (3, 2)
    return zpy.ZARR3


@pytest.mark.parametrize("path", ARRAYS)
@pytest.mark.parametrize("ranks", RANKS)
def test_zarr_python_reads_what_the_ranks_wrote(ranks, path):
    store = Path(STORES) / f"mpi-{ranks}.zarr"
    expected = np.fromfile(store / f"{path}.expected", dtype="<i4").reshape(37, 23)
    if not readable(path):
        pytest.skip(f"zarr {zarr.__version__} cannot read the {path} array")
    if path == "rectilinear":
        with zarr.config.set({"array.rectilinear_chunks": True}):
            got = np.asarray(zarr.open_array(str(store / path), mode="r")[...])
    elif zpy.ZARR3:
        got = np.asarray(zarr.open_array(str(store / path), mode="r")[...])
    else:
        got = np.asarray(zpy.open_array(store / path)[...])
    np.testing.assert_array_equal(got, expected)
