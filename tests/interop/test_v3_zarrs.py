"""Zarr v3 against zarrs, the Rust implementation, through its Python package `zarrs` (0.2.3, a codec pipeline for
zarr-python 3), both directions: zarrs reads what libzarr writes, and libzarr reads what zarr-python writes
with the zarrs pipeline. Covered: bool, int8..uint64, float16/32/64, complex64/128; `bytes` little and big
endian; zstd, gzip, blosc, crc32c, transpose; sharding with the index at the start or the end, with and without
crc32c, nested, after a transpose, followed by gzip, with shards and inner chunks that do not divide the array
(partial edge shards); the four chunk key encodings; fill values (missing chunks, "0x..." bit patterns);
documents libzarr completes; partial writes into shards by libzarr, then by zarrs over libzarr's shards; and
the numcodecs.* codecs libzarr has.

What zarrs-python 0.2.3 does (read from its source, `zarrs/pipeline.py`, and its README):
* `codec_pipeline.path = "zarrs.ZarrsCodecPipeline"` replaces zarr-python's whole codec pipeline (sharding
  included) with zarrs' Rust one, but only when zarrs accepts the array: by default it silently falls back to
  zarr-python's own `BatchedCodecPipeline` (a `UserWarning` when zarrs rejects the metadata, e.g. a codec it
  does not have; nothing at all for the data types it leaves out: numpy kinds V, S, U, M, m, O and T, i.e. raw
  bytes, records, strings and datetimes; and for some fancy indexing). `codec_pipeline.strict = True` raises
  instead (`UnsupportedMetadataError`, `UnsupportedDataTypeError`, ...) and leaves the pipeline without a
  fallback (`python_impl is None`). Every zarrs step here runs under strict mode (set with `zarr.config.set` as
  a context manager, so nothing leaks into other modules) and checks that the array's pipeline is zarrs' with no
  fallback; `test_strict_has_no_fallback` checks that strict mode does raise for a data type zarrs leaves to
  zarr-python. So only numbers and bool are covered.
* zarrs is given zarr-python's re-serialisation of the metadata (`json.dumps(metadata.to_dict())`), not the
  stored zarr.json (zarr-python writes every NaN fill as "NaN": a "0x..." payload never reaches zarrs that
  way), and the zarr.json of the arrays "zarrs writes" is zarr-python's: only the chunks are zarrs'. So the
  libzarr -> zarrs tests also read every chunk through zarrs' Rust pipeline alone
  (`zarrs._internal.CodecPipelineImpl`, given the zarr.json libzarr wrote byte for byte, with chunk keys
  computed here), without zarr-python in between: the fill values' bits are compared there.
* `codec_pipeline.validate_checksums` (default True) makes zarrs check crc32c (and zstd checksums):
  `test_zarrs_checks_crc32c` flips a byte of a libzarr chunk and zarrs must refuse it.

zarrs 0.2.3 has none of numcodecs.lz4, lzma, crc32, adler32, fletcher32 and delta ("codec numcodecs.X is not
supported"; it has zlib, bz2, shuffle and fixedscaleoffset), and two bugs of its partial decoding (decoding
part of a chunk: an edge chunk, or a box) that zarr-python's own arrays show as well (see ZARRS_BUGS): big-endian
complex values get their real and imaginary parts swapped, and chunks encoded zstd then blosc fail with
"incomplete frame". Those tests are strict xfails that only a zarrs failure (ZarrsFailure) satisfies, after
libzarr's side of them passed. No libzarr bug was found.

Inner chunks must divide the shard shape (the spec says so; libzarr refuses other shapes with
ZARR_ERR_INVALID_METADATA, while zarrs would take them), so "not dividing" here means inner chunks and shards
that do not divide the array shape: the edge shards are partial and so are their edge inner chunks. Every
other case of test_libzarr_reads_zarrs has zarrs write with write_empty_chunks.
"""
import contextlib
import json

import pytest

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("Zarr v3 needs zarr-python 3", allow_module_level=True)
zarrs = pytest.importorskip("zarrs")

import numpy as np  # noqa: E402
from zarr.storage import LocalStore  # noqa: E402
from zarrs._internal import ChunkItem, CodecPipelineImpl  # noqa: E402

