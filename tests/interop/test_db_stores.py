"""Database stores: the SQLite files and LMDB environments zarr-python 2's SQLiteStore and LMDBStore
write, libzarr reads and writes (sqlite://PATH, lmdb://PATH), and zarr-python reads what libzarr
writes. zarr-python 3 has neither class: the module is skipped there.

LMDB forbids one process to have an environment open twice, so each side closes its store before
the other opens it."""
import os
import sqlite3
import warnings

import numcodecs
import numpy as np
import pytest
import zarr

import libzarr
from zpy import ZARR3

pytestmark = [
    pytest.mark.skipif(ZARR3, reason="zarr-python 3 has no SQLiteStore or LMDBStore"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),  # both classes are deprecated in 2.18
]

KINDS = ["sqlite", "lmdb"]
DATA = np.arange(7 * 9 * 4, dtype="<f8").reshape(7, 9, 4) / 3
INTS = np.arange(1000, dtype="<i4") * -7


def db_path(tmp_path, kind, name="store"):
    return tmp_path / f"{name}.{'db' if kind == 'sqlite' else 'mdb'}"


def location(kind, path):
    """sqlite://PATH or lmdb://PATH: an absolute PATH gives three slashes."""
    return f"{kind}://{path}"


def python_store(kind, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return zarr.SQLiteStore(str(path)) if kind == "sqlite" else zarr.LMDBStore(str(path))


def python_writes(kind, path):
    store = python_store(kind, path)
    root = zarr.group(store=store)
    root.attrs.update({"title": "written by zarr-python", "n": 3})
    nested = root.create_group("g").create_group("h")
    a = nested.create_dataset("a", shape=DATA.shape, chunks=(3, 4, 4), dtype="<f8", fill_value=-1,
                              compressor=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.SHUFFLE),
                              dimension_separator="/")
    a[...] = DATA
    a.attrs["units"] = "m"
    b = root.create_dataset("b", shape=INTS.shape, chunks=(128,), dtype="<i4", fill_value=0,
                            compressor=numcodecs.Zlib(level=1))
    b[:900] = INTS[:900]  # the last chunk stays missing: read as the fill value
    consolidate(store)
    size_of_b = sum(len(store[k]) for k in list(store.keys()) if k.startswith("b/"))
    store.close()
    return size_of_b


def consolidate(store):
    """What zarr.consolidate_metadata writes. It cannot be called on an SQLiteStore: it reads each
    key while iterating over the keys, and SQLiteStore runs both on one cursor, so the iteration
    stops after the first key and .zmetadata misses the rest (zarr-python 2.18.7)."""
    keys = [k for k in store.keys() if k.endswith((".zarray", ".zgroup", ".zattrs"))]
    metadata = {k: zarr.util.json_loads(store[k]) for k in keys}
    store[".zmetadata"] = zarr.util.json_dumps({"metadata": metadata, "zarr_consolidated_format": 1})


def check_python_tree(root):
    assert root.attrs.asdict() == {"title": "written by zarr-python", "n": 3}
    np.testing.assert_array_equal(root["g/h/a"][...], DATA)
    assert root["g/h/a"].attrs["units"] == "m"
    expected = INTS.copy()
    expected[900:] = 0
    np.testing.assert_array_equal(root["b"][...], expected)


def groups_and_arrays(group):
    listing = group.list()
    return sorted(listing["groups"]), sorted(listing["arrays"])


@pytest.mark.parametrize("kind", KINDS)
def test_libzarr_reads_what_zarr_python_writes(tmp_path, kind):
    path = db_path(tmp_path, kind)
    size_of_b = python_writes(kind, path)
    with libzarr.open_store(location(kind, path)) as store:
        assert store.uses_consolidated
        with store.open_group("") as root:
            assert root.attrs() == {"title": "written by zarr-python", "n": 3}
            assert groups_and_arrays(root) == (["g"], ["b"])
            assert root.info()["store_type"] == kind
        with store.open_array("g/h/a") as a:
            assert a.attrs() == {"units": "m"}
            np.testing.assert_array_equal(a.read(), DATA)
            np.testing.assert_array_equal(a.read((2, 3, 1), (4, 5, 2)), DATA[2:6, 3:8, 1:3])
        with store.open_array("b") as b:
            expected = INTS.copy()
            expected[900:] = 0
            np.testing.assert_array_equal(b.read(), expected)
            with pytest.raises(libzarr.LibzarrError) as err:
                b.write(np.zeros(3), (0,))
            assert err.value.name == "ZARR_ERR_READ_ONLY"
        assert store.list_dir("") == [".zattrs", ".zgroup", ".zmetadata", "b", "g"]
        assert store.list_dir("g/h/a/") == [".zarray", ".zattrs", "0", "1", "2"]
        assert store.list_keys("g/h/a/0/") == [f"g/h/a/0/{j}/0" for j in range(3)]
        assert store.getsize("b") == size_of_b
    with libzarr.open_store(location(kind, path), "a") as store, store.open_array("g/h/a") as a:
        a.write(np.full((2, 2, 2), 42.0), (5, 7, 2))  # partial chunks: read, patch, write back
    store = python_store(kind, path)
    root = zarr.open_group(store=store, mode="r")
    expected = DATA.copy()
    expected[5:7, 7:9, 2:4] = 42.0
    np.testing.assert_array_equal(root["g/h/a"][...], expected)
    store.close()


