"""Copies with zarr-python 2's options: the same source copied by zarr-python's copy_store, copy and
copy_all and by libzarr's zarr_store_copy_options and zarr_node_copy with the same options gives the
same destination (byte for byte for copy_store; the same nodes, metadata, attributes and values for node
copies), the same (n_copied, n_skipped, n_bytes_copied) and the same log lines. Sources are written by
zarr-python and by libzarr. zarr-python 3 has none of these functions: skipped there."""
import json
import re

import numcodecs
import numpy as np
import pytest

import libzarr
from test_copy import files
from zpy import ZARR3

pytestmark = pytest.mark.skipif(ZARR3, reason="copy_store, copy and copy_all are zarr-python 2's")

if not ZARR3:
    import zarr

RNG = np.random.default_rng(11)
A = RNG.integers(-1000, 1000, (13, 7), dtype="<i4")
B = RNG.standard_normal((20,)).astype("<f8")
TOP = np.arange(10, dtype="|u1")
TEXT = np.array(["", "a", "bé", "ccc", "dddd"], dtype=object)


def python_writes(root, separator="."):
    """Groups "", g, g/sub (attributes), arrays g/a, g/sub/b (partly written), g/text (vlen-utf8), top."""
    group = zarr.open_group(zarr.DirectoryStore(str(root)), mode="w")
    group.attrs["title"] = "source"
    g = group.create_group("g")
    g.attrs.update({"level": 1})
    g.create_group("sub").attrs["level"] = 2
    a = g.create_dataset("a", shape=A.shape, chunks=(5, 3), dtype=A.dtype, compressor=numcodecs.Zlib(level=1),
                         fill_value=-1, dimension_separator=separator)
    a[...] = A
    a.attrs["units"] = "K"
    b = g.create_dataset("sub/b", shape=B.shape, chunks=(6,), dtype=B.dtype, fill_value=0.5,
                         dimension_separator=separator)
    b[:12] = B[:12]
    g.create_dataset("text", shape=TEXT.shape, chunks=(2,), dtype=object, object_codec=numcodecs.VLenUTF8(),
                     fill_value="")[...] = TEXT
    group.create_dataset("top", shape=TOP.shape, chunks=(4,), dtype=TOP.dtype, compressor=None)[...] = TOP


def libzarr_writes(root):
    """The same hierarchy written by libzarr."""
    store = libzarr.open_store(str(root), "w")
    store.create_group("").set_attrs({"title": "source"})
    store.create_group("g").set_attrs({"level": 1})
    store.create_group("g/sub").set_attrs({"level": 2})
    a = store.create_array("g/a", {"shape": list(A.shape), "chunks": [5, 3], "dtype": "<i4", "fill_value": -1,
                                   "compressor": {"id": "zlib", "level": 1}})
    a.write(A)
    a.set_attrs({"units": "K"})
    store.create_array("g/sub/b", {"shape": [20], "chunks": [6], "dtype": "<f8", "fill_value": 0.5}).write(B[:12])
    store.create_array("top", {"shape": [10], "chunks": [4], "dtype": "|u1", "compressor": None}).write(TOP)
    store.close()
    # Object arrays through zarr-python (the binding's vlen calls are tested elsewhere).
    g = zarr.open_group(zarr.DirectoryStore(str(root)), mode="r+")["g"]
    g.create_dataset("text", shape=TEXT.shape, chunks=(2,), dtype=object, object_codec=numcodecs.VLenUTF8(),
                     fill_value="")[...] = TEXT


WRITERS = {"python": python_writes, "libzarr": libzarr_writes}
# Key copies also from nested ("/") chunk keys (node copies by zarr-python 2 drop the separator).
KEY_WRITERS = {**WRITERS, "python nested": lambda root: python_writes(root, "/")}


def python_store(path):
    return zarr.DirectoryStore(str(path))


def libzarr_store(path, mode="a"):
    return libzarr.open_store(str(path), mode)


def both(tmp_path, prepare=None):
    """Two destination directories made alike by prepare(python_dest_group_path), for zarr-python and libzarr."""
    dests = tmp_path / "by_python", tmp_path / "by_libzarr"
    for d in dests:
        d.mkdir()
        if prepare:
            prepare(d)
    return dests


def run_python(fn, *args, **kws):
    lines = []
    try:
        counts = fn(*args, log=lines.append, **kws)
    except zarr.errors.CopyError as e:
        return ("error", str(e)), lines
    return counts, lines


