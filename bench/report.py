"""Turns the timings into the table on stdout, results/RESULTS.md, results/raw.json and
results/ratios.png (ratios of libzarr's median time to each peer's); a run given another name
writes results/NAME.md, results/NAME.raw.json and results/NAME.png instead."""

import datetime
import json
import os
import platform
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

import data as d

PEERS = ("zarrs", "tensorstore", "zarr-python", "zarr-python-newest")
DEFAULT_NAME = "RESULTS"  # the full run's report: RESULTS.md, raw.json, ratios.png

OP_TEXT = {
    "write": "write: create the array and write all of it from memory into a fresh directory "
             "(encoding and files included; outputs removed and dirty pages flushed with "
             "sync(2) before each repetition, untimed)",
    "read_all": "read_all: one read of the whole array into memory",
    "read_chunks": "read_chunks: one read per chunk, in C order of the chunk grid: 64 reads of "
                   "128³; for the sharded variant one per inner chunk, 4096 reads of 32³; for "
                   "the rectilinear one 64 reads of its chunks' unequal boxes (from 100 × 212 × 96 "
                   "to 212 × 100 × 160: the chunks data.py computes from the document, checked "
                   "against those libzarr's zarr_array_grid_shape and zarr_array_block_box give)",
    "read_chunks_threads": "read_chunks_threads: the same reads from 8 threads of the caller at "
                           "once sharing one array handle (GDAL's pattern), thread t reading "
                           "chunks t, t + 8, ...",
    "read_boxes": f"read_boxes: {d.BOX_COUNT} reads of random unaligned {d.BOX_SIZE}³ boxes "
                  f"(NumPy seed {d.BOX_SEED}; the same boxes for everyone)",
    "read_strided": f"read_strided: one read of [0:512:{d.STRIDE}] along every dimension "
                    f"({-(-512 // d.STRIDE)}³ elements)",
}
REFERENCE_TEXT = {
    "codec": "codec: a compressed variant's chunk files (a sharded variant's shard files, "
             "the inner chunks found through each index) read and decoded by the codec's own "
             "library (zstd, or blosc single-threaded per chunk) into one buffer kept from the "
             "previous call (no page faults), chunk after chunk, on the rayon pool: the floor "
             "of reading that variant; read_boxes: for each box, each chunk it touches read "
             "(from its shard by the index entry), decoded whole into a buffer kept per thread "
             "and the box's rows copied out, the chunks of a box in parallel; write: each chunk cut out of the data, encoded by the "
             "codec's library with the variant's settings and written as a file, chunks in "
             "parallel on the rayon pool: the floor of writing it",
    "codec-1t": "codec-1t: the whole read on one thread, the codec's own single-thread speed "
                "on the same chunks: the floor of the read_chunks row (one chunk per call, and zstd "
                "decodes a chunk on one thread)",
    "raw-files": "raw files: the uncompressed variant's 64 chunk files read into one buffer "
                 "(write: 64 chunk-sized slices of the data written as files); no decoding",
    "memcpy": "memcpy: the array's 256 MiB copied into a freshly allocated buffer (page faults "
              "included)",
}


@dataclass
class Run:
    tasks: list
    impls: list
    hellos: dict
    reps: int
    stamp: dict
    sizes: dict  # (impl, variant) -> bytes written
    data_sizes: dict  # variant -> bytes of the input array on disk
    seconds: float
    others: list  # CPU seconds other processes used during each repetition
    bytes_read: dict = None  # run.bytes_read's measurements, when the sharded variant ran


def median(task):
    return statistics.median(task.samples) if task.samples else None


def cells(run):
    """{(variant, op, impl): task}, with the references (measured on the uncompressed
    variant) repeated under every variant so that each table shows them."""
    by_key = {(t.variant, t.op, t.impl): t for t in run.tasks}
    variants = list(dict.fromkeys(t.variant for t in run.tasks))
    for t in run.tasks:
        if t.impl in ("raw-files", "memcpy"):
            for v in variants:
                by_key.setdefault((v, t.op, t.impl), t)
    return by_key, variants


