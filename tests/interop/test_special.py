"""Beyond the matrix: 0-d, empty, null fill, big chunks, hierarchies + attributes, leniency,
partial writes into zarr-python arrays, error reporting."""
import itertools
import json
import math
import zlib

import numpy as np
import pytest

import libzarr
import zpy
from cases import (COMPRESSORS, DTYPES, GEOMETRIES, LAYOUTS, Case, assert_chunk_files, assert_same, fill_for,
                   libzarr_to_zarr_python, load_json, meaning, random_data, zarr_python_to_libzarr,
                   zarr_python_writes)

DIRECTIONS = {"zpy2lib": zarr_python_to_libzarr, "lib2zpy": libzarr_to_zarr_python}
BIG = ((320, 400), (250, 400))  # 100 000-element chunks, the second one overhanging
BIG_DTYPES = ["<f8", ">i4", "<u2", ">c8", "|b1", "<f2"]
SPECIAL = {
    "scalar": [Case("<f8", "zstd3", shape=(), chunks=(), fill=-7.5),
               Case(">c8", "blosc-lz4-shuf", "F", "/", (), (), 1 + 2j),
               Case("|b1", "raw", shape=(), chunks=(), fill=True, skip=0)],  # skip=0: the only chunk stays missing
    "empty": [Case("<i4", "zlib1", shape=(0,), chunks=(5,), fill=42),
              Case(">f4", "lz4", "F", "/", (3, 0), (2, 4), math.nan)],
    "nullfill": [Case("<i4", "gzip5", fill=None, skip=None),
                 Case(">f8", "blosc-zstd-shuf", "F", "/", *GEOMETRIES[1], fill=None, skip=None),
                 Case("|b1", "raw", fill=None, skip=None)],
    "bigchunk": [Case(dt, comp, *LAYOUTS[i % 4], *BIG, fill_for(dt, i), seed=i, skip=None)
                 for i, comp in enumerate(COMPRESSORS) for dt in [BIG_DTYPES[i % len(BIG_DTYPES)]]],
}


@pytest.mark.parametrize("direction, case", [pytest.param(d, c, id=f"{kind}-{d}-{c}")
                                             for kind, cases in SPECIAL.items() for c in cases for d in DIRECTIONS])
def test_special_arrays(direction, case, tmp_path):
    DIRECTIONS[direction](case, tmp_path)


# ---------------------------------------------------------------- hierarchies and attributes
ATTRS = {"title": "interop ✓ é ключ", "n": 42, "big": 2**63 - 1, "neg": -2**63, "beyond_f64": 9007199254740993,
         "floats": [0.1, 1 / 3, 2.2250738585072014e-308, 1.7976931348623157e308, 5e-324, -0.0, 1e21],
         "flag": True, "none": None, "list": [1, "two", [3.5, None]], "nested": {"a": {"b": []}, "empty": {}},
         "ключ": "значение", "esc": "quote \" backslash \\ tab \t nl \n nul-free"}
ARRAY_ATTRS = {"units": "m/s", "scale": [1.5, 2], "_ARRAY_DIMENSIONS": ["z", "y", "x"]}
X = Case("<i2", "zstd3", fill=-7)
Y = Case(">f8", "blosc-lz4-shuf", "F", "/", *GEOMETRIES[1], fill=math.nan, seed=5)


def expect_error(names, fn, *args):
    with pytest.raises(libzarr.LibzarrError) as e:
        fn(*args)
    assert e.value.name in names.split("|"), str(e.value)
    assert e.value.message, "zarr_last_error() should describe the failure"


