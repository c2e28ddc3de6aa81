"""Zarr v3 (zarr.json) test matrix and the helpers the test_v3_*.py files share: data types and their fill
values, codec chains, chunk keys, shard indexes, seeded data, exact comparisons, and both directions of the
matrix (zarr-python 3 writes and libzarr reads; libzarr writes and zarr-python 3 reads).

Only imported by the test_v3_* modules, after they skipped themselves under zarr-python 2.

The matrix is seeded (`MATRIX_SEED`), so the cases are the same on every run. Each case is one zarr.json
document (`V3Case.doc()`); zarr-python creates it from the same pieces through `zarr.create_array`, and the
test first checks that zarr-python wrote exactly that document, so the two directions test the same thing.

zarr-python 3.1.6 quirks that shape the matrix (each one checked by hand; see README.md):
* big-endian fields of structured types are written big-endian with no endianness in the metadata, so the
  data reads back byte-swapped (zarr-python included): structured cases use little-endian fields only;
* a `transpose` codec on `string` arrays garbles the data (zarr-python writes the chunk's strings in C order
  and reads them back permuted): no transpose on strings;
* a `transpose` codec before `sharding_indexed` is encoded as the spec says, but zarr-python checks the inner
  chunk shape against the untransposed shard shape (and, when they do not divide the transposed one, does not
  read back what it wrote), so such cases use inner chunks that divide both;
* the structured type is `structured` with [name, type] fields (the registered `struct` is not known), and
  raw bits are `raw_bytes` (the core `r<N>` is not known); zarr-python 3.2 and later write records as `struct`
  ({"name", "data_type"} fields, a fill value object with a member per field) with a `bytes` codec that names
  its endian, and the matrix's records follow the zarr-python it runs under (`STRUCT`);
* the numcodecs array->array codecs (`numcodecs.delta`, `numcodecs.fixedscaleoffset`) followed by a
  big-endian `bytes` codec do not round trip (zarr-python misreads its own chunks): only little endian there;
* numcodecs array->array codecs after a `transpose` are garbled (they flatten the transposed view in memory
  order), and `numcodecs.shuffle` after a compressor fails: neither is in the matrix;
* sharded `raw_bytes` and `structured` arrays can be neither written nor read ("unhashable type:
  'writeable void-scalar'"): the matrix does not shard them (test_v3_sharding.py reads hand-made ones);
* `numcodecs.*` codecs without a configuration must still be spelled with `"configuration": {}`;
* every NaN fill value is written as "NaN" (a "0x..." NaN payload is lost), so "0x..." fills are only in the
  documents given to libzarr;
* with write_empty_chunks off (its default) a chunk of complex values that all have a NaN part is dropped
  when the fill value has a NaN part, whatever the other parts (data loss: nan+infj reads back as inf+nanj);
* the default fill value of a structured type has b"0" (not b"") in its null_terminated_bytes fields
  ("AAAAAAAAAAAAAAAAMAA=" for int32, float64, S2): the matrix never leaves the fill of records to defaults;
* 1-byte types get `{"name": "bytes"}` with no configuration; the default fill value of datetime64 and
  timedelta64 is NaT (-2**63), not 0.
"""
import base64
import dataclasses
import itertools
import json
import math
import random
import sys
import warnings

import numpy as np
import zarr
from zarr.core.metadata.v3 import ArrayV3Metadata

import libzarr
from cases import equal_nan, random_data
from zpy import ZARR_VERSION

# Codec documents the v3 test modules share.
LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
ONE = {"name": "bytes"}
CRC = {"name": "crc32c"}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": True}}
ZSTD0 = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
GZIP = {"name": "gzip", "configuration": {"level": 6}}

warnings.filterwarnings("ignore", module="zarr")  # UnstableSpecificationWarning for S/V/U/structured types

MATRIX_SEED = 20251124
MATRIX_SIZE = 150
I64_MIN = -2**63
EMPTY = 2**64 - 1  # a shard index entry (offset, nbytes) of an inner chunk that is not stored
ALPHABET = list("abcXYZ019 -_.") + ["é", "ß", "€", "中", "\u0301", "𝄞", "😀", "\U0010FFFF", "\n"]


# ---------------------------------------------------------------- data types
@dataclasses.dataclass(frozen=True, eq=False)
class DType:
    label: str
    data_type: object  # the zarr.json data_type (a name or {"name", "configuration"})
    numpy: str  # numpy dtype in little-endian form ("O" for string; list form for structured)
    fills: tuple  # non-default fill values, as zarr.json JSON
    default_fill: object  # the fill value zarr-python 3 writes when none is given

    @property
    def np(self):
        return libzarr.dtype_from_json(self.numpy) if isinstance(self.numpy, list) else np.dtype(self.numpy)

    @property
    def kind(self):
        """numpy kind, with "T" for the variable-length string type and "r" for records."""
        if self.label == "string":
            return "T"
        return "r" if self.np.names else self.np.kind

    @property
    def itemsize(self):
        return 1 if self.kind == "T" else self.np.itemsize

    @property
    def multibyte(self):
        """Whether the bytes codec needs an endian (numbers wider than a byte, UTF-32, datetimes)."""
        return self.kind in "iufcUMm" and self.np.itemsize > 1


def _b64(raw):
    return base64.standard_b64encode(raw).decode()


def _time(kind, unit, scale):
    name = {"M": "numpy.datetime64", "m": "numpy.timedelta64"}[kind]
    return {"name": name, "configuration": {"unit": unit, "scale_factor": scale}}


def _fixed(name, length):
    return {"name": name, "configuration": {"length_bytes": length}}


# zarr-python 3.2 and later write records as the registered `struct` type, 3.1 as `structured` (see above)
STRUCT = ZARR_VERSION >= (3, 2)


def _record(fields):
    if STRUCT:
        return {"name": "struct", "configuration": {"fields": [{"name": n, "data_type": t} for n, t in fields]}}
    return {"name": "structured", "configuration": {"fields": [[n, t] for n, t in fields]}}


REC1 = [["a", "<i4"], ["b", "<f8"], ["c", "|S2"]]
REC1_V3 = _record([["a", "int32"], ["b", "float64"], ["c", _fixed("null_terminated_bytes", 2)]])
REC2 = [["x", "|u1"], ["t", "<M8[s]"], ["f", "<f2"], ["z", "<c8"], ["ok", "|b1"]]
REC2_V3 = _record([["x", "uint8"], ["t", _time("M", "s", 1)], ["f", "float16"], ["z", "complex64"],
                   ["ok", "bool"]])


def _rec_fill(descr, value):
    return _b64(np.array(value, libzarr.dtype_from_json(descr)).tobytes())


