"""Benchmark worker for the Python peers, tensorstore and zarr-python 3.

`python peers.py IMPL` speaks the same line protocol as the Rust worker (see README.md): a
greeting line, then one JSON reply per JSON request on stdin. Each timed operation includes
opening the array; both libraries run with their default thread pools. `zarr-python-newest` is
the same zarr-python worker run by the newest zarr-python's interpreter (data.NEWEST_PYTHON).
"""

import json
import os
import sys
import time
import warnings
import zlib
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path

import numpy as np

import data
import numpy_ffi
import s3

# zarr-python 3 warns on every open of v3 consolidated metadata (not in the v3 spec yet).
warnings.filterwarnings("ignore", message="Consolidated metadata is currently not part")


class Unsupported(Exception):
    """An operation the implementation cannot do (reported as "n/a" with the reason)."""


def chunk_grid_name(path, metadata=None):
    """The chunk grid of a v3 array (its document, or the `zarr.json` at a local `path`); None
    for a v2 array or a remote one."""
    if metadata is None:
        document = Path(path, "zarr.json")
        if s3.is_s3(path) or not document.exists():
            return None
        metadata = json.loads(document.read_text())
    return metadata.get("chunk_grid", {}).get("name")


def unsupported_grid(impl, error, path, metadata=None):
    """`error` (opening or creating the array at `path`) as Unsupported when the array's chunk
    grid is not the regular one, which these versions may not know (tensorstore 0.1 and
    zarr-python before 3.2 have no rectilinear grid); None for any other error."""
    grid = chunk_grid_name(path, metadata)
    if grid in (None, "regular"):
        return None
    reason = str(error).split(" [tensorstore_spec=")[0]  # tensorstore appends the whole spec
    if "Expected" in reason:  # tensorstore's, after the path of the member it parsed
        reason = reason[reason.index("Expected"):]
    return Unsupported(f"{impl} has no {grid} chunk grid ({type(error).__name__}: {reason})")


class Sink:
    """Where read results go: a running CRC-32 when verifying, otherwise nowhere."""

    def __init__(self, verify):
        self.crc = 0 if verify else None

    def take(self, array):
        if self.crc is not None:
            self.crc = zlib.crc32(memoryview(np.ascontiguousarray(array)).cast("B"), self.crc)


def box(start, count):
    return tuple(slice(s, s + c) for s, c in zip(start, count))


def rchar():
    """Bytes this process has read through `read`-family system calls (Linux's /proc/self/io;
    None elsewhere): the same measure as the Rust worker's."""
    try:
        with open("/proc/self/io") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))
    except OSError:
        return None


def status_bytes(field):
    """A field of /proc/self/status in bytes (Linux; None elsewhere)."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))
    except OSError:
        return None


def reset_peak_memory():
    """Resets the peak resident memory (VmHWM) to the current size by writing 5 to
    /proc/self/clear_refs (Linux; nothing elsewhere): the same measure as the Rust worker's."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def read_boxes_in_threads(read, starts, counts, threads, sink):
    """Reads each box (`counts[i]` elements from `starts[i]`) once from `threads` threads at
    once (thread t takes boxes t, t + threads, ...), each result handed to `sink` in the boxes'
    order when it verifies."""
    kept = {}

    def work(t):
        for i in range(t, len(starts), threads):
            values = read(starts[i], counts[i])
            if sink.crc is not None:
                kept[i] = values

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, range(threads)))
    for i in sorted(kept):
        sink.take(kept[i])


