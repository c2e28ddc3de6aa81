"""dbm:// and redis:// stores against zarr-python 2's DBMStore (dbm.dumb and dbm.gnu databases) and RedisStore,
in both directions: what zarr-python writes libzarr reads, and the reverse, plus updates of the other side's
database. zarr-python 3 has neither class: skipped there. The Redis server is the one scripts/servers.sh starts
(LIBZARR_TEST_REDIS_URL); without it the Redis tests skip, unless LIBZARR_REMOTE_TESTS=required. A GDBM database
needs a Python with _gdbm: kv_stores.py runs zarr-python's side in Debian's Python (python3-gdbm) when this one
lacks it."""
import dbm
import os
import socket
import urllib.parse
import uuid

import numpy as np
import pytest

from zpy import ZARR3

if ZARR3:
    pytest.skip("zarr-python 3 has no DBMStore or RedisStore", allow_module_level=True)

import libzarr  # noqa: E402
import kv_stores  # noqa: E402
from kv_stores import DATA, FLOATS  # noqa: E402

# DBMStore and RedisStore warn that zarr-python 3 has neither.
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")
REQUIRED = os.environ.get("LIBZARR_REMOTE_TESTS") == "required"
A_META = {"zarr_format": 2, "shape": [7, 5], "chunks": [3, 2], "dtype": "<i4", "order": "C", "fill_value": -1,
          "compressor": {"id": "zlib", "level": 1}, "filters": None}
B_META = {"zarr_format": 2, "shape": [9], "chunks": [4], "dtype": "<f8", "order": "C", "fill_value": 0,
          "compressor": None, "filters": None}
EXPECTED = {"attrs": {"title": "kv"}, "groups": ["g"], "arrays": ["b"],
            "values": {"g/a": DATA.tolist(), "b": FLOATS.tolist()}}


def libzarr_writes(store):
    """The hierarchy kv_stores.write_hierarchy makes, through libzarr."""
    with store.create_group("") as root:
        root.set_attrs({"title": "kv"})
    with store.create_group("g"), store.create_array("g/a", A_META) as a:
        a.write(DATA)
    with store.create_array("b", B_META) as b:
        b.write(FLOATS)


def libzarr_reads(store):
    with store.open_group("") as root:
        listing = root.list()
        seen = {"attrs": root.attrs(), "groups": sorted(listing["groups"]), "arrays": sorted(listing["arrays"])}
    values = {}
    for path in ["g/a", "b"]:
        with store.open_array(path) as a:
            values[path] = a.read().tolist()
    return dict(seen, values=values)


def without_keys(seen):
    return {k: v for k, v in seen.items() if k != "keys"}


def gdbm_python():
    python = kv_stores.python_for("gnu")
    if python is False:
        if REQUIRED:
            pytest.fail("no Python with _gdbm here (scripts/test.sh installs Debian's python3-gdbm)")
        pytest.skip("no Python with _gdbm (Debian: python3-gdbm)")


FORMATS = ["dumb", "gnu"]


def db_path(tmp_path, fmt):
    if fmt == "gnu":
        gdbm_python()
    return tmp_path / f"{fmt}.db"


@pytest.mark.parametrize("fmt", FORMATS)
def test_libzarr_reads_what_zarr_python_wrote(tmp_path, fmt):
    path = db_path(tmp_path, fmt)
    kv_stores.run_dbm("write", fmt, path)
    assert dbm.whichdb(str(path)) == f"dbm.{fmt}"
    with libzarr.Store.open(f"dbm://{path}") as store:
        assert libzarr_reads(store) == EXPECTED
        python_keys = kv_stores.run_dbm("read", fmt, path)["keys"]
        assert store.list_keys("") == python_keys
        assert store.list_dir("g/") == [".zgroup", "a"]
        with store.open_array("b") as b, pytest.raises(libzarr.LibzarrError) as err:
            b.write(np.zeros(2), (0,))
        assert err.value.name == "ZARR_ERR_READ_ONLY"


