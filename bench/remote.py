"""Runs the remote benchmark (scripts/bench-remote.sh starts SeaweedFS and calls this).

libzarr, tensorstore (`s3` kvstore) and zarr-python 3 (ObjectStore on obstore) on one 256 MiB
array in an S3 bucket, in two variants (Zarr v2 zstd in 1 MiB chunks; Zarr v3 in 16 MiB shards
of 1 MiB inner chunks), each in a group with consolidated metadata: open the hierarchy, read
everything, read random boxes, write everything. Twice: straight to the S3 server (`direct`)
and through scripts/http_proxy.py adding a delay to every request (`latency`), where the
requests counted per operation come from. Workers and their protocol are run.py's; results go
to bench/results/REMOTE.md and remote.json.
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from pathlib import Path

import numpy as np

import data as d
import report
import s3
from run import BENCH, Worker, cpu_seconds, other_cpu

# zarr-python 3 warns on every write of v3 consolidated metadata (not in the v3 spec yet).
warnings.filterwarnings("ignore", message="Consolidated metadata is currently not part")

BUCKET = "zarr-test"
ROOT = f"s3://{BUCKET}/remote"  # inputs: ROOT/<variant>.zarr; outputs: ROOT-out/...
ARRAY = "data"  # the big array's name in each hierarchy (beside 1-D coordinates z, y, x)
CHUNKS = (64, 64, 128)  # 1 MiB of <u2: the v2 chunks, and the v3 inner chunks
SHARD = (128, 256, 256)  # 2×4×2 = 16 inner chunks, 16 MiB before compression
BOX = (64, 64, 128)  # random unaligned boxes of one chunk's size: up to 8 chunks each
BOX_COUNT, BOX_SEED = 16, 7
PEERS = ["tensorstore", "zarr-python"]
# The network floor (bench/src/network.rs) and the operations it runs.
REFERENCES = {"network": ["read_all", "read_boxes"]}
IMPLS = ["libzarr", *PEERS, *REFERENCES]
OPS = ["open", "read_all", "read_boxes", "write"]
MODES = ["direct", "latency"]
# Who reads back each implementation's writes (never the writer itself).
VERIFIER = {"libzarr": "zarr-python", "tensorstore": "libzarr", "zarr-python": "tensorstore"}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
VARIANTS = {
    "v2-zstd": {**d.zarray({"id": "zstd", "level": 1}), "chunks": list(CHUNKS)},
    "v3-shard-zstd": {**d.zarr_json([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(CHUNKS), "codecs": [d.BYTES, ZSTD],
        "index_codecs": [d.BYTES, {"name": "crc32c"}], "index_location": "end"}}]),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(SHARD)}}},
}
OP_TEXT = {
    "open": "open: open the group (its consolidated metadata) and then the array in it "
            "(tensorstore, which has no groups: open the array)",
    "read_all": "read_all: open the array, one read of all of it (256 MiB) into memory",
    "read_boxes": f"read_boxes: open the array, {BOX_COUNT} reads of random unaligned "
                  f"{'×'.join(map(str, BOX))} boxes (1 MiB each, up to 8 chunks; NumPy seed "
                  f"{BOX_SEED})",
    "write": "write: create the array from its metadata document in a fresh prefix and write "
             "all of it from memory (outputs deleted afterwards, untimed)",
}


def runs(impl, op):
    """Whether `impl` runs `op` (a reference runs only its own operations)."""
    return op in REFERENCES.get(impl, OPS)


def box_starts():
    rng = np.random.default_rng(BOX_SEED)
    return rng.integers(0, np.array(d.SHAPE) - BOX + 1, size=(BOX_COUNT, 3)).tolist()


def upload(values, endpoint):
    """Writes each variant's hierarchy with zarr-python 3: a group holding the array and three
    small coordinate arrays, then its consolidated metadata."""
    import zarr

    for variant, metadata in VARIANTS.items():
        url = f"{ROOT}/{variant}.zarr"
        s3.delete_prefix(url, endpoint)
        group = zarr.open_group(s3.zarr_store(url, endpoint, read_only=False), mode="w",
                                zarr_format=metadata["zarr_format"])
        for name, n in zip("zyx", d.SHAPE):
            group.create_array(name, data=np.arange(n, dtype="<f8"))
        d.write_with_zarr_python(s3.zarr_store(f"{url}/{ARRAY}", endpoint, read_only=False),
                                 metadata, values)
        zarr.consolidate_metadata(s3.zarr_store(url, endpoint, read_only=False))


class Proxy:
    """scripts/http_proxy.py in front of the S3 server, adding `delay_ms` to every request."""

    def __init__(self, upstream, delay_ms):
        self.port_file = Path(tempfile.mkdtemp()) / "port"
        self.proc = subprocess.Popen([sys.executable, str(BENCH.parent / "scripts" / "http_proxy.py"),
                                      "--upstream", upstream, "--delay-ms", str(delay_ms),
                                      "--port-file", str(self.port_file)])
        while not self.port_file.exists():
            if self.proc.poll() is not None:
                raise RuntimeError("http_proxy.py did not start")
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{int(self.port_file.read_text())}"

    def call(self, method, what):
        request = urllib.request.Request(f"{self.url}/__proxy__/{what}", method=method)
        with urllib.request.urlopen(request) as reply:
            return json.load(reply)

    def reset(self):
        self.call("POST", "reset")

    def stats(self):
        return self.call("GET", "stats")

    def close(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.port_file.parent, ignore_errors=True)


def memory(pid):
    """(VmRSS, VmHWM) of a process, in bytes."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return tuple(int(fields[k].split()[0]) * 1024 for k in ("VmRSS", "VmHWM"))


