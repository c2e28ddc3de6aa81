"""Data types beyond numbers, in both directions: fixed-length bytes |S<n>, unicode <U<n>/>U<n>, raw |V<n>,
datetime64/timedelta64 in every unit (and multiples), structured types (flat, nested, sub-array fields, mixed
byte orders, S/U/V/M8 fields inside). Also the time-unit and field getters against numpy, field selections
against zarr-python's fields=, the UTF-8/UTF-32 helpers, and the fill value spellings of zarr-python 2 and 3.

Values are compared byte for byte in native byte order (any dtype, NaN payloads and embedded NULs included).
"""
import base64
import dataclasses
import itertools
import json
import math

import numpy as np
import pytest

import libzarr
import zpy
from cases import Case, assert_chunk_files, load_json, normalize_codec, random_data
from libzarr import dtype_from_json, dtype_to_json

I64_MIN, I64_MAX = -2**63, 2**63 - 1  # I64_MIN is NaT
KIND_CODES = {"S": libzarr.DTYPE_BYTES, "U": libzarr.DTYPE_UNICODE, "V": libzarr.DTYPE_RAW,
              "M": libzarr.DTYPE_DATETIME, "m": libzarr.DTYPE_TIMEDELTA}
ALPHABET = list("abcXYZ019 -_.") + ["é", "ß", "ÿ", "€", "中", "\u0301", "𝄞", "😀", "\U0010FFFF", "\U00010000"]
UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"]

# ---------------------------------------------------------------- the table: (.zarray dtype, a non-default fill)
# Fills: bytes for S/V, str for U, int64 counts for M8/m8 (I64_MIN = NaT), tuples for records.
SCALARS = [("|S7", b"fi\x00l\xff"), ("|S1", b"\x80"), ("|S5", b""),
           ("<U5", "é€𝄞"), (">U5", "𝄞😀x"), ("<U1", "€"), (">U3", ""), ("<U4", "a\x00b"),
           ("|V6", b"\x00\x01\xff\x00\x00\x00"), ("|V1", b"\x7f")]
TIMES = [(f"{'<>'[(i + k) % 2]}{'Mm'[k]}8[{u}]", I64_MIN if (2 * i + k) % 3 == 0 else -12345 * (2 * i + k + 1))
         for i, u in enumerate(UNITS) for k in range(2)]  # every unit, datetime and timedelta, both byte orders
TIMES += [("<M8[10s]", I64_MIN), (">m8[10s]", 7), ("<m8[25ms]", -3), (">M8[3D]", 100), ("<M8", -5), (">m8", I64_MIN)]
STRUCTS = {
    "flat": ([["a", "<i4"], ["b", ">f8"], ["c", "|b1"], ["d", "<c8"]], (7, -2.5, True, 1 + 2j)),
    "mixed": ([["id", ">u2"], ["name", "<U4"], ["tag", "|S3"], ["t", ">M8[ms]"], ["h", "<f2"], ["é", ">i8"]],
              (513, "é€", b"x\x00", -1, 0.5, I64_MIN)),
    "nested": ([["a", "<i2"], ["n", [["x", ">u4"], ["y", [["p", "<f4"], ["q", "|S2"]]]]], ["u", ">U1"]],
               (-3, (9, (1.5, b"q")), "𝄞")),
    "subarray": ([["a", "<i4"], ["z", ">f4", [2, 3]], ["s", "|S2", [2]], ["u", ">U2", [2]], ["n", [["k", "<i2", [3]]]]],
                 (1, [[1, 2, 3], [4, 5, 6.5]], [b"ab", b""], ["é", "€𝄞"], ([1, -2, 3],))),
    "raw-time": ([["r", "|V3"], ["m", ">m8[10s]"], ["u", "<U2"]], (b"\x01\x00\x02", 5, "é€")),
}
DTYPES = SCALARS + TIMES + list(STRUCTS.values())
COMPS = ["raw", "zstd3", "blosc-lz4-shuf", "blosc-lz4hc-bitshuf"]
LAYOUTS = [("C", "."), ("F", "/"), ("F", "."), ("C", "/")]
GEOMETRIES = [((7, 10), (3, 4)), ((5, 4, 3), (2, 3, 2))]  # 3 x 3 and 3 x 2 x 2 grids, overhanging edges


