"""The benchmark's input: one 512³ <u2 array, written once by zarr-python 3 in six variants
(three Zarr v2, three Zarr v3: one sharded, one on a rectilinear chunk grid), plus the
selections every implementation reads and their expected checksums.

`python data.py write ROOT VARIANT` writes one variant into the data directory ROOT from its
`source.u16` (how the driver has the newest zarr-python write the rectilinear variant)."""

import itertools
import json
import os
import shutil
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SHAPE = (512, 512, 512)
CHUNKS = (128, 128, 128)  # the chunk grid's chunks: for the sharded variant, the shards
INNER_CHUNKS = (32, 32, 32)  # the sharded variant's inner chunks
INNER_PER_SHARD = int(np.prod(CHUNKS) // np.prod(INNER_CHUNKS))  # 64: each index has 64 entries
# The rectilinear variant's chunk lengths per dimension (zarr-extensions' `rectilinear` grid,
# `inline` kind: a bare length repeated, or a list of lengths and [length, repeat] runs): four
# unequal chunks along each dimension, averaging 128, so 64 chunks of 128³ elements on average,
# as the regular variant's, from 100 × 212 × 96 to 212 × 100 × 160 elements.
RECTILINEAR = [[[100, 3], 212], [212, [100, 3]], [[96, 2], [160, 2]]]
DTYPE = "<u2"
BENCH = Path(__file__).resolve().parent
# The interpreter of the newest zarr-python 3 (3.2 and later read and write rectilinear grids; 3.4
# needs Python 3.12 or later): `.venv/bench-newest` (requirements-newest.txt), which
# scripts/bench.sh makes. It writes the rectilinear variant and runs the `zarr-python-newest`
# worker; everything else runs in the bench environment's zarr-python (3.1).
NEWEST_PYTHON = Path(os.environ.get("BENCH_NEWEST_PYTHON",
                                    BENCH.parent / ".venv" / "bench-newest" / "bin" / "python"))


def zarray(compressor):
    """A v2 `.zarray` document with this compressor (a numcodecs configuration or None)."""
    return {"zarr_format": 2, "shape": list(SHAPE), "chunks": list(CHUNKS), "dtype": DTYPE,
            "compressor": compressor, "fill_value": 0, "order": "C", "filters": None,
            "dimension_separator": "."}


def zarr_json(codecs, chunk_grid=None):
    """A v3 `zarr.json` array document with this codec chain (default chunk keys, "/") on this
    chunk grid (by default the regular one of CHUNKS)."""
    chunk_grid = chunk_grid or {"name": "regular", "configuration": {"chunk_shape": list(CHUNKS)}}
    return {"zarr_format": 3, "node_type": "array", "shape": list(SHAPE), "data_type": "uint16",
            "chunk_grid": chunk_grid,
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0, "codecs": codecs, "attributes": {}}


BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
SHARDING = {"name": "sharding_indexed", "configuration": {
    "chunk_shape": list(INNER_CHUNKS), "codecs": [BYTES, ZSTD],
    "index_codecs": [BYTES, {"name": "crc32c"}], "index_location": "end"}}


def axis_lengths(spec, extent):
    """The chunk lengths along one dimension of `extent` elements from a rectilinear grid's
    `chunk_shapes` entry: a bare length repeated to cover it (the last chunk running past the
    end, as a regular grid's), or a list of lengths and [length, repeat] runs."""
    if isinstance(spec, int):
        return [spec] * -(-extent // spec)
    lengths = []
    for item in spec:
        lengths += [item[0]] * item[1] if isinstance(item, list) else [item]
    if sum(lengths) < extent:
        raise ValueError(f"chunk lengths {spec} do not cover {extent} elements")
    return lengths


def grid_lengths(metadata):
    """The chunk lengths along each dimension of the chunk grid of a `.zarray` or `zarr.json`
    document (a regular one's, or a rectilinear one's expanded)."""
    if metadata["zarr_format"] == 2:
        return [axis_lengths(c, n) for c, n in zip(metadata["chunks"], metadata["shape"])]
    grid = metadata["chunk_grid"]
    if grid["name"] == "regular":
        chunks = grid["configuration"]["chunk_shape"]
    elif grid["name"] == "rectilinear" and grid["configuration"]["kind"] == "inline":
        chunks = grid["configuration"]["chunk_shapes"]
    else:
        raise ValueError(f"unknown chunk grid {grid}")
    return [axis_lengths(c, n) for c, n in zip(chunks, metadata["shape"])]


@dataclass(frozen=True)
class Variant:
    title: str  # what the report says it is
    metadata: dict  # the `.zarray` or `zarr.json` document: the input's, and what writers get
    newest: bool = False  # written (and read by zarr-python) only by the newest zarr-python

    @property
    def sharded(self):
        return self.metadata.get("codecs", [{}])[0].get("name") == "sharding_indexed"

    @property
    def rectilinear(self):
        return self.metadata.get("chunk_grid", {}).get("name") == "rectilinear"

    def read_units(self):
        """The boxes a chunk-by-chunk read visits, in C order of their grid: each chunk, clipped
        to the shape (the inner chunks of a sharded array), as (starts, counts)."""
        if self.sharded:
            lengths = [axis_lengths(i, n) for i, n in zip(INNER_CHUNKS, SHAPE)]
        else:
            lengths = grid_lengths(self.metadata)
        spans = []  # per dimension: (start, count) of each chunk
        for axis, n in zip(lengths, SHAPE):
            ends = np.cumsum([0] + axis)
            spans.append([(int(a), int(min(b, n) - a)) for a, b in zip(ends[:-1], ends[1:]) if a < n])
        boxes = list(itertools.product(*spans))
        return [[s for s, _ in b] for b in boxes], [[c for _, c in b] for b in boxes]


VARIANTS = {
    "none": Variant("Zarr v2, no compressor", zarray(None)),
    "zstd": Variant("Zarr v2, zstd level 1", zarray({"id": "zstd", "level": 1})),
    "blosc-lz4": Variant("Zarr v2, blosc lz4 clevel 5, byte shuffle", zarray(
        {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0})),
    "v3-zstd": Variant("Zarr v3, codecs bytes (little endian) + zstd level 1", zarr_json([BYTES, ZSTD])),
    "v3-shard-zstd": Variant(
        "Zarr v3, shards 128³ of 32³ inner chunks (sharding_indexed: bytes + zstd level 1; "
        "index bytes + crc32c, at the end)", zarr_json([SHARDING])),
    "v3-rectilinear-zstd": Variant(
        "Zarr v3, rectilinear chunk grid (zarr-extensions; chunk_shapes "
        f"{json.dumps(RECTILINEAR)}: 4 × 4 × 4 chunks of unequal lengths, 128³ elements on "
        "average), codecs bytes + zstd level 1",
        zarr_json([BYTES, ZSTD], {"name": "rectilinear", "configuration": {
            "kind": "inline", "chunk_shapes": RECTILINEAR}}), newest=True),
}
SHARDED = "v3-shard-zstd"  # the variant whose bytes read are measured
DATA_SEED = 0
BOX_SEED = 42
BOX_COUNT = 100
BOX_SIZE = 64
STRIDE = 3  # the strided read takes [0:512:3, 0:512:3, 0:512:3]
BYTES_BOX = (150, 200, 300)  # the unaligned box whose bytes read are measured: 2 shards
DESCRIPTION = ("a ball of radius 230 holding a smooth field (sums of sines, ~16000..24000) "
               "plus 5 bits of uniform noise, on a background of 100 plus 2 bits of noise "
               f"(NumPy seed {DATA_SEED})")


def write_with_zarr_python(path, metadata, values):
    """Stores `metadata` (a `.zarray` or `zarr.json` document) at `path` (a directory, or a
    writable zarr-python store), then writes all of `values` through `zarr.open_array`: one
    writer for every variant and both formats."""
    import zarr

    name = "zarr.json" if metadata["zarr_format"] == 3 else ".zarray"
    if isinstance(path, (str, Path)):
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(json.dumps(metadata))
        path = str(path)
    else:  # a store: the document set through zarr-python's store API
        from zarr.core.buffer import default_buffer_prototype
        from zarr.core.sync import sync

        buffer = default_buffer_prototype().buffer.from_bytes(json.dumps(metadata).encode())
        sync(path.set(name, buffer))
    # zarr-python 3.2 and later open rectilinear grids only when this (experimental) option is
    # on; earlier versions ignore it and fail on the grid.
    with zarr.config.set({"array.rectilinear_chunks": True}):
        zarr.open_array(path, mode="r+")[...] = values


def values():
    """The array's values, generated plane by plane to keep the float temporaries small."""
    rng = np.random.default_rng(DATA_SEED)
    out = np.empty(SHAPE, dtype=DTYPE)
    y = np.arange(SHAPE[1], dtype=np.float32)[:, None]
    x = np.arange(SHAPE[2], dtype=np.float32)[None, :]
    centre, radius = SHAPE[0] / 2, 230
    for z in range(SHAPE[0]):
        ball = (z - centre) ** 2 + (y - centre) ** 2 + (x - centre) ** 2 < radius ** 2
        field = 20000 + 2000 * np.sin(z / 100) * np.cos(y / 70) + 2000 * np.sin((x + z) / 130)
        noise = rng.integers(0, 32, SHAPE[1:], dtype=np.uint16)
        out[z] = np.where(ball, field + noise, 100 + noise % 4)
    return out


class Data:
    """The data directory: `source.u16` (raw values, C order) and `<variant>.zarr`."""

    def __init__(self, root: Path):
        self.root = root
        self.source = root / "source.u16"

    def array(self, variant):
        return self.root / f"{variant}.zarr"

    def output(self, impl, variant):
        return self.root / "out" / f"{impl}-{variant}.zarr"

    def stamp(self):
        """What the data directory holds: the array, each variant's document, its writer
        (`writer`; `writers` names those the newest zarr-python writes)."""
        import zarr

        newest = [name for name, v in VARIANTS.items() if v.newest]
        return {"shape": SHAPE, "dtype": DTYPE, "seed": DATA_SEED, "description": DESCRIPTION,
                "variants": {name: v.metadata for name, v in VARIANTS.items()},
                "writer": f"zarr-python {zarr.__version__}",
                "writers": {name: f"zarr-python {newest_zarr_version()}" for name in newest}}

    def ensure(self):
        """Writes the data unless an identical set is already there (only the variants whose
        document or writer changed when the values are the same); returns the stamp."""
        stamp_file, stamp = self.root / "stamp.json", json.loads(json.dumps(self.stamp()))
        old = json.loads(stamp_file.read_text()) if stamp_file.exists() else {}
        if old == stamp:
            return stamp
        common = ("shape", "dtype", "seed", "description", "writer")
        if self.source.exists() and all(old.get(k) == stamp[k] for k in common):
            stale = [name for name in VARIANTS
                     if old["variants"].get(name) != stamp["variants"][name]
                     or old.get("writers", {}).get(name) != stamp["writers"].get(name)]
            data = None
        else:
            print(f"writing the benchmark data to {self.root} (once)", flush=True)
            shutil.rmtree(self.root, ignore_errors=True)
            self.root.mkdir(parents=True)
            stale, data = list(VARIANTS), values()
            data.tofile(self.source)
        for name in stale:
            print(f"writing {self.array(name)} ({stamp['writers'].get(name, stamp['writer'])})",
                  flush=True)
            shutil.rmtree(self.array(name), ignore_errors=True)
            if VARIANTS[name].newest:
                subprocess.run([str(NEWEST_PYTHON), __file__, "write", str(self.root), name], check=True)
            else:
                data = self.load() if data is None else data
                write_with_zarr_python(self.array(name), VARIANTS[name].metadata, data)
        stamp_file.write_text(json.dumps(stamp))
        return stamp

    def load(self):
        return np.fromfile(self.source, dtype=DTYPE).reshape(SHAPE)


def newest_zarr_version():
    """The version of the newest zarr-python (NEWEST_PYTHON's)."""
    if not NEWEST_PYTHON.exists():
        sys.exit(f"error: {NEWEST_PYTHON} is missing: the newest zarr-python 3 writes and reads the "
                 "rectilinear variant (scripts/bench.sh makes it; or set BENCH_NEWEST_PYTHON)")
    return subprocess.run([str(NEWEST_PYTHON), "-c", "import zarr; print(zarr.__version__)"],
                          check=True, capture_output=True, text=True).stdout.strip()


def box_starts():
    """The random unaligned boxes' origins (seeded; identical for every implementation)."""
    rng = np.random.default_rng(BOX_SEED)
    starts = rng.integers(0, np.array(SHAPE) - BOX_SIZE + 1, size=(BOX_COUNT, len(SHAPE)))
    return starts.tolist()


def crc(arrays):
    """CRC-32 of the C-order bytes of each array in turn (what the workers' sinks compute)."""
    value = 0
    for a in arrays:
        value = zlib.crc32(memoryview(np.ascontiguousarray(a)).cast("B"), value)
    return value


def boxes_of(data, starts, sizes):
    """The boxes at `starts`, of the one shape `sizes` or (a list of shapes) each its own."""
    if not isinstance(sizes[0], (list, tuple)):
        sizes = [sizes] * len(starts)
    return (data[tuple(slice(s, s + c) for s, c in zip(start, size))]
            for start, size in zip(starts, sizes))


def least_read(array, start, size):
    """What reading the box at `start` (`size` along every dimension) from the sharded array
    at `array` needs at least: the index of every shard it touches and the stored inner chunks
    it touches, from those indexes. A dict of counts and byte totals; `shard_files` is the
    size of those shards' files (what reading them whole would cost)."""
    inner_per_shard = [s // i for s, i in zip(CHUNKS, INNER_CHUNKS)]
    index_size = INNER_PER_SHARD * 16 + 4  # (offset, nbytes) u64 pairs, then a CRC32C
    end = [s + size for s in start]
    spans = [range(s // c, (e - 1) // c + 1) for s, e, c in zip(start, end, CHUNKS)]
    out = {"shards": 0, "index_bytes": 0, "inner_chunks": 0, "chunk_bytes": 0, "shard_files": 0}
    for shard in itertools.product(*spans):
        path = Path(array, "c", *map(str, shard))
        out["shard_files"] += path.stat().st_size
        with open(path, "rb") as f:
            f.seek(-index_size, 2)
            index = np.frombuffer(f.read(index_size)[:-4], "<u8").reshape(*inner_per_shard, 2)
        out["shards"] += 1
        out["index_bytes"] += index_size
        origin = [s * c for s, c in zip(shard, CHUNKS)]
        inner = [range((max(s, o) - o) // i, (min(e, o + c) - 1 - o) // i + 1)
                 for s, e, o, c, i in zip(start, end, origin, CHUNKS, INNER_CHUNKS)]
        for chunk in itertools.product(*inner):
            nbytes = int(index[chunk][1])
            if nbytes != 2**64 - 1:  # stored (an absent chunk is all fill value, never read)
                out["inner_chunks"] += 1
                out["chunk_bytes"] += nbytes
    return out


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "write" or sys.argv[3] not in VARIANTS:
        sys.exit(f"usage: data.py write ROOT {'|'.join(VARIANTS)}")
    data = Data(Path(sys.argv[2]))
    write_with_zarr_python(data.array(sys.argv[3]), VARIANTS[sys.argv[3]].metadata, data.load())