class Bench:
    """The workers, the endpoints, and every sample taken."""

    def __init__(self, impls, s3_endpoint, proxy, source):
        self.workers = {impl: Worker(impl) for impl in IMPLS if impl in impls or impl in
                        {VERIFIER[i] for i in impls if i in VERIFIER}}
        self.endpoints = {"direct": s3_endpoint, "latency": proxy.url}
        self.proxy, self.source, self.direct = proxy, source, s3_endpoint
        self.samples = []  # one dict per timed run
        self.outputs = 0

    def request(self, impl, mode, variant, op, **extra):
        """The request for one cell: its location, endpoint and what the op needs."""
        url = f"{ROOT}/{variant}.zarr"
        request = {"op": op, "path": f"{url}/{ARRAY}", "zarr_format": VARIANTS[variant]["zarr_format"],
                   "store_options": {"endpoint": self.endpoints[mode]}, "verify": False}
        if op == "open":
            request.update(path=url, array=ARRAY)
        elif op == "read_boxes":
            request.update(starts=box_starts(), count=list(BOX))
        elif op == "write":
            self.outputs += 1
            request.update(path=f"{ROOT}-out/{impl}-{variant}-{self.outputs}",
                           metadata=VARIANTS[variant], source=str(self.source))
        return {**request, **extra}

    def run(self, impl, request, mode):
        """Runs one request: its reply, plus the worker's peak memory growth over the request
        (VmHWM reset before through /proc/PID/clear_refs) and, through the proxy, the
        requests it made."""
        worker = self.workers[impl]
        pid = worker.proc.pid
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        rss_before = memory(pid)[0]
        if mode == "latency":
            self.proxy.reset()
        reply = worker.request(request)
        reply["peak_growth"] = memory(pid)[1] - rss_before
        reply["rss_before"] = rss_before
        if mode == "latency":
            reply["proxy"] = self.proxy.stats()
        return reply

    def check(self, impl, mode, variant, op, expected):
        """The untimed first run of a cell: warms up, verifies the values by CRC-32 (a
        write by reading it back with another implementation)."""
        request = self.request(impl, mode, variant, op, verify=True)
        reply = self.run(impl, request, mode)
        if "unsupported" in reply:
            raise RuntimeError(f"{impl} {op}: unsupported: {reply['unsupported']}")
        if impl in REFERENCES:
            return  # it reads bytes, not values
        crc = reply["crc32"]
        if op == "write":
            crc = self.workers[VERIFIER[impl]].request({**request, "op": "read_all"})["crc32"]
            s3.delete_prefix(request["path"], self.direct)
        if op != "open" and crc != expected[op]:
            raise RuntimeError(f"{impl} {op} {variant} ({mode}): wrong result, CRC-32 {crc:#010x}, "
                               f"expected {expected[op]:#010x}")

    def timed(self, rep, impl, mode, variant, op):
        request = self.request(impl, mode, variant, op)
        reply = self.run(impl, request, mode)
        if op == "write":
            s3.delete_prefix(request["path"], self.direct)
        self.samples.append({"rep": rep, "impl": impl, "mode": mode, "variant": variant, "op": op,
                             **{k: reply.get(k) for k in ("seconds", "peak_growth", "rss_before", "proxy")}})

    def count_box(self, impl, variant):
        """Requests to open the array alone and to read one box with it open (the first box;
        the difference of a read of that box and a read of no box), through the proxy."""
        counts = {}
        for name, starts in (("array", []), ("box", box_starts()[:1])):
            request = self.request(impl, "latency", variant, "read_boxes", starts=starts)
            counts[name] = self.run(impl, request, "latency")["proxy"]
        return {"open_array": counts["array"]["by_method"],
                "one_box": {m: n - counts["array"]["by_method"].get(m, 0)
                            for m, n in counts["box"]["by_method"].items()},
                "one_box_bytes": counts["box"]["bytes_to_client"] - counts["array"]["bytes_to_client"]}

    def close(self):
        for worker in self.workers.values():
            worker.close()


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def methods(by_method, received=None, in_flight=None, connections=None):
    """`12 (GET 11, HEAD 1)`-style text of a proxy's by_method counts, and when given the MiB
    received (responses, heads included), the most requests in flight at once and the
    connections opened."""
    total = sum(by_method.values())
    parts = ", ".join(f"{m} {n}" for m, n in sorted(by_method.items()) if n)
    text = f"{total} ({parts})" if total else "0"
    if received is not None:
        text += f", {received / 2**20:.1f} MiB"
    if in_flight is not None:
        text += f", ≤{in_flight:.0f} at once"
    if connections is not None:
        text += f", {connections:.0f} conn."
    return text


