"""Codecs the program registers (zarr_codec_register), against the same codec registered in numcodecs
(numcodecs.register_codec), both directions: zarr-python writes through its codec and libzarr reads through its
own, and the other way; as a v2 compressor, as a v2 filter, and (zarr-python 3) as v3 codecs by name."""
import json

import numcodecs
import numcodecs.abc
import numpy as np
import pytest

import libzarr
import zpy


def xor(data, key):
    return bytes(b ^ key for b in data)


class XorDemo(numcodecs.abc.Codec):
    """A bytes->bytes codec: "XOR1", then the bytes XOR key."""
    codec_id = "xor_demo"

    def __init__(self, key=90):
        self.key = key

    def encode(self, buf):
        return b"XOR1" + xor(numcodecs.compat.ensure_bytes(buf), self.key)

    def decode(self, buf, out=None):
        raw = numcodecs.compat.ensure_bytes(buf)
        assert raw[:4] == b"XOR1", "no XOR1 magic"
        return numcodecs.compat.ndarray_copy(np.frombuffer(xor(raw[4:], self.key), "u1"), out)


class FlipDemo(numcodecs.abc.Codec):
    """A filter keeping the size: every bit inverted."""
    codec_id = "flip_demo"

    @staticmethod
    def flip(buf):
        arr = numcodecs.compat.ensure_ndarray(buf)  # the elements keep their type and shape
        return np.frombuffer(xor(arr.tobytes(), 0xFF), arr.dtype).reshape(arr.shape)

    def encode(self, buf):
        return self.flip(buf)

    def decode(self, buf, out=None):
        return numcodecs.compat.ndarray_copy(self.flip(buf), out)


numcodecs.register_codec(XorDemo)
numcodecs.register_codec(FlipDemo)


def lib_xor_decode(config, data, capacity):
    if data[:4] != b"XOR1":
        raise ValueError("no XOR1 magic")
    return xor(data[4:], config.get("key", 90))


@pytest.fixture(autouse=True)
def registered():
    libzarr.register_codec("xor_demo", lambda config, data: b"XOR1" + xor(data, config.get("key", 90)),
                           lib_xor_decode)
    libzarr.register_codec("flip_demo", lambda config, data: xor(data, 0xFF),
                           lambda config, data, capacity: xor(data, 0xFF), kind="filter")
    yield
    libzarr.unregister_codec("xor_demo")
    libzarr.unregister_codec("flip_demo")


@pytest.mark.parametrize("filters,compressor", [(None, XorDemo(key=7)), ([FlipDemo()], numcodecs.Zstd(level=1)),
                                                ([FlipDemo()], XorDemo())])
def test_v2_both_ways(tmp_path, filters, compressor):
    values = np.arange(300, dtype="<i4").reshape(20, 15) * 11 - 1000
    z = zpy.create(tmp_path / "zpy", shape=values.shape, chunks=(8, 8), dtype="<i4", compressor=compressor,
                   filters=filters, fill_value=-1)
    z[...] = values
    meta = json.loads((tmp_path / "zpy" / ".zarray").read_text())
    with libzarr.open_store(tmp_path, "a") as store:
        with store.open_array("zpy") as arr:
            np.testing.assert_array_equal(arr.read(), values)
        with store.create_array("lib", meta) as arr:
            arr.write(values)
    np.testing.assert_array_equal(zpy.read(zpy.open_array(tmp_path / "lib")), values)
    # the same chunk bytes on both sides
    assert (tmp_path / "lib" / "0.0").read_bytes() == (tmp_path / "zpy" / "0.0").read_bytes()


def test_a_failing_codec_names_itself(tmp_path):
    z = zpy.create(tmp_path / "zpy", shape=(10,), chunks=(10,), dtype="<i4", compressor=XorDemo(), fill_value=0)
    z[...] = np.arange(10)
    (tmp_path / "zpy" / "0").write_bytes(b"garbage!")
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("zpy") as arr, \
            pytest.raises(libzarr.LibzarrError) as e:
        arr.read()
    assert e.value.name == "ZARR_ERR_CORRUPT_CHUNK"
    assert "no XOR1 magic" in str(e.value) and "xor_demo" in str(e.value)


def test_v3_by_name(tmp_path):
    if not zpy.ZARR3:
        pytest.skip("zarr-python 2 writes no Zarr v3")
    import zarr
    from zarr.codecs.numcodecs import _NumcodecsBytesBytesCodec, _NumcodecsArrayArrayCodec

    class V3Xor(_NumcodecsBytesBytesCodec, codec_name="xor_demo"):
        pass

    class V3Flip(_NumcodecsArrayArrayCodec, codec_name="flip_demo"):
        pass

    zarr.registry.register_codec("numcodecs.xor_demo", V3Xor)
    zarr.registry.register_codec("numcodecs.flip_demo", V3Flip)
    values = np.arange(300, dtype="<i4").reshape(20, 15) * 11 - 1000
    z = zarr.create_array(tmp_path / "zpy", shape=values.shape, chunks=(8, 8), dtype="<i4",
                          filters=[V3Flip()], compressors=[V3Xor(key=5)], fill_value=-1)
    z[...] = values
    meta = json.loads((tmp_path / "zpy" / "zarr.json").read_text())
    with libzarr.open_store(tmp_path, "a") as store:
        with store.open_array("zpy") as arr:
            np.testing.assert_array_equal(arr.read(), values)
        with store.create_array("lib", meta) as arr:
            arr.write(values)
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "lib", mode="r")[...], values)