class TensorStore:
    """tensorstore's `zarr` (v2) or `zarr3` driver on a `file` kvstore (an `s3` one for s3://
    locations: the endpoint from the request, credentials from the environment), one shared
    context, no cache (so no shard index is kept between reads either)."""

    def __init__(self):
        import tensorstore

        self.ts = tensorstore
        self.version = version("tensorstore")
        # AWS credentials (s3:// locations) from the environment variables alone: the default
        # chain logs an error for each missing ~/.aws file.
        self.context = tensorstore.Context({"cache_pool": {"total_bytes_limit": 0},
                                            "aws_credentials": {"type": "environment"}})
        self.threads = (f"data_copy_concurrency and file_io_concurrency 'shared' defaults "
                        f"({os.cpu_count()} cores)")

    def open(self, path, metadata=None, **options):
        """Opens (or with `metadata`, a `.zarray` or `zarr.json` document, creates) the array
        at `path`; the driver follows the format: the document's, the request's `zarr_format`
        for an s3:// location, or which one is on disk."""
        if metadata:
            v3 = metadata["zarr_format"] == 3
        elif s3.is_s3(path):
            v3 = self.remote["zarr_format"] == 3
        else:
            v3 = Path(path, "zarr.json").exists()
        if s3.is_s3(path):
            bucket, prefix = s3.split(path)
            kvstore = {"driver": "s3", "bucket": bucket, "path": prefix + "/",
                       "endpoint": self.remote["endpoint"], "aws_region": s3.region()}
        else:
            kvstore = {"driver": "file", "path": path}
        spec = {"driver": "zarr3" if v3 else "zarr", "kvstore": kvstore}
        if metadata:
            spec["metadata"] = metadata
        try:
            return self.ts.open(spec, context=self.context, **options).result()
        except ValueError as e:
            raise unsupported_grid(f"tensorstore {self.version}", e, path, metadata) or e

    def open_hierarchy(self, path, array):
        """tensorstore has no groups: opening the hierarchy is opening the array."""
        self.open(f"{path}/{array}", read=True)

    def read_all(self, path, sink):
        sink.take(self.open(path, read=True).read().result())

    def read_boxes(self, path, starts, counts, sink):
        array = self.open(path, read=True)
        for start, count in zip(starts, counts):
            sink.take(array[box(start, count)].read().result())

    def read_boxes_threads(self, path, starts, counts, threads, sink):
        array = self.open(path, read=True)
        read_boxes_in_threads(lambda s, c: array[box(s, c)].read().result(), starts, counts,
                              threads, sink)

    def read_strided(self, path, step, sink):
        array = self.open(path, read=True)
        sink.take(array[(slice(None, None, step),) * array.rank].read().result())

    def write(self, path, metadata, values):
        # Remote outputs are fresh prefixes: deleting what is there would only add a LIST.
        existing = {} if s3.is_s3(path) else {"delete_existing": True}
        array = self.open(path, create=True, metadata=metadata, **existing)
        array.write(values).result()


class ZarrPython:
    """zarr-python 3: `zarr.open_array` and NumPy-style slicing, default configuration (but for
    `array.rectilinear_chunks`, which 3.2 and later need on to open a rectilinear grid; earlier
    versions ignore it); s3:// locations through `zarr.storage.ObjectStore` on an obstore
    `S3Store`."""

    def __init__(self):
        import numcodecs
        import zarr

        self.zarr = zarr
        zarr.config.set({"array.rectilinear_chunks": True})
        self.version = version("zarr")
        workers = zarr.config.get("threading.max_workers") or min(32, os.cpu_count() + 4)
        self.threads = (f"asyncio loop + {workers}-thread pool (async.concurrency "
                        f"{zarr.config.get('async.concurrency')}); blosc nthreads "
                        f"{numcodecs.blosc.get_nthreads()} when called from the main thread")

    def store(self, path, read_only=True):
        """What zarr-python opens: the path, or an ObjectStore for an s3:// location."""
        if s3.is_s3(path):
            return s3.zarr_store(path, self.remote["endpoint"], read_only)
        return path

    def open_array(self, path):
        try:
            return self.zarr.open_array(self.store(path), mode="r")
        except ValueError as e:
            raise unsupported_grid(f"zarr-python {self.version}", e, path) or e

    def open_hierarchy(self, path, array):
        group = self.zarr.open_group(self.store(path), mode="r", use_consolidated=True)
        return group[array]

    def read_all(self, path, sink):
        sink.take(self.open_array(path)[...])

    def read_boxes(self, path, starts, counts, sink):
        array = self.open_array(path)
        for start, count in zip(starts, counts):
            sink.take(array[box(start, count)])

    def read_boxes_threads(self, path, starts, counts, threads, sink):
        array = self.open_array(path)
        read_boxes_in_threads(lambda s, c: array[box(s, c)], starts, counts, threads, sink)

    def read_strided(self, path, step, sink):
        array = self.open_array(path)
        sink.take(array[(slice(None, None, step),) * array.ndim])

    def write(self, path, metadata, values):
        """The way the input data was written: the document stored, then `open_array`."""
        try:
            if s3.is_s3(path):
                data.write_with_zarr_python(self.store(path, read_only=False), metadata, values)
            else:
                data.write_with_zarr_python(path, metadata, values)
        except ValueError as e:
            raise unsupported_grid(f"zarr-python {self.version}", e, path, metadata) or e