def ratio(by_key, variant, op, impl):
    ours, theirs = by_key.get((variant, op, "libzarr")), by_key.get((variant, op, impl))
    if ours and theirs and median(ours) and median(theirs):
        return median(ours) / median(theirs)
    return None


def best_peer_ratio(by_key, variant, op):
    """libzarr's median time over the fastest peer's, and that peer."""
    ratios = [(r, p) for p in PEERS if (r := ratio(by_key, variant, op, p)) is not None]
    return max(ratios) if ratios else (None, None)


def results_tables(run):
    by_key, variants = cells(run)
    ops = list(dict.fromkeys(t.op for t in run.tasks))
    notes, lines = {}, []
    for variant in variants:
        lines += [f"### {variant}: {d.VARIANTS[variant].title}", "",
                  "| operation | " + " | ".join(run.impls) + " | libzarr / best peer |",
                  "|---|" + "---:|" * (len(run.impls) + 1)]
        for op in ops:
            row = []
            for impl in run.impls:
                task = by_key.get((variant, op, impl))
                if task is None:
                    row.append("")
                elif task.note:
                    mark = notes.setdefault(task.note, len(notes) + 1)
                    row.append(f"n/a [{mark}]" if task.note.startswith("n/a") else f"WRONG [{mark}]")
                else:
                    r = ratio(by_key, variant, op, impl)
                    shown = impl != "libzarr" and r is not None
                    row.append(f"{median(task) * 1e3:.0f} ms" + (f" ({r:.2f})" if shown else ""))
            best, peer = best_peer_ratio(by_key, variant, op)
            row.append(f"**{best:.2f}** ({peer})" if best is not None else "")
            lines.append(f"| {op} | " + " | ".join(row) + " |")
        lines.append("")
    lines += [f"[{n}] {note}" for note, n in notes.items()]
    return "\n".join(lines)


def memory_tables(run):
    """Per variant: the most resident memory rose during one run of each cell (MiB)."""
    by_key, variants = cells(run)
    ops = list(dict.fromkeys(t.op for t in run.tasks))
    lines = []
    for variant in variants:
        lines += [f"### {variant}", "", "| operation | " + " | ".join(run.impls) + " |",
                  "|---|" + "---:|" * len(run.impls)]
        for op in ops:
            row = []
            for impl in run.impls:
                task = by_key.get((variant, op, impl))
                peaks = [p for p in (task.peaks if task else []) if p is not None]
                row.append(f"{max(peaks) / 2**20:.0f}" if peaks else "")
            lines.append(f"| {op} | " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)


def implementations_table(run):
    lines = ["| implementation | version | threads |", "|---|---|---|"]
    lines += [f"| {i} | {run.hellos[i]['version']} | {run.hellos[i]['threads']} |" for i in run.impls]
    return "\n".join(lines)


def sizes_table(run):
    variants = list(run.data_sizes)
    writers = [i for i in run.impls if any((i, v) in run.sizes for v in variants)]
    mib = lambda n: f"{n / 2**20:.1f}" if n else ""
    lines = ["| variant | input (zarr-python) | " + " | ".join(writers) + " |",
             "|---|" + "---:|" * (len(writers) + 1)]
    lines += [f"| {v} | {mib(run.data_sizes[v])} | " + " | ".join(mib(run.sizes.get((i, v))) for i in writers)
              + " |" for v in variants]
    return "\n".join(lines)