DTYPES = [
    DType("bool", "bool", "|b1", (True,), False),
    DType("int8", "int8", "|i1", (-7, 127), 0),
    DType("int16", "int16", "<i2", (-300, 42), 0),
    DType("int32", "int32", "<i4", (-7, 2**31 - 1), 0),
    DType("int64", "int64", "<i8", (I64_MIN, 42), 0),
    DType("uint8", "uint8", "|u1", (200, 42), 0),
    DType("uint16", "uint16", "<u2", (65535, 42), 0),
    DType("uint32", "uint32", "<u4", (4000000000, 7), 0),
    DType("uint64", "uint64", "<u8", (2**64 - 1, 42), 0),
    DType("float16", "float16", "<f2", ("NaN", "-Infinity", 42.5, -0.0, "0x7e01"), 0.0),
    DType("float32", "float32", "<f4", ("NaN", "Infinity", -0.0015, "0x7fc00001", "0x3fc00000"), 0.0),
    DType("float64", "float64", "<f8", ("NaN", "-Infinity", 1e300, 42.5, "0x7ff8000000000001"), 0.0),
    DType("complex64", "complex64", "<c8", (["NaN", "-Infinity"], [1.0, -2.5], ["0x7fc00001", 0.5]), [0.0, 0.0]),
    DType("complex128", "complex128", "<c16", (["Infinity", "NaN"], [-7.25, 0.0]), [0.0, 0.0]),
    DType("U1", _fixed("fixed_length_utf32", 4), "<U1", ("é", "𝄞"), ""),
    DType("U4", _fixed("fixed_length_utf32", 16), "<U4", ("é€𝄞", "a"), ""),
    DType("S1", _fixed("null_terminated_bytes", 1), "|S1", (_b64(b"\x80"),), ""),
    DType("S5", _fixed("null_terminated_bytes", 5), "|S5", (_b64(b"fi\x00l"), _b64(b"abcde")), ""),
    DType("V1", _fixed("raw_bytes", 1), "|V1", (_b64(b"\x7f"),), _b64(b"\x00")),
    DType("V6", _fixed("raw_bytes", 6), "|V6", (_b64(b"\x00\x01\xff\x00\x00\x00"),), _b64(bytes(6))),
    DType("M8[10ms]", _time("M", "ms", 10), "<M8[10ms]", (I64_MIN, 12345), I64_MIN),
    DType("M8[s]", _time("M", "s", 1), "<M8[s]", (-7, "NaT"), I64_MIN),
    DType("M8[2D]", _time("M", "D", 2), "<M8[2D]", (100,), I64_MIN),
    DType("M8[ns]", _time("M", "ns", 1), "<M8[ns]", (I64_MIN, 1),  I64_MIN),
    DType("M8[Y]", _time("M", "Y", 1), "<M8[Y]", (30,), I64_MIN),
    DType("m8[us]", _time("m", "us", 1), "<m8[us]", (-5, I64_MIN), I64_MIN),
    DType("m8[5m]", _time("m", "m", 5), "<m8[5m]", (3,), I64_MIN),
    DType("m8[W]", _time("m", "W", 1), "<m8[W]", ("NaT", 2), I64_MIN),
    DType("m8[as]", _time("m", "as", 1), "<m8[as]", (-1,), I64_MIN),
    DType("rec1", REC1_V3, REC1, (_rec_fill(REC1, (7, -2.5, b"x")),), _b64(bytes(14))),
    DType("rec2", REC2_V3, REC2, (_rec_fill(REC2, (9, 5, 1.5, 1 - 2j, True)),), _b64(bytes(20))),
    DType("string", "string", "O", ("fill", "é€𝄞", ""), ""),
]
DTYPE = {d.label: d for d in DTYPES}
# the order the matrix cycles through (strings and the wider floats twice as often)
CYCLE = DTYPES + [DTYPE["string"], DTYPE["float32"], DTYPE["float64"], DTYPE["complex64"], DTYPE["uint16"]]


# ---------------------------------------------------------------- fill values
def _float_bits(value, dt):
    """A v3 float fill (number, "NaN", "Infinity", "-Infinity", "0x<hex bits>") as a numpy scalar of dt."""
    dt = np.dtype(dt).newbyteorder("=")
    if isinstance(value, str) and value.startswith("0x"):
        return np.array(int(value, 16), f"u{dt.itemsize}").view(dt)[()]
    if value == "NaN":  # the quiet NaN with no payload, as the spec says (np.nan's bits too)
        return dt.type(np.nan)
    return dt.type(float({"Infinity": math.inf, "-Infinity": -math.inf}.get(value, value)))


def fill_array(dtype, value):
    """A zarr.json fill_value as a 0-d native-order array (an object array holding a str for strings)."""
    dt = dtype.np.newbyteorder("=") if dtype.kind != "r" else dtype.np
    kind = dtype.kind
    if kind == "T":
        out = np.empty((), object)
        out[()] = value
        return out
    if kind == "b":
        return np.array(bool(value))
    if kind in "iu":
        return np.array(int(value), dt)
    if kind == "f":
        return np.array(_float_bits(value, dt))
    if kind == "c":
        part = np.dtype(f"f{dt.itemsize // 2}")
        out = np.zeros((), dt)
        out.real, out.imag = _float_bits(value[0], part), _float_bits(value[1], part)
        return out
    if kind == "U":
        return np.array(value, dt)
    if kind in "Mm":
        return np.array(I64_MIN if value == "NaT" else int(value), np.int64).view(dt)
    if kind == "r" and isinstance(value, dict):  # a `struct` fill value: each field's, as its type's fill
        out = np.zeros((), dt)
        for name in dt.names:
            out[name] = fill_array(DType(name, None, dt.fields[name][0].str, (), None), value[name])
        return out
    raw = base64.standard_b64decode(value)
    if kind == "S":
        return np.array(raw, dt)
    return np.frombuffer(raw, dt).reshape(()).copy()  # raw bytes and records: all the stored bytes


def python_fill(dtype, value):
    """The fill value as zarr.create_array takes it."""
    a = fill_array(dtype, value)
    if dtype.kind in "TbiufcUS":
        return a[()] if dtype.kind not in "US" else a[()].item()
    if dtype.kind in "Mm":
        return a[()]
    if dtype.kind == "V":
        return a.tobytes()
    return a[()]  # np.void record


# ---------------------------------------------------------------- exact comparison
def as_bytes(a):
    a = np.asarray(a)
    return np.frombuffer(a.tobytes(), np.uint8).reshape(a.shape + (a.dtype.itemsize,))


