"""Store and hierarchy operations of issue #5, timed against zarr-python 3 and physical references.

1. Opening a 1,000-array hierarchy (10 groups x 100 small arrays, each with attributes) with and
   without consolidated metadata: open the store, list every group, open every array and read its
   shape and attributes. libzarr through its C API (ctypes) and zarr-python 3; warm, and cold (the
   page cache dropped before each run, when this process may write /proc/sys/vm/drop_caches).
2. Copying a 256 MiB array (<f8, 64 chunks of 512x1024, zstd level 1): `zarr_store_copy` (keys
   verbatim) against `cp -r`; and rechunking it into 128x2048 chunks with blosc-lz4
   (`zarr_array_copy_to`) against zarr-python 3 writing the new array from the old one block by
   block.
3. 1,000 random 8x8 reads from the same array through one handle with the chunk cache off and on.

Warm page cache, median of `--reps` interleaved runs, all in one process on the same machine.
Data goes to bench/data/ops/ (made once). Run: .venv/bench/bin/python bench/store_ops.py
(after `cargo build --release`); results are printed as Markdown.
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "interop"))
import libzarr  # noqa: E402

DATA = ROOT / "bench" / "data" / "ops"
GROUPS, ARRAYS = 10, 100
SMALL = {"shape": [100], "chunks": [100], "dtype": "<f4", "compressor": {"id": "zstd", "level": 1}}
BIG = {"shape": [4096, 8192], "chunks": [512, 1024], "dtype": "<f8", "compressor": {"id": "zstd", "level": 1}}
RECHUNK = {"chunks": [128, 2048], "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}}
READS = 1_000


def make_hierarchy(path):
    if (path / ".zmetadata").exists():
        return
    with libzarr.open_store(path, "a") as store:
        for g in range(GROUPS):
            with store.create_group(f"g{g}") as group:
                group.set_attrs({"index": g})
            for a in range(ARRAYS):
                with store.create_array(f"g{g}/a{a}", SMALL) as arr:
                    arr.set_attrs({"units": "m", "index": a})
        store.consolidate()


def make_big(path):
    if (path / ".zarray").exists():
        return
    rows = np.arange(BIG["shape"][1], dtype="<f8")
    with libzarr.open_store(path, "a") as store, store.create_array("", BIG) as arr:
        for r in range(0, BIG["shape"][0], 512):
            arr.write(np.sin(rows[None, :] * 1e-3 + np.arange(r, r + 512)[:, None]), (r, 0))


def libzarr_open_all(path, consolidated):
    mode = libzarr.MODE_READ | (0 if consolidated else libzarr.OPEN_IGNORE_CONSOLIDATED)
    n = 0
    with libzarr.open_store(path, mode) as store:
        with store.open_group("") as root:
            groups = root.list()["groups"]
        for g in groups:
            with store.open_group(g) as group:
                names = group.list()["arrays"]
                group.attrs()
            for name in names:
                with store.open_array(f"{g}/{name}") as arr:
                    n += len(arr.shape) + len(arr.attrs())
    assert n == GROUPS * ARRAYS * 3, n


def python_open_all(path, consolidated):
    import zarr
    root = zarr.open_group(str(path), mode="r", zarr_format=2, use_consolidated=consolidated)
    n = 0
    for _, group in root.groups():
        dict(group.attrs)
        for _, arr in group.arrays():
            n += len(arr.shape) + len(dict(arr.attrs))
    assert n == GROUPS * ARRAYS * 3, n


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    return path


def libzarr_copy_store(src):
    with libzarr.open_store(src) as s, libzarr.open_store(fresh(DATA / "copy"), "a") as d:
        s.copy("", d, "")


def cp_r(src):
    subprocess.run(["cp", "-r", str(src), str(fresh(DATA / "copy"))], check=True)


def libzarr_rechunk(src):
    with libzarr.open_store(src) as s, s.open_array("") as a, libzarr.open_store(fresh(DATA / "rechunk"), "a") as d:
        a.copy_to(d, "r", RECHUNK)


def python_rechunk(src):
    import numcodecs
    import zarr
    old = zarr.open_array(str(src), mode="r", zarr_format=2)
    new = zarr.create_array(str(fresh(DATA / "rechunk") / "r"), shape=old.shape, chunks=RECHUNK["chunks"],
                            dtype=old.dtype, zarr_format=2, compressors=numcodecs.Blosc("lz4", 5, 1))
    for r in range(0, old.shape[0], 512):
        new[r:r + 512] = old[r:r + 512]


def random_reads(src, cache_bytes):
    rng = np.random.default_rng(7)
    starts = np.stack([rng.integers(0, n - 8, READS) for n in BIG["shape"]], axis=1)
    total = 0.0
    with libzarr.open_store(src) as s, s.open_array("") as a:
        a.set_chunk_cache(cache_bytes)
        for r, c in starts:
            total += float(a.read((r, c), (8, 8))[0, 0])
    return total


def can_drop_caches():
    try:
        drop_caches()
        return True
    except OSError:
        return False


def drop_caches():
    subprocess.run(["sync"], check=True)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def timed(fn, *args):
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    hierarchy, big = DATA / "hierarchy.zarr", DATA / "big.zarr"
    make_hierarchy(hierarchy)
    make_big(big)
    nbytes = np.prod(BIG["shape"]) * 8
    stored = sum(p.stat().st_size for p in big.rglob("*") if p.is_file())
    cases = {
        "open, libzarr, consolidated": (libzarr_open_all, hierarchy, True),
        "open, libzarr, per-node": (libzarr_open_all, hierarchy, False),
        "open, zarr-python, consolidated": (python_open_all, hierarchy, True),
        "open, zarr-python, per-node": (python_open_all, hierarchy, False),
        "copy, zarr_store_copy": (libzarr_copy_store, big),
        "copy, cp -r": (cp_r, big),
        "rechunk, zarr_array_copy_to": (libzarr_rechunk, big),
        "rechunk, zarr-python": (python_rechunk, big),
        "reads, cache off": (random_reads, big, 0),
        "reads, cache on (1 GiB)": (random_reads, big, 1 << 30),
    }
    times = {name: [] for name in cases}
    for _ in range(args.reps):
        for name, (fn, *fn_args) in cases.items():
            times[name].append(timed(fn, *fn_args))
    # Cold runs last, since dropping the page cache would make the warm cases cold too.
    if can_drop_caches():
        for _ in range(args.reps):
            for impl, fn in (("libzarr", libzarr_open_all), ("zarr-python", python_open_all)):
                for how in ("consolidated", "per-node"):
                    drop_caches()
                    times.setdefault(f"cold open, {impl}, {how}", []).append(
                        timed(fn, hierarchy, how == "consolidated"))
    t = {name: statistics.median(v) for name, v in times.items()}
    print(f"median of {args.reps} runs; array: {nbytes / 2**20:.0f} MiB of values, {stored / 2**20:.0f} MiB stored\n")
    print("| operation | time | throughput or ratio |")
    print("|---|---|---|")
    for impl in ("libzarr", "zarr-python"):
        c, p = t[f"open, {impl}, consolidated"], t[f"open, {impl}, per-node"]
        print(f"| open {GROUPS * ARRAYS} arrays, {impl}: consolidated / per-node | {c * 1e3:.1f} / {p * 1e3:.1f} ms "
              f"| {c / p:.2f} |")
    for impl in ("libzarr", "zarr-python"):
        if f"cold open, {impl}, consolidated" in t:
            c, p = t[f"cold open, {impl}, consolidated"], t[f"cold open, {impl}, per-node"]
            print(f"| cold open {GROUPS * ARRAYS} arrays, {impl}: consolidated / per-node | {c * 1e3:.1f} / "
                  f"{p * 1e3:.1f} ms | {c / p:.2f} |")
    c, p = t["open, libzarr, consolidated"], t["open, zarr-python, consolidated"]
    print(f"| open, consolidated: libzarr / zarr-python | | {c / p:.2f} |")
    for name in ("copy, zarr_store_copy", "copy, cp -r"):
        print(f"| {name} | {t[name] * 1e3:.0f} ms | {stored / t[name] / 1e6:.0f} MB/s stored |")
    print(f"| copy: zarr_store_copy / cp -r | | {t['copy, zarr_store_copy'] / t['copy, cp -r']:.2f} |")
    for name in ("rechunk, zarr_array_copy_to", "rechunk, zarr-python"):
        print(f"| {name} | {t[name] * 1e3:.0f} ms | {nbytes / t[name] / 1e6:.0f} MB/s of values |")
    print(f"| rechunk: libzarr / zarr-python | | {t['rechunk, zarr_array_copy_to'] / t['rechunk, zarr-python']:.2f} |")
    for name in ("reads, cache off", "reads, cache on (1 GiB)"):
        print(f"| {READS} random 8x8 {name} | {t[name] * 1e3:.0f} ms | {t[name] / READS * 1e6:.1f} µs/read |")
    print(f"| reads: cache on / off | | {t['reads, cache on (1 GiB)'] / t['reads, cache off']:.2f} |")


if __name__ == "__main__":
    main()