def run_libzarr(fn, *args):
    lines = []
    try:
        counts = fn(*args, log=lines.append)
    except libzarr.LibzarrError as e:
        return ("error", e.name, e.message), lines
    return counts, lines


# copy_store ---------------------------------------------------------------------------------------------


STORE_CASES = {
    "defaults": ("", "", {}),
    "subtree to a new path": ("g", "copy", {}),
    "excludes and includes": ("", "", {"excludes": [r"\.zattrs$", "^g/a/"], "includes": ["^g/a/0"]}),
    "a string exclude, flags": ("g", "h", {"excludes": "SUB", "flags": re.IGNORECASE}),
    "dry run": ("g", "", {"dry_run": True}),
    "an array's chunks only": ("g/a", "c", {"excludes": [r"/\."]}),
}


@pytest.mark.parametrize("writer", KEY_WRITERS)
@pytest.mark.parametrize("case", STORE_CASES)
def test_copy_store_as_zarr_python(tmp_path, writer, case):
    src = tmp_path / "src"
    KEY_WRITERS[writer](src)
    source_path, dest_path, options = STORE_CASES[case]
    by_python, by_libzarr = both(tmp_path)
    kws = {k: v for k, v in options.items()}
    want, want_log = run_python(zarr.copy_store, python_store(src), python_store(by_python), source_path=source_path,
                                dest_path=dest_path, **kws)
    src_store = libzarr_store(src, "r")
    got, got_log = run_libzarr(src_store.copy_store, source_path, libzarr_store(by_libzarr), dest_path, options)
    assert got == want
    assert got_log == want_log
    assert files(by_libzarr) == files(by_python)
    if options.get("dry_run"):
        assert files(by_libzarr) == {}


@pytest.mark.parametrize("if_exists", ["skip", "replace"])
def test_copy_store_if_exists(tmp_path, if_exists):
    src = tmp_path / "src"
    python_writes(src)

    def prepare(dest):
        # Part of the source already there (g without g/sub), one value changed, one key of its own.
        zarr.copy_store(python_store(src), python_store(dest), source_path="g", excludes=["^g/sub/"])
        (dest / "a" / "0.0").write_bytes(b"old")
        (dest / "extra").write_bytes(b"mine")
    by_python, by_libzarr = both(tmp_path, prepare)
    there = len(files(by_python)) - 1
    for dry_run in (True, False):
        options = {"if_exists": if_exists, "dry_run": dry_run}
        want, want_log = run_python(zarr.copy_store, python_store(src), python_store(by_python),
                                    source_path="g", dest_path="", **options)
        got, got_log = run_libzarr(libzarr_store(src, "r").copy_store, "g", libzarr_store(by_libzarr), "", options)
        assert (got, got_log) == (want, want_log)
        assert files(by_libzarr) == files(by_python)
    assert want[1] == (there if if_exists == "skip" else 0)
    assert files(by_libzarr)["a/0.0"] == (b"old" if if_exists == "skip" else (src / "g/a/0.0").read_bytes())
    assert files(by_libzarr)["extra"] == b"mine"


def test_copy_store_raise(tmp_path):
    """Both refuse a key that exists; libzarr checks every key first and writes nothing (zarr-python has
    copied the keys sorted before it)."""
    src = tmp_path / "src"
    python_writes(src)
    by_python, by_libzarr = both(tmp_path, lambda d: (d / "g" / "sub").mkdir(parents=True) or
                                 (d / "g" / "sub" / ".zattrs").write_text("{}"))
    want, _ = run_python(zarr.copy_store, python_store(src), python_store(by_python))
    got, got_log = run_libzarr(libzarr_store(src, "r").copy_store, "", libzarr_store(by_libzarr), "", None)
    assert want == ("error", "key 'g/sub/.zattrs' exists in destination")
    assert got[:2] == ("error", "ZARR_ERR_ALREADY_EXISTS") and '"g/sub/.zattrs"' in got[2]
    assert got_log == []
    assert files(by_libzarr) == {"g/sub/.zattrs": b"{}"}


def test_copy_store_refuses_bad_options(tmp_path):
    src = tmp_path / "src"
    python_writes(src)
    store = libzarr_store(src, "r")
    for options, status, words in [
        ({"if_exists": "skip_initialized"}, "ZARR_ERR_INVALID_ARGUMENT", "if_exists"),
        ({"exclude": ["a"]}, "ZARR_ERR_INVALID_ARGUMENT", '"exclude"'),
        ({"excludes": ["(?<=g)/a"]}, "ZARR_ERR_INVALID_ARGUMENT", "look-around"),
        ({"includes": [r"(a)\1"]}, "ZARR_ERR_INVALID_ARGUMENT", "backreferences"),
        ({"flags": re.ASCII}, "ZARR_ERR_UNSUPPORTED", "flags"),
        ({"dry_run": 1}, "ZARR_ERR_INVALID_ARGUMENT", "dry_run"),
    ]:
        with pytest.raises(libzarr.LibzarrError) as e:
            store.copy_store("", libzarr_store(tmp_path / "dst"), "", options)
        assert e.value.name == status and words in e.value.message, options
    assert not (tmp_path / "dst").exists() or files(tmp_path / "dst") == {}


