"""The real-world corpus: stores written by real tools (xarray with zarr-python 2 and 3, zarr-python 2.6's
NestedDirectoryStore, GDAL, netCDF-C, TensorStore), made by `scripts/corpus.sh DIR` together with what each
tool itself reads back (`STORE.expected.json`, see tests/corpus/expected.py), read by libzarr over three
transports:
  * the directory itself;
  * nginx without autoindex (a copy under $LIBZARR_TEST_HTTP_ROOT, read through $LIBZARR_TEST_HTTP_URL);
  * SeaweedFS' S3 API ($LIBZARR_TEST_S3_ENDPOINT; each store uploaded key for key with zarr_store_copy).
For every store and transport, every array's shape, data type, dimension names, attributes and values, and the
groups' attributes, must be what the writer read. Attributes the writer consumes itself (GDAL's `_CRS`,
netCDF-C's `_NCZARR_ATTR`, `_ARRAY_DIMENSIONS` where the writer reports dimensions instead) are named in the
expected file and left out of the comparison; "no dimension names" and "every dimension unnamed" are the same.

The request budget: through scripts/http_proxy.py in front of nginx and in front of SeaweedFS, opening a
consolidated store, opening one array and reading its first chunk takes at most 4 requests and no listing.
The counts of every store (consolidated or not) are printed at the end of the run and written to
$LIBZARR_CORPUS/request-counts.json.

Needs only NumPy and the binding. Skipped when LIBZARR_CORPUS is not set (scripts/test.sh sets it); with it
set, missing servers or an empty corpus fail.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

if not os.environ.get("LIBZARR_CORPUS"):
    pytest.skip("LIBZARR_CORPUS is not set: write the corpus with scripts/corpus.sh DIR and set it to DIR "
                "(scripts/test.sh does both)", allow_module_level=True)

import libzarr  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ["LIBZARR_CORPUS"]).resolve()
SUFFIX = ".expected.json"
CASES = sorted(CORPUS.glob(f"*/*{SUFFIX}"))
BUCKET = "zarr-test"
PREFIX = f"corpus-{os.getpid()}"
BUDGET = 4  # requests to open a consolidated store, open one array and read one chunk
COUNTS = {}  # case id -> transport -> what the proxy counted


def case_id(path):
    return f"{path.parent.name}/{path.name[:-len(SUFFIX)]}"


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def server_env(*names):
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        pytest.fail(f"{', '.join(missing)} not set: start the test servers (scripts/servers.sh) before "
                    f"running the corpus tests", pytrace=False)
    return [os.environ[n] for n in names]


@pytest.fixture(scope="session")
def http_base():
    """The corpus copied under nginx's root; its URL."""
    url, root = server_env("LIBZARR_TEST_HTTP_URL", "LIBZARR_TEST_HTTP_ROOT")
    dest = Path(root) / PREFIX
    shutil.copytree(CORPUS, dest, ignore=shutil.ignore_patterns("*.tif", "*.nc", "*.cdl"))
    # Published for nginx's worker (another user): netCDF-C makes its directories 0750 and files 0640.
    for directory, _, files in os.walk(dest):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(os.path.join(directory, name), 0o644)
    yield f"{url}/{PREFIX}"
    shutil.rmtree(dest, ignore_errors=True)


@pytest.fixture(scope="session")
def s3_base():
    """Every store uploaded to the bucket with zarr_store_copy (all its keys, verbatim); the URL of the copy."""
    endpoint, key, secret = server_env("LIBZARR_TEST_S3_ENDPOINT", "LIBZARR_TEST_S3_KEY", "LIBZARR_TEST_S3_SECRET")
    # libzarr reads the AWS variables when it opens an s3:// store.
    os.environ.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret,
                      AWS_REGION="us-east-1")
    base = f"s3://{BUCKET}/{PREFIX}"
    for case in CASES:
        local = case.parent / case.name[:-len(SUFFIX)]
        files = sorted(str(p.relative_to(local)) for p in local.rglob("*") if p.is_file())
        with libzarr.open_store(str(local), "r") as src, libzarr.open_store(f"{base}/{case_id(case)}", "a") as dst:
            src.copy("", dst, "")
            uploaded = sorted(dst.list_keys(""))
        assert uploaded == files, (case_id(case), sorted(set(files) ^ set(uploaded)))
    yield base
    with libzarr.open_store(base, "a") as store:
        store.rmdir("")


