"""The support matrix: every Zarr v3 feature libzarr lists (zarr_features: data types, codecs, chunk grids, chunk
key encodings) against every peer (zarr-python, zarrs through zarrs-python's strict codec pipeline, TensorStore),
in both directions, recorded in tests/interop/support-results.json, from which
scripts/generate-support-matrix.py writes docs/support-matrix.md.

For each feature there is one small case (the tables DATA_TYPES, CODECS, CHUNK_GRIDS and CHUNK_KEY_ENCODINGS: a
zarr.json document and seeded values; mostly a 7 x 5 array in 4 x 3 chunks, so that the edge chunks are partial);
a feature libzarr lists without a case fails the test. libzarr writes each case and reads it back ("libzarr" in
the results). Then for each peer:

* "peer_writes": the peer writes the case and libzarr reads it. zarr-python (and zarrs) take the document through
  zarr-python (`ArrayV3Metadata.from_dict`), store zarr-python's own serialisation of it as zarr.json, open the
  array and write the values (zarrs' Rust pipeline encodes the chunks); TensorStore creates the array from the
  document (writing its own zarr.json) and writes the values (records one field at a time, TensorStore's
  `field`). The peer must read back what it wrote; libzarr must then read the same values.
* "peer_reads": libzarr creates the array from the same document and writes the values (and reads them back);
  the peer opens it and must read the same values.

Each (feature, peer, direction) is recorded as:
* "yes": the values are equal (bitwise for numbers; any NaN equals any NaN);
* "no: <gist>": the peer refuses the case (its exception's class and the gist of its message) or reads back
  other values than it wrote;
* "libzarr: <gist>": libzarr fails (a libzarr bug: it lists the feature);
* "differ: <what>": both sides work but read other values; each one found is looked into and, when it is the
  peer's fault, named in PEER_BUGS (then recorded as "no: <reason>").

zarrs runs under `codec_pipeline.strict`, so that zarrs-python never falls back to zarr-python's own pipeline,
and every zarrs step checks that the array's pipeline really is zarrs' (check_zarrs, as test_v3_zarrs.py).
zarrs-python takes the array metadata through zarr-python, so a document zarr-python cannot parse is refused
for zarrs too (the reason then is zarr-python's). zarr-python's rectilinear grids are experimental: every
zarr-python and zarrs step sets `array.rectilinear_chunks`. zarr-python 3.4 has two `cast_value` codecs, its own
(which needs the `cast-value-rs` package, not installed) and the `cast-value` plugin's; the steps name the
plugin's in zarr-python's config, as test_v3_cast_value.py does. TensorStore runs in a worker process of its own,
because some documents make it abort the process (a failed CHECK): that is recorded as its refusal and the worker
is started again.

The results are computed live and compared with the committed file: any difference (a peer or libzarr changed,
a feature was added) fails, saying to regenerate with LIBZARR_SUPPORT_RESULTS_WRITE=1 (the test then writes the
file instead of comparing), then scripts/generate-support-matrix.py for the document. Reasons are kept stable:
one line, paths and addresses removed, TensorStore's source locations dropped, at most GIST_LENGTH characters.

Runs only with zarr-python 3.4 or later (the zarr3-newest flavour), zarrs, tensorstore and cast-value.
"""
import base64
import contextlib
import difflib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("Zarr v3 needs zarr-python 3", allow_module_level=True)
try:
    from zarr.core.metadata.v3 import RectilinearChunkGridMetadata  # noqa: F401
except ImportError:
    pytest.skip(f"the support matrix is made with the zarr3-newest flavour (zarr-python {zarr.__version__} has no "
                f"rectilinear chunk grids)", allow_module_level=True)
zarrs = pytest.importorskip("zarrs")
ts = pytest.importorskip("tensorstore")
pytest.importorskip("cast_value")

import numpy as np  # noqa: E402
from zarr.core.buffer import default_buffer_prototype  # noqa: E402
from zarr.core.metadata.v3 import ArrayV3Metadata  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning"),
              pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]