# copy and copy_all --------------------------------------------------------------------------------------


def nodes(root):
    """Every node below a directory as zarr-python reads it: {path: (kind, metadata, attributes, values)}."""
    out = {}
    group = zarr.open_group(python_store(root), mode="r")

    def visit(path, node):
        attrs = dict(node.attrs)
        if isinstance(node, zarr.Array):
            meta = json.loads(node.store[node._key_prefix + ".zarray"])
            # libzarr always writes the separator; zarr-python's copy leaves the default "." out.
            if meta.get("dimension_separator") == ".":
                del meta["dimension_separator"]
            values = node[...]
            out[path] = ("array", meta, attrs, values.tolist())
        else:
            out[path] = ("group", None, attrs, None)
    visit("", group)
    group.visititems(visit)
    return out


NODE_CASES = {
    "a group": ("g", "g2", {}),
    "an array": ("g/a", "x/a", {}),
    "shallow": ("g", "g2", {"shallow": True}),
    "without attributes": ("g", "g2", {"without_attrs": True}),
    "new codecs": ("g", "g2", {"overrides": {"compressor": {"id": "zstd", "level": 3}}}),
    "dry run": ("g", "g2", {"dry_run": True}),
    "the root": ("", "r", {}),
}

CREATE_KWS = {"overrides": lambda o: {"compressor": numcodecs.get_codec(o["compressor"])}}


def python_kws(options):
    kws = {}
    for key, value in options.items():
        if key == "overrides":
            kws.update(CREATE_KWS[key](value))
        elif key != "copy_all":
            kws[key] = value
    return kws


def python_copy(src, dest_root, source_path, dest_path, options):
    """zarr.copy or zarr.copy_all as zarr_node_copy's options say, into directory dest_root."""
    source = zarr.open_group(python_store(src), mode="r")
    node = source[source_path] if source_path else source
    dest = zarr.open_group(python_store(dest_root), mode="a")
    if options.get("copy_all"):
        return run_python(zarr.copy_all, node, dest.require_group(dest_path), **python_kws(options))
    parent, _, name = dest_path.rpartition("/")
    return run_python(zarr.copy, node, dest.require_group(parent) if parent else dest, name=name,
                      **python_kws(options))


def check_node_copy(tmp_path, src, source_path, dest_path, options, prepare=None):
    by_python, by_libzarr = both(tmp_path, prepare)
    want, want_log = python_copy(src, by_python, source_path, dest_path, options)
    got, got_log = run_libzarr(libzarr_store(src, "r").copy_node, source_path, libzarr_store(by_libzarr),
                               dest_path, options)
    assert got_log == want_log
    assert got[0] == want[0] == "error" or got == want
    assert nodes(by_libzarr) == nodes(by_python)
    return want, want_log


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("case", NODE_CASES)
def test_copy_as_zarr_python(tmp_path, writer, case):
    src = tmp_path / "src"
    WRITERS[writer](src)
    source_path, dest_path, options = NODE_CASES[case]
    # The destination group exists, as zarr.copy requires.
    counts, log = check_node_copy(tmp_path, src, source_path, dest_path, options,
                                  lambda d: zarr.open_group(python_store(d), mode="w"))
    assert log[-1].startswith("dry run: " if options.get("dry_run") else "all done: ")
    if case == "a group":
        assert log == ["copy /g", "copy /g/a (13, 7) int32", "copy /g/sub", "copy /g/sub/b (20,) float64",
                       "copy /g/text (5,) object", "all done: 5 copied, 0 skipped, 564 bytes copied"]
        assert counts == (5, 0, 13 * 7 * 4 + 20 * 8 + 5 * 8)


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("shallow", [False, True])
def test_copy_all_as_zarr_python(tmp_path, writer, shallow):
    src = tmp_path / "src"
    WRITERS[writer](src)
    options = {"copy_all": True, "shallow": shallow}
    counts, log = check_node_copy(tmp_path, src, "g", "d", options,
                                  lambda d: zarr.open_group(python_store(d), mode="w").create_group("d"))
    assert counts == ((2, 0, 13 * 7 * 4 + 5 * 8) if shallow else (4, 0, 13 * 7 * 4 + 20 * 8 + 5 * 8))


