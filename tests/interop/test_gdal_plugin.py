"""The GDAL plugin (gdal/libzarr_driver.cpp, which CMake builds into build/cmake/gdalplugins): Debian's GDAL
(3.6, which cannot read final Zarr v3) opens arrays zarr-python wrote, v2, v3 and sharded v3, through libzarr, and
gdalinfo and gdal_translate give zarr-python's shape, type, nodata and values; and a rectilinear array (chunks of
unequal lengths, written through libzarr) in blocks of up to 256 pixels. Needs LIBZARR_GDAL_PLUGIN_DIR
(scripts/test.sh sets it); skipped without it unless LIBZARR_GDAL_REQUIRED is set.
"""
import json
import os
import shutil
import subprocess

import libzarr
import numpy as np
import pytest
import zarr

PLUGINS = os.environ.get("LIBZARR_GDAL_PLUGIN_DIR")
if PLUGINS is None or shutil.which("gdal_translate") is None:
    if os.environ.get("LIBZARR_GDAL_REQUIRED"):
        raise RuntimeError("LIBZARR_GDAL_PLUGIN_DIR or gdal_translate is missing (scripts/test.sh provides both)")
    pytest.skip("no GDAL plugin built (scripts/test.sh builds it)", allow_module_level=True)

ZARR3 = int(zarr.__version__.split(".")[0]) >= 3


def gdal(*args):
    """Runs a GDAL tool with the plugin: (exit code, stdout, stderr)."""
    done = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, GDAL_DRIVER_PATH=PLUGINS))
    return done.returncode, done.stdout, done.stderr


def write(store, path, values, chunks, fill, fmt, **v3):
    """An array of zarr-python in Zarr format `fmt` holding `values` (`v3`: more keywords, shards=...)."""
    if ZARR3:
        array = zarr.create_array(store, name=path, shape=values.shape, chunks=chunks, dtype=values.dtype,
                                  fill_value=fill, zarr_format=fmt, **v3)
    else:
        array = zarr.open_array(f"{store}/{path}", mode="w", shape=values.shape, chunks=chunks,
                                dtype=values.dtype, fill_value=fill)
    array[...] = values
    return array


def translated(name, tmp_path, dtype, shape):
    """The raster `name` through gdal_translate -of ENVI: its values, bands first."""
    out = tmp_path / "out.img"
    code, _, err = gdal("gdal_translate", "-q", "-of", "ENVI", name, str(out))
    assert code == 0, err
    return np.fromfile(out, dtype=dtype).reshape(shape)


CASES = [
    # (name, zarr format, values, chunks, fill, v3 keywords)
    ("v2-int16", 2, (np.arange(37 * 53, dtype="<i2").reshape(37, 53) * 7 - 900), (10, 16), -9, {}),
    ("v2-uint8-bands", 2, np.arange(3 * 20 * 30, dtype="u1").reshape(3, 20, 30), (1, 8, 8), 0, {}),
    ("v3-float32-bands", 3, np.linspace(-1, 1, 2 * 21 * 17, dtype="<f4").reshape(2, 21, 17), (1, 8, 8), np.nan, {}),
    ("v3-sharded-uint16", 3, np.arange(64 * 48, dtype="<u2").reshape(64, 48), (8, 8), 7,
     {"shards": (32, 24), "compressors": [{"name": "zstd", "configuration": {"level": 3}}]}),
    ("v3-float64-partial", 3, np.full((30, 40), 2.5), (16, 16), -1.0, {}),
]


@pytest.mark.parametrize("name,fmt,values,chunks,fill,v3", CASES, ids=[c[0] for c in CASES])
def test_gdal_reads_what_zarr_python_wrote(tmp_path, name, fmt, values, chunks, fill, v3):
    if fmt == 3 and not ZARR3:
        pytest.skip("zarr-python 2 writes no Zarr v3")
    store = str(tmp_path / "data.zarr")
    if name == "v3-float64-partial":
        # Only the chunks under [5:20, 10:33] are stored; the others read as the fill value.
        array = write(store, "a", np.full(values.shape, fill), chunks, fill, fmt, **v3)
        array[5:20, 10:33] = values[5:20, 10:33]
        values = np.full(values.shape, fill)
        values[5:20, 10:33] = 2.5
    else:
        write(store, "a", values, chunks, fill, fmt, **v3)
    dataset = f'LIBZARR:"{store}":a'
    code, out, err = gdal("gdalinfo", "-json", dataset)
    assert code == 0, err
    info = json.loads(out)
    assert info["driverShortName"] == "LIBZARR"
    bands = values.shape[0] if values.ndim == 3 else 1
    assert info["size"] == [values.shape[-1], values.shape[-2]]
    assert len(info["bands"]) == bands
    assert info["bands"][0]["block"] == [chunks[-1], chunks[-2]]
    nodata = info["bands"][0].get("noDataValue")
    assert nodata == fill or (np.isnan(fill) and nodata == "NaN")
    got = translated(dataset, tmp_path, values.dtype.newbyteorder("="), (bands,) + values.shape[-2:])
    np.testing.assert_array_equal(got, values.reshape((bands,) + values.shape[-2:]))
    if fmt == 3:
        # A v3 directory opens by its path alone (GDAL 3.6's own Zarr driver cannot read it).
        code, out, err = gdal("gdalinfo", "-json", f"{store}/a")
        assert code == 0 and json.loads(out)["driverShortName"] == "LIBZARR", err


def test_gdal_reads_a_rectilinear_grid(tmp_path):
    store = str(tmp_path / "data.zarr")
    values = (np.arange(300 * 70, dtype="<i4").reshape(300, 70) * 3 - 1000)
    meta = {"zarr_format": 3, "node_type": "array", "shape": [300, 70], "data_type": "int32",
            "chunk_grid": {"name": "rectilinear", "configuration": {
                "kind": "inline", "chunk_shapes": [[[100, 2], 37, 80], [5, [30, 2], 9]]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": -1,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}]}
    with libzarr.Store.open(store, "w") as s, s.create_array("a", meta) as a:
        a.write(values)
    dataset = f'LIBZARR:"{store}":a'
    code, out, err = gdal("gdalinfo", "-json", dataset)
    assert code == 0, err
    info = json.loads(out)
    assert info["size"] == [70, 300]
    assert info["bands"][0]["block"] == [70, 256]
    np.testing.assert_array_equal(translated(dataset, tmp_path, np.dtype("=i4"), (1, 300, 70))[0], values)


def test_errors_name_what_failed(tmp_path):
    store = str(tmp_path / "data.zarr")
    write(store, "a", np.zeros((4, 4, 4, 4), dtype="<i4"), (2, 2, 2, 2), 0, 2)
    code, _, err = gdal("gdalinfo", f'LIBZARR:"{store}":missing')
    assert code != 0 and "missing" in err, err
    code, _, err = gdal("gdalinfo", f'LIBZARR:"{store}":a')
    assert code != 0 and "4 dimensions" in err, err