def libzarr_writes(kind, path):
    with libzarr.open_store(location(kind, path), "a") as store:
        with store.create_group("") as root:
            root.set_attrs({"made": "libzarr", "pi": 3.25})
        meta = {"zarr_format": 2, "shape": list(DATA.shape), "chunks": [4, 4, 3], "dtype": "<f8", "order": "C",
                "fill_value": "NaN", "compressor": {"id": "zstd", "level": 3}, "filters": None,
                "dimension_separator": "/"}
        with store.create_group("x/y"), store.create_array("x/y/a", meta) as a:
            a.write(DATA)
            a.set_attrs({"long_name": "ü data"})
        meta = {"zarr_format": 2, "shape": [1000], "chunks": [300], "dtype": "<i4", "order": "F",
                "fill_value": 5, "compressor": {"id": "lz4", "acceleration": 1}, "filters": None}
        with store.create_array("ints", meta) as b:
            b.write(INTS[:600])
        store.consolidate()


@pytest.mark.parametrize("kind", KINDS)
def test_zarr_python_reads_what_libzarr_writes(tmp_path, kind):
    path = db_path(tmp_path, kind)
    libzarr_writes(kind, path)
    store = python_store(kind, path)
    for root in (zarr.open_consolidated(store, mode="r"), zarr.open_group(store=store, mode="r")):
        assert root.attrs.asdict() == {"made": "libzarr", "pi": 3.25}
        assert sorted(root.group_keys()) == ["x"] and sorted(root.array_keys()) == ["ints"]
        np.testing.assert_array_equal(root["x/y/a"][...], DATA)
        assert root["x/y/a"].attrs["long_name"] == "ü data"
        expected = np.full(1000, 5, dtype="<i4")
        expected[:600] = INTS[:600]
        np.testing.assert_array_equal(root["ints"][...], expected)
    assert "ints/3" not in store and "ints/1" in store  # only the chunks written
    keys = sorted(store.keys())
    root = zarr.open_group(store=store, mode="r+")
    root["ints"][900:] = 1  # zarr-python writes into libzarr's file
    store.close()
    with libzarr.open_store(location(kind, path)) as lib:
        assert lib.list_keys("") == sorted(keys + ["ints/3"])
        with lib.open_array("ints") as b:
            assert b.read((895,), (10,)).tolist() == [5] * 5 + [1] * 5
    if kind == "sqlite":
        check_sqlite_layout(path)
    else:
        check_lmdb_layout(path)