# zarr-python's warnings about data types without a v3 spec
pytestmark = [pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning"),
              pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")]
pytest.register_assert_rewrite("v3cases")
import libzarr  # noqa: E402
from v3cases import (BE, CRC, DTYPE, GZIP, KEY_ENCODINGS, LE, ONE, ZSTD, ZSTD0, V3Case, as_bytes,  # noqa: E402
                     assert_same, box_slices, check_libzarr_view, check_shards, check_stored_document,
                     chunk_files, default_codecs, load_json, random_box, zpy_meaning)

ZARRS = {"codec_pipeline.path": "zarrs.ZarrsCodecPipeline", "codec_pipeline.strict": True}



def blosc(cname, shuffle, typesize):
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": typesize,
                                               "blocksize": 0}}


def transpose(*order):
    return {"name": "transpose", "configuration": {"order": list(order)}}


def sharding(inner, codecs, location, crc=True):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs, "index_codecs": [LE, CRC] if crc else [LE],
        "index_location": location}}


# label: (dtype, fill, shape, chunk grid (shard) shape, codecs, chunk key encoding index: 0 default "/",
# 1 default ".", 2 v2 ".", 3 v2 "/")
CASES = {
    "uint8-bytes": ("uint8", 200, (37, 23), (10, 8), [ONE], 0),
    "int8-gzip": ("int8", -7, (50,), (7,), [ONE, GZIP], 1),
    "int16-zstd": ("int16", -300, (37, 23), (10, 8), [LE, ZSTD], 1),
    "uint16-be": ("uint16", 65535, (30, 11), (7, 4), [BE], 2),
    "uint16-be-zstd-3d": ("uint16", 42, (9, 10, 11), (4, 4, 5), [BE, ZSTD0], 3),
    "int32-blosc": ("int32", 2**31 - 1, (33, 12), (8, 5), [LE, blosc("blosclz", "noshuffle", 4)], 0),
    "uint32-be-crc32c": ("uint32", 4000000000, (25, 9), (6, 9), [BE, CRC], 2),
    "int64-gzip-crc32c": ("int64", -2**63, (50,), (7,), [LE, GZIP, CRC], 0),
    "uint64-be-blosc": ("uint64", 2**64 - 1, (20, 6), (6, 4), [BE, blosc("zstd", "bitshuffle", 8)], 1),
    "float16-zstd": ("float16", "-Infinity", (19, 26), (8, 9), [LE, ZSTD], 3),
    "float32-gzip": ("float32", "NaN", (19, 26), (8, 9), [LE, GZIP], 0),
    "float32-transpose-be-zstd": ("float32", -0.0015, (19, 26), (8, 9), [transpose(1, 0), BE, ZSTD], 1),
    "float64-blosc-shuffle": ("float64", "-Infinity", (20, 15), (6, 6), [LE, blosc("lz4", "shuffle", 8)], 2),
    "complex64-crc32c": ("complex64", [1.0, "NaN"], (21, 18), (8, 9), [LE, CRC], 0),
    "complex128-transpose-3d": ("complex128", ["Infinity", "NaN"], (6, 7, 9), (4, 3, 5),
                                [transpose(2, 0, 1), LE, GZIP], 3),
    "bool-3d-blosc": ("bool", True, (6, 7, 9), (4, 3, 5), [ONE, blosc("lz4", "bitshuffle", 1)], 1),
    # sharded
    "uint8-sharded-end": ("uint8", 42, (30, 17), (10, 8), [sharding((5, 4), [ONE], "end")], 0),
    "int16-sharded-start-v2": ("int16", -1, (30, 17), (10, 8), [sharding((5, 4), [LE, GZIP], "start")], 2),
    "float32-sharded-start": ("float32", "NaN", (21, 18), (8, 9), [sharding((4, 3), [LE, ZSTD], "start")], 1),
    "complex64-sharded-end": ("complex64", [1.0, "NaN"], (21, 18), (8, 9),
                              [sharding((4, 3), [LE, ZSTD], "end", crc=False)], 3),
    "float64-sharded-inner-transpose": ("float64", "-Infinity", (30, 17), (10, 17),
                                        [sharding((5, 17), [transpose(1, 0), BE, GZIP], "end", crc=False)], 2),
    "uint16-be-3d-sharded-blosc": ("uint16", 65535, (9, 10, 11), (4, 6, 11),
                                   [sharding((2, 3, 11), [BE, blosc("blosclz", "noshuffle", 2)], "end")], 0),
    "int32-transposed-sharded": ("int32", 0, (13, 11), (4, 6), [transpose(1, 0), sharding((2, 2), [LE], "start")], 1),
    "int16-nested-sharded": ("int16", 5, (19, 14), (8, 6),
                             [sharding((4, 6), [sharding((2, 3), [LE, ZSTD], "start")], "end")], 0),
    "bool-sharded-gzip-after": ("bool", False, (23, 9), (8, 6), [sharding((4, 3), [ONE], "end"), GZIP], 1),
    # zarrs' own bugs (see ZARRS_BUGS)
    "complex64-be-zstd": ("complex64", [0.5, "-Infinity"], (21, 18), (8, 9), [BE, ZSTD], 1),
    "int32-zstd-blosc": ("int32", 3, (10, 9), (4, 4), [LE, ZSTD0, blosc("lz4", "noshuffle", 4)], 0),
}