def label(descr):
    if isinstance(descr, str):
        return descr
    return next((k for k, (d, _) in STRUCTS.items() if d == descr), "record")


@dataclasses.dataclass(frozen=True)
class DCase(Case):
    """A case whose dtype is a .zarray dtype (a type string or the list form of a structured type)."""

    def __str__(self):
        fill = "null" if self.fill is None else "fill"
        return f"{label(self.dtype)}-{self.comp}-{self.order}{self.sep}-{len(self.shape)}d-{fill}"

    @property
    def stored(self):
        return dtype_from_json(self.dtype)

    @property
    def native(self):
        return self.stored.newbyteorder("=")

    def fill_array(self):
        """The fill value as a 0-d native array (zeros for null: what libzarr reads for missing chunks)."""
        return np.zeros((), self.native) if self.fill is None else to_native(self.fill, self.stored)

    def zarray(self):
        return {"zarr_format": 2, "shape": list(self.shape), "chunks": list(self.chunks), "dtype": self.dtype,
                "compressor": self.compressor_config, "fill_value": encode_fill(self.fill, self.stored),
                "order": self.order, "filters": None, "dimension_separator": self.sep}

    def zpy_kwargs(self):
        fill = None if self.fill is None else to_native(self.fill, self.stored).astype(self.stored)[()]
        return dict(shape=self.shape, chunks=self.chunks, dtype=self.stored, compressor=self.codec,
                    fill_value=fill, order=self.order, separator=self.sep)

    def data(self):
        """(source data, expected contents after writing the written() chunks), native byte order."""
        data = random_values(self.stored, self.shape, np.random.default_rng(self.seed))
        expected = np.empty(self.shape, self.native)
        expected[...] = self.fill_array()
        for idx in self.written():
            r = self.region(idx)
            expected[r] = data[r]
            assert not all_bytes_equal(expected[r], self.fill_array()), "a written chunk must not be all fill"
        return data, expected


def dtype_cases():
    cases = []
    for i, (descr, fill) in enumerate(DTYPES):
        for variant in range(2):  # a fill value with missing chunks; null with every chunk written
            k = 2 * i + variant
            geometry = GEOMETRIES[1] if not isinstance(descr, str) and variant else GEOMETRIES[0]
            cases.append(DCase(descr, COMPS[(k + i) % len(COMPS)], *LAYOUTS[k % len(LAYOUTS)], *geometry,
                               fill=None if variant else fill, seed=4000 + k, skip=None if variant else 1))
    return cases


CASES = dtype_cases()


# ---------------------------------------------------------------- values and their encodings
def to_native(value, stored):
    """A table value (bytes/str/int/tuple) -> 0-d array of the native dtype."""
    if stored.kind in "Mm":
        return np.array(value, np.int64).astype(stored.newbyteorder("="))
    return np.array(value, stored).astype(stored.newbyteorder("="))


def encode_fill(value, stored):
    """The Zarr v2 fill_value JSON, as zarr-python writes it for a numpy scalar of the stored dtype."""
    if value is None:
        return None
    a = np.array(to_native(value, stored), stored)
    if stored.kind in "Mm":
        return int(a.astype(np.int64))
    if stored.kind == "U":
        return str(a[()])
    if stored.kind == "S":  # numpy's bytes scalar drops trailing NULs
        return base64.standard_b64encode(bytes(a[()])).decode()
    return base64.standard_b64encode(a.tobytes()).decode()  # V and structured: all the stored bytes


def decode_fill(value, stored):
    """A fill_value JSON (any spelling zarr-python writes) -> 0-d native array, or None."""
    if value is None:
        return None
    nat = stored.newbyteorder("=")
    if stored.kind in "Mm":
        return np.array(I64_MIN if value == "NaT" else value, np.int64).astype(nat)
    if stored.kind == "U":
        return np.array(value, stored).astype(nat)
    raw = base64.standard_b64decode(value)
    if stored.kind == "S":
        return np.array(raw, stored).astype(nat)
    return np.frombuffer(raw, stored).reshape(()).astype(nat)


