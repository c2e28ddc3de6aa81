"""Benchmark worker for the Python peers, tensorstore and zarr-python 3.

`python peers.py IMPL` speaks the same line protocol as the Rust worker (see README.md): a
greeting line, then one JSON reply per JSON request on stdin. Each timed operation includes
opening the array; both libraries run with their default thread pools.
"""

import json
import os
import sys
import time
import zlib
from importlib.metadata import version

import numpy as np


class Sink:
    """Where read results go: a running CRC-32 when verifying, otherwise nowhere."""

    def __init__(self, verify):
        self.crc = 0 if verify else None

    def take(self, array):
        if self.crc is not None:
            self.crc = zlib.crc32(memoryview(np.ascontiguousarray(array)).cast("B"), self.crc)


def box(start, count):
    return tuple(slice(s, s + c) for s, c in zip(start, count))


class TensorStore:
    """tensorstore's `zarr` (v2) driver on a `file` kvstore, one shared context, no cache."""

    def __init__(self):
        import tensorstore

        self.ts = tensorstore
        self.version = version("tensorstore")
        self.context = tensorstore.Context({"cache_pool": {"total_bytes_limit": 0}})
        self.threads = (f"data_copy_concurrency and file_io_concurrency 'shared' defaults "
                        f"({os.cpu_count()} cores)")

    def open(self, path, metadata=None, **options):
        spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": path}}
        if metadata:
            spec["metadata"] = metadata
        return self.ts.open(spec, context=self.context, **options).result()

    def read_all(self, path, sink):
        sink.take(self.open(path, read=True).read().result())

    def read_boxes(self, path, starts, count, sink):
        array = self.open(path, read=True)
        for start in starts:
            sink.take(array[box(start, count)].read().result())

    def read_strided(self, path, step, sink):
        array = self.open(path, read=True)
        sink.take(array[(slice(None, None, step),) * array.rank].read().result())

    def write(self, path, zarray, data):
        array = self.open(path, create=True, delete_existing=True, metadata=zarray)
        array.write(data).result()


class ZarrPython:
    """zarr-python 3: `zarr.open_array` and NumPy-style slicing, default configuration."""

    def __init__(self):
        import numcodecs
        import zarr

        self.zarr, self.numcodecs = zarr, numcodecs
        self.version = version("zarr")
        workers = zarr.config.get("threading.max_workers") or min(32, os.cpu_count() + 4)
        self.threads = (f"asyncio loop + {workers}-thread pool (async.concurrency "
                        f"{zarr.config.get('async.concurrency')}); blosc nthreads "
                        f"{numcodecs.blosc.get_nthreads()} when called from the main thread")

    def read_all(self, path, sink):
        sink.take(self.zarr.open_array(path, mode="r")[...])

    def read_boxes(self, path, starts, count, sink):
        array = self.zarr.open_array(path, mode="r")
        for start in starts:
            sink.take(array[box(start, count)])

    def read_strided(self, path, step, sink):
        array = self.zarr.open_array(path, mode="r")
        sink.take(array[(slice(None, None, step),) * array.ndim])

    def write(self, path, zarray, data):
        compressor = zarray["compressor"] and self.numcodecs.get_codec(zarray["compressor"])
        array = self.zarr.create_array(
            store=path, shape=zarray["shape"], chunks=zarray["chunks"], dtype=zarray["dtype"],
            fill_value=zarray["fill_value"], order=zarray["order"], zarr_format=2,
            compressors=compressor, filters=None, overwrite=True,
            chunk_key_encoding={"name": "v2", "separator": zarray["dimension_separator"]})
        array[...] = data


IMPLS = {"tensorstore": TensorStore, "zarr-python": ZarrPython}


class Worker:
    def __init__(self, impl):
        self.impl = impl
        self.sources = {}  # raw source file -> its array, loaded once, outside the timings

    def source(self, path, shape):
        if path not in self.sources:
            self.sources[path] = np.fromfile(path, dtype="<u2").reshape(shape)
        return self.sources[path]

    def handle(self, request):
        op, path = request["op"], request["path"]
        sink = Sink(request.get("verify", False))
        impl = self.impl
        if op == "read_all":
            run = lambda: impl.read_all(path, sink)
        elif op == "read_boxes":
            run = lambda: impl.read_boxes(path, request["starts"], request["count"], sink)
        elif op == "read_strided":
            run = lambda: impl.read_strided(path, request["step"], sink)
        elif op == "write":
            data = self.source(request["source"], request["zarray"]["shape"])
            run = lambda: impl.write(path, request["zarray"], data)
        else:
            raise ValueError(f"unknown op {op!r}")
        start = time.perf_counter()
        run()
        return {"seconds": time.perf_counter() - start, "crc32": sink.crc}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in IMPLS:
        sys.exit(f"usage: peers.py {'|'.join(IMPLS)}  (then JSON requests on stdin)")
    impl = IMPLS[sys.argv[1]]()
    print(json.dumps({"impl": sys.argv[1], "version": impl.version, "threads": impl.threads}),
          flush=True)
    worker = Worker(impl)
    for line in sys.stdin:
        try:
            reply = worker.handle(json.loads(line))
        except Exception as e:  # reported to the driver, which stops the run
            reply = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