# Bugs of zarrs 0.2.3 (the Rust crate behind the Python package), found here and checked with arrays that
# zarr-python writes with its own pipeline: zarrs fails the same way on them. Both are in zarrs' partial
# decoding, when it decodes part of a chunk (an edge chunk that sticks out of the array, or a box): whole
# chunks decode right. libzarr's side of these cases is checked (zarr-python's own pipeline reads its arrays,
# libzarr reads zarrs' chunks) before the zarrs step that fails, and only a failure of zarrs counts as the
# expected one (ZarrsFailure).
ZARRS_BUGS = {
    "complex64-be-zstd": "zarrs 0.2.3 bug: decoding part of a chunk of big-endian complex values (edge chunks, "
                         "boxes) swaps their real and imaginary parts (it byte-swaps the whole 8-byte element, "
                         "not each float); whole chunks are right",
    "int32-zstd-blosc": "zarrs 0.2.3 bug: decoding part of a chunk encoded by zstd then blosc (edge chunks, "
                        "boxes) fails with 'incomplete frame' (blosc's partial decoder hands zstd part of its "
                        "frame); whole chunks are right",
}


class ZarrsFailure(Exception):
    """A step done by zarrs failed (raised, or read other values than expected). The xfail marks of zarrs' own
    bugs and limitations expect only this, so that a libzarr failure in the same test is never taken for one."""


def zarrs_xfail(reasons):
    def params(labels):
        return [pytest.param(label, marks=pytest.mark.xfail(strict=True, raises=ZarrsFailure, reason=reasons[label]))
                if label in reasons else label for label in labels]
    return params


# dimension names and attributes of a few cases (the others have none)
NAMES = {"int16-zstd": (["y", None], {"units": "m", "é": [1, 2.5, None, "x"]}),
         "complex128-transpose-3d": (["t", "é", "x"], None),
         "float32-sharded-start": ([None, None], {"nested": {"a": {"b": []}}})}


def make_case(label, seed=0):
    dtype, fill, shape, chunks, codecs, ke = CASES[label]
    assert shape[0] > chunks[0], "the outer chunk (1, 0, ...) is left empty"
    names, attributes = NAMES.get(label, (None, None))
    return V3Case(0, DTYPE[dtype], shape, chunks, json.loads(json.dumps(codecs)), KEY_ENCODINGS[ke], fill,
                  dimension_names=names, attributes=attributes, seed=700 + seed, skip=1,
                  empty_chunk=(1,) + (0,) * (len(shape) - 1))


# ---------------------------------------------------------------- zarrs
@contextlib.contextmanager
def zarrs_step(what):
    """Whatever fails inside is zarrs' failure (ZarrsFailure)."""
    try:
        yield
    except Exception as e:
        cause = f" (from {type(e.__cause__).__name__}: {e.__cause__})" if e.__cause__ is not None else ""
        raise ZarrsFailure(f"{what}: {type(e).__name__}: {e}{cause}") from e


@contextlib.contextmanager
def zarrs_pipeline():
    """zarr-python with zarrs' codec pipeline and no fallback to its own (only inside the block)."""
    with zarr.config.set(ZARRS):
        yield


