import os
import sys
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr

# The binding under test: bindings/python/libzarr.py, for these tests and the Python processes
# they start.
BINDING = str(Path(__file__).resolve().parents[2] / "bindings" / "python")
sys.path.insert(0, BINDING)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [BINDING, os.environ.get("PYTHONPATH")]))

pytest.register_assert_rewrite("cases")  # detailed assertion messages from the shared checks

import libzarr  # noqa: E402


def pytest_report_header(config):
    try:
        lib = f"libzarr {libzarr.version()} ({libzarr.LIB_PATH})"
    except OSError as e:
        lib = f"libzarr NOT LOADABLE: {e}"
    return [f"zarr {zarr.__version__}, numcodecs {numcodecs.__version__}, numpy {np.__version__}", lib]


@pytest.fixture(scope="session", autouse=True)
def _library():
    try:
        libzarr.lib()
    except OSError as e:
        pytest.fail(f"cannot load libzarr from {libzarr.LIB_PATH} (set LIBZARR_PATH or cargo build --release): {e}",
                    pytrace=False)
