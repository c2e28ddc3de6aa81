"""Rectilinear chunk grids (zarr-extensions' `rectilinear`, `kind: "inline"`: per dimension a bare chunk length
repeated, or a list of lengths and `[length, repeat]` runs, adding up to at least the dimension's length) against
zarr-python 3.4 (rectilinear grids on with `zarr.config.set({"array.rectilinear_chunks": True})`, only inside
each step) and zarrs (zarrs-python 0.2.3's codec pipeline in strict mode), both directions.

Covered, with outer chunks of several lengths per dimension:
* grid forms: explicit lists, runs, runs mixed with single lengths, a bare-int dimension next to a listed one,
  lists that reach past the array's end (the last chunk sticks out, or whole listed chunks lie past the end),
  1-D, 2-D and 3-D arrays and a dimension of length 0;
* data types int8, int16, uint16, int32, float32, float64, complex64, bool and `string` (vlen-utf8; libzarr
  reads it with read_vlen); codecs `bytes` little and big endian, gzip, zstd, transpose, crc32c; three chunk
  key encodings; fill values (an outer chunk never written reads as the fill value, and is not stored);
* zarr-python and zarrs write (through zarr-python's `create_array(chunks=[[...], ...])`, or, for lists that
  reach past the end, `chunks=RectilinearChunkGridMetadata`, which zarr-python stores as given) and libzarr
  reads: the getters (`grid_shape`, `block_box` of every chunk against zarr-python's `write_chunk_sizes`,
  `chunks` refused for unequal chunks), the metadata, and whole reads, boxes crossing chunk boundaries,
  strided boxes, orthogonal index lists (unsorted, repeated, Boolean flags, an int dropping its axis), points,
  masks and blocks, each against NumPy indexing of the array written (blocks also against zarr-python's
  `get_block_selection`);
* libzarr writes from a zarr.json (chunk_grid spelt in a non-canonical form: expanded lists, runs of one)
  and zarr-python and zarrs read: the stored chunk_grid is the one given, byte for byte, exactly the chunks
  that do not hold only the fill value are stored, zarr-python reads the same grid and values, and chunks of
  codec chains that are the same bytes in every implementation (bytes, transpose, crc32c) are byte for byte
  zarr-python's (edge chunks padded alike); libzarr also writes through every kind of selection;
* resize and append by libzarr (a list that falls short gains one chunk of the growth, a bare int stays, a
  shrink keeps the list), numbers, strings, a dimension of length 0 and shards: zarr-python reads the new
  shape, the grid and the values after each step. Where the grid changed, libzarr's zarr.json must spell it
  as zarr-python does for the same steps on a twin array (runs merged: `[[3, 2], [4, 2]]`). Where it did not
  change, the spelling must stay as it was. The handle that resized must carry the new document (its
  `metadata`, a view and a copy made through it); and zarr-python resizing and appending to its arrays,
  libzarr reading each step;
* copies: libzarr's zarr_array_copy_to from a regular grid to a rectilinear one and back, from one
  rectilinear grid to another with new codecs, and from a Zarr v2 array to a rectilinear v3 one
  (`"zarr_format": 3`): the chunk_grid as asked, the values and the chunks stored;
* grids whose lengths fall short of the shape are refused by both.

`zarr_array_chunks` must give the chunk shape when every dimension is a bare int and refuse
(ZARR_ERR_UNSUPPORTED) when a dimension lists chunks of different lengths; for a list that repeats one length
(`[[4, 3]]`) nothing is asserted (libzarr refuses it, as zarr-python's `.chunks` does).

zarr-python 3.4.2, read from its source (core/chunk_grids.py, core/metadata/v3.py, core/array.py) and checked:
`chunks=` lists must add up to the shape exactly, so lists reaching past the end go through
`RectilinearChunkGridMetadata`; it writes every listed dimension with runs merged (`[3, 3, 4]` is stored as
`[[3, 2], 4]`); rectilinear `chunks=` together with `shards=` is refused, so rectilinear shards are
`shards=[[...], ...]` over regular `chunks=` (the index location through `shards={"shape", "index_location"}`,
at the end when the shards are given as metadata). zarr-python's `.chunks` raises for any listed dimension.

zarrs: zarrs-python 0.2.3 accepts rectilinear arrays in strict mode (no fallback, checked with check_zarrs),
writes them and reads them. Its Rust pipeline (`CodecPipelineImpl`) never reads `chunk_grid` (it accepts a
document naming a grid "frobnicate", or chunk lengths that do not reach the shape): zarr-python gives it each
chunk's shape, so through zarr-python the grid's geometry is zarr-python's and zarrs runs the codecs on chunks
of every shape. The raw reads here (zarrs' pipeline alone, given libzarr's zarr.json byte for byte) take the
chunks' shapes from this module's own expansion of the grid. zarrs leaves strings to zarr-python (strict mode
raises UnsupportedDataTypeError), so the zarrs cases are numbers and bool. No zarrs xfail was needed.

Sharding inside a rectilinear grid (zarr-python 3.4 writes rectilinear shards of regular inner chunks that
divide every shard length: `chunks=inner, shards=[[...], ...]`) is in its own test functions
(`test_*_sharded*`, `test_copy_to_rectilinear_shards`), all expecting success.

zarr-python 3.1 and 2.x have no rectilinear grids: the module skips itself there.
"""
import dataclasses
import itertools
import json

import pytest

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("Zarr v3 needs zarr-python 3", allow_module_level=True)
try:
    from zarr.core.metadata.v3 import RectilinearChunkGridMetadata
except ImportError:
    pytest.skip(f"zarr-python {zarr.__version__} has no rectilinear chunk grids (3.4 and later)",
                allow_module_level=True)
try:
    import zarrs
    from zarrs._internal import ChunkItem, CodecPipelineImpl
except ImportError:  # the zarrs cases skip themselves
    zarrs = None

import numpy as np  # noqa: E402
from zarr.storage import LocalStore  # noqa: E402

# zarr-python's warnings about data types without a v3 spec (strings)
pytestmark = [pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning"),
              pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")]
pytest.register_assert_rewrite("v3cases")
import libzarr  # noqa: E402
from v3cases import (BE, CRC, DTYPE, GZIP, KEY_ENCODINGS, LE, ONE, ZSTD, ZSTD0, as_bytes, assert_same,  # noqa: E402
                     chunk_files, codecs_meaning, fill_array, is_all_fill, load_json, not_fill, python_fill,
                     random_values)

RECTILINEAR = {"array.rectilinear_chunks": True}
ZARRS = dict(RECTILINEAR, **{"codec_pipeline.path": "zarrs.ZarrsCodecPipeline", "codec_pipeline.strict": True})
needs_zarrs = pytest.mark.skipif(zarrs is None, reason="zarrs is not installed")

VLEN = {"name": "vlen-utf8", "configuration": {}}
SAME_BYTES = {"bytes", "transpose", "crc32c", "vlen-utf8"}  # codecs every implementation encodes alike


def transpose(*order):
    return {"name": "transpose", "configuration": {"order": list(order)}}


def sharding(inner, codecs, location="end"):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs, "index_codecs": [LE, CRC], "index_location": location}}


