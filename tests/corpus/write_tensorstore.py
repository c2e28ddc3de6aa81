"""TensorStore's stores for the real-world corpus (scripts/corpus.sh): `write_tensorstore.py OUTDIR`.

TensorStore writes arrays at nested paths and no group document anywhere (no `.zgroup`, no group
`zarr.json`, no root), and no consolidated metadata:
  * `tensorstore-v2.zarr` (the `zarr` driver): `a/b/c` int32 under blosc/zstd with bit shuffle, a fill value
    and chunks never written; `a/b/f` float64 3-D, zlib, Fortran order, `dimension_separator` "/";
    `x/y` big-endian uint16 under zstd. TensorStore writes no `.zattrs`.
  * `tensorstore-v3.zarr` (the `zarr3` driver): `a/b/c` float32 with gzip, dimension names and attributes;
    `a/b/sharded` int16 3-D sharded (inner chunks zstd, index with crc32c); `e/v2keys` uint8 with the `v2`
    chunk key encoding and no dimension names.

Expected values: TensorStore reopens each array and reads it back; the dimension names are its domain labels
(an empty label, TensorStore's "unnamed", recorded as null); the data type and attributes come from the
metadata TensorStore reports (its spec), the v2 driver reporting no attributes.
"""
import importlib.metadata
import os
import shutil
import sys

import numpy as np
import tensorstore as ts

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expected  # noqa: E402


def spec(driver, store, path):
    return {"driver": driver, "kvstore": {"driver": "file", "path": store}, "path": path}


def create(driver, store, path, metadata):
    return ts.open(dict(spec(driver, store, path), metadata=metadata, create=True)).result()


def v2(store, rng):
    c = create("zarr", store, "a/b/c", {"shape": [20, 30], "chunks": [8, 8], "dtype": "<i4", "fill_value": -1,
                                        "compressor": {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2}})
    c[:15, :20] = rng.integers(-(2**31), 2**31 - 1, (15, 20), dtype="i4")  # chunks of the last row unwritten
    f = create("zarr", store, "a/b/f", {"shape": [4, 10, 12], "chunks": [2, 4, 5], "dtype": "<f8", "order": "F",
                                        "dimension_separator": "/", "compressor": {"id": "zlib", "level": 4}})
    f[...] = rng.standard_normal((4, 10, 12))
    y = create("zarr", store, "x/y", {"shape": [17], "chunks": [5], "dtype": ">u2", "fill_value": 9,
                                      "compressor": {"id": "zstd", "level": 1}})
    y[:12] = rng.integers(0, 65535, 12, dtype="u2")
    return ["a/b/c", "a/b/f", "x/y"]


def v3(store, rng):
    grid = lambda shape: {"name": "regular", "configuration": {"chunk_shape": shape}}  # noqa: E731
    le = {"name": "bytes", "configuration": {"endian": "little"}}
    c = create("zarr3", store, "a/b/c", {
        "shape": [20, 30], "chunk_grid": grid([8, 8]), "data_type": "float32", "fill_value": -1.5,
        "dimension_names": ["y", "x"], "attributes": {"units": "K", "scale": [1, 2, 3], "nested": {"a": None}},
        "codecs": [le, {"name": "gzip", "configuration": {"level": 5}}]})
    c[:, :25] = rng.standard_normal((20, 25)).astype("float32")
    s = create("zarr3", store, "a/b/sharded", {
        "shape": [6, 16, 16], "chunk_grid": grid([3, 8, 8]), "data_type": "int16", "fill_value": 0,
        "dimension_names": ["t", "y", "x"],
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [3, 4, 4], "codecs": [le, {"name": "zstd", "configuration": {"level": 3}}],
            "index_codecs": [le, {"name": "crc32c"}], "index_location": "end"}}]})
    s[:, :12] = rng.integers(-30000, 30000, (6, 12, 16), dtype="i2")
    e = create("zarr3", store, "e/v2keys", {
        "shape": [9, 7], "chunk_grid": grid([4, 4]), "data_type": "uint8", "fill_value": 255,
        "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}}, "codecs": [le]})
    e[...] = rng.integers(0, 255, (9, 7), dtype="u1")
    return ["a/b/c", "a/b/sharded", "e/v2keys"]


def record(driver, store, paths):
    arrays = []
    for path in paths:
        t = ts.open(dict(spec(driver, store, path), open=True), read=True).result()
        data = t.read().result()
        meta = t.spec().to_json()["metadata"]
        dtype = np.dtype(meta["dtype"]) if driver == "zarr" else t.dtype.numpy_dtype
        assert data.dtype == dtype.newbyteorder("="), (path, data.dtype, dtype)
        arrays.append(expected.array_entry(path, data, dtype, list(t.domain.labels), meta.get("attributes", {})))
    for p in ("", "a", "a/b"):  # what this writer is about: no group documents anywhere
        for doc in (".zgroup", "zarr.json", ".zattrs"):
            assert not os.path.exists(os.path.join(store, p, doc)), os.path.join(p, doc)
    return arrays


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(86)
    for name, driver, fmt, write in (("tensorstore-v2.zarr", "zarr", 2, v2), ("tensorstore-v3.zarr", "zarr3", 3, v3)):
        store = os.path.join(out, name)
        shutil.rmtree(store, ignore_errors=True)
        paths = write(store, rng)
        version = importlib.metadata.version("tensorstore")
        expected.write(store, {"writer": f"TensorStore {version} {driver} driver",
                               "versions": {"tensorstore": version, "numpy": np.__version__},
                               "zarr_format": fmt, "consolidated": False, "budget_array": "a/b/c",
                               "arrays": record(driver, store, paths), "groups": []})


if __name__ == "__main__":
    main(sys.argv[1])