def prepare_existing(dest):
    """A destination holding g2/a fully written (other values), g2/sub/b partly written, and g2/top."""
    group = zarr.open_group(python_store(dest), mode="w")
    a = group.create_dataset("g2/a", shape=A.shape, chunks=(5, 3), dtype=A.dtype)
    a[...] = 7
    group.create_dataset("g2/sub/b", shape=B.shape, chunks=(6,), dtype=B.dtype)[:6] = 1.0
    group.create_dataset("g2/top", shape=(3,), chunks=(3,), dtype="u1")[...] = 1


@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize("if_exists", ["skip", "replace", "skip_initialized", "raise"])
def test_copy_if_exists(tmp_path, if_exists, dry_run):
    src = tmp_path / "src"
    python_writes(src)
    # g/a onto a fully written array, g/sub/b onto a partly written one.
    counts, log = check_node_copy(tmp_path, src, "g", "g2", {"if_exists": if_exists, "dry_run": dry_run},
                                  prepare_existing)
    expected = {"skip": ["skip /g/a (13, 7) int32", "skip /g/sub/b (20,) float64"],
                "replace": ["copy /g/a (13, 7) int32", "copy /g/sub/b (20,) float64"],
                "skip_initialized": ["skip /g/a (13, 7) int32", "copy /g/sub/b (20,) float64"]}
    if if_exists == "raise":
        assert counts[0] == "error"
    else:
        assert [line for line in log if "/g/a " in line or "/g/sub/b" in line] == expected[if_exists]


def test_copy_all_to_an_array_in_the_way(tmp_path):
    """copy_all of the root onto a destination where a group's name is an array: raise, skip or replace."""
    src = tmp_path / "src"
    python_writes(src)

    def prepare(dest):
        zarr.open_group(python_store(dest), mode="w").create_dataset("d/g", shape=(2,), dtype="u1")
    for if_exists in ["raise", "skip", "replace"]:
        sub = tmp_path / if_exists
        sub.mkdir()
        check_node_copy(sub, src, "", "d", {"copy_all": True, "if_exists": if_exists}, prepare)


def test_libzarr_node_copies_read_by_zarr_python(tmp_path):
    """A group copied by libzarr into v3, sharded or not: zarr-python 2 reads the v2 part only, so here a v2
    recompression with new chunks, read back by zarr-python with the source's values."""
    src = tmp_path / "src"
    python_writes(src)
    dst = tmp_path / "dst"
    counts = libzarr_store(src, "r").copy_node("", libzarr_store(dst), "", {
        "overrides": {"compressor": {"id": "gzip", "level": 2}}, "if_exists": "replace"})
    assert counts == (7, 0, 13 * 7 * 4 + 20 * 8 + 5 * 8 + 10)
    copy = zarr.open_group(python_store(dst), mode="r")
    np.testing.assert_array_equal(copy["g/a"][...], A)
    np.testing.assert_array_equal(copy["g/sub/b"][:12], B[:12])
    assert list(copy["g/text"][...]) == list(TEXT)
    assert copy["g/a"].compressor == numcodecs.GZip(level=2)
    assert dict(copy.attrs) == {"title": "source"} and copy["g/a"].attrs["units"] == "K"


def test_node_copy_refuses_bad_options(tmp_path):
    src = tmp_path / "src"
    python_writes(src)
    store = libzarr_store(src, "r")
    for options, status, words in [
        ({"excludes": ["a"]}, "ZARR_ERR_INVALID_ARGUMENT", '"excludes"'),
        ({"if_exists": "overwrite"}, "ZARR_ERR_INVALID_ARGUMENT", "if_exists"),
        ({"shallow": "yes"}, "ZARR_ERR_INVALID_ARGUMENT", "shallow"),
        ({"overrides": {"colour": 1}}, "ZARR_ERR_INVALID_ARGUMENT", "colour"),
    ]:
        with pytest.raises(libzarr.LibzarrError) as e:
            store.copy_node("g", libzarr_store(tmp_path / "dst"), "g", options)
        assert e.value.name == status and words in e.value.message, options
    with pytest.raises(libzarr.LibzarrError) as e:
        store.copy_node("g/a", libzarr_store(tmp_path / "dst"), "d", {"copy_all": True})
    assert e.value.name == "ZARR_ERR_INVALID_ARGUMENT"
