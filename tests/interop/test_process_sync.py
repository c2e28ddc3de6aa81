"""Process synchronisation shared with zarr-python 2: libzarr writers (store option
`process_synchronizer`) and zarr-python writers (`zarr.ProcessSynchronizer`) on the same lock
directory write their own columns of one shared chunk at once, each in its own process; no
writer's values may be lost. zarr-python 3 has no process synchronizer, so this runs under
zarr-python 2 only."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import zpy

pytestmark = pytest.mark.skipif(zpy.ZARR3, reason="zarr-python 3 has no ProcessSynchronizer")

WRITERS = 4  # even ones are libzarr, odd ones zarr-python
ROUNDS = 20
ROWS = 6


def write_column(role, location, locks, column):
    """One writer process: `ROUNDS` writes of its column, the round in the values."""
    if role == "libzarr":
        import libzarr
        store = libzarr.Store.open_options(location, "a", {"process_synchronizer": locks})
        array = store.open_array("")
        for round_ in range(ROUNDS):
            array.write(np.full((ROWS, 1), round_ * 100 + column, "<i4"), start=(0, column))
            # zarr-python polls for a taken lock (fasteners: every 10-100 ms) where libzarr waits in
            # the kernel, so libzarr writers in a tight loop would starve the Python ones.
            time.sleep(0.01)
    else:
        import zarr
        array = zarr.open_array(location, mode="r+", synchronizer=zarr.ProcessSynchronizer(locks))
        for round_ in range(ROUNDS):
            array[:, column] = round_ * 100 + column


@pytest.mark.parametrize("separator", [".", "/"])
def test_libzarr_and_zarr_python_writers_share_locks(tmp_path, separator):
    import zarr
    location, locks = str(tmp_path / "store"), str(tmp_path / "locks")
    zarr.open_array(location, mode="w", shape=(ROWS, WRITERS), chunks=(ROWS, WRITERS), dtype="<i4",
                    fill_value=-1, compressor=None, dimension_separator=separator)
    # This directory, and the binding's (conftest.py put it on PYTHONPATH).
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(__file__), os.environ["PYTHONPATH"]]))
    writers = [subprocess.Popen([sys.executable, __file__, "libzarr" if column % 2 == 0 else "python",
                                 location, locks, str(column)], env=env, stderr=subprocess.PIPE)
               for column in range(WRITERS)]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err.decode()
    got = zarr.open_array(location, mode="r")[:]
    expected = np.tile((ROUNDS - 1) * 100 + np.arange(WRITERS, dtype="<i4"), (ROWS, 1))
    lost = int((got != expected).sum())
    assert lost == 0, f"{lost} of the writers' last values were lost:\n{got}"
    chunk = "0.0" if separator == "." else "0/0"
    assert os.path.isfile(os.path.join(locks, chunk)), "the lock file is named by the chunk key"


if __name__ == "__main__":
    write_column(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
