"""dtype x compressor x (order, dimension separator), in both directions."""
import pytest

from cases import libzarr_to_zarr_python, matrix, zarr_python_to_libzarr

MATRIX = matrix()


@pytest.mark.parametrize("case", MATRIX, ids=str)
def test_zarr_python_to_libzarr(case, tmp_path):
    zarr_python_to_libzarr(case, tmp_path)


@pytest.mark.parametrize("case", MATRIX, ids=str)
def test_libzarr_to_zarr_python(case, tmp_path):
    libzarr_to_zarr_python(case, tmp_path)
