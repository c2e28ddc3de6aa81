"""The round trips the remote-store interop tests (S3, Azure) run: zarr-python writes through a store of its own
(`zpy_store(prefix, read_only=False)`, an obstore-backed ObjectStore) and libzarr reads through `url(prefix)`, and
the reverse."""
import json
import os

import numpy as np
import zarr

import libzarr

SHARDED = {"name": "sharding_indexed", "configuration": {
    "chunk_shape": [8, 5], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                      {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
    "index_location": "end"}}


def prefix(name):
    """A key prefix of this test process's own in the bucket or container."""
    return f"interop-{os.getpid()}-{name}"


def data(shape, dtype):
    return (np.arange(np.prod(shape)) * 3 - 500).reshape(shape).astype(dtype)


def libzarr_reads_what_zarr_python_wrote(zpy_store, url, p):
    """A v3 group with a sharded array and consolidated metadata, and a v2 array."""
    root = zarr.open_group(zpy_store(p), mode="w", zarr_format=3)
    root.attrs["title"] = "from zarr-python"
    v3 = root.create_array("sharded", shape=(37, 23), chunks=(16, 10), shards=(16, 10), dtype="int32",
                           fill_value=-1, compressors=None)
    v3[:30] = data((30, 23), "int32")
    zarr.consolidate_metadata(zpy_store(p))
    with libzarr.open_store(url(p), "r") as store, store.open_array("sharded") as arr:
        got = arr.read()
        assert (got[:30] == data((30, 23), "int32")).all() and (got[30:] == -1).all()
    v2 = zarr.open_array(zpy_store(p + "-v2"), mode="w", shape=(50,), chunks=(7,), dtype="<f8", zarr_format=2,
                         fill_value=0.5)
    v2[:40] = data((40,), "<f8")
    with libzarr.open_store(url(p + "-v2"), "r") as store, store.open_array("") as arr:
        got = arr.read()
        assert (got[:40] == data((40,), "<f8")).all() and (got[40:] == 0.5).all()


def zarr_python_reads_what_libzarr_wrote(zpy_store, url, p):
    """A v3 group holding a group with a sharded array, consolidated."""
    doc = {"zarr_format": 3, "node_type": "array", "shape": [37, 23], "data_type": "int16", "fill_value": 7,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16, 10]}}, "codecs": [SHARDED]}
    with libzarr.open_store(url(p), "a") as store:
        store.create_group_format("", 3)
        with store.create_array("grp/sharded", json.dumps(doc)) as arr:
            arr.write(data((20, 23), "int16"))
        store.consolidate()
    z = zarr.open_group(zpy_store(p, read_only=True), mode="r")
    got = z["grp/sharded"][...]
    assert (got[:20] == data((20, 23), "int16")).all() and (got[20:] == 7).all()
    assert sorted(z.group_keys()) == ["grp"]
