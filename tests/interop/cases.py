"""The test matrix and the shared machinery: data, fill values, expected results, checks."""
import dataclasses
import itertools
import json
import lzma
import math
import os

import numcodecs
import numpy as np

import libzarr
import zpy

# ---------------------------------------------------------------- the matrix (the one place)
DTYPES = ["|b1", "|i1", "|u1"] + [e + t for t in ("i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16")
                                 for e in "<>"]
COMPRESSORS = {  # id -> numcodecs codec (None = no compressor)
    "raw": None,
    "zlib1": numcodecs.Zlib(level=1),
    "gzip5": numcodecs.GZip(level=5),
    "zstd3": numcodecs.Zstd(level=3),
    "blosc-lz4-shuf": numcodecs.Blosc(cname="lz4", shuffle=numcodecs.Blosc.SHUFFLE),
    "blosc-lz4hc-bitshuf": numcodecs.Blosc(cname="lz4hc", shuffle=numcodecs.Blosc.BITSHUFFLE),
    "blosc-blosclz-noshuf": numcodecs.Blosc(cname="blosclz", shuffle=numcodecs.Blosc.NOSHUFFLE),
    "blosc-zstd-shuf": numcodecs.Blosc(cname="zstd", shuffle=numcodecs.Blosc.SHUFFLE),
    "blosc-zlib-shuf": numcodecs.Blosc(cname="zlib", shuffle=numcodecs.Blosc.SHUFFLE),
    "lz4": numcodecs.LZ4(),
    "bz2-9": numcodecs.BZ2(level=9),
    "lzma": numcodecs.LZMA(),
    # a raw LZMA stream (no header): its filter chain, delta then LZMA2, is in the metadata only
    "lzma-raw": numcodecs.LZMA(format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_DELTA, "dist": 2},
                                                             {"id": lzma.FILTER_LZMA2, "preset": 1}]),
}
LAYOUTS = [("C", "."), ("F", "/"), ("F", "."), ("C", "/")]  # (order, dimension_separator)
GEOMETRIES = [((45, 37), (16, 12)), ((7, 6, 5), (3, 4, 2))]  # edge chunks overhang in every dimension;
# the 2-D chunks are big enough (192 elements) for blosc to really compress even 1-byte types
# INTEROP_MATRIX=full: every dtype x compressor x layout; "rotated": each dtype x compressor once,
# with the 4 layouts rotated so that each appears equally often.
FULL_MATRIX = os.environ.get("INTEROP_MATRIX", "full") == "full"