def test_hierarchy_zarr_python_to_libzarr(tmp_path):
    g = zpy.open_group(tmp_path, "w")
    g.attrs.update(ATTRS)
    a = g.create_group("a")
    a.attrs.update({"level": 1})
    a.create_group("b"), a.create_group("c")
    ex, ey = zarr_python_writes(X, tmp_path / "x"), zarr_python_writes(Y, tmp_path / "a" / "b" / "y")
    zpy.open_array(tmp_path / "a" / "b" / "y", "r+").attrs.update(ARRAY_ATTRS)
    assert zpy.listing(zpy.open_group(tmp_path)) == {"arrays": ["x"], "groups": ["a"]}  # sanity

    with libzarr.open_store(tmp_path, "r") as store:
        for path, listing, attrs in [("", {"arrays": ["x"], "groups": ["a"]}, ATTRS),
                                     ("a", {"arrays": [], "groups": ["b", "c"]}, {"level": 1}),
                                     ("a/b", {"arrays": ["y"], "groups": []}, {}),
                                     ("a/c", {"arrays": [], "groups": []}, {})]:
            with store.open_group(path) as grp:
                assert grp.list() == listing, path
                assert grp.attrs() == attrs, path
        for path in ["a/b/y", "/a//b/y/", "a\\b\\y"]:
            with store.open_array(path) as y:
                assert y.attrs() == ARRAY_ATTRS
                assert_same(y.read(), ey)
        with store.open_array("x") as x:
            assert x.attrs() == {}
            assert_same(x.read(), ex)
        expect_error("ZARR_ERR_WRONG_NODE_TYPE", store.open_group, "x")
        expect_error("ZARR_ERR_WRONG_NODE_TYPE", store.open_array, "a")
        expect_error("ZARR_ERR_NOT_FOUND", store.open_array, "a/nope")
        expect_error("ZARR_ERR_INVALID_PATH", store.open_array, "a/../x")
        expect_error("ZARR_ERR_INVALID_PATH", store.open_group, "./a")


def test_hierarchy_libzarr_to_zarr_python(tmp_path):
    ex = libzarr_to_zarr_python(X, tmp_path, "x")
    ey = libzarr_to_zarr_python(Y, tmp_path, "a/c/y")  # creates the ancestor groups a and a/c
    with libzarr.open_store(tmp_path, "a") as store:
        with store.create_group("") as root:  # exists already or not: either way ZARR_OK
            root.set_attrs({"replaced": True})
            root.set_attrs(ATTRS)
            assert root.attrs() == ATTRS
        with store.create_group("a/b") as b:
            b.set_attrs({"level": 2})
        with store.create_group("a") as a:  # existing group: opened
            assert a.list() == {"arrays": [], "groups": ["b", "c"]}
            assert a.attrs() == {}
        with store.open_array("a/c/y") as y:
            y.set_attrs(ARRAY_ATTRS)
            assert y.attrs() == ARRAY_ATTRS
        with store.open_group("") as root:
            assert root.list() == {"arrays": ["x"], "groups": ["a"]}
        expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_group, "x")
        expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_array, "x", X.zarray())
        expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_array, "a", X.zarray())
        expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_array, "a/c/y/", X.zarray())
    for d in ["", "a", "a/b", "a/c"]:
        assert load_json(tmp_path / d / ".zgroup") == {"zarr_format": 2}, d
    assert load_json(tmp_path / ".zattrs") == ATTRS

    g = zpy.open_group(tmp_path)
    assert zpy.listing(g) == {"arrays": ["x"], "groups": ["a"]}
    assert dict(g.attrs) == ATTRS
    assert zpy.listing(g["a"]) == {"arrays": [], "groups": ["b", "c"]}
    assert zpy.listing(g["a/c"]) == {"arrays": ["y"], "groups": []}
    assert dict(g["a/b"].attrs) == {"level": 2}
    assert dict(g["a/c/y"].attrs) == ARRAY_ATTRS
    assert_same(zpy.read(g["a/c/y"]), ey)
    assert_same(zpy.read(g["x"]), ex)


def test_nan_attribute_written_by_zarr_python(tmp_path):
    """zarr-python writes float('nan') attributes as bare NaN/Infinity tokens (Python's JSON, not strict
    JSON). libzarr reads them, hands them to C as written, and keeps them when writing attributes."""
    expected = zarr_python_writes(X, tmp_path)
    zpy.open_array(tmp_path, "r+").attrs.update({"missing_value": math.nan, "big": math.inf, "ok": 1})
    assert "NaN" in (tmp_path / ".zattrs").read_text()
    with libzarr.open_store(tmp_path, "a") as store, store.open_array("") as arr:
        assert_same(arr.read(), expected)
        attrs = arr.attrs()
        assert attrs["ok"] == 1 and math.isnan(attrs["missing_value"]) and attrs["big"] == math.inf
        arr.set_attrs({"scale": -math.inf, "fill": math.nan})
    back = dict(zpy.open_array(tmp_path, "r").attrs)
    assert back["scale"] == -math.inf and math.isnan(back["fill"])