def same_elements(a, b):
    """Element-wise equality: floats and complex NaN-aware (any NaN equals any NaN, -0.0 != 0.0), strings by
    value, everything else byte for byte in native order."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "O" or b.dtype.kind in "OT":
        return np.vectorize(lambda x, y: x == y, otypes=[bool])(a, b) if a.size else np.ones(a.shape, bool)
    if a.dtype.kind in "fc":
        return equal_nan(a.astype(a.dtype.newbyteorder("=")), b.astype(b.dtype.newbyteorder("=")))
    if a.dtype.names:  # records: NaN-aware per float field, bytes for the others
        ok = np.ones(a.shape, bool)
        for name in a.dtype.names:
            ok &= same_elements(a[name], b[name]).reshape(a.shape + (-1,)).all(-1) if a[name].ndim > a.ndim \
                else same_elements(a[name], b[name])
        return ok
    nat = a.dtype.newbyteorder("=")
    return (as_bytes(a.astype(nat)) == as_bytes(b.astype(nat))).all(-1)


def assert_same(actual, expected, what="values"):
    """Same shape, same dtype (up to byte order; strings as str), same values (see same_elements)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if expected.dtype.kind == "O":
        assert actual.dtype.kind in "OTU", f"{what}: dtype {actual.dtype} for strings"
    else:
        assert actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("="), \
            f"{what}: dtype {actual.dtype} != {expected.dtype}"
    bad = ~same_elements(actual, expected)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} elements differ, first at {first}: "
                             f"{actual[first]!r} != {expected[first]!r}")


def is_all_fill(block, fill):
    """Whether a block holds only the fill value, byte for byte (strings: by value), as libzarr decides."""
    block = np.asarray(block)
    if block.dtype.kind == "O":
        return all(v == fill[()] for v in block.reshape(-1))
    nat = block.dtype.newbyteorder("=")
    return bool((as_bytes(block.astype(nat)) == as_bytes(np.asarray(fill).astype(nat))).all())


# ---------------------------------------------------------------- random values
def random_values(dtype, shape, rng):
    """Seeded random values of `dtype` (native order; strings as an object array of str), with the awkward
    ones: NaN/inf/-0.0/subnormals, integer extremes, empty and full strings, astral characters, embedded
    NULs, NaT and the int64 extremes."""
    shape, n = tuple(shape), math.prod(shape)
    kind = dtype.kind
    if kind == "T":
        out = np.empty(shape, object)
        for idx in np.ndindex(*shape):
            out[idx] = "".join(rng.choice(ALPHABET, int(rng.integers(0, 7))))
        specials = ["", "x" * 40, "é€𝄞😀", "a\x00b"]
        for idx, v in zip(rng.permutation(n)[:len(specials)], specials):
            out.reshape(-1)[idx] = v
        return out
    dt = dtype.np
    if kind == "r":
        out = np.zeros(shape, dt)
        for name in dt.names:
            f = dt.fields[name][0]
            sub = DType(name, None, f.str, (), None)
            out[name] = random_values(sub, shape, rng)
        return out
    nat = dt.newbyteorder("=")
    if kind not in "SUVMm":
        return random_data(dt.str, shape, int(rng.integers(2**31)))
    if kind == "S":
        k = dt.itemsize
        values = [bytes(rng.integers(1, 256, int(rng.integers(0, k + 1)), dtype=np.uint8)) for _ in range(n)]
        specials = [b"", bytes(rng.integers(1, 256, k, dtype=np.uint8)), b"a\x00b"[:k]]
    elif kind == "U":
        k = dt.itemsize // 4
        values = ["".join(rng.choice(ALPHABET, int(rng.integers(0, k + 1)))) for _ in range(n)]
        specials = ["", "".join(rng.choice(ALPHABET, k)), ("é€𝄞" * k)[:k], "x\x00y"[:k]]
    elif kind == "V":
        values = [bytes(rng.integers(0, 256, dt.itemsize, dtype=np.uint8)) for _ in range(n)]
        specials = [bytes(dt.itemsize)]
    else:
        wide = rng.integers(I64_MIN + 1, 2**63 - 1, n, endpoint=True)
        values = list(np.where(rng.integers(0, 2, n) == 1, wide, rng.integers(-10**6, 10**6, n)))
        specials = [I64_MIN, 2**63 - 1, I64_MIN + 1, 0, -1]
    for pos, v in zip(rng.permutation(n), specials):
        values[pos] = v
    if kind in "Mm":
        return np.array(values, np.int64).view(nat).reshape(shape)
    return np.array(values, nat).reshape(shape)


def not_fill(dtype, fill):
    """A value of `dtype` that differs from the fill value (NaN-aware), as a 0-d native array."""
    f = np.array(fill, copy=True)
    kind = dtype.kind
    if kind == "T":
        f[()] = fill[()] + "x"
    elif kind == "b":
        f[()] = not fill[()]
    elif kind in "iu":
        f[()] = fill[()] ^ 1
    elif kind in "fc":
        f[()] = 1.0 if not (fill[()] == 1.0) else 2.0
    elif kind == "U":
        f[()] = "z" if fill[()] != "z" else "y"
    elif kind == "S":
        f[()] = b"z" if fill[()] != b"z" else b"y"
    elif kind == "V":
        f = np.frombuffer(bytes(b ^ 0x5A for b in f.tobytes()), f.dtype).reshape(()).copy()
    elif kind in "Mm":
        f = (f.view(np.int64) + 1).view(f.dtype)
    else:  # records: change the first field
        first = dtype.np.names[0]
        f[first] = f[first] + 1
    return f


# ---------------------------------------------------------------- codecs
def bytes_codec(dtype, endian="little"):
    if dtype.kind == "T":
        return {"name": "vlen-utf8", "configuration": {}}
    if dtype.kind == "r" and STRUCT:  # zarr-python 3.2 and later name an endian for records with multi-byte
        return {"name": "bytes", "configuration": {"endian": "little"}}  # fields (the matrix's are little-endian)
    if not dtype.multibyte:
        return {"name": "bytes"}  # as zarr-python writes it for 1-byte types and (3.1) records
    return {"name": "bytes", "configuration": {"endian": endian}}


def default_codecs(dtype):
    """What zarr-python 3 writes when no codecs are given."""
    return [bytes_codec(dtype), {"name": "zstd", "configuration": {"level": 0, "checksum": False}}]


DEFAULT_KEY_ENCODING = {"name": "default", "configuration": {"separator": "/"}}
KEY_ENCODINGS = [DEFAULT_KEY_ENCODING, {"name": "default", "configuration": {"separator": "."}},
                 {"name": "v2", "configuration": {"separator": "."}},
                 {"name": "v2", "configuration": {"separator": "/"}}]


def split_codecs(codecs):
    """(array->array codecs, the array->bytes codec, bytes->bytes codecs) of a chain."""
    for i, c in enumerate(codecs):
        if c["name"] in ("bytes", "vlen-utf8", "vlen-bytes", "sharding_indexed", "numcodecs.pcodec"):
            return codecs[:i], c, codecs[i + 1:]
    raise ValueError(f"no array->bytes codec in {codecs}")