pytest.register_assert_rewrite("v3cases")
import libzarr  # noqa: E402
import ml_dtypes  # noqa: E402  (TensorStore's dependency: NumPy types for the small types)
from v3cases import DType, random_values, same_elements  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "support-results.json"
WRITE = os.environ.get("LIBZARR_SUPPORT_RESULTS_WRITE") == "1"
PEERS = ("zarr-python", "zarrs", "tensorstore")
DIRECTIONS = ("peer_writes", "peer_reads")
GIST_LENGTH = 160
SHAPE, CHUNKS = (7, 5), (4, 3)

_CAST_VALUE = next(iter(importlib.metadata.entry_points(group="zarr.codecs", name="cast_value"))).load()
ZPY_CONFIG = {"array.rectilinear_chunks": True,
              "codecs.cast_value": f"{_CAST_VALUE.__module__}.{_CAST_VALUE.__qualname__}"}
ZARRS_CONFIG = dict(ZPY_CONFIG, **{"codec_pipeline.path": "zarrs.ZarrsCodecPipeline", "codec_pipeline.strict": True})

# Mismatches looked into and found to be the peer's doing: (feature kind, name, peer, direction) -> reason.
PEER_BUGS = {}


# ---------------------------------------------------------------- the cases
LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
ONE = {"name": "bytes"}
CRC32C = {"name": "crc32c"}


def nc(name, **conf):
    return {"name": f"numcodecs.{name}", "configuration": conf}


def fixed(name, length):
    return {"name": name, "configuration": {"length_bytes": length}}


def time(name, unit, scale):
    return {"name": name, "configuration": {"unit": unit, "scale_factor": scale}}


def regular(*chunk_shape):
    return {"name": "regular", "configuration": {"chunk_shape": list(chunk_shape)}}


def key_encoding(name, separator):
    return {"name": name, "configuration": {"separator": separator}}


def b64(raw):
    return base64.standard_b64encode(raw).decode()


class Case:
    """One feature's array: its zarr.json and its values (`kind`: "fixed" numpy values, "text" str objects,
    "bytes" bytes objects)."""

    def __init__(self, data_type, codecs, fill, numpy=None, kind="fixed", shape=SHAPE, chunk_grid=None,
                 key=("default", "/"), values=None):
        self.data_type, self.codecs, self.fill, self.kind = data_type, codecs, fill, kind
        self.numpy = numpy if numpy is not None else data_type
        self.shape = tuple(shape)
        self.chunk_grid = chunk_grid or regular(*CHUNKS)
        self.key = key
        self._values = values

    def doc(self):
        return json.loads(json.dumps({
            "zarr_format": 3, "node_type": "array", "shape": list(self.shape), "data_type": self.data_type,
            "chunk_grid": self.chunk_grid, "chunk_key_encoding": key_encoding(*self.key),
            "fill_value": self.fill, "codecs": self.codecs, "attributes": {}, "storage_transformers": []}))

    def values(self, seed):
        rng = np.random.default_rng(seed)
        if self._values is not None:
            return self._values(rng, self.shape)
        if self.kind == "bytes":
            out = np.empty(self.shape, object)
            for idx in np.ndindex(*self.shape):
                out[idx] = bytes(rng.integers(0, 256, int(rng.integers(0, 9)), dtype=np.uint8))
            out.reshape(-1)[0] = b""
            out.reshape(-1)[1] = b"a\x00b"
            return out
        if self.kind == "text":
            return random_values(DType("string", "string", "O", (), ""), self.shape, rng)
        return random_values(DType("x", None, self.numpy, (), None), self.shape, rng)


def ints(dtype, lo, hi):
    return lambda rng, shape: rng.integers(lo, hi, shape).astype(dtype)


def steps(dtype, step, offset=0.0, lo=-1000, hi=1000):
    """offset + k * step for random integers k: values that pass exactly through lossy-looking codecs."""
    return lambda rng, shape: (offset + rng.integers(lo, hi, shape) * step).astype(dtype)


def bools(rng, shape):
    return rng.integers(0, 2, shape).astype(bool)


def int_bytes(dtype):
    return LE if np.dtype(dtype).itemsize > 1 else ONE


STRUCT_FIELDS = [("a", "int32", "<i4"), ("b", "float64", "<f8"), ("c", "uint8", "|u1")]

