"""Kerchunk references read by libzarr as the store `reference://X`, checked against the real Kerchunk (PyPI
`kerchunk`), h5py, fsspec's ReferenceFileSystem and zarr-python 3.

What is tested:
  * One HDF5 file written with h5py (`write_hdf5`): a 2-D int16 dataset with gzip and shuffle and edge chunks; a
    3-D float32 one with the fill value -9.5, partly written (some chunks never written, one edge chunk written);
    a 1-D float64 one small enough that Kerchunk inlines its chunks; a contiguous (unchunked) one; a scalar; a
    group holding a big-endian gzip dataset and a float32 one with a NaN fill, partly written; number, string
    and array attributes on the root, the group and datasets.
  * Its references from `kerchunk.hdf.SingleHdf5ToZarr(path, inline_threshold=500).translate()` (Zarr v2
    documents in a version 1 reference set), written as JSON in the variants of `VARIANTS`: as produced (bare
    absolute paths), `file://` URLs, version 0 (the bare `refs` object), templates (Kerchunk's own
    `templateize`, in the `{{u}}` form of the spec), a template for the directory plus one for the name, and
    the file opened by a path relative to the working directory. For each, libzarr must list the same keys and
    give the same bytes for every key as fsspec's ReferenceFileSystem, read every array whole and in a box with
    h5py's values (the fill value where no chunk was written, as zarr-python reads through fsspec), and give
    Kerchunk's attributes; zarr-python must read the same values.
  * A hand-written reference set (`handmade_references`) over raw little-endian files: `gen` entries (a range
    and a list dimension, `start`/`step`, arithmetic in offsets), whole-file `[url]` references, templates in
    `gen`, inline text that is UTF-8 (not Latin-1), `base64:` bytes and JSON documents given as JSON objects.
    fsspec (`simple_templates=False`, the only mode in which it expands `gen`) must read it as the NumPy values
    it was made from, and libzarr the same.
  * Kerchunk's Parquet reference directories (`reference://DIR`): the HDF5 file's references (with `table/0.0` made a
    whole-file reference) written by `kerchunk.df.refs_to_dataframe` (fsspec's LazyReferenceMapper, with its
    default engine fastparquet) and by the same steps with the pyarrow engine, with 3 references per record file
    (arrays span several files, the last one partial, and a file with no chunk written is not written), with one
    record file per array, and with the paths as a Categorical (a Parquet dictionary column);
    `test_kerchunk_writes_parquet_references_of_every_kind` pins the files and their rows. libzarr must list
    fsspec's keys (not `.zmetadata`, fsspec's own file) and give its bytes, read every array as h5py does and
    give Kerchunk's attributes and listings; zarr-python reads the same through fsspec (`fsspec_parquet` works
    around two fsspec bugs: NaN paths, and groups taken for arrays). A deleted record file holds chunks never
    written, read as the fill value (as fsspec does); relative, `file://` and trailing-slash spellings of DIR.
    Transports: the directory and its targets on nginx (which lists no directory: the arrays must read, and a
    listing must be right or fail naming the directory) and in the bucket (the directory's S3 options at the top
    level, `target_options` for the targets), a wrong secret for the directory, local targets of a directory read
    over the network (refused). Errors: a damaged record file (garbage, truncated, empty, pages zeroed) is invalid
    metadata naming `DIR/FIELD/refs.R.parq` (the other record files still read; a listing fails naming it); a
    damaged `.zmetadata` (not JSON, truncated, `record_size` or `metadata` missing or wrong, a `.zarray` without a
    grid) is invalid metadata naming `DIR/.zmetadata`; a directory without one is not found; a deleted or
    truncated target, or a deleted whole file, names the key and the target; opening for writing is refused.
  * Transports: targets served by nginx ($LIBZARR_TEST_HTTP_ROOT / $LIBZARR_TEST_HTTP_URL), the reference file
    itself served by nginx, targets in SeaweedFS' bucket `zarr-test` ($LIBZARR_TEST_S3_ENDPOINT, _KEY, _SECRET)
    reached with the open option `target_options` (and the reference file in the bucket too, with the options
    of its own store beside `target_options`); a wrong secret in `target_options` is refused, naming the key
    and the target; a reference file read from the network may not make libzarr read local files. Skipped
    without the servers unless LIBZARR_REMOTE_TESTS=required (scripts/test.sh sets it), as the other remote
    tests are.
  * Errors: a deleted target, a range past a target's end (moved offset, truncated file), a malformed reference
    file (not JSON, a value that is neither a string nor a list, bad base64, wrong lists, a bad `gen` entry, an
    unknown version) name the key (or the file) and the target; opening for writing, and writing through a
    read-only handle, are refused and change nothing.

Needs kerchunk, h5py, jinja2, pandas, pyarrow and fastparquet (requirements-zarr3-newest.txt). Under older
zarr-python flavours, which do not install them, the module skips itself; under zarr-python 3.4 or later a missing
one is an error, so that the flavour meant to run it cannot skip it silently.
"""
import base64
import copy
import inspect
import json
import math
import os
import shutil
import urllib.request
import uuid
from pathlib import Path

import numpy as np
import pytest
import zarr

import libzarr
from zpy import ZARR_VERSION

if ZARR_VERSION >= (3, 4):  # requirements-zarr3-newest.txt installs them: missing is a broken environment
    try:
        import fastparquet  # noqa: F401  (fsspec's default Parquet engine)
        import h5py
        import jinja2  # noqa: F401  (fsspec expands "gen" with it)
        import kerchunk.df
        import kerchunk.hdf
        import kerchunk.utils
        import pandas  # noqa: F401  (fsspec reads Parquet references with it)
        import pyarrow.parquet as pq
    except ImportError as e:
        raise ImportError(f"under zarr-python {zarr.__version__} test_kerchunk.py needs kerchunk, h5py, jinja2, "
                          f"pandas, pyarrow and fastparquet (requirements-zarr3-newest.txt installs them): {e}") from e
else:
    pytest.importorskip("kerchunk", reason="kerchunk is installed with zarr-python 3.4 or later "
                                           "(requirements-zarr3-newest.txt)")
    h5py = pytest.importorskip("h5py")
    pytest.importorskip("jinja2")
    pytest.importorskip("pandas")
    pq = pytest.importorskip("pyarrow.parquet")
    pytest.importorskip("fastparquet")
    import kerchunk.df
    import kerchunk.hdf
    import kerchunk.utils

import fsspec  # noqa: E402  (a dependency of kerchunk)
from fsspec.implementations.reference import LazyReferenceMapper  # noqa: E402

# pandas 3 deprecates its fastparquet engine, which is fsspec's default
pytestmark = pytest.mark.filterwarnings("ignore:The 'fastparquet' engine is deprecated")

INLINE = 500  # Kerchunk's default inline_threshold: chunks shorter than this are copied into the references
BUCKET = "zarr-test"


