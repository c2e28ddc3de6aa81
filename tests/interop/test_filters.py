"""numcodecs filters (`.zarray` "filters") against zarr-python and numcodecs, both directions.

Each case of TABLE is a dtype, a chain of filters, a compressor and an order. zarr-python writes the case's
array (the *twin*): whole chunks, some chunks left missing, then two unaligned boxes (a read-modify-write of
stored chunks and a partial write into a missing one). Then:

* zarr-python writes, libzarr reads: libzarr's reads (whole array and windows) equal zarr-python's own read
  of the twin exactly (bitwise; any NaN equals any NaN), and, for lossless chains, the values written.
* libzarr writes, zarr-python reads: libzarr creates the array from a .zarray document whose filters are
  the codecs' get_config(), and makes the same writes. zarr-python reads it exactly as it reads its twin
  (for lossy chains — quantize, fixedscaleoffset, bitround, narrowing astype/delta, categorize of unknown
  strings — that is what zarr-python itself produces, partial rewrites of decoded chunks included). The same
  chunk files exist; after decompression every chunk is byte-identical to the twin's (the filter chain is
  deterministic), and the stored files themselves are byte-identical with no compressor, blosc (lz4 with
  shuffle, zstd with bitshuffle), bz2 and lzma. The other compressors' streams are valid but not the same
  bytes, so there only the decompressed payloads are compared: gzip headers hold a timestamp, libzarr's zlib
  (miniz_oxide) and lz4 (lz4_flex) are other encoders, and its zstd is libzstd 1.5.7 where numcodecs 0.15/0.16
  bundle 1.5.6, whose frames differ for some inputs (about 1 in 8 buffers here).

Compressors may be filters too (the spec's filters are any codec configurations): rows with `zlib`, `bz2`,
`blosc`, `lzma` (raw and xz) and `gzip` in the filter list, before or after other filters, with or without a
compressor. A filter's stream from an encoder libzarr does not share (zlib, gzip) is compared after decoding.

Also: corrupted checksums (ZARR_ERR_CORRUPT_CHUNK naming the chunk key), what numcodecs refuses, and
`test_bitround_order_f`: numcodecs' BitRound hands an F-ordered chunk back in C order, so zarr-python (2.18 and
3.1 alike) stores transposed chunks; libzarr stores them as the .zarray says.
"""
import dataclasses
import itertools
import lzma
import math

import numcodecs
import numpy as np
import pytest
from numcodecs.compat import ensure_bytes
from numcodecs import (AsType, BitRound, Categorize, Delta, FixedScaleOffset, Fletcher32, JenkinsLookup3, PackBits,
                       Quantize, Shuffle)

import libzarr
import zpy
from cases import assert_same, encode_fill, load_json, native, normalize_codec, random_data, store_files, windows

pytestmark = pytest.mark.filterwarnings(  # numcodecs' own overflows: values beyond the encoded type
    "ignore:overflow encountered:RuntimeWarning", "ignore:invalid value encountered:RuntimeWarning")
CRC32, ADLER32 = numcodecs.CRC32, numcodecs.Adler32
CRC32C = getattr(numcodecs, "CRC32C", None)  # numcodecs 0.15 and later, with the crc32c package installed
NO_CRC32C = "this numcodecs has no crc32c codec"

COMPRESSORS = {
    "none": None,
    "zstd": numcodecs.Zstd(level=3),
    "blosc": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
    "blosc-bit": numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE),
    "zlib": numcodecs.Zlib(level=4),
    "gzip": numcodecs.GZip(level=5),
    "lz4": numcodecs.LZ4(),
    "bz2": numcodecs.BZ2(level=5),
    "lzma": numcodecs.LZMA(),
    "base64": numcodecs.Base64(),
    "pcodec": numcodecs.get_codec({"id": "pcodec"}),
    "pcodec-classic": numcodecs.get_codec({"id": "pcodec", "level": 3, "mode_spec": "classic",
                                           "delta_spec": "try_consecutive", "delta_encoding_order": 2,
                                           "equal_pages_up_to": 500}),
}
# chunk files compared byte for byte; the others after decompression (see the module docstring)
BYTE_EXACT = {"none", "blosc", "blosc-bit", "bz2", "lzma", "base64", "pcodec", "pcodec-classic"}
NOT_EXACT_IDS = {"zlib", "gzip", "zstd", "lz4"}  # compressors in a filter list whose streams differ (see above)
LZMA_RAW = numcodecs.LZMA(format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_DELTA, "dist": 4},
                                                          {"id": lzma.FILTER_LZMA1, "preset": 2, "lc": 0, "lp": 2}])