DATA_TYPES = {
    "bool": Case("bool", [ONE], False, "|b1"),
    **{name: Case(name, [int_bytes(np.dtype(name))], 0, np.dtype(name).str)
       for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")},
    **{name: Case(name, [LE], 0.0, np.dtype(name).str) for name in ("float16", "float32", "float64")},
    **{name: Case(name, [LE], [0.0, 0.0], np.dtype(name).str) for name in ("complex64", "complex128")},
    "string": Case("string", [{"name": "vlen-utf8"}], "", kind="text"),
    "bytes": Case("bytes", [{"name": "vlen-bytes"}], "", kind="bytes"),
    "variable_length_bytes": Case("variable_length_bytes", [{"name": "vlen-bytes"}], "", kind="bytes"),
    "fixed_length_utf32": Case(fixed("fixed_length_utf32", 12), [LE], "", "<U3"),
    "null_terminated_bytes": Case(fixed("null_terminated_bytes", 4), [ONE], "", "|S4"),
    "raw_bytes": Case(fixed("raw_bytes", 3), [ONE], b64(bytes(3)), "|V3"),
    "numpy.datetime64": Case(time("numpy.datetime64", "s", 1), [LE], 0, "<M8[s]"),
    "numpy.timedelta64": Case(time("numpy.timedelta64", "ms", 10), [LE], 0, "<m8[10ms]"),
    "struct": Case({"name": "struct", "configuration": {"fields": [{"name": n, "data_type": t}
                                                                   for n, t, _ in STRUCT_FIELDS]}},
                   [LE], {n: 0 for n, _, _ in STRUCT_FIELDS}, [[n, d] for n, _, d in STRUCT_FIELDS]),
    "structured": Case({"name": "structured", "configuration": {"fields": [[n, t] for n, t, _ in STRUCT_FIELDS]}},
                       [ONE], b64(bytes(13)), [[n, d] for n, _, d in STRUCT_FIELDS]),
    "r*": Case("r16", [ONE], [0, 0], "|V2"),
}


def small_values(name):
    """Random values of a zarr-extensions small type (as ml_dtypes holds them): any code but NaNs for the floats
    (NaN payloads are not what this compares), any value for the integers."""
    dtype = np.dtype(getattr(ml_dtypes, name))
    if name in libzarr.SMALL_TYPES and name[0] in "iu":
        info = ml_dtypes.iinfo(dtype)

        def ints_of(rng, shape):
            return rng.integers(int(info.min), int(info.max) + 1, shape).astype(np.dtype(f"{name[0]}1")).view(dtype)
        return ints_of
    bits = dtype.itemsize * 8 if not name.startswith(("float6", "float4")) else int(name[5])
    codes = np.dtype("<u2" if dtype.itemsize == 2 else "u1")

    def floats_of(rng, shape):
        values = rng.integers(0, 2 ** bits, shape).astype(codes).view(dtype)
        values[np.isnan(values.astype(np.float32))] = dtype.type(1.0)
        return values
    return floats_of


SMALL_TYPES = {name: Case(name, [LE if name == "bfloat16" else ONE], 1.0 if name.startswith("float8_e8m0") else
                          (0 if name[0] in "iu" else 0.0), np.dtype(getattr(ml_dtypes, name)),
                          values=small_values(name))
               for name in libzarr.SMALL_TYPES}
DATA_TYPES.update(SMALL_TYPES)


def sharding(inner, codecs, index_codecs=(LE, CRC32C), location="end"):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs, "index_codecs": list(index_codecs),
        "index_location": location}}


