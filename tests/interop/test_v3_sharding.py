"""Sharding (sharding_indexed) against zarr-python 3, both directions:

* libzarr reads zarr-python's sharded arrays (index at the start or the end, with and without crc32c, crc32
  or adler32 after it, several inner codecs, nested sharding, strings) whole, in boxes aligned to the inner chunks and not, element by
  element and through the strided and point selections;
* libzarr writes sharded arrays: whole shards, partial shards (unaligned boxes merged into what is there),
  and writes that leave inner chunks holding only the fill value. Those must not be stored: their index
  entries are all ones (2**64 - 1, both offset and length) and a shard left entirely empty is not stored at
  all (a shard that had data and is overwritten with the fill value is deleted). zarr-python reads the result;
* threads writing disjoint regions of shared shards (and of shared inner chunks) through libzarr lose
  nothing, through one handle or through one handle each;
* raw_bytes and structured arrays, which zarr-python 3.1.6 cannot shard ("unhashable type: 'writeable
  void-scalar'"), with shards made and taken apart by hand from the spec; zarr-python 3.4 shards them, and
  then each side reads the other's.
"""
import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("Zarr v3 needs zarr-python 3", allow_module_level=True)

import numpy as np  # noqa: E402

# zarr-python's warnings about numcodecs codecs, consolidated metadata and data types without a v3 spec
pytestmark = [pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning"),
              pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")]
pytest.register_assert_rewrite("v3cases")
import libzarr  # noqa: E402
from zpy import ZARR_VERSION  # noqa: E402
from v3cases import (DEFAULT_KEY_ENCODING, DTYPE, EMPTY, V3Case, assert_same, box_slices, check_shards,  # noqa: E402
                     chunk_files, random_box, read_all, shard_index, write_box)

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}
NC_CRC32 = {"name": "numcodecs.crc32", "configuration": {}}
NC_ADLER32_END = {"name": "numcodecs.adler32", "configuration": {"location": "end"}}