def transpose_of(filters):
    """The permutation of the transpose codec among `filters` (None if none)."""
    for c in filters:
        if c["name"] == "transpose":
            return list(c["configuration"]["order"])
    return None


@dataclasses.dataclass(frozen=True)
class Level:
    """One sharding level: the inner chunk shape in array coordinates, the transpose applied before it (the
    inner chunk grid is in those transposed coordinates), the index codecs and location."""
    chunks: tuple  # inner chunk shape, array coordinates
    config_chunks: tuple  # as in the configuration (transposed coordinates)
    perm: tuple  # transpose order applied to the shard before this sharding codec (identity if none)
    checksum: object  # None, or (name, at_end) of the checksum codec after the index's bytes codec
    index_endian: str  # of the index's bytes codec
    location: str
    last: bool  # sharding is the last codec of its chain (else the shard is further encoded)


def sharding_levels(codecs, ndim):
    """Every sharding_indexed level of a chain, outermost first."""
    levels, perm = [], list(range(ndim))
    while True:
        filters, a2b, after = split_codecs(codecs)
        p = transpose_of(filters)
        if p is not None:
            perm = [perm[i] for i in p]
        if a2b["name"] != "sharding_indexed":
            return levels
        conf = a2b["configuration"]
        chunks = [0] * ndim
        for i, c in enumerate(conf["chunk_shape"]):
            chunks[perm[i]] = c
        index_bytes, *index_checksum = conf["index_codecs"]
        checksum = None
        for c in index_checksum:  # crc32c: after the index; numcodecs' crc32 and adler32: before, by default
            default = "end" if c["name"] == "crc32c" else "start"
            checksum = (c["name"], (c.get("configuration") or {}).get("location", default) == "end")
        levels.append(Level(tuple(chunks), tuple(conf["chunk_shape"]), tuple(perm), checksum,
                            (index_bytes.get("configuration") or {}).get("endian", "little"),
                            conf.get("index_location", "end"), not after))
        codecs = conf["codecs"]


def stored_endian(codecs):
    """The endian of the innermost bytes codec (None for strings or when not given), as libzarr reports the stored
    type: filters other than transpose before it turn the values into other elements, so there the array's
    elements are native (the endian applies to the filters' output)."""
    filtered = False
    while True:
        filters, a2b, _ = split_codecs(codecs)
        filtered |= any(c["name"] != "transpose" for c in filters)
        if a2b["name"] != "sharding_indexed":
            endian = (a2b.get("configuration") or {}).get("endian")
            return sys.byteorder if filtered and endian else endian
        codecs = a2b["configuration"]["codecs"]


def codec_names(codecs):
    names = []
    for c in codecs:
        names.append(c["name"])
        if c["name"] == "sharding_indexed":
            names += codec_names(c["configuration"]["codecs"])
    return names


# ---------------------------------------------------------------- the case
OPTIONAL = ("node_type", "attributes", "storage_transformers", "chunk_key_encoding", "fill_value", "codecs")