@dataclasses.dataclass(frozen=True)
class Case:
    dtype: str
    comp: str
    order: str = "C"
    sep: str = "."
    shape: tuple = (13, 17)
    chunks: tuple = (5, 4)
    fill: object = 0
    seed: int = 0
    skip: object = 1  # chunks whose index sum % 3 == skip stay unwritten (None: write all)

    def __str__(self):
        return f"{self.dtype}-{self.comp}-{self.order}{self.sep}-{len(self.shape)}d"

    @property
    def codec(self):
        return COMPRESSORS[self.comp]

    @property
    def compressor_config(self):
        return self.codec.get_config() if self.codec is not None else None

    def zarray(self):
        """The .zarray document libzarr is asked to create."""
        return {"zarr_format": 2, "shape": list(self.shape), "chunks": list(self.chunks), "dtype": self.dtype,
                "compressor": self.compressor_config, "fill_value": encode_fill(self.fill, self.dtype),
                "order": self.order, "filters": None, "dimension_separator": self.sep}

    def zpy_kwargs(self):
        return dict(shape=self.shape, chunks=self.chunks, dtype=self.dtype, compressor=self.codec,
                    fill_value=self.fill, order=self.order, separator=self.sep)

    def properties(self):
        """Expected meaning of the metadata, comparable with meaning() and zpy.properties()."""
        return meaning(self.zarray())

    # ------------------------------------------------------------ chunks and data
    def grid(self):
        return list(itertools.product(*(range(-(-s // c)) for s, c in zip(self.shape, self.chunks))))

    def written(self):
        """Indices of the chunks that get data; the rest are left missing."""
        return [i for i in self.grid() if self.skip is None or sum(i) % 3 != self.skip]

    def region(self, idx):
        return tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, self.chunks, self.shape))

    def key(self, idx):
        return self.sep.join(map(str, idx)) if idx else "0"

    def data(self):
        """(source data, expected array contents after writing the `written()` chunks)."""
        data = random_data(self.dtype, self.shape, self.seed)
        expected = np.full(self.shape, fill_scalar(self.fill, self.dtype), native(self.dtype))
        for idx in self.written():
            r = self.region(idx)
            block = data[r]
            if block.size and np.all(equal_nan(block, expected[r])):  # keep every written chunk non-empty
                block.flat[0] = ~block.flat[0] if block.dtype == bool else block.flat[0] + 1
            expected[r] = block
        return data, expected


FILLS = {"b": [True], "i": [-7, 42], "u": [42, 200], "f": [math.nan, -math.inf, 42.5, math.inf],
         "c": [1 + 2j, complex(math.nan, -math.inf), -7.25 + 0j]}  # non-default fill values, per dtype kind


def fill_for(dtype, variant):
    fills = FILLS[np.dtype(dtype).kind]
    return fills[variant % len(fills)]


def matrix():
    cases = []
    for di, (dt, comp) in enumerate(itertools.product(DTYPES, COMPRESSORS)):
        for li in range(len(LAYOUTS)) if FULL_MATRIX else [di % len(LAYOUTS)]:
            # geometry alternates per layout and per block of (dtype, compressor) pairs, so that every layout
            # meets both geometries; fill values and seeds just count through the cases
            shape, chunks = GEOMETRIES[(di // len(LAYOUTS) + li) % len(GEOMETRIES)]
            n = len(cases)
            cases.append(Case(dt, comp, *LAYOUTS[li], shape, chunks, fill_for(dt, n), seed=n))
    return cases


# ---------------------------------------------------------------- values
def native(dtype):
    return np.dtype(dtype).newbyteorder("=")


def random_data(dtype, shape, seed):
    """Seeded random data including the awkward values of the dtype, native byte order."""
    rng = np.random.default_rng(seed)
    dt, n = native(dtype), math.prod(shape)
    if n >= 1000:  # big arrays: random first half, a repeated pattern after (something to compress)
        a = random_data(dtype, (n // 2,), seed)
        return np.concatenate([a, np.resize(a[:97], n - n // 2)]).reshape(shape)

    def floats(fdt):
        fi = np.finfo(fdt)
        v = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(fdt)
        return v, [np.nan, np.inf, -np.inf, -0.0, fi.max, fi.min, fi.tiny, fi.smallest_subnormal]

    if dt.kind == "b":
        a, specials = rng.integers(0, 2, n).astype(bool), [True, False]
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a, specials = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True), [info.min, info.max, 0, 1]
    elif dt.kind == "f":
        a, specials = floats(dt)
    else:
        (re, sp), (im, _) = floats(np.dtype(f"f{dt.itemsize // 2}")), floats(np.dtype(f"f{dt.itemsize // 2}"))
        a = (re + 1j * im).astype(dt)
        specials = [complex(x, y) for x, y in zip(sp, sp[1:] + sp[:1])]
    if n:
        pos = rng.choice(n, min(n, len(specials)), replace=False)
        a[pos] = specials[:len(pos)]
    return a.reshape(shape)


def fill_scalar(fill, dtype):
    return native(dtype).type(0 if fill is None else fill)


def equal_nan(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "c":
        return equal_nan(a.real, b.real) & equal_nan(a.imag, b.imag)
    if a.dtype.kind != "f":
        return a == b
    bits = f"u{a.dtype.itemsize}"  # bitwise, so that -0.0 != 0.0; any NaN equals any NaN
    return (a.view(bits) == b.astype(a.dtype).view(bits)) | (np.isnan(a) & np.isnan(b))


def assert_same(actual, expected):
    """Exact (bitwise) equality, shape and value type included; NaN equals NaN (per real/imaginary part)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape
    assert native(actual.dtype) == native(expected.dtype), (actual.dtype, expected.dtype)
    bad = ~equal_nan(actual, expected)
    assert not bad.any(), f"{bad.sum()} of {bad.size} differ, first at {np.argwhere(bad)[0]}: " \
                          f"{actual[tuple(np.argwhere(bad)[0])]!r} != {expected[tuple(np.argwhere(bad)[0])]!r}"


# ---------------------------------------------------------------- metadata
def _enc_float(x):
    x = float(x)
    return "NaN" if math.isnan(x) else "Infinity" if x == math.inf else "-Infinity" if x == -math.inf else x


def encode_fill(fill, dtype):
    """fill value -> its .zarray JSON encoding (Zarr v2 spec)."""
    if fill is None:
        return None
    kind = np.dtype(dtype).kind
    if kind == "b":
        return bool(fill)
    if kind in "iu":
        return int(fill)
    if kind == "f":
        return _enc_float(fill)
    return [_enc_float(complex(fill).real), _enc_float(complex(fill).imag)]


def decode_fill(value, dtype):
    if value is None:
        return None
    if np.dtype(dtype).kind == "c":
        return complex(float(value[0]), float(value[1]))
    return native(dtype).type(float(value) if isinstance(value, str) else value)


def normalize_codec(config):
    return None if config is None else numcodecs.get_codec(dict(config)).get_config()


def meaning(doc):
    """Semantics of a .zarray document, so that equivalent spellings compare equal."""
    dt = np.dtype(doc["dtype"])
    return {"shape": list(doc["shape"]), "chunks": list(doc["chunks"]), "dtype": dt.str,
            "fill_value": encode_fill(decode_fill(doc.get("fill_value"), dt), dt), "order": doc.get("order", "C"),
            "compressor": normalize_codec(doc.get("compressor")),
            "filters": [normalize_codec(f) for f in doc["filters"]] if doc.get("filters") else None,
            "separator": doc.get("dimension_separator") or "."}


def zpy_meaning(props):
    """zpy.properties() made comparable with meaning()."""
    return dict(props, dtype=np.dtype(props["dtype"]).str,
                fill_value=encode_fill(props["fill_value"], props["dtype"]),
                compressor=normalize_codec(props["compressor"]),
                filters=[normalize_codec(f) for f in props["filters"]] if props["filters"] else None)


def _no_bare_constants(token):
    raise ValueError(f"bare {token} is not valid JSON (the v2 spec wants the string \"{token}\")")


def load_json(path):
    """Parse a metadata file strictly (no NaN/Infinity tokens)."""
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"), parse_constant=_no_bare_constants)


def store_files(root):
    """All files below root, as '/'-separated relative paths."""
    return {os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
            for d, _, files in os.walk(root) for f in files}


def assert_chunk_files(root, case, written=None):
    """Exactly the written chunks exist (nothing outside the grid, no missing chunk materialised)."""
    written = case.written() if written is None else written
    files = store_files(root) - {".zattrs"}
    assert files == {".zarray"} | {case.key(i) for i in written}, \
        f"unexpected: {sorted(files - {'.zarray'} - {case.key(i) for i in written})}, " \
        f"absent: {sorted({case.key(i) for i in written} - files)}"


# ---------------------------------------------------------------- the two directions
def windows(shape):
    """Read windows: everything, an unaligned interior block, the last element, an empty selection."""
    yield (0,) * len(shape), tuple(shape)
    if shape and all(shape):
        yield tuple(min(1, s) for s in shape), tuple(max(s - 2, 0) for s in shape)
        yield tuple(s - 1 for s in shape), (1,) * len(shape)
        yield (0,) * len(shape), (0,) + tuple(shape[1:])


def check_libzarr_view(arr, case, expected):
    """libzarr's getters and reads agree with the case (arr: a libzarr.Array)."""
    want = case.properties()
    assert arr.ndim == len(case.shape)
    assert arr.shape == tuple(case.shape) and arr.chunks == tuple(case.chunks)
    assert arr.dtype_string == want["dtype"]
    assert arr.dtype_kind == (native(case.dtype).kind, native(case.dtype).itemsize)
    assert arr.order == case.order
    assert normalize_codec(arr.compressor) == want["compressor"]
    assert arr.filters is None
    if case.fill is None:
        assert arr.fill_value is None
    else:
        assert_same(arr.fill_value, fill_scalar(case.fill, case.dtype))
    assert meaning(arr.metadata) == want
    for start, count in windows(case.shape):
        assert_same(arr.read(start, count), expected[tuple(slice(o, o + c) for o, c in zip(start, count))])


def zarr_python_writes(case, root):
    """zarr-python creates the case's array at root and writes its chunks; returns the expected contents."""
    data, expected = case.data()
    z = zpy.create(root, **case.zpy_kwargs())
    for idx in case.written():
        z[case.region(idx)] = data[case.region(idx)]
    assert meaning(load_json(root / ".zarray")) == case.properties()  # sanity: zarr-python did what we meant
    assert_chunk_files(root, case)
    return expected


def zarr_python_to_libzarr(case, root):
    if not case.shape and not zpy.ZARR3:
        case = dataclasses.replace(case, comp="raw")  # zarr 2 silently stores 0-d arrays uncompressed
    expected = zarr_python_writes(case, root)
    with libzarr.open_store(root, "r") as store, store.open_array("") as arr:
        check_libzarr_view(arr, case, expected)
    return expected


def libzarr_to_zarr_python(case, root, path="arr"):
    data, expected = case.data()
    with libzarr.open_store(root, "a") as store, store.create_array(path, case.zarray()) as arr:
        if case.shape:
            arr.write(np.zeros((0,) + tuple(case.shape[1:]), native(case.dtype)), (0,) * len(case.shape))  # no-op
        for idx in case.written():
            region = case.region(idx)
            arr.write(data[region], [r.start for r in region])
        check_libzarr_view(arr, case, expected)
    root = root / path
    text = (root / ".zarray").read_text()
    doc = load_json(root / ".zarray")
    assert doc["zarr_format"] == 2 and meaning(doc) == case.properties()
    assert list(doc) == sorted(doc) and "\n" in text, "contract: pretty JSON with sorted keys"
    assert_chunk_files(root, case)
    z = zpy.open_array(root)
    assert zpy_meaning(zpy.properties(z)) == case.properties()
    assert_same(zpy.read(z), expected)
    return expected