# ---------------------------------------------------------------- leniency
def test_gzip_metadata_zlib_stream_chunk(tmp_path):
    """A chunk in a "gzip" array that holds a zlib (RFC 1950) stream instead of gzip: libzarr reads it.
    (numcodecs' GZip itself rejects such a chunk.)"""
    case = Case("<u4", "gzip5", "F", "/", fill=42, skip=None)
    expected = zarr_python_writes(case, tmp_path)
    for idx in [(1, 1), (2, 4)]:  # an inner chunk and the overhanging corner chunk (padded with fill)
        block = np.full(case.chunks, 42, case.dtype)
        r = case.region(idx)
        block[tuple(slice(0, s.stop - s.start) for s in r)] = expected[r]
        (tmp_path / case.key(idx)).write_bytes(zlib.compress(block.tobytes(order=case.order)))
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        assert_same(arr.read(), expected)


def _comp(edit):
    return lambda doc: dict(doc, compressor=edit(doc["compressor"]))


L3 = dict(shape=GEOMETRIES[1][0], chunks=GEOMETRIES[1][1], fill=-7)
SPELLINGS = {  # .zarray spellings of other writers (older zarr/numcodecs, hand-written tools):
    # name: (case, edit of the .zarray, whether zarr-python reads the result too)
    "lzma-extra-delta": (Case(">i8", "lzma", **L3), _comp(lambda c: dict(c, delta=1)), False),
    "zstd-no-checksum": (Case(">i8", "zstd3", **L3), _comp(lambda c: {"id": "zstd", "level": 3}), True),
    "blosc-no-blocksize": (Case(">i8", "blosc-zstd-shuf", **L3),
                           _comp(lambda c: {k: v for k, v in c.items() if k != "blocksize"}), True),
    "lz4-no-acceleration": (Case(">i8", "lz4", **L3), _comp(lambda c: {"id": "lz4"}), True),
    "gzip-no-level": (Case(">i8", "gzip5", **L3), _comp(lambda c: {"id": "gzip"}), True),
    "zlib-no-level": (Case(">i8", "zlib1", **L3), _comp(lambda c: {"id": "zlib"}), True),
    "bz2-no-level": (Case(">i8", "bz2-9", **L3), _comp(lambda c: {"id": "bz2"}), True),
    "no-dimension-separator": (Case("<u2", "zlib1", "F", **L3 | {"fill": 42}),
                               lambda d: {k: v for k, v in d.items() if k != "dimension_separator"}, True),
    "filters-empty-list": (Case("<i4", "raw", **L3), lambda d: dict(d, filters=[]), True),
    "int-fill-for-float": (Case("<f4", "gzip5", **L3 | {"fill": 42.0}), lambda d: dict(d, fill_value=42), True),
    "unknown-top-level-key": (Case(">f8", "zstd3", **L3 | {"fill": math.nan}),
                              lambda d: dict(d, extra_key={"x": [1]}), True),
}


