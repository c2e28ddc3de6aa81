"""xarray's stores for the real-world corpus (scripts/corpus.sh): `write_xarray.py OUTDIR`.

One CF dataset, written by `Dataset.to_zarr(consolidated=True)` as people write them: a time coordinate
(days since ...), a text coordinate, a float 3-D variable and a CF-packed int16 one (scale_factor, add_offset,
_FillValue, NaNs packed to the fill), a 2-D variable, a text variable, several chunks each with edge chunks;
then a subgroup (`group="forecast"`, mode "a") so that the consolidation (done by the last write, over the
whole store) holds both. With zarr-python 2: `dataset.zarr` (v2). With zarr-python 3: `dataset-v3.zarr`
(the default format) and `dataset-v2.zarr` (zarr_format=2).

Expected values: zarr-python reads every array back (raw stored values, attributes as stored), and xarray
with decode_cf=False must read the same values and gives the dimension names.
"""
import json
import os
import sys
import warnings

import numpy as np
import pandas as pd
import xarray as xr
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expected  # noqa: E402

warnings.simplefilter("ignore")  # zarr 3's v2 string and consolidated-metadata warnings
ZARR3 = int(zarr.__version__.split(".")[0]) >= 3


def datasets():
    rng = np.random.default_rng(25)
    time = pd.date_range("2001-03-01", periods=10, freq="D")
    lat = np.linspace(-50.0, 50.0, 7)
    lon = np.arange(0.0, 360.0, 40.0)  # 9
    station = np.array(["Aberdeen", "Bergen", "Cádiz", "Dún Laoghaire", "Évora"])
    temp = (280 + 15 * rng.standard_normal((10, 7, 9))).astype("float32")
    temp[2, 3, 4] = np.nan
    packed = 273.15 + 20 * rng.standard_normal((10, 7, 9))
    packed[0, 0, :3] = np.nan  # stored as _FillValue
    root = xr.Dataset(
        {
            "temperature": (("time", "lat", "lon"), temp, {"units": "K", "long_name": "air temperature"}),
            "packed_temperature": (("time", "lat", "lon"), packed,
                                   {"units": "K", "standard_name": "air_temperature"}),
            "elevation": (("lat", "lon"), rng.uniform(-200, 4000, (7, 9)).round(1),
                          {"units": "m", "positive": "up"}),
            "counts": (("time", "station"), rng.integers(0, 1000, (10, 5)).astype("int32")),
            "station_kind": (("station",), np.array(["coastal", "inland", "coastal", "harbour", "inland"],
                                                    dtype=object)),
        },
        coords={"time": time, "lat": ("lat", lat, {"units": "degrees_north"}),
                "lon": ("lon", lon, {"units": "degrees_east"}), "station": station},
        attrs={"title": "libzarr real-world corpus", "Conventions": "CF-1.8", "institution": "nowhere",
               "history": "written by tests/corpus/write_xarray.py", "version": 3, "ratio": 0.25,
               "flags": [1, 2, 3]},
    )
    encoding = {
        "time": {"units": "days since 2000-01-01", "calendar": "proleptic_gregorian", "dtype": "int64",
                 "chunks": (4,)},
        "temperature": {"chunks": (4, 3, 4)},
        "packed_temperature": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 273.15,
                               "_FillValue": -32767, "chunks": (3, 4, 5)},
        "elevation": {"chunks": (3, 4)},
        "counts": {"chunks": (4, 2)},
    }
    sub = xr.Dataset(
        {"precipitation": (("step", "lat", "lon"), rng.gamma(2.0, 1.5, (6, 7, 9)).astype("float32"),
                           {"units": "mm", "cell_methods": "step: sum"}),
         "precipitation_mean": (("lat", "lon"), rng.gamma(2.0, 1.5, (7, 9)), {"units": "mm"})},
        coords={"step": ("step", np.arange(6, dtype="int32") * 6, {"units": "hours"}),
                "lat": ("lat", lat, {"units": "degrees_north"}), "lon": ("lon", lon, {"units": "degrees_east"})},
        attrs={"title": "forecast", "model": "none"},
    )
    sub_encoding = {"precipitation": {"chunks": (4, 4, 4)}, "precipitation_mean": {"chunks": (4, 5)}}
    return root, encoding, sub, sub_encoding


def write(path, zarr_format):
    root, encoding, sub, sub_encoding = datasets()
    kwargs = {"zarr_format": zarr_format} if ZARR3 else {}
    root.to_zarr(path, mode="w", consolidated=True, encoding=encoding, **kwargs)
    sub.to_zarr(path, mode="a", group="forecast", consolidated=True, encoding=sub_encoding, **kwargs)


def record(path, writer, zarr_format):
    z = zarr.open_consolidated(path, mode="r")
    arrays, groups = [], []
    for group_path, xr_group in (("", None), ("forecast", "forecast")):
        g = z if not group_path else z[group_path]
        groups.append({"path": group_path, "attributes": expected.plain(dict(g.attrs))})
        ds = xr.open_zarr(path, group=xr_group, decode_cf=False, consolidated=True, zarr_format=zarr_format) \
            if ZARR3 else xr.open_zarr(path, group=xr_group, decode_cf=False, consolidated=True)
        names = sorted(name for name, _ in g.arrays())
        assert sorted(ds.variables) == names, (sorted(ds.variables), names)
        for name in names:
            a = g[name]
            data = a[...]
            xr_data = ds[name].values
            assert xr_data.dtype == data.dtype or data.dtype.kind in "OT", (name, xr_data.dtype, data.dtype)
            assert np.array_equal(np.asarray(xr_data, dtype=data.dtype if data.dtype.kind not in "OT" else object),
                                  data if data.dtype.kind not in "OT" else data.astype(object),
                                  equal_nan=data.dtype.kind == "f"), name
            full = f"{group_path}/{name}" if group_path else name
            arrays.append(expected.array_entry(full, data, data.dtype, list(ds[name].dims), a.attrs))
    p = next(a for a in arrays if a["path"] == "packed_temperature")
    assert p["dtype"] == "<i2" and "scale_factor" in p["attributes"], p
    expected.write(path, {"writer": writer, "versions": {"xarray": xr.__version__, "zarr": zarr.__version__,
                                                         "numpy": np.__version__},
                          "zarr_format": zarr_format, "consolidated": True,
                          "budget_array": "packed_temperature", "arrays": arrays, "groups": groups})


def main(out):
    os.makedirs(out, exist_ok=True)
    writer = f"xarray {xr.__version__} + zarr-python {zarr.__version__}"
    formats = [("dataset-v3.zarr", 3), ("dataset-v2.zarr", 2)] if ZARR3 else [("dataset.zarr", 2)]
    for name, zarr_format in formats:
        path = os.path.join(out, name)
        write(path, zarr_format)
        if zarr_format == 2:  # what the consolidation holds: every node, the subgroup's included
            meta = json.load(open(os.path.join(path, ".zmetadata")))["metadata"]
            assert "forecast/precipitation/.zarray" in meta and "packed_temperature/.zarray" in meta, sorted(meta)
        record(path, writer, zarr_format)


if __name__ == "__main__":
    main(sys.argv[1])
