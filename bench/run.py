"""Runs the libzarr benchmark (scripts/bench.sh builds everything and calls this).

Writes the data once (data.py), starts one worker process per implementation (the Rust
`zarr-bench` for libzarr, zarrs and the physical references; peers.py for tensorstore and
zarr-python), does one untimed pass that warms the page cache and verifies every result by
checksum, then times `--reps` interleaved repetitions (for rep: for variant: for operation:
for implementation) and writes bench/results/ (report.py; `--name` picks the report's files).
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import data as d
import numpy_ffi
import report

BENCH = Path(__file__).resolve().parent
OPS = ["write", "read_all", "read_chunks", "read_chunks_threads", "read_boxes", "read_strided"]
PEERS = ["zarrs", "tensorstore", "zarr-python", "zarr-python-newest"]
THREADS = 8  # the caller's threads of read_chunks_threads


def cells(variants, ops):
    """Every (variant, operation) pair of the two lists."""
    return {(v, o) for v in variants for o in ops}


COMPRESSED = ["zstd", "blosc-lz4", "v3-zstd"]
# The physical references: {impl: the (variant, operation) cells they run}.
REFERENCES = {"raw-files": cells(["none"], ["read_all", "write"]),
              "memcpy": cells(["none"], ["read_all"]),
              "codec": cells(COMPRESSED, ["write"])
              | cells(COMPRESSED + ["v3-shard-zstd"], ["read_all", "read_boxes"]),
              "codec-1t": cells(COMPRESSED + ["v3-shard-zstd"], ["read_chunks"])}
# libzarr reading into 64-byte-aligned buffers, and with a chunk cache on every array it opens.
VARIANTS_OF_LIBZARR = ["libzarr-aligned", "libzarr-cache-64M", "libzarr-cache-1G"]
# The newest zarr-python 3 (data.NEWEST_PYTHON's; the bench environment's zarr-python is 3.1, which
# has no rectilinear grids) on the variants it writes and on the regular Zarr v3 one beside them,
# so that its own regular and rectilinear reads compare (not on the rest: time).
NEWEST_VARIANTS = ["v3-zstd"] + [name for name, v in d.VARIANTS.items() if v.newest]
# libzarr's C API called from Python (ctypes) with NumPy's buffers.
IMPLS = ["libzarr", *VARIANTS_OF_LIBZARR, "libzarr-numpy", *PEERS, *REFERENCES]
PYTHON_IMPLS = {"tensorstore", "zarr-python", "zarr-python-newest", "libzarr-numpy"}
VERIFIER = "zarrs"  # reads back every Zarr array written, so no writer checks itself


class Worker:
    """One implementation's worker process: a JSON request line in, a JSON reply line out."""

    def __init__(self, impl):
        if impl == "zarr-python-newest":
            argv = [str(d.NEWEST_PYTHON), str(BENCH / "peers.py"), impl]
        elif impl in PYTHON_IMPLS:
            argv = [sys.executable, str(BENCH / "peers.py"), impl]
        else:
            argv = [str(BENCH / "target" / "release" / "zarr-bench"), impl]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.hello = self._reply()

    def _reply(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.proc.args} exited with {self.proc.wait()}")
        return json.loads(line)

    def request(self, request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = self._reply()
        if "error" in reply:
            raise RuntimeError(f"{self.hello['impl']} {request['op']}: {reply['error']}")
        return reply

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


@dataclass
class Task:
    """One cell of the results: an implementation doing an operation on a variant."""

    variant: str
    op: str
    impl: str
    request: dict
    expected: int  # CRC-32 of what a read returns (for a write: of the array read back)
    samples: list = field(default_factory=list)
    peaks: list = field(default_factory=list)  # bytes resident memory rose, per sample
    note: str = ""  # why there are no samples: unsupported, or a wrong result

    @property
    def output(self):
        return Path(self.request["path"]) if self.op == "write" else None


def plan(data, variants, ops, impls, expected):
    """Every task, in the order each repetition runs them."""
    boxes = {"starts": d.box_starts(), "count": [d.BOX_SIZE] * len(d.SHAPE)}
    tasks = []
    for variant in variants:
        array = str(data.array(variant))
        # The chunks (inner chunks when sharded) as boxes: `count` when they are of one shape,
        # else `counts`, one per box (a rectilinear grid's).
        starts, counts = d.VARIANTS[variant].read_units()
        units = ({"starts": starts, "count": counts[0]} if all(c == counts[0] for c in counts)
                 else {"starts": starts, "counts": counts})
        for op in ops:
            for impl in impls:
                if impl in REFERENCES and (variant, op) not in REFERENCES[impl]:
                    continue
                if impl == "zarr-python-newest" and variant not in NEWEST_VARIANTS:
                    continue
                if impl in VARIANTS_OF_LIBZARR and op == "write":
                    continue  # the same as libzarr's: no output buffer, no reads
                request, crc = {"op": op, "path": array}, expected[variant][op]
                if op == "write":
                    request.update(path=str(data.output(impl, variant)), source=str(data.source),
                                   metadata=d.VARIANTS[variant].metadata)
                elif op == "read_chunks":
                    request.update(op="read_boxes", **units)
                elif op == "read_chunks_threads":
                    request.update(op="read_boxes_threads", **units, threads=THREADS)
                elif op == "read_boxes":
                    request.update(boxes)
                elif op == "read_strided":
                    request.update(step=d.STRIDE)
                if impl == "memcpy":
                    request["path"] = str(data.source)
                if impl in ("raw-files", "codec") and op == "read_all":
                    crc = expected[variant]["read_chunks"]  # the chunks' bytes, in order
                if impl == "codec-1t":  # every chunk decoded in order on one thread
                    request, crc = {"op": "read_all", "path": array}, expected[variant]["read_chunks"]
                tasks.append(Task(variant, op, impl, request, crc))
    return tasks


def expected_checksums(data, variants):
    """{variant: {op: CRC-32}}: only read_chunks differs between variants (its chunks)."""
    values = data.load()
    common = {
        "write": d.crc([values]),
        "read_all": d.crc([values]),
        "read_boxes": d.crc(d.boxes_of(values, d.box_starts(), [d.BOX_SIZE] * 3)),
        "read_strided": d.crc([values[(slice(None, None, d.STRIDE),) * 3]]),
    }
    by_variant = {v: d.crc(d.boxes_of(values, *d.VARIANTS[v].read_units())) for v in variants}
    return {v: {**common, "read_chunks": by_variant[v], "read_chunks_threads": by_variant[v]}
            for v in variants}


def check_chunk_boxes(data, variants):
    """The chunks read_chunks reads (data.py's, from each document) must be those libzarr
    reports through its C API (zarr_array_grid_shape, zarr_array_block_box), unequal ones of
    a rectilinear grid included: otherwise its reads would straddle chunks."""
    lib = numpy_ffi.load()
    for variant in variants:
        if d.VARIANTS[variant].sharded:
            continue  # read by inner chunk; the grid and its blocks are the shards
        array = numpy_ffi.Array(lib, str(data.array(variant)))
        try:
            boxes = array.chunk_boxes()
        finally:
            array.close()
        if boxes != d.VARIANTS[variant].read_units():
            raise RuntimeError(f"{variant}: data.py's chunks are not libzarr's chunk boxes")


def cpu_seconds(pids):
    """(CPU seconds the whole machine was busy, CPU seconds of `pids` and this process)."""
    hz = os.sysconf("SC_CLK_TCK")
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    busy = sum(ticks[:8]) - ticks[3] - ticks[4]  # all but idle and iowait
    ours = sum(int(x) for pid in pids  # utime and stime: fields 14 and 15 of /proc/PID/stat
               for x in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13])
    me = os.times()
    return busy / hz, ours / hz + me.user + me.system