class Proxy:
    """scripts/http_proxy.py in front of `upstream`, counting requests."""

    def __init__(self, upstream, workdir):
        port_file = workdir / f"proxy-{upstream.rsplit(':', 1)[-1]}.port"
        self.proc = subprocess.Popen([sys.executable, str(REPO / "scripts" / "http_proxy.py"), "--upstream",
                                      upstream, "--port-file", str(port_file)])
        for _ in range(200):
            if port_file.exists():
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"http_proxy.py exited with {self.proc.returncode}")
            time.sleep(0.05)
        else:
            self.close()
            raise RuntimeError("http_proxy.py wrote no port within 10 s")
        self.url = f"http://127.0.0.1:{int(port_file.read_text())}"

    def control(self, method, what):
        with urllib.request.urlopen(urllib.request.Request(f"{self.url}/__proxy__/{what}", method=method),
                                    timeout=10) as reply:
            return json.loads(reply.read())

    def close(self):
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def proxies(tmp_path_factory, request):
    """Proxies in front of nginx and SeaweedFS; prints (and saves) the counts when the module is done."""
    workdir = tmp_path_factory.mktemp("proxies")
    (http,), (s3,) = server_env("LIBZARR_TEST_HTTP_URL"), server_env("LIBZARR_TEST_S3_ENDPOINT")
    made = {}
    try:
        for name, upstream in (("nginx", http), ("s3", s3)):
            made[name] = Proxy(upstream, workdir)
        request.config.pluginmanager.register(CountsReport(), "corpus-request-counts")
        yield made
    finally:
        for proxy in made.values():
            proxy.close()


class CountsReport:
    """Prints the request counts in pytest's closing summary (and saves them)."""

    def pytest_terminal_summary(self, terminalreporter):
        if COUNTS:
            for line in counts_table():
                terminalreporter.write_line(line)
            (CORPUS / "request-counts.json").write_text(json.dumps(COUNTS, indent=1, sort_keys=True))


def counts_table():
    def cell(c):
        if c is None:
            return "-"
        if "error" in c:
            return c["error"]
        methods = " ".join(f"{m} {n}" for m, n in sorted(c["by_method"].items()))
        return f"{c['requests']} ({methods}, {c['lists']} lists)"

    lines = [f"Requests to open the store, open one array and read its first chunk (at most {BUDGET} and no "
             "listing for consolidated stores):",
             f"  {'store':<32} {'consolidated':<13} {'nginx':<22} {'s3':<22}"]
    for case in sorted(COUNTS):
        row = COUNTS[case]
        lines.append(f"  {case:<32} {str(row['consolidated']):<13} {cell(row.get('nginx')):<22} "
                     f"{cell(row.get('s3')):<22}")
    return lines


def location(transport, case, request):
    if transport == "directory":
        return str(case.parent / case.name[:-len(SUFFIX)])
    base = request.getfixturevalue("http_base" if transport == "nginx" else "s3_base")
    return f"{base}/{case_id(case)}"


def same(a, b):
    """JSON values equal, NaN equal to NaN, 1 equal to 1.0 (as JSON does not tell them apart)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return type(a) in (int, float) and type(b) in (int, float) and a == b or type(a) is type(b) and a == b


def attributes(node, ignored):
    return {k: v for k, v in node.attrs().items() if k not in set(ignored)}


def unnamed(names, ndim):
    """None for "no dimension names": libzarr's None, or a list of Nones."""
    return None if names is None or names == [None] * ndim else names


def read_values(arr, dtype, shape):
    """The whole array through libzarr, as the expected file writes it (see tests/corpus/expected.py)."""
    if dtype == "|O":
        items = [b.decode("utf-8") for b in arr.read_vlen()]
        return np.array(items, dtype=object).reshape(shape) if items else np.empty(shape, object)
    got = arr.read()
    if got.dtype.kind == "S":
        return np.vectorize(lambda b: b.decode("latin-1"), otypes=[object])(got)
    return got


