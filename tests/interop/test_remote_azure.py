"""libzarr and zarr-python 3 sharing a container of Azurite (the Azure Blob emulator, started by scripts/test.sh on
127.0.0.1): zarr-python writes through its obstore-backed ObjectStore (obstore's AzureStore) and libzarr reads
through `az://` URLs, and the reverse, for a v2 array and a v3 sharded array in a group, with consolidated
metadata. libzarr is configured by AZURE_STORAGE_CONNECTION_STRING, as Azure users configure their tools. Skipped
without the server (LIBZARR_TEST_AZURE_ENDPOINT unset) unless LIBZARR_REMOTE_TESTS=required.
"""
import os

import pytest

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("zarr-python 2 has no obstore store", allow_module_level=True)
obstore = pytest.importorskip("obstore")
ENDPOINT = os.environ.get("LIBZARR_TEST_AZURE_ENDPOINT")
if ENDPOINT is None:
    if os.environ.get("LIBZARR_REMOTE_TESTS") == "required":
        raise RuntimeError("LIBZARR_TEST_AZURE_ENDPOINT is not set: start the servers (scripts/servers.sh)")
    pytest.skip("no Azure server (scripts/test.sh starts Azurite)", allow_module_level=True)

from obstore.store import AzureStore  # noqa: E402
import remote_cases  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning")]
os.environ["AZURE_STORAGE_CONNECTION_STRING"] = os.environ["LIBZARR_TEST_AZURE_CONNECTION_STRING"]
ACCOUNT = "devstoreaccount1"
KEY = dict(p.split("=", 1) for p in os.environ["LIBZARR_TEST_AZURE_CONNECTION_STRING"].split(";") if p)["AccountKey"]
CONTAINER = "zarr-test"


def zpy_store(prefix, read_only=False):
    azure = AzureStore(CONTAINER, prefix=prefix, account_name=ACCOUNT, account_key=KEY, endpoint=ENDPOINT,
                       client_options={"allow_http": True})
    return zarr.storage.ObjectStore(azure, read_only=read_only)


def url(p):
    return f"az://{CONTAINER}/{p}"


def test_libzarr_reads_what_zarr_python_wrote():
    remote_cases.libzarr_reads_what_zarr_python_wrote(zpy_store, url, remote_cases.prefix("zpy"))


def test_zarr_python_reads_what_libzarr_wrote():
    remote_cases.zarr_python_reads_what_libzarr_wrote(zpy_store, url, remote_cases.prefix("lz"))
