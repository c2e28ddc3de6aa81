"""numcodecs' Pickle object codec against zarr-python 2, both directions: records with object fields (the
only way zarr-python 2 stores them) and plain object arrays, C and F order, with and without a compressor,
never-written chunks read as zarr-python's fill value (its default 0 cast into every field, None, or a
record). libzarr passes each element as JSON text (a record as an object of its fields, fixed-type fields as
Zarr v2 fill values: "NaN", base64 for bytes, [re, im]); it reads pickles without running them, so a chunk
naming any callable other than NumPy's array, dtype and scalar constructors is refused by name.

numcodecs >= 0.15 refuses to unpickle unless allowed (ALLOW_UNSAFE_PICKLE_DECODE), zarr-python 2 included:
these tests allow it for zarr-python, which is how its users read such arrays."""
import base64
import json
import pickle

import numcodecs
import numcodecs.pickles
import numpy as np
import pytest
import zarr

import libzarr
import zpy

pytestmark = pytest.mark.skipif(zpy.ZARR3, reason="zarr 3 has no structured types with object fields, nor Pickle")

SHAPE, CHUNKS = (5, 4), (2, 3)
RECORD = np.dtype([("x", "<f8"), ("label", "O"), ("n", "<i4", (2,)), ("s", "S3"), ("u", "<U2"), ("b", "?"),
                   ("c", "<c8")])
LABELS = ["abc", None, [1, "x", None], {"k": [True, 2.5]}, -7, 2.25, "", "é𝄞", np.float64(0.5), (1, 2)]


@pytest.fixture(autouse=True)
def _unpickling_allowed(monkeypatch):
    monkeypatch.setattr(numcodecs.pickles, "ALLOW_UNSAFE_PICKLE_DECODE", True, raising=False)


def records(seed):
    out = np.zeros(SHAPE, dtype=RECORD)
    for k, index in enumerate(np.ndindex(*SHAPE)):
        i = k + seed
        out[index] = (float("nan") if i % 7 == 0 else i / 4, LABELS[i % len(LABELS)], [i, -i], str(i).encode(),
                      chr(0xe9 + i % 3), i % 2 == 0, complex(i, -0.5))
    return out