# ---------------------------------------------------------------- grid geometry (this module's own reading)
def lengths(item):
    """The chunk lengths a listed `chunk_shapes` item declares (runs expanded)."""
    out = []
    for x in item:
        out += [x[0]] * x[1] if isinstance(x, list) else [x]
    return out


def runs(item):
    """The canonical spelling of a `chunk_shapes` item, as zarr-python writes it: a bare int stays, a list
    becomes runs of more than one chunk as [length, repeat] and single chunks as ints."""
    if isinstance(item, int):
        return item
    out = []
    for n in lengths(item):
        if out and isinstance(out[-1], list) and out[-1][0] == n:
            out[-1][1] += 1
        elif out and out[-1] == n and not isinstance(out[-1], list):
            out[-1] = [n, 2]
        else:
            out.append(n)
    return out


def axis(item, extent):
    """(start, length) of the chunks along a dimension of `extent` that hold elements of it (a chunk's length
    is its encoded length: the last one may reach past the end)."""
    if isinstance(item, int):
        return [(i * item, item) for i in range(-(-extent // item))]
    out, start = [], 0
    for n in lengths(item):
        if start >= extent:
            break
        out.append((start, n))
        start += n
    assert start >= extent, f"{item} does not reach {extent}"
    return out


def grid_axes(chunk_grid, shape):
    conf = chunk_grid["configuration"]
    items = conf["chunk_shape"] if chunk_grid["name"] == "regular" else conf["chunk_shapes"]
    return [axis(item, n) for item, n in zip(items, shape)]


def rect(*chunk_shapes):
    return {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": list(chunk_shapes)}}


def regular(*chunk_shape):
    return {"name": "regular", "configuration": {"chunk_shape": list(chunk_shape)}}


def key_of(key_encoding, idx):
    sep = (key_encoding.get("configuration") or {}).get("separator", "/")
    return sep.join((["c"] if key_encoding["name"] == "default" else []) + [str(i) for i in idx])


class Geometry:
    """The chunks of an array of `shape` in `chunk_grid`, read here from the grid's JSON."""

    def __init__(self, chunk_grid, shape, key_encoding=KEY_ENCODINGS[0]):
        self.shape, self.key_encoding = tuple(shape), key_encoding
        self.axes = grid_axes(chunk_grid, shape)

    @property
    def grid_shape(self):
        return tuple(len(a) for a in self.axes)

    @property
    def sizes(self):
        """Per dimension the chunks' lengths inside the array (zarr-python's write_chunk_sizes)."""
        return tuple(tuple(min(n, e - s) for s, n in a) for a, e in zip(self.axes, self.shape))

    def indices(self):
        return list(itertools.product(*(range(len(a)) for a in self.axes)))

    def start(self, idx):
        return tuple(a[i][0] for a, i in zip(self.axes, idx))

    def count(self, idx):
        return tuple(min(a[i][1], e - a[i][0]) for a, i, e in zip(self.axes, idx, self.shape))

    def codec_shape(self, idx):
        return tuple(a[i][1] for a, i in zip(self.axes, idx))

    def region(self, idx):
        return tuple(slice(s, s + c) for s, c in zip(self.start(idx), self.count(idx)))

    def key(self, idx):
        return key_of(self.key_encoding, idx)

    def keys_not_fill(self, expected, fill):
        """The chunk keys a writer that stores no chunk holding only the fill value leaves."""
        return {self.key(idx) for idx in self.indices() if not is_all_fill(expected[self.region(idx)], fill)}


# ---------------------------------------------------------------- the cases
@dataclasses.dataclass(frozen=True)
class Case:
    dtype: str  # a v3cases.DTYPE label
    fill: object  # zarr.json fill_value
    shape: tuple
    grid: list  # chunk_shapes as given to libzarr (it must store them so)
    codecs: list
    untouched: tuple = None  # an outer chunk never written (reads as the fill value)
    ke: int = 0  # v3cases.KEY_ENCODINGS index

    @property
    def dt(self):
        return DTYPE[self.dtype]

    @property
    def strings(self):
        return self.dt.kind == "T"

    @property
    def native(self):
        return np.dtype(object) if self.strings else self.dt.np.newbyteorder("=")

    @property
    def key_encoding(self):
        return KEY_ENCODINGS[self.ke]

    def chunk_grid(self, canonical=False):
        return rect(*[runs(i) for i in self.grid] if canonical else self.grid)

    def doc(self, canonical=False):
        return json.loads(json.dumps({
            "zarr_format": 3, "node_type": "array", "shape": list(self.shape), "data_type": self.dt.data_type,
            "chunk_grid": self.chunk_grid(canonical), "chunk_key_encoding": self.key_encoding,
            "fill_value": self.fill, "codecs": self.codecs, "attributes": {}, "storage_transformers": []}))

    @property
    def geometry(self):
        return Geometry(self.chunk_grid(), self.shape, self.key_encoding)

    @property
    def sharded(self):
        return self.codecs[0]["name"] == "sharding_indexed"

    @property
    def inner(self):
        return tuple(self.codecs[0]["configuration"]["chunk_shape"]) if self.sharded else None

    @property
    def equal_chunks(self):
        """The one chunk shape when every dimension is a bare int, False when some dimension lists chunks of
        different lengths, None when a list repeats one length (zarr-python refuses `.chunks` for any list)."""
        if all(isinstance(i, int) for i in self.grid):
            return tuple(self.grid)
        if any(not isinstance(i, int) and len(set(lengths(i))) > 1 for i in self.grid):
            return False
        return None

    @property
    def exact(self):
        """Whether every listed dimension adds up to its length (zarr-python's `chunks=` lists must)."""
        return all(isinstance(i, int) or sum(lengths(i)) == n or n == 0 for i, n in zip(self.grid, self.shape))

    def fill_array(self):
        return fill_array(self.dt, self.fill)

    def data(self, seed):
        """The array's contents once every outer chunk but `untouched` is written: seeded random values, none
        of the written chunks holding only the fill value."""
        rng = np.random.default_rng(seed)
        values = random_values(self.dt, self.shape, rng)
        fill = self.fill_array()
        expected = np.empty(self.shape, self.native)
        expected[...] = fill
        for idx in self.geometry.indices():
            if idx == self.untouched:
                continue
            r = self.geometry.region(idx)
            block = np.array(values[r], copy=True)
            if block.size and is_all_fill(block, fill):
                block.reshape(-1)[0] = not_fill(self.dt, fill)[()]
            expected[r] = block
        return expected

    def zpy_create(self, root, config=RECTILINEAR):
        """zarr-python creates the array (the grid as `chunks=` lists when they add up to the shape, else as
        the grid's metadata, which zarr-python stores as given); call inside zarr.config.set(...)."""
        args = dict(shape=self.shape, dtype=str if self.strings else self.dt.np, chunk_key_encoding=self.key_encoding,
                    fill_value=python_fill(self.dt, self.fill), config={"write_empty_chunks": True})
        grid = ([i if isinstance(i, int) else lengths(i) for i in self.grid] if self.exact
                else RectilinearChunkGridMetadata.from_dict(self.chunk_grid()))
        codecs = self.codecs
        if self.sharded:
            conf = codecs[0]["configuration"]
            assert len(codecs) == 1 and conf["index_codecs"] == [LE, CRC]
            args["chunks"] = tuple(conf["chunk_shape"])
            if self.exact:
                args["shards"] = {"shape": grid, "index_location": conf["index_location"]}
            else:
                assert conf["index_location"] == "end", "zarr-python puts the index at the end of such shards"
                args["shards"] = grid
            codecs = conf["codecs"]
        else:
            args["chunks"] = grid
        i = next(k for k, c in enumerate(codecs) if c["name"] in ("bytes", "vlen-utf8"))
        args.update(filters=codecs[:i] or None, serializer=codecs[i], compressors=codecs[i + 1:] or None)
        return zarr.create_array(store=str(root), **args)


# label: (dtype, fill, shape, chunk_shapes as given, codecs, outer chunk never written, key encoding index)
CASES = {
    "int32-explicit-2d": ("int32", -7, (10, 7), [[3, 3, 4], [2, 5]], [LE], (1, 0), 0),
    "int8-runs-1d-gzip": ("int8", 127, (20,), [[[4, 3], 8]], [ONE, GZIP], (1,), 0),
    "uint16-be-mixed-zstd": ("uint16", 65535, (17, 9), [[1, [3, 2], 2, [4, 2]], [[2, 2], 5]], [BE, ZSTD], (2, 1), 1),
    "float32-bare-int-transpose": ("float32", "NaN", (11, 13), [4, [[5, 2], 3]], [transpose(1, 0), LE, ZSTD0],
                                   (1, 0), 0),
    "float64-overflow-crc32c": ("float64", "-Infinity", (10, 9), [[[4, 3]], [2, 3, 6]], [LE, CRC], (2, 2), 0),
    "uint16-be-overflow-trailing": ("uint16", 42, (10,), [[3, 7, 5]], [BE], (0,), 2),
    "complex64-3d-gzip-crc32c": ("complex64", [1.0, "NaN"], (6, 9, 5), [[1, 2, 3], 4, [[2, 2], 1]],
                                 [LE, GZIP, CRC], (1, 0, 1), 0),
    "bool-explicit-zstd": ("bool", True, (9, 10), [[2, 7], [[1, 3], 7]], [ONE, ZSTD], (0, 3), 0),
    "int32-3d-transpose-be-gzip": ("int32", 42, (5, 6, 7), [[2, 3], [[3, 2]], 3], [transpose(2, 0, 1), BE, GZIP],
                                   (0, 1, 2), 1),
    "float64-be-unit-runs": ("float64", 0.0, (6,), [[[1, 6]]], [BE, GZIP], (2,), 0),
    "float32-one-chunk-overflow": ("float32", -0.0015, (5, 4), [[8], [1, 3]], [LE, ZSTD], (0, 0), 0),
    "int16-zero-length": ("int16", -300, (0, 7), [[3, 3], [2, 5]], [LE], None, 0),
    "string-1d": ("string", "fill", (10,), [[3, 3, 4]], [VLEN, ZSTD0], (1,), 0),
    "string-2d-mixed": ("string", "", (7, 5), [[[2, 2], 3], 2], [VLEN, GZIP], (1, 2), 0),
}
# label: as CASES (codecs a single sharding_indexed: zarr-python's index codecs [bytes, crc32c])
SHARDED = {
    "int32-shards": ("int32", -1, (12, 8), [[4, 6, 2], 4], [sharding((2, 2), [LE], "start")], (1, 1), 0),
    "float32-shards-overflow-zstd": ("float32", "NaN", (11, 9), [[4, 8], [3, 6, 3]],
                                     [sharding((4, 3), [LE, ZSTD])], (0, 1), 0),
    "uint16-be-shards-3d-gzip": ("uint16", 42, (6, 8, 5), [[2, 4], [[4, 2]], 5], [sharding((2, 4, 5), [BE, GZIP])],
                                 (1, 0, 0), 1),
    "bool-shards-transpose-crc32c": ("bool", True, (9, 6), [[3, 6], [[2, 3]]],
                                     [sharding((3, 2), [transpose(1, 0), ONE, CRC])], (1, 2), 0),
    "string-shards": ("string", "fill", (10,), [[4, 6]], [sharding((2,), [VLEN, ZSTD0])], (0,), 0),
}


def case_of(label):
    return Case(*(CASES.get(label) or SHARDED[label]))


def writers(labels):
    """(label, writer) pairs: zarr-python always, zarrs for numbers and bool (it leaves strings to
    zarr-python)."""
    out = []
    for label in labels:
        out.append(pytest.param(label, "zarr-python", id=f"{label}-zarr-python"))
        if not case_of(label).strings:
            out.append(pytest.param(label, "zarrs", id=f"{label}-zarrs", marks=needs_zarrs))
    return out


# ---------------------------------------------------------------- zarr-python and zarrs
def check_zarrs(z):
    """The array's codec pipeline is zarrs', with zarrs' Rust implementation and no fallback."""
    pipe = z._async_array.codec_pipeline
    assert isinstance(pipe, zarrs.ZarrsCodecPipeline), type(pipe)
    assert pipe.impl is not None, "zarrs rejected the array"
    assert pipe.python_impl is None, "zarr-python's pipeline is there as a fallback"


def zread(z, case, selection=Ellipsis):
    out = np.asarray(z[selection] if not callable(selection) else selection(z))
    if case.strings:
        obj = np.empty(out.shape, object)
        for idx in np.ndindex(*out.shape):
            obj[idx] = str(out[idx])
        return obj
    return out


def python_writes(case, root, writer, expected):
    """zarr-python (with its own pipeline or zarrs') creates the case and writes every outer chunk but the
    untouched one; it wrote the case's document (the grid in zarr-python's canonical spelling) and the
    chunks."""
    with zarr.config.set(ZARRS if writer == "zarrs" else RECTILINEAR):
        z = case.zpy_create(root)
        if writer == "zarrs":
            check_zarrs(z)
        geo = case.geometry
        for idx in geo.indices():
            if idx != case.untouched:
                r = geo.region(idx)
                z[r] = expected[r]
        assert_same(zread(z, case), expected, f"{writer} reads what it wrote")
        assert tuple(z.write_chunk_sizes) == geo.sizes, "zarr-python's chunks are the module's"
    doc = load_json(root / "zarr.json")
    assert doc["chunk_grid"] == case.chunk_grid(canonical=True), doc["chunk_grid"]
    want = case.doc(canonical=True)
    assert {k: v for k, v in doc.items() if k not in ("codecs", "fill_value")} == \
           {k: v for k, v in want.items() if k not in ("codecs", "fill_value")}
    assert codecs_meaning(doc["codecs"]) == codecs_meaning(want["codecs"])
    assert chunk_files(root) == {geo.key(idx) for idx in geo.indices() if idx != case.untouched}
    return doc


def python_reads(root, case, expected, chunk_grid=None):
    """zarr-python's own pipeline reads the array at `root`: the grid (the case's, in meaning), the chunks'
    lengths and the values."""
    with zarr.config.set(RECTILINEAR):
        z = zarr.open_array(str(root), mode="r")
        grid = chunk_grid or case.chunk_grid()
        assert z.metadata.chunk_grid == RectilinearChunkGridMetadata.from_dict(grid)
        assert tuple(z.write_chunk_sizes) == Geometry(grid, case.shape).sizes
        assert z.shape == case.shape
        assert_same(zread(z, case), expected, "zarr-python reads what libzarr wrote")


def zarrs_raw_read(root, case, geo):
    """zarrs' Rust pipeline alone reads every chunk (stored or not), given the stored zarr.json byte for byte,
    with the chunks' shapes of this module's reading of the grid."""
    impl = CodecPipelineImpl((root / "zarr.json").read_text(encoding="utf-8"), store_config=LocalStore(str(root)))
    out = np.empty(case.shape, case.native)
    out[...] = not_fill(case.dt, case.fill_array())
    items = [ChunkItem(key=geo.key(idx), chunk_subset=[slice(0, c) for c in geo.count(idx)],
                       chunk_shape=list(geo.codec_shape(idx)), subset=list(geo.region(idx)), shape=list(case.shape))
             for idx in geo.indices()]
    if items:
        impl.retrieve_chunks_and_apply_index(items, out)
    return out


def zarrs_reads(root, case, expected):
    """zarrs (strict) reads the array at `root` whole and in a box across chunks, through zarr-python and
    alone."""
    with zarr.config.set(ZARRS):
        z = zarr.open_array(str(root), mode="r")
        check_zarrs(z)
        assert_same(z[...], expected, "zarrs reads what libzarr wrote")
        box = tuple(slice(n // 3, n - n // 4) for n in case.shape)
        assert_same(z[box], expected[box], "zarrs reads a box")
    assert_same(zarrs_raw_read(root, case, case.geometry), expected, "zarrs' Rust pipeline alone")


# ---------------------------------------------------------------- libzarr's side
def lz_read(arr, case, start=None, count=None):
    if not case.strings:
        return arr.read(start, count)
    start, count = arr._region(start, count)
    return strings(arr.read_vlen(start, count), count)


def lz_write(arr, case, values, start=None):
    if not values.size:
        return
    if not case.strings:
        arr.write(values, start)
    else:
        arr.write_vlen([v.encode() for v in values.reshape(-1)], start or (0,) * values.ndim, values.shape)


def strings(items, shape):
    out = np.empty(len(items), object)
    out[:] = [b.decode() for b in items]
    return out.reshape(shape)


def ortho(a, items):
    """NumPy's reading of an orthogonal selection (ints drop their axis)."""
    d = 0
    for item in items:
        if isinstance(item, int):
            a = np.take(a, item, axis=d)
        elif isinstance(item, slice):
            a = a[(slice(None),) * d + (item,)]
            d += 1
        else:
            idx = np.asarray(item)
            a = np.take(a, np.flatnonzero(idx) if idx.dtype == bool else idx, axis=d)
            d += 1
    return a


def selections(case, expected, rng):
    """(name, selection descriptor, NumPy's result) of each selection kind, crossing chunk boundaries."""
    geo, shape = case.geometry, case.shape
    ndim = len(shape)
    out = []
    bounds = [[s for s, _ in a[1:]] for a in geo.axes]
    start = tuple(b[0] - 1 if b else 0 for b in bounds)
    stop = tuple(b[-1] + 1 if b else n for b, n in zip(bounds, shape))
    count = tuple(e - s for s, e in zip(start, stop))
    out.append(("box across every boundary", dict(box=(start, count)),
                expected[tuple(slice(s, e) for s, e in zip(start, stop))]))
    for k in range(2):
        s = tuple(int(rng.integers(0, n)) for n in shape)
        c = tuple(int(rng.integers(1, n - o + 1)) for o, n in zip(s, shape))
        out.append((f"random box {k}", dict(box=(s, c)), expected[tuple(slice(o, o + n) for o, n in zip(s, c))]))
    step = tuple(2 + d % 2 for d in range(ndim))
    s = tuple(min(1, n - 1) for n in shape)
    c = tuple(len(range(o, n, t)) for o, n, t in zip(s, shape, step))
    out.append(("strided", dict(box=(s, c, step)), expected[tuple(slice(o, n, t) for o, n, t in zip(s, shape, step))]))
    lists = []
    for b, n in zip(bounds, shape):
        idx = [n - 1, 0] + [x for v in b for x in (v, v - 1)] + [n - 1]
        lists.append([int(i) for i in rng.permutation(idx)])
    out.append(("orthogonal lists", dict(orthogonal=lists), ortho(expected, lists)))
    mixed = [rng.random(shape[0]) < 0.5] + [slice(1, None, 2)] * (ndim - 2) + ([shape[-1] - 1] if ndim > 1 else [])
    mixed[0][[0, -1]] = True
    out.append(("orthogonal flags, slices, an int", dict(orthogonal=mixed), ortho(expected, mixed)))
    corners = np.array(list(itertools.product(*[(0, n - 1) for n in shape])))
    points = np.concatenate([corners, np.stack([rng.integers(0, n, 12) for n in shape], 1), corners[-1:]])
    points = np.concatenate([points, [[b[0] if b else 0 for b in bounds]]])
    out.append(("points", dict(points=points), expected[tuple(points.T)]))
    mask = rng.random(shape) < 0.3
    out.append(("mask", dict(mask=mask), expected[mask]))
    first = tuple(min(1, g - 1) for g in geo.grid_shape)
    blocks = (first, tuple(g - f for g, f in zip(geo.grid_shape, first)))
    box = tuple(slice(geo.start(first)[d], shape[d]) for d in range(ndim))
    out.append(("blocks to the end", dict(blocks=blocks), expected[box]))
    return out


def lz_select(arr, case, desc):
    """libzarr reads one selection (see selections()); numbers through the call of its kind, strings through
    the one descriptor."""
    if case.strings:
        items, shape = arr.read_vlen_selection(**desc)
        return strings(items, shape)
    (kind, value), = desc.items()
    if kind == "box":
        got = arr.read_strided(*value) if len(value) > 2 else arr.read(*value)
    elif kind == "orthogonal":
        got = arr.read_orthogonal(value)
    elif kind == "points":
        got = arr.read_points(value)
    elif kind == "mask":
        got = arr.read_mask(value)
    else:
        got = arr.read_blocks(*value)
    assert arr.selection_size(**desc) == (got.size, got.nbytes), desc
    return got


def check_blocks(arr, case, expected, z=None):
    """Every chunk's box and contents; with `z`, the same as zarr-python's get_block_selection."""
    geo = case.geometry
    ones = (1,) * len(case.shape)
    for idx in geo.indices():
        assert arr.block_box(idx, ones) == (geo.start(idx), geo.count(idx)), f"block {idx}"
        got = lz_select(arr, case, dict(blocks=(idx, ones)))
        assert_same(got, expected[geo.region(idx)], f"block {idx}")
        if z is not None:
            assert_same(got, zread(z, case, lambda z: z.get_block_selection(idx)), f"zarr-python's block {idx}")
    with pytest.raises(libzarr.LibzarrError) as e:  # one past the last chunk of the first dimension
        arr.block_box((geo.grid_shape[0],) + ones[1:], ones)
    assert e.value.name == "ZARR_ERR_OUT_OF_BOUNDS", e.value.name


def check_libzarr(arr, case, doc, expected, seed=0, z=None):
    """libzarr's getters, metadata and reads of the case's array; `doc` is the stored zarr.json."""
    geo = case.geometry
    assert arr.zarr_format == 3
    assert arr.shape == case.shape
    assert arr.grid_shape == geo.grid_shape
    equal = case.equal_chunks
    if equal is False:
        with pytest.raises(libzarr.LibzarrError) as e:
            arr.chunks
        assert e.value.name == "ZARR_ERR_UNSUPPORTED", e.value.name
    elif equal is not None:
        assert arr.chunks == equal
    if case.sharded:
        assert arr.inner_chunks == case.inner
    assert arr.metadata == doc
    if not case.strings:
        fill = case.fill_array()
        assert as_bytes(np.array(arr.fill_value, fill.dtype)).tobytes() == as_bytes(fill).tobytes()
    assert_same(lz_read(arr, case), expected, "libzarr reads the whole array")
    if not all(case.shape):
        return
    check_blocks(arr, case, expected, z)
    for name, desc, want in selections(case, expected, np.random.default_rng(seed)):
        assert_same(lz_select(arr, case, desc), want, name)


def libzarr_writes(root, case, expected):
    """libzarr creates the case from its document (the grid as given) and writes `expected` whole: the stored
    document is the one given (codec configurations may be completed), the array reads as the fill value
    before, and exactly the chunks not holding only the fill value are stored after."""
    want = case.doc()
    with libzarr.open_store(root, "a") as store, store.create_array("", want) as arr:
        doc = load_json(root / "zarr.json")
        assert doc["chunk_grid"] == want["chunk_grid"], "libzarr stored another chunk_grid than the one given"
        assert {k: v for k, v in doc.items() if k != "codecs"} == {k: v for k, v in want.items() if k != "codecs"}
        assert codecs_meaning(doc["codecs"]) == codecs_meaning(want["codecs"])
        empty = np.empty(case.shape, case.native)
        empty[...] = case.fill_array()
        assert_same(lz_read(arr, case), empty, "a new array reads as the fill value")
        lz_write(arr, case, expected)
    assert chunk_files(root) == case.geometry.keys_not_fill(expected, case.fill_array())
    assert load_json(root / "zarr.json") == doc, "writing data changed the document"
    with libzarr.open_store(root, "r") as store, store.open_array("") as arr:
        check_libzarr(arr, case, doc, expected, seed=5)
    return doc


# ---------------------------------------------------------------- zarr-python / zarrs write, libzarr reads
@pytest.mark.parametrize("label,writer", writers(CASES))
def test_libzarr_reads(tmp_path, label, writer):
    case = case_of(label)
    expected = case.data(seed=100)
    doc = python_writes(case, tmp_path, writer, expected)
    with zarr.config.set(RECTILINEAR):
        z = zarr.open_array(str(tmp_path), mode="r") if writer == "zarr-python" and all(case.shape) else None
        with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
            check_libzarr(arr, case, doc, expected, seed=1, z=z)


# ---------------------------------------------------------------- libzarr writes, zarr-python / zarrs read
@pytest.mark.parametrize("label", CASES)
def test_zarr_python_reads_libzarr(tmp_path, label):
    case = case_of(label)
    expected = case.data(seed=200)
    root = tmp_path / "libzarr"
    libzarr_writes(root, case, expected)
    python_reads(root, case, expected)
    names = {c["name"] for c in case.codecs}
    if names <= SAME_BYTES:  # the same chunk bytes as zarr-python's, edge chunks padded alike
        twin = tmp_path / "zarr-python"
        python_writes(case, twin, "zarr-python", expected)
        keys = chunk_files(root)
        assert keys == chunk_files(twin)
        for key in sorted(keys):
            assert (root / key).read_bytes() == (twin / key).read_bytes(), f"chunk {key}"


@needs_zarrs
@pytest.mark.parametrize("label", [k for k in CASES if not case_of(k).strings])
def test_zarrs_reads_libzarr(tmp_path, label):
    case = case_of(label)
    expected = case.data(seed=300)
    libzarr_writes(tmp_path, case, expected)
    zarrs_reads(tmp_path, case, expected)


# ---------------------------------------------------------------- libzarr writes through selections
@pytest.mark.parametrize("label", ["int32-explicit-2d", "float64-overflow-crc32c", "complex64-3d-gzip-crc32c",
                                   "string-2d-mixed"])
def test_libzarr_selection_writes(tmp_path, label):
    """libzarr writes a new array through boxes, strided boxes, orthogonal selections, points, masks and
    blocks (each over chunk boundaries, where an index repeats the last value wins); zarr-python reads the
    NumPy model of those writes."""
    case = case_of(label)
    rng = np.random.default_rng(400)
    model = np.empty(case.shape, case.native)
    model[...] = case.fill_array()
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("", case.doc()) as arr:
        for name, desc, _ in selections(case, model, rng):
            index = np.arange(model.size).reshape(model.shape)
            (kind, value), = desc.items()
            if kind == "points":
                value = np.unique(value, axis=0)  # no repeated point (NumPy's assignment order is not specified)
                desc = dict(points=value)
                target = tuple(value.T)
            elif kind == "orthogonal":
                value = [sorted(set(v)) if isinstance(v, list) else v for v in value]
                desc = dict(orthogonal=value)
            positions = ortho(index, value) if kind == "orthogonal" else \
                index[target] if kind == "points" else index[value] if kind == "mask" else \
                _box_positions(index, case, kind, value)
            values = random_values(case.dt, positions.shape, rng)
            if case.strings:
                arr.write_vlen_selection([v.encode() for v in values.reshape(-1)], **desc)
            elif kind == "box":
                arr.write_strided(values, value[0], value[2]) if len(value) > 2 else arr.write(values, value[0])
            elif kind == "orthogonal":
                arr.write_orthogonal(value, values)
            elif kind == "points":
                arr.write_points(value, values)
            elif kind == "mask":
                arr.write_mask(value, values)
            else:
                arr.write(values, arr.block_box(*value)[0])
            model.reshape(-1)[positions.reshape(-1)] = values.reshape(-1)
            assert_same(lz_read(arr, case), model, f"libzarr reads its write through {name}")
    python_reads(tmp_path, case, model)


def _box_positions(index, case, kind, value):
    if kind == "box":
        start, count = value[:2]
        step = value[2] if len(value) > 2 else (1,) * len(start)
        return index[tuple(slice(s, s + (c - 1) * t + 1, t) for s, c, t in zip(start, count, step))]
    geo = case.geometry
    first, count = value
    last = tuple(f + c - 1 for f, c in zip(first, count))
    return index[tuple(slice(s, e.stop) for s, e in zip(geo.start(first), geo.region(last)))]


# ---------------------------------------------------------------- resize and append
# label: the steps, each ("resize", new shape) or ("append", axis, how many)
RESIZES = {
    "int32-explicit-2d": [("resize", (14, 7)), ("resize", (8, 9)), ("append", 1, 5), ("append", 0, 9),
                          ("resize", (3, 20))],
    "float32-bare-int-transpose": [("append", 0, 6), ("append", 1, 4), ("resize", (30, 12)), ("resize", (31, 18))],
    "float64-overflow-crc32c": [("resize", (12, 11)), ("resize", (13, 11)), ("append", 1, 2)],
    "string-1d": [("append", 0, 4), ("resize", (6,)), ("resize", (16,)), ("append", 0, 3)],
    "int16-zero-length": [("resize", (5, 7)), ("append", 0, 4), ("append", 1, 2)],
}


def model_step(model, grid, case, step, rng):
    """The array and grid (chunk lengths per dimension, or a bare int) after one step, as zarr-python and
    libzarr do it: the elements kept stay, the new ones are the fill value (appends: their data)."""
    shape = model.shape
    if step[0] == "resize":
        new_shape, data = tuple(step[1]), None
    else:
        _, ax, n = step
        new_shape = tuple(s + (n if d == ax else 0) for d, s in enumerate(shape))
        data = random_values(case.dt, tuple(n if d == ax else s for d, s in enumerate(shape)), rng)
    new = np.empty(new_shape, case.native)
    new[...] = case.fill_array()
    keep = tuple(slice(0, min(a, b)) for a, b in zip(shape, new_shape))
    new[keep] = model[keep]
    if data is not None:
        new[tuple(slice(s, None) if d == ax else slice(None) for d, s in enumerate(shape))] = data
    grid = [g if isinstance(g, int) or sum(g) >= n else g + [n - sum(g)] for g, n in zip(grid, new_shape)]
    return new, grid, data


def stored_grid(root):
    return load_json(root / "zarr.json")["chunk_grid"]


def check_grid_after(step, before, grid, after):
    """libzarr's chunk_grid after a step: as it was (spelling included) when the grid did not change, else
    the new grid `grid` spelt as zarr-python spells it (runs())."""
    canonical = rect(*[runs(g) for g in grid])
    if canonical == rect(*[runs(i) for i in before["configuration"]["chunk_shapes"]]):
        assert after == before, f"{step}: the grid did not change but its spelling did: {after}"
    else:
        assert after == canonical, f"{step}: {after} != {canonical} (zarr-python's)"


@pytest.mark.parametrize("label", RESIZES)
def test_libzarr_resizes_zarr_python_reads(tmp_path, label):
    """libzarr resizes and appends; after each step zarr-python reads the new shape, grid and values, and the
    grid is the one zarr-python writes after the same steps on a twin array (spelt as zarr-python spells it
    where the grid changed, kept as given where it did not)."""
    case = case_of(label)
    rng = np.random.default_rng(500)
    model = case.data(seed=501)
    grid = [i if isinstance(i, int) else lengths(i) for i in case.grid]
    root, twin_root = tmp_path / "libzarr", tmp_path / "twin"
    libzarr_writes(root, case, model)
    with zarr.config.set(RECTILINEAR):
        twin = case.zpy_create(twin_root)
        twin[...] = model
    for step in RESIZES[label]:
        before = stored_grid(root)
        model, grid, data = model_step(model, grid, case, step, rng)
        with libzarr.open_store(root, "r+") as store, store.open_array("") as arr:
            if step[0] == "resize":
                arr.resize(step[1])
            elif case.strings:
                arr.append_vlen([v.encode() for v in data.reshape(-1)], step[2], axis=step[1])
            else:
                arr.append(data, axis=step[1])
            assert arr.shape == model.shape
            assert arr.grid_shape == Geometry(rect(*grid), model.shape).grid_shape
            assert arr.metadata == load_json(root / "zarr.json"), "the handle's document after the step"
            with arr.view() as view:  # built from the handle's document
                assert_same(lz_read(view, case), model, f"a view through the handle after {step}")
            if step == RESIZES[label][-1]:  # a copy through the handle takes its document too
                with libzarr.open_store(tmp_path / "copy", "a") as dst:
                    arr.copy_to(dst, "")
        with zarr.config.set(RECTILINEAR):
            if step[0] == "resize":
                twin.resize(step[1])
            else:
                twin.append(data, axis=step[1])
        after = stored_grid(root)
        assert stored_grid(twin_root) == rect(*[runs(g) for g in grid]), \
            f"{step}: zarr-python's grid {stored_grid(twin_root)}"
        check_grid_after(step, before, grid, after)
        now = dataclasses.replace(case, shape=model.shape, grid=after["configuration"]["chunk_shapes"])
        python_reads(root, now, model, after)
        with libzarr.open_store(root, "r") as store, store.open_array("") as arr:
            assert arr.grid_shape == now.geometry.grid_shape
            assert_same(lz_read(arr, now), model, f"libzarr reads after {step}")
            if all(now.shape):
                check_blocks(arr, now, model)
    assert stored_grid(tmp_path / "copy") == stored_grid(root), "the copy's grid"
    python_reads(tmp_path / "copy", now, model, stored_grid(root))


@pytest.mark.parametrize("label", RESIZES)
def test_zarr_python_resizes_libzarr_reads(tmp_path, label):
    """zarr-python resizes and appends its array; after each step libzarr reads the shape, the grid it
    stored, the chunks' boxes and the values zarr-python reads."""
    case = case_of(label)
    rng = np.random.default_rng(600)
    model = case.data(seed=601)
    grid = [i if isinstance(i, int) else lengths(i) for i in case.grid]
    with zarr.config.set(RECTILINEAR):
        z = case.zpy_create(tmp_path)
        z[...] = model
    for step in RESIZES[label]:
        model, grid, data = model_step(model, grid, case, step, rng)
        with zarr.config.set(RECTILINEAR):
            if step[0] == "resize":
                z.resize(step[1])
            else:
                z.append(data, axis=step[1])
            values = zread(z, case)
            sizes = tuple(z.write_chunk_sizes)
        doc = load_json(tmp_path / "zarr.json")
        assert doc["chunk_grid"] == rect(*[runs(g) for g in grid]), f"{step}: {doc['chunk_grid']}"
        now = dataclasses.replace(case, shape=model.shape, grid=doc["chunk_grid"]["configuration"]["chunk_shapes"])
        assert sizes == now.geometry.sizes
        with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
            assert arr.shape == model.shape
            assert arr.grid_shape == now.geometry.grid_shape
            assert arr.metadata == doc
            assert_same(lz_read(arr, now), values, f"libzarr reads after zarr-python's {step}")
            if all(now.shape):
                check_blocks(arr, now, values)


# ---------------------------------------------------------------- copies
RECT_A = rect([[2, 3], 7], [4, [5, 1]])  # over (13, 9): 2, 2, 2, 7 and 4, 5
RECT_B = rect([5, [3, 2], 2, 3], 2)  # over (13, 9): 5, 3, 3, 2 (+3 past the end) and bare 2
# label: (source: "v3" regular, "v2" or "v3-rect"; the copies in turn, each the overrides of zarr_array_copy_to)
COPIES = {
    "regular-to-rectilinear-and-back": ("v3", [{"chunk_grid": RECT_A}, {"chunk_grid": regular(5, 3)}]),
    "rectilinear-to-rectilinear-new-codecs": ("v3-rect", [{"chunk_grid": RECT_B, "codecs": [BE, GZIP, CRC],
                                                           "fill_value": 1.5}]),
    "v2-to-rectilinear-v3": ("v2", [{"zarr_format": 3, "chunk_grid": RECT_B, "codecs": [LE, ZSTD]}]),
}


def copy_source(root, kind):
    """zarr-python writes a (13, 9) float64 array with a regular or rectilinear grid (or a v2 array), every
    chunk but one; returns its values."""
    values = random_values(DTYPE["float64"], (13, 9), np.random.default_rng(700))
    values[4:8, 4:8] = -1.0  # one source chunk never written (the fill value)
    with zarr.config.set(RECTILINEAR):
        if kind == "v2":
            z = zarr.create_array(str(root), shape=(13, 9), chunks=(4, 4), dtype="float64", fill_value=-1.0,
                                  zarr_format=2, compressors=None)
        else:
            chunks = (4, 4) if kind == "v3" else [[4, 4, 5], [4, 4, 1]]
            z = zarr.create_array(str(root), shape=(13, 9), chunks=chunks, dtype="float64", fill_value=-1.0)
        for box in [np.s_[:4, :], np.s_[4:8, :4], np.s_[4:8, 8:], np.s_[8:, :]]:
            z[box] = values[box]
    return values


@pytest.mark.parametrize("label", COPIES)
def test_copy_to_and_from_rectilinear(tmp_path, label):
    """zarr_array_copy_to with chunk_grid (and codecs, fill value, format) overrides: the copy's chunk_grid is
    the one asked, byte for byte; zarr-python reads the source's values (the chunks that were never written
    as the new fill value when it changes); exactly the new chunks not holding only the fill value are
    stored; zarrs reads the rectilinear copies."""
    kind, copies = COPIES[label]
    src = tmp_path / "src"
    values = copy_source(src, kind)
    fill = -1.0
    for n, overrides in enumerate(copies):
        dst = tmp_path / f"copy{n}"
        with libzarr.open_store(src, "r") as s, s.open_array("") as a, libzarr.open_store(dst, "a") as d:
            a.copy_to(d, "", overrides)
        doc = load_json(dst / "zarr.json")
        assert doc["chunk_grid"] == overrides["chunk_grid"], doc["chunk_grid"]
        if "codecs" in overrides:
            assert codecs_meaning(doc["codecs"]) == codecs_meaning(overrides["codecs"])
        new_fill = overrides.get("fill_value", fill)
        if new_fill != fill:  # the never-written source chunk reads as the old fill value, copied as values
            assert doc["fill_value"] == new_fill
        geo = Geometry(doc["chunk_grid"], values.shape)
        assert chunk_files(dst) == geo.keys_not_fill(values, np.array(new_fill)), "stored chunks"
        with zarr.config.set(RECTILINEAR):
            z = zarr.open_array(str(dst), mode="r")
            assert tuple(z.write_chunk_sizes) == geo.sizes
            assert_same(np.asarray(z[...]), values, f"zarr-python reads copy {n}")
        if doc["chunk_grid"]["name"] == "rectilinear" and zarrs is not None:
            with zarr.config.set(ZARRS):
                z = zarr.open_array(str(dst), mode="r")
                check_zarrs(z)
                assert_same(z[...], values, f"zarrs reads copy {n}")
        with libzarr.open_store(dst, "r") as store, store.open_array("") as arr:
            assert arr.grid_shape == geo.grid_shape
            assert_same(arr.read(), values, f"libzarr reads copy {n}")
        src, fill = dst, new_fill


# ---------------------------------------------------------------- the stored chunk_grid
# label: (shape, chunk_shapes as given)
FORMS = {
    "expanded-lists": ((10, 7), [[3, 3, 4], [2, 5]]),
    "runs-of-one": ((10, 7), [[[3, 1], [3, 1], [4, 1]], [[2, 1], 5]]),
    "split-runs": ((12, 7), [[[2, 2], [2, 1], [8, 1]], [[7, 1]]]),
    "bare-and-runs": ((10, 9), [4, [[1, 3], [3, 2]]]),
    "all-bare": ((10, 9), [4, 2]),
    "long-runs": ((1000000, 6), [[[1, 999999], 1], [6]]),
}


@pytest.mark.parametrize("label", FORMS)
def test_chunk_grid_kept_as_given(tmp_path, label):
    """libzarr stores the chunk_grid as given, however it is spelt, through creation, reopening and writes;
    zarr-python reads the same grid (it spells it its own way when it writes, see runs())."""
    shape, shapes = FORMS[label]
    case = Case("int16", -1, shape, shapes, [LE])
    want = case.doc()
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("", want) as arr:
        assert arr.metadata["chunk_grid"] == want["chunk_grid"]
        assert arr.grid_shape == case.geometry.grid_shape
        if case.equal_chunks:
            assert arr.chunks == case.equal_chunks
        last = tuple(s - 1 for s in shape)
        arr.write(np.array(7, "int16").reshape((1,) * len(shape)), last)
        arr.write(np.array(5, "int16").reshape((1,) * len(shape)), (0,) * len(shape))
    assert load_json(tmp_path / "zarr.json")["chunk_grid"] == want["chunk_grid"]
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        assert arr.metadata["chunk_grid"] == want["chunk_grid"]
        last_block = tuple(g - 1 for g in case.geometry.grid_shape)
        assert arr.block_box(last_block, (1,) * len(shape)) == (case.geometry.start(last_block),
                                                                case.geometry.count(last_block))
    geo = case.geometry
    assert chunk_files(tmp_path) == {geo.key(tuple(0 for _ in shape)), geo.key(tuple(g - 1 for g in geo.grid_shape))}
    with zarr.config.set(RECTILINEAR):
        z = zarr.open_array(str(tmp_path), mode="r")
        assert z.metadata.chunk_grid == RectilinearChunkGridMetadata.from_dict(want["chunk_grid"])
        assert tuple(len(s) for s in z.write_chunk_sizes) == geo.grid_shape
        assert z[(0,) * len(shape)] == 5 and z[last] == 7 and z[tuple(s // 2 for s in shape)] == -1


@pytest.mark.parametrize("shapes", [[[3, 3], [2, 5]], [4, [[2, 3]]]], ids=["list-short", "runs-short"])
def test_chunk_grid_short_of_the_shape_is_refused(tmp_path, shapes):
    """Chunk lengths adding up to less than the dimension: libzarr refuses to create or open the array
    (ZARR_ERR_INVALID_METADATA naming the grid's dimension), as zarr-python refuses to open it."""
    doc = Case("int16", 0, (10, 7), shapes, [LE]).doc()
    with libzarr.open_store(tmp_path, "a") as store:
        with pytest.raises(libzarr.LibzarrError) as e:
            store.create_array("made", doc)
        assert e.value.name == "ZARR_ERR_INVALID_METADATA" and "dimension" in e.value.message, e.value.message
    (tmp_path / "hand").mkdir()
    (tmp_path / "hand" / "zarr.json").write_text(json.dumps(doc))
    with libzarr.open_store(tmp_path, "r") as store:
        with pytest.raises(libzarr.LibzarrError) as e:
            store.open_array("hand")
        assert e.value.name == "ZARR_ERR_INVALID_METADATA", e.value.name
    with zarr.config.set(RECTILINEAR), pytest.raises(ValueError):
        zarr.open_array(str(tmp_path / "hand"), mode="r")


# ---------------------------------------------------------------- sharding inside a rectilinear grid
@pytest.mark.parametrize("label,writer", writers(SHARDED))
def test_libzarr_reads_sharded(tmp_path, label, writer):
    """zarr-python or zarrs writes rectilinear shards of regular inner chunks; libzarr reads them."""
    case = case_of(label)
    expected = case.data(seed=800)
    doc = python_writes(case, tmp_path, writer, expected)
    with zarr.config.set(RECTILINEAR):
        z = zarr.open_array(str(tmp_path), mode="r") if writer == "zarr-python" else None
        with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
            check_libzarr(arr, case, doc, expected, seed=2, z=z)


@pytest.mark.parametrize("label", SHARDED)
def test_zarr_python_reads_libzarr_sharded(tmp_path, label):
    """libzarr writes rectilinear shards; zarr-python (and zarrs, for numbers) reads them."""
    case = case_of(label)
    expected = case.data(seed=900)
    libzarr_writes(tmp_path, case, expected)
    python_reads(tmp_path, case, expected)
    if not case.strings and zarrs is not None:
        zarrs_reads(tmp_path, case, expected)


@pytest.mark.parametrize("label", ["uint16-be-shards-3d-gzip", "string-shards"])
def test_libzarr_resizes_sharded(tmp_path, label):
    """libzarr appends a whole number of inner chunks along the first dimension of a sharded array (the list
    gains a shard of that length) and shrinks it; zarr-python reads each step."""
    case = case_of(label)
    rng = np.random.default_rng(1000)
    model = case.data(seed=1001)
    grid = [i if isinstance(i, int) else lengths(i) for i in case.grid]
    libzarr_writes(tmp_path, case, model)
    for step in [("append", 0, 2 * case.inner[0]), ("resize", (case.shape[0] - 1,) + case.shape[1:]),
                 ("append", 0, case.inner[0] + 1)]:
        before = stored_grid(tmp_path)
        model, grid, data = model_step(model, grid, case, step, rng)
        with libzarr.open_store(tmp_path, "r+") as store, store.open_array("") as arr:
            if step[0] == "resize":
                arr.resize(step[1])
            elif case.strings:
                arr.append_vlen([v.encode() for v in data.reshape(-1)], step[2], axis=step[1])
            else:
                arr.append(data, axis=step[1])
        check_grid_after(step, before, grid, after := stored_grid(tmp_path))
        now = dataclasses.replace(case, shape=model.shape, grid=after["configuration"]["chunk_shapes"])
        python_reads(tmp_path, now, model, after)


def test_copy_to_rectilinear_shards(tmp_path):
    """zarr_array_copy_to from zarr-python's regular array to rectilinear shards (inner chunks dividing every
    shard); zarr-python and zarrs read the copy."""
    values = copy_source(tmp_path / "src", "v3")
    grid = rect([4, 8, 4], [[3, 3]])  # over (13, 9): 4, 8, 1 (+3 past the end) and 3, 3, 3
    overrides = {"chunk_grid": grid, "codecs": [sharding((4, 3), [LE, ZSTD])]}
    with libzarr.open_store(tmp_path / "src", "r") as s, s.open_array("") as a, \
            libzarr.open_store(tmp_path / "dst", "a") as d:
        a.copy_to(d, "", overrides)
    doc = load_json(tmp_path / "dst" / "zarr.json")
    assert doc["chunk_grid"] == grid
    assert chunk_files(tmp_path / "dst") == Geometry(grid, values.shape).keys_not_fill(values, np.array(-1.0))
    with zarr.config.set(RECTILINEAR):
        assert_same(np.asarray(zarr.open_array(str(tmp_path / "dst"), mode="r")[...]), values, "zarr-python")
    if zarrs is not None:
        with zarr.config.set(ZARRS):
            z = zarr.open_array(str(tmp_path / "dst"), mode="r")
            check_zarrs(z)
            assert_same(z[...], values, "zarrs")