@pytest.mark.parametrize("fmt", FORMATS)
def test_zarr_python_reads_what_libzarr_wrote(tmp_path, fmt):
    path = db_path(tmp_path, fmt)
    with libzarr.Store.open_options(f"dbm://{path}", "a", {"dbm_format": fmt}) as store:
        libzarr_writes(store)
        keys = store.list_keys("")
    assert dbm.whichdb(str(path)) == f"dbm.{fmt}"
    seen = kv_stores.run_dbm("read", fmt, path)
    assert without_keys(seen) == EXPECTED
    assert seen["keys"] == keys


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_side_updates_the_others_database(tmp_path, fmt):
    """zarr-python's database updated by libzarr (a chunk rewritten, one erased, a key added) reads right in
    zarr-python, and zarr-python's update of libzarr's again in libzarr."""
    path = db_path(tmp_path, fmt)
    kv_stores.run_dbm("write", fmt, path)
    with libzarr.Store.open(f"dbm://{path}", "a") as store:
        with store.open_array("g/a") as a:
            a.write(np.full((2, 2), 99, dtype="<i4"), (0, 0))
        store.erase("g/a/2.2")
        with store.open_group("") as root:
            root.set_attrs({"title": "kv", "by": "libzarr"})
    seen = kv_stores.run_dbm("read", fmt, path)
    expected = DATA.copy()
    expected[:2, :2] = 99
    expected[6:, 4:] = -1
    assert seen["values"]["g/a"] == expected.tolist()
    assert seen["attrs"] == {"title": "kv", "by": "libzarr"}
    assert "g/a/2.2" not in seen["keys"]
    kv_stores.run_dbm("write", fmt, path)
    with libzarr.Store.open(f"dbm://{path}") as store:
        assert libzarr_reads(store) == EXPECTED


def test_a_new_database_is_gdbm_and_a_relative_path_follows_the_slashes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with libzarr.Store.open("dbm://made.db", "a") as store:
        libzarr_writes(store)
    assert dbm.whichdb(str(tmp_path / "made.db")) == "dbm.gnu"
    with libzarr.Store.open_options("dbm://rel.db", "a", {"dbm_format": "dumb"}) as store:
        libzarr_writes(store)
    assert sorted(p.name for p in tmp_path.glob("rel.db*")) == ["rel.db.dat", "rel.db.dir"]
    assert without_keys(kv_stores.run_dbm("read", "dumb", tmp_path / "rel.db")) == EXPECTED


def test_python_reads_the_index_a_dumb_writer_leaves_before_closing(tmp_path):
    """Until closed, libzarr's dbm.dumb index has a line per write, a later one for a key replacing the earlier
    (what a killed writer leaves): Python's dbm.dumb reads the newest values; closing writes one line per key."""
    import dbm.dumb
    path = tmp_path / "open.db"
    store = libzarr.Store.open_options(f"dbm://{path}", "a", {"dbm_format": "dumb"})
    store.set("k", b"old")
    store.set("k", b"a longer new value" * 40)
    store.set("j", b"x")
    assert len((tmp_path / "open.db.dir").read_bytes().splitlines()) == 3
    with dbm.dumb.open(str(path), "r") as d:
        assert d[b"k"] == b"a longer new value" * 40 and d[b"j"] == b"x" and len(d) == 2
    store.flush()  # as close, but the store stays open
    assert (tmp_path / "open.db.dir").read_bytes().splitlines() == [b"'j', (1536, 1)", b"'k', (512, 720)"]
    store.set("k", b"newest")
    with dbm.dumb.open(str(path), "r") as d:
        assert d[b"k"] == b"newest" and len(d) == 2
    store.close()
    assert len((tmp_path / "open.db.dir").read_bytes().splitlines()) == 2


def test_flush_syncs_a_gdbm_database(tmp_path):
    """zarr_store_flush syncs a dbm.gnu database: while the store stays open (holding GDBM's writer lock, so
    no other process may open it), the file holds every write: a copy of it is read whole by zarr-python."""
    import shutil
    path = db_path(tmp_path, "gnu")
    store = libzarr.Store.open_options(f"dbm://{path}", "a", {"dbm_format": "gnu"})
    libzarr_writes(store)
    store.flush()
    shutil.copyfile(path, tmp_path / "copy.db")
    assert without_keys(kv_stores.run_dbm("read", "gnu", tmp_path / "copy.db")) == EXPECTED
    store.close()