def check_zarrs(z):
    """The array's codec pipeline is zarrs', with zarrs' Rust implementation and no fallback."""
    pipe = z._async_array.codec_pipeline
    assert isinstance(pipe, zarrs.ZarrsCodecPipeline), type(pipe)
    assert pipe.impl is not None, "zarrs rejected the array"
    assert pipe.python_impl is None, "zarr-python's pipeline is there as a fallback"


def zarrs_raw_read(root, case):
    """zarrs' Rust pipeline alone reads every chunk (stored or not) of the array at `root`, given the stored
    zarr.json byte for byte (not zarr-python's re-serialisation), into an array first set to a non-fill
    value."""
    impl = CodecPipelineImpl((root / "zarr.json").read_text(encoding="utf-8"), store_config=LocalStore(str(root)))
    out = np.empty(case.shape, case.native)
    out[...] = case.not_fill()
    items = []
    for idx in case.grid():
        region = list(case.region(idx)[:-1])
        items.append(ChunkItem(key=case.key(idx), chunk_subset=[slice(0, r.stop - r.start) for r in region],
                               chunk_shape=list(case.chunks), subset=region, shape=list(case.shape)))
    impl.retrieve_chunks_and_apply_index(items, out)
    return out


def zarrs_reads(root, case, expected, rng):
    """zarrs reads the array at `root` whole and in boxes, through zarr-python and alone."""
    with zarrs_step("zarrs reads what libzarr wrote"), zarrs_pipeline():
        z = zarr.open_array(str(root), mode="r")
        check_zarrs(z)
        assert zpy_meaning(z.metadata.to_dict()) == zpy_meaning(case.doc())
        assert list(z.metadata.dimension_names or []) == list(case.dimension_names or [])
        assert dict(z.attrs) == (case.attributes or {})
        assert_same(z[...], expected, "zarrs reads what libzarr wrote")
        for _ in range(3):
            start, count = random_box(case.shape, rng)
            assert_same(z[box_slices(start, count)], expected[box_slices(start, count)], f"box {start} {count}")
    with zarrs_step("zarrs' Rust pipeline alone reads what libzarr wrote"):
        assert_same(zarrs_raw_read(root, case), expected, "zarrs' Rust pipeline alone")


def zarr_python_reads(root, expected):
    """zarr-python's own pipeline reads the array at `root` (libzarr's side of zarrs' bugs and limitations)."""
    assert zarr.config.get("codec_pipeline.path") != ZARRS["codec_pipeline.path"]
    assert_same(zarr.open_array(str(root), mode="r")[...], expected, "zarr-python's own pipeline")


def box_outside(case, rng, chunk):
    """A random box that does not touch the outer chunk `chunk`."""
    region = case.region(chunk)[:-1]
    while True:
        start, count = random_box(case.shape, rng)
        if any(o + c <= r.start or o >= r.stop for o, c, r in zip(start, count, region)):
            return start, count


# ---------------------------------------------------------------- both directions
@pytest.mark.parametrize("label", zarrs_xfail(ZARRS_BUGS)(CASES))
def test_zarrs_reads_libzarr(tmp_path, label):
    case = make_case(label, seed=1)
    _, expected = case.data()
    rng = np.random.default_rng(2)
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("", case.request()) as arr:
        arr.write(expected)
        start, count = box_outside(case, rng, case.empty_chunk)
        box = case.values(rng)[box_slices(start, count)]
        arr.write(box, start)
        expected[box_slices(start, count)] = box
    keys = chunk_files(tmp_path)
    assert keys == case.expected_keys(expected)
    assert case.key(case.empty_chunk) not in keys, "a missing chunk for zarrs to read as the fill value"
    check_shards(case, tmp_path, expected)
    if label in ZARRS_BUGS:
        zarr_python_reads(tmp_path, expected)
    zarrs_reads(tmp_path, case, expected, rng)


