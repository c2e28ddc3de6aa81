"""The registered Zarr v3 array->array codecs `cast_value` and `scale_offset` (zarr-extensions).

`cast_value` against zarr-python 3 with the `cast-value` package (0.2.1, the codec plugin registered by entry
point as `cast_value`; without `cast-value-rs` installed it runs its NumPy implementation), both ways: the
same zarr.json and data are written by each library into its own store, the stored chunks must be the same
bytes, each library reads what the other wrote, and data one refuses the other refuses too.

`scale_offset` chains (the spec's examples, with `cast_value` behind them) are written by libzarr and checked
against the spec's formula computed with NumPy on the stored bytes, and read back. zarr-python 3.1.6 has no
`scale_offset` codec: it (with the cast-value plugin) must refuse to open them rather than misread them.
zarr-python 3.2 and later have one (`zarr.codecs.scale_offset`): it must write the same bytes and read the
same values, both ways.

zarr-python 3.2 and later also have a `cast_value` codec of their own, which needs the `cast-value-rs` package
(not installed here); with both registered zarr-python picks one by registration order ("not configured in
config. Selecting any implementation"), so the config here names the cast-value package's.

Where the cast-value package departs from the spec, the cases are strict xfails naming the difference.
"""
import json

import pytest

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("Zarr v3 needs zarr-python 3", allow_module_level=True)
pytest.importorskip("cast_value")

import importlib.metadata  # noqa: E402

import numcodecs  # noqa: E402
import numpy as np  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning"),
              pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")]
pytest.register_assert_rewrite("v3cases")
import libzarr  # noqa: E402
from v3cases import assert_same, chunk_files, load_json  # noqa: E402

# The cast-value package's codec class, as its entry point names it; zarr-python's config key is its full name.
_PLUGIN = next(iter(importlib.metadata.entry_points(group="zarr.codecs", name="cast_value"))).load()
zarr.config.set({"codecs.cast_value": f"{_PLUGIN.__module__}.{_PLUGIN.__qualname__}"})
try:
    zarr.registry.get_codec_class("scale_offset")
    HAS_SCALE_OFFSET = True  # zarr-python 3.2 and later
except KeyError:
    HAS_SCALE_OFFSET = False

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
BYTES1 = {"name": "bytes"}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
BIG = {"name": "bytes", "configuration": {"endian": "big"}}
SHARD_BIG = {"name": "sharding_indexed", "configuration": {
    "chunk_shape": [8, 4], "codecs": [BIG], "index_codecs": [BYTES, {"name": "crc32c"}], "index_location": "end"}}


def cast(data_type, **config):
    return {"name": "cast_value", "configuration": {"data_type": data_type, **config}}


def doc(dtype, shape, chunks, fill, codecs):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": codecs, "attributes": {}, "storage_transformers": []}


def ties(n, rng, lo, hi):
    """Random values in [lo, hi) with many exact halves (ties for every rounding mode)."""
    v = rng.uniform(lo, hi, n)
    v[::3] = np.round(v[::3]) + 0.5
    v[1::7] = np.round(v[1::7])
    return v


def store_bytes(root):
    return {k: (root / k).read_bytes() for k in chunk_files(root)}