def bytes_read_section(run):
    """The bytes-read table: each implementation's reads for one box against the least."""
    probe = run.bytes_read
    if not probe:
        return []
    least = probe["least"]
    floor = least["index_bytes"] + least["chunk_bytes"]
    box = "×".join(f"[{s}:{s + probe['size']}]" for s in probe["box"])
    lines = [
        "## Bytes read for one sharded box", "",
        f"One read of the box {box} of `{d.SHARDED}` (not aligned to shards or inner chunks): "
        f"it touches {least['shards']} shards and {least['inner_chunks']} stored inner chunks. "
        f"**Least needed** = the {least['shards']} shard indexes "
        f"({least['index_bytes']:,} bytes: {d.INNER_PER_SHARD} × 16 + 4 each) + those inner chunks' compressed "
        f"sizes from the indexes ({least['chunk_bytes']:,} bytes) = **{floor:,} bytes**; "
        f"reading the {least['shards']} shard files whole would be {least['shard_files']:,} "
        "bytes. **Measured** = the growth of `rchar` in the worker's /proc/self/io around the "
        "call (bytes returned by read-family system calls, page cache or disk alike, all "
        "threads), best of two warm runs. **Opening** = the same call with no box (the "
        "metadata document and the cost of reading /proc/self/io), subtracted in **box**.", "",
        "| implementation | measured | opening | box | box / least needed |",
        "|---|---:|---:|---:|---:|",
    ]
    for impl, m in probe["measured"].items():
        if m["read_bytes"] is None:
            lines.append(f"| {impl} | n/a | | | |")
            continue
        net = m["read_bytes"] - m["open"]
        lines.append(f"| {impl} | {m['read_bytes']:,} | {m['open']:,} | {net:,} | {net / floor:.2f} |")
    lines.append(f"| least needed | | | {floor:,} | 1.00 |")
    return lines + [""]


def spread(run):
    """The noisiest cell: largest (max - min) / median over the timed samples."""
    worst = max((t for t in run.tasks if len(t.samples) > 1),
                key=lambda t: (max(t.samples) - min(t.samples)) / median(t), default=None)
    if worst is None:
        return "n/a"
    value = (max(worst.samples) - min(worst.samples)) / median(worst)
    return f"{value:.0%} ({worst.impl}, {worst.op}, {worst.variant})"


def contention_text(run):
    others = ", ".join(f"{x:.1f}" for x in run.others)
    return (f"CPU seconds used by other processes during each repetition: {others} (near 0: the "
            "machine was quiet).")


def machine():
    def first(path, key):
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
        return "?"

    memory = int(first("/proc/meminfo", "MemTotal").split()[0]) / 2**20
    return f"{first('/proc/cpuinfo', 'model name')}, {os.cpu_count()} cores, {memory:.0f} GiB, {platform.platform()}"


def libzarr_commit():
    repo = Path(__file__).resolve().parent.parent
    result = subprocess.run(["git", "-C", str(repo), "describe", "--always", "--dirty"],
                            capture_output=True, text=True)
    return result.stdout.strip() or "unknown"


def writers_text(run):
    """Who wrote the input: the bench environment's zarr-python, and the variants of this run
    the newest one wrote."""
    variants = list(dict.fromkeys(t.variant for t in run.tasks))
    others = [f"`{v}` by {w}" for v, w in run.stamp.get("writers", {}).items() if v in variants]
    return run.stamp["writer"] + (f" ({', '.join(others)})" if others else "")