@pytest.mark.parametrize("label", zarrs_xfail(ZARRS_BUGS)(CASES))
def test_libzarr_reads_zarrs(tmp_path, label):
    """zarr-python writes the zarr.json, zarrs the chunks; every other case stores the inner chunks that hold
    only the fill value (write_empty_chunks)."""
    case = make_case(label)
    data, expected = case.data()
    with zarrs_step("zarrs writes"), zarrs_pipeline():
        z = case.zpy_create(tmp_path, config={"write_empty_chunks": list(CASES).index(label) % 2 == 1})
        check_zarrs(z)
        for unit in case.units():
            if not case.untouched(unit):
                r = case.region(unit, case.inner_chunks)
                z[r] = data[r]
    doc = load_json(tmp_path / "zarr.json")
    assert zpy_meaning(doc) == zpy_meaning(case.doc())
    keys = chunk_files(tmp_path)
    assert case.key(case.empty_chunk) not in keys, "zarrs stored a chunk nothing was written to"
    assert keys <= {case.key(idx) for idx in case.grid()}, f"unexpected keys {keys}"
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        check_libzarr_view(arr, case, doc, expected)
    with zarrs_step("zarrs reads what it wrote"), zarrs_pipeline():
        assert_same(zarr.open_array(str(tmp_path), mode="r")[...], expected, "zarrs reads what it wrote")


def libzarr_reads_what_zarrs_writes(root, case, data, expected):
    """zarrs writes every unit of the case but the untouched ones at `root`; libzarr reads `expected`."""
    with zarrs_step("zarrs writes"), zarrs_pipeline():
        z = case.zpy_create(root)
        check_zarrs(z)
        for unit in case.units():
            if not case.untouched(unit):
                r = case.region(unit, case.inner_chunks)
                z[r] = data[r]
    with libzarr.open_store(root, "r") as store, store.open_array("") as arr:
        check_libzarr_view(arr, case, load_json(root / "zarr.json"), expected)


# ---------------------------------------------------------------- numcodecs.* codecs
def nc(name, **conf):
    return {"name": f"numcodecs.{name}", "configuration": conf}


# label: as CASES
NUMCODECS = {
    "zlib": ("int16", -3, (37, 23), (10, 8), [LE, nc("zlib", level=1)], 0),
    "bz2": ("uint8", 200, (30, 11), (7, 4), [ONE, nc("bz2", level=5)], 2),
    "shuffle": ("float64", "NaN", (20, 15), (6, 6), [LE, nc("shuffle", elementsize=8), ZSTD], 1),
    "fixedscaleoffset": ("float32", 1.5, (19, 26), (8, 9),
                         [nc("fixedscaleoffset", offset=1.5, scale=4, dtype="<f4", astype="<i2"), LE], 3),
    "lz4": ("int32", 7, (33, 12), (8, 5), [LE, nc("lz4", acceleration=1)], 0),
    "lzma": ("uint16", 42, (30, 11), (7, 4), [LE, nc("lzma", preset=1)], 0),
    "crc32": ("float32", "Infinity", (19, 26), (8, 9), [LE, nc("crc32")], 0),
    "adler32": ("int64", -2**63, (50,), (7,), [LE, nc("adler32")], 0),
    "fletcher32": ("complex64", [1.0, -2.5], (21, 18), (8, 9), [LE, nc("fletcher32")], 0),
    "delta": ("int16", -1, (37, 23), (10, 8), [nc("delta", dtype="<i2"), LE, GZIP], 0),
    # pcodec serialises the array (array->bytes), in numcodecs' configuration as zarr-python writes it
    "pcodec": ("int32", -7, (33, 12), (8, 5), [nc("pcodec", level=8, mode_spec="auto", delta_spec="auto",
                                                  paging_spec="equal_pages_up_to", delta_encoding_order=None,
                                                  equal_pages_up_to=262144)], 0),
    "pcodec-f8-classic-sharded": ("float64", "NaN", (20, 15), (12, 10),
                                  [sharding((6, 5), [nc("pcodec", level=3, mode_spec="classic",
                                                        delta_spec="try_consecutive", paging_spec="equal_pages_up_to",
                                                        delta_encoding_order=1, equal_pages_up_to=1000)], "end")],
                                  1),
}
ZARRS_MISSING = {name: f"zarrs 0.2.3 does not support numcodecs.{name} (codec numcodecs.{name} is not supported)"
                 for name in ("lz4", "lzma", "crc32", "adler32", "fletcher32", "delta")}