def random_values(dt, shape, rng):
    """Random native-order values of dtype dt, with the awkward ones: empty and full-length strings,
    multi-byte and astral characters, embedded NULs, all-zero raw values, NaT and the int64 extremes;
    numbers from cases.random_data (NaN, inf, -0.0, subnormals, integer extremes)."""
    dt, shape = np.dtype(dt), tuple(shape)
    nat, n = dt.newbyteorder("="), math.prod(shape)
    if dt.names:
        out = np.empty(shape, nat)
        for name in dt.names:
            f = dt.fields[name][0]
            out[name] = random_values(f.base, shape + f.shape, rng)
        return out
    if dt.kind not in "SUVMm":
        return random_data(dt.str, shape, int(rng.integers(2**31)))
    if dt.kind == "S":
        k = dt.itemsize
        values = [bytes(rng.integers(1, 256, rng.integers(0, k + 1), dtype=np.uint8)) for _ in range(n)]
        specials = [b"", bytes(rng.integers(1, 256, k, dtype=np.uint8)), b"a\x00b"[:k]]
    elif dt.kind == "U":
        k = dt.itemsize // 4
        values = ["".join(rng.choice(ALPHABET, rng.integers(0, k + 1))) for _ in range(n)]
        specials = ["", "".join(rng.choice(ALPHABET, k)), ("é€𝄞" * k)[:k], "x\x00y"[:k]]
    elif dt.kind == "V":
        values = [bytes(rng.integers(0, 256, dt.itemsize, dtype=np.uint8)) for _ in range(n)]
        specials = [bytes(dt.itemsize)]
    else:
        wide = rng.integers(I64_MIN + 1, I64_MAX, n, endpoint=True)
        values = list(np.where(rng.integers(0, 2, n) == 1, wide, rng.integers(-10**6, 10**6, n)))
        specials = [I64_MIN, I64_MAX, I64_MIN + 1, 0, -1]
    for pos, v in zip(rng.permutation(n), specials):
        values[pos] = v
    if dt.kind in "Mm":
        return np.array(values, np.int64).astype(nat).reshape(shape)
    return np.array(values, nat).reshape(shape)


def as_bytes(a):
    """(..., itemsize) uint8 view of an array's elements."""
    a = np.asarray(a)  # (tobytes: C order; np.ascontiguousarray would make 0-d arrays 1-d)
    return np.frombuffer(a.tobytes(), np.uint8).reshape(a.shape + (a.dtype.itemsize,))


def all_bytes_equal(block, value):
    return bool((as_bytes(block) == as_bytes(value)).all())


def assert_same_bytes(actual, expected, what="values"):
    """Same shape, same dtype up to byte order, and the same values byte for byte in native order."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("="), (actual.dtype, expected.dtype)
    nat = expected.dtype.newbyteorder("=")
    a, e = as_bytes(actual.astype(nat)), as_bytes(expected.astype(nat))
    bad = (a != e).any(axis=-1)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
        pytest.fail(f"{what}: {bad.sum()} of {bad.size} elements differ, first at {first}: "
                    f"{actual.astype(nat)[first]!r} != {expected.astype(nat)[first]!r}", pytrace=False)


def expect_error(names, fn, *args, **kwargs):
    with pytest.raises(libzarr.LibzarrError) as e:
        fn(*args, **kwargs)
    assert e.value.name in names.split("|"), str(e.value)
    assert e.value.message, "zarr_last_error() should describe the failure"
    return e.value


# ---------------------------------------------------------------- what libzarr must say about a dtype
def fields_info(dt):
    """zarr_array_fields_json as numpy describes the stored dtype: names, type (base), offset, size, shape."""
    info = []
    for name in dt.names or ():
        f, offset = dt.fields[name][:2]
        item = {"name": name, "dtype": dtype_to_json(f.base), "offset": offset, "itemsize": f.itemsize,
                "shape": list(f.shape)}
        if f.base.names:
            item["fields"] = fields_info(f.base)
        info.append(item)
    return info


def check_dtype_getters(arr, stored):
    """Kind, size, type string, time unit and fields of a libzarr array against numpy's dtype."""
    kind = "structured" if stored.names else stored.kind
    assert arr.kind_code == KIND_CODES.get(kind, libzarr.DTYPE_STRUCTURED)
    assert arr.dtype_kind == ("V" if stored.names else stored.kind, stored.itemsize)
    text = arr.dtype_string
    assert (json.loads(text) if stored.names else text) == dtype_to_json(stored)
    assert arr.stored_dtype == stored and arr.dtype == stored.newbyteorder("=")
    if stored.kind in "Mm":
        unit, multiple = np.datetime_data(stored)  # ("s", 10) for [10s]
        assert arr.time_unit == ("" if unit == "generic" else unit, multiple)
    else:
        expect_error("ZARR_ERR_INVALID_ARGUMENT", lambda: arr.time_unit)
    assert arr.field_count == len(stored.names or ())
    assert arr.fields == fields_info(stored)
    for i, name in enumerate(stored.names or ()):
        f, offset = stored.fields[name][:2]
        got = arr.field(i)
        assert (json.loads(got["dtype"]) if f.base.names else got["dtype"]) == dtype_to_json(f.base)
        assert (got["name"], got["offset"], got["size"], got["ndim"]) == (name, offset, f.itemsize, len(f.shape))
    if stored.names:
        expect_error("ZARR_ERR_INVALID_ARGUMENT", arr.field, len(stored.names))


