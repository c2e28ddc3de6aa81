"""zarr-python 2's side of test_dbm_redis.py: a small hierarchy written into and read from its DBMStore and
RedisStore. A GDBM database needs Python's _gdbm, which a Python built without it (pyenv's) lacks: then this
file runs as `python kv_stores.py write|read gnu PATH` in a Python that has it (Debian's, with python3-gdbm),
with this interpreter's site-packages (zarr-python 2, numpy) on its path; `read` prints the hierarchy as JSON."""
import json
import os
import subprocess
import sys
import warnings

import numcodecs
import numpy as np
import zarr

DATA = np.arange(35, dtype="<i4").reshape(7, 5)
FLOATS = np.linspace(0, 1, 9)
# DBMStore and RedisStore warn that zarr-python 3 has neither.
warnings.filterwarnings("ignore", category=FutureWarning)


def has_gdbm():
    try:
        import dbm.gnu  # noqa: F401
        return True
    except ImportError:
        return False


def dbm_store(fmt, path, flag="c"):
    """zarr-python 2's DBMStore on the dbm.dumb or dbm.gnu database at `path`."""
    if fmt == "dumb":
        import dbm.dumb as module
    else:
        import dbm.gnu as module
    return zarr.DBMStore(str(path), flag=flag, open=module.open)


def write_hierarchy(store):
    """A group with attributes, a subgroup with a zlib int32 array with edge chunks and a fill value, and an
    uncompressed float64 array at the root."""
    root = zarr.group(store=store, overwrite=True)
    root.attrs["title"] = "kv"
    a = root.create_group("g").create_dataset("a", shape=DATA.shape, chunks=(3, 2), dtype="<i4", fill_value=-1,
                                              compressor=numcodecs.Zlib(level=1))
    a[...] = DATA
    root.create_dataset("b", shape=FLOATS.shape, chunks=(4,), dtype="<f8", fill_value=0, compressor=None)[...] = FLOATS


def read_hierarchy(store):
    """What zarr-python reads of a hierarchy, as JSON-ready values: attributes, members, every array's values
    and the store's keys."""
    root = zarr.open_group(store=store, mode="r")
    return {
        "attrs": dict(root.attrs),
        "groups": sorted(root.group_keys()),
        "arrays": sorted(root.array_keys()),
        "values": {path: np.asarray(root[path][...]).tolist() for path in ["g/a", "b"] if path in root},
        "keys": sorted(store.keys()),
    }


def python_for(fmt):
    """The interpreter that runs the zarr-python side of format `fmt` (None: this one)."""
    if fmt != "gnu" or has_gdbm():
        return None
    other = os.environ.get("LIBZARR_GDBM_PYTHON", "/usr/bin/python3")
    probe = subprocess.run([other, "-c", "import dbm.gnu"], capture_output=True)
    return other if probe.returncode == 0 else False


def run_dbm(action, fmt, path):
    """`write` or `read` the hierarchy with zarr-python's DBMStore, here or in the Python that has _gdbm."""
    python = python_for(fmt)
    if python is None:
        store = dbm_store(fmt, path, "c" if action == "write" else "r")
        try:
            return write_hierarchy(store) if action == "write" else read_hierarchy(store)
        finally:
            store.close()
    import site
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.abspath(__file__))] + site.getsitepackages()))
    done = subprocess.run([python, os.path.abspath(__file__), action, fmt, str(path)], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if action == "read" else None


if __name__ == "__main__":
    action, fmt, path = sys.argv[1:4]
    store = dbm_store(fmt, path, "c" if action == "write" else "r")
    if action == "write":
        write_hierarchy(store)
    else:
        print(json.dumps(read_hierarchy(store)))
    store.close()