META = {".zarray", ".zattrs"}  # zarr 3 writes an empty .zattrs too
LABELS = ["foo", "bar", "é€𝄞", "x", "quux5"]


# ---------------------------------------------------------------- values
def _rng(seed):
    return np.random.default_rng(seed)


def walk(dtype, step):
    """A random walk from 0 with steps in [-step, step] (fits narrower types after delta)."""
    def make(shape, seed):
        steps = _rng(seed).integers(-step, step, math.prod(shape), endpoint=True)
        return np.cumsum(steps).astype(native(dtype)).reshape(shape)
    return make


def fractions(dtype, lo, count, denominator):
    """lo + k / denominator for random k in [0, count): exact binary fractions (ties for rounding)."""
    def make(shape, seed):
        k = _rng(seed).integers(0, count, math.prod(shape))
        return (lo + k / denominator).astype(native(dtype)).reshape(shape)
    return make


def smooth(dtype, scale):
    """A random walk of floats (what delta + fixedscaleoffset is for); every 7th value is x.x05, a decimal
    rounding tie that binary floats hold only approximately."""
    def make(shape, seed):
        rng = _rng(seed)
        a = np.cumsum(rng.standard_normal(math.prod(shape)) * scale) + 1000
        a[::7] = np.round(a[::7] * 2) / 2 + 0.005  # x.x05: the decimal rounding ties that binary cannot hold
        return a.astype(native(dtype)).reshape(shape)
    return make


def nan_payloads(dtype):
    """cases.random_data (NaN, ±inf, -0.0, subnormals, extremes) plus NaNs whose mantissa is all ones, both
    signs (rounding up carries out of the exponent, into the sign: bitround must wrap like numcodecs) and
    the NaN right after inf (rounds down to inf)."""
    def make(shape, seed):
        a = random_data(dtype, shape, seed)
        bits = a.view(f"u{a.itemsize}").reshape(-1)
        allones = np.iinfo(bits.dtype).max
        bits[-1], bits[-2], bits[-3] = allones >> 1, allones, np.array(np.inf, a.dtype).view(bits.dtype) + 1
        return a
    return make


def strings(dtype, pool):
    def make(shape, seed):
        return _rng(seed).choice(np.array(pool, native(dtype)), shape)
    return make


