"""Zarr v3 against TensorStore's "zarr3" driver, both directions: tensorstore reads what libzarr writes, and
libzarr reads what tensorstore writes (a few data types; zstd, gzip, blosc and crc32c; transpose; sharded with
the index at the start or the end, and not sharded; both chunk key encodings).

TensorStore writes its zarr.json its own way, which libzarr must take: no "attributes" and no
"storage_transformers", and a chunk_key_encoding without its configuration ({"name": "default"}). It checks the
sharding codec against the transposed shard shape, as the spec says (zarr-python checks the untransposed
one), so the transposed sharded case here is one zarr-python 3.1.6 cannot open.
"""
import json

import pytest

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("Zarr v3 needs zarr-python 3", allow_module_level=True)
ts = pytest.importorskip("tensorstore")

import numpy as np  # noqa: E402

# zarr-python's warnings about numcodecs codecs, consolidated metadata and data types without a v3 spec
pytestmark = [pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning"),
              pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")]
pytest.register_assert_rewrite("v3cases")
import libzarr  # noqa: E402
from v3cases import (DTYPE, KEY_ENCODINGS, V3Case, assert_same, box_slices, check_shards, chunk_files,  # noqa: E402
                     codecs_meaning, load_json, random_box)

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
ONE = {"name": "bytes"}
CRC = {"name": "crc32c"}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": True}}
GZIP = {"name": "gzip", "configuration": {"level": 6}}


def blosc(cname, shuffle, typesize):
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": typesize,
                                               "blocksize": 0}}


def transpose(*order):
    return {"name": "transpose", "configuration": {"order": list(order)}}


def sharding(inner, codecs, location, crc=True):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs, "index_codecs": [LE, CRC] if crc else [LE],
        "index_location": location}}


# label: (dtype, fill, shape, chunk grid (shard) shape, codecs, chunk key encoding index)
CASES = {
    "int16-zstd": ("int16", -3, (37, 23), (10, 8), [LE, ZSTD], 0),
    "float32-transpose-be-gzip": ("float32", "NaN", (19, 26), (8, 9), [transpose(1, 0), BE, GZIP], 1),
    "uint8-blosc-crc32c": ("uint8", 200, (40, 30), (16, 16), [ONE, blosc("lz4", "bitshuffle", 1), CRC], 2),
    "bool-3d-blosc": ("bool", True, (6, 7, 9), (4, 3, 5), [ONE, blosc("zstd", "shuffle", 1)], 3),
    "int64-crc32c": ("int64", -2**63, (50,), (7,), [LE, CRC], 1),
    "complex64-sharded-start": ("complex64", [1.0, "NaN"], (21, 18), (8, 9),
                                [sharding((4, 3), [LE, ZSTD], "start")], 0),
    "float64-sharded-end-v2keys": ("float64", "-Infinity", (30, 17), (10, 17),
                                   [sharding((5, 17), [transpose(1, 0), LE, GZIP], "end", crc=False)], 2),
    "uint32-3d-sharded-blosc": ("uint32", 7, (9, 10, 11), (4, 6, 11),
                                [sharding((2, 3, 11), [BE, blosc("blosclz", "noshuffle", 4)], "end")], 0),
    "int32-transposed-sharded": ("int32", 0, (12, 10), (4, 6), [transpose(1, 0), sharding((3, 2), [LE], "start")], 0),
}


def make_case(label, seed=0):
    dtype, fill, shape, chunks, codecs, ke = CASES[label]
    return V3Case(0, DTYPE[dtype], shape, chunks, json.loads(json.dumps(codecs)), KEY_ENCODINGS[ke], fill,
                  seed=500 + seed, skip=1, empty_chunk=(1,) + (0,) * (len(shape) - 1))


def ts_spec(path, **extra):
    return dict({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}, **extra)


def ts_region(region):
    return tuple(r for r in region if r is not Ellipsis)


@pytest.mark.parametrize("label", CASES)
def test_libzarr_reads_tensorstore(tmp_path, label):
    case = make_case(label)
    data, expected = case.data()
    meta = {k: v for k, v in case.doc().items() if k not in ("attributes", "storage_transformers", "zarr_format",
                                                             "node_type")}
    t = ts.open(ts_spec(tmp_path, metadata=meta, create=True)).result()
    for unit in case.units():
        if not case.untouched(unit):
            r = ts_region(case.region(unit, case.inner_chunks))
            t[r].write(data[r]).result()
    assert_same(t.read().result(), expected, "tensorstore reads what it wrote")
    doc = load_json(tmp_path / "zarr.json")
    assert case.key(case.empty_chunk) not in chunk_files(tmp_path)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        assert arr.zarr_format == 3 and arr.shape == case.shape and arr.chunks == case.chunks
        assert arr.inner_chunks == case.inner_chunks
        assert arr.metadata == doc
        assert arr.attrs() == {}
        assert_same(arr.read(), expected, "libzarr reads what tensorstore wrote")
        rng = np.random.default_rng(1)
        for _ in range(4):
            start, count = random_box(case.shape, rng)
            assert_same(arr.read(start, count), expected[box_slices(start, count)], f"box {start} {count}")


@pytest.mark.parametrize("label", CASES)
def test_tensorstore_reads_libzarr(tmp_path, label):
    case = make_case(label, seed=1)
    _, expected = case.data()
    rng = np.random.default_rng(2)
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("", case.request()) as arr:
        arr.write(expected)
        start, count = random_box(case.shape, rng)
        box = case.values(rng)[box_slices(start, count)]
        arr.write(box, start)
        expected[box_slices(start, count)] = box
    assert chunk_files(tmp_path) == case.expected_keys(expected)
    check_shards(case, tmp_path, expected)
    t = ts.open(ts_spec(tmp_path), open=True).result()
    assert tuple(t.shape) == case.shape
    spec = t.spec().to_json()
    assert codecs_meaning(spec["metadata"]["codecs"]) == codecs_meaning(case.codecs)
    assert_same(t.read().result(), expected, "tensorstore reads what libzarr wrote")
