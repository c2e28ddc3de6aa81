"""netCDF-C's stores for the real-world corpus (scripts/corpus.sh): `write_netcdf.py OUTDIR`, run by
Debian's Python 3 with Debian's python3-netcdf4, which uses the same libnetcdf as Debian's netcdf-bin.

`ncgen` makes `corpus.nc` (netCDF-4) from CDL: root variables (a time coordinate in days since ...,
lat/lon, a CF-packed int16 3-D variable with scale_factor, add_offset and _FillValue and one fill value in
its data, a 2-D int32 variable) and a subgroup `forecast` whose 3-D variable uses the root's dimensions.
Then:
  * `nccopy corpus.nc 'file://DIR/nccopy-nczarr.zarr#mode=nczarr,file'` (NCZarr: dimension references in
    `.zarray`'s `_NCZARR_ARRAY`, attribute types in `_NCZARR_ATTR`);
  * `nccopy corpus.nc 'file://DIR/nccopy-zarr.zarr#mode=zarr,file'` (plain Zarr: `_ARRAY_DIMENSIONS`);
  * `ncgen -o 'file://DIR/ncgen-nczarr.zarr#mode=nczarr,file'` from the same CDL: netCDF-C 4.9's nccopy
    writes every variable as a single chunk whatever `-c` or the input's chunking says, while ncgen keeps
    the CDL's `_ChunkSizes`, so this store has several chunks per variable (and edge chunks).
None of them has consolidated metadata (netCDF-C 4.9 writes none).

Expected values: netCDF-C itself reads each store back (netCDF4.Dataset on the same URL, no masking or
scaling). Attributes are what it reports; `_ARRAY_DIMENSIONS`, `_NCZARR_ATTR` and `_NCProperties`, which it
consumes, are listed as ignored. A dimension netCDF-C finds unnamed in the store (the subgroup's variable in
plain Zarr mode: no `_ARRAY_DIMENSIONS` there) it calls `_zdim_<size>`; those are recorded as unnamed (null).
"""
import json
import os
import re
import shutil
import subprocess
import sys

import netCDF4
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expected  # noqa: E402

CONSUMED = {"_ARRAY_DIMENSIONS", "_NCZARR_ATTR", "_NCProperties"}


def cdl_values(a, fill=None):
    flat = a.ravel()
    return ", ".join("_" if fill is not None and v == fill else repr(v.item()) for v in flat)


def cdl():
    rng = np.random.default_rng(4)
    t, y, x = 6, 7, 9
    temp = rng.integers(-2000, 2000, (t, y, x)).astype("int16")
    temp[1, 2, 3] = -32767  # written as the fill value
    mask = rng.integers(0, 2, (y, x)).astype("int32")
    precip = rng.gamma(2.0, 1.5, (t, y, x)).astype("float32").round(2)
    return f"""netcdf corpus {{
dimensions:
  time = {t} ; lat = {y} ; lon = {x} ;
variables:
  double time(time) ; time:units = "days since 2000-01-01" ; time:calendar = "standard" ;
  float lat(lat) ; lat:units = "degrees_north" ;
  float lon(lon) ; lon:units = "degrees_east" ;
  short temp(time, lat, lon) ; temp:scale_factor = 0.01 ; temp:add_offset = 273.15 ;
    temp:_FillValue = -32767s ; temp:units = "K" ; temp:long_name = "air temperature" ;
    temp:_Storage = "chunked" ; temp:_ChunkSizes = 4, 3, 4 ;
  int mask(lat, lon) ; mask:flag_values = 0, 1 ; mask:flag_meanings = "sea land" ;
    mask:_Storage = "chunked" ; mask:_ChunkSizes = 4, 5 ;
  :title = "netCDF-C corpus" ; :version = 2 ; :Conventions = "CF-1.8" ;
data:
  time = {cdl_values(np.arange(t) * 1.5)} ;
  lat = {cdl_values(np.linspace(-30, 30, y).astype('float32'))} ;
  lon = {cdl_values(np.arange(x, dtype='float32') * 40)} ;
  temp = {cdl_values(temp, fill=-32767)} ;
  mask = {cdl_values(mask)} ;
group: forecast {{
  variables:
    float precip(time, lat, lon) ; precip:units = "mm" ;
      precip:_Storage = "chunked" ; precip:_ChunkSizes = 4, 4, 5 ;
    :model = "none" ;
  data:
    precip = {cdl_values(precip)} ;
  }}
}}
"""