class LibzarrNumpy:
    """libzarr's C API through ctypes (numpy_ffi.py) into NumPy arrays: one reused for every
    box of read_boxes (boxes of unequal shapes, a rectilinear grid's chunks, in views of one
    of the largest's size), as a careful caller would; new ones elsewhere, as the peers return."""

    def __init__(self):
        self.lib = numpy_ffi.load()
        self.version = self.lib.zarr_version().decode()
        self.threads = (f"libzarr's pool (ZARR_NUM_THREADS {os.environ.get('ZARR_NUM_THREADS', 'unset')}); "
                        "ctypes releases the GIL during each call")

    def run(self, path, f, metadata=None):
        """`f(array)` on the array at `path` (created from `metadata` if given), closed after."""
        array = numpy_ffi.Array(self.lib, path, metadata)
        try:
            return f(array)
        finally:
            array.close()

    def read_all(self, path, sink):
        sink.take(self.run(path, lambda a: a.read([0] * len(data.SHAPE), list(data.SHAPE))))

    def read_boxes(self, path, starts, counts, sink):
        def read(array):
            flat = np.empty(max((int(np.prod(c)) for c in counts), default=0), dtype=data.DTYPE)
            for start, count in zip(starts, counts):
                sink.take(array.read(start, count, flat[:int(np.prod(count))].reshape(count)))

        self.run(path, read)

    def read_boxes_threads(self, path, starts, counts, threads, sink):
        self.run(path, lambda a: read_boxes_in_threads(a.read, starts, counts, threads, sink))

    def read_strided(self, path, step, sink):
        shape = data.SHAPE
        count = [-(-n // step) for n in shape]
        sink.take(self.run(path, lambda a: a.read_strided([0] * len(shape), count, [step] * len(shape))))

    def write(self, path, metadata, values):
        self.run(path, lambda a: a.write(np.ascontiguousarray(values)), metadata)


IMPLS = {"tensorstore": TensorStore, "zarr-python": ZarrPython, "zarr-python-newest": ZarrPython,
         "libzarr-numpy": LibzarrNumpy}


def counts(request):
    """A box request's shape of each box: its `counts`, or its one `count` for every box."""
    if "counts" in request:
        return request["counts"]
    return [request["count"]] * len(request["starts"])


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
        # For s3:// locations: {"endpoint"} and the array's "zarr_format" (tensorstore's driver).
        impl.remote = {**(request.get("store_options") or {}),
                       "zarr_format": request.get("zarr_format")}
        if op == "open":
            run = lambda: impl.open_hierarchy(path, request["array"])
        elif op == "read_all":
            run = lambda: impl.read_all(path, sink)
        elif op == "read_boxes":
            run = lambda: impl.read_boxes(path, request["starts"], counts(request), sink)
        elif op == "read_boxes_threads":
            run = lambda: impl.read_boxes_threads(path, request["starts"], counts(request),
                                                  request["threads"], sink)
        elif op == "read_strided":
            run = lambda: impl.read_strided(path, request["step"], sink)
        elif op == "write":
            values = self.source(request["source"], request["metadata"]["shape"])
            run = lambda: impl.write(path, request["metadata"], values)
        else:
            raise ValueError(f"unknown op {op!r}")
        reset_peak_memory()
        resident_before = status_bytes("VmRSS:")
        before = rchar()
        start = time.perf_counter()
        try:
            run()
        except Unsupported as e:
            return {"unsupported": str(e)}
        seconds = time.perf_counter() - start
        after = rchar()
        read_bytes = after - before if before is not None and after is not None else None
        # Memory the call needed beyond what the worker held resident before it.
        peak = status_bytes("VmHWM:")
        peak_bytes = (max(0, peak - resident_before)
                      if peak is not None and resident_before is not None else None)
        return {"seconds": seconds, "crc32": sink.crc, "read_bytes": read_bytes,
                "peak_bytes": peak_bytes}


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
