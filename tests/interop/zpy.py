"""The only place that knows how zarr-python 2.x and 3.x differ (Zarr v2 format, local directories)."""
import numpy as np
import zarr

ZARR3 = int(zarr.__version__.split(".")[0]) >= 3


def create(path, *, shape, chunks, dtype, compressor=None, fill_value=0, order="C", separator=".",
           attrs=None):
    """Create a Zarr v2 array at directory `path` (numcodecs compressor or None, filters=None)."""
    if ZARR3:
        arr = zarr.create_array(
            store=str(path), shape=shape, chunks=chunks, dtype=dtype, compressors=compressor,
            filters=None, fill_value=fill_value, order=order, zarr_format=2,
            chunk_key_encoding={"name": "v2", "separator": separator},
            config={"write_empty_chunks": True})
    else:
        arr = zarr.open_array(
            store=zarr.DirectoryStore(str(path)), mode="w-", shape=shape, chunks=chunks, dtype=dtype,
            compressor=compressor, filters=None, fill_value=fill_value, order=order,
            dimension_separator=separator, write_empty_chunks=True)
    if attrs:
        arr.attrs.update(attrs)
    return arr


def open_array(path, mode="r"):
    if ZARR3:
        return zarr.open_array(str(path), mode=mode, zarr_format=2)
    return zarr.open_array(store=zarr.DirectoryStore(str(path)), mode=mode)


def open_group(path, mode="r"):
    if ZARR3:
        return zarr.open_group(str(path), mode=mode, zarr_format=2)
    return zarr.open_group(store=zarr.DirectoryStore(str(path)), mode=mode)


def read(arr):
    """Whole array as a native-byte-order numpy array (0-d stays 0-d)."""
    out = np.asarray(arr[...])
    return out.astype(out.dtype.newbyteorder("="))


def listing(group):
    return {"arrays": sorted(group.array_keys()), "groups": sorted(group.group_keys())}


def properties(arr):
    """What zarr-python understood of an array's metadata, in plain Python values."""
    if ZARR3:
        meta = arr.metadata
        comp, filters, sep = meta.compressor, meta.filters, meta.dimension_separator
    else:
        comp, filters, sep = arr.compressor, arr.filters, arr._dimension_separator
    return {
        "shape": list(arr.shape), "chunks": list(arr.chunks), "dtype": np.dtype(arr.dtype).str,
        "fill_value": arr.fill_value, "order": arr.order,
        "compressor": comp.get_config() if comp is not None else None,
        "filters": [f.get_config() for f in filters] if filters else None,
        "separator": sep or ".",
    }


def open_for_writing(path, write_empty_chunks):
    """zarr-python's array, opened with its own write_empty_chunks setting (zpy.create sets True)."""
    if ZARR3:
        z = zarr.open_array(str(path), mode="r+", zarr_format=2)  # (zarr 3.1.6 ignores config= here)
        return z.with_config({"write_empty_chunks": write_empty_chunks})
    return zarr.open_array(store=zarr.DirectoryStore(str(path)), mode="r+", write_empty_chunks=write_empty_chunks)