def tables(run):
    """The Markdown tables: time per mode with ratios, peak memory, requests."""
    cells = {}
    for s in run["samples"]:
        cells.setdefault((s["mode"], s["variant"], s["op"], s["impl"]), []).append(s)
    impls, lines = run["impls"], []
    peers = [i for i in impls if i in PEERS]
    for mode in run["modes"]:
        title = {"direct": "direct (client → SeaweedFS)",
                 "latency": f"latency (client → proxy adding {run['delay_ms']:g} ms per request → SeaweedFS)"}[mode]
        lines += [f"### Time, {title}", "", "median seconds; last column: libzarr / best peer "
                  "(target ≤ 0.8)", "",
                  "| variant | operation | " + " | ".join(impls) + " | libzarr / best peer |",
                  "|---|---|" + "---:|" * (len(impls) + 1)]
        for variant in run["variants"]:
            for op in run["ops"]:
                times = {i: median([s["seconds"] for s in cells.get((mode, variant, op, i), [])])
                         for i in impls}
                best = min((times[p] for p in peers if times[p]), default=None)
                ratio = f"**{times['libzarr'] / best:.2f}**" if best and times.get("libzarr") else ""
                lines.append(f"| {variant} | {op} | " + " | ".join(
                    f"{times[i]:.3f}" if times[i] is not None else "" for i in impls) + f" | {ratio} |")
        lines.append("")
    lines += ["### Peak memory", "",
              "growth of the worker's peak RSS (VmHWM, reset before each operation) over its RSS "
              "before the operation, MiB, largest over the repetitions; direct / latency. What "
              "the caller asks for: read_all 256 MiB (the result), read_boxes 1 MiB (one box), "
              "write nothing (the source is in the baseline)", "",
              "| variant | operation | " + " | ".join(impls) + " |", "|---|---|" + "---:|" * len(impls)]
    for variant in run["variants"]:
        for op in run["ops"]:
            row = []
            for i in impls:
                peaks = [max((s["peak_growth"] for s in cells.get((m, variant, op, i), [])), default=None)
                         for m in run["modes"]]
                row.append(" / ".join(f"{p / 2**20:.0f}" if p is not None else "–" for p in peaks))
            lines.append(f"| {variant} | {op} | " + " | ".join(row) + " |")
    lines += ["", "### Requests per operation (latency mode, through the proxy)", "",
              "median over the repetitions: requests by method, MiB of responses the client "
              "received, the most requests in flight at once (held in the proxy or being "
              "answered) and the connections opened", "",
              "| variant | operation | " + " | ".join(impls) + " |", "|---|---|" + "---:|" * len(impls)]
    for variant in run["variants"]:
        for op in run["ops"]:
            row = []
            for i in impls:
                got = [s["proxy"]["by_method"] for s in cells.get(("latency", variant, op, i), [])]
                if not got:
                    row.append("")
                    continue
                keys = {k for g in got for k in g}
                stats = [s["proxy"] for s in cells[("latency", variant, op, i)]]
                row.append(methods({k: int(median([g.get(k, 0) for g in got])) for k in keys},
                                   median([s["bytes_to_client"] for s in stats]),
                                   median([s.get("max_in_flight") for s in stats]),
                                   median([s.get("connections") for s in stats])))
            lines.append(f"| {variant} | {op} | " + " | ".join(row) + " |")
    lines += ["", "### Requests to open the hierarchy and to read one box", "",
              "open hierarchy: the `open` operation; open array: opening the array alone (a "
              "read of no box); one box: a read of the first random box minus that, with the MiB "
              "received", "",
              "| variant | implementation | open hierarchy | open array | one box |", "|---|---|---|---|---|"]
    for variant in run["variants"]:
        for i in impls:
            probe = run["probes"].get(f"{i} {variant}")
            opened = [s["proxy"]["by_method"] for s in cells.get(("latency", variant, "open", i), [])]
            if probe:
                lines.append(f"| {variant} | {i} | {methods(opened[0]) if opened else ''} | "
                             f"{methods(probe['open_array'])} | "
                             f"{methods(probe['one_box'], probe['one_box_bytes'])} |")
    return "\n".join(lines)


