"""The benchmark's input: one 512³ <u2 array, written once by zarr-python 3 in three Zarr v2
variants, plus the selections every implementation reads and their expected checksums."""

import itertools
import json
import shutil
import zlib
from pathlib import Path

import numpy as np

SHAPE = (512, 512, 512)
CHUNKS = (128, 128, 128)
DTYPE = "<u2"
VARIANTS = {
    "none": None,
    "zstd": {"id": "zstd", "level": 1},
    "blosc-lz4": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
}
DATA_SEED = 0
BOX_SEED = 42
BOX_COUNT = 100
BOX_SIZE = 64
STRIDE = 3  # the strided read takes [0:512:3, 0:512:3, 0:512:3]
DESCRIPTION = ("a ball of radius 230 holding a smooth field (sums of sines, ~16000..24000) "
               "plus 5 bits of uniform noise, on a background of 100 plus 2 bits of noise "
               f"(NumPy seed {DATA_SEED})")


def zarray(variant):
    """The `.zarray` document of a variant: what every implementation writes."""
    return {"zarr_format": 2, "shape": list(SHAPE), "chunks": list(CHUNKS), "dtype": DTYPE,
            "compressor": VARIANTS[variant], "fill_value": 0, "order": "C", "filters": None,
            "dimension_separator": "."}


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
        import zarr

        return {"shape": SHAPE, "chunks": CHUNKS, "dtype": DTYPE, "variants": VARIANTS,
                "seed": DATA_SEED, "description": DESCRIPTION, "writer": f"zarr-python {zarr.__version__}"}

    def ensure(self):
        """Writes the data unless an identical set is already there; returns the stamp."""
        import numcodecs
        import zarr

        stamp_file, stamp = self.root / "stamp.json", json.loads(json.dumps(self.stamp()))
        if stamp_file.exists() and json.loads(stamp_file.read_text()) == stamp:
            return stamp
        print(f"writing the benchmark data to {self.root} (once)", flush=True)
        shutil.rmtree(self.root, ignore_errors=True)
        self.root.mkdir(parents=True)
        data = values()
        data.tofile(self.source)
        for variant, compressor in VARIANTS.items():
            array = zarr.create_array(
                store=str(self.array(variant)), shape=SHAPE, chunks=CHUNKS, dtype=DTYPE,
                fill_value=0, zarr_format=2, filters=None,
                compressors=compressor and numcodecs.get_codec(compressor))
            array[...] = data
        stamp_file.write_text(json.dumps(stamp))
        return stamp

    def load(self):
        return np.fromfile(self.source, dtype=DTYPE).reshape(SHAPE)


def chunk_starts():
    """The origin of every chunk, in C order of the chunk grid."""
    return [list(s) for s in itertools.product(*(range(0, n, c) for n, c in zip(SHAPE, CHUNKS)))]


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


def boxes_of(data, starts, size):
    return (data[tuple(slice(s, s + size[d]) for d, s in enumerate(start))] for start in starts)
