"""The only place that knows how zarr-python 2.x and 3.x differ (Zarr v2 format, local directories)."""
import json
import re

import numpy as np
import zarr

# (major, minor) of this zarr-python: the zarr3 flavour of the tests runs 3.1, zarr3-newest the newest 3.x (3.4
# when written), and some behaviour differs between them (each use says how).
ZARR_VERSION = tuple(int(n) for n in re.match(r"(\d+)\.(\d+)", zarr.__version__).groups())
ZARR3 = ZARR_VERSION[0] >= 3


def create(path, *, shape, chunks, dtype, compressor=None, fill_value=0, order="C", separator=".",
           attrs=None, filters=None):
    """Create a Zarr v2 array at directory `path` (numcodecs compressor or None; numcodecs filters or None)."""
    if ZARR3:
        arr = zarr.create_array(
            store=str(path), shape=shape, chunks=chunks, dtype=dtype, compressors=compressor,
            filters=filters, fill_value=fill_value, order=order, zarr_format=2,
            chunk_key_encoding={"name": "v2", "separator": separator},
            config={"write_empty_chunks": True})
    else:
        arr = zarr.open_array(
            store=zarr.DirectoryStore(str(path)), mode="w-", shape=shape, chunks=chunks, dtype=dtype,
            compressor=compressor, filters=filters, fill_value=fill_value, order=order,
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


# ---------------------------------------------------------------- data types beyond numbers (test_dtypes.py)
def _fields(dtype):
    """The dtypes of all fields of a structured dtype, those of nested records included."""
    for f, *_ in (dtype.fields or {}).values():
        yield f
        yield from _fields(f.base)


def _generic_times(dtype):
    """The datetime64/timedelta64 types without a unit ("<M8", ">m8") in dtype, fields included."""
    return [d for d in [np.dtype(dtype)] + [f.base for f in _fields(np.dtype(dtype))]
            if d.kind in "Mm" and np.datetime_data(d)[0] == "generic"]


ZARR2_GENERIC_TIME = "zarr-python 2 refuses datetime64/timedelta64 without a unit (generic); zarr 3 takes them"


def cannot_write(dtype, compressor=None):
    """Why this zarr-python cannot write Zarr v2 arrays of `dtype` faithfully (None: it can)."""
    fields = list(_fields(np.dtype(dtype)))
    if not ZARR3:
        return ZARR2_GENERIC_TIME if _generic_times(dtype) else None
    if any(d.byteorder == ">" for d in _generic_times(dtype)):
        return ("zarr-python 3.1 and 3.4 store big-endian datetime64/timedelta64 without a unit (>m8, >M8) in "
                "little-endian byte order: they read their own values back byte-swapped")
    if any(f.shape for f in fields):
        return SUBARRAY_FIELDS_REFUSED if REFUSES_SUBARRAY_FIELDS else (
            "zarr-python 3.1 writes sub-array fields as raw |V<n> fields (['z', '<f4', [2, 2]] becomes "
            "['z', '|V16']) and keeps only the first value of each sub-array in the fill value")
    if compressor is not None and any(f.base.kind in "Mm" for f in fields):
        return ("zarr-python 3.1 and 3.4 cannot compress records with datetime64/timedelta64 fields (numcodecs: "
                "cannot include dtype 'M' in a buffer); uncompressed they can")
    return None


# zarr-python 3.4 refuses to create arrays with sub-array fields (3.1 flattened them to |V<n>, see cannot_write)
REFUSES_SUBARRAY_FIELDS = ZARR_VERSION >= (3, 4)
SUBARRAY_FIELDS_REFUSED = ("zarr-python 3.4 refuses to create arrays with sub-array fields (ValueError: Cannot "
                           "convert the structured data type ...: field 'z' is a subarray)")


def cannot_open(dtype, fill_value=None):
    """Why this zarr-python cannot open Zarr v2 arrays of `dtype` with `fill_value` (None: it can)."""
    fields = list(_fields(np.dtype(dtype)))
    if not ZARR3 and _generic_times(dtype):
        return ZARR2_GENERIC_TIME
    if ZARR3 and fill_value is not None and _generic_times(dtype):
        return ("zarr-python 3.1 and 3.4 cannot open arrays of datetime64 without a unit whose fill value is not "
                "null (3.1: Converting an integer to a NumPy datetime requires a specified unit; 3.4: Cannot "
                "convert a NumPy datetime value other than NaT with generic units)")
    if ZARR3 and any(f.shape for f in fields):
        return ("zarr-python 3.1 and 3.4 cannot open arrays with sub-array fields (No Zarr data type found that "
                "matches)")
    if ZARR3 and ZARR_VERSION < (3, 4) and any(f.base.names for f in fields):  # zarr-python 3.4 opens them
        return "zarr-python 3.1 cannot open arrays with nested records (No Zarr data type found that matches)"
    return None


def get_fields(arr, selection, fields):
    """zarr-python's field selection `get_basic_selection(selection, fields=fields)`: the named fields of the
    selected records, packed, in the order given. zarr 3.1 keeps the `fields=` parameter but it is broken: it
    casts the records to the selected fields by position, so a subset fails (TypeError: cannot cast) and all
    the fields in another order come back silently wrong ((a, b) read with fields=["b", "a"] gives b=a, a=b).
    There it is numpy's multi-field index of the selected records, repacked (recfunctions.repack_fields)."""
    fields = list(fields)
    if ZARR3:
        from numpy.lib import recfunctions
        return recfunctions.repack_fields(np.asarray(arr.get_basic_selection(selection))[fields])
    return arr.get_basic_selection(selection, fields=fields)


# ---------------------------------------------------------------- hierarchies (test_group_tree.py)
def create_member(group, name, *, shape, chunks, dtype, separator=".", fill_value=0, object_codec=None):
    """An uncompressed Zarr v2 array `name` directly in `group`; an object array (dtype object) needs
    `object_codec` (zarr 3 takes only vlen-utf8 and vlen-bytes, as its str and bytes types)."""
    if ZARR3:
        if object_codec is not None:
            dtype = {"vlen-utf8": str, "vlen-bytes": bytes}[object_codec.codec_id]
        return group.create_array(name, shape=shape, chunks=chunks, dtype=dtype, compressors=None,
                                  fill_value=fill_value, chunk_key_encoding={"name": "v2", "separator": separator})
    return group.create_dataset(name, shape=shape, chunks=chunks, dtype=dtype, compressor=None,
                                fill_value=fill_value, dimension_separator=separator, object_codec=object_codec)


def stored_dtype(arr):
    """The `.zarray` dtype of an array as zarr-python encodes it (zarr 3 reads `|O` text as StringDType)."""
    if ZARR3:
        encoded = arr.metadata.to_dict()["dtype"]
    else:
        encoded = zarr.meta.Metadata2.encode_dtype(np.dtype(arr.dtype))
    return json.loads(json.dumps(encoded))  # tuples of a record's descr become lists, as in JSON


def walk(group):
    """Every array and group below `group` as (path relative to it, node), as zarr-python's own walk finds
    them (zarr 2: visititems, zarr 3: members(max_depth=None))."""
    if ZARR3:
        return list(group.members(max_depth=None))
    found = []
    group.visititems(lambda path, node: found.append((path, node)))
    return found


# ---------------------------------------------------------------- chunks arguments (test_create_defaults.py)
def guess_chunks(shape, itemsize):
    """zarr-python's chunk shape guessed for an array of `shape` with `itemsize`-byte items (zarr 2:
    zarr.util.guess_chunks; zarr 3.1: chunk_grids._guess_chunks; zarr 3.3 and later: _guess_regular_chunks, the
    same algorithm)."""
    if not ZARR3:
        from zarr.util import guess_chunks as guess
        return tuple(guess(shape, itemsize))
    from zarr.core import chunk_grids
    guess = getattr(chunk_grids, "_guess_chunks", None) or chunk_grids._guess_regular_chunks
    return tuple(guess(shape, itemsize))


def normalize_chunks(chunks, shape, itemsize):
    """zarr-python's reading of a `chunks` argument for an array of `shape`: a tuple, or None where this
    zarr-python refuses the argument. zarr 2 and 3.1 (normalize_chunks) guess for None and True, take one
    integer for every dimension, -1 and None for a whole dimension and leave the dimensions past a short list
    whole; zarr 3.3 and later (normalize_chunks_nd, what create_array uses) refuse None, True, None in a list
    and lists shorter than the shape (ValueError)."""
    if not ZARR3:
        from zarr.util import normalize_chunks as normalize
        return tuple(normalize(chunks, shape, itemsize))
    from zarr.core import chunk_grids
    if hasattr(chunk_grids, "normalize_chunks"):
        return tuple(chunk_grids.normalize_chunks(chunks, shape, itemsize))
    try:
        return tuple(chunk_grids.normalize_chunks_nd(chunks, shape).chunk_shape)
    except ValueError:
        return None