def markdown(run, tables, name=DEFAULT_NAME, command=None):
    refs = [REFERENCE_TEXT[i] for i in REFERENCE_TEXT if i in run.impls]
    files = output_files(name)
    return "\n".join([
        "# libzarr benchmark results" + ("" if name == DEFAULT_NAME else f": {name}"), "",
        f"Generated by `{command or 'scripts/bench.sh'}` on {datetime.date.today()}: {machine()}. "
        f"libzarr commit {libzarr_commit()}. Whole run: {run.seconds / 60:.1f} min.", "",
        "## Method", "",
        f"- Data: {len(d.SHAPE)}-D array {'×'.join(map(str, d.SHAPE))} `{d.DTYPE}` "
        f"({2 * 512**3 / 2**20:.0f} MiB), chunks {'×'.join(map(str, d.CHUNKS))} (for the sharded "
        f"variant: shards of that shape, inner chunks {'×'.join(map(str, d.INNER_CHUNKS))}; for "
        f"the rectilinear one 4 × 4 × 4 chunks of unequal lengths, chunk_shapes "
        f"`{d.RECTILINEAR}`), written once by {writers_text(run)} (the variant's `.zarray` or "
        "`zarr.json` stored, "
        f"then `zarr.open_array(...)[...] = values`): {d.DESCRIPTION}. Every implementation "
        "reads the same files, and writes from the same metadata document.",
        "- Operations (each timing includes opening the array):",
        *[f"  - {OP_TEXT[op]}" for op in dict.fromkeys(t.op for t in run.tasks)],
        "- Zarr v3: tensorstore opens v3 arrays with its `zarr3` driver; zarrs reads whole arrays "
        "with `retrieve_array_subset` and boxes and chunks with `ArrayShardedReadableExt::"
        "retrieve_array_subset_sharded_opt` and one `ArrayShardedReadableExtCache` per operation "
        "(each shard index read once per operation; plain `retrieve_array_subset` when not "
        "sharded); libzarr, tensorstore (cache pool 0) and zarr-python read a shard's index "
        "again for every read call (as their bytes read for read_chunks show).",
        "- Rectilinear grid (zarr-extensions' `rectilinear`): zarr-python reads and writes it from "
        "3.2 on, with `zarr.config.set({\"array.rectilinear_chunks\": True})`; the bench "
        "environment's zarr-python is 3.1 (no such grid: its cells are n/a), so "
        "`zarr-python-newest`, the newest zarr-python 3 in its own interpreter "
        "(`.venv/bench-newest`, Python 3.12 or later), wrote that variant and is timed on it and on `v3-zstd` "
        "(the same version on both grids). tensorstore's `zarr3` driver has no rectilinear grid "
        "(n/a). zarrs reads and writes it (0.23.8 and later).",
        "- Output buffers: libzarr reads into buffers from `calloc`, as a C caller's `malloc` "
        "gives them (large ones 16 bytes past a 64-byte boundary), reused across the boxes of "
        "one operation; `libzarr-aligned` is libzarr reading into the same memory moved to a "
        "64-byte boundary; `libzarr-cache-64M` and `libzarr-cache-1G` are libzarr with a chunk "
        "cache of that budget on the array each operation opens (off by default); "
        "`libzarr-numpy` is libzarr's C API called from Python through ctypes into NumPy "
        "arrays (`numpy_ffi.py`). zarrs reads into the same kind of buffer with "
        "`retrieve_array_subset_into` (sharded: `retrieve_array_subset_sharded_opt`, which "
        "allocates, copied over); tensorstore and zarr-python return new NumPy arrays.",
        *[f"- Reference: {text}" for text in refs],
        "- Warm cache: the data fit in RAM; one untimed pass of every task first fills the page "
        "cache and verifies each result by CRC-32 (written arrays are read back by "
        "zarrs; raw files by the raw reader). Reads are therefore from memory, not disk.",
        f"- Timing: median of {run.reps} repetitions, interleaved (for each repetition: for each "
        "variant, operation and implementation, one run; the implementations of a cell group "
        "start one further along in each repetition), all on this machine in one run.",
        "- Cells: median time, and in parentheses the ratio libzarr time / that implementation's "
        "time (below 1: libzarr is faster). raw-files and memcpy are measured on the "
        "uncompressed files and repeated in every table (their buffers are faulted in 4 KiB "
        "pages; libzarr asks for huge pages for whole-array buffers); codec on its own variant.",
        f"- Noisiest cell, (max − min) / median: {spread(run)}. {contention_text(run)}", "",
        "## Implementations", "", implementations_table(run), "",
        "## Results", "", tables, "",
        "## Peak memory (MiB)", "",
        "The most memory the worker held during the call (VmHWM, reset through "
        "/proc/self/clear_refs before each call) beyond what it held just before the call, the "
        "most over the timed runs: output buffers (a whole-array read's is 256 MiB; "
        "read_chunks_threads has 8 chunk-sized ones) and the implementation's working memory "
        "(a cache an operation's array opens is included; memory freed earlier but kept by the "
        "allocator is in the baseline, and may be reused by the call without showing).", "",
        memory_tables(run), "",
        f"![ratios of libzarr's time to each peer's]({files['plot']})", "",
        "## Array sizes on disk (MiB)", "", sizes_table(run), "",
        *bytes_read_section(run),
    ])