def run(*args):
    subprocess.run(args, check=True)


def record(path, mode, how):
    ds = netCDF4.Dataset(f"file://{os.path.abspath(path)}#mode={mode},file")
    ds.set_auto_maskandscale(False)
    arrays, groups = [], []

    def walk(g, prefix):
        raw = json.load(open(os.path.join(path, prefix, ".zattrs"))) \
            if os.path.exists(os.path.join(path, prefix, ".zattrs")) else {}
        attrs = {k: g.getncattr(k) for k in g.ncattrs()}
        ignored = set(raw) - set(attrs)
        assert ignored <= CONSUMED, (prefix, ignored)
        groups.append({"path": prefix.rstrip("/"), "attributes": expected.plain(attrs),
                       "ignored_attributes": sorted(ignored)})
        for name, v in g.variables.items():
            full = prefix + name
            raw = json.load(open(os.path.join(path, full, ".zattrs")))
            attrs = {k: v.getncattr(k) for k in v.ncattrs()}
            ignored = set(raw) - set(attrs)
            assert ignored <= CONSUMED, (full, ignored)
            dims = [None if re.fullmatch(r"_zdim_\d+", d) else d for d in v.dimensions]
            data = v[...]
            arrays.append(expected.array_entry(full, np.asarray(data), v.dtype, dims, attrs, ignored))
        for name, sub in g.groups.items():
            walk(sub, prefix + name + "/")

    walk(ds, "")
    ds.close()
    precip = next(a for a in arrays if a["path"] == "forecast/precip")
    if mode == "nczarr":  # what the NCZarr case is about: names only in the dimension references
        assert precip["dimension_names"] == ["time", "lat", "lon"], precip["dimension_names"]
        assert "_ARRAY_DIMENSIONS" not in json.load(open(os.path.join(path, "forecast/precip/.zattrs")))
    expected.write(path, {"writer": f"netCDF-C {netCDF4.__netcdf4libversion__} {how} (mode={mode})",
                          "versions": {"netcdf-c": netCDF4.__netcdf4libversion__,
                                       "netCDF4-python": netCDF4.__version__},
                          "zarr_format": 2, "consolidated": False, "budget_array": "temp",
                          "arrays": arrays, "groups": groups})


def main(out):
    os.makedirs(out, exist_ok=True)
    source, nc = os.path.join(out, "corpus.cdl"), os.path.join(out, "corpus.nc")
    with open(source, "w") as f:
        f.write(cdl())
    run("ncgen", "-k", "nc4", "-o", nc, source)
    cases = [("nccopy-nczarr.zarr", "nczarr", "nccopy"), ("nccopy-zarr.zarr", "zarr", "nccopy"),
             ("ncgen-nczarr.zarr", "nczarr", "ncgen")]
    for name, mode, how in cases:
        path = os.path.join(out, name)
        shutil.rmtree(path, ignore_errors=True)
        url = f"file://{os.path.abspath(path)}#mode={mode},file"
        if how == "nccopy":
            run("nccopy", nc, url)
        else:
            run("ncgen", "-k", "nc4", "-o", url, source)
        record(path, mode, how)
    # The ncgen store is the one with several chunks (see the docstring).
    assert json.load(open(os.path.join(out, "ncgen-nczarr.zarr", "temp", ".zarray")))["chunks"] == [4, 3, 4]


if __name__ == "__main__":
    main(sys.argv[1])