# ---------------------------------------------------------------- the table
@dataclasses.dataclass(frozen=True, eq=False)
class FCase:
    dtype: str
    filters: tuple
    comp: str = "none"
    order: str = "C"
    fill: object = 0
    lossless: bool = False  # zarr-python reads back exactly what was written
    values: object = None  # (shape, seed) -> native array; None: cases.random_data
    shape: tuple = (27, 45)
    chunks: tuple = (10, 16)  # 3 x 3 chunks, overhanging; 160 elements each (blosc really compresses)
    seed: int = 0

    def __str__(self):
        chain = "+".join(f.codec_id for f in self.filters)
        return f"{self.seed:02d}-{self.dtype}-{chain}-{self.comp}-{self.order}"

    @property
    def codec(self):
        return COMPRESSORS[self.comp]

    @property
    def configs(self):
        return [f.get_config() for f in self.filters]

    def zarray(self):
        kind = np.dtype(self.dtype).kind
        fill = self.fill if kind == "U" else encode_fill(self.fill, self.dtype)
        return {"zarr_format": 2, "shape": list(self.shape), "chunks": list(self.chunks), "dtype": self.dtype,
                "compressor": None if self.codec is None else self.codec.get_config(), "fill_value": fill,
                "order": self.order, "filters": self.configs, "dimension_separator": "."}

    def grid(self):
        return list(itertools.product(*(range(-(-s // c)) for s, c in zip(self.shape, self.chunks))))

    def region(self, idx):
        return tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, self.chunks, self.shape))

    def make(self, seed):
        return (self.values or (lambda shape, s: random_data(self.dtype, shape, s)))(self.shape, seed)

    def writes(self):
        """[(start, block)]: whole chunks (those whose index sum % 3 == 1 are not written), then an unaligned
        box across stored and missing chunks and a small one inside a stored chunk: partial rewrites of
        stored chunks, partial writes into missing ones, and some chunks stay missing."""
        data, other = self.make(self.seed), self.make(self.seed + 100)
        out = [(tuple(r.start for r in self.region(i)), data[self.region(i)])
               for i in self.grid() if sum(i) % 3 != 1]
        for start, count in [([n // 4 for n in self.shape], [max(n // 2, 1) for n in self.shape]),
                             ([n // 2 for n in self.shape], [max(n // 5, 1) for n in self.shape])]:
            out.append((tuple(start), other[tuple(slice(o, o + c) for o, c in zip(start, count))]))
        return out

    def expected(self):
        """The values written (on top of the fill value)."""
        out = np.full(self.shape, self.fill, native(self.dtype))
        for start, block in self.writes():
            out[tuple(slice(o, o + n) for o, n in zip(start, block.shape))] = block
        return out

    def present(self):
        """The chunk keys the writes create."""
        keys = set()
        for start, block in self.writes():
            keys |= set(itertools.product(*(range(o // c, (o + n - 1) // c + 1)
                                            for o, n, c in zip(start, block.shape, self.chunks))))
        return {".".join(map(str, k)) for k in keys}


def _table():
    rows = [
        # delta: integers (wrapping), big-endian, narrowing astype, floats with NaN/inf
        FCase("<i4", (Delta("<i4"),), "none", "C", -7, True),
        FCase(">u2", (Delta(">u2"),), "zstd", "F", 42, True),
        FCase("<f8", (Delta("<f8"),), "blosc", "F", math.nan),
        FCase("<i8", (Delta("<i8", astype="<i2"),), "zstd", "C", 0, True, walk("<i8", 300)),
        FCase(">i2", (Delta(">i2", astype="<i4"), CRC32()), "blosc", "C", -1, True, shape=(7, 6, 5), chunks=(3, 4, 2)),
        FCase("<f4", (Delta("<f4", astype="<f8"),), "zstd", "F", 1.5),  # diffs in f4, sums in a f4 output
        FCase("<i8", (Delta("<i8"), Shuffle(8)), "blosc-bit", "C", 7, True, walk("<i8", 1000), (1000,), (190,)),
        FCase("<i4", (Shuffle(4), Delta("|u1")), "zstd", "F", -7, True, walk("<i4", 50)),
        # fixedscaleoffset: float -> int (round half to even on exact ties), mixed byte orders, int -> int
        FCase("<f8", (FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<u2"),), "zlib", "C", 1000.5,
              values=fractions("<f8", 1000, 60000, 20)),
        FCase(">f4", (FixedScaleOffset(offset=-2.5, scale=8, dtype=">f4", astype="<i2"),), "zstd", "F", -2.5,
              values=fractions(">f4", -300, 9000, 16)),
        FCase("<i4", (FixedScaleOffset(offset=5, scale=3, dtype="<i4", astype="<i2"),), "blosc", "C", 42),
        FCase("<f4", (FixedScaleOffset(offset=0.5, scale=4, dtype="<f4", astype="<f8"),), "none", "F", math.inf),
        FCase(">i8", (FixedScaleOffset(offset=-1000, scale=0.25, dtype=">i8", astype=">i4"),), "zstd", "C", 8,
              values=walk(">i8", 10**6)),
        # delta + fixedscaleoffset in both orders
        FCase("<f8", (FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<i4"), Delta("<i4", astype="<i2")),
              "zlib", "F", 1000, values=smooth("<f8", 2.0)),
        FCase("<f8", (Delta("<f8"), FixedScaleOffset(offset=0, scale=100, dtype="<f8", astype="<i4")), "zstd", "C",
              1000, values=smooth("<f8", 2.0)),
        # quantize: NaN/inf/-0.0/subnormals/extremes, f2 arithmetic, narrowing astype
        FCase("<f8", (Quantize(3, "<f8"),), "none", "C", math.nan),
        FCase("<f4", (Quantize(2, "<f4"),), "blosc", "F", -math.inf),
        FCase(">f2", (Quantize(1, ">f2"),), "zstd", "C", 42.5),
        FCase(">f8", (Quantize(5, ">f8", astype="<f4"),), "lz4", "F", 0.25),
        FCase("<f8", (Quantize(1, "<f8", astype="<f2"),), "blosc-bit", "C", math.nan),  # beyond f2: inf
        FCase("<f8", (Quantize(-1, "<f8"),), "zstd", "F", 8.0),  # multiples of 8
        # quantize + bitround (numcodecs allows it: quantize's astype is a float)
        FCase("<f8", (Quantize(4, "<f8", astype="<f4"), BitRound(10)), "zstd", "C", math.nan),
        # bitround: every float width, NaN payloads that carry, after delta (a flat array: order F is fine)
        FCase("<f4", (BitRound(7),), "none", "C", math.nan, values=nan_payloads("<f4")),
        FCase("<f8", (BitRound(20),), "blosc", "C", -math.inf, values=nan_payloads("<f8")),
        FCase("<f2", (BitRound(3),), "zstd", "C", 1.5, values=nan_payloads("<f2")),
        FCase("<f4", (BitRound(0),), "bz2", "C", 0),
        FCase("<f8", (Delta("<f8"), BitRound(12)), "zstd", "F", math.nan),
        # packbits: chunks of 117 and 12 bits (not whole bytes)
        FCase("|b1", (PackBits(),), "none", "C", True, True, shape=(25, 40), chunks=(9, 13)),
        FCase("|b1", (PackBits(), CRC32()), "zstd", "F", False, True, shape=(25, 40), chunks=(9, 13)),
        FCase("|b1", (PackBits(),), "blosc", "F", True, True, shape=(7, 6, 5), chunks=(3, 2, 2)),
        # categorize: labels only (lossless), unknown strings and '' (decoded as ''), a fill that is no label
        FCase("<U5", (Categorize(LABELS, "<U5"),), "none", "C", "", values=strings("<U5", LABELS + ["", "nope", "fo"])),
        FCase(">U5", (Categorize(LABELS, ">U5", astype="<u2"), Shuffle(2)), "blosc", "F", "bar",
              values=strings(">U5", LABELS + ["zz"])),
        FCase("<U5", (Categorize(LABELS, "<U5"), Delta("|u1"), ADLER32()), "zstd", "C", "foo", True,
              strings("<U5", LABELS)),
        FCase("<U5", (Categorize(LABELS[:2], "<U5"),), "zstd", "F", "zzz", values=strings("<U5", LABELS)),
        # astype: narrowing floats (max -> inf, subnormals -> 0), wrapping ints, widening (lossless)
        FCase("<f8", (AsType("<f4", "<f8"),), "none", "C", math.nan),
        FCase("<f4", (AsType("<f2", "<f4"),), "zstd", "F", -math.inf),  # f2 subnormals and overflow
        FCase(">f8", (AsType("<f4", ">f8"), Shuffle(4)), "blosc", "F", 0.5),
        FCase("<i8", (AsType(">i2", "<i8"),), "zstd", "C", -7),
        FCase("|u1", (AsType("<u4", "|u1"),), "zstd", "F", 200, True),
        FCase("<i2", (AsType("<f8", "<i2"), Quantize(1, "<f8")), "none", "F", 3, True),
        # shuffle: element size = item size, and not
        FCase("<i4", (Shuffle(4),), "none", "F", 42, True),
        FCase("<c16", (Shuffle(8),), "blosc", "C", complex(math.nan, -math.inf), True),
        FCase(">i2", (Shuffle(2), Fletcher32()), "zstd", "C", -7, True),
        # checksums, mostly after other filters
        FCase("<f8", (Quantize(3, "<f8"), CRC32()), "zstd", "C", math.nan),
        FCase(">i4", (Delta(">i4"), CRC32(location="end")), "blosc", "F", 42, True),
        FCase("<u2", (ADLER32(),), "none", "C", 42, True),
        FCase("<u8", (Delta("<u8"), ADLER32(location="end")), "blosc", "F", 200, True),
        FCase("<f4", (Fletcher32(),), "blosc", "F", math.inf, True),
        FCase("<i8", (JenkinsLookup3(initval=12345),), "zstd", "F", -7, True),
        FCase("<f2", (Shuffle(2), JenkinsLookup3()), "none", "C", math.nan, True),
        FCase(">i2", (Fletcher32(), CRC32(), JenkinsLookup3(initval=1), ADLER32(location="end")), "gzip", "C", 0, True),
        FCase("<f8", (BitRound(30), Delta("<f8"), CRC32()), "lzma", "C", 0.5),
        # compressors as filters: alone, between filters, before another compressor; blosc shuffles with the
        # array's item size at the head of the chain and with 1 after a filter that returns bytes
        FCase("<i4", (numcodecs.Zlib(level=1),), "none", "C", -7, True),
        FCase(">i8", (Delta(">i8"), numcodecs.BZ2(level=1), CRC32()), "zstd", "F", 42, True, walk(">i8", 300)),
        FCase("<f8", (numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.SHUFFLE),), "none", "F",
              math.nan, True),
        FCase(">i2", (CRC32(), numcodecs.Blosc(cname="lz4", shuffle=numcodecs.Blosc.BITSHUFFLE)), "lzma", "C", -1,
              True),
        FCase("<u4", (Shuffle(4), LZMA_RAW), "blosc", "C", 200, True, walk("<u4", 50)),
        FCase("<f4", (Quantize(2, "<f4"), numcodecs.GZip(level=5), ADLER32()), "none", "F", 0.5),
        # base64 (text for stores that hold text): as the compressor, and as a filter before one
        FCase(">i8", (Delta(">i8"),), "base64", "F", 42, True),
        FCase("<i4", (numcodecs.Base64(), CRC32()), "zstd", "C", -7, True),
        FCase("<f4", (Shuffle(4),), "base64", "C", math.nan, True),
        # pcodec: the numbers the filters leave (numcodecs hands it their array), every type it takes
        FCase("<i4", (Delta("<i4"),), "pcodec", "F", -7, True),
        FCase("<f8", (Quantize(3, "<f8"),), "pcodec", "C", math.nan),
        FCase("<u2", (Delta("<u2"),), "pcodec-classic", "C", 42, True),
        FCase("<f2", (Delta("<f2"),), "pcodec", "C", 0.5),
        FCase("<i8", (AsType("<i2", "<i8"),), "pcodec-classic", "F", -7),
        FCase("<u4", (Delta("<u4"),), "pcodec", "C", 200, True),
    ]
    if CRC32C is not None:
        rows += [FCase("<f8", (CRC32C(),), "zstd", "C", math.nan, True),
                 FCase(">i2", (Delta(">i2"), CRC32C(location="start")), "none", "F", -7, True),
                 FCase("<u4", (Shuffle(4), CRC32C()), "blosc", "C", 42, True)]
    return [dataclasses.replace(c, seed=i) for i, c in enumerate(rows)]


TABLE = _table()
FILTER_IDS = ["delta", "fixedscaleoffset", "quantize", "bitround", "packbits", "categorize", "astype", "shuffle",
              "crc32", "crc32c", "adler32", "fletcher32", "jenkins_lookup3"]


def bitround_sees_f_order(case):
    """zarr-python hands the first filter the chunk as an F-ordered n-d array; quantize and astype keep it so.
    A bitround that gets it returns it in C order: see test_bitround_order_f. The table avoids that."""
    if case.order != "F" or sum(n > 1 for n in case.chunks) < 2:
        return False
    for f in case.filters:
        if f.codec_id == "bitround":
            return True
        if f.codec_id not in ("quantize", "astype"):
            return False
    return False


def test_table_coverage():
    """Every filter with at least two of (none, zstd, blosc-with-shuffle), in C and F order, and big-endian."""
    for fid in FILTER_IDS:
        rows = [c for c in TABLE if fid in [f.codec_id for f in c.filters]]
        if fid == "crc32c" and CRC32C is None:
            continue
        assert len({c.comp for c in rows} & {"none", "zstd", "blosc"}) >= 2, fid
        assert {c.order for c in rows} == {"C", "F"}, fid
    assert any(np.dtype(c.dtype).byteorder == ">" for c in TABLE)
    assert not any(bitround_sees_f_order(c) for c in TABLE)
    for c in TABLE:  # every case: a chunk stays missing, partial writes into stored and missing chunks
        keys = {".".join(map(str, i)) for i in c.grid()}
        written = {".".join(map(str, i)) for i in c.grid() if sum(i) % 3 != 1}
        assert keys - c.present() and c.present() - written, c


# ---------------------------------------------------------------- the two directions
def zarr_python_twin(case, root):
    """zarr-python creates and writes the case at root; returns its own read of the result."""
    z = zpy.create(root, shape=case.shape, chunks=case.chunks, dtype=case.dtype, compressor=case.codec,
                   fill_value=case.fill, order=case.order, filters=list(case.filters))
    for start, block in case.writes():
        z[tuple(slice(o, o + n) for o, n in zip(start, block.shape))] = block
    doc = load_json(root / ".zarray")
    assert [normalize_codec(f) for f in doc["filters"]] == [normalize_codec(f) for f in case.configs]  # sanity
    assert store_files(root) - META == case.present()
    got = zpy.read(zpy.open_array(root))
    if case.lossless:
        assert_same(got, case.expected())
    return got


def check_libzarr_reads(arr, case, reference):
    assert [normalize_codec(f) for f in arr.filters] == [normalize_codec(f) for f in case.configs]
    for start, count in windows(case.shape):
        assert_same(arr.read(start, count), reference[tuple(slice(o, o + c) for o, c in zip(start, count))])


@pytest.mark.parametrize("case", TABLE, ids=str)
def test_zarr_python_writes_libzarr_reads(case, tmp_path):
    reference = zarr_python_twin(case, tmp_path)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        check_libzarr_reads(arr, case, reference)


def assert_same_chunks(lib_root, zpy_root, case):
    files = store_files(lib_root) - META
    assert files == store_files(zpy_root) - META == case.present()
    for key in sorted(files):
        mine, theirs = (lib_root / key).read_bytes(), (zpy_root / key).read_bytes()
        if case.codec is not None and case.comp not in BYTE_EXACT:
            mine, theirs = bytes(case.codec.decode(mine)), bytes(case.codec.decode(theirs))
        if any(f.codec_id in NOT_EXACT_IDS for f in case.filters):  # decoded through the whole chain
            for f in reversed(case.filters):
                mine, theirs = ensure_bytes(f.decode(mine)), ensure_bytes(f.decode(theirs))
        assert mine == theirs, f"chunk {key}: {len(mine)} bytes from libzarr differ from zarr-python's {len(theirs)}"


@pytest.mark.parametrize("case", TABLE, ids=str)
def test_libzarr_writes_zarr_python_reads(case, tmp_path):
    reference = zarr_python_twin(case, tmp_path / "twin")
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("lib", case.zarray()) as arr:
        arr.write_empty_chunks = True  # as zpy.create sets for zarr-python (a chunk may end up all fill)
        for start, block in case.writes():
            arr.write(block, start)
        check_libzarr_reads(arr, case, reference)
    z = zpy.open_array(tmp_path / "lib")
    assert [normalize_codec(f) for f in zpy.properties(z)["filters"]] == [normalize_codec(f) for f in case.configs]
    assert_same(zpy.read(z), reference)
    assert_same_chunks(tmp_path / "lib", tmp_path / "twin", case)


# ---------------------------------------------------------------- checksums catch corruption
CHECKSUMS = {"crc32": CRC32(), "fletcher32": Fletcher32(), "adler32-end": ADLER32(location="end"),
             "jenkins_lookup3": JenkinsLookup3(initval=3), "crc32c": CRC32C() if CRC32C else None}


@pytest.mark.parametrize("writer", ["zarr-python", "libzarr"])
@pytest.mark.parametrize("name", CHECKSUMS)
def test_checksum_mismatch(name, writer, tmp_path):
    """One flipped byte in a stored chunk (in the data, then in the checksum itself): libzarr reports
    ZARR_ERR_CORRUPT_CHUNK naming the chunk key, as numcodecs raises; the other chunks still read."""
    if CHECKSUMS[name] is None:
        pytest.skip(NO_CRC32C)
    case = FCase("<i4", (Delta("<i4"), CHECKSUMS[name]), "none", "F", -7, True, seed=77)
    reference = zarr_python_twin(case, tmp_path / "zarr-python")
    if writer == "libzarr":
        with libzarr.open_store(tmp_path, "a") as store, store.create_array("libzarr", case.zarray()) as arr:
            for start, block in case.writes():
                arr.write(block, start)
    root, key = tmp_path / writer, "1.2"
    good = (root / key).read_bytes()
    for pos in [len(good) // 2, {"crc32": 1, "fletcher32": len(good) - 2}.get(name, len(good) - 1)]:
        bad = bytearray(good)
        bad[pos] ^= 0x10
        (root / key).write_bytes(bytes(bad))
        with pytest.raises(Exception):  # numcodecs: RuntimeError (checksum mismatch)
            zpy.read(zpy.open_array(root))
        with libzarr.open_store(root, "r") as store, store.open_array("") as arr:
            with pytest.raises(libzarr.LibzarrError) as e:
                arr.read()
            assert e.value.name == "ZARR_ERR_CORRUPT_CHUNK", str(e.value)
            assert key in e.value.message, f"the message should name chunk {key}: {e.value.message}"
            assert_same(arr.read((0, 0), (4, 10)), reference[:4, :10])  # inside chunk 0.0, which is fine
    (root / key).write_bytes(good)
    with libzarr.open_store(root, "r") as store, store.open_array("") as arr:
        assert_same(arr.read(), reference)


# ---------------------------------------------------------------- what numcodecs refuses, libzarr refuses
REFUSALS = {  # name: (dtype, filters, data, fill value)
    "bitround-big-endian": (">f4", [BitRound(5)], np.linspace(0, 1, 12).reshape(3, 4), 0.0),
    "bitround-keepbits-too-large": ("<f4", [BitRound(24)], np.linspace(0, 1, 12).reshape(3, 4), 0.0),
    "delta-first-value-overflows-astype": ("<i4", [Delta("<i4", astype="<i2")],
                                           np.full((3, 4), 100000), 0),
    "shuffle-ragged-elementsize": ("<i4", [Shuffle(8)], np.arange(12).reshape(3, 4), 0),  # 3x3 chunk: 36 bytes
}


@pytest.mark.parametrize("name", REFUSALS)
def test_refusals(name, tmp_path):
    """Writes numcodecs cannot encode fail in libzarr too (when creating or when writing) and store nothing."""
    dtype, filters, data, fill = REFUSALS[name]
    z = zpy.create(tmp_path / "zpy", shape=(3, 4), chunks=(3, 3), dtype=dtype, fill_value=fill, filters=filters)
    with pytest.raises(Exception):
        z[...] = data
    doc = {"zarr_format": 2, "shape": [3, 4], "chunks": [3, 3], "dtype": dtype, "compressor": None,
           "fill_value": fill, "order": "C", "filters": [f.get_config() for f in filters]}
    with libzarr.open_store(tmp_path, "a") as store:
        with pytest.raises(libzarr.LibzarrError) as e:
            with store.create_array("lib", doc) as arr:
                arr.write(data)
        assert e.value.name in ("ZARR_ERR_INVALID_METADATA", "ZARR_ERR_INVALID_ARGUMENT", "ZARR_ERR_UNSUPPORTED"), \
            str(e.value)
    assert not (tmp_path / "lib").exists() or store_files(tmp_path / "lib") <= META


# ---------------------------------------------------------------- bitround + order F
def _encode_flat(chain, values):
    """The chain's encoding of `values` taken in C order (all steps are element-wise): bitround's integers."""
    flat = np.ascontiguousarray(values).reshape(-1)
    for f in chain:
        flat = np.asarray(f.encode(flat))
    return flat.reshape(values.shape)


def _decode_flat(chain, encoded, dtype):
    flat = encoded.reshape(-1)
    for f in reversed(chain):
        flat = np.asarray(f.decode(flat))
    return flat.view(dtype).reshape(encoded.shape)


BITROUND_F = {  # name: (dtype, chain, compressor); both chains end with a bitround of float32
    "bitround": ("<f4", (BitRound(5),), "none"),
    "quantize+bitround": ("<f8", (Quantize(2, "<f8", astype="<f4"), BitRound(9)), "zstd"),
}


@pytest.mark.parametrize("name", BITROUND_F)
def test_bitround_order_f(name, tmp_path):
    """zarr-python hands the filters each chunk as an n-d array in the array's order. numcodecs' BitRound.encode
    starts with `a.copy()`, which is C-ordered whatever `a` was, and the compressor (or the store) then
    serialises the result in C order. So for an order-F array zarr-python stores each chunk's elements in C
    order under a .zarray that says F: every chunk comes back transposed, and in the overhanging edge chunks
    the fill value padding (here 0.0) lands inside the array, which is why zarr-python appears to "write
    zeros". Quantize and astype keep the F layout, so a bitround after them does the same; after delta or
    fixedscaleoffset (which flatten the chunk) it does not. zarr-python 2.18 (numcodecs 0.15) and 3.1
    (numcodecs 0.16) behave the same.

    libzarr runs the filters on the chunk's elements in the order the .zarray names, so its chunk files hold
    bitround(chunk) in F order: they differ from zarr-python's, and zarr-python reads libzarr's array
    correctly (its decoder is right; only its encoder is wrong). Reading zarr-python's array, libzarr gets
    what zarr-python gets: that is what the stored bytes say."""
    dtype, chain, comp = BITROUND_F[name]
    shape, chunks = (7, 10), (3, 4)  # overhanging edge chunks in both dimensions
    values = _rng(5).uniform(1, 100, shape).astype(dtype)
    correct = _decode_flat(chain, _encode_flat(chain, values), dtype)
    assert np.all(correct != 0) and not np.array_equal(correct, values)
    codec = COMPRESSORS[comp]
    z = zpy.create(tmp_path / "zpy", shape=shape, chunks=chunks, dtype=dtype, compressor=codec, fill_value=0,
                   order="F", filters=list(chain))
    z[...] = values
    theirs = zpy.read(zpy.open_array(tmp_path / "zpy"))

    meta = {"zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "dtype": dtype,
            "compressor": None if codec is None else codec.get_config(), "fill_value": 0, "order": "F",
            "filters": [f.get_config() for f in chain]}
    with libzarr.open_store(tmp_path, "a") as store:
        with store.create_array("lib", meta) as arr:
            arr.write(values)
            assert_same(arr.read(), correct)
        with store.open_array("zpy") as arr:
            assert_same(arr.read(), theirs)  # the same bytes read the same way
    assert_same(zpy.read(zpy.open_array(tmp_path / "lib")), correct)

    def payload(path):  # the stored float32 bit patterns
        raw = path.read_bytes()
        return np.frombuffer(raw if codec is None else bytes(codec.decode(raw)), "<u4")

    for idx in itertools.product(range(3), range(3)):
        key = ".".join(map(str, idx))
        padded = np.zeros(chunks, dtype)
        r = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, shape))
        padded[tuple(slice(0, x.stop - x.start) for x in r)] = values[r]
        bits = _encode_flat(chain, padded).view("<u4")
        np.testing.assert_array_equal(payload(tmp_path / "lib" / key), bits.reshape(-1, order="F"), key)
        np.testing.assert_array_equal(payload(tmp_path / "zpy" / key), bits.reshape(-1, order="C"), key)
    # what zarr-python reads of its own array: each chunk transposed, padding zeros inside the array
    assert not np.array_equal(theirs, correct)
    assert np.count_nonzero(theirs == 0) > 0
    inner = theirs[:3, :4]  # a whole chunk: its 12 values, in the wrong places
    assert sorted(inner.reshape(-1)) == sorted(correct[:3, :4].reshape(-1))
    assert_same(inner, correct[:3, :4].reshape(-1).reshape(chunks, order="F"))