def json_value(value):
    """What libzarr gives for an object: its JSON value (tuples as lists, NumPy scalars as numbers)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    return value


def fill_json(x):
    return "NaN" if np.isnan(x) else float(x)


def record_json(r):
    """A record as libzarr passes it: fixed-type fields written as Zarr v2 fill values."""
    return {"x": fill_json(r["x"]), "label": json_value(r["label"]), "n": [int(v) for v in r["n"]],
            "s": base64.b64encode(bytes(r["s"])).decode(), "u": str(r["u"]), "b": bool(r["b"]),
            "c": [fill_json(r["c"].real), fill_json(r["c"].imag)]}


def same_records(got, want):
    for index in np.ndindex(*want.shape):
        g, w = got[index], want[index]
        for name in RECORD.names:
            if name == "x":
                assert (np.isnan(g[name]) and np.isnan(w[name])) or g[name] == w[name], (index, name)
            elif name == "n":
                assert list(g[name]) == list(w[name]), (index, name)
            else:
                assert json_value(g[name]) == json_value(w[name]), (index, name, g[name], w[name])


@pytest.mark.parametrize("order", "CF")
@pytest.mark.parametrize("comp", [None, "zstd"])
def test_zarr_python_writes_records_libzarr_reads(tmp_path, order, comp):
    z = zarr.open_array(str(tmp_path), mode="w", shape=SHAPE, chunks=CHUNKS, dtype=RECORD,
                        object_codec=numcodecs.Pickle(), order=order,
                        compressor=numcodecs.Zstd(level=1) if comp else None)
    data = records(3)
    z[:3, :] = data[:3, :]  # the last rows' chunks stay missing: zarr-python's default fill, 0
    same_records(np.asarray(z[:3, :]), data[:3, :])
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        assert arr.object_codec()["id"] == "pickle" and arr.json_items
        got = [json.loads(item) for item in arr.read_vlen()]
        with pytest.raises(libzarr.LibzarrError, match="vlen calls"):
            arr.read_fields(["x"])
    assert got[:12] == [record_json(r) for r in data[:3, :].reshape(-1)]
    zero = {"x": 0.0, "label": 0, "n": [0, 0], "s": base64.b64encode(b"0").decode(), "u": "0", "b": False,
            "c": [0.0, 0.0]}
    assert got[16:] == [zero] * 4
    assert [record_json(r) for r in np.asarray(z[4:, :]).reshape(-1)] == [zero] * 4, "zarr-python agrees"


@pytest.mark.parametrize("order", "CF")
def test_libzarr_writes_records_zarr_python_reads(tmp_path, order):
    meta = {"shape": list(SHAPE), "chunks": list(CHUNKS), "dtype": zpy.stored_dtype(np.zeros(0, RECORD)),
            "order": order, "filters": [{"id": "pickle", "protocol": 5}], "compressor": {"id": "zstd", "level": 1}}
    data = records(5)
    with libzarr.open_store(tmp_path, "a") as store, store.create_array("", json.dumps(meta)) as arr:
        items = [json.dumps(record_json(r)).encode() for r in data[:3, :].reshape(-1)]
        arr.write_vlen(items, (0, 0), (3, 4))
        arr.write_vlen([items[6]], (1, 2), (1, 1))  # a partial rewrite of one element
        for bad, words in [(b'{"x": 1}', 'no value for field \\"label\\"'), (b"[1]", "not a JSON object"),
                           (b'{"x": "a", "label": 0, "n": [1, 2], "s": "", "u": "", "b": true, "c": 0}',
                            'field \\"x\\"')]:
            with pytest.raises(libzarr.LibzarrError, match=words) as refused:
                arr.write_vlen([bad], (0, 0), (1, 1))
            assert "0.0" in str(refused.value), "the message names the chunk"
    stored = json.loads((tmp_path / ".zarray").read_text())
    assert stored["fill_value"] is None, "a pickle array's default fill value is null (zarr-python: None)"
    z = zarr.open_array(str(tmp_path), mode="r")
    assert z.dtype == RECORD
    same_records(np.asarray(z[:3, :]), data[:3, :])
    missing = np.asarray(z[3:, :]).reshape(-1)
    assert all(r["label"] is None and r["x"] == 0 for r in missing), "null fill: None objects, zero numbers"


def test_fill_values_zarr_python_pickled(tmp_path):
    fill = (2.5, "q", [1, 1], b"ab", "z", True, 1 + 2j)
    z = zarr.open_array(str(tmp_path / "rec"), mode="w", shape=(3,), chunks=(2,), dtype=RECORD,
                        object_codec=numcodecs.Pickle(), fill_value=fill)
    z[0] = records(0)[0, 0]
    obj = zarr.open_array(str(tmp_path / "obj"), mode="w", shape=(3,), chunks=(2,), dtype=object,
                          object_codec=numcodecs.Pickle(), fill_value={"a": [1]})
    obj[0] = "x"
    with libzarr.open_store(tmp_path, "r") as store:
        with store.open_array("rec") as arr:
            got = [json.loads(item) for item in arr.read_vlen()]
        assert got[2] == {"x": 2.5, "label": "q", "n": [1, 1], "s": "YWI=", "u": "z", "b": True, "c": [1.0, 2.0]}
        assert got[1] == record_json(np.asarray(z[1])[()])
        with store.open_array("obj") as arr:
            assert [json.loads(item) for item in arr.read_vlen()] == ["x", {"a": [1]}, {"a": [1]}]


@pytest.mark.parametrize("order", "CF")
def test_object_arrays_both_ways(tmp_path, order):
    data = np.empty(SHAPE, dtype=object)
    for k, index in enumerate(np.ndindex(*SHAPE)):
        data[index] = json_value(LABELS[k % len(LABELS)])
    z = zarr.open_array(str(tmp_path / "py"), mode="w", shape=SHAPE, chunks=CHUNKS, dtype=object,
                        object_codec=numcodecs.Pickle(protocol=2), order=order, fill_value=None)
    z[:] = data
    meta = {"shape": list(SHAPE), "chunks": list(CHUNKS), "dtype": "|O", "order": order,
            "filters": [{"id": "pickle", "protocol": 5}], "compressor": None}
    with libzarr.open_store(tmp_path, "a") as store:
        with store.open_array("py") as arr:
            got = [json.loads(item) for item in arr.read_vlen()]
            assert got == list(data.reshape(-1))
            with pytest.raises(libzarr.LibzarrError, match="only as JSON text"):
                arr.json_items = False
        with store.create_array("lz", json.dumps(meta)) as arr:
            arr.write_vlen([json.dumps(v).encode() for v in data.reshape(-1)], (0, 0), SHAPE)
    back = zarr.open_array(str(tmp_path / "lz"), mode="r")
    assert [back[index] for index in np.ndindex(*SHAPE)] == list(data.reshape(-1))


def test_values_json_cannot_hold_are_refused_by_name(tmp_path):
    z = zarr.open_array(str(tmp_path), mode="w", shape=(4,), chunks=(2,), dtype=RECORD,
                        object_codec=numcodecs.Pickle(), fill_value=None)
    z[0] = (1.0, b"raw bytes", [1, 2], b"", "", False, 0j)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        with pytest.raises(libzarr.LibzarrError, match="bytes value") as refused:
            arr.read_vlen()
        message = str(refused.value)
        assert "element 0" in message and '"label"' in message and "0" in message, message
        assert [json.loads(item)["label"] for item in arr.read_vlen((2,), (2,))] == [None, None]


class Exploit:
    def __reduce__(self):
        return (open, (str(EXPLOIT_TARGET), "w"))


EXPLOIT_TARGET = None


def test_a_chunk_naming_another_callable_is_refused_not_run(tmp_path):
    global EXPLOIT_TARGET
    EXPLOIT_TARGET = tmp_path / "created-by-the-pickle"
    z = zarr.open_array(str(tmp_path / "a"), mode="w", shape=(2,), chunks=(2,), dtype=object,
                        object_codec=numcodecs.Pickle(), fill_value=None, compressor=None)
    z[:] = ["a", "b"]
    chunk = np.empty(2, dtype=object)
    chunk[:] = [Exploit(), "b"]
    (tmp_path / "a" / "0").write_bytes(pickle.dumps(chunk))
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("a") as arr:
        with pytest.raises(libzarr.LibzarrError, match="global io.open") as refused:
            arr.read_vlen()
        assert "a/0" in str(refused.value), "the message names the chunk"
    assert not EXPLOIT_TARGET.exists()