@pytest.mark.parametrize("label", zarrs_xfail(ZARRS_MISSING)(NUMCODECS))
def test_numcodecs_codecs(tmp_path, label):
    """zarr-python's numcodecs.* codecs that libzarr supports: zarrs reads libzarr's array (after zarr-python's
    own pipeline does), and libzarr reads zarrs' (the codecs zarrs has)."""
    dtype, fill, shape, chunks, codecs, ke = NUMCODECS[label]
    case = V3Case(0, DTYPE[dtype], shape, chunks, json.loads(json.dumps(codecs)), KEY_ENCODINGS[ke], fill, seed=820,
                  skip=1,
                  empty_chunk=(1,) + (0,) * (len(shape) - 1))
    data, expected = case.data()
    root = tmp_path / "libzarr"
    with libzarr.open_store(root, "a") as store, store.create_array("", case.request()) as arr:
        arr.write(expected)
    assert chunk_files(root) == case.expected_keys(expected)
    zarr_python_reads(root, expected)
    zarrs_reads(root, case, expected, np.random.default_rng(7))
    libzarr_reads_what_zarrs_writes(tmp_path / "zarrs", case, data, expected)


# ---------------------------------------------------------------- filters before a big-endian `bytes` or sharding
# numcodecs filters produce native elements, which `bytes` then stores big-endian; before sharding_indexed, libzarr
# runs element-wise filters on each inner chunk. zarr-python 3.1.6 misreads its own chunks of the first kind
# (v3cases.py) and cannot write the second (numcodecs.fixedscaleoffset flattens the shard before sharding sees
# it; with a transpose between them it also reads the elements in the wrong order), so zarrs is the peer here.
def fso(dtype, astype, offset=1.5, scale=4):
    return nc("fixedscaleoffset", offset=offset, scale=scale, dtype=dtype, astype=astype)


def shard(inner, codecs):
    return sharding(inner, codecs, "end")


# label: as CASES
FILTERED = {
    "fso-i2-be": ("float32", 1.5, (19, 26), (8, 9), [fso("<f4", "<i2"), BE], 0),
    "fso-i4-be-zstd": ("float64", -2.0, (40,), (16,), [fso("<f8", "<i4"), BE, ZSTD], 0),
    "fso-before-sharding": ("float32", 0.0, (30, 17), (10, 16), [fso("<f4", "<i2", 0), shard((5, 4), [LE, ZSTD])], 1),
    "fso-transpose-before-nested-sharding": ("float64", 1.5, (26, 21), (12, 12),
                                             [fso("<f8", "<i4", 1.5, 8), transpose(1, 0),
                                              shard((6, 6), [shard((3, 3), [BE])])], 2),
}


@pytest.mark.parametrize("label", FILTERED)
def test_filters_before_big_endian_bytes_or_sharding(tmp_path, label):
    dtype, fill, shape, chunks, codecs, ke = FILTERED[label]
    case = V3Case(0, DTYPE[dtype], shape, chunks, json.loads(json.dumps(codecs)), KEY_ENCODINGS[ke], fill, seed=830,
                  skip=1, empty_chunk=(1,) + (0,) * (len(shape) - 1))
    data, expected = case.data()
    root = tmp_path / "libzarr"
    with libzarr.open_store(root, "a") as store, store.create_array("", case.request()) as arr:
        arr.write(expected)
    assert chunk_files(root) == case.expected_keys(expected)
    if label == "fso-i2-be":
        first = tuple(slice(0, c) for c in chunks)
        stored = np.round((expected[first].astype("f8") - 1.5) * 4).astype(">i2")
        assert (root / case.key((0, 0))).read_bytes() == stored.tobytes()
    zarrs_reads(root, case, expected, np.random.default_rng(9))
    libzarr_reads_what_zarrs_writes(tmp_path / "zarrs", case, data, expected)


def test_filters_before_sharding_that_change_the_fill_value_are_refused(tmp_path):
    """(1.3 - 1.5) * 4 rounds to -1, which decodes as 1.25: libzarr would read missing inner chunks as 1.3 and
    zarr-python as 1.25, so the array is refused; order-dependent filters before sharding are refused too."""
    base = {"zarr_format": 3, "node_type": "array", "shape": [8], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8]}}}
    with libzarr.open_store(tmp_path, "a") as store:
        for name, fill, codecs, naming in [
                ("fill", 1.3, [fso("<f4", "<i2"), shard((4,), [LE])], "fill value"),
                ("delta", 0.0, [nc("delta", dtype="<f4"), shard((4,), [LE])], "delta")]:
            doc = dict(base, fill_value=fill, codecs=codecs)
            with pytest.raises(libzarr.LibzarrError) as e:
                store.create_array(name, json.dumps(doc))
            assert e.value.name == "ZARR_ERR_UNSUPPORTED" and naming in e.value.message, e.value.message
        with store.create_array("ok", json.dumps(dict(base, fill_value=1.5, codecs=[fso("<f4", "<i2"),
                                                                                    shard((4,), [LE])]))):
            pass