def check_fill(actual, case, what):
    """actual: a 0-d native array / numpy scalar, or None."""
    if case.fill is None:
        assert actual is None, what
    else:
        assert actual is not None, what
        assert_same_bytes(np.array(actual, case.stored), case.fill_array(), what)


def check_libzarr_view(arr, case, expected):
    assert arr.shape == case.shape and arr.chunks == case.chunks and arr.order == case.order
    assert normalize_codec(arr.compressor) == normalize_codec(case.compressor_config) and arr.filters is None
    check_dtype_getters(arr, case.stored)
    check_fill(arr.fill_value, case, "zarr_array_fill_value")
    doc = arr.metadata
    assert doc["dtype"] == case.dtype
    check_fill(decode_fill(doc["fill_value"], case.stored), case, "zarr_array_metadata_json fill_value")
    assert_same_bytes(arr.read(), expected)
    inner = tuple(max(s - 2, 0) for s in case.shape)
    assert_same_bytes(arr.read((1,) * len(case.shape), inner), expected[tuple(slice(1, 1 + c) for c in inner)])
    last = tuple(s - 1 for s in case.shape)
    assert_same_bytes(arr.read(last, (1,) * len(last)), expected[tuple(slice(s, s + 1) for s in last)])


def check_zpy_view(z, case, expected):
    props = zpy.properties(z)
    assert (props["shape"], props["chunks"], props["order"]) == (list(case.shape), list(case.chunks), case.order)
    assert normalize_codec(props["compressor"]) == normalize_codec(case.compressor_config)
    assert np.dtype(z.dtype) == case.stored
    check_fill(z.fill_value, case, "zarr-python's fill_value")
    assert_same_bytes(zpy.read(z), expected)


# ---------------------------------------------------------------- both directions
def zpy_writes(case, root):
    """zarr-python creates and writes the case; returns its array (which can read back even where this
    zarr-python cannot open the array again) and the expected contents."""
    if zpy.cannot_write(case.stored, case.codec):
        pytest.xfail(zpy.cannot_write(case.stored, case.codec))
    data, expected = case.data()
    z = zpy.create(root, **case.zpy_kwargs())
    for idx in case.written():
        z[case.region(idx)] = data[case.region(idx)]
    doc = load_json(root / ".zarray")  # zarr-python wrote what we meant, in the canonical spelling
    assert doc["dtype"] == case.dtype and doc["fill_value"] == encode_fill(case.fill, case.stored)
    assert_chunk_files(root, case)
    return z, expected


def lib_writes(case, root, check=True):
    data, expected = case.data()
    with libzarr.open_store(root, "a") as store, store.create_array("", case.zarray()) as arr:
        for idx in case.written():
            region = case.region(idx)
            arr.write(data[region], [r.start for r in region])
        if check:
            check_libzarr_view(arr, case, expected)
    return expected


