"""GDAL (Debian's gdal-bin, its Zarr driver through /vsis3/) reads what libzarr wrote into a bucket of the S3
server that scripts/test.sh starts on 127.0.0.1: a v2 array in a group with consolidated metadata, read whole and
as a window. Skipped without the server or without GDAL, unless LIBZARR_REMOTE_TESTS=required (scripts/test.sh).
"""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import libzarr

ENDPOINT = os.environ.get("LIBZARR_TEST_S3_ENDPOINT")
REQUIRED = os.environ.get("LIBZARR_REMOTE_TESTS") == "required"
if ENDPOINT is None or shutil.which("gdal_translate") is None:
    if REQUIRED:
        raise RuntimeError("the S3 server or gdal_translate is missing: start the servers (scripts/servers.sh)")
    pytest.skip("no S3 server or no GDAL (scripts/test.sh provides both)", allow_module_level=True)

KEY, SECRET = os.environ["LIBZARR_TEST_S3_KEY"], os.environ["LIBZARR_TEST_S3_SECRET"]
ARRAY = {"zarr_format": 2, "shape": [9, 7], "chunks": [4, 3], "dtype": "<i4", "compressor": {"id": "zlib", "level": 1},
         "fill_value": -9, "filters": None, "order": "C"}


def gdal_env():
    return dict(os.environ, AWS_S3_ENDPOINT=ENDPOINT.removeprefix("http://"), AWS_HTTPS="NO",
                AWS_VIRTUAL_HOSTING="FALSE", AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                AWS_REGION="us-east-1", GDAL_DISABLE_READDIR_ON_OPEN="EMPTY_DIR")


def read_asc(path):
    lines = path.read_text().splitlines()
    header = {k.lower(): v for k, v in (line.split() for line in lines[:6] if len(line.split()) == 2)}
    rows = [list(map(int, line.split())) for line in lines[len(header):]]
    return np.array(rows)


def test_gdal_reads_what_libzarr_wrote_to_the_bucket(tmp_path):
    prefix = f"gdal-{os.getpid()}.zarr"
    values = (np.arange(63).reshape(9, 7) * 5 - 100).astype("<i4")
    # libzarr reads the AWS variables when it opens an s3:// store.
    os.environ.update(AWS_ENDPOINT_URL=ENDPOINT, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                      AWS_REGION="us-east-1")
    with libzarr.open_store(f"s3://zarr-test/{prefix}", "a") as store:
        store.create_group("")
        with store.create_array("var", json.dumps(ARRAY)) as arr:
            arr.write(values[:8])  # the last row stays the fill value
        store.consolidate()
    expected = values.copy()
    expected[8] = -9
    whole, window = tmp_path / "whole.asc", tmp_path / "window.asc"
    source = f'ZARR:"/vsis3/zarr-test/{prefix}":/var'
    for out, extra in [(whole, []), (window, ["-srcwin", "2", "3", "4", "5"])]:
        run = subprocess.run(["gdal_translate", "-q", "-of", "AAIGrid", *extra, source, str(out)], env=gdal_env(),
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
    # GDAL shows a 2-D array without coordinates as a raster with its first row at the bottom (a window's
    # offsets still count in the array's order).
    assert (read_asc(whole) == np.flipud(expected)).all(), read_asc(whole)
    assert (read_asc(window) == np.flipud(expected[3:8, 2:6])).all(), read_asc(window)