def sharding(inner, codecs, index_codecs=(LE, CRC), location="end"):
    return {"name": "sharding_indexed", "configuration": {"chunk_shape": list(inner), "codecs": list(codecs),
                                                           "index_codecs": list(index_codecs),
                                                           "index_location": location}}


ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": True}}
GZIP = {"name": "gzip", "configuration": {"level": 5}}
BLOSC4 = {"name": "blosc", "configuration": {"typesize": 4, "cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                             "blocksize": 0}}
T10 = {"name": "transpose", "configuration": {"order": [1, 0]}}
VLEN = {"name": "vlen-utf8", "configuration": {}}

# label: (dtype label, fill value, shape, shard shape, codecs)
CONFIGS = {
    "f4-start-crc-zstd": ("float32", "NaN", (37, 29), (12, 10), [sharding((4, 5), [LE, ZSTD], location="start")]),
    "i2-end-nocrc-gzip-be": ("int16", -3, (30, 17), (10, 17), [sharding((5, 1), [BE, GZIP], (LE,))]),
    "u4-end-blosc-transposed-inner": ("uint32", 7, (25, 26), (10, 12), [sharding((5, 4), [T10, LE, BLOSC4])]),
    "f8-3d-start-crc32c-inner": ("float64", "-Infinity", (9, 10, 7), (4, 6, 7),
                                 [sharding((2, 3, 7), [LE, CRC], location="start")]),
    "u1-1d-one-inner-chunk": ("uint8", 200, (50,), (16,), [sharding((16,), [{"name": "bytes"}])]),
    "c8-nested": ("complex64", [1.0, -2.0], (26, 21), (12, 10),
                  [sharding((6, 10), [sharding((3, 5), [LE, ZSTD], location="start")])]),
    "M8-nested-end": ("M8[s]", "NaT", (20, 9), (8, 9), [sharding((4, 9), [sharding((2, 3), [BE])], (LE,))]),
    "string": ("string", "-", (19, 11), (8, 6), [sharding((4, 3), [VLEN, ZSTD])]),
    # The other checksums zarr-python writes after an index: numcodecs' CRC32 (its 4 bytes before the
    # index by default) and Adler32 (after it, as asked).
    "i4-end-crc32-index": ("int32", -1, (21, 13), (8, 6), [sharding((4, 3), [LE, ZSTD], (LE, NC_CRC32))]),
    "u2-start-adler32-index": ("uint16", 9, (17, 20), (6, 10),
                               [sharding((3, 5), [LE], (BE, NC_ADLER32_END), location="start")]),
}


def make_case(label, seed=0):
    dtype, fill, shape, shard, codecs = CONFIGS[label]
    return V3Case(0, DTYPE[dtype], shape, shard, json.loads(json.dumps(codecs)), DEFAULT_KEY_ENCODING, fill,
                  seed=1000 + seed, skip=1, empty_chunk=(1,) + (0,) * (len(shape) - 1))


def aligned_boxes(case, rng, n=6):
    """Boxes made of whole inner chunks (clipped at the array's edge), some crossing shard boundaries."""
    inner = case.inner_chunks
    grid = [-(-s // c) for s, c in zip(case.shape, inner)]
    for _ in range(n):
        lo = [int(rng.integers(0, g)) for g in grid]
        hi = [int(rng.integers(l + 1, g + 1)) for l, g in zip(lo, grid)]
        start = tuple(l * c for l, c in zip(lo, inner))
        yield start, tuple(min(h * c, s) - o for h, c, s, o in zip(hi, inner, case.shape, start))


def unaligned_boxes(case, rng, n=8):
    for _ in range(n):
        yield random_box(case.shape, rng)


# ---------------------------------------------------------------- zarr-python writes, libzarr reads
@pytest.mark.parametrize("label", CONFIGS)
def test_libzarr_reads_zarr_python_shards(tmp_path, label):
    case = make_case(label)
    data, expected = case.data()
    z = case.zpy_create(tmp_path, config={"write_empty_chunks": False})
    for unit in case.units():
        if not case.untouched(unit):
            r = case.region(unit, case.inner_chunks)
            z[r] = data[r]
    assert case.key(case.empty_chunk) not in chunk_files(tmp_path), "the untouched shard is not stored"
    rng = np.random.default_rng(7)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        assert arr.chunks == case.chunks and arr.inner_chunks == case.inner_chunks
        assert_same(read_all(arr, case), expected, "whole")
        for kind, boxes in [("aligned", aligned_boxes(case, rng)), ("unaligned", unaligned_boxes(case, rng))]:
            for start, count in boxes:
                assert_same(read_all(arr, case, start, count), expected[box_slices(start, count)],
                            f"{kind} box {start} {count}")
        for idx in itertools.islice(np.ndindex(*case.shape), 0, None, 37):  # single elements
            assert_same(read_all(arr, case, idx, (1,) * len(idx)), expected[box_slices(idx, (1,) * len(idx))])


@pytest.mark.parametrize("label", [k for k, v in CONFIGS.items() if v[0] != "string"])
def test_selections_of_zarr_python_shards(tmp_path, label):
    """The strided, orthogonal and point selections of sharded arrays."""
    case = make_case(label, seed=2)
    data, expected = case.data()
    z = case.zpy_create(tmp_path)
    for unit in case.units():
        if not case.untouched(unit):
            r = case.region(unit, case.inner_chunks)
            z[r] = data[r]
    rng = np.random.default_rng(8)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        step = (2,) + (3,) * (len(case.shape) - 1)
        count = tuple(-(-s // k) for s, k in zip(case.shape, step))
        got = arr.read_strided((0,) * len(case.shape), count, step)
        assert_same(got, expected[tuple(slice(None, None, k) for k in step)], "strided")
        picks = [np.sort(rng.choice(s, min(s, 5), replace=False)) for s in case.shape]
        assert_same(arr.read_orthogonal(picks), expected[np.ix_(*picks)], "orthogonal")
        coords = np.stack([rng.integers(0, s, 25) for s in case.shape], axis=1)
        assert_same(arr.read_points(coords), expected[tuple(coords.T)], "points")


# ---------------------------------------------------------------- libzarr writes, zarr-python reads
def fill_block(case, shape):
    out = np.empty(shape, case.native)
    out[...] = case.fill_array()
    return out


def check_against_zarr_python(case, root, model):
    assert chunk_files(root) == case.expected_keys(model), "stored shards: exactly those not all fill"
    check_shards(case, root, model)
    z = zarr.open_array(str(root), mode="r")
    out = np.asarray(z[...])
    if case.dtype.kind == "T":
        out = np.array([str(v) for v in out.reshape(-1)], dtype=object).reshape(out.shape)
    assert_same(out, model, "zarr-python reads what libzarr wrote")


@pytest.mark.parametrize("label", CONFIGS)
def test_zarr_python_reads_libzarr_shards(tmp_path, label):
    case = make_case(label, seed=1)
    rng = np.random.default_rng(11)
    model = fill_block(case, case.shape)
    root = tmp_path / "arr"
    ndim = len(case.shape)
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("arr", case.request()) as arr:
        assert arr.chunks == case.chunks and arr.inner_chunks == case.inner_chunks

        def write(start, values):
            write_box(arr, case, values, start)
            model[box_slices(start, values.shape)] = values
            assert_same(read_all(arr, case), model, f"libzarr reads back the write at {start}")
            check_against_zarr_python(case, root, model)

        # a whole shard, and the shard after it in the last dimension
        shard = tuple(min(c, s) for c, s in zip(case.chunks, case.shape))
        write((0,) * ndim, case.values(rng)[box_slices((0,) * ndim, shard)])
        entries = shard_index((root / case.key((0,) * ndim)).read_bytes(), case.levels[0],
                              math.prod(case.chunks) // math.prod(case.levels[0].config_chunks))
        assert not (entries == EMPTY).all(axis=1).any(), "a whole-shard write of data stores every inner chunk"
        # partial writes: unaligned boxes merged into what is there
        for start, count in itertools.islice(unaligned_boxes(case, rng), 5):
            write(start, case.values(rng)[box_slices(start, count)])
        # the fill value into one inner chunk (of the outer level) that has data: its index entry empties
        write((0,) * ndim, fill_block(case, case.levels[0].chunks))
        first = case.key((0,) * ndim)
        if first in case.expected_keys(model):  # (else it was the shard's only inner chunk with data: deleted)
            entries = shard_index((root / first).read_bytes(), case.levels[0],
                                  math.prod(case.chunks) // math.prod(case.levels[0].config_chunks))
            assert (entries[0] == EMPTY).all(), "the first inner chunk holds only the fill value"
        # the fill value over a whole shard that has data: the shard is deleted
        write((0,) * ndim, fill_block(case, shard))
        assert case.key((0,) * ndim) not in chunk_files(root)
        # data and then the fill value into a shard never stored: it stays absent
        last = tuple(-(-s // c) - 1 for s, c in zip(case.shape, case.chunks))
        lo = tuple(i * c for i, c in zip(last, case.chunks))
        box = tuple(s - o for s, o in zip(case.shape, lo))
        write(lo, case.values(rng)[box_slices(lo, box)])
        assert case.key(last) in chunk_files(root)
        write(lo, fill_block(case, box))
        assert case.key(last) not in chunk_files(root)
        # writes that leave some inner chunks of a shard at the fill value
        data, expected = case.data()
        write((0,) * ndim, expected)
    check_against_zarr_python(case, root, model)


# ---------------------------------------------------------------- threads
SHAPE, SHARD, INNER = (48, 60), (16, 20), (4, 5)
NTHREADS = 4
CHILD_SECONDS = 60  # the writes take well under a second; more means a deadlock
# The threads run in a child process, so that a deadlock fails this test (the child is killed) instead of
# leaving threads blocked inside libzarr for the rest of the run.
WORKER = r"""
import sys, threading
import numpy as np
import libzarr

root, handles, r = sys.argv[1], sys.argv[2], int(sys.argv[3])
shape, nthreads = tuple(int(n) for n in sys.argv[4].split(",")), int(sys.argv[5])
model = np.random.default_rng(r).integers(0, 2**31 - 1, shape, dtype=np.int32)
errors = []
with libzarr.open_store(root, "a") as store, store.open_array("") as shared:
    def work(t, axis):
        try:
            own_store = own = None
            if handles == "one-each":
                own_store = libzarr.open_store(root, "a")
                own = own_store.open_array("")
            target = own or shared
            lines = [i for i in range(shape[axis]) if i % nthreads == t]
            for i in np.random.default_rng(100 * r + t).permutation(lines):
                if axis == 0:
                    target.write(model[i:i + 1, :] + axis, (int(i), 0))
                else:
                    target.write(model[:, i:i + 1] + axis, (0, int(i)))
            if own is not None:
                own.close()
                own_store.close()
        except Exception as e:
            errors.append(repr(e))

    for axis in (0, 1):
        threads = [threading.Thread(target=work, args=(t, axis)) for t in range(nthreads)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        if errors:
            sys.exit(f"axis {axis}: {errors}")
        lost = shared.read() != model + axis
        if lost.any():
            sys.exit(f"after the writes along axis {axis}: {lost.sum()} of {lost.size} values lost, "
                     f"first at {tuple(int(i) for i in np.argwhere(lost)[0])}")
"""


def threaded_case():
    return V3Case(0, DTYPE["int32"], SHAPE, SHARD, [sharding(INNER, [LE, ZSTD])], DEFAULT_KEY_ENCODING, -1)


@pytest.mark.parametrize("handles", ["shared", "one-each"])
def test_concurrent_partial_writes(tmp_path, handles, rounds=3):
    """Four threads write single rows (unaligned to the 4-row inner chunks, so every inner chunk and every
    shard is shared by all of them) in a random order; then single columns. Nothing may be lost."""
    case = threaded_case()
    for r in range(rounds):
        root = tmp_path / f"round{r}"
        with libzarr.open_store(root, "a") as store:
            store.create_array("", case.request()).close()
        args = [sys.executable, "-c", WORKER, str(root), handles, str(r), ",".join(map(str, SHAPE)), str(NTHREADS)]
        try:
            done = subprocess.run(args, cwd=Path(__file__).parent, capture_output=True, text=True,
                                  timeout=CHILD_SECONDS, env=dict(os.environ, LIBZARR_PATH=libzarr.LIB_PATH))
        except subprocess.TimeoutExpired:
            pytest.fail(f"round {r}: the writing threads did not finish in {CHILD_SECONDS} s (deadlock?)",
                        pytrace=False)
        assert done.returncode == 0, f"round {r}: {done.stderr.strip()[-2000:]}"
        model = np.random.default_rng(r).integers(0, 2**31 - 1, SHAPE, dtype=np.int32)
        with libzarr.open_store(root, "r") as store, store.open_array("") as arr:
            assert_same(arr.read(), model + 1, f"round {r}")
        check_against_zarr_python(case, root, model + 1)


# ---------------------------------------------------------------- raw_bytes and structured, by hand
def encode_shard(case, block, location="end"):
    """A shard of `block` (the shard's values, full size) made from the spec: each inner chunk through the
    plain bytes codec (C order; inner chunks holding only the fill value left out), in reverse order, and an
    index of (offset, nbytes) little-endian uint64 pairs followed by its crc32c."""
    import google_crc32c

    inner = case.inner_chunks
    per = [s // c for s, c in zip(block.shape, inner)]
    fill = case.fill_array()
    chunks = []
    index = np.full((math.prod(per), 2), EMPTY, "<u8")
    for k, idx in enumerate(itertools.product(*(range(p) for p in per))):
        part = block[tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, inner))]
        if not (np.ascontiguousarray(part).tobytes() == fill.tobytes() * part.size):
            chunks.append((k, np.ascontiguousarray(part).tobytes()))
    body = b""
    base = 16 * len(index) + 4 if location == "start" else 0
    for k, raw in reversed(chunks):
        index[k] = (base + len(body), len(raw))
        body += raw
    idx = index.tobytes()
    idx += google_crc32c.value(idx).to_bytes(4, "little")
    return idx + body if location == "start" else body + idx


def decode_shard(case, raw, location="end"):
    """The shard's values, from its index and plain inner chunks (the inverse of encode_shard)."""
    level = case.levels[0]
    per = [s // c for s, c in zip(case.chunks, case.inner_chunks)]
    entries = shard_index(raw, level, math.prod(per))
    out = np.empty(case.chunks, case.dtype.np)
    out[...] = case.fill_array()
    for k, idx in enumerate(itertools.product(*(range(p) for p in per))):
        offset, nbytes = (int(x) for x in entries[k])
        if (offset, nbytes) == (EMPTY, EMPTY):
            continue
        part = np.frombuffer(raw[offset:offset + nbytes], case.dtype.np).reshape(case.inner_chunks)
        out[tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, case.inner_chunks))] = part
    return out


VOID_CASES = {"V6": ("V6", (10, 7), (4, 7), (2, 7)), "rec1": ("rec1", (9,), (4,), (2,)),
              "rec2": ("rec2", (5, 6), (2, 6), (1, 3))}


def void_case(label, location):
    dtype, shape, shard, inner = VOID_CASES[label]
    dt = DTYPE[dtype]
    return V3Case(0, dt, shape, shard, [sharding(inner, [{"name": "bytes"}], location=location)],
                  DEFAULT_KEY_ENCODING, dt.fills[0], seed=5, skip=0)


@pytest.mark.parametrize("location", ["start", "end"])
@pytest.mark.parametrize("label", VOID_CASES)
def test_libzarr_reads_hand_made_void_shards(tmp_path, label, location):
    case = void_case(label, location)
    _, expected = case.data()
    (tmp_path / "zarr.json").write_text(json.dumps(case.doc()))
    for idx in case.grid():
        block = case.padded_chunk(expected, idx)
        if not (np.ascontiguousarray(block).tobytes() == case.fill_array().tobytes() * block.size):
            path = tmp_path / case.key(idx)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(encode_shard(case, block, location))
    check_shards(case, tmp_path, expected)  # (the test's own shards follow the rules it checks)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        assert arr.inner_chunks == case.inner_chunks
        assert_same(arr.read(), expected)
        rng = np.random.default_rng(3)
        for start, count in unaligned_boxes(case, rng, 4):
            assert_same(arr.read(start, count), expected[box_slices(start, count)])


@pytest.mark.parametrize("location", ["start", "end"])
@pytest.mark.parametrize("label", VOID_CASES)
def test_hand_decoded_libzarr_void_shards(tmp_path, label, location):
    case = void_case(label, location)
    _, expected = case.data()
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("", case.request()) as arr:
        arr.write(expected)
        start, count = random_box(case.shape, np.random.default_rng(4))
        box = case.values(np.random.default_rng(5))[box_slices(start, count)]
        arr.write(box, start)
        expected[box_slices(start, count)] = box
    assert chunk_files(tmp_path) == case.expected_keys(expected)
    check_shards(case, tmp_path, expected)
    for idx in case.grid():
        path = tmp_path / case.key(idx)
        if path.exists():
            got = decode_shard(case, path.read_bytes(), location)
            assert_same(got, case.padded_chunk(expected, idx), f"shard {case.key(idx)}")


@pytest.mark.skipif(ZARR_VERSION < (3, 4), reason="zarr-python 3.1 cannot shard raw_bytes or structured arrays "
                    "(unhashable type: 'writeable void-scalar'); the hand-made shards above stand in for it")
@pytest.mark.parametrize("location", ["start", "end"])
@pytest.mark.parametrize("label", VOID_CASES)
def test_void_shards_both_ways(tmp_path, label, location):
    """zarr-python 3.4 shards raw_bytes and struct arrays: libzarr reads its shards and it reads libzarr's."""
    case = void_case(label, location)
    _, expected = case.data()
    z = case.zpy_create(tmp_path / "zpy")
    z[...] = expected
    with libzarr.open_store(tmp_path / "zpy", "r") as store, store.open_array("") as arr:
        assert_same(arr.read(), expected, "libzarr reads zarr-python's shards")
    with libzarr.open_store(tmp_path / "lz", "a") as store, store.create_array("", case.request()) as arr:
        arr.write(expected)
    assert_same(np.asarray(zarr.open_array(str(tmp_path / "lz"), mode="r")[...]), expected,
                "zarr-python reads libzarr's shards")
