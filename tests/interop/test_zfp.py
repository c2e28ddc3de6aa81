"""zfp compression (issue #27): numcodecs' `zfpy` (zfpy 1.0.1, the zfp 1.0.1 library libzarr builds too) as a
Zarr v2 compressor and as zarr-python 3's v3 codec `numcodecs.zfpy`, and zarr-extensions' v3 codec `zfp`.

- v2 `zfpy`: zarr-python (2 or 3) writes each mode, libzarr reads exactly what zarr-python reads; libzarr writes
  the same chunks, byte for byte (the chunk's shape as the zfp field), and zarr-python reads them.
- v3 `numcodecs.zfpy` (zarr-python 3 only): both libraries write the same zarr.json and data; the chunks must be
  the same bytes (zfp's full header, the chunk's shape as the field), and each reads what the other wrote.
- v3 `zfp` (zarr-extensions; neither zarr-python nor numcodecs has it): libzarr writes the spec's example
  configurations; each chunk must be the bytes `zfpy.compress_numpy(chunk, write_header=False, ...)` writes
  and decode with `zfpy._decompress` to what libzarr reads (the expert mode, which zfpy cannot set, only round
  trips); libzarr reads chunks zfpy wrote.
"""
import json
import math

import numcodecs
import numpy as np
import pytest
import zfpy

import libzarr
import zpy

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

# numcodecs' ZFPY configurations: mode 4 is fixed accuracy, 2 fixed rate, 3 fixed precision (zfp's zfp_mode
# numbers); a negative parameter makes zfpy reversible (numcodecs' default: mode 4, tolerance -1).
MODES = {
    "accuracy": {"mode": 4, "tolerance": 0.05},
    "rate": {"mode": 2, "rate": 12},
    "precision": {"mode": 3, "precision": 18},
    "reversible": {"mode": 4, "tolerance": -1},
}
DTYPES = ["<f4", "<f8", "<i4", "<i8"]


def sample(dtype, shape, seed=27):
    """Smooth values (what zfp is for), scaled so that integers keep some detail."""
    rng = np.random.default_rng(seed)
    values = np.cumsum(rng.normal(size=shape), axis=-1) * 40
    return values.astype(dtype)


def zfpy_config(mode):
    return {"id": "zfpy", "tolerance": -1, "rate": -1, "precision": -1, **MODES[mode]}


def check_mode(mode, dtype, got, original):
    """What each mode guarantees against the original values."""
    if mode == "reversible":
        np.testing.assert_array_equal(got, original)
    elif mode == "accuracy" and dtype.startswith("<f"):
        assert float(np.max(np.abs(got.astype("f8") - original.astype("f8")))) <= MODES[mode]["tolerance"]


def read_libzarr(path):
    with libzarr.open_store(path, "r") as store, store.open_array("") as arr:
        return arr.read()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_v2_zarr_python_writes_libzarr_reads(tmp_path, dtype, mode):
    data = sample(dtype, (21, 13))
    arr = zpy.create(tmp_path / "a", shape=data.shape, chunks=(8, 5), dtype=dtype,
                     compressor=numcodecs.get_codec(zfpy_config(mode)))
    arr[...] = data
    expected = zpy.read(zpy.open_array(tmp_path / "a"))
    check_mode(mode, dtype, expected, data)
    np.testing.assert_array_equal(read_libzarr(tmp_path / "a"), expected)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_v2_libzarr_writes_zarr_python_reads(tmp_path, dtype, mode):
    data = sample(dtype, (21, 13), seed=5)
    meta = {"zarr_format": 2, "shape": list(data.shape), "chunks": [8, 5], "dtype": dtype,
            "compressor": zfpy_config(mode), "fill_value": 0, "order": "C", "filters": None}
    with libzarr.open_store(tmp_path / "a", "a") as store, store.create_array("", meta) as arr:
        arr.write(data)
    stored = json.loads((tmp_path / "a" / ".zarray").read_text())["compressor"]
    assert stored == zfpy_config(mode)
    got = zpy.read(zpy.open_array(tmp_path / "a"))
    np.testing.assert_array_equal(got, read_libzarr(tmp_path / "a"))
    check_mode(mode, dtype, got, data)
    # Each chunk is zarr-python's: a field of the chunk's shape.
    arr = zpy.create(tmp_path / "zp", shape=data.shape, chunks=(8, 5), dtype=dtype,
                     compressor=numcodecs.get_codec(zfpy_config(mode)))
    arr[...] = data
    for key in sorted(p.name for p in (tmp_path / "zp").iterdir() if not p.name.startswith(".")):
        assert (tmp_path / "a" / key).read_bytes() == (tmp_path / "zp" / key).read_bytes(), key
    assert zfpy.decompress_numpy((tmp_path / "a" / "1.2").read_bytes()).shape == (8, 5)