I32 = ints("<i4", -2**31, 2**31)
CODECS = {
    "transpose": Case("int16", [{"name": "transpose", "configuration": {"order": [1, 0]}}, LE], 0, "<i2"),
    "bitround": Case("float32", [{"name": "bitround", "configuration": {"keepbits": 10}}, LE], 0.0, "<f4",
                     values=steps("<f4", 0.125)),
    "scale_offset": Case("float64", [{"name": "scale_offset", "configuration": {"offset": 1.5, "scale": 4}}, LE],
                         1.5, "<f8", values=steps("<f8", 0.25, 1.5)),
    "cast_value": Case("float64", [{"name": "cast_value", "configuration": {"data_type": "int16"}}, LE], 0.0,
                       "<f8", values=steps("<f8", 1.0, lo=-32768, hi=32768)),
    "bytes": Case("int32", [BE], 0, "<i4", values=I32),
    "packbits": Case("bool", [{"name": "packbits", "configuration": {"padding_encoding": "first_byte"}}], False,
                     "|b1", values=bools),
    "vlen-utf8": Case("string", [{"name": "vlen-utf8"}], "", kind="text"),
    "vlen-bytes": Case("variable_length_bytes", [{"name": "vlen-bytes"}], "", kind="bytes"),
    "sharding_indexed": Case("int32", [sharding((2, 3), [LE, {"name": "zstd", "configuration": {"level": 3}}])], 0,
                             "<i4", shape=(7, 10), chunk_grid=regular(4, 6), values=I32),
    "gzip": Case("int32", [LE, {"name": "gzip", "configuration": {"level": 5}}], 0, "<i4", values=I32),
    "zstd": Case("int32", [LE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}], 0, "<i4",
                 values=I32),
    "blosc": Case("int32", [LE, {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}], 0, "<i4", values=I32),
    "crc32c": Case("int32", [LE, CRC32C], 0, "<i4", values=I32),
    "numcodecs.delta": Case("int16", [nc("delta", dtype="<i2"), LE], 0, "<i2"),
    "numcodecs.fixedscaleoffset": Case("float32", [nc("fixedscaleoffset", offset=1.5, scale=4, dtype="<f4",
                                                      astype="<i2"), LE], 1.5, "<f4", values=steps("<f4", 0.25, 1.5)),
    "numcodecs.quantize": Case("float64", [nc("quantize", digits=3, dtype="<f8"), LE], 0.0, "<f8",
                               values=steps("<f8", 1 / 1024)),
    "numcodecs.bitround": Case("float32", [nc("bitround", keepbits=10), LE], 0.0, "<f4", values=steps("<f4", 0.125)),
    "numcodecs.astype": Case("float64", [nc("astype", encode_dtype="<f4", decode_dtype="<f8"), LE], 0.0, "<f8",
                             values=steps("<f8", 0.5)),
    "numcodecs.packbits": Case("bool", [nc("packbits"), ONE], False, "|b1", values=bools),
    "numcodecs.zlib": Case("int32", [LE, nc("zlib", level=1)], 0, "<i4", values=I32),
    "numcodecs.gzip": Case("int32", [LE, nc("gzip", level=5)], 0, "<i4", values=I32),
    "numcodecs.zstd": Case("int32", [LE, nc("zstd", level=3)], 0, "<i4", values=I32),
    "numcodecs.blosc": Case("int32", [LE, nc("blosc", cname="zstd", clevel=5, shuffle=1, blocksize=0)], 0, "<i4",
                            values=I32),
    "numcodecs.lz4": Case("int32", [LE, nc("lz4", acceleration=1)], 0, "<i4", values=I32),
    "numcodecs.bz2": Case("int32", [LE, nc("bz2", level=5)], 0, "<i4", values=I32),
    "numcodecs.lzma": Case("int32", [LE, nc("lzma", preset=1)], 0, "<i4", values=I32),
    "numcodecs.base64": Case("int32", [LE, nc("base64")], 0, "<i4", values=I32),
    "numcodecs.pcodec": Case("int32", [nc("pcodec", level=8, mode_spec="auto", delta_spec="auto",
                                          paging_spec="equal_pages_up_to", delta_encoding_order=None,
                                          equal_pages_up_to=262144)], 0, "<i4", values=I32),
    "numcodecs.zfpy": Case("int32", [nc("zfpy", mode=4, tolerance=-1, rate=-1, precision=-1)], 0, "<i4",
                           values=I32),
    "zfp": Case("int32", [{"name": "zfp", "configuration": {"mode": "reversible"}}], 0, "<i4", values=I32),
    "numcodecs.shuffle": Case("int32", [LE, nc("shuffle", elementsize=4)], 0, "<i4", values=I32),
    "numcodecs.crc32": Case("int32", [LE, nc("crc32")], 0, "<i4", values=I32),
    "numcodecs.crc32c": Case("int32", [LE, nc("crc32c")], 0, "<i4", values=I32),
    "numcodecs.adler32": Case("int32", [LE, nc("adler32")], 0, "<i4", values=I32),
    "numcodecs.fletcher32": Case("int32", [LE, nc("fletcher32")], 0, "<i4", values=I32),
    "numcodecs.jenkins_lookup3": Case("int32", [LE, nc("jenkins_lookup3")], 0, "<i4", values=I32),
}