def test_dbm_errors_name_the_location(tmp_path):
    missing = tmp_path / "none.db"
    with pytest.raises(libzarr.LibzarrError) as err:
        libzarr.Store.open(f"dbm://{missing}")
    assert err.value.name == "ZARR_ERR_NOT_FOUND" and str(missing) in str(err.value)
    other = tmp_path / "text.db"
    other.write_text("not a database")
    with pytest.raises(libzarr.LibzarrError) as err:
        libzarr.Store.open(f"dbm://{other}", "a")
    assert str(other) in str(err.value)
    with pytest.raises(libzarr.LibzarrError) as err:
        libzarr.Store.open_options(f"dbm://{missing}", "a", {"dbm_format": "ndbm"})
    assert err.value.name == "ZARR_ERR_INVALID_ARGUMENT" and "dbm_format" in str(err.value)
    kv_stores.run_dbm("write", "dumb", tmp_path / "d.db")
    with open(tmp_path / "d.db.dir", "a", encoding="latin-1") as f:
        f.write("'g/a/0.0', (0, 999999)\n")
    with libzarr.Store.open(f"dbm://{tmp_path / 'd.db'}") as store, store.open_array("g/a") as a:
        with pytest.raises(libzarr.LibzarrError) as err:
            a.read()
    assert err.value.name == "ZARR_ERR_CORRUPT_CHUNK" and "g/a/0.0" in str(err.value), str(err.value)


# Redis


def redis_url():
    url = os.environ.get("LIBZARR_TEST_REDIS_URL")
    if url is None:
        if REQUIRED:
            pytest.fail("LIBZARR_TEST_REDIS_URL is not set: start the servers (scripts/servers.sh)")
        pytest.skip("no Redis server (scripts/test.sh starts one)")
    return url


def python_redis(prefix, db=None):
    import zarr
    parts = urllib.parse.urlsplit(redis_url())
    db = int(parts.path.strip("/") or 0) if db is None else db
    return zarr.RedisStore(prefix=prefix, host=parts.hostname, port=parts.port, db=db)


def test_libzarr_reads_what_zarr_python_wrote_in_redis():
    prefix = f"zpy-{uuid.uuid4().hex}"
    store = python_redis(prefix)
    kv_stores.write_hierarchy(store)
    with libzarr.Store.open_options(redis_url(), "r", {"prefix": prefix}) as lz:
        assert libzarr_reads(lz) == EXPECTED
        assert lz.list_keys("") == sorted(store.keys())
        lz_keys = lz.list_keys("")
    assert all(k.decode().startswith(f"{prefix}:") for k in store.client.keys(f"{prefix}:*"))
    assert len(lz_keys) == len(store.client.keys(f"{prefix}:*"))
    store.clear()


def test_zarr_python_reads_what_libzarr_wrote_in_redis():
    prefix = f"lz-{uuid.uuid4().hex}"
    with libzarr.Store.open_options(redis_url(), "a", {"prefix": prefix}) as lz:
        libzarr_writes(lz)
        lz.erase("b/0")
        with lz.open_array("b") as b:
            b.write(FLOATS[:4], (0,))
    store = python_redis(prefix)
    assert without_keys(kv_stores.read_hierarchy(store)) == EXPECTED
    with libzarr.Store.open_options(redis_url(), "a", {"prefix": prefix}) as lz:
        lz.rmdir("")
        assert lz.list_keys("") == []
    assert list(store.keys()) == []


def test_the_default_prefix_is_zarr_pythons():
    """Database 7 of the server holds nothing else: zarr-python's default prefix `zarr` there."""
    url = urllib.parse.urlsplit(redis_url())._replace(path="/7").geturl()
    store = python_redis("zarr", db=7)
    store.clear()
    kv_stores.write_hierarchy(store)
    with libzarr.Store.open(url) as lz:
        assert libzarr_reads(lz) == EXPECTED
    store.clear()


def test_an_unreachable_redis_server_is_an_error_naming_the_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"redis://127.0.0.1:{port}/0"
    with pytest.raises(libzarr.LibzarrError) as err:
        libzarr.Store.open(url)
    assert err.value.name == "ZARR_ERR_UNREACHABLE" and url in str(err.value), str(err.value)
    with pytest.raises(libzarr.LibzarrError) as err:
        libzarr.Store.open_options(redis_url(), "r", {"dbm_format": "gnu"})
    assert err.value.name == "ZARR_ERR_INVALID_ARGUMENT" and "dbm_format" in str(err.value)