def markdown(run):
    hellos = run["hellos"]
    return "\n".join([
        "# libzarr remote benchmark (S3)", "",
        f"Generated by `scripts/bench-remote.sh` on {datetime.date.today()}: {report.machine()}. "
        f"libzarr commit {run['commit']}. Whole run: {run['seconds'] / 60:.1f} min.", "",
        "## Method", "",
        f"- Server: SeaweedFS (`weed mini`, scripts/servers.sh) on 127.0.0.1, bucket `{BUCKET}`, "
        "SigV4 credentials, path-style requests over plain HTTP.",
        f"- Data: the local benchmark's array ({'×'.join(map(str, d.SHAPE))} `{d.DTYPE}`, 256 MiB: "
        f"{d.DESCRIPTION}), written once per run by zarr-python {run['zarr_version']} through "
        "`ObjectStore(obstore S3Store)` into a group with three 1-D coordinate arrays (z, y, x) "
        "and consolidated metadata (`zarr.consolidate_metadata`):",
        f"  - `v2-zstd`: Zarr v2, chunks {'×'.join(map(str, CHUNKS))} (1 MiB), zstd level 1, "
        "256 chunk objects;",
        f"  - `v3-shard-zstd`: Zarr v3, shards {'×'.join(map(str, SHARD))} of 16 inner chunks "
        f"{'×'.join(map(str, CHUNKS))} (bytes + zstd level 1; index bytes + crc32c at the end), "
        "16 shard objects.",
        "- Operations:", *[f"  - {OP_TEXT[op]}" for op in run["ops"]],
        "- Modes: `direct`: every client talks to SeaweedFS itself (no proxy; no requests counted). "
        f"`latency`: every client's endpoint is scripts/http_proxy.py with `--delay-ms "
        f"{run['delay_ms']:g}`, which holds each request that long before forwarding it (requests "
        "on different connections wait at the same time), so requests kept in flight decide the "
        "time; its per-request counters, reset before and read after each operation, give the "
        "request counts. The proxy is the same Python process for every implementation (and "
        "relays every byte, which costs CPU on this 2-core machine).",
        "- Settings: every implementation's defaults (libzarr: 32 requests in flight, its "
        "thread pool; tensorstore: s3_request_concurrency 32, cache pool 0 as in the local "
        "benchmark; zarr-python: async.concurrency 10). Each operation opens its own store "
        "(libzarr's stores share HTTP clients and their connections within the process, as "
        "tensorstore's global pool does; obstore opens new connections).",
        "- Verification: one untimed pass of every cell in both modes first; reads checked by "
        "CRC-32 of the values, writes read back by another implementation "
        f"({', '.join(f'{w} by {v}' for w, v in VERIFIER.items())}).",
        f"- Timing: median of {run['reps']} repetitions, interleaved (for each repetition: mode, "
        "variant, operation, implementation, the implementations starting one further along in "
        "each repetition so that none always runs first after a write). Peak memory: the worker's /proc/PID/clear_refs "
        "reset (5) before each operation, VmHWM after, minus VmRSS before. The worker holds the "
        "256 MiB write source (loaded outside the timings) in its baseline; a whole read's own "
        "result is 256 MiB of the growth.",
        f"- Machine shared with other builds: CPU seconds used by other processes per repetition: "
        f"{', '.join(f'{x:.0f}' for x in run['others'])}. Expect noise.",
        "- Reference: network: the fewest requests each read needs, sent through object_store "
        "0.14 (the HTTP client libzarr uses) and dropped: one GET of the metadata document, then "
        "every chunk or shard object whole (read_all, 32 in flight), or for each box in turn the "
        "chunks it touches whole (v2) or, for each shard it touches, its index and then the "
        "touched inner chunks' ranges (runs lying back to back merged), every shard at once "
        "(v3). No decoding: the floor of a read over this network; not a peer, so not in the "
        "best-peer ratio.",
        "- zarrs is not in this benchmark (it would need zarrs_object_store and an async-to-sync "
        "adapter in the bench crate).", "",
        "## Implementations", "",
        "| implementation | version | threads |", "|---|---|---|",
        *[f"| {i} | {hellos[i]['version']} | {hellos[i]['threads']} |" for i in run["impls"]], "",
        "## Results", "", tables(run), "",
    ])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7, help="timed repetitions (default 7)")
    parser.add_argument("--impls", default=",".join(IMPLS), help="comma-separated subset")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated subset")
    parser.add_argument("--ops", default=",".join(OPS), help="comma-separated subset")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated subset")
    parser.add_argument("--delay-ms", type=float, default=20.0, help="the proxy's delay")
    parser.add_argument("--data", type=Path, default=BENCH / "data" / "remote")
    parser.add_argument("--results", type=Path, default=BENCH / "results")
    args = parser.parse_args()
    impls, variants, ops, modes = (args.impls.split(","), args.variants.split(","),
                                   args.ops.split(","), args.modes.split(","))
    started = time.monotonic()
    endpoint = os.environ["LIBZARR_TEST_S3_ENDPOINT"]  # set by servers.sh's start_servers
    os.environ.update(AWS_ACCESS_KEY_ID=os.environ["LIBZARR_TEST_S3_KEY"],
                      AWS_SECRET_ACCESS_KEY=os.environ["LIBZARR_TEST_S3_SECRET"],
                      AWS_REGION="us-east-1", AWS_ENDPOINT_URL=endpoint, AWS_ALLOW_HTTP="true")

    values = d.values()
    source = args.data / "source.u16"
    if not source.exists():
        args.data.mkdir(parents=True, exist_ok=True)
        values.tofile(source)
    print("writing the input hierarchies with zarr-python", flush=True)
    upload(values, endpoint)
    expected = {"read_all": d.crc([values]), "write": d.crc([values]),
                "read_boxes": d.crc(d.boxes_of(values, box_starts(), BOX))}
    del values

    proxy = Proxy(endpoint, args.delay_ms)
    bench = Bench(impls, endpoint, proxy, source)
    probes, others = {}, []
    try:
        print("verification pass", flush=True)
        for mode in modes:
            for variant in variants:
                for op in ops:
                    for impl in impls:
                        if runs(impl, op):
                            bench.check(impl, mode, variant, op, expected)
        if "latency" in modes:
            probes = {f"{i} {v}": bench.count_box(i, v) for v in variants for i in impls}
        pids = [w.proc.pid for w in bench.workers.values()] + [proxy.proc.pid]
        for rep in range(args.reps):
            rep_started, cpu_before = time.monotonic(), cpu_seconds(pids)
            # Each repetition starts the cells at another implementation, so that none always
            # runs first after a write, while the server is still storing it.
            order = impls[rep % len(impls):] + impls[:rep % len(impls)]
            for mode in modes:
                for variant in variants:
                    for op in ops:
                        for impl in order:
                            if runs(impl, op):
                                bench.timed(rep, impl, mode, variant, op)
            others.append(other_cpu(cpu_before, cpu_seconds(pids)))
            print(f"repetition {rep + 1}/{args.reps}: {time.monotonic() - rep_started:.0f} s "
                  f"(other processes used {others[-1]:.1f} CPU-s)", flush=True)
        hellos = {i: w.hello for i, w in bench.workers.items()}
    finally:
        bench.close()
        proxy.close()

    import zarr

    run = {"impls": impls, "variants": variants, "ops": ops, "modes": modes, "reps": args.reps,
           "delay_ms": args.delay_ms, "hellos": hellos, "samples": bench.samples, "probes": probes,
           "others": others, "seconds": time.monotonic() - started,
           "commit": report.libzarr_commit(), "zarr_version": zarr.__version__}
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "remote.json").write_text(json.dumps(run, indent=1) + "\n")
    (args.results / "REMOTE.md").write_text(markdown(run) + "\n")
    print(tables(run))


if __name__ == "__main__":
    main()