# label: (array data_type, fill_value, shape, chunks, codecs, values(rng) -> numpy array, expected(values))
CASES = {
    "float64-uint8-clamp": (
        "float64", 0.0, (30, 7), (8, 4), [cast("uint8", out_of_range="clamp"), BYTES1],
        lambda rng: ties(210, rng, -40, 300).reshape(30, 7),
        lambda x: np.clip(np.rint(x), 0, 255)),
    "float32-int16-wrap-towards-zero": (
        "float32", 0.0, (50,), (16,), [cast("int16", rounding="towards-zero", out_of_range="wrap"), BYTES],
        lambda rng: ties(50, rng, -70000, 70000).astype("float32"),
        lambda x: ((np.trunc(x.astype("float64")).astype("int64") + 32768) % 65536 - 32768).astype("float32")),
    "float64-int32-nearest-away-zstd": (
        "float64", 1.0, (40,), (9,), [cast("int32", rounding="nearest-away"), BYTES, ZSTD],
        lambda rng: ties(40, rng, -1000, 1000),
        lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)),
    "float64-uint8-towards-positive-nan-map": (
        "float64", "NaN", (6, 9), (4, 4),
        [cast("uint8", rounding="towards-positive",
              scalar_map={"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}), BYTES1],
        lambda rng: np.where(rng.random((6, 9)) < 0.3, np.nan, ties(54, rng, 0.5, 255).reshape(6, 9)),
        lambda x: np.ceil(x)),
    "float64-float32-towards-negative": (
        "float64", 0.0, (33,), (10,), [cast("float32", rounding="towards-negative"), BYTES],
        lambda rng: np.concatenate([rng.normal(0, 1e6, 30), [np.inf, -np.inf, -0.0]]),
        None),
    "float32-float16-nearest-even": (
        "float32", 0.0, (25,), (7,), [cast("float16"), BYTES],
        lambda rng: rng.normal(0, 300, 25).astype("float32"),
        lambda x: x.astype("float16").astype("float32")),
    "int64-float32-towards-zero": (
        "int64", 0, (20,), (6,), [cast("float32", rounding="towards-zero"), BYTES],
        lambda rng: rng.integers(-2**40, 2**40, 20),
        None),
    "int32-uint8-clamp": (
        "int32", 7, (3, 4, 5), (2, 2, 3), [cast("uint8", out_of_range="clamp"), BYTES1, ZSTD],
        lambda rng: rng.integers(-300, 600, (3, 4, 5)).astype("int32"),
        lambda x: np.clip(x, 0, 255).astype("int32")),
    # big-endian bytes after the cast (libzarr swaps the cast's output), and the cast before sharding (libzarr
    # runs it on each inner chunk)
    "float64-int16-clamp-big-endian": (
        "float64", 0.0, (30, 7), (8, 4), [cast("int16", out_of_range="clamp"), BIG],
        lambda rng: ties(210, rng, -40000, 40000).reshape(30, 7),
        lambda x: np.clip(np.rint(x), -32768, 32767)),
    "float32-int16-before-sharding": (
        "float32", 0.0, (30, 7), (16, 8), [cast("int16", out_of_range="clamp"), SHARD_BIG],
        lambda rng: ties(210, rng, -40000, 40000).reshape(30, 7).astype("float32"),
        lambda x: np.clip(np.rint(x), -32768, 32767)),
    "uint16-int8-wrap-map": (
        "uint16", 1, (24,), (8,),
        [cast("int8", out_of_range="wrap", scalar_map={"encode": [[1000, 0]], "decode": [[0, 1000]]}), BYTES1],
        lambda rng: np.where(rng.random(24) < 0.2, 1000, rng.integers(0, 256, 24)).astype("uint16"),
        None),
}


def make(label, seed=0):
    dtype, fill, shape, chunks, codecs, values, expected = CASES[label]
    rng = np.random.default_rng(100 + seed)
    return doc(dtype, shape, chunks, fill, json.loads(json.dumps(codecs))), values(rng), expected


def zpy_write(root, document, data):
    root.mkdir(parents=True, exist_ok=True)
    (root / "zarr.json").write_text(json.dumps(document))
    a = zarr.open_array(str(root), mode="r+")
    a[...] = data
    return a


def lz_write(root, document, data):
    with libzarr.open_store(root, "a") as store, store.create_array("", document) as arr:
        arr.write(data)


def lz_read(root):
    with libzarr.open_store(root, "r") as store, store.open_array("") as arr:
        return arr.read(), arr.metadata


@pytest.mark.parametrize("label", CASES)
def test_cast_value_both_ways(tmp_path, label):
    document, data, expected_fn = make(label)
    zroot, lroot = tmp_path / "zpy", tmp_path / "lz"
    a = zpy_write(zroot, document, data)
    zpy_values = a[...]
    lz_write(lroot, document, data)
    assert load_json(lroot / "zarr.json")["codecs"][0] == a.metadata.codecs[0].to_dict(), \
        "libzarr writes cast_value's configuration as cast-value does"
    # Without a compressor the stored chunks are the same bytes; with zstd the decoded values are compared, and
    # so they are for shards, whose inner chunks zarr-python stores in whatever order its tasks finish.
    if ZSTD not in document["codecs"] and SHARD_BIG not in document["codecs"]:
        assert store_bytes(lroot) == store_bytes(zroot), "the same stored bytes"
    else:
        assert chunk_files(lroot) == chunk_files(zroot)
    values, meta = lz_read(zroot)
    assert meta == load_json(zroot / "zarr.json")
    assert_same(values, zpy_values, "libzarr reads what zarr-python + cast-value wrote")
    assert_same(zarr.open_array(str(lroot), mode="r")[...], zpy_values,
                "zarr-python + cast-value reads what libzarr wrote")
    if expected_fn is not None:
        assert_same(values, np.asarray(expected_fn(data)).astype(values.dtype), "the spec's values")


def test_float_to_float_rounding_modes_agree(tmp_path):
    """float64 -> float32 for all five rounding modes, ties and near-ties included: same bytes."""
    rng = np.random.default_rng(5)
    f32 = rng.normal(0, 100, 40).astype("float32").astype("float64")
    ulp = np.spacing(f32.astype("float32")).astype("float64")
    data = np.concatenate([f32 + ulp / 2, f32 - ulp / 2, f32 + ulp / 3, [1e-50, -1e-50, 0.1, -0.1]])
    for mode in ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]:
        document = doc("float64", (len(data),), (len(data),), 0.0, [cast("float32", rounding=mode), BYTES])
        zpy_write(tmp_path / mode / "zpy", document, data)
        lz_write(tmp_path / mode / "lz", document, data)
        assert store_bytes(tmp_path / mode / "lz") == store_bytes(tmp_path / mode / "zpy"), mode


def refusal(fn):
    try:
        fn()
    except libzarr.LibzarrError as e:
        return e
    except Exception as e:  # noqa: BLE001 (zarr-python raises ValueError, FloatingPointError, ...)
        return e
    return None


# label: (array data_type, codecs, values that the codec must refuse to encode, what the message names)
REFUSED = {
    "out-of-range-int": ("float64", [cast("int8"), BYTES1], [1.0, 128.0], "128.0"),
    "nan-to-int-even-with-clamp": ("float32", [cast("uint16", out_of_range="clamp"), BYTES], [np.nan], "NaN"),
    "int-out-of-range": ("int64", [cast("uint32"), BYTES], [5, -1], "-1"),
}


@pytest.mark.parametrize("label", REFUSED)
def test_both_refuse(tmp_path, label):
    dtype, codecs, values, named = REFUSED[label]
    document = doc(dtype, (len(values),), (len(values),), 0, codecs)
    e = refusal(lambda: lz_write(tmp_path / "lz", document, np.array(values, dtype=dtype)))
    assert isinstance(e, libzarr.LibzarrError) and e.name == "ZARR_ERR_INVALID_ARGUMENT", e
    assert "cast_value" in e.message and named in e.message, e.message
    assert refusal(lambda: zpy_write(tmp_path / "zpy", document, np.array(values, dtype=dtype))) is not None


# Where cast-value 0.2.1 departs from the spec (libzarr follows the spec): label -> (dtype, codecs, values,
# the reason). Each is a strict xfail of "zarr-python + cast-value writes the bytes libzarr writes".
DIFFERENCES = {
    "float-overflow-clamp-to-infinity": (
        "float64", [cast("float32", out_of_range="clamp"), BYTES], [1.0, 1e300, -1e300],
        "the spec maps values beyond a float type's range to +-Infinity under clamp; cast-value's NumPy "
        "backend casts under np.errstate(over='raise') and raises FloatingPointError"),
    "float-overflow-towards-zero": (
        "float64", [cast("float32", rounding="towards-zero"), BYTES], [1e300],
        "rounding comes before out_of_range, and IEEE 754 rounding towards zero gives the largest finite "
        "float32, which is in range; cast-value raises FloatingPointError on the nearest-even overflow first"),
    "nearest-away-below-half": (
        "float64", [cast("uint8", rounding="nearest-away"), BYTES1], [0.49999999999999994, 2.5],
        "cast-value rounds nearest-away as sign(x) * floor(|x| + 0.5), and 0.49999999999999994 + 0.5 rounds "
        "to 1.0 in float64: it stores 1, the nearest value is 0"),
    "scalar-map-first-occurrence": (
        "float64", [cast("uint8", scalar_map={"encode": [["NaN", 1], ["NaN", 2]]}), BYTES1], [np.nan, 3.0],
        "the spec: 'If the same input scalar is repeated, readers MUST use the first occurrence'; cast-value "
        "puts the entries in a dict, so the last one wins (stores 2 for NaN)"),
}


@pytest.mark.parametrize("label", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=v[3]))
                                   for k, v in DIFFERENCES.items()])