def check_sqlite_layout(path):
    """The schema zarr-python creates, text keys and blob values."""
    db = sqlite3.connect(path)
    (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'zarr'").fetchone()
    assert sql == "CREATE TABLE zarr(k TEXT PRIMARY KEY, v BLOB)"
    assert set(db.execute("SELECT typeof(k), typeof(v) FROM zarr")) == {("text", "blob")}
    (zgroup,) = db.execute("SELECT v FROM zarr WHERE k = '.zgroup'").fetchone()
    assert zgroup == b'{\n    "zarr_format": 2\n}'
    db.close()


def check_lmdb_layout(path):
    """A directory environment; keys the UTF-8 bytes of zarr's keys, values raw."""
    import lmdb

    assert sorted(os.listdir(path)) == ["data.mdb", "lock.mdb"]
    env = lmdb.open(str(path), readonly=True, lock=False)
    with env.begin() as txn:
        assert txn.get(b".zgroup") == b'{\n    "zarr_format": 2\n}'
        assert b"x/y/a/.zarray" in [k for k, _ in txn.cursor()]
    env.close()


@pytest.mark.parametrize("kind", KINDS)
def test_relative_paths_follow_the_two_slashes(tmp_path, kind, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = "rel.db" if kind == "sqlite" else "rel.mdb"
    with libzarr.open_store(f"{kind}://{name}", "a") as store:
        store.set(".zgroup", b'{"zarr_format": 2}')
    assert (tmp_path / name).exists()
    store = python_store(kind, tmp_path / name)
    assert store[".zgroup"] == b'{"zarr_format": 2}'
    store.close()


@pytest.mark.parametrize("kind", KINDS)
def test_missing_and_damaged_databases_are_errors_naming_them(tmp_path, kind):
    missing = db_path(tmp_path, kind, "missing")
    with pytest.raises(libzarr.LibzarrError) as err:
        libzarr.open_store(location(kind, missing))
    assert err.value.name == "ZARR_ERR_NOT_FOUND" and str(missing) in err.value.message
    damaged = db_path(tmp_path, kind, "damaged")
    garbage = bytes(range(256)) * 64
    if kind == "sqlite":
        damaged.write_bytes(garbage)
    else:
        damaged.mkdir()
        (damaged / "data.mdb").write_bytes(garbage)
    for mode in ("r", "w"):
        with pytest.raises(libzarr.LibzarrError) as err:
            libzarr.open_store(location(kind, damaged), mode)
        assert err.value.name == "ZARR_ERR_CORRUPT_CHUNK", err.value
        assert str(damaged) in err.value.message
    if kind == "sqlite":
        assert damaged.read_bytes() == garbage  # never written over


def test_a_truncated_sqlite_file_is_an_error_not_missing_values(tmp_path):
    path = db_path(tmp_path, "sqlite")
    python_writes("sqlite", path)
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(libzarr.LibzarrError) as err:
        with libzarr.open_store(location("sqlite", path)) as store, store.open_array("g/h/a") as a:
            a.read()
    assert err.value.name in ("ZARR_ERR_CORRUPT_CHUNK", "ZARR_ERR_IO"), err.value
    assert str(path) in err.value.message


@pytest.mark.parametrize("kind", KINDS)
def test_store_options_fsync_and_refusals(tmp_path, kind):
    path = db_path(tmp_path, kind)
    with libzarr.Store.open_options(location(kind, path), "a", {"fsync": True}) as store:
        store.set("k", b"v")
    with pytest.raises(libzarr.LibzarrError) as err:
        libzarr.Store.open_options(location(kind, path), "r", {"endpoint": "http://127.0.0.1:1"})
    assert err.value.name == "ZARR_ERR_INVALID_ARGUMENT" and "endpoint" in err.value.message


WRITER = """
import sys, warnings
warnings.simplefilter("ignore")
import zarr
kind, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = zarr.SQLiteStore(path) if kind == "sqlite" else zarr.LMDBStore(path)
print("ready", flush=True)
sys.stdin.readline()
for i in range(count):
    store[f"py/{i}"] = bytes([i % 251]) * (1000 + i)
store.close()
"""


def test_another_process_writes_the_same_sqlite_file_at_once(tmp_path):
    """zarr-python in another process and libzarr write the same SQLite file at the same time (SQLite's
    file locks, libzarr waiting for them): every value of both is there afterwards, whole."""
    import subprocess
    import sys

    kind = "sqlite"
    path = db_path(tmp_path, kind)
    count = 300
    with libzarr.open_store(location(kind, path), "a") as store:
        store.set(".zgroup", b'{"zarr_format": 2}')
        child = subprocess.Popen([sys.executable, "-c", WRITER, kind, str(path), str(count)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline() == "ready\n"
        child.stdin.write("go\n")
        child.stdin.flush()
        for i in range(count):
            store.set(f"lib/{i}", bytes([i % 13]) * (2000 + i))
        assert child.wait(timeout=120) == 0
        for i in range(count):
            assert store.get(f"py/{i}") == bytes([i % 251]) * (1000 + i)
    store = python_store(kind, path)
    for i in range(count):
        assert store[f"lib/{i}"] == bytes([i % 13]) * (2000 + i)
    assert len(list(store.keys())) == 2 * count + 1
    store.close()


HOLDER = """
import sys
import lmdb
try:
    env = lmdb.open(sys.argv[1])
except lmdb.VersionMismatchError:
    print("version mismatch", flush=True)
    sys.exit(0)
with env.begin() as txn:
    print("open", txn.get(b".zgroup") is not None, flush=True)
sys.stdin.readline()
env.close()
"""


def test_lmdb_environments_are_not_shared_with_py_lmdb_at_once(tmp_path):
    """libzarr's LMDB (mdb.master) and py-lmdb's (0.9) read and write the same data file but use lock
    files of different formats: while a process has the environment open with one, the other's open
    fails, saying so, and nothing is damaged; once it is closed there the other opens it. (py-lmdb runs
    in another process: one process must never have an environment open twice.)"""
    import subprocess
    import sys

    path = db_path(tmp_path, "lmdb")
    libzarr_writes("lmdb", path)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "open True\n"
    with pytest.raises(libzarr.LibzarrError) as err:
        libzarr.open_store(location("lmdb", path))
    assert err.value.name == "ZARR_ERR_UNSUPPORTED", err.value
    assert str(path) in err.value.message and "lock file" in err.value.message
    holder.communicate("close\n", timeout=60)
    with libzarr.open_store(location("lmdb", path), "a") as store:
        other = subprocess.run([sys.executable, "-c", HOLDER, str(path)], capture_output=True, text=True,
                               timeout=60)
        assert other.stdout == "version mismatch\n", other.stderr
        store.set("later", b"1")
    store = python_store("lmdb", path)
    assert store["later"] == b"1"
    np.testing.assert_array_equal(zarr.open_consolidated(store, mode="r")["x/y/a"][...], DATA)
    store.close()