def other_cpu(before, after):
    return max(0.0, (after[0] - before[0]) - (after[1] - before[1]))


def disk_bytes(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def warm_up_and_verify(task, workers, sizes):
    """The untimed first run of a task: warms caches and pools, checks the result."""
    reply = workers[task.impl].request({**task.request, "verify": True})
    if "unsupported" in reply:
        task.note = f"n/a: {reply['unsupported']}"
        return
    crc = reply["crc32"]
    if task.output:
        reader = "raw-files" if task.impl == "raw-files" else VERIFIER
        crc = workers[reader].request({"op": "read_all", "path": str(task.output), "verify": True})["crc32"]
        sizes[(task.impl, task.variant)] = disk_bytes(task.output)
        shutil.rmtree(task.output)
    if crc != task.expected:
        task.note = f"wrong result (CRC-32 {crc:#010x}, expected {task.expected:#010x})"


def bytes_read(data, workers):
    """For each Zarr implementation, the bytes its worker read for one unaligned box of the
    sharded variant (best of two runs) and for the same call with no box (opening the array,
    reading /proc/self/io), beside the least any reader needs (data.least_read); the box is
    checked by CRC-32 too. None where the workers cannot tell (no /proc/self/io)."""
    array = data.array(d.SHARDED)
    start, size = list(d.BYTES_BOX), [d.BOX_SIZE] * len(d.SHAPE)
    crc = d.crc(d.boxes_of(data.load(), [start], size))
    measured = {}
    for impl, worker in workers.items():
        if impl in REFERENCES or impl in VARIANTS_OF_LIBZARR or impl == "libzarr-numpy":
            continue
        request = {"op": "read_boxes", "path": str(array), "starts": [start], "count": size,
                   "verify": True}
        replies = [worker.request(request) for _ in range(2)]
        if replies[0]["read_bytes"] is None:
            return None
        if any(r.get("crc32") != crc for r in replies):
            raise RuntimeError(f"{impl}: wrong result for the bytes-read box")
        # The same request with no box: what opening the array and /proc/self/io cost.
        empty = min(worker.request({**request, "starts": []})["read_bytes"] for _ in range(2))
        measured[impl] = {"read_bytes": min(r["read_bytes"] for r in replies), "open": empty}
    return {"box": start, "size": d.BOX_SIZE, "least": d.least_read(array, start, d.BOX_SIZE),
            "measured": measured}


def rotated(tasks, rep):
    """The tasks of each (variant, operation) cell group in an order that starts at another
    implementation in each repetition, so that none always runs first after a write (whose
    pages the kernel may still be writing back)."""
    groups = {}
    for task in tasks:
        groups.setdefault((task.variant, task.op), []).append(task)
    return [t for group in groups.values()
            for t in group[rep % len(group):] + group[:rep % len(group)]]


def timed_run(task, workers):
    if task.output:
        shutil.rmtree(task.output, ignore_errors=True)
        # Earlier writes' dirty pages flushed first (untimed): otherwise a write is throttled
        # by the kernel's writeback of whatever was written before it, 40 to 350 ms for the
        # same 256 MiB write in one run.
        os.sync()
    reply = workers[task.impl].request(task.request)
    task.samples.append(reply["seconds"])
    task.peaks.append(reply.get("peak_bytes"))
    if task.output:
        shutil.rmtree(task.output)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions (default 5)")
    parser.add_argument("--impls", default=",".join(IMPLS), help="comma-separated subset")
    parser.add_argument("--variants", default=",".join(d.VARIANTS), help="comma-separated subset")
    parser.add_argument("--ops", default=",".join(OPS), help="comma-separated subset")
    parser.add_argument("--data", type=Path, default=BENCH / "data")
    parser.add_argument("--results", type=Path, default=BENCH / "results")
    parser.add_argument("--name", default=report.DEFAULT_NAME,
                        help=f"the report's name in --results: NAME.md and its raw samples and chart "
                             f"(default {report.DEFAULT_NAME}: RESULTS.md, raw.json, ratios.png); "
                             "give partial runs another, e.g. RECTILINEAR")
    args = parser.parse_args()
    impls, variants, ops = (args.impls.split(","), args.variants.split(","), args.ops.split(","))
    started = time.monotonic()

    data = d.Data(args.data)
    stamp = data.ensure()
    expected = expected_checksums(data, variants)
    check_chunk_boxes(data, variants)
    tasks = plan(data, variants, ops, impls, expected)
    needed = {t.impl for t in tasks} | ({VERIFIER} if "write" in ops else set())
    workers = {impl: Worker(impl) for impl in IMPLS if impl in needed}
    (args.data / "out").mkdir(exist_ok=True)
    try:
        sizes = {}
        print(f"warm-up and verification pass ({len(tasks)} tasks)", flush=True)
        for task in tasks:
            warm_up_and_verify(task, workers, sizes)
        runnable = [t for t in tasks if not t.note]
        probe = None
        if d.SHARDED in variants and "read_boxes" in ops:
            probe = bytes_read(data, workers)
        pids = [w.proc.pid for w in workers.values()]
        others = []  # CPU seconds that other processes used during each repetition
        for rep in range(args.reps):
            rep_started, cpu_before = time.monotonic(), cpu_seconds(pids)
            for task in rotated(runnable, rep):
                timed_run(task, workers)
            others.append(other_cpu(cpu_before, cpu_seconds(pids)))
            print(f"repetition {rep + 1}/{args.reps}: {time.monotonic() - rep_started:.0f} s "
                  f"(other processes used {others[-1]:.1f} CPU-s)", flush=True)
    finally:
        for worker in workers.values():
            worker.close()

    run = report.Run(tasks=tasks, impls=[i for i in IMPLS if i in workers and i in impls],
                     hellos={i: w.hello for i, w in workers.items()}, reps=args.reps,
                     stamp=stamp, sizes=sizes, data_sizes={v: disk_bytes(data.array(v)) for v in variants},
                     seconds=time.monotonic() - started, others=others, bytes_read=probe)
    command = " ".join(["scripts/bench.sh", *map(shlex.quote, sys.argv[1:])])
    report.write(run, args.results, args.name, command)
    failed = [t for t in tasks if t.note.startswith("wrong")]
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