# ----------------------------------------------------------------------------------------------------- the files
def write_hdf5(path):
    """The HDF5 file every Kerchunk case translates (see the module's docstring)."""
    rng = np.random.default_rng(20261207)
    with h5py.File(path, "w") as f:
        f.attrs["title"] = "kerchunk interop"
        f.attrs["history"] = np.bytes_(b"written by h5py")  # a fixed-length byte string
        f.attrs["place"] = "Zürich"
        f.attrs["answer"] = np.int64(42)
        f.attrs["ratio"] = 0.25
        f.attrs["levels"] = np.array([1, 2, 3], dtype="i4")
        # 2-D int16, gzip + shuffle, 3 x 3 chunks with edge chunks on both axes; ~1 KB chunks stay references
        t = f.create_dataset("temperature", data=rng.integers(-2000, 2000, (45, 70), dtype="i2"),
                             chunks=(16, 32), compression="gzip", compression_opts=4, shuffle=True)
        t.attrs["units"] = "K"
        t.attrs["scale_factor"] = 0.01
        t.attrs["valid_range"] = np.array([-2000, 2000], dtype="i2")
        # 3-D float32 with a fill value, 3 x 2 x 2 chunks of 640 bytes, 3 of them written (one a corner edge chunk)
        p = f.create_dataset("pressure", shape=(10, 9, 12), dtype="f4", chunks=(4, 5, 8), fillvalue=-9.5)
        p[0:4, 0:5, 0:8] = rng.random((4, 5, 8), dtype="f4") * 1000
        p[5, 2, 3] = 1013.25
        p[8:10, 5:9, 8:12] = -0.0
        p.attrs["long_name"] = "air pressure"
        # 1-D float64, 64-byte chunks: inlined (base64)
        f.create_dataset("coords", data=np.linspace(-1, 1, 20), chunks=(8,))
        # contiguous: one chunk, the whole dataset (1200 bytes, a reference)
        f.create_dataset("table", data=(np.arange(300, dtype="<u4") * 2654435761 % 4294967291).reshape(15, 20))
        # scalar: 8 bytes, contiguous, inlined; 3.5 is valid UTF-8 bytes, so Kerchunk writes it as text
        f.create_dataset("scalar", data=np.float64(3.5))
        g = f.create_group("grp")
        g.attrs["name"] = "inner group"
        g.attrs["count"] = 7
        inner = g.create_dataset("inner", data=rng.integers(-10**15, 10**15, 200).astype(">i8"), chunks=(64,),
                                 compression="gzip")
        inner.attrs["description"] = "big-endian, gzip"
        n = g.create_dataset("nanfill", shape=(40,), dtype="f4", chunks=(10,), fillvalue=np.nan)
        n[12:18] = [1.5, -2.5, np.inf, -np.inf, 0.0, 7.0]
        n[35] = 3.0


def kerchunk_references(h5path):
    """Kerchunk's references of `h5path`, through JSON (as a file holds them)."""
    translator = kerchunk.hdf.SingleHdf5ToZarr(str(h5path), inline_threshold=INLINE, error="raise")
    try:
        return json.loads(json.dumps(translator.translate()))
    finally:
        if hasattr(translator, "close"):  # kerchunk 0.2.10 and later
            translator.close()


def retarget(refs, old, new):
    """A copy of the reference set `refs` (version 0 or 1) with target `old` replaced by `new`."""
    refs = copy.deepcopy(refs)
    inner = refs["refs"] if "version" in refs else refs
    for key, value in inner.items():
        if isinstance(value, list) and value[0] == old:
            inner[key] = [new, *value[1:]]
    return refs


def templated(refs, target):
    """The targets through a template, made by Kerchunk's own `templateize`. It returns the names in Python's
    `str.format` form (`{u}...`); the spec, fsspec and Kerchunk's grib2 writer use `{{u}}`."""
    urls = sorted({v[0] for v in refs["refs"].values() if isinstance(v, list)})
    templates, names = kerchunk.utils.templateize(urls, min_length=1)
    assert templates == {"u": target} and names == ["{u}"], (templates, names)
    out = retarget(refs, target, "{{u}}")
    out["templates"] = templates
    return out


def two_templates(refs, target):
    """A template for the directory and one for the file name, both in one URL."""
    out = retarget(refs, target, "{{dir}}/{{name}}")
    out["templates"] = {"dir": os.path.dirname(target), "name": os.path.basename(target)}
    return out


VARIANTS = {
    "as-produced": lambda refs, target: refs,
    "file-url": lambda refs, target: retarget(refs, target, "file://" + target),
    "version-0": lambda refs, target: refs["refs"],
    "templates": templated,
    "two-templates": two_templates,
    "relative-location": lambda refs, target: refs,  # opened as reference://refs/relative-location.json
}


def write_json(path, doc, **dump):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, **dump), encoding="utf-8")
    return path


def location(path):
    return f"reference://{path}"


def open_refs(where, options=None):
    return libzarr.Store.open(where, "r") if options is None else libzarr.Store.open_options(where, "r", options)


def arrays_of(refs):
    """The array paths of a reference set (version 0 or 1), sorted."""
    inner = refs["refs"] if "version" in refs else refs
    return sorted(k[:-len("/.zarray")] for k in inner if k.endswith("/.zarray"))


def document(refs, key):
    inner = refs["refs"] if "version" in refs else refs
    value = inner[key]
    return value if isinstance(value, dict) else json.loads(value)


