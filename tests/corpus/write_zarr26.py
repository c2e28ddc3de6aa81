"""zarr-python 2.6's NestedDirectoryStore for the real-world corpus (scripts/corpus.sh):
`write_zarr26.py OUTDIR` writes `nested.zarr`.

Before zarr-python 2.8 there was no `dimension_separator` in `.zarray`: NestedDirectoryStore turned chunk
keys `0.0` into the paths `0/0`, and the only way to know is to look. This store has that layout: a group
with attributes, 2-D and 3-D arrays (several compressors, a non-default fill value, chunks never written,
edge chunks), xarray-style `_ARRAY_DIMENSIONS` on two of them, and `.zmetadata` from
`zarr.consolidate_metadata`. The writer checks that no `.zarray` has a `dimension_separator` and that the
chunks are nested. Expected values: zarr-python 2.6 reads every array back; the dimension names are its
`_ARRAY_DIMENSIONS` attribute where there is one (zarr 2.6 itself knows no dimension names), else none.
"""
import json
import os
import shutil
import sys

import numcodecs
import numpy as np
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expected  # noqa: E402


def main(out):
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "nested.zarr")
    shutil.rmtree(path, ignore_errors=True)
    rng = np.random.default_rng(26)
    store = zarr.NestedDirectoryStore(path)
    root = zarr.group(store=store)
    root.attrs.update({"title": "zarr-python 2.6 NestedDirectoryStore", "created_by": "write_zarr26.py",
                       "answer": 42})
    g = root.create_group("measurements")
    g.attrs["site"] = "nowhere"
    grid = g.create_dataset("grid", shape=(20, 30), chunks=(7, 8), dtype="<f8", fill_value=-9999.0)
    grid[:] = rng.standard_normal((20, 30)).round(3)
    grid.attrs.update({"_ARRAY_DIMENSIONS": ["y", "x"], "units": "m"})
    cube = g.create_dataset("cube", shape=(5, 12, 13), chunks=(2, 5, 6), dtype="<i2", fill_value=-1,
                            compressor=numcodecs.Zlib(level=3))
    cube[:4, :10] = rng.integers(-3000, 3000, (4, 10, 13))  # the last row of chunks is never written
    cube.attrs.update({"_ARRAY_DIMENSIONS": ["t", "y", "x"], "scale_factor": 0.1})
    big = root.create_dataset("big_endian", shape=(9, 11), chunks=(4, 4), dtype=">u4", fill_value=7,
                              compressor=None)
    big[2:, :] = rng.integers(0, 2**32 - 1, (7, 11), dtype="u8")
    zarr.consolidate_metadata(store)

    # The layout this case is about.
    for name in ("measurements/grid", "measurements/cube", "big_endian"):
        meta = json.load(open(os.path.join(path, name, ".zarray")))
        assert "dimension_separator" not in meta, (name, meta)
    assert os.path.isfile(os.path.join(path, "measurements", "grid", "0", "0")), os.listdir(
        os.path.join(path, "measurements", "grid"))
    assert not os.path.exists(os.path.join(path, "measurements", "grid", "0.0"))
    assert os.path.isfile(os.path.join(path, "measurements", "cube", "0", "0", "0"))

    z = zarr.open_consolidated(zarr.NestedDirectoryStore(path), mode="r")
    arrays = []
    for name in ("measurements/grid", "measurements/cube", "big_endian"):
        a = z[name]
        attrs = dict(a.attrs)
        arrays.append(expected.array_entry(name, a[...], a.dtype, attrs.get("_ARRAY_DIMENSIONS"), attrs))
    groups = [{"path": p, "attributes": expected.plain(dict((z[p] if p else z).attrs))}
              for p in ("", "measurements")]
    expected.write(path, {"writer": f"zarr-python {zarr.__version__} NestedDirectoryStore",
                          "versions": {"zarr": zarr.__version__, "numcodecs": numcodecs.__version__,
                                       "numpy": np.__version__},
                          "zarr_format": 2, "consolidated": True, "budget_array": "measurements/cube",
                          "arrays": arrays, "groups": groups})


if __name__ == "__main__":
    main(sys.argv[1])