# ---------------------------------------------------------------- fill values, defaults
FILLS = [("float32", "0x3fc00000"), ("float16", "0x7e01"), ("float64", "0x7ff8000000000001"),
         ("complex64", ["0x7fc00001", -0.0]), ("uint64", 2**64 - 1)]


@pytest.mark.parametrize("dtype,fill", FILLS, ids=[f"{d}-{f}".replace(" ", "") for d, f in FILLS])
def test_zarrs_reads_libzarr_fill_bits(tmp_path, dtype, fill):
    """Missing chunks of libzarr's arrays read as the fill value with its exact bits (NaN payloads and -0.0
    included) through zarrs alone; through zarr-python, which re-serialises every NaN fill as "NaN" before
    zarrs sees it, NaN-aware."""
    case = V3Case(0, DTYPE[dtype], (10, 3), (4, 2), [LE], KEY_ENCODINGS[0], fill, seed=800, skip=1,
                  empty_chunk=(1, 0))
    _, expected = case.data()
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("", case.request()) as arr:
        arr.write(expected)
    assert load_json(tmp_path / "zarr.json")["fill_value"] == fill
    assert case.key((1, 0)) not in chunk_files(tmp_path)
    assert as_bytes(zarrs_raw_read(tmp_path, case)).tobytes() == as_bytes(expected).tobytes(), "bit for bit"
    zarrs_reads(tmp_path, case, expected, np.random.default_rng(5))


# label: (dtype, shape, chunks, members left out of the document libzarr gets)
DEFAULTS = {
    "float64-2d-minimal": ("float64", (13, 7), (5, 3), ("codecs", "chunk_key_encoding", "fill_value", "attributes",
                                                       "storage_transformers", "node_type")),
    "int32-0d": ("int32", (), (), ("codecs", "fill_value")),
    "bool-no-codecs": ("bool", (9,), (4,), ("codecs", "chunk_key_encoding")),
}


@pytest.mark.parametrize("label", DEFAULTS)
def test_zarrs_reads_libzarr_defaults(tmp_path, label):
    """libzarr completes a document with members left out (as zarr-python defaults them) and zarrs takes the
    completed zarr.json."""
    dtype, shape, chunks, omit = DEFAULTS[label]
    d = DTYPE[dtype]
    case = V3Case(0, d, shape, chunks, default_codecs(d), KEY_ENCODINGS[0], d.default_fill, omit=omit, seed=810,
                  skip=1 if shape else None, dimension_names=["é", None][:len(shape)] or None)
    _, expected = case.data()
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("", case.request()) as arr:
        arr.write(expected)
    check_stored_document(case, load_json(tmp_path / "zarr.json"))
    zarrs_reads(tmp_path, case, expected, np.random.default_rng(6))


# ---------------------------------------------------------------- partial writes into shards
# label: (dtype, fill, shape, shard shape, codecs, chunk key encoding index)
PARTIAL = {
    "int16-end-crc32c": ("int16", -1, (40, 30), (16, 12), [sharding((4, 4), [LE, ZSTD], "end")], 0),
    "float32-start-be": ("float32", "NaN", (25, 19, 7), (10, 8, 7),
                         [sharding((5, 4, 7), [BE, GZIP], "start", crc=False)], 2),
    "uint8-1d-end-blosc": ("uint8", 0, (100,), (32,), [sharding((8,), [ONE, blosc("zstd", "shuffle", 1)], "end")], 1),
}


def partial_case(label):
    dtype, fill, shape, chunks, codecs, ke = PARTIAL[label]
    return V3Case(0, DTYPE[dtype], shape, chunks, json.loads(json.dumps(codecs)), KEY_ENCODINGS[ke], fill, seed=900,
                  skip=None)


