"""Zarr v3 matrix, both directions: a seeded random mix (v3cases.matrix(), about 150 cases) of data types
(bool, int8..uint64, float16/32/64, complex64/128, fixed_length_utf32, null_terminated_bytes, raw_bytes,
numpy.datetime64/timedelta64 with units and scale factors, structured, string), codec chains (bytes little and
big endian, zstd with and without checksum, gzip, blosc lz4/zstd/blosclz with every shuffle, crc32c, transpose,
numcodecs.zlib/lz4/bz2/lzma/shuffle/delta/fixedscaleoffset/crc32/adler32/fletcher32), sharding (none; index
at the start or the end, with and without crc32c, inner codecs, nested, transposed before sharding, encoded
after sharding), the four chunk key encodings, non-default fill values (NaN, +-Infinity, -0.0, "0x..." bit
patterns, NaT) and 0-3-d shapes with edge chunks, some units never written.

* test_zarr_python_to_libzarr: zarr-python 3 writes (and must write exactly the case's zarr.json), libzarr
  opens it and its getters and reads (whole, random boxes) match exactly.
* test_libzarr_to_zarr_python: libzarr creates the array from the case's document (some members left out:
  they must be defaulted as zarr-python defaults them), writes everything and overwrites a random box; the
  stored zarr.json holds what was asked, exactly the chunks not all fill are stored (and in shards exactly
  the inner chunks not all fill), and zarr-python 3 reads the same metadata and values.
* test_zarr_python_accepts_document: the documents of the libzarr direction are valid for zarr-python
  (it opens them, writes and reads back): a check of the test itself, independent of libzarr.
"""
import pytest

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("Zarr v3 needs zarr-python 3", allow_module_level=True)

# zarr-python's warnings about numcodecs codecs, consolidated metadata and data types without a v3 spec
pytestmark = [pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning"),
              pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")]
pytest.register_assert_rewrite("v3cases")
from v3cases import libzarr_to_zarr_python, matrix, zarr_python_accepts, zarr_python_to_libzarr  # noqa: E402

MATRIX = matrix()


@pytest.mark.parametrize("case", MATRIX, ids=str)
def test_zarr_python_to_libzarr(case, tmp_path):
    zarr_python_to_libzarr(case, tmp_path)


@pytest.mark.parametrize("case", MATRIX, ids=str)
def test_libzarr_to_zarr_python(case, tmp_path):
    libzarr_to_zarr_python(case, tmp_path)


@pytest.mark.parametrize("case", MATRIX, ids=str)
def test_zarr_python_accepts_document(case, tmp_path):
    zarr_python_accepts(case, tmp_path / "arr")