def compare_array(store, want, zarr_format, problems):
    path = want["path"]
    with store.open_array(path) as arr:
        if arr.zarr_format != zarr_format:
            problems.append(f"{path}: opened as Zarr v{arr.zarr_format}, written as v{zarr_format}")
        shape = list(arr.shape)
        if shape != want["shape"]:
            problems.append(f"{path}: shape {shape}, the writer read {want['shape']}")
            return
        dtype = arr.dtype_string
        if dtype != want["dtype"]:
            problems.append(f"{path}: data type {dtype}, the writer read {want['dtype']}")
        names = unnamed(arr.dimension_names, len(shape))
        if names != unnamed(want["dimension_names"], len(shape)):
            problems.append(f"{path}: dimension names {arr.dimension_names}, the writer read "
                            f"{want['dimension_names']}")
        attrs = attributes(arr, want["ignored_attributes"])
        if not same(attrs, want["attributes"]):
            problems.append(f"{path}: attributes {attrs}, the writer read {want['attributes']}")
        got = read_values(arr, want["dtype"], want["shape"])
        if want["dtype"] == "|O" or got.dtype.kind in "OS":
            expected = np.array(want["values"], dtype=object).reshape(want["shape"])
            ok = got.shape == expected.shape and got.tolist() == expected.tolist()
        else:
            expected = np.array(want["values"], dtype=np.dtype(want["dtype"]).newbyteorder("="))
            ok = np.array_equal(got, expected, equal_nan=got.dtype.kind in "fc")
        if not ok:
            if got.shape != expected.shape:
                problems.append(f"{path}: {got.shape} values read, the writer read {expected.shape}")
                return
            differ = got != expected
            if got.dtype.kind in "fc":
                differ &= ~(np.isnan(got) & np.isnan(expected))
            at = [tuple(i) for i in np.argwhere(differ)[:3].tolist()]
            problems.append(f"{path}: {int(differ.sum())} values differ from what the writer read, first at "
                            + ", ".join(f"{i}: {got[i]!r} instead of {expected[i]!r}" for i in at))


@pytest.mark.parametrize("transport", ["directory", "nginx", "s3"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_reads_what_the_writer_reads(case, transport, request):
    want = load(case)
    problems = []
    with libzarr.open_store(location(transport, case, request), "r") as store:
        for group in want["groups"]:
            try:
                with store.open_group(group["path"]) as g:
                    attrs = attributes(g, group["ignored_attributes"])
                    if not same(attrs, group["attributes"]):
                        problems.append(f"group {group['path']!r}: attributes {attrs}, the writer read "
                                        f"{group['attributes']}")
            except libzarr.LibzarrError as e:
                problems.append(f"group {group['path']!r}: {e.name}: {e.message}")
        for array in want["arrays"]:
            try:
                compare_array(store, array, want["zarr_format"], problems)
            except libzarr.LibzarrError as e:
                problems.append(f"{array['path']}: {e.name}: {e.message}")
    assert not problems, f"{want['writer']}, {case_id(case)} over {transport}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("transport", ["nginx", "s3"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_request_budget(case, transport, proxies, request):
    want = load(case)
    proxy = proxies[transport]
    url = location(transport, case, request)  # uploads first, so that only the reads are counted
    options = None
    if transport == "nginx":
        url = url.replace(os.environ["LIBZARR_TEST_HTTP_URL"], proxy.url, 1)
    else:
        options = {"endpoint": proxy.url}
    array = next(a for a in want["arrays"] if a["path"] == want["budget_array"])
    proxy.control("POST", "reset")
    error = None
    try:
        with libzarr.Store.open_options(url, "r", options) as store, store.open_array(array["path"]) as arr:
            chunks = arr.chunks
            arr.read([0] * len(chunks), [min(c, s) for c, s in zip(chunks, array["shape"])])
    except libzarr.LibzarrError as e:
        error = f"{e.name}: {e.message}"
    stats = proxy.control("GET", "stats?targets=1")
    row = COUNTS.setdefault(case_id(case), {"consolidated": want["consolidated"]})
    row[transport] = {k: stats[k] for k in ("requests", "by_method", "lists", "targets")}
    if error:
        row[transport]["error"] = error.split(":")[0]
    assert error is None, f"{case_id(case)} over {transport} through the proxy: {error}"
    if want["consolidated"]:  # the others' counts are only reported
        assert stats["lists"] == 0, f"listed: {stats['targets']}"
        assert stats["requests"] <= BUDGET, \
            f"{stats['requests']} requests for {array['path']} (budget {BUDGET}): {stats['targets']}"


def test_the_corpus_is_there():
    """All six writers' stores are in the corpus (scripts/corpus.sh writes them)."""
    writers = {p.parent.name for p in CASES}
    assert writers >= {"xarray-zarr2", "xarray-zarr3", "zarr26", "gdal", "netcdf", "tensorstore"}, \
        f"{CORPUS} has stores of {sorted(writers)} only: run scripts/corpus.sh {CORPUS}"
