"""Array digests: libzarr's zarr_array_digest / zarr_array_hexdigest give zarr-python 2's
Array.digest / hexdigest (a hash over the stored chunks in grid order, then .zarray, then .zattrs) for
arrays zarr-python writes and for arrays libzarr writes: nested and flat chunk keys, partly written
(missing chunks), 0-d, with and without attributes, object arrays; sha1 (the default), sha256, md5."""
import numcodecs
import numpy as np
import pytest

import libzarr
import zpy
from zpy import ZARR3

pytestmark = pytest.mark.skipif(ZARR3, reason="zarr 3 has no Array.digest")

HASHES = ["sha1", "sha256", "md5", "sha512"]


def python_writes(root):
    """Arrays of several kinds written by zarr-python 2: {path: array}."""
    group = zpy.open_group(root, "w")
    nested = zpy.create(root / "nested", shape=(37, 23), chunks=(5, 4), dtype="<i4", separator="/",
                        compressor=numcodecs.Zstd(level=3), fill_value=-1, attrs={"units": "K"})
    nested[...] = np.arange(37 * 23).reshape(37, 23)
    sparse = zpy.create(root / "sparse", shape=(100, 100), chunks=(10, 10), dtype=">f8")
    sparse[95:, 3] = 1.5  # chunks (9, 0) and a few others only
    sparse[0, 0] = 2.0
    scalar = zpy.create(root / "scalar", shape=(), chunks=(), dtype="<u2")
    scalar[...] = 7
    zpy.create(root / "empty", shape=(12,), chunks=(5,), dtype="|u1")
    words = group.create_dataset("words", shape=(5,), chunks=(2,), dtype=object, object_codec=numcodecs.VLenUTF8())
    words[...] = np.array(["a", "bb", "ccc", "", "é"], dtype=object)
    return ["nested", "sparse", "scalar", "empty", "words"]


def libzarr_writes(root):
    arrays = {
        "nested": ({"shape": [37, 23], "chunks": [5, 4], "dtype": "<i4", "dimension_separator": "/",
                    "compressor": {"id": "zstd", "level": 3}, "fill_value": -1},
                   np.arange(37 * 23, dtype="<i4").reshape(37, 23)),
        "flat": ({"shape": [50], "chunks": [7], "dtype": ">f8"}, np.linspace(0, 1, 50)),
        "empty": ({"shape": [12], "chunks": [5], "dtype": "|u1"}, None),
        "scalar": ({"shape": [], "chunks": [], "dtype": "<u2"}, np.array(7, dtype="<u2")),
    }
    with libzarr.open_store(root, "w") as store:
        store.create_group("").close()
        for path, (doc, data) in arrays.items():
            with store.create_array(path, doc) as a:
                if data is not None:
                    a.write(data)
                if path == "flat":
                    a.set_attrs({"title": "flat", "n": 50})
    return list(arrays)


@pytest.mark.parametrize("writer", ["python", "libzarr"])
def test_digests_are_zarr2s(tmp_path, writer):
    paths = (python_writes if writer == "python" else libzarr_writes)(tmp_path)
    root = zpy.open_group(tmp_path)
    with libzarr.open_store(tmp_path) as store:
        for path in paths:
            z = root[path]
            with store.open_array(path) as a:
                assert a.hexdigest() == z.hexdigest(), path
                assert a.digest() == z.digest(), path
                for name in HASHES:
                    assert a.hexdigest(name) == z.hexdigest(name), (path, name)


def test_digest_follows_writes_and_attributes(tmp_path):
    """A libzarr write or attribute change changes the digest exactly as zarr-python then sees it."""
    python_writes(tmp_path)
    with libzarr.open_store(tmp_path, "a") as store, store.open_array("sparse") as a:
        before = a.hexdigest()
        a.write(np.full((100, 100), 3.0))
        a.update_attrs({"k": [1, 2]})
        after = a.hexdigest("sha256")
    z = zpy.open_group(tmp_path)["sparse"]
    assert z.hexdigest("sha256") == after
    assert z.hexdigest() != before


def test_unknown_hash_is_refused(tmp_path):
    python_writes(tmp_path)
    with libzarr.open_store(tmp_path) as store, store.open_array("nested") as a:
        with pytest.raises(libzarr.LibzarrError, match="ZARR_ERR_UNSUPPORTED.*whirlpool"):
            a.hexdigest("whirlpool")