def box_of(shape):
    """An unaligned box crossing chunk boundaries (the whole of a 0-d array)."""
    start = tuple(s // 3 for s in shape)
    return start, tuple(max(1, (s - b) // 2) for s, b in zip(shape, start))


def same_number(a, b):
    return (a is None and b is None) or (a is not None and b is not None and (
        (isinstance(a, float) or isinstance(b, float)) and math.isnan(float(a)) and math.isnan(float(b))
        or float(a) == float(b)))


# ---------------------------------------------------------------------------------------------------- the readers
def h5py_values(h5path):
    """Every dataset's values as h5py reads them, by path."""
    out = {}
    with h5py.File(h5path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def reference_fs(fo, **kwargs):
    return fsspec.filesystem("reference", fo=str(fo) if isinstance(fo, Path) else fo, **kwargs)


def zarr_python_values(fs, names):
    """zarr-python 3 reading the arrays `names` through fsspec's ReferenceFileSystem `fs`."""
    store = zarr.storage.FsspecStore.from_mapper(fs.get_mapper(""), read_only=True)
    root = zarr.open_group(store, mode="r", zarr_format=2)
    return {name: root[name][...] for name in names}


def check_same_keys_and_bytes(store, fs, refs_doc):
    """libzarr lists the keys fsspec has and gives the same bytes for each. Values given as JSON objects are
    compared as JSON: fsspec turns them into text with json.dumps, libzarr with other spacing."""
    assert sorted(store.list_keys("")) == sorted(fs.references)
    inner = refs_doc["refs"] if "version" in refs_doc else refs_doc
    for key in fs.references:
        want, got = fs.cat(key), store.get(key)
        if isinstance(inner.get(key), dict):
            assert json.loads(got) == json.loads(want), key
        else:
            assert got == want, key


def check_zarr_python(fs, refs, expected):
    """zarr-python, through fsspec's ReferenceFileSystem `fs`, reads `expected`'s values: the references mean
    what the test says (and zarr-python and libzarr agree when libzarr reads them so too)."""
    got = zarr_python_values(fs, arrays_of(refs))
    assert sorted(got) == sorted(expected)
    for name, values in got.items():
        np.testing.assert_array_equal(values, expected[name], err_msg=f"zarr-python, {name}")
        assert values.dtype == np.dtype(document(refs, f"{name}/.zarray")["dtype"]), name


def check_arrays(store, refs, expected):
    """libzarr reads every array of `refs` whole and in a box with `expected`'s values (h5py's or NumPy's);
    metadata and attributes are Kerchunk's."""
    for name in arrays_of(refs):
        zarray = document(refs, f"{name}/.zarray")
        want = expected[name]
        with store.open_array(name) as arr:
            assert arr.shape == tuple(zarray["shape"]), name
            assert arr.chunks == tuple(zarray["chunks"]), name
            assert arr.stored_dtype == np.dtype(zarray["dtype"]), name
            fill = arr.fill_value
            assert same_number(None if fill is None else fill.item(), zarray["fill_value"]), (name, fill)
            assert [f["id"] for f in arr.filters or []] == [f["id"] for f in zarray["filters"] or []], name
            assert (arr.compressor or {}).get("id") == (zarray["compressor"] or {}).get("id"), name
            whole = arr.read()
            np.testing.assert_array_equal(whole, want, err_msg=f"libzarr, {name}")
            if want.ndim:
                start, count = box_of(want.shape)
                inside = tuple(slice(b, b + c) for b, c in zip(start, count))
                np.testing.assert_array_equal(arr.read(start, count), want[inside], err_msg=f"libzarr box, {name}")
            zattrs = f"{name}/.zattrs"
            has = zattrs in (refs["refs"] if "version" in refs else refs)
            assert arr.attrs() == (document(refs, zattrs) if has else {}), name


def check_groups(store, refs):
    """Every group's attributes are Kerchunk's, and its listing names the arrays and groups of the references."""
    inner = refs["refs"] if "version" in refs else refs
    arrays = arrays_of(refs)
    groups = [""] + sorted(k[:-len("/.zgroup")] for k in inner if k.endswith("/.zgroup"))
    for path in groups:
        prefix = f"{path}/" if path else ""
        with store.open_group(path) as group:
            zattrs = f"{prefix}.zattrs"
            assert group.attrs() == (document(refs, zattrs) if zattrs in inner else {}), path

            def direct(names):
                return sorted(n[len(prefix):] for n in names if n.startswith(prefix) and "/" not in n[len(prefix):])
            assert group.list() == {"arrays": direct(arrays), "groups": direct(g for g in groups if g)}, path


def check_reads(where, refs_doc, expected, options=None, fs=None):
    """libzarr opens `where` and reads what `refs_doc` describes as `expected` says; with `fs`, it also gives
    fsspec's keys and bytes."""
    with open_refs(where, options) as store:
        if fs is not None:
            check_same_keys_and_bytes(store, fs, refs_doc)
        check_arrays(store, refs_doc, expected)
        check_groups(store, refs_doc)


def libzarr_error(where, options=None, arrays=None):
    """The LibzarrError that opening `where` and reading `arrays` (default: every array listed) raises."""
    with pytest.raises(libzarr.LibzarrError) as caught:
        with open_refs(where, options) as store:
            names = arrays if arrays is not None else \
                [k[:-len("/.zarray")] for k in store.list_keys("") if k.endswith("/.zarray")]
            for name in names:
                with store.open_array(name) as arr:
                    arr.read()
    return caught.value


def assert_names(error, *words, statuses=None):
    for word in words:
        assert word in error.message, (word, error.name, error.message)
    if statuses is not None:
        assert error.name in statuses, (error.name, error.message)


# ------------------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    """Each test runs in its own directory: a library that does not know `reference://` takes the location for
    a relative directory, and opened for writing it would create `reference:/...` where the tests run."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def hdf5(tmp_path_factory):
    """The HDF5 file, its Kerchunk references and h5py's values."""
    path = tmp_path_factory.mktemp("kerchunk") / "data.h5"
    write_hdf5(path)
    return path, kerchunk_references(path), h5py_values(path)


@pytest.fixture()
def own_hdf5(hdf5, tmp_path):
    """A copy of the HDF5 file of this test's own (to delete or damage) and its references."""
    path, refs, values = hdf5
    mine = tmp_path / "own.h5"
    shutil.copyfile(path, mine)
    return mine, retarget(refs, str(path), str(mine)), values


# -------------------------------------------------------------------------------------- what Kerchunk produces
def test_kerchunk_writes_zarr_v2_references_of_every_kind(hdf5):
    """Pins what the other tests rely on: Kerchunk writes version 1 references holding Zarr v2 documents as text,
    `[path, offset, length]` references to the HDF5 file itself, chunks shorter than inline_threshold inline
    (`base64:` when they are not UTF-8, text when they are), no key for chunks never written, and HDF5's filters
    as Zarr filters with no compressor."""
    path, refs, values = hdf5
    assert sorted(refs) == ["refs", "version"] and refs["version"] == 1
    inner = refs["refs"]
    assert set(arrays_of(refs)) == set(values)
    assert json.loads(inner[".zgroup"]) == {"zarr_format": 2} and json.loads(inner["grp/.zgroup"]) == {"zarr_format": 2}
    ranges = {k for k, v in inner.items() if isinstance(v, list)}
    assert ranges and all(len(inner[k]) == 3 and inner[k][0] == str(path) for k in ranges)
    assert {"temperature/0.0", "table/0.0", "pressure/0.0.0"} <= ranges
    assert all(v.startswith("base64:") for k, v in inner.items() if k.startswith("coords/") and "/." not in k)
    assert inner["scalar/0"] == np.float64(3.5).tobytes().decode()  # inline text: the bytes as UTF-8
    t = json.loads(inner["temperature/.zarray"])
    assert t["zarr_format"] == 2 and t["compressor"] is None and t["dimension_separator"] == "."
    assert t["filters"] == [{"id": "shuffle", "elementsize": 2}, {"id": "zlib", "level": 4}]
    assert t["fill_value"] == 0 and t["shape"] == [45, 70] and t["chunks"] == [16, 32]
    p = json.loads(inner["pressure/.zarray"])
    assert p["fill_value"] == -9.5 and p["filters"] is None
    assert sorted(k for k in inner if k.startswith("pressure/") and not k.split("/")[-1].startswith(".")) == \
        ["pressure/0.0.0", "pressure/1.0.0", "pressure/2.1.1"]
    assert json.loads(inner["grp/nanfill/.zarray"])["fill_value"] == "NaN"
    # where no chunk was written, h5py reads the fill value, as zarr-python does (and libzarr must)
    assert (values["pressure"][4:8, 5:9, 0:8] == -9.5).all() and np.isnan(values["grp/nanfill"][20:30]).all()
    assert json.loads(inner["scalar/.zarray"])["shape"] == []
    assert json.loads(inner[".zattrs"]) == {"title": "kerchunk interop", "history": "written by h5py",
                                            "place": "Zürich", "answer": 42, "ratio": 0.25, "levels": [1, 2, 3]}


# ------------------------------------------------------------------------------------------- the Kerchunk cases
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_libzarr_reads_kerchunk_references_as_h5py_and_zarr_python(hdf5, tmp_path, variant):
    path, refs, values = hdf5
    doc = VARIANTS[variant](copy.deepcopy(refs), str(path))
    refs_path = write_json(tmp_path / "refs" / f"{variant}.json", doc)
    fs = reference_fs(refs_path)
    check_zarr_python(fs, doc, values)
    # the tests run in tmp_path (_in_tmp_path)
    where = location(f"refs/{variant}.json" if variant == "relative-location" else refs_path)
    check_reads(where, doc, values, fs=fs)


def test_inline_chunks_read_without_the_target(own_hdf5, tmp_path):
    """Arrays whose chunks are all inline, and every document, need no target: they read with it gone."""
    mine, refs, values = own_hdf5
    refs_path = write_json(tmp_path / "refs.json", refs)
    mine.unlink()
    with open_refs(location(refs_path)) as store:
        for name in ("coords", "scalar"):
            with store.open_array(name) as arr:
                np.testing.assert_array_equal(arr.read(), values[name])
        check_groups(store, refs)


# ------------------------------------------------------------------------------------------- hand-made references
def handmade_references(directory):
    """Raw little-endian files in `directory` and a hand-written version 1 reference set over them (per
    https://fsspec.github.io/kerchunk/spec.html); returns (the set, the arrays' NumPy values)."""
    directory = Path(directory)
    grid = (np.arange(48, dtype="<f8").reshape(6, 8) * 1.5 - 7.25)  # chunks of 3 x 4: 96 bytes each
    series = np.arange(10, dtype="<i4") ** 3 - 100  # chunks of 2: 8 bytes each
    header = b"raw chunks after 32 bytes\n".ljust(32, b"-")
    raw = bytearray(header)
    for i in range(2):
        for j in range(2):
            raw += grid[i * 3:(i + 1) * 3, j * 4:(j + 1) * 4].tobytes()
    assert len(raw) == 32 + 4 * 96
    raw += series.tobytes()  # from byte 416 on
    raw += b"trailing bytes no reference reads"
    (directory / "raw.bin").write_bytes(bytes(raw))
    whole = np.array([5, -4, 3, -2, 1, 0, 300, -300, 32767], dtype="<i2")  # one file per chunk of 3
    for n in range(3):
        (directory / f"part{n}.bin").write_bytes(whole[n * 3:(n + 1) * 3].tobytes())
    text = np.array([0xC3, 0xA9, 0xFF, 0x00], dtype="u1")  # "é" as UTF-8, then base64 bytes

    def zarray(shape, chunks, dtype, fill):
        return json.dumps({"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": dtype, "fill_value": fill,
                           "order": "C", "compressor": None, "filters": None, "dimension_separator": "."})

    refs = {
        "version": 1,
        "templates": {"u": str(directory / "raw.bin"), "d": str(directory)},
        "refs": {
            ".zgroup": {"zarr_format": 2},  # a JSON object: fsspec gives json.dumps of it
            ".zattrs": {"made": "by hand", "n": 3, "nested": {"list": [1, 2.5, "x"]}},
            "grid/.zarray": zarray([6, 8], [3, 4], "<f8", None),
            "grid/.zattrs": {"_ARRAY_DIMENSIONS": ["y", "x"]},
            "series/.zarray": zarray([10], [2], "<i4", -1),
            "whole/.zarray": zarray([9], [3], "<i2", 0),
            "whole/2": ["{{d}}/part2.bin"],  # a whole file, through a template
            "text/.zarray": zarray([4], [2], "|u1", 0),
            "text/0": "é",  # inline text stands for its UTF-8 bytes
            "text/1": "base64:" + base64.b64encode(bytes([0xFF, 0x00])).decode(),
        },
        "gen": [
            {"key": "grid/{{i}}.{{j}}", "url": "{{u}}", "offset": "{{32 + (i * 2 + j) * 96}}", "length": "96",
             "dimensions": {"i": {"stop": 2}, "j": [0, 1]}},
            {"key": "series/{{k // 2}}", "url": "{{u}}", "offset": "{{416 + k * 4}}", "length": "8",
             "dimensions": {"k": {"start": 0, "stop": 10, "step": 2}}},
            {"key": "whole/{{n}}", "url": "{{d}}/part{{n}}.bin", "dimensions": {"n": [0, 1]}},
        ],
    }
    return refs, {"grid": grid, "series": series, "whole": whole, "text": text}


def test_handmade_references_with_gen_and_templates(tmp_path):
    refs, values = handmade_references(tmp_path)
    refs_path = write_json(tmp_path / "handmade.json", refs, ensure_ascii=False)  # "é" as raw UTF-8
    # fsspec expands "gen" only with simple_templates=False (jinja2): this is what the file means.
    fs = reference_fs(refs_path, simple_templates=False)
    assert sorted(fs.references) == sorted(
        [".zgroup", ".zattrs", "grid/.zarray", "grid/.zattrs", "series/.zarray", "whole/.zarray", "text/.zarray",
         "text/0", "text/1", "whole/2", "whole/0", "whole/1", "grid/0.0", "grid/0.1", "grid/1.0", "grid/1.1"]
        + [f"series/{c}" for c in range(5)])
    assert fs.references["grid/1.0"] == [str(tmp_path / "raw.bin"), 32 + 2 * 96, 96]
    assert fs.references["series/3"] == [str(tmp_path / "raw.bin"), 416 + 6 * 4, 8]
    assert fs.references["whole/1"] == [str(tmp_path / "part1.bin")]
    check_zarr_python(fs, refs, values)
    check_reads(location(refs_path), refs, values, fs=fs)


# ------------------------------------------------------------------------------------------------------ transports
def servers(*names):
    """The values of the test servers' variables; skips without them unless LIBZARR_REMOTE_TESTS=required."""
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        if os.environ.get("LIBZARR_REMOTE_TESTS") == "required":
            pytest.fail(f"{', '.join(missing)} not set: start the test servers (scripts/servers.sh)", pytrace=False)
        pytest.skip(f"no test server ({', '.join(missing)} not set; scripts/test.sh starts them)")
    return [os.environ[n] for n in names]


@pytest.fixture()
def http_copy(hdf5):
    """A directory of this test's own under nginx's root holding a copy of the HDF5 file: (directory, its URL)."""
    url, root = servers("LIBZARR_TEST_HTTP_URL", "LIBZARR_TEST_HTTP_ROOT")
    name = f"kerchunk-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    directory = Path(root) / name
    directory.mkdir()
    os.chmod(directory, 0o755)  # nginx's worker is another user
    shutil.copyfile(hdf5[0], directory / "data.h5")
    os.chmod(directory / "data.h5", 0o644)
    yield directory, f"{url}/{name}"
    shutil.rmtree(directory, ignore_errors=True)


def publish(directory, name, doc):
    path = write_json(Path(directory) / name, doc)
    os.chmod(path, 0o644)
    return path


@pytest.mark.parametrize("refs_over_http", [False, True], ids=["local-refs", "refs-over-http"])
def test_targets_served_by_nginx(hdf5, http_copy, tmp_path, refs_over_http):
    path, refs, values = hdf5
    directory, base = http_copy
    target = f"{base}/data.h5"
    with urllib.request.urlopen(urllib.request.Request(target, headers={"Range": "bytes=0-7"}), timeout=10) as r:
        assert r.read() == b"\x89HDF\r\n\x1a\n"  # nginx serves the copy, by range
    doc = retarget(refs, str(path), target)
    if refs_over_http:
        publish(directory, "refs.json", doc)
        where = location(f"{base}/refs.json")
    else:
        where = location(write_json(tmp_path / "refs.json", doc))
    check_reads(where, doc, values)


@pytest.mark.parametrize("form", ["path", "file-url"])
def test_references_from_the_network_may_not_read_local_files(hdf5, http_copy, form):
    """A reference file read over HTTP whose targets are local files is refused, naming the key and the file:
    a server must not make libzarr read this machine's files."""
    path, refs, values = hdf5
    directory, base = http_copy
    target = str(path) if form == "path" else f"file://{path}"
    publish(directory, "local.json", retarget(refs, str(path), target))
    error = libzarr_error(location(f"{base}/local.json"), arrays=["table"])
    assert_names(error, "table/0.0", str(path),
                 statuses={"ZARR_ERR_PERMISSION_DENIED", "ZARR_ERR_INVALID_ARGUMENT", "ZARR_ERR_INVALID_PATH"})


@pytest.fixture()
def s3_copy(hdf5):
    """The HDF5 file uploaded to the bucket under a prefix of this test's own: (prefix, obstore store, S3 options
    of libzarr)."""
    endpoint, key, secret = servers("LIBZARR_TEST_S3_ENDPOINT", "LIBZARR_TEST_S3_KEY", "LIBZARR_TEST_S3_SECRET")
    obstore = pytest.importorskip("obstore")
    from obstore.store import S3Store
    s3 = S3Store(BUCKET, endpoint=endpoint, access_key_id=key, secret_access_key=secret, region="us-east-1",
                 client_options={"allow_http": True})
    prefix = f"kerchunk-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    obstore.put(s3, f"{prefix}/data.h5", hdf5[0].read_bytes())
    options = {"endpoint": endpoint, "access_key_id": key, "secret_access_key": secret, "region": "us-east-1"}
    yield prefix, s3, options
    for item in [o["path"] for batch in obstore.list(s3, prefix=prefix) for o in batch]:
        obstore.delete(s3, item)


@pytest.fixture()
def no_aws_environment(monkeypatch):
    """No AWS_* variables (other modules set them): S3 settings must come from the options."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)


@pytest.mark.parametrize("refs_in_bucket", [False, True], ids=["local-refs", "refs-in-bucket"])
def test_targets_in_s3_with_target_options(hdf5, s3_copy, tmp_path, no_aws_environment, refs_in_bucket):
    """Targets in the bucket, reached with the option `target_options`; the reference file in the bucket is read
    with the options of its own store, given beside `target_options`."""
    import obstore
    path, refs, values = hdf5
    prefix, s3, s3_options = s3_copy
    doc = retarget(refs, str(path), f"s3://{BUCKET}/{prefix}/data.h5")
    if refs_in_bucket:
        obstore.put(s3, f"{prefix}/refs.json", json.dumps(doc).encode())
        where, options = location(f"s3://{BUCKET}/{prefix}/refs.json"), dict(s3_options, target_options=s3_options)
    else:
        where, options = location(write_json(tmp_path / "refs.json", doc)), {"target_options": s3_options}
    check_reads(where, doc, values, options=options)


def test_a_wrong_secret_in_target_options_names_the_key_and_the_target(hdf5, s3_copy, tmp_path, no_aws_environment):
    path, refs, values = hdf5
    prefix, s3, s3_options = s3_copy
    target = f"s3://{BUCKET}/{prefix}/data.h5"
    where = location(write_json(tmp_path / "refs.json", retarget(refs, str(path), target)))
    error = libzarr_error(where, {"target_options": dict(s3_options, secret_access_key="not-the-secret")},
                          arrays=["table"])
    assert_names(error, "table/0.0", target, statuses={"ZARR_ERR_PERMISSION_DENIED", "ZARR_ERR_IO"})


@pytest.mark.parametrize("transport", ["nginx", "s3"])
def test_a_missing_remote_target_names_the_key_and_the_target(hdf5, tmp_path, request, transport):
    path, refs, values = hdf5
    if transport == "nginx":
        target, options = f"{request.getfixturevalue('http_copy')[1]}/gone.h5", None
    else:
        request.getfixturevalue("no_aws_environment")
        prefix, s3, s3_options = request.getfixturevalue("s3_copy")
        target, options = f"s3://{BUCKET}/{prefix}/gone.h5", {"target_options": s3_options}
    where = location(write_json(tmp_path / "refs.json", retarget(refs, str(path), target)))
    error = libzarr_error(where, options, arrays=["table"])
    assert_names(error, "table/0.0", target, statuses={"ZARR_ERR_NOT_FOUND", "ZARR_ERR_IO"})


# ----------------------------------------------------------------------------------------------------------- errors
def test_a_missing_target_names_the_key_and_the_target(own_hdf5, tmp_path):
    mine, refs, values = own_hdf5
    where = location(write_json(tmp_path / "refs.json", refs))
    mine.unlink()
    with open_refs(where) as store, store.open_array("table") as arr:  # the documents are inline
        assert arr.shape == values["table"].shape
    for name, key in [("table", "table/0.0"), ("pressure", None), ("temperature", None)]:
        error = libzarr_error(where, arrays=[name])
        chunk_keys = [k for k, v in refs["refs"].items() if k.startswith(f"{name}/") and isinstance(v, list)]
        assert any(k in error.message for k in chunk_keys), (error.name, error.message)
        assert_names(error, *([key] if key else []), str(mine),
                     statuses={"ZARR_ERR_NOT_FOUND", "ZARR_ERR_IO", "ZARR_ERR_CORRUPT_CHUNK"})


@pytest.mark.parametrize("damage", ["offset-moved", "file-truncated"])
def test_a_range_past_the_end_of_the_target_names_the_key_and_the_target(own_hdf5, tmp_path, damage):
    mine, refs, values = own_hdf5
    size = mine.stat().st_size
    target, offset, length = refs["refs"]["table/0.0"]
    if damage == "offset-moved":
        refs["refs"]["table/0.0"] = [target, size - length // 2, length]
    else:
        with open(mine, "r+b") as f:
            f.truncate(offset + length // 2)
    where = location(write_json(tmp_path / "refs.json", refs))
    error = libzarr_error(where, arrays=["table"])
    assert_names(error, "table/0.0", str(mine),
                 statuses={"ZARR_ERR_CORRUPT_CHUNK", "ZARR_ERR_IO", "ZARR_ERR_OUT_OF_BOUNDS", "ZARR_ERR_NOT_FOUND"})


def _set(key, value):
    def change(doc):
        doc["refs"][key] = value
        return doc
    return change


def _bad_gen(doc):
    doc["gen"] = [{"key": "extra/{{i}}", "url": doc["refs"]["table/0.0"][0], "offset": "{{i * 10}}",
                   "dimensions": {"i": {"stop": 3}}}]  # an offset without a length
    return doc


# name -> (change of Kerchunk's references, or the file's whole text; what the message must name)
MALFORMED = {
    "not-json": ("{ this is not JSON", None),
    "truncated-json": (lambda doc: json.dumps(doc)[:-40], None),
    "not-an-object": ("[1, 2, 3]", None),
    "number-value": (_set("coords/0", 7), "coords/0"),
    "null-value": (_set("coords/1", None), "coords/1"),
    "bad-base64": (_set("coords/2", "base64:this is not base64!"), "coords/2"),
    "two-item-list": (lambda doc: _set("table/0.0", doc["refs"]["table/0.0"][:2])(doc), "table/0.0"),
    "four-item-list": (lambda doc: _set("table/0.0", doc["refs"]["table/0.0"] + [1])(doc), "table/0.0"),
    "url-not-a-string": (_set("table/0.0", [12, 0, 4]), "table/0.0"),
    "offset-not-a-number": (lambda doc: _set("table/0.0", [doc["refs"]["table/0.0"][0], "0", 4])(doc), "table/0.0"),
    "negative-offset": (lambda doc: _set("table/0.0", [doc["refs"]["table/0.0"][0], -8, 4])(doc), "table/0.0"),
    "empty-list": (_set("table/0.0", []), "table/0.0"),
    "gen-offset-without-length": (_bad_gen, "gen"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_reference_file_names_the_key(hdf5, tmp_path, case):
    path, refs, values = hdf5
    change, key = MALFORMED[case]
    made = change if isinstance(change, str) else change(copy.deepcopy(refs))
    refs_path = tmp_path / "bad.json"
    refs_path.write_text(made if isinstance(made, str) else json.dumps(made), encoding="utf-8")
    error = libzarr_error(location(refs_path))
    assert_names(error, key if key else "bad.json", statuses={"ZARR_ERR_INVALID_METADATA"})


def test_an_unknown_version_is_refused(hdf5, tmp_path):
    path, refs, values = hdf5
    refs_path = write_json(tmp_path / "v2.json", dict(copy.deepcopy(refs), version=2))
    error = libzarr_error(location(refs_path))
    assert_names(error, "v2.json", "version", statuses={"ZARR_ERR_UNSUPPORTED", "ZARR_ERR_INVALID_METADATA"})


def test_a_missing_reference_file_is_not_found(tmp_path):
    error = libzarr_error(location(tmp_path / "none.json"))
    assert_names(error, "none.json", statuses={"ZARR_ERR_NOT_FOUND"})


@pytest.mark.parametrize("mode", ["a", "w", "r+", "w-"])
def test_opening_for_writing_is_refused_and_changes_nothing(own_hdf5, tmp_path, mode):
    mine, refs, values = own_hdf5
    refs_path = write_json(tmp_path / "refs.json", refs)
    before = {p: p.read_bytes() for p in (refs_path, mine)}
    with pytest.raises(libzarr.LibzarrError) as caught:
        with libzarr.Store.open(location(refs_path), mode) as store:
            store.create_group("new")
    assert_names(caught.value, "refs.json", statuses={"ZARR_ERR_READ_ONLY", "ZARR_ERR_INVALID_ARGUMENT"})
    with open_refs(location(refs_path)) as store, store.open_array("table") as arr:
        with pytest.raises(libzarr.LibzarrError) as written:
            arr.write(np.zeros((2, 2), "<u4"))
        assert written.value.name == "ZARR_ERR_READ_ONLY", (written.value.name, written.value.message)
        with pytest.raises(libzarr.LibzarrError) as set_key:
            store.set("table/0.0", b"x")
        assert set_key.value.name == "ZARR_ERR_READ_ONLY", (set_key.value.name, set_key.value.message)
        np.testing.assert_array_equal(arr.read(), values["table"])
    assert {p: p.read_bytes() for p in before} == before


# ---------------------------------------------------------------------------------- Parquet reference directories
RECORD_SIZE = 3  # references per record file: arrays span several files, the last one partial
DEFAULT_ENGINE = inspect.signature(LazyReferenceMapper.__init__).parameters["engine"].default
PARQUET_ENGINES = ["fastparquet", "pyarrow"]
# layout -> (record_size, categorical_threshold) given to refs_to_dataframe
PARQUET_LAYOUTS = {
    "record-size-3": (RECORD_SIZE, 10),
    "one-record-per-array": (100_000, 10),  # refs_to_dataframe's default record size
    "categorical-paths": (RECORD_SIZE, 0),  # every path column a pandas Categorical: a Parquet dictionary column
}


def write_parquet_refs(refs, directory, engine=DEFAULT_ENGINE, record_size=RECORD_SIZE, categorical_threshold=10):
    """The reference set `refs` as a Parquet reference directory, written by `kerchunk.df.refs_to_dataframe`, which
    takes LazyReferenceMapper's default engine; for the other engine, the same steps (create, set every key in
    sorted order, flush) with `engine=`."""
    directory = str(directory)
    if engine == DEFAULT_ENGINE:
        kerchunk.df.refs_to_dataframe(copy.deepcopy(refs), directory, record_size=record_size,
                                      categorical_threshold=categorical_threshold)
    else:
        out = LazyReferenceMapper.create(directory, record_size=record_size, engine=engine,
                                         categorical_threshold=categorical_threshold)
        inner = refs["refs"] if "version" in refs else refs
        for key in sorted(inner):
            out[key] = inner[key]
        out.flush()
    return Path(directory)


def with_a_whole_file(refs, directory):
    """A copy of `refs` whose chunk `table/0.0` (the contiguous dataset, stored as it is) is a whole-file reference
    `[url]` to `directory`/table.bin, which holds just its bytes (in Parquet: a path with offset and size 0)."""
    url, offset, length = refs["refs"]["table/0.0"]
    with open(url, "rb") as f:
        f.seek(offset)
        data = f.read(length)
    whole = Path(directory) / "table.bin"
    whole.write_bytes(data)
    out = copy.deepcopy(refs)
    out["refs"]["table/0.0"] = [str(whole)]
    return out


class FsspecParquetRefs(LazyReferenceMapper):
    """fsspec's LazyReferenceMapper, except that a row whose path is not text is no reference. pandas reads the
    missing paths of a Categorical column (`categorical_threshold`), and under pandas 3 of any text column (its `str`
    dtype), as NaN, not None; fsspec's `cat` of several keys skips such a "reference" as missing (fsspec PR #1738),
    but its `_cat_file`, which zarr-python calls, takes it for a whole file at the URL NaN and fails (TypeError:
    argument of type 'float' is not iterable) where the fill value belongs (fsspec 2026.9)."""

    def _load_one_key(self, key):
        value = super()._load_one_key(key)
        if isinstance(value, list) and not isinstance(value[0], str):
            raise KeyError(key)
        return value


def fsspec_parquet(directory, engine=DEFAULT_ENGINE):
    """fsspec's ReferenceFileSystem over a local Parquet reference directory with local targets, its record files
    read with `engine` (FsspecParquetRefs). `remote_protocol` is given: without it fsspec walks the references to
    find the targets' protocol, and the walk takes a group (`grp`, from `grp/.zgroup`) for an array and fails
    looking up `grp/.zarray` (KeyError), depending on the order of a set, so on PYTHONHASHSEED."""
    return reference_fs(FsspecParquetRefs(str(directory), fs=fsspec.filesystem("file"), engine=engine),
                        remote_protocol="file")


def fsspec_parquet_keys(fs):
    """The keys of fsspec's LazyReferenceMapper: its documents, and each array's chunk keys it has a reference for.
    Iterating the mapper should give these, but it fails on a subgroup (it takes `grp` for an array, as above); it
    would also give `.zmetadata`, its own file and no Zarr key, which libzarr does not list (nor serve)."""
    mapper = fs.references
    arrays = [k[:-len("/.zarray")] for k in mapper.zmetadata if k.endswith("/.zarray")]
    chunks = [k for name in arrays for k in fs.ls(name, detail=False) if k not in mapper.zmetadata and k in mapper]
    return sorted([*mapper.zmetadata, *chunks])


def check_parquet_keys_and_bytes(store, fs, keys):
    """libzarr lists `keys`, which are fsspec's, in whole and below a few prefixes, and gives fsspec's bytes for
    each key (documents compared as JSON: fsspec writes them with json.dumps)."""
    assert fsspec_parquet_keys(fs) == sorted(keys)
    assert sorted(store.list_keys("")) == sorted(keys)
    for prefix in ("grp/", "grp/inner/", "pressure/", "scalar/"):
        assert sorted(store.list_keys(prefix)) == sorted(k for k in keys if k.startswith(prefix)), prefix
    for key in keys:
        want, got = fs.cat(key), store.get(key)
        if key in fs.references.zmetadata:
            assert json.loads(got) == json.loads(want), key
        else:
            assert got == want, key


def chunk_keys(refs, name):
    """The chunk keys of array `name` of `refs`, in C order over its chunk grid (`0` for a 0-d array)."""
    zarray = document(refs, f"{name}/.zarray")
    grid = [math.ceil(s / c) for s, c in zip(zarray["shape"], zarray["chunks"])]
    return [f"{name}/" + (".".join(map(str, index)) or "0") for index in np.ndindex(*grid)]


def parquet_row(value):
    """The row LazyReferenceMapper writes for the reference `value` (None: no reference)."""
    if value is None:
        return {"path": None, "offset": 0, "size": 0, "raw": None}
    if isinstance(value, list):
        return {"path": value[0], "offset": value[1] if len(value) > 1 else 0,
                "size": value[2] if len(value) > 1 else 0, "raw": None}
    raw = base64.b64decode(value[len("base64:"):]) if value.startswith("base64:") else value.encode()
    return {"path": None, "offset": 0, "size": 0, "raw": raw}


def files_below(directory):
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(Path(directory).rglob("*"))
            if p.is_file()}


def world_readable(root):
    """nginx's worker is another user."""
    for p in [Path(root), *Path(root).rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)


def upload(s3, directory, prefix):
    import obstore
    for name, data in files_below(directory).items():
        obstore.put(s3, f"{prefix}/{name}", data)


@pytest.mark.parametrize("engine", PARQUET_ENGINES)
def test_kerchunk_writes_parquet_references_of_every_kind(hdf5, tmp_path, engine):
    """Pins what the Parquet tests rely on: refs_to_dataframe writes with fastparquet (LazyReferenceMapper's default
    engine); `.zmetadata` holds every document, as JSON objects, and the record size; chunk n of an array (C order
    over its grid) is row n % record_size of `FIELD/refs.{n // record_size}.parq`, a file of record_size rows of
    path, offset, size and raw: the bytes themselves for inline chunks (base64 decoded, text in UTF-8), a path with
    offset and size 0 for a whole file, neither for a chunk never written and for the rows past the grid in the
    last, partial record file; a record file without a chunk written is not written at all."""
    path, refs, values = hdf5
    assert DEFAULT_ENGINE == "fastparquet"
    doc = with_a_whole_file(refs, tmp_path)
    directory = write_parquet_refs(doc, tmp_path / "refs.parq", engine)
    inner = doc["refs"]
    documents = {k: json.loads(v) for k, v in inner.items() if k.split("/")[-1].startswith(".z")}
    assert json.loads((directory / ".zmetadata").read_text()) == {"metadata": documents, "record_size": RECORD_SIZE}
    files = {".zmetadata"}
    for name in arrays_of(doc):
        keys = chunk_keys(doc, name)
        for r in range(math.ceil(len(keys) / RECORD_SIZE)):
            part = keys[r * RECORD_SIZE:(r + 1) * RECORD_SIZE]
            rows = [parquet_row(inner.get(k)) for k in part] + [parquet_row(None)] * (RECORD_SIZE - len(part))
            record = directory / name / f"refs.{r}.parq"
            if not any(k in inner for k in part):
                assert not record.exists(), record
                continue
            files.add(f"{name}/refs.{r}.parq")
            table = pq.read_table(record)
            assert table.column_names == ["path", "offset", "size", "raw"], record
            assert table.to_pylist() == rows, record
    assert set(files_below(directory)) == files
    # what the tests below need, among what the loop checked
    assert {"temperature/refs.2.parq", "grp/inner/refs.1.parq", "pressure/refs.3.parq"} <= files
    assert "pressure/refs.2.parq" not in files  # chunks 6-8 of pressure were never written
    assert len(chunk_keys(doc, "grp/inner")) % RECORD_SIZE  # the last record file is partial
    assert all(isinstance(inner[k], str) for k in chunk_keys(doc, "coords"))  # inline: raw rows
    assert [k for k in chunk_keys(doc, "grp/nanfill") if k not in inner] == ["grp/nanfill/0", "grp/nanfill/2"]
    assert inner["table/0.0"] == [str(tmp_path / "table.bin")]  # a whole file
    assert pq.read_table(directory / "table" / "refs.0.parq").to_pylist()[0] == \
        {"path": str(tmp_path / "table.bin"), "offset": 0, "size": 0, "raw": None}


@pytest.mark.parametrize("layout", sorted(PARQUET_LAYOUTS))
@pytest.mark.parametrize("engine", PARQUET_ENGINES)
def test_libzarr_reads_parquet_references_as_h5py_and_zarr_python(hdf5, tmp_path, engine, layout):
    """The references (with a whole-file one) as a Parquet directory: libzarr lists fsspec's keys and gives its
    bytes, reads every array as h5py does (the fill value for chunks never written) with Kerchunk's attributes,
    and zarr-python reads the same through fsspec."""
    path, refs, values = hdf5
    doc = with_a_whole_file(refs, tmp_path)
    record_size, categorical_threshold = PARQUET_LAYOUTS[layout]
    directory = write_parquet_refs(doc, tmp_path / "refs.parq", engine, record_size, categorical_threshold)
    fs = fsspec_parquet(directory, engine)
    check_zarr_python(fs, doc, values)
    with open_refs(location(directory)) as store:
        check_parquet_keys_and_bytes(store, fs, doc["refs"])
        check_arrays(store, doc, values)
        check_groups(store, doc)


@pytest.mark.parametrize("form", ["relative", "trailing-slash", "file-url"])
def test_parquet_references_through_other_spellings_of_the_directory(hdf5, tmp_path, form):
    path, refs, values = hdf5
    directory = write_parquet_refs(refs, tmp_path / "refs" / "kerchunk-refs")  # no ".parq": a local directory
    where = {"relative": "refs/kerchunk-refs",  # the tests run in tmp_path (_in_tmp_path)
             "trailing-slash": f"{directory}/", "file-url": f"file://{directory}"}[form]
    with open_refs(location(where)) as store:
        assert sorted(store.list_keys("")) == sorted(refs["refs"])
        check_arrays(store, refs, values)


def test_a_deleted_record_file_holds_only_chunks_never_written(hdf5, tmp_path):
    """A record file that does not exist holds no references: libzarr reads the fill value for its chunks, as
    fsspec (and zarr-python through it) does, and lists none of them."""
    path, refs, values = hdf5
    directory = write_parquet_refs(refs, tmp_path / "refs.parq")
    (directory / "temperature" / "refs.1.parq").unlink()  # chunks 3-5: temperature/1.0, 1.1 and 1.2
    (directory / "pressure" / "refs.3.parq").unlink()  # chunks 9-11, of which 2.1.1 was written
    expected = dict(values, temperature=values["temperature"].copy(), pressure=values["pressure"].copy())
    expected["temperature"][16:32] = 0
    expected["pressure"][8:10, 5:9, 8:12] = -9.5
    assert (values["temperature"][16:32] != 0).any() and (values["pressure"][8:10, 5:9, 8:12] != -9.5).all()
    keys = sorted(set(refs["refs"]) - {"temperature/1.0", "temperature/1.1", "temperature/1.2", "pressure/2.1.1"})
    fs = fsspec_parquet(directory)
    check_zarr_python(fs, refs, expected)
    with open_refs(location(directory)) as store:
        check_parquet_keys_and_bytes(store, fs, keys)
        check_arrays(store, refs, expected)


# name -> the damage done to a record file's bytes
RECORD_DAMAGE = {
    "garbage": lambda data: b"these bytes are not a Parquet file, " * 4,
    "truncated": lambda data: data[:len(data) // 2],
    "empty": lambda data: b"",
    # the magic numbers and the footer kept, the column chunks zeroed
    "pages-zeroed": lambda data: data[:4] + bytes(len(data) - 12 - int.from_bytes(data[-8:-4], "little"))
    + data[len(data) - 8 - int.from_bytes(data[-8:-4], "little"):],
}


@pytest.mark.parametrize("damage", sorted(RECORD_DAMAGE))
def test_a_damaged_record_file_is_named(hdf5, tmp_path, damage):
    """A damaged record file is invalid metadata naming it, when a chunk of it is read and when the keys are
    listed (not left out of the listing); the other record files still read."""
    path, refs, values = hdf5
    directory = write_parquet_refs(refs, tmp_path / "refs.parq")
    record = directory / "temperature" / "refs.1.parq"
    data = record.read_bytes()
    damaged = RECORD_DAMAGE[damage](data)
    assert damaged != data and (damage != "pages-zeroed" or len(damaged) == len(data))
    record.write_bytes(damaged)
    error = libzarr_error(location(directory), arrays=["temperature"])
    assert_names(error, str(record), statuses={"ZARR_ERR_INVALID_METADATA"})
    with open_refs(location(directory)) as store:
        with store.open_array("pressure") as arr:
            np.testing.assert_array_equal(arr.read(), values["pressure"])
        with store.open_array("temperature") as arr:  # chunk 0.0 is in refs.0.parq
            np.testing.assert_array_equal(arr.read((0, 0), (16, 32)), values["temperature"][:16, :32])
        with pytest.raises(libzarr.LibzarrError) as listing:
            store.list_keys("")
        assert_names(listing.value, str(record), statuses={"ZARR_ERR_INVALID_METADATA"})


def _zmetadata(change):
    def damage(text):
        doc = json.loads(text)
        change(doc)
        return json.dumps(doc)
    return damage


# name -> the damage done to the text of .zmetadata
ZMETADATA_DAMAGE = {
    "not-json": lambda text: "{ this is not JSON",
    "truncated": lambda text: text[:len(text) // 2],
    "not-an-object": lambda text: "[1, 2, 3]",
    "no-record-size": _zmetadata(lambda doc: doc.pop("record_size")),
    "record-size-zero": _zmetadata(lambda doc: doc.update(record_size=0)),
    "record-size-text": _zmetadata(lambda doc: doc.update(record_size="3")),
    "no-metadata": _zmetadata(lambda doc: doc.pop("metadata")),
    "metadata-a-list": _zmetadata(lambda doc: doc.update(metadata=[1, 2])),
    "zarray-not-json": _zmetadata(lambda doc: doc["metadata"].update({"temperature/.zarray": "{ not JSON"})),
    "zarray-without-chunks": _zmetadata(lambda doc: doc["metadata"]["temperature/.zarray"].pop("chunks")),
}


@pytest.mark.parametrize("damage", sorted(ZMETADATA_DAMAGE))
def test_a_damaged_zmetadata_is_named(hdf5, tmp_path, damage):
    path, refs, values = hdf5
    directory = write_parquet_refs(refs, tmp_path / "refs.parq")
    zmetadata = directory / ".zmetadata"
    zmetadata.write_text(ZMETADATA_DAMAGE[damage](zmetadata.read_text()))
    error = libzarr_error(location(directory))
    assert_names(error, str(zmetadata), statuses={"ZARR_ERR_INVALID_METADATA"})


def test_a_directory_without_zmetadata_is_not_found(hdf5, tmp_path):
    path, refs, values = hdf5
    directory = write_parquet_refs(refs, tmp_path / "refs.parq")
    (directory / ".zmetadata").unlink()
    error = libzarr_error(location(directory))
    assert_names(error, str(directory), ".zmetadata", statuses={"ZARR_ERR_NOT_FOUND"})


@pytest.mark.parametrize("damage", ["target-deleted", "target-truncated", "whole-file-deleted"])
def test_a_missing_or_short_target_of_parquet_references_names_the_key_and_the_target(own_hdf5, tmp_path, damage):
    mine, refs, values = own_hdf5
    doc = with_a_whole_file(refs, tmp_path) if damage == "whole-file-deleted" else refs
    directory = write_parquet_refs(doc, tmp_path / "refs.parq")
    statuses = {"ZARR_ERR_NOT_FOUND", "ZARR_ERR_IO", "ZARR_ERR_CORRUPT_CHUNK"}
    if damage == "target-deleted":
        mine.unlink()
        gone = mine
    elif damage == "target-truncated":
        target, offset, length = refs["refs"]["table/0.0"]
        with open(mine, "r+b") as f:
            f.truncate(offset + length // 2)
        gone = mine
        statuses.add("ZARR_ERR_OUT_OF_BOUNDS")
    else:
        gone = tmp_path / "table.bin"
        gone.unlink()
    error = libzarr_error(location(directory), arrays=["table"])
    assert_names(error, "table/0.0", str(gone), statuses=statuses)
    if damage == "target-deleted":
        error = libzarr_error(location(directory), arrays=["temperature"])
        chunks = [k for k in chunk_keys(refs, "temperature") if isinstance(refs["refs"][k], list)]
        assert any(k in error.message for k in chunks), (error.name, error.message)
        assert_names(error, str(mine), statuses=statuses)
        with open_refs(location(directory)) as store:  # inline chunks and the documents need no target
            for name in ("coords", "scalar"):
                with store.open_array(name) as arr:
                    np.testing.assert_array_equal(arr.read(), values[name])
            check_groups(store, refs)


@pytest.mark.parametrize("mode", ["a", "w", "r+", "w-"])
def test_opening_parquet_references_for_writing_is_refused_and_changes_nothing(hdf5, tmp_path, mode):
    path, refs, values = hdf5
    directory = write_parquet_refs(refs, tmp_path / "refs.parq")
    before = files_below(directory)
    with pytest.raises(libzarr.LibzarrError) as caught:
        with libzarr.Store.open(location(directory), mode) as store:
            store.create_group("new")
    assert_names(caught.value, str(directory), statuses={"ZARR_ERR_READ_ONLY", "ZARR_ERR_INVALID_ARGUMENT"})
    with open_refs(location(directory)) as store, store.open_array("table") as arr:
        for change in (lambda: arr.write(np.zeros((2, 2), "<u4")), lambda: store.set("table/0.0", b"x"),
                       lambda: store.erase("temperature/0.0"), lambda: store.set("new/.zgroup", b"{}")):
            with pytest.raises(libzarr.LibzarrError) as refused:
                change()
            assert refused.value.name == "ZARR_ERR_READ_ONLY", (refused.value.name, refused.value.message)
        np.testing.assert_array_equal(arr.read(), values["table"])
    assert files_below(directory) == before


@pytest.mark.parametrize("spelling", ["refs.parq", "refs.parq/"])
def test_parquet_references_served_by_nginx(hdf5, http_copy, tmp_path, spelling):
    """The directory and its targets (the HDF5 file and a whole file) on nginx, which serves files but lists no
    directory (no autoindex; `GET .../refs.parq` is redirected to `refs.parq/`, which is 403). Every document comes
    from `.zmetadata` and each record file has a name known from the chunk's number, so the arrays, their
    attributes and the groups' attributes must read. A listing needs the record files present, which a web server
    cannot list: libzarr must then either list the right keys or fail naming the directory, never list fewer."""
    path, refs, values = hdf5
    directory, base = http_copy
    doc = with_a_whole_file(refs, tmp_path)
    shutil.copyfile(tmp_path / "table.bin", directory / "table.bin")
    doc = retarget(retarget(doc, str(path), f"{base}/data.h5"), str(tmp_path / "table.bin"), f"{base}/table.bin")
    write_parquet_refs(doc, directory / "refs.parq")
    world_readable(directory)
    with urllib.request.urlopen(f"{base}/refs.parq/.zmetadata", timeout=10) as r:
        assert json.loads(r.read())["record_size"] == RECORD_SIZE
    with open_refs(location(f"{base}/{spelling}")) as store:
        check_arrays(store, doc, values)
        for group in ("", "grp"):
            with store.open_group(group) as g:
                assert g.attrs() == document(doc, f"{group}/.zattrs".lstrip("/")), group
        for listing in (lambda: assert_keys(store, sorted(doc["refs"])), lambda: check_groups(store, doc)):
            try:
                listing()
            except libzarr.LibzarrError as e:
                assert_names(e, f"{base}/refs.parq")


def assert_keys(store, keys):
    assert sorted(store.list_keys("")) == keys


def test_parquet_references_in_s3(hdf5, s3_copy, tmp_path, no_aws_environment):
    """The directory in the bucket, read with the S3 options at the top level, and its targets (the HDF5 file and
    a whole file) in the bucket too, read with `target_options`: everything reads and lists as from a local
    directory."""
    import obstore
    path, refs, values = hdf5
    prefix, s3, s3_options = s3_copy
    doc = with_a_whole_file(refs, tmp_path)
    obstore.put(s3, f"{prefix}/table.bin", (tmp_path / "table.bin").read_bytes())
    doc = retarget(retarget(doc, str(path), f"s3://{BUCKET}/{prefix}/data.h5"), str(tmp_path / "table.bin"),
                   f"s3://{BUCKET}/{prefix}/table.bin")
    upload(s3, write_parquet_refs(doc, tmp_path / "refs.parq"), f"{prefix}/refs.parq")
    where = location(f"s3://{BUCKET}/{prefix}/refs.parq")
    with open_refs(where, dict(s3_options, target_options=s3_options)) as store:
        assert sorted(store.list_keys("")) == sorted(doc["refs"])
        assert sorted(store.list_keys("grp/")) == sorted(k for k in doc["refs"] if k.startswith("grp/"))
        check_arrays(store, doc, values)
        check_groups(store, doc)


@pytest.mark.parametrize("transport", ["nginx", "s3"])
def test_parquet_references_from_the_network_may_not_read_local_files(hdf5, tmp_path, request, transport):
    """A Parquet directory read over the network whose targets are local files is refused, naming the key and the
    file, as a JSON reference file is."""
    path, refs, values = hdf5
    local = write_parquet_refs(refs, tmp_path / "refs.parq")
    if transport == "nginx":
        directory, base = request.getfixturevalue("http_copy")
        shutil.copytree(local, directory / "refs.parq")
        world_readable(directory)
        where, options = location(f"{base}/refs.parq"), None
    else:
        request.getfixturevalue("no_aws_environment")
        prefix, s3, s3_options = request.getfixturevalue("s3_copy")
        upload(s3, local, f"{prefix}/refs.parq")
        where, options = location(f"s3://{BUCKET}/{prefix}/refs.parq"), s3_options
    error = libzarr_error(where, options, arrays=["table"])
    assert_names(error, "table/0.0", str(path),
                 statuses={"ZARR_ERR_PERMISSION_DENIED", "ZARR_ERR_INVALID_ARGUMENT", "ZARR_ERR_INVALID_PATH"})


def test_a_wrong_secret_for_a_parquet_directory_in_s3_is_refused(hdf5, s3_copy, tmp_path, no_aws_environment):
    """A wrong secret in the options of the directory's own store is refused naming the directory, never taken
    for a directory without `.zmetadata` or for chunks never written."""
    path, refs, values = hdf5
    prefix, s3, s3_options = s3_copy
    doc = retarget(refs, str(path), f"s3://{BUCKET}/{prefix}/data.h5")
    upload(s3, write_parquet_refs(doc, tmp_path / "refs.parq"), f"{prefix}/refs.parq")
    wrong = dict(s3_options, secret_access_key="not-the-secret")
    error = libzarr_error(location(f"s3://{BUCKET}/{prefix}/refs.parq"), dict(wrong, target_options=s3_options),
                          arrays=["table"])
    assert_names(error, f"{BUCKET}/{prefix}", statuses={"ZARR_ERR_PERMISSION_DENIED", "ZARR_ERR_IO"})