@pytest.mark.parametrize("case", CASES, ids=str)
def test_zarr_python_to_libzarr(case, tmp_path):
    _, expected = zpy_writes(case, tmp_path)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        check_libzarr_view(arr, case, expected)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_libzarr_to_zarr_python(case, tmp_path):
    generic = zpy._generic_times(case.stored)
    if generic:  # the v2 spec: a datetime/timedelta type MUST name its unit; libzarr refuses to create one
        with libzarr.open_store(tmp_path, "a") as store:
            err = expect_error("ZARR_ERR_INVALID_METADATA", store.create_array, "", case.zarray())
        assert f"dtype {dtype_to_json(generic[0])}:" in str(err) and "unit" in str(err), str(err)
        assert not (tmp_path / ".zarray").exists()
        return
    expected = lib_writes(case, tmp_path, check=False)
    text, doc = (tmp_path / ".zarray").read_text(), load_json(tmp_path / ".zarray")
    assert list(doc) == sorted(doc) and "\n" in text, "contract: pretty JSON with sorted keys"
    assert doc["dtype"] == case.dtype, "the dtype JSON as zarr-python 2 writes it"
    assert doc["fill_value"] == encode_fill(case.fill, case.stored), "the fill_value as zarr-python writes it"
    assert_chunk_files(tmp_path, case)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        check_libzarr_view(arr, case, expected)
    if zpy.cannot_open(case.stored, case.fill):
        pytest.xfail(zpy.cannot_open(case.stored, case.fill))
    check_zpy_view(zpy.open_array(tmp_path), case, expected)


def test_zarr3_flattened_subarray_fields(tmp_path):
    """What zarr-python 3.1 makes of sub-array fields (written as |V<n>): libzarr reads its arrays as it does."""
    case = next(c for c in CASES if label(c.dtype) == "subarray" and c.fill is not None)
    if not zpy.cannot_write(case.stored):
        pytest.skip("this zarr-python writes sub-array fields as they are (test_zarr_python_to_libzarr)")
    if zpy.REFUSES_SUBARRAY_FIELDS:
        with pytest.raises(ValueError, match="subarray"):
            zpy.create(tmp_path, **case.zpy_kwargs())
        assert not (tmp_path / ".zarray").exists()
        pytest.skip(f"{zpy.SUBARRAY_FIELDS_REFUSED}: it flattens nothing for libzarr to read")
    data, _ = case.data()
    z = zpy.create(tmp_path, **case.zpy_kwargs())
    for idx in case.written():
        z[case.region(idx)] = data[case.region(idx)]
    doc = load_json(tmp_path / ".zarray")
    assert doc["dtype"] == [["a", "<i4"], ["z", "|V24"], ["s", "|V4"], ["u", "|V16"], ["n", [["k", "|V6"]]]]
    flat = np.dtype(z.dtype)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        check_dtype_getters(arr, flat)
        assert_same_bytes(np.array(arr.fill_value, flat), np.array(z.fill_value, flat))
        assert_same_bytes(arr.read(), zpy.read(z))


# ---------------------------------------------------------------- field selections
FIELD_NAMES = {"flat": [["b", "a"], ["d"], ["c", "b", "a", "d"]], "mixed": [["é", "name"], ["t", "tag"], ["h"]],
               "nested": [["n", "a"], ["u"]], "subarray": [["z", "a"], ["n", "s"]], "raw-time": [["u", "r"], ["m"]]}
FIELD_CASES = [c for c in CASES if not isinstance(c.dtype, str)]


def boxes(shape):
    """(start, count): everything, an unaligned interior box, one element."""
    yield (0,) * len(shape), tuple(shape)
    yield (1,) * len(shape), tuple(max(s - 2, 1) for s in shape)
    yield tuple(s - 1 for s in shape), (1,) * len(shape)


def box(start, count):
    return tuple(slice(o, o + c) for o, c in zip(start, count))


def packed(values, names, dtype):
    """values' fields `names` as records of `dtype` (assigned by name)."""
    out = np.empty(values.shape, dtype)
    for n in names:
        out[n] = values[n]
    return out


def source(case, root):
    """The case written by zarr-python (by libzarr where this zarr-python cannot): (zarr-python array or None,
    expected contents)."""
    if zpy.cannot_write(case.stored, case.codec):
        return None, lib_writes(case, root)
    return zpy_writes(case, root)


