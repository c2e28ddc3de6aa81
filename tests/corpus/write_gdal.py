"""GDAL's stores for the real-world corpus (scripts/corpus.sh): `write_gdal.py OUTDIR`, run by Debian's
Python 3 with Debian's python3-gdal (the same libgdal as Debian's gdal-bin).

GDAL makes two small GeoTIFFs itself (GTiff driver, from NumPy arrays, with a geotransform, EPSG:4326,
nodata and dataset metadata), then `gdal_translate -of Zarr` (the command line tool) converts each:
  * `int16-zlib.zarr`: 3 bands of Int16, `COMPRESS=ZLIB`, 16 x 16 blocks (edge chunks);
  * `float32-blosc.zarr`: 1 band of Float32 with NaN nodata, `COMPRESS=BLOSC`, 10 x 12 blocks, chunks in
    Fortran order (`CHUNK_MEMORY_LAYOUT=F`).
Each is a v2 group of one 2-D array per band (`Band1`, ...; a single band is named after the file) plus the `X` and `Y` coordinate arrays GDAL
adds, consolidated (`.zmetadata`, GDAL's default). GDAL 3.6 writes Zarr v3 only as the withdrawn draft
(`zarr.json` naming `https://purl.org/zarr/spec/protocol/core/3.0`, documents under `meta/root/`), which is
not Zarr v3: the script checks that this is still so and leaves v3 out.

Expected values: GDAL's multidimensional API reads each store back (array names, dimension names, values,
attributes). It reports neither `_ARRAY_DIMENSIONS` (dimensions) nor `_CRS` (the spatial reference), which
are listed as ignored.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
from osgeo import gdal, gdal_array, osr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expected  # noqa: E402

gdal.UseExceptions()
CONSUMED = {"_ARRAY_DIMENSIONS", "_CRS"}


def geotiff(path, data, gdal_type, nodata):
    bands, height, width = data.shape
    ds = gdal.GetDriverByName("GTiff").Create(path, width, height, bands, gdal_type)
    ds.SetGeoTransform([10.0, 0.5, 0.0, 60.0, 0.0, -0.25])
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    ds.SetProjection(srs.ExportToWkt())
    ds.SetMetadata({"AREA_OR_POINT": "Area", "source": "libzarr corpus"})
    for b in range(bands):
        band = ds.GetRasterBand(b + 1)
        band.WriteArray(data[b])
        band.SetNoDataValue(nodata)
    ds.FlushCache()
    ds = None


def record(path):
    ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER)
    root = ds.GetRootGroup()
    assert not root.GetGroupNames(), root.GetGroupNames()
    raw = json.load(open(os.path.join(path, ".zattrs"))) if os.path.exists(os.path.join(path, ".zattrs")) else {}
    attrs = {a.GetName(): a.Read() for a in root.GetAttributes()}
    assert set(raw) - set(attrs) <= CONSUMED
    groups = [{"path": "", "attributes": expected.plain(attrs), "ignored_attributes": sorted(set(raw) - set(attrs))}]
    arrays = []
    for name in root.GetMDArrayNames():
        a = root.OpenMDArray(name)
        data = a.ReadAsArray()
        dtype = np.dtype(gdal_array.GDALTypeCodeToNumericTypeCode(a.GetDataType().GetNumericDataType()))
        assert data.dtype == dtype, (name, data.dtype, dtype)
        attrs = {x.GetName(): x.Read() for x in a.GetAttributes()}
        zattrs = os.path.join(path, name, ".zattrs")
        raw = json.load(open(zattrs)) if os.path.exists(zattrs) else {}
        ignored = set(raw) - set(attrs)
        assert ignored <= CONSUMED, (name, ignored)
        dims = [d.GetName() for d in a.GetDimensions()]
        arrays.append(expected.array_entry(name, data, dtype, dims, attrs, ignored))
    assert os.path.exists(os.path.join(path, ".zmetadata"))
    return arrays, groups


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(36)
    ints = rng.integers(-3000, 3000, (3, 37, 45)).astype("int16")
    ints[0, :2, :5] = -9999  # nodata
    floats = rng.standard_normal((1, 23, 29)).astype("float32")
    floats[0, 5, 7:11] = np.nan
    cases = [("int16-zlib", ints, gdal.GDT_Int16, -9999, ["COMPRESS=ZLIB", "BLOCKSIZE=16,16"], "Band2"),
             ("float32-blosc", floats, gdal.GDT_Float32, float("nan"),
              ["COMPRESS=BLOSC", "BLOCKSIZE=10,12", "CHUNK_MEMORY_LAYOUT=F"], "float32-blosc")]
    for name, data, gdal_type, nodata, options, budget in cases:
        tif, path = os.path.join(out, f"{name}.tif"), os.path.join(out, f"{name}.zarr")
        shutil.rmtree(path, ignore_errors=True)
        geotiff(tif, data, gdal_type, nodata)
        args = ["gdal_translate", "-q", "-of", "Zarr"]
        for option in options:
            args += ["-co", option]
        subprocess.run(args + [tif, path], check=True)
        arrays, groups = record(path)
        bands = {a["path"]: a for a in arrays if a["path"] not in ("X", "Y")}
        assert len(bands) == data.shape[0] and bands[budget]["dtype"] == np.dtype(data.dtype).str, bands.keys()
        expected.write(path, {"writer": f"GDAL {gdal.__version__} gdal_translate -of Zarr",
                              "versions": {"gdal": gdal.__version__}, "zarr_format": 2, "consolidated": True,
                              "budget_array": budget, "arrays": arrays, "groups": groups})

    # Zarr v3 from GDAL 3.6: still the withdrawn draft? Then it stays out of the corpus.
    probe = os.path.join(out, "v3-probe.zarr")
    shutil.rmtree(probe, ignore_errors=True)
    subprocess.run(["gdal_translate", "-q", "-of", "Zarr", "-co", "FORMAT=ZARR_V3",
                    os.path.join(out, "int16-zlib.tif"), probe], check=True)
    root = json.load(open(os.path.join(probe, "zarr.json")))
    if root.get("zarr_format") == 3 and root.get("node_type") in ("group", "array"):
        sys.exit(f"GDAL {gdal.__version__} writes real Zarr v3 now: add it to tests/corpus/write_gdal.py")
    assert "core/3.0" in str(root.get("zarr_format")) and os.path.isdir(os.path.join(probe, "meta")), root
    shutil.rmtree(probe)


if __name__ == "__main__":
    main(sys.argv[1])