def test_cast_value_package_differences(tmp_path, label):
    dtype, codecs, values, _ = DIFFERENCES[label]
    data = np.array(values, dtype=dtype)
    document = doc(dtype, (len(values),), (len(values),), 0, codecs)
    lz_write(tmp_path / "lz", document, data)
    lz = store_bytes(tmp_path / "lz")
    assert refusal(lambda: zpy_write(tmp_path / "zpy", document, data)) is None, "cast-value refuses to write"
    assert store_bytes(tmp_path / "zpy") == lz


def test_libzarr_side_of_the_differences(tmp_path):
    """What libzarr stores for the DIFFERENCES cases (so the xfails above are about cast-value)."""
    expected = {
        "float-overflow-clamp-to-infinity": np.array([1.0, np.inf, -np.inf], "<f4").tobytes(),
        "float-overflow-towards-zero": np.array([np.finfo("float32").max], "<f4").tobytes(),
        "nearest-away-below-half": bytes([0, 3]),
        "scalar-map-first-occurrence": bytes([1, 3]),
    }
    for label, (dtype, codecs, values, _) in DIFFERENCES.items():
        document = doc(dtype, (len(values),), (len(values),), 0, codecs)
        lz_write(tmp_path / label, document, np.array(values, dtype=dtype))
        assert store_bytes(tmp_path / label) == {"c/0": expected[label]}, label