def plot(run, path):
    """One panel per variant: for each operation, a bar per peer from 1 to libzarr/peer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    by_key, variants = cells(run)
    ops = list(dict.fromkeys(t.op for t in run.tasks))
    peers = [i for i in run.impls if i != "libzarr"]
    cols = min(len(variants), 3)
    rows = -(-len(variants) // cols)
    ncol = min(len(peers), 3 * cols)  # the legend's columns: as many as fit under the panels
    legend_rows = -(-len(peers) // ncol) if peers else 1
    height = 4.4 * rows + 0.25 + 0.25 * legend_rows
    fig, axes = plt.subplots(rows, cols, figsize=(5.5 * cols, height), sharey=True,
                             squeeze=False)
    width = 0.8 / max(len(peers), 1)
    for ax in axes.flat[len(variants):]:
        ax.set_visible(False)
    for ax, variant in zip(axes.flat, variants):
        for k, peer in enumerate(peers):
            offset = (k - (len(peers) - 1) / 2) * width
            bars = [(x + offset, r) for x, op in enumerate(ops)
                    if (r := ratio(by_key, variant, op, peer)) is not None]
            xs, ys = [x for x, _ in bars], [r for _, r in bars]
            # tab10's colours, or tab20's when there are more peers (no two alike)
            color = f"C{k}" if len(peers) <= 10 else plt.get_cmap("tab20")(k)
            ax.bar(xs, [y - 1 for y in ys], width, bottom=1, label=peer, color=color)
            for x, y in zip(xs, ys):
                ax.annotate(f"{y:.2f}", (x, y), ha="center", va="bottom" if y >= 1 else "top",
                            fontsize=6, rotation=90, xytext=(0, 2 if y >= 1 else -2),
                            textcoords="offset points")
        ax.axhline(1, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(range(len(ops)), ops, rotation=30, ha="right")
        ax.set_title(variant)
        ax.grid(axis="y", which="major", alpha=0.3)
    ratios = [r for v in variants for op in ops for p in peers if (r := ratio(by_key, v, op, p))]
    if ratios:
        axes[0][0].set_ylim(min(min(ratios), 1) / 1.6, max(max(ratios), 1) * 1.6)
    for row in axes:
        row[0].set_ylabel("libzarr time / peer time  (below 1: libzarr faster)")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=ncol,
               fontsize="small")
    fig.suptitle(f"libzarr vs peers, 512³ <u2, chunks (shards) 128³ (rectilinear: 128³ on "
                 f"average): medians of {run.reps} repetitions")
    fig.tight_layout(rect=(0, (0.1 + 0.25 * legend_rows) / height, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def output_files(name):
    """The report's files: NAME.md, its samples and its chart (the full run's keep their names,
    raw.json and ratios.png)."""
    if name == DEFAULT_NAME:
        return {"markdown": f"{name}.md", "raw": "raw.json", "plot": "ratios.png"}
    return {"markdown": f"{name}.md", "raw": f"{name}.raw.json", "plot": f"{name}.png"}


def write(run, directory: Path, name=DEFAULT_NAME, command=None):
    directory.mkdir(parents=True, exist_ok=True)
    files = output_files(name)
    raw = [{"variant": t.variant, "op": t.op, "impl": t.impl, "seconds": t.samples,
            "peak_bytes": t.peaks, "note": t.note} for t in run.tasks]
    (directory / files["raw"]).write_text(json.dumps(
        {"implementations": run.hellos, "tasks": raw, "bytes_read": run.bytes_read}, indent=1))
    tables = results_tables(run)
    print("\n" + implementations_table(run) + "\n\n" + tables)
    print("\nPeak memory (MiB)\n\n" + memory_tables(run))
    print("\n".join(["", *bytes_read_section(run)]))
    print(f"\nwhole run: {run.seconds / 60:.1f} min; noisiest cell: {spread(run)}\n{contention_text(run)}")
    (directory / files["markdown"]).write_text(markdown(run, tables, name, command))
    plot(run, directory / files["plot"])
    print(f"wrote {directory / files['markdown']}, {files['raw']} and {files['plot']}")