requires_v3 = pytest.mark.skipif(not zpy.ZARR3, reason="Zarr v3 needs zarr-python 3")

# (dtype, array shape, chunk shape, shard shape or None)
V3_LAYOUTS = {
    "2d": ("float64", (21, 13), (8, 5), None),
    "3d-int32": ("int32", (9, 10, 11), (4, 5, 6), None),
    "1d-float32": ("float32", (100,), (30,), None),
    "4d-int64": ("int64", (5, 4, 6, 7), (2, 3, 4, 5), None),
    "sharded": ("float32", (24, 20), (4, 5), (12, 10)),
}


def inner_chunks(shard, count):
    """The inner chunks of a shard whose index (crc32c after it) is at the end, in index order: where in the
    shard each one lies is the writer's choice."""
    index = np.frombuffer(shard[-(count * 16 + 4):-4], "<u8").reshape(count, 2)
    return [shard[offset:offset + length] for offset, length in index.tolist()]


@requires_v3
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", V3_LAYOUTS)
def test_v3_numcodecs_zfpy_both_ways(tmp_path, layout, mode):
    import zarr
    dtype, shape, chunks, shards = V3_LAYOUTS[layout]
    data = sample(dtype, shape, seed=9)
    serializer = {"name": "numcodecs.zfpy", "configuration": MODES[mode]}
    z = zarr.create_array(str(tmp_path / "zp"), shape=shape, chunks=chunks, shards=shards, dtype=dtype,
                          serializer=serializer, compressors=None, fill_value=0)
    z[...] = data
    expected = np.asarray(zarr.open_array(str(tmp_path / "zp"))[...])
    check_mode(mode, "<f" if dtype.startswith("float") else "<i", expected, data)
    np.testing.assert_array_equal(read_libzarr(tmp_path / "zp"), expected)

    meta = json.loads((tmp_path / "zp" / "zarr.json").read_text())
    with libzarr.open_store(tmp_path / "lz", "a") as store, store.create_array("", meta) as arr:
        arr.write(data)
    codecs = json.loads((tmp_path / "lz" / "zarr.json").read_text())["codecs"]
    zfpy_codec = codecs[0]["configuration"]["codecs"][0] if shards else codecs[0]
    assert zfpy_codec["name"] == "numcodecs.zfpy"
    assert {k: zfpy_codec["configuration"][k] for k in MODES[mode]} == MODES[mode]
    # The chunk shape reaches zfp: libzarr's (inner) chunks are zarr-python's bytes.
    for key in sorted(p.relative_to(tmp_path / "zp") for p in (tmp_path / "zp" / "c").rglob("*") if p.is_file()):
        ours, theirs = ((tmp_path / side / key).read_bytes() for side in ("lz", "zp"))
        if shards:
            count = math.prod(s // c for s, c in zip(shards, chunks))
            ours, theirs = inner_chunks(ours, count), inner_chunks(theirs, count)
        assert ours == theirs, key
    np.testing.assert_array_equal(np.asarray(zarr.open_array(str(tmp_path / "lz"))[...]), expected)


def test_v3_more_than_four_dimensions_above_one_is_unsupported(tmp_path):
    meta = {"zarr_format": 3, "node_type": "array", "shape": [2, 2, 2, 2, 2], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2, 2, 2, 2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "numcodecs.zfpy", "configuration": {"mode": 4, "tolerance": -1}}]}
    for name, config in [("numcodecs.zfpy", {"mode": 4, "tolerance": -1}), ("zfp", {"mode": "reversible"})]:
        meta["codecs"] = [{"name": name, "configuration": config}]
        with libzarr.open_store(tmp_path / name, "a") as store:
            with pytest.raises(libzarr.LibzarrError, match="UNSUPPORTED") as err:
                store.create_array("", meta)
        # zfpy takes at most 4 dimensions; zfp at most 4 above 1.
        words = "5 dimensions" if name == "numcodecs.zfpy" else "5 of whose dimensions are above 1"
        assert words in err.value.message and name.split(".")[-1] + ":" in err.value.message


