"""libzarr and zarr-python 3 sharing a bucket of a real S3 server (SeaweedFS, started by scripts/test.sh on
127.0.0.1): zarr-python writes through its obstore-backed ObjectStore and libzarr reads through `s3://` URLs,
and the reverse, for a v2 array, a v3 sharded array and a group, with consolidated metadata. Skipped without
the server (LIBZARR_TEST_S3_ENDPOINT unset) unless LIBZARR_REMOTE_TESTS=required, as the test script sets it.
"""
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("zarr-python 2 has no obstore store", allow_module_level=True)
obstore = pytest.importorskip("obstore")
ENDPOINT = os.environ.get("LIBZARR_TEST_S3_ENDPOINT")
if ENDPOINT is None:
    if os.environ.get("LIBZARR_REMOTE_TESTS") == "required":
        raise RuntimeError("LIBZARR_TEST_S3_ENDPOINT is not set: start the servers (scripts/servers.sh)")
    pytest.skip("no S3 server (scripts/test.sh starts one)", allow_module_level=True)

import libzarr  # noqa: E402
from obstore.store import S3Store  # noqa: E402
import remote_cases  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning")]
KEY, SECRET = os.environ["LIBZARR_TEST_S3_KEY"], os.environ["LIBZARR_TEST_S3_SECRET"]
# libzarr reads the AWS variables when it opens an s3:// store.
os.environ.update(AWS_ENDPOINT_URL=ENDPOINT, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                  AWS_REGION="us-east-1")
BUCKET = "zarr-test"


def zpy_store(prefix, read_only=False):
    s3 = S3Store(BUCKET, prefix=prefix, endpoint=ENDPOINT, access_key_id=KEY, secret_access_key=SECRET,
                 region="us-east-1", client_options={"allow_http": True})
    return zarr.storage.ObjectStore(s3, read_only=read_only)


def url(p):
    return f"s3://{BUCKET}/{p}"


def test_libzarr_reads_what_zarr_python_wrote():
    remote_cases.libzarr_reads_what_zarr_python_wrote(zpy_store, url, remote_cases.prefix("zpy"))


def test_zarr_python_reads_what_libzarr_wrote():
    remote_cases.zarr_python_reads_what_libzarr_wrote(zpy_store, url, remote_cases.prefix("lz"))


def test_wrong_secret_is_an_error_naming_the_url_and_status(tmp_path):
    """A wrong secret must not read as missing chunks (fill values): libzarr says the server refused, naming
    the URL, the key and the status. Run in a child process, since the AWS variables are process-wide."""
    p = remote_cases.prefix("secret")
    z = zarr.open_array(zpy_store(p), mode="w", shape=(10,), chunks=(5,), dtype="int32", zarr_format=3)
    z[...] = np.arange(10)
    script = tmp_path / "wrong.py"
    script.write_text(f"""
import libzarr
try:
    with libzarr.open_store("s3://{BUCKET}/{p}", "r") as store, store.open_array("") as arr:
        print("READ", arr.read().tolist())
except libzarr.LibzarrError as e:
    print(e.name, e.message)
""")
    env = dict(os.environ, AWS_SECRET_ACCESS_KEY="not-the-secret", PYTHONPATH=os.path.dirname(libzarr.__file__))
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    text = out.stdout + out.stderr
    assert "ZARR_ERR_PERMISSION_DENIED" in text and f"s3://{BUCKET}/{p}" in text and "403" in text, text


def test_unreachable_endpoint_is_an_error_within_seconds(tmp_path):
    """Nothing listens at the endpoint: the open fails with ZARR_ERR_UNREACHABLE naming the URL after a few retries,
    instead of hanging (object_store alone would retry for three minutes)."""
    script = tmp_path / "unreachable.py"
    script.write_text("""
import libzarr
try:
    with libzarr.open_store("s3://zarr-test/nowhere", "r") as store, store.open_array("") as arr:
        print("OPENED")
except libzarr.LibzarrError as e:
    print(e.name, e.message)
""")
    env = dict(os.environ, AWS_ENDPOINT_URL="http://127.0.0.1:9", PYTHONPATH=os.path.dirname(libzarr.__file__))
    start = time.monotonic()
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    took = time.monotonic() - start
    text = out.stdout + out.stderr
    assert "ZARR_ERR_UNREACHABLE" in text and "s3://zarr-test/nowhere" in text, text
    assert took < 20, f"{took:.1f} s to fail"


def options_error(location, options, status, naming):
    with pytest.raises(libzarr.LibzarrError) as e:
        with libzarr.Store.open_options(location, "r", options) as store, store.open_array("") as arr:
            arr.read()
    assert e.value.name == status and naming in e.value.message, (e.value.name, e.value.message)


def test_store_options_override_the_environment(tmp_path):
    """Explicit credentials, anonymous reads of the public bucket (and not of the private one), a request
    timeout, and an AWS profile from the shared files named in the options."""
    p = remote_cases.prefix("options")
    z = zarr.open_array(zpy_store(p), mode="w", shape=(12,), chunks=(5,), dtype="int16", zarr_format=3)
    z[...] = np.arange(12) - 6
    url = f"s3://{BUCKET}/{p}"
    with libzarr.Store.open_options(url, "r", {"access_key_id": KEY, "secret_access_key": SECRET,
                                               "requests_in_flight": 2}) as store, store.open_array("") as arr:
        assert arr.read().tolist() == list(range(-6, 6))
    options_error(url, {"access_key_id": KEY, "secret_access_key": "wrong"}, "ZARR_ERR_PERMISSION_DENIED", "403")
    options_error(url, {"anonymous": True}, "ZARR_ERR_PERMISSION_DENIED", url)
    # The public bucket: written with credentials, read anonymously.
    public = zarr.storage.ObjectStore(S3Store("public", prefix=p, endpoint=ENDPOINT, access_key_id=KEY,
                                              secret_access_key=SECRET, region="us-east-1",
                                              client_options={"allow_http": True}))
    zarr.open_array(public, mode="w", shape=(3,), chunks=(3,), dtype="uint8", zarr_format=3)[...] = [7, 8, 9]
    with libzarr.Store.open_options(f"s3://public/{p}", "r", {"anonymous": True}) as store, \
            store.open_array("") as arr:
        assert arr.read().tolist() == [7, 8, 9]
    # A server that accepts connections and never answers: a timeout, quickly.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    start = time.monotonic()
    options_error(f"s3://{BUCKET}/x", {"endpoint": f"http://127.0.0.1:{port}", "timeout_seconds": 0.3,
                                       "retries": 1}, "ZARR_ERR_TIMEOUT", "x")
    assert time.monotonic() - start < 10
    silent.close()
    # A profile from the shared files named in the options wins over the environment's keys.
    (tmp_path / "credentials").write_text(f"[good]\naws_access_key_id = {KEY}\naws_secret_access_key = {SECRET}\n"
                                          f"[bad]\naws_access_key_id = {KEY}\naws_secret_access_key = nope\n")
    os.environ["AWS_SHARED_CREDENTIALS_FILE"] = str(tmp_path / "credentials")
    try:
        with libzarr.Store.open_options(url, "r", {"profile": "good"}) as store, store.open_array("") as arr:
            assert arr.read().tolist() == list(range(-6, 6))
        options_error(url, {"profile": "bad"}, "ZARR_ERR_PERMISSION_DENIED", "403")
        options_error(url, {"profile": "nobody"}, "ZARR_ERR_INVALID_ARGUMENT", "nobody")
    finally:
        del os.environ["AWS_SHARED_CREDENTIALS_FILE"]