CHUNK_GRIDS = {
    "regular": Case("int16", [LE], 0, "<i2"),
    "rectilinear": Case("int16", [LE], 0, "<i2", chunk_grid={
        "name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[3, 4], [[2, 2], 1]]}}),
}

CHUNK_KEY_ENCODINGS = {
    "default /": Case("int16", [LE], 0, "<i2", key=("default", "/")),
    "default .": Case("int16", [LE], 0, "<i2", key=("default", ".")),
    "v2 .": Case("int16", [LE], 0, "<i2", key=("v2", ".")),
    "v2 /": Case("int16", [LE], 0, "<i2", key=("v2", "/")),
}

# zarr_features list -> (the cases, how a listed name maps to case names)
KINDS = {
    "data_types": (DATA_TYPES, lambda name: [name]),
    "codecs": (CODECS, lambda name: [name]),
    "chunk_grids": (CHUNK_GRIDS, lambda name: [name]),
    "chunk_key_encodings": (CHUNK_KEY_ENCODINGS, lambda name: [f"{name} /", f"{name} ."]),
}


# ---------------------------------------------------------------- reasons
# exceptions raised without a message: what they mean
SILENT = {"UnsupportedDataTypeError": "zarrs-python leaves NumPy kinds V, S, U, M, m, O and T to zarr-python's "
                                     "pipeline (no fallback in strict mode)"}


def gist(e, root):
    """A stable one-line reason of an exception: its class (libzarr: its status) and the start of its message
    (of its cause when it has none)."""
    if isinstance(e, libzarr.LibzarrError):
        return gist_of(e.name, e.message, root)
    name, text = type(e).__name__, str(e)
    if not text.strip() and e.__cause__ is not None:
        return f"{name} ({gist(e.__cause__, root)})"
    return gist_of(name, text or SILENT.get(name, ""), root)


def ts_path(text):
    """TensorStore's nested 'Error parsing object member "codecs": Error parsing value at position 1: ...'
    as 'codecs[1]...: ...', without the driver, file and status around it (the same for both directions)."""
    text = re.sub(r"^[A-Z_]+: ", "", text)
    text = re.sub(r'Error opening "zarr3" driver: |Error (reading|writing) local file "[^"]*": ', "", text)
    path = []
    while True:
        m = re.match(r'Error parsing object member "([^"]*)": |Error parsing value at position (\d+): ', text)
        if not m:
            break
        path.append(f".{m.group(1)}" if m.group(1) is not None else f"[{m.group(2)}]")
        text = text[m.end():]
    path = "".join(path).lstrip(".")
    path = path[len("metadata."):] if path.startswith("metadata.") else path
    text = re.sub(r"(is not one of the supported data types): .*", r"\1", text)
    return f"{path}: {text}" if path else text


def gist_of(name, text, root):
    """`name: text` on one line: the first sentence, without paths, addresses or TensorStore's source locations
    and spec, cut to GIST_LENGTH characters."""
    text = re.sub(r"\s*\[(source locations|tensorstore_spec)=.*", "", text, flags=re.S)
    text = ts_path(" ".join(text.split()))
    text = re.split(r"\.\s+(?=[A-Z(])", text)[0]
    text = text.replace(str(root), "<store>")
    text = re.sub(r"(/[\w.+-]+){2,}/?", "<path>", text)
    text = re.sub(r"0x[0-9a-fA-F]{6,}", "0x...", text)
    if len(text) > GIST_LENGTH:
        text = text[:GIST_LENGTH - 3].rstrip() + "..."
    return f"{name}: {text}" if text else name


class HarnessError(Exception):
    """Something that must hold whatever the peers support (zarrs really ran): fails the test."""


class Refused(Exception):
    """A step failed: `who` is "no" (the peer) or "libzarr"."""

    def __init__(self, who, reason):
        super().__init__(f"{who}: {reason}")
        self.who, self.reason = who, reason


@contextlib.contextmanager
def step(who, root):
    try:
        yield
    except (Refused, HarnessError):
        raise
    except Exception as e:  # noqa: BLE001 - any failure of the step is recorded
        raise Refused(who, gist(e, root)) from e


def mismatch(actual, expected):
    """None when `actual` holds the expected values, else a short description."""
    actual = np.asarray(actual)
    if actual.shape != expected.shape:
        return f"shape {actual.shape}, not {expected.shape}"
    if expected.dtype.kind == "O":
        if actual.dtype.kind == "T":
            actual = actual.astype(object)
        bad = np.array([a != e for a, e in zip(actual.reshape(-1), expected.reshape(-1))]).reshape(expected.shape)
    else:
        if actual.dtype.newbyteorder("=") != expected.dtype.newbyteorder("="):
            return f"data type {actual.dtype.str}, not {expected.dtype.str}"
        bad = ~same_elements(actual, expected)
    if bad.any():
        return f"{int(bad.sum())} of {bad.size} values differ"
    return None


# ---------------------------------------------------------------- libzarr
def libzarr_write(root, case, values):
    with step("libzarr", root), libzarr.open_store(root, "a") as store, store.create_array("", case.doc()) as arr:
        if case.kind == "fixed":
            arr.write(values)
        else:
            items = [v.encode() if case.kind == "text" else v for v in values.reshape(-1)]
            arr.write_vlen(items, (0,) * values.ndim, values.shape)
    back = libzarr_read(root, case)
    if (why := mismatch(back, values)) is not None:
        raise Refused("libzarr", f"reads back other values than it wrote ({why})")


def libzarr_read(root, case):
    with step("libzarr", root), libzarr.open_store(root, "r") as store, store.open_array("") as arr:
        if case.kind == "fixed":
            return arr.read()
        out = np.empty(case.shape, object)
        for idx, item in zip(np.ndindex(*case.shape), arr.read_vlen()):
            out[idx] = item.decode() if case.kind == "text" else item
        return out


# ---------------------------------------------------------------- zarr-python and zarrs
def check_zarrs(z):
    """The array's codec pipeline is zarrs', with zarrs' Rust implementation and no fallback."""
    pipe = z._async_array.codec_pipeline
    if not isinstance(pipe, zarrs.ZarrsCodecPipeline):
        raise HarnessError(f"the codec pipeline is {type(pipe)}, not zarrs'")
    if pipe.impl is None or pipe.python_impl is not None:
        raise HarnessError("zarrs rejected the array, or zarr-python's pipeline is there as a fallback")


def zpy_config(peer):
    return zarr.config.set(ZARRS_CONFIG if peer == "zarrs" else ZPY_CONFIG)


def zpy_open(peer, root, mode):
    z = zarr.open_array(str(root), mode=mode)
    if peer == "zarrs":
        check_zarrs(z)
    return z


def zpy_array(z, case):
    out = np.asarray(z[...])
    if case.kind != "fixed":
        out = out.astype(object) if out.dtype.kind in "TU" else out
    return out


def zpy_write(peer, root, case, values):
    with step("no", root), zpy_config(peer):
        meta = ArrayV3Metadata.from_dict(case.doc())
        root.mkdir(parents=True, exist_ok=True)
        (root / "zarr.json").write_bytes(meta.to_buffer_dict(default_buffer_prototype())["zarr.json"].to_bytes())
        z = zpy_open(peer, root, "r+")
        z[...] = values
        back = zpy_array(zpy_open(peer, root, "r"), case)
    if (why := mismatch(back, values)) is not None:
        raise Refused("no", f"reads back other values than it wrote ({why})")


def zpy_read(peer, root, case):
    with step("no", root), zpy_config(peer):
        return zpy_array(zpy_open(peer, root, "r"), case)


# ---------------------------------------------------------------- TensorStore
# TensorStore runs in a worker process: some documents make it abort the process (a failed CHECK), which is
# recorded as its refusal ("no: aborts the process: ...") and the worker is started again.
TS_WORKER = r"""
import json, sys
import numpy as np
import tensorstore as ts

def spec(root, **extra):
    return dict({"driver": "zarr3", "kvstore": {"driver": "file", "path": root}}, **extra)

def read(root, field):
    extra = {"field": field} if field else {}
    out = np.asarray(ts.open(spec(root, **extra), open=True).result().read().result())
    if out.dtype.itemsize == 0:
        raise TypeError(f"TensorStore hands the elements to NumPy as {out.dtype.str} (itemsize 0): the values "
                        "cannot be read")
    return out

def as_small(values, name):
    # codes saved as integers (np.save has no ml_dtypes types) seen as the small type `name`
    import ml_dtypes
    return values.view(getattr(ml_dtypes, name)) if name else values

for line in sys.stdin:
    req = json.loads(line)
    fields = req["fields"] or [None]  # records: TensorStore opens one field at a time
    try:
        if req["op"] == "write":
            values = as_small(np.load(req["values"], allow_pickle=True), req["small"])
            for i, field in enumerate(fields):
                extra = {"field": field} if field else {}
                if i == 0:
                    t = ts.open(spec(req["root"], metadata=req["metadata"], create=True, **extra)).result()
                else:
                    t = ts.open(spec(req["root"], **extra), open=True).result()
                t.write(values[field] if field else values).result()
        parts = [read(req["root"], field) for field in fields]
        if req["fields"]:
            out = np.empty(parts[0].shape, [(f, p.dtype) for f, p in zip(fields, parts)])
            for f, p in zip(fields, parts):
                out[f] = p
        else:
            out = parts[0]
        if req["small"]:
            out = out.view(f"u{out.dtype.itemsize}")
        np.save(req["out"], out, allow_pickle=True)
        reply = {"ok": True}
    except Exception as e:
        reply = {"ok": False, "error": type(e).__name__, "message": str(e)}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
"""


class TensorStoreWorker:
    def __init__(self, tmp):
        self.tmp, self.proc, self.started = tmp, None, 0

    def call(self, root, case, op, values=None, metadata=None):
        if self.proc is None:
            self.started += 1
            self.err = self.tmp / f"tensorstore-worker-{self.started}.err"
            with open(self.err, "wb") as err:
                self.proc = subprocess.Popen([sys.executable, "-c", TS_WORKER], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=err, text=True)
        out = Path(f"{root}.out.npy")
        fields = [f[0] for f in case.numpy] if isinstance(case.numpy, list) else None
        small = case.data_type if isinstance(case.data_type, str) and case.data_type in libzarr.SMALL_TYPES else None
        req = {"op": op, "root": str(root), "out": str(out), "metadata": metadata, "fields": fields, "small": small}
        if values is not None:
            req["values"] = str(Path(f"{root}.in.npy"))
            np.save(req["values"], values.view(f"u{values.dtype.itemsize}") if small else values, allow_pickle=True)
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            self.proc = None
            raise Refused("no", aborted(self.err.read_text(errors="replace"), root))
        reply = json.loads(line)
        if not reply["ok"]:
            raise Refused("no", gist_of(reply["error"], reply["message"], root))
        back = np.load(out, allow_pickle=True)
        return back.view(case.numpy) if small else back

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
            self.proc = None


def aborted(stderr, root):
    """The reason of a process that died: TensorStore's failed CHECK (log prefix and stack left out)."""
    for line in stderr.splitlines():
        m = re.match(r"[FE]\d{4} [\d:.]+\s+\d+ (\S+)\] (.*)", line)
        if m:
            return gist_of("aborts the process", f"{m.group(2)} ({m.group(1)})", root)
    return gist_of("aborts the process", stderr.strip().splitlines()[0] if stderr.strip() else "", root)


TS = None  # the worker, while compute() runs


def ts_metadata(case):
    return {k: v for k, v in case.doc().items()
            if k not in ("zarr_format", "node_type", "attributes", "storage_transformers")}


def ts_write(root, case, values):
    back = TS.call(root, case, "write", values, ts_metadata(case))
    if (why := mismatch(back, values)) is not None:
        raise Refused("no", f"reads back other values than it wrote ({why})")


def ts_read(root, case):
    return TS.call(root, case, "read")


WRITERS = {"zarr-python": lambda *a: zpy_write("zarr-python", *a), "zarrs": lambda *a: zpy_write("zarrs", *a),
           "tensorstore": ts_write}
READERS = {"zarr-python": lambda *a: zpy_read("zarr-python", *a), "zarrs": lambda *a: zpy_read("zarrs", *a),
           "tensorstore": ts_read}


# ---------------------------------------------------------------- one result
def peer_writes(peer, root, case, seed):
    values = case.values(seed)
    WRITERS[peer](root, case, values)
    got = libzarr_read(root, case)
    return mismatch(got, values)


def peer_reads(peer, root, case, seed):
    values = case.values(seed)
    libzarr_write(root, case, values)
    got = READERS[peer](root, case)
    return mismatch(got, values)


def libzarr_round_trip(root, case, seed):
    """libzarr writes the case and reads it back: "yes" or "libzarr: <reason>"."""
    try:
        libzarr_write(root, case, case.values(seed))
    except Refused as e:
        return f"{e.who}: {e.reason}"
    return "yes"


def outcome(kind, name, peer, direction, root, case, seed):
    try:
        why = (peer_writes if direction == "peer_writes" else peer_reads)(peer, root, case, seed)
    except Refused as e:
        return f"{e.who}: {e.reason}"
    if why is None:
        return "yes"
    known = PEER_BUGS.get((kind, name, peer, direction))
    return f"no: {known}" if known else f"differ: {why}"


# ---------------------------------------------------------------- the matrix
def peer_versions():
    return {"zarr-python": f"zarr-python {zarr.__version__}",
            "zarrs": f"zarrs-python {importlib.metadata.version('zarrs')}",
            "tensorstore": f"TensorStore {importlib.metadata.version('tensorstore')}",
            "cast_value": f"cast-value {importlib.metadata.version('cast-value')}"}


def compute(tmp_path):
    """The results of every listed v3 feature (one case each) x peer x direction, and libzarr's own round trip."""
    global TS
    features = libzarr.features()
    missing = [f"{kind}: {name}" for kind, (cases, names) in KINDS.items() for listed in features[kind]
               for name in names(listed) if name not in cases]
    assert not missing, f"libzarr lists features this module has no case for (add them to its tables): {missing}"
    results, n = {}, 0
    TS = TensorStoreWorker(tmp_path)
    try:
        for kind, (cases, names) in KINDS.items():
            rows = results[kind] = {}
            for name in [name for listed in features[kind] for name in names(listed)]:
                case = cases[name]
                n += 1
                row = rows[name] = {"zarr.json": case.doc(),
                                    "libzarr": libzarr_round_trip(tmp_path / f"{n:04d}", case, seed=n)}
                for peer in PEERS:
                    row[peer] = {}
                    for direction in DIRECTIONS:
                        n += 1
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            row[peer][direction] = outcome(kind, name, peer, direction, tmp_path / f"{n:04d}",
                                                           case, seed=n)
    finally:
        TS.close()
    return {"about": "Written by tests/interop/test_support_matrix.py (LIBZARR_SUPPORT_RESULTS_WRITE=1); "
                     "docs/support-matrix.md is made from it by scripts/generate-support-matrix.py.",
            "peers": peer_versions(), "results": results}


def dumps(value, depth=0):
    """JSON with sorted keys, one line per (feature, peer) and per feature's zarr.json, for short diffs."""
    if not isinstance(value, dict) or depth >= 4:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
    pad = " " * (depth + 1)
    items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {dumps(v, depth + 1)}" for k, v in sorted(value.items())]
    text = "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"
    return text + "\n" if depth == 0 else text


def test_support_matrix(tmp_path):
    computed = compute(tmp_path)
    live = dumps(computed)
    if WRITE:
        RESULTS.write_text(live, encoding="utf-8")
        return
    committed = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    # A peer's new release that behaves the same leaves the page true: only the results count
    # (the versions the page names are those of the run that wrote the file).
    recorded = json.loads(committed)["results"] if committed else None
    if computed["results"] != recorded:
        diff = "".join(difflib.unified_diff(committed.splitlines(True), live.splitlines(True),
                                            "tests/interop/support-results.json (committed)", "(this run)", n=2))
        pytest.fail("the support matrix changed (a peer, libzarr or its list of features): regenerate the results "
                    "and the page with\n"
                    "  LIBZARR_SUPPORT_RESULTS_WRITE=1 LIBZARR_PATH=$PWD/target/release/libzarr.so \\\n"
                    "    .venv/zarr3-newest/bin/python -m pytest -q -p no:cacheprovider "
                    "tests/interop/test_support_matrix.py\n"
                    "  python3 scripts/generate-support-matrix.py\n"
                    "look at what changed, and commit both files (a \"libzarr: ...\" or \"differ: ...\" result is a "
                    f"finding to look into).\n{diff}", pytrace=False)