def small_box(shape, rng):
    """A box of at most about a third of each dimension, anywhere."""
    count = tuple(int(rng.integers(1, max(2, s // 3 + 1))) for s in shape)
    start = tuple(int(rng.integers(0, s - c + 1)) for s, c in zip(shape, count))
    return start, count


@pytest.mark.parametrize("label", PARTIAL)
def test_zarrs_reads_libzarr_partial_writes(tmp_path, label):
    """libzarr writes a few boxes (unaligned to inner chunks and shards) into a new sharded array, one write
    each, so that most shards are rewritten with their inner chunks kept; zarrs reads the result."""
    case = partial_case(label)
    rng = np.random.default_rng(3)
    expected = np.empty(case.shape, case.native)
    expected[...] = case.fill_array()
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("", case.request()) as arr:
        for _ in range(5):
            start, count = small_box(case.shape, rng)
            box = case.values(rng)[box_slices(start, count)]
            arr.write(box, start)
            expected[box_slices(start, count)] = box
    keys = chunk_files(tmp_path)
    assert keys == case.expected_keys(expected)
    assert len(keys) < len(case.grid()), "some shard left missing"
    check_shards(case, tmp_path, expected)
    zarrs_reads(tmp_path, case, expected, rng)


@pytest.mark.parametrize("label", PARTIAL)
def test_libzarr_reads_zarrs_partial_writes(tmp_path, label):
    """libzarr writes boxes into a sharded array, zarrs writes more boxes over them (rewriting libzarr's
    shards), then libzarr writes one more box over zarrs' shards; each reads what the other wrote."""
    case = partial_case(label)
    rng = np.random.default_rng(4)
    expected = np.empty(case.shape, case.native)
    expected[...] = case.fill_array()

    def boxes(n):
        for _ in range(n):
            start, count = small_box(case.shape, rng)
            box = case.values(rng)[box_slices(start, count)]
            expected[box_slices(start, count)] = box
            yield start, box

    with libzarr.open_store(tmp_path, "a") as store, store.create_array("", case.request()) as arr:
        for start, box in boxes(3):
            arr.write(box, start)
    with zarrs_pipeline():
        z = zarr.open_array(str(tmp_path), mode="r+")
        check_zarrs(z)
        for start, box in boxes(3):
            z[box_slices(start, box.shape)] = box
        assert_same(z[...], expected, "zarrs reads its writes over libzarr's")
    doc = load_json(tmp_path / "zarr.json")
    with libzarr.open_store(tmp_path, "a") as store, store.open_array("") as arr:
        check_libzarr_view(arr, case, doc, expected)
        for start, box in boxes(1):
            arr.write(box, start)
        assert_same(arr.read(), expected, "libzarr reads its write over zarrs'")
    assert chunk_files(tmp_path) <= {case.key(idx) for idx in case.grid()}
    zarrs_reads(tmp_path, case, expected, rng)


# ---------------------------------------------------------------- the checks can fail
def test_strict_has_no_fallback(tmp_path):
    """Under strict mode zarrs raises for what it leaves to zarr-python (here a datetime64 array) instead of
    quietly using zarr-python's pipeline: the tests above cannot pass through zarr-python's codecs."""
    z = zarr.create_array(store=str(tmp_path), shape=(4,), chunks=(2,), dtype="M8[s]")
    z[...] = np.arange(4).astype("M8[s]")
    with zarrs_pipeline():
        z = zarr.open_array(str(tmp_path), mode="r")
        with pytest.raises(zarrs.pipeline.UnsupportedDataTypeError):
            z[...]


def test_zarrs_checks_crc32c(tmp_path):
    """zarrs decodes libzarr's bytes itself: a byte flipped in a libzarr chunk with a crc32c codec is refused,
    through zarr-python and alone."""
    case = make_case("int64-gzip-crc32c")
    _, expected = case.data()
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("", case.request()) as arr:
        arr.write(expected)
    assert_same(zarrs_raw_read(tmp_path, case), expected, "before the flip")
    path = tmp_path / case.key((0,))
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x10
    path.write_bytes(bytes(raw))
    with pytest.raises(Exception, match="(?i)checksum|crc"):
        zarrs_raw_read(tmp_path, case)
    with zarrs_pipeline(), pytest.raises(Exception, match="(?i)checksum|crc"):
        zarr.open_array(str(tmp_path), mode="r")[...]