# zarr-extensions' codecs/zfp/examples/*.json (the expert one cannot be set through zfpy).
ZFP_EXAMPLES = {
    "reversible": {"mode": "reversible"},
    "fixed_accuracy": {"mode": "fixed_accuracy", "tolerance": 0.05},
    "fixed_rate": {"mode": "fixed_rate", "rate": 10.5},
    "fixed_precision": {"mode": "fixed_precision", "precision": 19},
    "expert": {"mode": "expert", "minbits": 1, "maxbits": 13, "maxprec": 19, "minexp": -2},
}


def zfpy_kwargs(config):
    """zfpy's keyword for a zarr-extensions zfp configuration (none: reversible)."""
    key = {"fixed_accuracy": "tolerance", "fixed_rate": "rate", "fixed_precision": "precision"}.get(config["mode"])
    return {key: config[key]} if key else {}


def v3_meta(dtype, shape, chunks, codecs):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("example", ZFP_EXAMPLES)
def test_zfp_extension_against_zfpy(tmp_path, example, dtype):
    config = ZFP_EXAMPLES[example]
    shape, chunks = (12, 10, 7), (6, 5, 7)
    data = sample(dtype, shape, seed=3)
    meta = v3_meta(dtype, shape, chunks, [{"name": "zfp", "configuration": config}])
    with libzarr.open_store(tmp_path / "lz", "a") as store, store.create_array("", meta) as arr:
        arr.write(data)
        got = arr.read()
    stored = json.loads((tmp_path / "lz" / "zarr.json").read_text())
    assert stored["codecs"] == [{"name": "zfp", "configuration": config}]
    check_mode({"reversible": "reversible", "fixed_accuracy": "accuracy"}.get(example, ""),
               "<f" if dtype.startswith("float") else "<i", got, data)
    if example == "expert":
        # zfpy cannot set these parameters; maxbits 13 bounds each block of 4x4x4 values: 8 blocks a chunk,
        # 104 bits, two 64-bit words.
        assert all(len(p.read_bytes()) <= 16 for p in (tmp_path / "lz" / "c").rglob("*") if p.is_file())
        return
    ztype = zfpy.dtype_to_ztype(np.dtype(dtype))
    for index in np.ndindex(2, 2, 1):
        key = tmp_path / "lz" / "c" / "/".join(map(str, index))
        box = tuple(slice(i * c, (i + 1) * c) for i, c in zip(index, chunks))
        # libzarr's chunk is zfpy's header-less stream of the same chunk, byte for byte ...
        stream = zfpy.compress_numpy(np.ascontiguousarray(data[box]), write_header=False, **zfpy_kwargs(config))
        assert key.read_bytes() == stream, key
        # ... and zfpy decodes it to what libzarr reads.
        decoded = zfpy._decompress(key.read_bytes(), ztype, list(chunks), **zfpy_kwargs(config))
        np.testing.assert_array_equal(decoded, got[box])
    # libzarr reads chunks zfpy wrote.
    with libzarr.open_store(tmp_path / "zfpy", "a") as store, store.create_array("", meta) as arr:
        pass
    for index in np.ndindex(2, 2, 1):
        box = tuple(slice(i * c, (i + 1) * c) for i, c in zip(index, chunks))
        key = tmp_path / "zfpy" / "c" / "/".join(map(str, index))
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(zfpy.compress_numpy(np.ascontiguousarray(data[box]), write_header=False,
                                            **zfpy_kwargs(config)))
    np.testing.assert_array_equal(read_libzarr(tmp_path / "zfpy"), got)


def test_zfp_extension_zero_dimensional_chunk_is_one_value(tmp_path):
    meta = v3_meta("float64", (), (), [{"name": "zfp", "configuration": {"mode": "reversible"}}])
    with libzarr.open_store(tmp_path / "a", "a") as store, store.create_array("", meta) as arr:
        arr.write(np.array(math.pi))
    stream = (tmp_path / "a" / "c").read_bytes()
    assert stream == zfpy.compress_numpy(np.array([math.pi]), write_header=False)
    assert read_libzarr(tmp_path / "a") == math.pi


def test_libzarr_lists_the_codecs():
    features = libzarr.features()
    assert "zfpy" in features["compressors"]
    assert {"numcodecs.zfpy", "zfp"} <= set(features["codecs"])