@pytest.mark.filterwarnings("ignore:Found an empty list of filters")  # zarr 3 accepts filters: [] but warns
@pytest.mark.parametrize("case, edit, zpy_reads", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_zarray_spellings(case, edit, zpy_reads, tmp_path):
    """zarr-python writes the array, then its .zarray is hand-edited; libzarr must still read it the same."""
    expected = zarr_python_writes(case, tmp_path)
    doc = edit(load_json(tmp_path / ".zarray"))
    (tmp_path / ".zarray").write_text(json.dumps(doc, indent=4, sort_keys=True))
    if zpy_reads:  # fairness: zarr-python accepts the edited document too
        assert_same(zpy.read(zpy.open_array(tmp_path)), expected)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        assert (arr.compressor or {}).get("id") == (doc["compressor"] or {}).get("id")
        assert_same(arr.read(), expected)


# ---------------------------------------------------------------- partial writes into zarr-python arrays
PATCH_CASES = [Case(dt, comp, *LAYOUTS[i % 4], *GEOMETRIES[i % 2], fill_for(dt, i), seed=1000 + i)
               for i, comp in enumerate(COMPRESSORS) for dt in [DTYPES[(7 * i + 3) % len(DTYPES)]]]


def patches(case):
    """(start, count) boxes: a whole missing chunk, the last element, and random unaligned boxes."""
    rng = np.random.default_rng(case.seed)
    missing = next(i for i in case.grid() if i not in case.written())
    r = case.region(missing)
    yield [s.start for s in r], [s.stop - s.start for s in r]
    yield [n - 1 for n in case.shape], [1] * len(case.shape)
    for _ in range(4):
        start = [int(rng.integers(0, n)) for n in case.shape]
        yield start, [int(rng.integers(1, n - o + 1)) for o, n in zip(start, case.shape)]


@pytest.mark.parametrize("case", PATCH_CASES, ids=str)
def test_libzarr_patches_zarr_python_array(case, tmp_path):
    expected = zarr_python_writes(case, tmp_path)
    present = set(case.written())
    with libzarr.open_store(tmp_path, "a") as store, store.open_array("") as arr:
        for k, (start, count) in enumerate(patches(case)):
            block = random_data(case.dtype, tuple(count), case.seed + k + 1)
            arr.write(block, start)
            expected[tuple(slice(o, o + c) for o, c in zip(start, count))] = block
            present |= set(itertools.product(*(range(o // c, (o + n - 1) // c + 1)
                                               for o, n, c in zip(start, count, case.chunks))))
        assert_same(arr.read(), expected)
    assert meaning(load_json(tmp_path / ".zarray")) == case.properties()
    assert_chunk_files(tmp_path, case, present)
    assert_same(zpy.read(zpy.open_array(tmp_path)), expected)


# ---------------------------------------------------------------- status reporting through the binding
def test_errors(tmp_path):
    assert libzarr.version() == "0.1.0"
    assert libzarr.status_name(-5) == "ZARR_ERR_NOT_FOUND"
    assert libzarr.status_name(12345) == "ZARR_UNKNOWN_STATUS"
    zarr_python_writes(X, tmp_path / "a")
    expect_error("ZARR_ERR_NOT_FOUND", libzarr.open_store, tmp_path / "nope", "r")
    expect_error("ZARR_ERR_INVALID_ARGUMENT", libzarr.open_store, tmp_path, 7)
    with libzarr.open_store(tmp_path, "r") as store:
        expect_error("ZARR_ERR_NOT_FOUND", store.open_array, "b")
        with store.open_array("a") as arr:
            expect_error("ZARR_ERR_READ_ONLY", arr.write, np.zeros((1, 1)), (0, 0))
            expect_error("ZARR_ERR_READ_ONLY", arr.set_attrs, {})
            expect_error("ZARR_ERR_OUT_OF_BOUNDS", arr.read, (10, 10), (5, 5))
            expect_error("ZARR_ERR_INVALID_ARGUMENT", arr.read, (0,), (1,))
            out = np.empty(3, "<i2")  # 2 elements requested, buffer for 3
            expect_error("ZARR_ERR_BUFFER_SIZE", libzarr._call, "zarr_array_read", arr.handle, 2,
                         libzarr._u64([0, 0]), libzarr._u64([1, 2]), out.ctypes.data, out.nbytes)
    with libzarr.open_store(tmp_path, "a") as store:
        expect_error("ZARR_ERR_ALREADY_EXISTS", store.create_array, "a", X.zarray())
        expect_error("ZARR_ERR_INVALID_METADATA", store.create_array, "c", {"shape": [2]})
        expect_error("ZARR_ERR_UNSUPPORTED", store.create_array, "c",
                     dict(X.zarray(), compressor={"id": "no-such-codec"}))
        with store.open_array("a") as arr:
            expect_error("ZARR_ERR_INVALID_ARGUMENT|ZARR_ERR_INVALID_METADATA", arr.set_attrs, "[1, 2]")