@dataclasses.dataclass(eq=False)
class V3Case:
    n: int
    dtype: DType
    shape: tuple
    chunks: tuple  # the chunk grid's (the shard shape when sharded)
    codecs: list
    key_encoding: dict
    fill: object  # zarr.json fill_value
    dimension_names: list = None
    attributes: dict = None
    omit: tuple = ()  # members left out of the document libzarr gets (it must default them as zarr-python)
    seed: int = 0
    skip: int = 1  # write units whose index sum % 3 == skip stay untouched (None: write all)
    empty_chunk: tuple = None  # an outer chunk left entirely untouched

    def __str__(self):
        names = [n.replace("numcodecs.", "nc.") for n in codec_names(self.codecs)]
        names = [n for n in names if n not in ("bytes",)]
        sharded = len(self.levels)
        tags = ([f"shard{sharded}"] if sharded else []) + [n for n in names if n != "sharding_indexed"]
        ke = self.key_encoding
        sep = (ke.get("configuration") or {}).get("separator", "/" if ke["name"] == "default" else ".")
        endian = {"little": "le", "big": "be"}.get(stored_endian(self.codecs), "")
        return (f"{self.n:03d}-{self.dtype.label}{endian}-{len(self.shape)}d-{ke['name']}{sep}-"
                + "+".join(tags or ["raw"]) + ("-defaults" if self.omit else ""))

    # ------------------------------------------------------------ metadata
    def doc(self):
        """The full zarr.json document (with the defaults of omitted members filled in)."""
        d = {"zarr_format": 3, "node_type": "array", "shape": list(self.shape), "data_type": self.dtype.data_type,
             "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(self.chunks)}},
             "chunk_key_encoding": self.key_encoding, "fill_value": self.fill, "codecs": self.codecs,
             "attributes": self.attributes or {}, "storage_transformers": []}
        if self.dimension_names is not None:
            d["dimension_names"] = list(self.dimension_names)
        return json.loads(json.dumps(d))

    def request(self):
        """The document libzarr is asked to create (the `omit` members left out)."""
        return {k: v for k, v in self.doc().items() if k not in self.omit}

    @property
    def levels(self):
        return sharding_levels(self.codecs, len(self.shape))

    @property
    def inner_chunks(self):
        """The innermost chunk shape in array coordinates (the chunk shape when not sharded)."""
        return self.levels[-1].chunks if self.levels else tuple(self.chunks)

    @property
    def native(self):
        return np.dtype(object) if self.dtype.kind == "T" else self.dtype.np.newbyteorder("=") \
            if self.dtype.kind != "r" else self.dtype.np

    @property
    def stored_dtype(self):
        """numpy dtype in the stored byte order (what zarr_array_dtype_string names)."""
        if self.dtype.kind == "T":
            return np.dtype("O")
        dt = self.dtype.np
        if self.dtype.multibyte and stored_endian(self.codecs) == "big":
            return dt.newbyteorder(">")
        return dt

    def fill_array(self):
        return fill_array(self.dtype, self.fill)

    def key(self, idx):
        ke = self.key_encoding
        sep = (ke.get("configuration") or {}).get("separator", "/" if ke["name"] == "default" else ".")
        if ke["name"] == "default":
            return sep.join(["c"] + [str(i) for i in idx])
        return sep.join(str(i) for i in idx) if idx else "0"

    # ------------------------------------------------------------ geometry
    def grid(self, chunks=None):
        chunks = self.chunks if chunks is None else chunks
        return list(itertools.product(*(range(-(-s // c)) for s, c in zip(self.shape, chunks))))

    def region(self, idx, chunks=None):
        """The part of the array chunk `idx` covers (an index that gives an array even for 0-d arrays)."""
        chunks = self.chunks if chunks is None else chunks
        return tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, self.shape)) + (Ellipsis,)

    def units(self):
        """The write units: the innermost chunks."""
        return self.grid(self.inner_chunks)

    def untouched(self, unit):
        if self.empty_chunk is not None and all(
                u * c // o == e for u, c, o, e in zip(unit, self.inner_chunks, self.chunks, self.empty_chunk)):
            return True
        return self.skip is not None and sum(unit) % 3 == self.skip

    # ------------------------------------------------------------ data
    def values(self, rng):
        """Random values for the whole array (respecting lossy-looking codecs' exact ranges)."""
        fso = fixedscaleoffset(self.codecs)
        if fso is not None:
            k = rng.integers(-1000, 1001, self.shape)
            return ((k / fso["scale"]) + fso["offset"]).astype(self.native)
        return random_values(self.dtype, self.shape, rng)

    def data(self):
        """(source values, expected contents after writing the units that are not untouched)."""
        rng = np.random.default_rng(self.seed)
        data = self.values(rng)
        fill = self.fill_array()
        expected = np.empty(self.shape, self.native)
        expected[...] = fill
        for unit in self.units():
            if self.untouched(unit):
                continue
            r = self.region(unit, self.inner_chunks)
            block = data[r]
            if block.size and not (~same_elements(block, np.broadcast_to(fill, block.shape))).any():
                block[(0,) * block.ndim] = self.not_fill()[()]  # written units are never all fill
            expected[r] = block
        return data, expected

    def not_fill(self):
        fso = fixedscaleoffset(self.codecs)
        if fso is None:
            return not_fill(self.dtype, self.fill_array())
        k = round((float(self.fill_array()) - fso["offset"]) * fso["scale"]) + 1  # stays exact through the codec
        return np.array(k / fso["scale"] + fso["offset"]).astype(self.native)

    def expected_keys(self, expected):
        """The chunk keys a writer that stores no fill-only chunk (byte for byte) leaves for `expected`."""
        fill = self.fill_array()
        return {self.key(idx) for idx in self.grid() if not is_all_fill(expected[self.region(idx)], fill)}

    def padded_chunk(self, expected, idx):
        """The outer chunk `idx` of `expected` at full size, the part outside the array filled."""
        out = np.empty(self.chunks, self.native)
        out[...] = self.fill_array()
        r = self.region(idx)
        out[tuple(slice(0, s.stop - s.start) for s in r[:-1])] = expected[r]
        return out

    def zpy_create(self, root, **kw):
        """zarr-python creates the array (from the same pieces as doc(); omitted members left to its
        defaults)."""
        filters, a2b, after = split_codecs(self.codecs)
        args = dict(shape=self.shape, chunks=self.chunks, chunk_key_encoding=self.key_encoding,
                    dimension_names=self.dimension_names, attributes=self.attributes)
        args["dtype"] = str if self.dtype.kind == "T" else self.dtype.np
        if "codecs" not in self.omit:
            args.update(filters=filters or None, serializer=a2b, compressors=after or None)
        if "fill_value" not in self.omit:
            args["fill_value"] = python_fill(self.dtype, self.fill)
        if "chunk_key_encoding" in self.omit:
            del args["chunk_key_encoding"]
        args.update(kw)
        return zarr.create_array(store=str(root), **args)


def fixedscaleoffset(codecs):
    for c in codecs:
        if c["name"] == "numcodecs.fixedscaleoffset":
            return c["configuration"]
        if c["name"] == "sharding_indexed":
            found = fixedscaleoffset(c["configuration"]["codecs"])
            if found:
                return found
    return None


# ---------------------------------------------------------------- the random matrix
def _compressor(rng, dtype):
    itemsize = dtype.itemsize
    blosc = lambda: {"name": "blosc", "configuration": {  # noqa: E731
        "typesize": itemsize, "cname": rng.choice(["lz4", "zstd", "blosclz"]), "clevel": rng.randint(0, 9),
        "shuffle": rng.choice(["noshuffle", "shuffle", "bitshuffle"]), "blocksize": 0}}
    zstd = lambda: {"name": "zstd", "configuration": {  # noqa: E731
        "level": rng.choice([0, 1, 3, -1]), "checksum": rng.random() < 0.5}}
    choices = [
        blosc, blosc, zstd, zstd,
        lambda: {"name": "gzip", "configuration": {"level": rng.randint(0, 9)}},
        lambda: {"name": "crc32c"},
        lambda: {"name": "numcodecs.zlib", "configuration": {"level": rng.randint(0, 9)}},
        lambda: {"name": "numcodecs.lz4", "configuration": {"acceleration": rng.choice([1, 5])}},
        lambda: {"name": "numcodecs.bz2", "configuration": {"level": rng.randint(1, 9)}},
        lambda: {"name": "numcodecs.lzma", "configuration": {"preset": rng.randint(0, 3)}},
        lambda: {"name": "numcodecs.crc32", "configuration": {}},
        lambda: {"name": "numcodecs.adler32", "configuration": {}},
        lambda: {"name": "numcodecs.fletcher32", "configuration": {}},
    ]
    if dtype.kind != "T":
        choices.append(lambda: {"name": "numcodecs.shuffle", "configuration": {"elementsize": itemsize}})
    return rng.choice(choices)()


def _compressors(rng, dtype):
    """0-2 bytes->bytes codecs; numcodecs.shuffle only first (it needs whole elements: after a compressor
    numcodecs fails with "Shuffle buffer is not an integer multiple of elementsize")."""
    chain = [_compressor(rng, dtype) for _ in range(rng.choice([0, 1, 1, 2]))]
    return [c for i, c in enumerate(chain) if i == 0 or c["name"] != "numcodecs.shuffle"]


def _numeric_filter(rng, dtype):
    """numcodecs.delta (integers: exact with wrap-around) or numcodecs.fixedscaleoffset (float32/64, with
    values offset + k / scale that survive the round trip exactly), or None."""
    if dtype.kind in "iu" and rng.random() < 0.3:
        return {"name": "numcodecs.delta", "configuration": {"dtype": dtype.np.str}}
    if dtype.kind == "f" and dtype.itemsize >= 4 and rng.random() < 0.3:
        return {"name": "numcodecs.fixedscaleoffset",
                "configuration": {"offset": rng.choice([0, 1.5, -100]), "scale": rng.choice([1, 4, 10]),
                                  "dtype": dtype.np.str, "astype": rng.choice(["<i2", "<i4"])}}
    return None


def _shape(rng, ndim, limit=240):
    while True:
        shape = tuple(rng.randint(1, {1: 40, 2: 14, 3: 7}[ndim]) for _ in range(ndim))
        if math.prod(shape) <= limit:
            return shape


def make_case(n, rng):
    dtype = CYCLE[n % len(CYCLE)]
    ndim = 0 if n % 17 == 5 else rng.choice([1, 2, 2, 3, 3])
    # zarr-python 3.1.6 can neither read nor write sharded raw_bytes or structured arrays ("unhashable type:
    # 'writeable void-scalar'"): test_v3_sharding.py covers those with hand-made shards
    sharded = ndim > 0 and dtype.kind not in "Vr" and rng.random() < 0.4
    endian = rng.choice(["little", "big"])
    for _ in range(1000):
        shape = _shape(rng, ndim)
        perm = list(range(ndim))
        if ndim >= 2 and dtype.kind != "T" and rng.random() < 0.4:
            while perm == list(range(ndim)):
                rng.shuffle(perm)
            perm_t = [{"name": "transpose", "configuration": {"order": perm}}]
        else:
            perm_t = []
        # zarr-python 3.1.6 garbles numcodecs array->array codecs after a transpose (they flatten the
        # transposed view in memory order): never both
        num = _numeric_filter(rng, dtype) if not perm_t else None
        num = [num] if num else []
        endian = "little" if num else endian  # zarr-python 3.1.6: numcodecs filters + big endian do not round trip
        if not sharded:
            chunks = tuple(rng.randint(1, s + 1 + (s > 3)) for s in shape)
            codecs = perm_t + num + [bytes_codec(dtype, endian)] + _compressors(rng, dtype)
            n_units = len(list(itertools.product(*(range(-(-s // c)) for s, c in zip(shape, chunks)))))
        else:
            nested = rng.random() < 0.25
            inner = [rng.randint(1, 4) for _ in range(ndim)]
            middle = [c * rng.randint(1, 2 if nested else 3) for c in inner]
            outer = [c * rng.randint(1, 3) for c in middle] if nested else middle
            chunks = tuple(outer)
            outside = perm_t and rng.random() < 0.5  # transpose before sharding (array coordinates permuted)

            def t(shp):  # a chunk shape in the coordinates the sharding codec sees
                return [shp[p] for p in perm] if outside else list(shp)
            if outside and any(c % i for c, i in zip(chunks, t(middle))):
                continue  # zarr-python checks the configured inner chunks against the untransposed shard
            inner_codecs = ([] if outside else perm_t) + num + [bytes_codec(dtype, endian)] + _compressors(rng, dtype)
            index_codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
            if rng.random() < 0.6:
                index_codecs.append({"name": "crc32c"})
            if nested:
                inner_codecs = [{"name": "sharding_indexed", "configuration": {
                    "chunk_shape": t(inner), "codecs": inner_codecs,
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                    "index_location": rng.choice(["start", "end"])}}]
                conf_chunks = t(middle)
            else:
                conf_chunks = t(inner)
            sharding = {"name": "sharding_indexed", "configuration": {
                "chunk_shape": conf_chunks, "codecs": inner_codecs, "index_codecs": index_codecs,
                "index_location": rng.choice(["start", "end"])}}
            after = [c for c in [_compressor(rng, dtype)] if c["name"] != "numcodecs.shuffle" and rng.random() < 0.1]
            codecs = (perm_t if outside else []) + [sharding] + after
            n_units = math.prod(-(-s // c) for s, c in zip(shape, inner))
        if n_units <= 40:
            break
    else:
        raise AssertionError("no case found")
    fill = dtype.fills[(n // len(CYCLE) + CYCLE[:n % len(CYCLE)].count(dtype)) % len(dtype.fills)]
    case = V3Case(n, dtype, shape, chunks, codecs, rng.choice(KEY_ENCODINGS), fill, seed=MATRIX_SEED + n,
                  skip=rng.choice([0, 1, 2, None]) if ndim else rng.choice([None, 0]))
    if fixedscaleoffset(codecs):
        fso = fixedscaleoffset(codecs)
        case.fill = float(np.asarray(rng.randint(-50, 50) / fso["scale"] + fso["offset"]).astype(case.native))
    if ndim and rng.random() < 0.3:
        case.dimension_names = [rng.choice([None, "x", "y", "time", "é", f"d{i}"]) for i in range(ndim)]
    if rng.random() < 0.2:
        case.attributes = {"case": n, "units": rng.choice(["m", "é€"]), "list": [1, 2.5, None, "x"]}
    grid = case.grid()
    if len(grid) >= 3 and rng.random() < 0.6:
        case.empty_chunk = rng.choice(grid)
    if n % 10 == 3:  # leave members out: libzarr must default them as zarr-python does
        case.omit = tuple(m for m in OPTIONAL if rng.random() < 0.6) or ("node_type",)
        if dtype.kind == "r":  # zarr-python 3.1.6's default fill of records puts b"0" in bytes fields: not
            case.omit = tuple(m for m in case.omit if m != "fill_value") or ("node_type",)  # a default to copy
        if "attributes" in case.omit:
            case.attributes = None
        if "codecs" in case.omit:
            case.codecs = default_codecs(dtype)
        if "fill_value" in case.omit:
            case.fill = dtype.default_fill
        if "chunk_key_encoding" in case.omit:
            case.key_encoding = DEFAULT_KEY_ENCODING
    return case


def matrix(size=MATRIX_SIZE, seed=MATRIX_SEED):
    rng = random.Random(seed)
    return [make_case(n, rng) for n in range(size)]


# ---------------------------------------------------------------- files, documents, shard indexes
def store_files(root):
    return {str(p.relative_to(root)).replace("\\", "/") for p in root.rglob("*") if p.is_file()}


def chunk_files(root):
    return {f for f in store_files(root) if f != "zarr.json"}


def load_json(path):
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def zpy_meaning(doc):
    """What zarr-python makes of a zarr.json document, as plain JSON (fills normalised: "NaN" etc.; codecs
    normalised by codecs_meaning, as zarr-python echoes numcodecs configurations as they were given)."""
    meta = ArrayV3Metadata.from_dict(json.loads(json.dumps(doc)))
    out = json.loads(json.dumps(meta.to_dict(), default=str))
    out["codecs"] = codecs_meaning(out["codecs"])
    return out


_BLOSC_DEFAULTS = {"blocksize": 0}


def codecs_meaning(codecs):
    """A codec chain with every configuration completed and spelled one way, so that a writer that
    completes configurations (libzarr) compares equal with the chain it was given: numcodecs.* through
    numcodecs' own get_config(), the optional members of zstd, blosc and sharding_indexed filled in, empty
    configurations dropped, blosc's typesize dropped when it does not shuffle. `bytes` keeps its endian as
    given (it may be left out only for 1-byte types)."""
    import numcodecs

    out = []
    for c in codecs:
        c = {"name": c["name"], "configuration": dict(c.get("configuration") or {})} if isinstance(c, dict) \
            else {"name": c, "configuration": {}}
        name, conf = c["name"], c["configuration"]
        if name.startswith("numcodecs."):
            conf = numcodecs.get_codec(dict(conf, id=name[len("numcodecs."):])).get_config()
            conf.pop("id")
        elif name == "zstd":
            conf.setdefault("checksum", False)
        elif name == "blosc":
            conf = dict(_BLOSC_DEFAULTS, **conf)
            if conf.get("shuffle") == "noshuffle":  # typesize only matters when shuffling (tensorstore drops it)
                conf.pop("typesize", None)
        elif name == "sharding_indexed":
            conf["codecs"] = codecs_meaning(conf["codecs"])
            conf["index_codecs"] = codecs_meaning(conf["index_codecs"])
            conf.setdefault("index_location", "end")
        out.append({"name": name, "configuration": conf} if conf else {"name": name})
    return out


def bytes_endian_meaning(codecs, dtype):
    """codecs_meaning, with the endian of `bytes` dropped for types that have no byte order (1-byte types and
    records, where zarr-python leaves it out and a writer may name one)."""
    out = codecs_meaning(codecs)
    for c in out:
        if c["name"] == "bytes" and not dtype.multibyte:
            c.pop("configuration", None)
        if c["name"] == "sharding_indexed":
            c["configuration"]["codecs"] = bytes_endian_meaning(c["configuration"]["codecs"], dtype)
    return out


def index_size(level, nchunks):
    """Bytes a shard's index of nchunks entries takes."""
    return 16 * nchunks + (4 if level.checksum else 0)


def shard_index(raw, level, nchunks):
    """The (offset, nbytes) entries of a shard's index, C order over the inner chunk grid (checks the
    checksum of the index when the index codecs have one)."""
    size = index_size(level, nchunks)
    assert len(raw) >= size, f"shard of {len(raw)} bytes cannot hold a {size}-byte index"
    index = raw[:size] if level.location == "start" else raw[len(raw) - size:]
    if level.checksum:
        import zlib

        import google_crc32c  # a dependency of zarr-python 3
        name, at_end = level.checksum
        stored, index = (index[-4:], index[:-4]) if at_end else (index[:4], index[4:])
        compute = {"crc32c": google_crc32c.value, "numcodecs.crc32": zlib.crc32,
                   "numcodecs.adler32": zlib.adler32}[name]
        assert int.from_bytes(stored, "little") == compute(index), f"shard index {name}"
    order = "<" if level.index_endian == "little" else ">"
    return np.frombuffer(index, f"{order}u8").reshape(nchunks, 2).astype("<u8")


def check_shards(case, root, expected, keys=None):
    """Each stored shard's index (of the outermost sharding level, when it is the last codec) has the
    all-ones entry exactly for the inner chunks holding only the fill value; the stored inner chunks lie
    inside the shard without overlapping the index or one another."""
    levels = case.levels
    if not levels or not levels[0].last:
        return
    level, fill = levels[0], case.fill_array()
    for idx in case.grid():
        key = case.key(idx)
        path = root / key
        if keys is not None and key not in keys:
            continue
        if not path.exists():
            continue
        raw = path.read_bytes()
        shard = np.transpose(case.padded_chunk(expected, idx), level.perm)
        per = [s // c for s, c in zip(shard.shape, level.config_chunks)]
        entries = shard_index(raw, level, math.prod(per))
        size = index_size(level, math.prod(per))
        lo, hi = (size, len(raw)) if level.location == "start" else (0, len(raw) - size)
        spans = []
        for k, inner in enumerate(itertools.product(*(range(p) for p in per))):
            block = shard[tuple(slice(i * c, (i + 1) * c) for i, c in zip(inner, level.config_chunks))]
            offset, nbytes = (int(x) for x in entries[k])
            if is_all_fill(block, fill):
                assert (offset, nbytes) == (EMPTY, EMPTY), f"{key}: fill-only inner chunk {inner} is stored"
            else:
                assert (offset, nbytes) != (EMPTY, EMPTY), f"{key}: inner chunk {inner} with data is missing"
                assert lo <= offset and offset + nbytes <= hi, f"{key}: inner chunk {inner} outside the data"
                spans.append((offset, offset + nbytes))
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), f"{key}: inner chunks overlap"


# ---------------------------------------------------------------- libzarr side
def read_all(arr, case, start=None, count=None):
    """libzarr reads a box (strings: through the vlen calls, as an object array of str)."""
    if case.dtype.kind != "T":
        return arr.read(start, count)
    start = tuple(start) if start is not None else (0,) * len(case.shape)
    count = tuple(count) if count is not None else tuple(s - o for s, o in zip(case.shape, start))
    items = arr.read_vlen(start, count)
    out = np.empty(count, object)
    for idx, item in zip(np.ndindex(*count), items):
        out[idx] = item.decode("utf-8")
    return out


def write_box(arr, case, values, start=None):
    values = np.asarray(values)
    start = tuple(start) if start is not None else (0,) * values.ndim
    if case.dtype.kind != "T":
        arr.write(values, start)
    else:
        arr.write_vlen([str(v).encode("utf-8") for v in values.reshape(-1)], start, values.shape)


def random_box(shape, rng):
    start = tuple(int(rng.integers(0, s)) if s else 0 for s in shape)
    count = tuple(int(rng.integers(1, s - o + 1)) if s - o else 0 for s, o in zip(shape, start))
    return start, count


def box_slices(start, count):
    return tuple(slice(o, o + c) for o, c in zip(start, count)) + (Ellipsis,)


def check_libzarr_view(arr, case, doc, expected):
    """libzarr's getters and reads agree with the case; `doc` is the zarr.json found in the store."""
    assert arr.zarr_format == 3
    assert arr.ndim == len(case.shape)
    assert arr.shape == tuple(case.shape)
    assert arr.chunks == tuple(case.chunks)
    assert arr.inner_chunks == tuple(case.inner_chunks)
    stored = case.stored_dtype
    text = arr.dtype_string
    if stored.names:
        assert json.loads(text) == libzarr.dtype_to_json(stored)
    else:
        assert text == stored.str
    if case.dtype.kind != "T":
        assert arr.dtype_kind == ("V" if stored.names else stored.kind, stored.itemsize)
        fill = fill_array(case.dtype, doc["fill_value"])  # as stored ("0x..." NaN payloads included)
        got = np.array(arr.fill_value, fill.dtype)  # (numpy's str and bytes scalars drop trailing NULs)
        assert as_bytes(got).tobytes() == as_bytes(fill).tobytes(), (arr.fill_value, fill)
    if case.dtype.kind in "Mm":
        unit, scale = np.datetime_data(case.dtype.np)
        assert arr.time_unit == (unit, scale)
    assert arr.dimension_names == case.dimension_names
    assert arr.attrs() == (case.attributes or {})
    assert arr.metadata == doc
    assert_same(read_all(arr, case), expected, "whole array")
    rng = np.random.default_rng(case.seed + 7)
    for _ in range(2):
        start, count = random_box(case.shape, rng)
        assert_same(read_all(arr, case, start, count), expected[box_slices(start, count)], f"box {start} {count}")
    if case.shape and all(case.shape):
        last = tuple(s - 1 for s in case.shape)
        assert_same(read_all(arr, case, last, (1,) * len(last)), expected[box_slices(last, (1,) * len(last))],
                    "last element")


# ---------------------------------------------------------------- zarr-python side
def zpy_read(z, case, selection=Ellipsis):
    out = np.asarray(z[selection])
    if case.dtype.kind == "T":
        obj = np.empty(out.shape, object)
        for idx in np.ndindex(*out.shape):
            obj[idx] = str(out[idx])
        return obj
    return out


def zarr_python_writes(case, root):
    """zarr-python creates the case's array at `root` and writes its units (leaving the untouched ones);
    checks that it wrote case.doc() and that untouched outer chunks were not stored. Returns `expected`."""
    data, expected = case.data()
    # write_empty_chunks: zarr-python 3.1.6 takes complex values with a NaN part for a fill value with a NaN
    # part (NaN-aware comparison of complex numbers) and drops such chunks: (nan+infj) reads back as the fill
    # (inf+nanj). The untouched units are never written, so this changes nothing else.
    z = case.zpy_create(root, config={"write_empty_chunks": True})
    written = load_json(root / "zarr.json")
    want = case.doc()
    stored_fill, want_fill = written.pop("fill_value"), want.pop("fill_value")
    assert written == want, "zarr-python wrote another document than the case's"
    assert same_elements(fill_array(case.dtype, stored_fill), case.fill_array()), (stored_fill, want_fill)
    for unit in case.units():
        if not case.untouched(unit):
            r = case.region(unit, case.inner_chunks)
            z[r] = data[r]
    present = chunk_files(root)
    for idx in case.grid():
        units_inside = [u for u in case.units()
                        if all(i * c // o == j for i, c, o, j in zip(u, case.inner_chunks, case.chunks, idx))]
        if all(case.untouched(u) for u in units_inside):
            assert case.key(idx) not in present, f"zarr-python stored the untouched chunk {case.key(idx)}"
    assert present <= {case.key(idx) for idx in case.grid()}, f"unexpected keys {present}"
    assert_same(zpy_read(z, case), expected, "zarr-python reads what it wrote")
    return expected


def zarr_python_to_libzarr(case, root):
    expected = zarr_python_writes(case, root)
    doc = load_json(root / "zarr.json")
    with libzarr.open_store(root, "r") as store, store.open_array("") as arr:
        check_libzarr_view(arr, case, doc, expected)


def libzarr_writes(case, root, path="arr"):
    """libzarr creates the case's array from case.request(), checks it empty, writes everything (the
    untouched units hold the fill value), then overwrites a random box. Returns (array root, expected)."""
    _, expected = case.data()
    rng = np.random.default_rng(case.seed + 11)
    with libzarr.open_store(root, "a") as store, store.create_array(path, case.request()) as arr:
        node = root / path
        doc = load_json(node / "zarr.json")
        check_stored_document(case, doc)
        empty = np.empty(case.shape, case.native)
        empty[...] = case.fill_array()
        check_libzarr_view(arr, case, doc, empty)
        assert chunk_files(node) == set(), "nothing written yet"
        write_box(arr, case, expected)
        if case.shape and all(case.shape):
            start, count = random_box(case.shape, rng)
            box = case.values(rng)[box_slices(start, count)]
            write_box(arr, case, box, start)
            expected[box_slices(start, count)] = box
        check_libzarr_view(arr, case, doc, expected)
    return node, expected


def check_stored_document(case, doc):
    """The zarr.json libzarr wrote: the members given as given (codecs: their configurations may be completed
    with the defaults, see codecs_meaning), the omitted ones as zarr-python defaults them (in meaning)."""
    want = case.doc()
    assert set(doc) == set(want), f"members {sorted(doc)} != {sorted(want)}"
    for k, v in case.request().items():
        if k == "codecs":
            assert bytes_endian_meaning(doc[k], case.dtype) == bytes_endian_meaning(v, case.dtype), \
                f"codecs: {doc[k]!r} != {v!r} (given)"
        else:
            assert doc[k] == v, f"{k}: {doc[k]!r} != {v!r} (given)"
    for k in case.omit:
        if k == "fill_value":
            assert_same(fill_array(case.dtype, doc[k]), case.fill_array(), "default fill value")
        elif k == "codecs":
            assert bytes_endian_meaning(doc[k], case.dtype) == bytes_endian_meaning(want[k], case.dtype), \
                f"codecs: {doc[k]!r} (defaulted) != {want[k]!r}"
        else:
            assert zpy_meaning(dict(want, **{k: doc[k]})) == zpy_meaning(want), f"{k}: {doc[k]!r} (defaulted)"


def libzarr_to_zarr_python(case, root):
    node, expected = libzarr_writes(case, root)
    assert chunk_files(node) == case.expected_keys(expected), "chunk keys: exactly the chunks not all fill"
    check_shards(case, node, expected)
    z = zarr.open_array(str(node), mode="r")
    assert zpy_meaning(load_json(node / "zarr.json")) == zpy_meaning(case.doc())
    assert zpy_meaning(z.metadata.to_dict()) == zpy_meaning(case.doc())
    assert list(z.metadata.dimension_names or []) == list(case.dimension_names or [])
    assert dict(z.attrs) == (case.attributes or {})
    assert_same(zpy_read(z, case), expected, "zarr-python reads what libzarr wrote")


def zarr_python_accepts(case, root):
    """zarr-python opens the document libzarr is given (with the omitted members filled in as zarr-python
    defaults them), writes the expected values through it and reads them back: the documents of direction B
    are valid for zarr-python, and the expected chunk keys are those zarr-python leaves where the fill
    value compares equal byte for byte and NaN-aware alike."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "zarr.json").write_text(json.dumps(case.doc(), allow_nan=False))
    z = zarr.open_array(str(root), mode="r+")
    fill = case.fill_array()
    nan_fill = case.dtype.kind in "fc" and bool(np.isnan(fill).any())
    if nan_fill:  # (see zarr_python_writes)
        z = z.with_config({"write_empty_chunks": True})
    assert zpy_meaning(z.metadata.to_dict()) == zpy_meaning(case.doc())
    _, expected = case.data()
    z[...] = expected
    assert_same(zpy_read(z, case), expected, "zarr-python round trip")
    if not nan_fill:
        assert chunk_files(root) == case.expected_keys(expected), "chunk keys"
        check_shards(case, root, expected)
