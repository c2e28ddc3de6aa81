"""Opening a 1,000-array hierarchy with and without consolidated metadata.

Writes (once, with libzarr) 10 groups x 100 small arrays, each with attributes, into
bench/data/hierarchy.zarr, consolidates it, then times "open everything": open the store, list every
group, open every array and read its shape and attributes. libzarr through its C API (ctypes) and
zarr-python 3, each with and without .zmetadata; warm page cache, median of `--reps` runs.
Run: .venv/bench/bin/python bench/hierarchy.py  (after `cargo build --release`).
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "interop"))
import libzarr  # noqa: E402

GROUPS, ARRAYS = 10, 100
META = {"shape": [100], "chunks": [100], "dtype": "<f4", "compressor": {"id": "zstd", "level": 1}}


def make(path):
    if (path / ".zmetadata").exists():
        return
    with libzarr.open_store(path, "w") as store:
        for g in range(GROUPS):
            with store.create_group(f"g{g}") as group:
                group.set_attrs({"index": g})
            for a in range(ARRAYS):
                with store.create_array(f"g{g}/a{a}", META) as arr:
                    arr.set_attrs({"units": "m", "index": a})
        store.consolidate()


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
    return n


def python_open_all(path, consolidated):
    import zarr
    root = zarr.open_group(str(path), mode="r", zarr_format=2, use_consolidated=consolidated)
    n = 0
    for _, group in root.groups():
        dict(group.attrs)
        for _, arr in group.arrays():
            n += len(arr.shape) + len(dict(arr.attrs))
    return n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    path = ROOT / "bench" / "data" / "hierarchy.zarr"
    make(path)
    cases = [("libzarr", libzarr_open_all), ("zarr-python", python_open_all)]
    times = {}
    for _ in range(args.reps):
        for name, fn in cases:
            for consolidated in (True, False):
                start = time.perf_counter()
                n = fn(path, consolidated)
                times.setdefault((name, consolidated), []).append(time.perf_counter() - start)
                assert n == GROUPS * ARRAYS * 3, n
    print(f"open {GROUPS * ARRAYS} arrays in {GROUPS} groups (median of {args.reps}, ms)")
    print("| implementation | consolidated | per-node documents | ratio |")
    print("|---|---|---|---|")
    for name, _ in cases:
        c, p = (statistics.median(times[(name, x)]) * 1e3 for x in (True, False))
        print(f"| {name} | {c:.1f} | {p:.1f} | {c / p:.2f} |")


if __name__ == "__main__":
    main()