@pytest.mark.parametrize("case", FIELD_CASES, ids=str)
def test_read_fields(case, tmp_path):
    z, expected = source(case, tmp_path)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        for names in FIELD_NAMES[label(case.dtype)]:
            want = arr.fields_dtype(names)
            assert want.names == tuple(names) and want.itemsize == sum(case.native[n].itemsize for n in names)
            for start, count in boxes(case.shape):
                got = arr.read_fields(names, start, count)
                assert got.dtype == want and got.shape == tuple(count)
                assert_same_bytes(got, packed(expected[box(start, count)], names, want))  # the numpy model
                if z is not None:
                    assert_same_bytes(got, packed(zpy.get_fields(z, box(start, count), names), names, want))


@pytest.mark.parametrize("case", [c for c in FIELD_CASES if c.fill is not None], ids=str)
def test_write_fields(case, tmp_path):
    """libzarr writes some fields of boxes (one covering missing chunks); zarr-python sees only those change."""
    z, model = source(case, tmp_path)
    present, rng = set(case.written()), np.random.default_rng(case.seed + 1)
    missing = next(i for i in case.grid() if i not in present)
    mr = case.region(missing)
    writes = [([s.start for s in mr], [s.stop - s.start for s in mr]), list(boxes(case.shape))[1]]
    with libzarr.open_store(tmp_path, "a") as store, store.open_array("") as arr:
        for k, (start, count) in enumerate(writes):
            names = FIELD_NAMES[label(case.dtype)][k % 2]
            values = random_values(case.stored, count, rng)
            arr.write_fields(names, packed(values, names, arr.fields_dtype(names)), start)
            for n in names:
                model[box(start, count)][n] = values[n]
            present |= set(itertools.product(*(range(o // c, (o + n - 1) // c + 1)
                                               for o, n, c in zip(start, count, case.chunks))))
        assert_same_bytes(arr.read(), model)
    assert_chunk_files(tmp_path, case, present)
    if z is not None:
        assert_same_bytes(zpy.read(z), model)  # (zarr-python's array from before: it reads the chunks again)


def test_field_errors(tmp_path):
    case = next(c for c in FIELD_CASES if label(c.dtype) == "flat")
    lib_writes(case, tmp_path / "s")
    lib_writes(CASES[0], tmp_path / "b")
    with libzarr.open_store(tmp_path, "a") as store, store.open_array("s") as arr, store.open_array("b") as b:
        for names in [["nope"], ["a", "a"], ["a", "nope"], ["A"]]:
            expect_error("ZARR_ERR_INVALID_ARGUMENT", arr.read_fields, names, (0, 0), (1, 1),
                         dtype=np.dtype("V12"))
        out_dt = arr.fields_dtype(["b", "a"])
        for size in [out_dt.itemsize - 1, out_dt.itemsize + 1]:  # 1 record asked for, buffer off by one byte
            expect_error("ZARR_ERR_BUFFER_SIZE", arr.read_fields, ["b", "a"], (0, 0), (1, 1), dtype=f"V{size}")
            expect_error("ZARR_ERR_BUFFER_SIZE", arr.write_fields, ["b", "a"], np.zeros((1, 1), f"V{size}"))
        expect_error("ZARR_ERR_OUT_OF_BOUNDS", arr.read_fields, ["a"], case.shape, (1, 1))
        expect_error("ZARR_ERR_INVALID_ARGUMENT", b.read_fields, ["a"], (0, 0), (1, 1), dtype=np.dtype("V4"))
        assert (b.field_count, b.fields) == (0, [])
        expect_error("ZARR_ERR_INVALID_ARGUMENT", b.field, 0)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("s") as arr:
        expect_error("ZARR_ERR_READ_ONLY", arr.write_fields, ["a"], np.zeros((1, 1), [("a", "<i4")]))


# ---------------------------------------------------------------- fill value spellings (zarr 2 vs 3)
SPELLINGS = [  # (dtype, fill given to zarr-python, {zarr major: fill_value it writes}, other spellings, value)
    # a Python bytes fill with a trailing NUL: zarr 2 converts it to a numpy scalar first (which drops the NUL),
    # zarr 3 encodes it as given
    ("|S3", b"\xff\x00", {2: "/w==", 3: "/wA="}, ["/w==", "/wA=", "/wAA"], b"\xff"),
    ("|S3", b"", {2: "", 3: ""}, ["AAAA", 0], b""),
    ("<U3", "a\x00b", {2: "a\x00b", 3: "a\x00b"}, [], "a\x00b"),  # an embedded NUL is part of numpy's str
    ("|V2", b"\x00\x00", {2: "AAA=", 3: "AAA="}, [0], b"\x00\x00"),
    (">m8[ns]", np.timedelta64("NaT"), {2: I64_MIN, 3: I64_MIN}, ["NaT"], I64_MIN),
    ("<M8[s]", np.datetime64(-1, "s"), {2: -1, 3: -1}, [-1.0], -1),
    # a numeric 0 for a record: numpy casts 0 to each field ("0" for S and U fields), then base64
    ([["a", "<i2"], ["s", "|S2"], ["u", ">U1"]], 0, {2: "AAAwAAAAADA=", 3: "AAAwAAAAADA="}, [], (0, b"0", "0")),
]


@pytest.mark.parametrize("descr, zfill, written, others, value", SPELLINGS,
                         ids=[f"{label(s[0])}-{s[4]!r}" for s in SPELLINGS])
def test_fill_value_spellings(descr, zfill, written, others, value, tmp_path):
    case = DCase(descr, "raw", shape=(4,), chunks=(2,), fill=value)
    stored = case.stored
    z = zpy.create(tmp_path, shape=(4,), chunks=(2,), dtype=stored, fill_value=zfill)
    z[:2] = random_values(stored, (2,), np.random.default_rng(1))
    doc = load_json(tmp_path / ".zarray")
    assert doc["fill_value"] == written[3 if zpy.ZARR3 else 2]
    check_fill(z.fill_value, case, "zarr-python's fill_value")
    for spelling in [doc["fill_value"]] + others:
        (tmp_path / ".zarray").write_text(json.dumps(dict(doc, fill_value=spelling)))
        with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
            check_fill(arr.fill_value, case, f"zarr_array_fill_value of {spelling!r}")
            assert_same_bytes(arr.read((2,), (2,)), np.broadcast_to(case.fill_array(), (2,)), "missing chunk")
            assert arr.metadata["fill_value"] == encode_fill(value, stored), "canonical spelling"


# ---------------------------------------------------------------- UTF-8 <-> UTF-32 helpers
def utf32(text, n=None):
    units = np.frombuffer(text.encode("utf-32-le"), "<u4").astype(np.uint32)
    return units if n is None else np.concatenate([units, np.zeros(n - len(units), np.uint32)])


def test_utf_round_trips():
    rng = np.random.default_rng(7)
    texts = ["", "a", "é", "€", "𝄞", "\U0010FFFF", "\U00010000", "\u07ff\u0800\uffff", "a\x00b"]
    texts += ["".join(rng.choice(ALPHABET, rng.integers(1, 30))) for _ in range(200)]
    scalars = np.r_[1:0xD800, 0xE000:0x110000]  # every Unicode scalar value but NUL
    texts += ["".join(map(chr, rng.choice(scalars, 12))) for _ in range(200)]
    for text in texts:
        n = len(text)
        for nchars in {n, n + 3}:
            units = libzarr.utf8_to_utf32(text, nchars)
            assert np.array_equal(units, utf32(text, nchars)), text  # unused units zeroed
        end = text.find("\x00")
        shown = text if end < 0 else text[:end]  # a zero unit ends the text
        assert libzarr.utf32_to_utf8(utf32(text)) == shown.encode(), text
        assert libzarr.utf32_to_utf8(utf32(text, n + 2)) == shown.encode(), text
        assert libzarr.utf32_to_utf8(utf32(text), len(shown.encode())) == shown.encode(), "exact size fits"
        assert libzarr.utf8_to_utf32(text.encode(), n).tobytes() == utf32(text).tobytes()


def test_utf_matches_numpy_unicode(tmp_path):
    """A U array read through libzarr decodes with the helper to what numpy shows."""
    case = next(c for c in CASES if c.dtype == ">U5" and c.fill is not None)
    expected = lib_writes(case, tmp_path)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        got = arr.read()
        for value, want in zip(got.ravel(), expected.ravel()):
            units = np.frombuffer(np.array(value, got.dtype).tobytes(), np.uint32)
            assert libzarr.utf32_to_utf8(units).decode() == str(want).split("\x00")[0]  # a zero unit ends it
            assert libzarr.utf8_to_utf32(str(want), 5).tobytes() == np.array(want, got.dtype).tobytes()


@pytest.mark.parametrize("data", [b"\xff", b"\xc3", b"a\xc3(", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80",
                                  b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"ok\x80"],
                         ids=lambda d: d.hex())
def test_utf8_invalid(data):
    expect_error("ZARR_ERR_INVALID_ARGUMENT", libzarr.utf8_to_utf32, data, 16)


def test_utf_errors():
    for units in [[0xD800], [0xDFFF], [0x110000], [ord("a"), 0xFFFFFFFF]]:
        expect_error("ZARR_ERR_INVALID_ARGUMENT", libzarr.utf32_to_utf8, np.array(units, np.uint32))
    for text, size in [("€", 2), ("a𝄞", 4), ("ab", 1), ("é", 0)]:
        expect_error("ZARR_ERR_BUFFER_SIZE", libzarr.utf32_to_utf8, text, size)
    for text, nchars in [("abc", 2), ("𝄞𝄞", 1), ("é", 0)]:
        expect_error("ZARR_ERR_BUFFER_SIZE", libzarr.utf8_to_utf32, text, nchars)
    assert libzarr.utf8_to_utf32("", 0).size == 0 and libzarr.utf32_to_utf8("", 0) == b""


# ---------------------------------------------------------------- long doubles (NumPy's float128, complex256)
@pytest.mark.skipif(np.dtype(np.longdouble).itemsize != 16 or np.finfo(np.longdouble).nmant != 63,
                    reason="this platform's long double is not x87 extended precision")
@pytest.mark.parametrize("dtype,fill", [("<f16", -2.5), (">f16", "NaN"), ("<c32", [1.5, -0.25])])
def test_long_doubles_both_ways(tmp_path, dtype, fill):
    """Long doubles, which zarr-python 2 writes as NumPy holds them (x87 extended precision in 16 bytes): the
    values beyond float64's precision and range survive both ways; the fill value travels as a JSON float."""
    if zpy.ZARR3:
        pytest.skip("zarr-python 3 has no Zarr data type for long doubles")
    shape, chunks = (7, 5), (3, 4)
    values = np.empty(shape, dtype)
    values.real = np.longdouble(1) / 3 + np.arange(35).reshape(shape)   # 1/3 to 64 bits, not 53
    values.flat[3] = np.longdouble("1e4000")                             # beyond float64's range
    if dtype.startswith("<c"):
        values.imag = -values.real
    fill_value = complex(*fill) if isinstance(fill, list) else float(fill)
    z = zpy.create(tmp_path / "zpy", shape=shape, chunks=chunks, dtype=dtype, fill_value=fill_value)
    z[:2, :] = values[:2, :]
    expected = z[...]
    with libzarr.open_store(tmp_path, "a") as store:
        with store.open_array("zpy") as arr:
            assert arr.dtype == np.dtype(dtype).newbyteorder("=")  # the caller sees native values
            got = arr.read()
            assert np.array_equal(got, expected, equal_nan=True)
            first, far = got.real.flat[0], got.real.flat[3]
            assert far == np.longdouble("1e4000") and first != first.astype(np.float64)  # 64-bit precision kept
        meta = {"zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "dtype": dtype, "compressor": None,
                "fill_value": fill, "order": "C", "filters": None}
        with store.create_array("lib", meta) as arr:
            arr.write(values[:, :4], (0, 0))
    theirs = zpy.read(zpy.open_array(tmp_path / "lib"))
    model = np.full(shape, fill_value, dtype)
    model[:, :4] = values[:, :4]
    assert np.array_equal(theirs, model, equal_nan=True)
    assert load_json(tmp_path / "lib" / ".zarray")["fill_value"] == fill