# ---------------------------------------------------------------- scale_offset
def scale_offset(**config):
    return {"name": "scale_offset", "configuration": config} if config else {"name": "scale_offset"}


def stored(root, key, compressed):
    raw = (root / key).read_bytes()
    return numcodecs.Zstd().decode(raw) if compressed else raw


def test_scale_offset_spec_example_float64_to_uint8_with_nan(tmp_path):
    """The spec's "Float64 to uint8 with NaN preservation" example, with zstd behind it."""
    codecs = [scale_offset(offset=-10, scale=0.1),
              cast("uint8", rounding="nearest-even", scalar_map={"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}),
              BYTES1, ZSTD]
    document = doc("float64", (50,), (20,), "NaN", codecs)
    rng = np.random.default_rng(9)
    data = rng.uniform(0, 2540, 50)
    data[rng.random(50) < 0.2] = np.nan
    lz_write(tmp_path, document, data)
    written = load_json(tmp_path / "zarr.json")["codecs"]
    assert written[0] == scale_offset(offset=-10, scale=0.1)
    assert written[1] == {"name": "cast_value", "configuration": {
        "data_type": "uint8", "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}
    with np.errstate(invalid="ignore"):
        enc = np.rint((data - (-10.0)) * 0.1)
    want = np.where(np.isnan(enc), 0, enc).astype("uint8")
    padded = np.concatenate([want, np.zeros(10, "uint8")])  # the last chunk's overhang holds the NaN fill
    for i in range(3):
        assert stored(tmp_path, f"c/{i}", True) == padded[20 * i:20 * i + 20].tobytes(), f"chunk {i}"
    values, _ = lz_read(tmp_path)
    back = np.where(want == 0, np.nan, want.astype("float64") / 0.1 + -10.0)
    assert_same(values, back, "decoded as the spec's decode computes")
    if not HAS_SCALE_OFFSET:
        with pytest.raises(Exception):
            zarr.open_array(str(tmp_path), mode="r")[...]  # zarr-python 3.1.6 has no scale_offset
        return
    zarr_python_both_ways(tmp_path, document, data, values)


def zarr_python_both_ways(lroot, document, data, values):
    """zarr-python (3.2 and later) writes `data` with `document` into a store of its own: the same stored
    bytes as libzarr's (compared decompressed), each reads the other's array as `values` (libzarr's reading)."""
    zroot = lroot.parent / (lroot.name + "-zpy")
    zpy_write(zroot, document, data)
    compressed = ZSTD in document["codecs"]
    assert chunk_files(zroot) == chunk_files(lroot)
    for key in chunk_files(lroot):
        assert stored(zroot, key, compressed) == stored(lroot, key, compressed), f"chunk {key}"
    assert_same(zarr.open_array(str(lroot), mode="r")[...], values, "zarr-python reads what libzarr wrote")
    assert_same(lz_read(zroot)[0], values, "libzarr reads what zarr-python wrote")


@pytest.mark.parametrize("dtype, fill, codecs, data, stored_dtype, encode, decode", [
    # The spec's "Uint16 range reduction" example.
    ("uint16", 1000, [scale_offset(offset=1000), cast("uint8"), BYTES1],
     np.arange(1000, 1256, dtype="uint16"), "uint8", lambda x: (x - 1000).astype("uint8"), None),
    # Integer arithmetic in int32: multiples of the scale, a negative offset.
    ("int32", -7, [scale_offset(offset=-7, scale=3), BYTES],
     np.arange(-500, 500, 7, dtype="int32"), "<i4", lambda x: ((x + 7) * 3).astype("<i4"), None),
    # float32 arithmetic with an offset written as a hex bit pattern (0.5) and a scale rounded to float32.
    ("float32", 0.5, [scale_offset(offset="0x3f000000", scale=0.1), BYTES],
     np.linspace(-3, 3, 61, dtype="float32"), "<f4",
     lambda x: ((x - np.float32(0.5)) * np.float32(0.1)).astype("<f4"),
     lambda e: (e / np.float32(0.1)) + np.float32(0.5)),
])
def test_scale_offset_stores_the_formula(tmp_path, dtype, fill, codecs, data, stored_dtype, encode, decode):
    """Stored bytes as NumPy computes the spec's encode in the input type; read back as its decode computes
    (exactly the data for the integer cases)."""
    n = len(data)
    document = doc(dtype, (n,), (n,), fill, json.loads(json.dumps(codecs)))
    lz_write(tmp_path / "lz", document, data)
    assert stored(tmp_path / "lz", "c/0", False) == encode(data).astype(stored_dtype).tobytes()
    values, _ = lz_read(tmp_path / "lz")
    assert_same(values, data if decode is None else decode(encode(data)), "read back")
    if HAS_SCALE_OFFSET:
        zarr_python_both_ways(tmp_path / "lz", document, data, values)


def test_scale_offset_refuses_and_reports(tmp_path):
    # Encoding 128 * 2 in int8 overflows: refused, naming the codec and the value.
    document = doc("int8", (2,), (2,), 0, [scale_offset(scale=2), BYTES1])
    e = refusal(lambda: lz_write(tmp_path / "a", document, np.array([1, 100], "int8")))
    assert isinstance(e, libzarr.LibzarrError) and e.name == "ZARR_ERR_INVALID_ARGUMENT", e
    assert "scale_offset" in e.message and "100" in e.message, e.message
    # A stored value that is not a multiple of the scale cannot be decoded: a corrupt chunk.
    root = tmp_path / "b"
    lz_write(root, doc("int32", (3,), (3,), 0, [scale_offset(scale=4), BYTES]), np.array([1, 2, 3], "int32"))
    (root / "c/0").write_bytes(np.array([4, 8, 7], "<i4").tobytes())
    e = refusal(lambda: lz_read(root))
    assert isinstance(e, libzarr.LibzarrError) and e.name == "ZARR_ERR_CORRUPT_CHUNK", e
    assert "scale_offset" in e.message and "7" in e.message, e.message
    # Unknown configuration keys are invalid metadata.
    e = refusal(lambda: lz_write(tmp_path / "c", doc("float32", (2,), (2,), 0,
                                                     [scale_offset(offset=1, astype="uint8"), BYTES]),
                                 np.zeros(2, "float32")))
    assert isinstance(e, libzarr.LibzarrError) and e.name == "ZARR_ERR_INVALID_METADATA", e
    assert "astype" in e.message, e.message
