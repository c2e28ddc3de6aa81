"""Thin ctypes binding of the libzarr C API (see include/zarr.h), usable with NumPy.

The library is the one LIBZARR_PATH names, else this checkout's target/release/libzarr.so when
built, else the installed one the system's loader finds (`ctypes.util.find_library("zarr")`,
e.g. after `cmake --install`; set LD_LIBRARY_PATH for a prefix the loader does not search).
tests/interop/ runs it against zarr-python 2 and 3 and numcodecs.

Every call checks its status and raises LibzarrError(status name + zarr_last_error()).
Strings returned through char** are copied and released with zarr_string_free.
Structured dtypes come from the .zarray list form (dtype_from_json / dtype_to_json); field selections
(read_fields / write_fields) exchange packed records of the named fields. UTF-8 <-> UTF-32: utf8_to_utf32,
utf32_to_utf8.
Buffers cross the boundary in native byte order: C-contiguous for read/write/points; the strided
and orthogonal calls also take any numpy view with non-negative strides (passed as buffer strides in
elements, with the size of the underlying buffer from the view's first element on).
"""
import ctypes as C
import ctypes.util
import json
import numbers
import os
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def _library_path():
    """LIBZARR_PATH, else this checkout's build, else the installed library (by SONAME)."""
    if os.environ.get("LIBZARR_PATH"):
        return os.environ["LIBZARR_PATH"]
    built = REPO / "target" / "release" / "libzarr.so"
    if built.exists():
        return str(built)
    return ctypes.util.find_library("zarr") or "libzarr.so.0.1"


LIB_PATH = _library_path()

MODE_READ, MODE_WRITE, MODE_UPDATE, MODE_OVERWRITE, MODE_CREATE = 0, 1, 2, 3, 4
MODES = {"r": MODE_READ, "r+": MODE_UPDATE, "a": MODE_WRITE, "w": MODE_OVERWRITE, "w-": MODE_CREATE}  # zarr-python's
_CREATE_MODES = {"w-": 0, "w": 1, "a": 2}  # zarr_create_mode
OPEN_IGNORE_CONSOLIDATED = 0x10  # or-ed into the mode
ORDER_C, ORDER_F = 0, 1
DTYPE_KINDS = {1: "b", 2: "i", 3: "u", 4: "f", 5: "c", 6: "S", 7: "U", 8: "V", 9: "M", 10: "m", 11: "V"}  # numpy's
DTYPE_BOOL, DTYPE_INT, DTYPE_UINT, DTYPE_FLOAT, DTYPE_COMPLEX = 1, 2, 3, 4, 5  # ZARR_DTYPE_*: kind_code
DTYPE_BYTES, DTYPE_UNICODE, DTYPE_RAW, DTYPE_DATETIME, DTYPE_TIMEDELTA, DTYPE_STRUCTURED = 6, 7, 8, 9, 10, 11
DTYPE_SMALL_FLOAT = 13

_h, _st, _sz, _u64p = C.c_void_p, C.c_int32, C.c_size_t, C.POINTER(C.c_uint64)
_out_h, _out_s = C.POINTER(C.c_void_p), C.POINTER(C.c_void_p)  # handle**, char**
_szp, _names = C.POINTER(C.c_size_t), C.POINTER(C.c_char_p)  # size_t*, const char *const * (field names)
_SIGNATURES = {
    "zarr_store_open": [C.c_char_p, C.c_int32, _out_h],
    "zarr_store_open_options": [C.c_char_p, C.c_int32, C.c_char_p, _out_h],
    "zarr_store_close": [_h],
    "zarr_store_flush": [_h],
    "zarr_array_create": [_h, C.c_char_p, C.c_char_p, _out_h],
    "zarr_array_open": [_h, C.c_char_p, _out_h],
    "zarr_array_close": [_h],
    "zarr_array_view": [_h, C.c_char_p, _out_h],
    "zarr_array_astype": [_h, C.c_char_p, _out_h],
    "zarr_array_ndim": [_h, C.POINTER(C.c_size_t)],
    "zarr_array_shape": [_h, _sz, _u64p],
    "zarr_array_chunks": [_h, _sz, _u64p],
    "zarr_array_dtype": [_h, C.POINTER(C.c_int32), C.POINTER(C.c_size_t)],
    "zarr_array_dtype_string": [_h, _out_s],
    "zarr_array_fill_value": [_h, C.c_void_p, _sz, C.POINTER(C.c_bool)],
    "zarr_array_order": [_h, C.POINTER(C.c_int32)],
    "zarr_array_compressor_json": [_h, _out_s],
    "zarr_array_filters_json": [_h, _out_s],
    "zarr_array_metadata_json": [_h, _out_s],
    "zarr_array_read": [_h, _sz, _u64p, _u64p, C.c_void_p, _sz],
    "zarr_array_write": [_h, _sz, _u64p, _u64p, C.c_void_p, _sz],
    "zarr_array_attrs_get": [_h, _out_s],
    "zarr_array_attrs_set": [_h, C.c_char_p],
    "zarr_group_create": [_h, C.c_char_p, _out_h],
    "zarr_group_open": [_h, C.c_char_p, _out_h],
    "zarr_group_close": [_h],
    "zarr_group_list": [_h, _out_s],
    "zarr_group_attrs_get": [_h, _out_s],
    "zarr_group_attrs_set": [_h, C.c_char_p],
    "zarr_array_read_strided": [_h, _sz, _u64p, _u64p, _u64p, _u64p, C.c_void_p, _sz],
    "zarr_array_write_strided": [_h, _sz, _u64p, _u64p, _u64p, _u64p, C.c_void_p, _sz],
    "zarr_array_read_orthogonal": [_h, _sz, C.c_void_p, _u64p, C.c_void_p, _sz],  # zarr_dim_selection*
    "zarr_array_write_orthogonal": [_h, _sz, C.c_void_p, _u64p, C.c_void_p, _sz],
    "zarr_array_read_points": [_h, _sz, _sz, _u64p, C.c_void_p, _sz],
    "zarr_array_write_points": [_h, _sz, _sz, _u64p, C.c_void_p, _sz],
    "zarr_set_num_threads": [_sz],
    "zarr_num_threads": [C.POINTER(C.c_size_t)],
    "zarr_array_set_write_empty_chunks": [_h, C.c_bool],
    "zarr_array_write_empty_chunks": [_h, C.POINTER(C.c_bool)],
    "zarr_array_time_unit": [_h, C.POINTER(C.c_char_p), _u64p],  # the unit name is static: not freed
    "zarr_array_field_count": [_h, _szp],
    "zarr_array_field": [_h, _sz, _out_s, _out_s, _szp, _szp, _szp],
    "zarr_array_fields_json": [_h, _out_s],
    "zarr_array_read_fields": [_h, _sz, _u64p, _u64p, _names, _sz, C.c_void_p, _sz],
    "zarr_array_write_fields": [_h, _sz, _u64p, _u64p, _names, _sz, C.c_void_p, _sz],
    "zarr_utf32_to_utf8": [C.c_void_p, _sz, C.c_void_p, _sz, _szp],
    "zarr_utf8_to_utf32": [C.c_void_p, _sz, C.c_void_p, _sz],
    "zarr_array_object_codec": [_h, _out_s],
    "zarr_array_vlen_size": [_h, _sz, _u64p, _u64p, _szp],
    "zarr_array_read_vlen": [_h, _sz, _u64p, _u64p, C.POINTER(C.c_int64), _sz, C.c_void_p, _sz],
    "zarr_array_write_vlen": [_h, _sz, _u64p, _u64p, C.POINTER(C.c_int64), _sz, C.c_void_p, _sz],
    "zarr_array_resize": [_h, _sz, _u64p],
    "zarr_array_append": [_h, _sz, C.c_uint64, C.c_void_p, _sz],
    "zarr_array_append_vlen": [_h, _sz, C.c_uint64, C.POINTER(C.c_int64), _sz, C.c_void_p, _sz],
    "zarr_consolidate_metadata": [_h],
    "zarr_store_refresh_consolidated": [_h, C.POINTER(C.c_bool)],
    "zarr_store_uses_consolidated": [_h, C.POINTER(C.c_bool)],
    "zarr_array_set_chunk_cache": [_h, C.c_uint64],
    "zarr_array_chunk_cache_stats": [_h, _u64p, _u64p, _u64p],
    "zarr_group_info_json": [_h, _out_s],
    "zarr_group_tree_text": [_h, _out_s],
    "zarr_group_tree_json": [_h, _out_s],
    "zarr_group_tree_text_level": [_h, C.c_int32, _out_s],
    "zarr_group_tree_json_level": [_h, C.c_int32, _out_s],
}


class Progress(C.Structure):
    """zarr_progress: bytes and items done out of the totals."""
    _fields_ = [("bytes_done", C.c_uint64), ("bytes_total", C.c_uint64), ("items_done", C.c_uint64),
                ("items_total", C.c_uint64)]


_PROGRESS_FN = C.CFUNCTYPE(C.c_int32, C.POINTER(Progress), C.c_void_p)  # zarr_progress_fn
_SIGNATURES["zarr_store_copy"] = [_h, C.c_char_p, _h, C.c_char_p, _PROGRESS_FN, C.c_void_p]
_SIGNATURES["zarr_array_copy_to"] = [_h, _h, C.c_char_p, C.c_char_p, _PROGRESS_FN, C.c_void_p]


class CopyCounts(C.Structure):
    """zarr_copy_counts: zarr-python 2's (n_copied, n_skipped, n_bytes_copied)."""
    _fields_ = [("copied", C.c_uint64), ("skipped", C.c_uint64), ("bytes_copied", C.c_uint64)]


_COPY_LOG_FN = C.CFUNCTYPE(None, C.c_char_p, C.c_void_p)  # zarr_copy_log_fn
for _name in ("zarr_store_copy_options", "zarr_node_copy"):
    _SIGNATURES[_name] = [_h, C.c_char_p, _h, C.c_char_p, C.c_char_p, _COPY_LOG_FN, _PROGRESS_FN, C.c_void_p,
                          C.POINTER(CopyCounts)]
# Zarr v3 (zarr.json): the inner chunks of sharded arrays, dimension names, the format of a node
_SIGNATURES["zarr_array_inner_chunks"] = [_h, _sz, _u64p]
_SIGNATURES["zarr_array_grid_shape"] = [_h, _sz, _u64p]
_SIGNATURES["zarr_features"] = [_out_s]
_SIGNATURES["zarr_array_set_json_items"] = [_h, C.c_bool]
_SIGNATURES["zarr_array_json_items"] = [_h, C.POINTER(C.c_bool)]
_SIGNATURES["zarr_array_dimension_names"] = [_h, _out_s]
_SIGNATURES["zarr_array_zarr_format"] = [_h, C.POINTER(C.c_int32)]
_SIGNATURES["zarr_group_zarr_format"] = [_h, C.POINTER(C.c_int32)]
_SIGNATURES["zarr_group_create_format"] = [_h, C.c_char_p, C.c_int32, _out_h]
_VISIT_FN = C.CFUNCTYPE(C.c_int32, C.c_char_p, C.c_int32, C.c_int32, C.c_void_p)  # zarr_visit_fn
_SIGNATURES["zarr_array_info_text"] = [_h, _out_s]
_SIGNATURES["zarr_array_info_json"] = [_h, _out_s]
_SIGNATURES["zarr_array_digest"] = [_h, C.c_char_p, C.c_void_p, _sz, C.POINTER(_sz)]
_SIGNATURES["zarr_array_hexdigest"] = [_h, C.c_char_p, _out_s]
_SIGNATURES["zarr_group_visit"] = [_h, C.c_int32, _VISIT_FN, C.c_void_p, C.POINTER(C.c_int32)]


# Stores of the caller's own (zarr_store_callbacks) and raw keys
_SIZE_FN = C.CFUNCTYPE(_st, C.c_void_p, C.c_char_p, C.POINTER(C.c_bool), _u64p)
_READ_FN = C.CFUNCTYPE(_st, C.c_void_p, C.c_char_p, C.c_uint64, C.c_void_p, _sz)
_WRITE_FN = C.CFUNCTYPE(_st, C.c_void_p, C.c_char_p, C.c_void_p, _sz)
_ERASE_FN = C.CFUNCTYPE(_st, C.c_void_p, C.c_char_p)
_KEY_SINK_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_char_p)
_LIST_FN = C.CFUNCTYPE(_st, C.c_void_p, C.c_char_p, _KEY_SINK_FN, C.c_void_p)
_RELEASE_FN = C.CFUNCTYPE(None, C.c_void_p)
_VALUE_SINK_FN = C.CFUNCTYPE(None, C.c_void_p, _sz, C.c_void_p, _sz)
_READ_MANY_FN = C.CFUNCTYPE(_st, C.c_void_p, _sz, C.POINTER(C.c_char_p), _VALUE_SINK_FN, C.c_void_p)
_WRITE_MANY_FN = C.CFUNCTYPE(_st, C.c_void_p, _sz, C.POINTER(C.c_char_p), C.POINTER(C.c_void_p),
                             C.POINTER(_sz))
STORE_CALLBACKS_VERSION = 2
ERR_NOT_FOUND, ERR_IO, ERR_PERMISSION_DENIED, ERR_INTERNAL = -5, -11, -16, -99


class StoreCallbacks(C.Structure):
    """zarr_store_callbacks."""
    _fields_ = [("version", C.c_uint32), ("thread_safe", C.c_int32), ("name", C.c_char_p),
                ("user_data", C.c_void_p), ("size", _SIZE_FN), ("read", _READ_FN), ("write", _WRITE_FN),
                ("erase", _ERASE_FN), ("list", _LIST_FN), ("release", _RELEASE_FN),
                ("read_many", _READ_MANY_FN), ("write_many", _WRITE_MANY_FN)]


_SIGNATURES["zarr_store_open_callbacks"] = [C.POINTER(StoreCallbacks), C.c_int32, _out_h]
_SIGNATURES["zarr_store_value_size"] = [_h, C.c_char_p, C.POINTER(C.c_bool), _u64p]
_SIGNATURES["zarr_store_get"] = [_h, C.c_char_p, C.c_uint64, C.c_void_p, _sz, _szp]
_SIGNATURES["zarr_store_set"] = [_h, C.c_char_p, C.c_void_p, _sz]
_SIGNATURES["zarr_store_erase"] = [_h, C.c_char_p]
_SIGNATURES["zarr_store_list_keys"] = [_h, C.c_char_p, _out_s]
_SIGNATURES["zarr_store_list_dir"] = [_h, C.c_char_p, _out_s]
_SIGNATURES["zarr_store_getsize"] = [_h, C.c_char_p, _u64p]
_SIGNATURES["zarr_store_rmdir"] = [_h, C.c_char_p]
_SIGNATURES["zarr_array_read_mask"] = [_h, C.c_void_p, _sz, C.c_void_p, _sz]
_SIGNATURES["zarr_array_write_mask"] = [_h, C.c_void_p, _sz, C.c_void_p, _sz]
_SIGNATURES["zarr_array_attrs_update"] = [_h, C.c_char_p]
_SIGNATURES["zarr_array_attrs_delete"] = [_h, C.c_char_p]
_SIGNATURES["zarr_group_attrs_update"] = [_h, C.c_char_p]
_SIGNATURES["zarr_group_attrs_delete"] = [_h, C.c_char_p]
_SIGNATURES["zarr_store_set_fill_value"] = [_h, C.c_char_p, C.c_char_p]
_SIGNATURES["zarr_array_block_box"] = [_h, _sz, _u64p, _u64p, _u64p, _u64p]
_SIGNATURES["zarr_array_create_mode"] = [_h, C.c_char_p, C.c_char_p, C.c_int32, _out_h]
_SIGNATURES["zarr_group_create_mode"] = [_h, C.c_char_p, C.c_int32, C.c_int32, _out_h]
_BYTES_SINK_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p, _sz)
_ENCODE_FN = C.CFUNCTYPE(_st, C.c_void_p, C.c_char_p, C.c_void_p, _sz, _BYTES_SINK_FN, C.c_void_p)
_DECODE_FN = C.CFUNCTYPE(_st, C.c_void_p, C.c_char_p, C.c_void_p, _sz, C.c_void_p, _sz, _szp)
CODEC_CALLBACKS_VERSION, CODEC_BYTES, CODEC_FILTER = 1, 0, 1
ERR_CORRUPT_CHUNK = -10


class CodecCallbacks(C.Structure):
    """zarr_codec_callbacks."""
    _fields_ = [("version", C.c_uint32), ("thread_safe", C.c_int32), ("kind", C.c_int32), ("id", C.c_char_p),
                ("v3_name", C.c_char_p), ("user_data", C.c_void_p), ("encode", _ENCODE_FN),
                ("decode", _DECODE_FN), ("release", _RELEASE_FN)]


_SIGNATURES["zarr_codec_register"] = [C.POINTER(CodecCallbacks)]
_SIGNATURES["zarr_codec_unregister"] = [C.c_char_p]
_live_callbacks = {}  # the functions of open mapping stores by number, until libzarr releases them
_RELEASE = _RELEASE_FN(lambda number: _live_callbacks.pop(number, None))  # never freed itself


def _guarded(body, status_of):
    """`body` as a C callback: 0 when it returns, else the status `status_of(exception)`, with the exception's
    text given to zarr_store_callback_error (an exception must not cross into C)."""
    def call(*args):
        try:
            body(*args)
            return 0
        except BaseException as e:
            lib().zarr_store_callback_error(f"{type(e).__name__}: {e}".encode("utf-8", "replace"))
            return status_of(e)
    return call


def _mapping_callbacks(mapping, name, thread_safe):
    """zarr_store_callbacks over a MutableMapping of str keys and bytes values. A KeyError is a
    missing key; any other exception is the failing call's ZARR_ERR_IO (PermissionError:
    ZARR_ERR_PERMISSION_DENIED) with its text as the message."""
    def guarded(body):
        return _guarded(body, lambda e: ERR_PERMISSION_DENIED if isinstance(e, PermissionError) else ERR_IO)

    def size(_u, key, out_exists, out_size):
        try:
            n = len(mapping[key.decode()])
            out_exists[0], out_size[0] = True, n
        except KeyError:
            out_exists[0], out_size[0] = False, 0

    def read(_u, key, offset, buffer, length):
        value = memoryview(mapping[key.decode()])[offset:offset + length]
        if len(value) != length:
            raise ValueError(f"value of {key.decode()!r} changed while it was read")
        C.memmove(buffer, bytes(value), length)

    def write(_u, key, value, length):
        mapping[key.decode()] = C.string_at(value, length) if length else b""

    def erase(_u, key):
        mapping.pop(key.decode(), None)

    def list_keys(_u, prefix, add, sink):
        p = prefix.decode()
        for key in list(mapping.keys()):
            if key.startswith(p):
                add(sink, key.encode())

    number = max(_live_callbacks, default=0) + 1
    cb = StoreCallbacks(STORE_CALLBACKS_VERSION, 1 if thread_safe else 0, name.encode(), number,
                        _SIZE_FN(guarded(size)), _READ_FN(guarded(read)), _WRITE_FN(guarded(write)),
                        _ERASE_FN(guarded(erase)), _LIST_FN(guarded(list_keys)), _RELEASE)
    _live_callbacks[number] = cb
    return cb


def register_codec(codec_id, encode, decode, kind="bytes", v3_name=None):
    """zarr_codec_register: `encode(config, data) -> bytes` and `decode(config, data, capacity) -> bytes` (config
    the codec's JSON configuration as a dict, data bytes) as the codec `codec_id` (`kind` "bytes": a compressor;
    "filter": keeps the size), also under `v3_name` (None: numcodecs.<id>). An exception is the call's
    ZARR_ERR_CORRUPT_CHUNK (decoding) or ZARR_ERR_IO (encoding) with its text."""
    def guarded(status, body):
        return _guarded(body, lambda e: status)

    def enc(_u, config, data, length, put, sink):
        out = bytes(encode(json.loads(config), C.string_at(data, length) if length else b""))
        put(sink, out, len(out))

    def dec(_u, config, data, length, output, capacity, out_length):
        out = bytes(decode(json.loads(config), C.string_at(data, length) if length else b"", capacity))
        if len(out) > capacity:
            raise ValueError(f"{len(out)} bytes decoded, more than {capacity}")
        C.memmove(output, out, len(out))
        out_length[0] = len(out)

    number = max(_live_callbacks, default=0) + 1
    cb = CodecCallbacks(CODEC_CALLBACKS_VERSION, 0, CODEC_FILTER if kind == "filter" else CODEC_BYTES,
                        codec_id.encode(), v3_name.encode() if v3_name else None, number,
                        _ENCODE_FN(guarded(ERR_IO, enc)), _DECODE_FN(guarded(ERR_CORRUPT_CHUNK, dec)), _RELEASE)
    _live_callbacks[number] = cb
    _call("zarr_codec_register", C.byref(cb))


def unregister_codec(codec_id):
    """zarr_codec_unregister."""
    _call("zarr_codec_unregister", codec_id.encode())


def _progress_fn(progress):
    """A zarr_progress_fn calling progress(dict of the four counts), which returns True to cancel;
    NULL for None. Keep the result alive for the call."""
    if progress is None:
        return C.cast(None, _PROGRESS_FN)

    def call(p, _user_data):
        c = p.contents
        return 1 if progress({f: getattr(c, f) for f, _ in Progress._fields_}) else 0
    return _PROGRESS_FN(call)


def _copy_log_fn(log):
    """A zarr_copy_log_fn calling log(line) with each line as str; NULL for None."""
    if log is None:
        return C.cast(None, _COPY_LOG_FN)
    return _COPY_LOG_FN(lambda line, _user_data: log(line.decode()))


def _copy_with_options(call, src, src_path, dst, dst_path, options, log, progress):
    """zarr_store_copy_options or zarr_node_copy; returns (n_copied, n_skipped, n_bytes_copied)."""
    doc = None if options is None else (options if isinstance(options, str) else json.dumps(options))
    counts = CopyCounts()
    log_fn, progress_fn = _copy_log_fn(log), _progress_fn(progress)
    _call(call, src.handle, _enc(src_path), dst.handle, _enc(dst_path), None if doc is None else doc.encode(),
          log_fn, progress_fn, None, C.byref(counts))
    return counts.copied, counts.skipped, counts.bytes_copied


class DimSelection(C.Structure):
    """zarr_dim_selection: `count` explicit indices, or (indices NULL) the range start, start+step, ...,
    or the indices where `count` flags (one per index of the dimension) are nonzero."""
    _fields_ = [("indices", _u64p), ("count", C.c_uint64), ("start", C.c_uint64), ("step", C.c_uint64),
                ("flags", C.POINTER(C.c_uint8))]

class Selection(C.Structure):
    """zarr_selection: any selection, for the calls taking one descriptor (object arrays, fields)."""
    _fields_ = [("kind", C.c_uint32), ("ndim", _sz), ("start", _u64p), ("count", _u64p), ("step", _u64p),
                ("dims", C.POINTER(DimSelection)), ("npoints", _sz), ("coords", _u64p),
                ("mask", C.POINTER(C.c_uint8)), ("mask_size", _sz)]

SELECT_BOX, SELECT_ORTHOGONAL, SELECT_POINTS, SELECT_MASK, SELECT_BLOCKS = range(5)
_selp = C.POINTER(Selection)
_SIGNATURES["zarr_array_selection_size"] = [_h, _selp, _szp, _szp]
_SIGNATURES["zarr_array_read_vlen_selection"] = [_h, _selp, C.POINTER(C.c_int64), _sz, C.c_void_p, _sz]
_SIGNATURES["zarr_array_write_vlen_selection"] = [_h, _selp, C.POINTER(C.c_int64), _sz, C.c_void_p, _sz]
_SIGNATURES["zarr_array_read_fields_selection"] = [_h, _selp, _names, _sz, C.c_void_p, _sz]
_SIGNATURES["zarr_array_write_fields_selection"] = [_h, _selp, _names, _sz, C.c_void_p, _sz]

_lib = None
_EMPTY = C.c_char()  # stand-in for buffers of 0 bytes: the API wants non-NULL pointers


def lib():
    """Load the shared library once (lazily, so collection works without it)."""
    global _lib
    if _lib is None:
        l = C.CDLL(LIB_PATH)
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(l, name)
            fn.argtypes, fn.restype = argtypes, _st
        for name in ("zarr_version", "zarr_last_error"):
            getattr(l, name).argtypes, getattr(l, name).restype = [], C.c_char_p
        l.zarr_status_name.argtypes, l.zarr_status_name.restype = [_st], C.c_char_p
        l.zarr_string_free.argtypes, l.zarr_string_free.restype = [C.c_void_p], None
        l.zarr_store_callback_error.argtypes, l.zarr_store_callback_error.restype = [C.c_char_p], None
        _lib = l
    return _lib


class LibzarrError(Exception):
    def __init__(self, status, name, message, func):
        super().__init__(f"{func}: {name} ({status}): {message}")
        self.status, self.name, self.message, self.func = status, name, message, func


def _call(name, *args):
    l = lib()
    status = getattr(l, name)(*args)
    if status != 0:
        raise LibzarrError(status, l.zarr_status_name(status).decode(),
                           l.zarr_last_error().decode("utf-8", "replace"), name)


def _string(name, handle, *args):
    p = C.c_void_p()
    _call(name, handle, *args, C.byref(p))
    return _take_string(p)


def _take_string(p):
    """Copies a char* that libzarr handed over, then frees it."""
    try:
        return C.string_at(p.value).decode("utf-8")
    finally:
        lib().zarr_string_free(p)


# The zarr-extensions small types libzarr names by their v3 names: ml_dtypes' types when it is installed, else
# the codes (small floats) or values (narrow integers) as plain integers of the same size.
SMALL_TYPES = {"bfloat16": "<u2", "float8_e3m4": "u1", "float8_e4m3": "u1", "float8_e4m3b11fnuz": "u1",
               "float8_e4m3fnuz": "u1", "float8_e5m2": "u1", "float8_e5m2fnuz": "u1", "float8_e8m0fnu": "u1",
               "float6_e2m3fn": "u1", "float6_e3m2fn": "u1", "float4_e2m1fn": "u1",
               "int2": "i1", "int4": "i1", "uint2": "u1", "uint4": "u1"}


def small_dtype(name):
    """numpy dtype of a small type: ml_dtypes' (`ml_dtypes.bfloat16`, ...) or, without ml_dtypes, its codes."""
    try:
        import ml_dtypes
        return np.dtype(getattr(ml_dtypes, name))
    except (ImportError, AttributeError):
        return np.dtype(SMALL_TYPES[name])


def dtype_from_json(descr):
    """numpy dtype of a .zarray "dtype": a type string, or the list-of-lists form of a structured type
    ([name, type] or [name, type, shape], types nested the same way), as zarr-python 2 decodes it; or one of the
    v3 small types' names (SMALL_TYPES)."""
    if isinstance(descr, str):
        return small_dtype(descr) if descr in SMALL_TYPES else np.dtype(descr)

    def field(f):
        name, typ, *shape = f
        typ = dtype_from_json(typ) if isinstance(typ, list) else typ
        return (name, typ, tuple(shape[0])) if shape else (name, typ)
    return np.dtype([field(f) for f in descr])


def dtype_to_json(dtype):
    """The .zarray "dtype" of a numpy dtype: its str, or for a structured type the descr as nested lists
    (sub-array shapes as lists), as zarr-python 2 encodes it."""
    dtype = np.dtype(dtype)
    if dtype.fields is None:
        return dtype.str

    def field(f):
        name, typ, *shape = f
        typ = [field(g) for g in typ] if isinstance(typ, list) else typ
        return [name, typ, list(shape[0])] if shape else [name, typ]
    return [field(f) for f in dtype.descr]


def version():
    return lib().zarr_version().decode()


def features():
    """zarr_features: what this build reads and writes, as a dict."""
    out = C.c_void_p()
    _call("zarr_features", C.byref(out))
    return json.loads(_take_string(out))


def status_name(status):
    return lib().zarr_status_name(status).decode()


def set_num_threads(threads):
    """Worker threads for all later calls in the process; 0 restores the default."""
    _call("zarr_set_num_threads", int(threads))


def num_threads():
    n = C.c_size_t()
    _call("zarr_num_threads", C.byref(n))
    return n.value


def _u64(values):
    values = [int(v) for v in values]
    return (C.c_uint64 * max(len(values), 1))(*values)  # never a NULL pointer, even for ndim 0


def _enc(path):
    return path.encode("utf-8") if isinstance(path, str) else bytes(path)


class _Handle:
    _close = None

    def __init__(self, handle, owner=None):
        self._h, self._owner = handle, owner

    @property
    def handle(self):
        if self._h is None:
            raise ValueError("handle already closed")
        return self._h

    def close(self):
        if self._h is not None:
            h, self._h = self._h, None
            _call(self._close, h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Store(_Handle):
    _close = "zarr_store_close"

    @classmethod
    def open(cls, location, mode="r"):
        mode = MODES.get(mode, mode)
        out = C.c_void_p()
        _call("zarr_store_open", _enc(os.fspath(location)), mode, C.byref(out))
        return cls(out)

    @classmethod
    def open_options(cls, location, mode="r", options=None):
        """zarr_store_open_options: `options` a dict (sent as JSON), a JSON string, or None."""
        mode = MODES.get(mode, mode)
        if isinstance(options, dict):
            options = json.dumps(options)
        out = C.c_void_p()
        _call("zarr_store_open_options", _enc(os.fspath(location)), mode,
              None if options is None else _enc(options), C.byref(out))
        return cls(out)

    @classmethod
    def open_mapping(cls, mapping, mode="r", name="mapping", thread_safe=False):
        """zarr_store_open_callbacks over a MutableMapping (a dict, a shelve, a database wrapper) of
        str keys and bytes values: what zarr-python 2 accepts as a store. thread_safe=True lets
        libzarr's threads call it at once (each call holds the GIL for its own work)."""
        mode = MODES.get(mode, mode)
        cb = _mapping_callbacks(mapping, name, thread_safe)
        out = C.c_void_p()
        _call("zarr_store_open_callbacks", C.byref(cb), mode, C.byref(out))
        return cls(out)

    def flush(self):
        """zarr_store_flush: writes out what the store defers (a zip's central directory); stays open."""
        _call("zarr_store_flush", self.handle)

    def set_fill_value(self, path, fill_value):
        """zarr_store_set_fill_value: `fill_value` as JSON text, or a Python value (json.dumps'd)."""
        doc = fill_value if isinstance(fill_value, str) else json.dumps(fill_value)
        _call("zarr_store_set_fill_value", self.handle, _enc(path), doc.encode())

    def value_size(self, key):
        """zarr_store_value_size: the length of the value under `key`, None when there is none."""
        exists, size = C.c_bool(), C.c_uint64()
        _call("zarr_store_value_size", self.handle, _enc(key), C.byref(exists), C.byref(size))
        return size.value if exists.value else None

    def get(self, key, offset=0, length=None):
        """zarr_store_get: the value under `key` from `offset`, `length` bytes at most (None: to the end)."""
        if length is None:
            length = max((self.value_size(key) or 0) - offset, 0)
        buf, got = C.create_string_buffer(max(length, 1)), C.c_size_t()
        _call("zarr_store_get", self.handle, _enc(key), offset, buf, length, C.byref(got))
        return buf.raw[:got.value]

    def set(self, key, value):
        value = bytes(value)
        _call("zarr_store_set", self.handle, _enc(key), value, len(value))

    def erase(self, key):
        _call("zarr_store_erase", self.handle, _enc(key))

    def list_keys(self, prefix=""):
        return json.loads(_string("zarr_store_list_keys", self.handle, _enc(prefix)))

    def list_dir(self, prefix=""):
        return json.loads(_string("zarr_store_list_dir", self.handle, _enc(prefix)))

    def getsize(self, path=""):
        size = C.c_uint64()
        _call("zarr_store_getsize", self.handle, _enc(path), C.byref(size))
        return size.value

    def rmdir(self, path=""):
        _call("zarr_store_rmdir", self.handle, _enc(path))

    def _open(self, fn, kind, path, *extra):
        out = C.c_void_p()
        _call(fn, self.handle, _enc(path), *extra, C.byref(out))
        return kind(out, self)

    def create_array(self, path, meta, mode=None):
        """zarr_array_create, or with mode "w-", "w" or "a" zarr_array_create_mode."""
        doc = meta if isinstance(meta, str) else json.dumps(meta, allow_nan=False)
        if mode is None:
            return self._open("zarr_array_create", Array, path, doc.encode())
        return self._open("zarr_array_create_mode", Array, path, doc.encode(), _CREATE_MODES[mode])

    def open_array(self, path=""):
        return self._open("zarr_array_open", Array, path)

    def create_group(self, path=""):
        return self._open("zarr_group_create", Group, path)

    def open_group(self, path=""):
        return self._open("zarr_group_open", Group, path)

    def create_group_mode(self, path="", mode="a", zarr_format=0):
        """zarr_group_create_mode: mode "w-", "w" or "a"; zarr_format 0 inherits."""
        return self._open("zarr_group_create_mode", Group, path, C.c_int32(zarr_format),
                          _CREATE_MODES[mode])

    def create_group_format(self, path="", zarr_format=3):
        """zarr_group_create_format: a group (and missing ancestors) in Zarr format 2 or 3."""
        return self._open("zarr_group_create_format", Group, path, C.c_int32(zarr_format))

    def consolidate(self):
        """Write .zmetadata for the whole store (zarr_consolidate_metadata)."""
        _call("zarr_consolidate_metadata", self.handle)

    def refresh_consolidated(self):
        in_use = C.c_bool()
        _call("zarr_store_refresh_consolidated", self.handle, C.byref(in_use))
        return in_use.value

    @property
    def uses_consolidated(self):
        in_use = C.c_bool()
        _call("zarr_store_uses_consolidated", self.handle, C.byref(in_use))
        return in_use.value


    def copy(self, src_path, dst, dst_path, progress=None):
        """zarr_store_copy: the keys below src_path of this store to dst_path of store `dst`, verbatim.
        `progress(counts)` gets dicts with bytes_done/bytes_total/items_done/items_total; True cancels."""
        _call("zarr_store_copy", self.handle, _enc(src_path), dst.handle, _enc(dst_path), _progress_fn(progress),
              None)

    def copy_store(self, src_path, dst, dst_path, options=None, log=None, progress=None):
        """zarr_store_copy_options (zarr-python 2's copy_store): `options` a dict or JSON text (if_exists,
        dry_run, excludes, includes, flags); `log(line)` gets each log line. Returns (copied, skipped, bytes)."""
        return _copy_with_options("zarr_store_copy_options", self, src_path, dst, dst_path, options, log, progress)

    def copy_node(self, src_path, dst, dst_path, options=None, log=None, progress=None):
        """zarr_node_copy (zarr-python 2's copy, or copy_all with {"copy_all": true}): `options` a dict or
        JSON text (if_exists, dry_run, shallow, without_attrs, copy_all, overrides); `log(line)` gets each
        log line. Returns (copied, skipped, bytes)."""
        return _copy_with_options("zarr_node_copy", self, src_path, dst, dst_path, options, log, progress)


open_store = Store.open
open_mapping = Store.open_mapping


class _Attrs:
    def attrs(self):
        return json.loads(_string(self._attrs_get, self.handle))

    def set_attrs(self, attrs):
        doc = attrs if isinstance(attrs, str) else json.dumps(attrs)  # NaN/Infinity as Python writes them
        _call(self._attrs_set, self.handle, doc.encode())

    def update_attrs(self, changes):
        """zarr_*_attrs_update: set the members of `changes` (a dict or JSON text), keep the others."""
        doc = changes if isinstance(changes, str) else json.dumps(changes)
        _call(self._attrs_set.replace("_set", "_update"), self.handle, doc.encode())

    def delete_attr(self, name):
        _call(self._attrs_set.replace("_set", "_delete"), self.handle, _enc(name))


class Group(_Handle, _Attrs):
    _close, _attrs_get, _attrs_set = "zarr_group_close", "zarr_group_attrs_get", "zarr_group_attrs_set"

    def list(self):
        return json.loads(_string("zarr_group_list", self.handle))

    def info(self):
        return json.loads(_string("zarr_group_info_json", self.handle))

    def tree_text(self, level=None):
        """zarr_group_tree_text (zarr_group_tree_text_level with `level`, as zarr-python's tree(level=))."""
        if level is None:
            return _string("zarr_group_tree_text", self.handle)
        return _string("zarr_group_tree_text_level", self.handle, level)

    def tree(self, level=None):
        if level is None:
            return json.loads(_string("zarr_group_tree_json", self.handle))
        return json.loads(_string("zarr_group_tree_json_level", self.handle, level))

    def visit(self, func, max_depth=-1):
        """zarr_group_visit: func(path, kind, zarr_format) for every member (kind "array" or "group"),
        depth first, sorted, paths relative to this group; a truthy int returned stops the visit and is
        returned (0 when every member was visited)."""
        kinds = {1: "array", 2: "group"}

        def call(path, kind, zarr_format, _):
            return int(func(path.decode("utf-8"), kinds[kind], zarr_format) or 0)
        stopped = C.c_int32()
        _call("zarr_group_visit", self.handle, max_depth, _VISIT_FN(call), None, C.byref(stopped))
        return stopped.value

    @property
    def zarr_format(self):
        """2 or 3 (zarr_group_zarr_format)."""
        f = C.c_int32()
        _call("zarr_group_zarr_format", self.handle, C.byref(f))
        return f.value


class Array(_Handle, _Attrs):
    _close, _attrs_get, _attrs_set = "zarr_array_close", "zarr_array_attrs_get", "zarr_array_attrs_set"

    def view(self, **overrides):
        """zarr_array_view: a view whose metadata members are the keyword arguments (shape,
        chunks, dtype, fill_value, filters for v2; chunk_grid, data_type, codecs for v3;
        read_only)."""
        out = C.c_void_p()
        _call("zarr_array_view", self.handle, json.dumps(overrides).encode(), C.byref(out))
        return Array(out, self._owner)

    def astype(self, dtype):
        """zarr_array_astype: a read-only view converting elements to the NumPy type string dtype."""
        out = C.c_void_p()
        _call("zarr_array_astype", self.handle, _enc(dtype), C.byref(out))
        return Array(out, self._owner)

    @property
    def ndim(self):
        n = C.c_size_t()
        _call("zarr_array_ndim", self.handle, C.byref(n))
        return n.value

    def _dims(self, fn):
        n = self.ndim
        buf = _u64([0] * n)
        _call(fn, self.handle, n, buf)
        return tuple(buf[i] for i in range(n))

    @property
    def shape(self):
        return self._dims("zarr_array_shape")

    @property
    def chunks(self):
        return self._dims("zarr_array_chunks")

    @property
    def grid_shape(self):
        """zarr_array_grid_shape: chunks (shards) per dimension, for regular and rectilinear grids."""
        return self._dims("zarr_array_grid_shape")

    @property
    def inner_chunks(self):
        """zarr_array_inner_chunks: the inner chunk shape of a sharded v3 array (innermost when nested);
        the same as `chunks` otherwise."""
        return self._dims("zarr_array_inner_chunks")

    @property
    def zarr_format(self):
        """2 or 3 (zarr_array_zarr_format)."""
        f = C.c_int32()
        _call("zarr_array_zarr_format", self.handle, C.byref(f))
        return f.value

    @property
    def dimension_names(self):
        """zarr_array_dimension_names: a list of names and Nones, or None when the array names none."""
        return json.loads(_string("zarr_array_dimension_names", self.handle))

    @property
    def dtype_kind(self):
        """(kind letter 'b'/'i'/'u'/'f'/'c', itemsize)"""
        k, s = C.c_int32(), C.c_size_t()
        _call("zarr_array_dtype", self.handle, C.byref(k), C.byref(s))
        return DTYPE_KINDS.get(k.value, k.value), s.value

    @property
    def kind_code(self):
        """The ZARR_DTYPE_* code (tells raw |V<n> from structured, which numpy both calls kind 'V')."""
        k, s = C.c_int32(), C.c_size_t()
        _call("zarr_array_dtype", self.handle, C.byref(k), C.byref(s))
        return k.value

    @property
    def dtype_string(self):
        """The type string as stored (for a structured type: its JSON list of fields, as text)."""
        return _string("zarr_array_dtype_string", self.handle)

    @property
    def stored_dtype(self):
        """numpy dtype as stored (byte orders as in the metadata)."""
        s = self.dtype_string
        return dtype_from_json(json.loads(s) if s.startswith("[") else s)

    @property
    def dtype(self):
        """numpy dtype of the buffers exchanged with the library (native byte order, fields included)."""
        return self.stored_dtype.newbyteorder("=")

    @property
    def time_unit(self):
        """(unit name, multiple) of a datetime64/timedelta64 array: "<M8[10s]" gives ("s", 10)."""
        unit, mult = C.c_char_p(), C.c_uint64()
        _call("zarr_array_time_unit", self.handle, C.byref(unit), C.byref(mult))
        return unit.value.decode(), mult.value

    @property
    def field_count(self):
        n = C.c_size_t()
        _call("zarr_array_field_count", self.handle, C.byref(n))
        return n.value

    def field(self, index):
        """zarr_array_field: {"name", "dtype" (type string; a nested record's JSON list), "offset", "size",
        "ndim"}."""
        name, typ, offset, size, ndim = C.c_void_p(), C.c_void_p(), C.c_size_t(), C.c_size_t(), C.c_size_t()
        _call("zarr_array_field", self.handle, int(index), C.byref(name), C.byref(typ), C.byref(offset),
              C.byref(size), C.byref(ndim))
        return {"name": _take_string(name), "dtype": _take_string(typ), "offset": offset.value,
                "size": size.value, "ndim": ndim.value}

    @property
    def fields(self):
        """zarr_array_fields_json: [{"name", "dtype", "offset", "itemsize", "shape"(, "fields")}, ...]."""
        return json.loads(_string("zarr_array_fields_json", self.handle))

    def fields_dtype(self, names):
        """numpy dtype of the packed records read_fields/write_fields exchange for the fields `names` (native
        byte order); None when one of the names is not a field."""
        fields = self.dtype.fields or {}
        if not all(n in fields for n in names):
            return None
        return np.dtype([(n, fields[n][0]) for n in names])

    @staticmethod
    def _names(names):
        encoded = [_enc(n) for n in names]
        return (C.c_char_p * max(len(encoded), 1))(*encoded), len(encoded)

    def read_fields(self, names, start=None, count=None, dtype=None):
        """The fields `names` (in that order) of the records in the box, packed, native byte order: like
        zarr-python 2's get_basic_selection(box, fields=names). `dtype` overrides the result's dtype (to
        pass buffers of another size)."""
        start, count = self._region(start, count)
        dt = dtype if dtype is not None else self.fields_dtype(names)
        if dt is None:  # unknown names: let the library report it, with a buffer for nothing
            dt = np.dtype("V1")
        out = np.empty(count, dt)
        arr, n = self._names(names)
        _call("zarr_array_read_fields", self.handle, len(count), _u64(start), _u64(count), arr, n,
              _data_ptr(out), out.nbytes)
        return out

    def write_fields(self, names, data, start=None):
        """Writes the fields `names` of the records in the box at `start` (of data's shape) from `data`: a
        structured array holding those fields (converted by name to the packed native-order record), or raw
        packed records of any numpy dtype (passed as they are). The other fields keep their values."""
        data = np.asarray(data)
        dt = self.fields_dtype(names)
        if dt is not None and data.dtype.names is not None and data.dtype != dt:
            packed = np.empty(data.shape, dt)
            for n in names:
                packed[n] = data[n]
            data = packed
        data = np.ascontiguousarray(data)
        start = tuple(start) if start is not None else (0,) * data.ndim
        arr, n = self._names(names)
        _call("zarr_array_write_fields", self.handle, data.ndim, _u64(start), _u64(data.shape), arr, n,
              _data_ptr(data), data.nbytes)

    @property
    def fill_value(self):
        """numpy scalar, or None when the metadata fill_value is null."""
        dt = self.dtype
        buf = (C.c_char * dt.itemsize)()
        is_set = C.c_bool()
        _call("zarr_array_fill_value", self.handle, buf, dt.itemsize, C.byref(is_set))
        return np.frombuffer(bytes(buf), dt)[0] if is_set.value else None

    @property
    def order(self):
        o = C.c_int32()
        _call("zarr_array_order", self.handle, C.byref(o))
        return {ORDER_C: "C", ORDER_F: "F"}.get(o.value, o.value)

    @property
    def compressor(self):
        return json.loads(_string("zarr_array_compressor_json", self.handle))

    @property
    def filters(self):
        return json.loads(_string("zarr_array_filters_json", self.handle))

    @property
    def metadata(self):
        return json.loads(_string("zarr_array_metadata_json", self.handle))

    def _region(self, start, count):
        shape = self.shape
        start = tuple(start) if start is not None else (0,) * len(shape)
        count = tuple(count) if count is not None else tuple(s - o for s, o in zip(shape, start))
        return start, count

    def info(self):
        """zarr_array_info_json, as a dict."""
        return json.loads(_string("zarr_array_info_json", self.handle))

    def info_text(self):
        """zarr_array_info_text: zarr-python 2's str(z.info), codecs as JSON, no Python class names."""
        return _string("zarr_array_info_text", self.handle)

    def digest(self, hashname="sha1"):
        """zarr_array_digest: zarr-python 2's Array.digest(hashname), as bytes."""
        buf, got = C.create_string_buffer(64), _sz()
        _call("zarr_array_digest", self.handle, _enc(hashname), buf, 64, C.byref(got))
        return buf.raw[:got.value]

    def hexdigest(self, hashname="sha1"):
        """zarr_array_hexdigest: zarr-python 2's Array.hexdigest(hashname)."""
        return _string("zarr_array_hexdigest", self.handle, _enc(hashname))

    def copy_to(self, dst, path, overrides=None, progress=None):
        """zarr_array_copy_to: a new array at `path` of store `dst`, re-encoded with the .zarray keys of
        `overrides` (a dict or JSON text) changed; `progress` as for Store.copy."""
        doc = None if overrides is None else (overrides if isinstance(overrides, str) else json.dumps(overrides))
        _call("zarr_array_copy_to", self.handle, dst.handle, _enc(path), None if doc is None else doc.encode(),
              _progress_fn(progress), None)

    def object_codec(self):
        """The object codec's configuration (None for fixed-size arrays)."""
        return json.loads(_string("zarr_array_object_codec", self.handle))

    def read_vlen(self, start=None, count=None):
        """Read the items of an object array's region as a flat C-order list of bytes objects."""
        start, count = self._region(start, count)
        n = int(np.prod(count, dtype=np.int64))
        size = C.c_size_t()
        _call("zarr_array_vlen_size", self.handle, len(count), _u64(start), _u64(count), C.byref(size))
        offsets = (C.c_int64 * (n + 1))()
        data = C.create_string_buffer(max(size.value, 1))
        _call("zarr_array_read_vlen", self.handle, len(count), _u64(start), _u64(count), offsets, n + 1, data, size.value)
        raw = data.raw
        return [raw[offsets[i]:offsets[i + 1]] for i in range(n)]

    @property
    def json_items(self):
        """zarr_array_json_items: whether a json2/msgpack2 array's items pass as JSON text."""
        on = C.c_bool()
        _call("zarr_array_json_items", self.handle, C.byref(on))
        return on.value

    @json_items.setter
    def json_items(self, on):
        _call("zarr_array_set_json_items", self.handle, bool(on))

    def write_vlen(self, items, start, count):
        """Write a flat C-order list of bytes objects as the items of an object array's region."""
        offsets = [0]
        for item in items:
            offsets.append(offsets[-1] + len(item))
        blob = b"".join(items)
        _call("zarr_array_write_vlen", self.handle, len(count), _u64(start), _u64(count),
              (C.c_int64 * len(offsets))(*offsets), len(offsets), blob if blob else C.addressof(_EMPTY), len(blob))

    def resize(self, shape):
        _call("zarr_array_resize", self.handle, len(shape), _u64(shape))

    def append(self, data, axis=0):
        """Append `data` (the array's shape except along `axis`) along `axis`."""
        data = np.require(np.asarray(data).astype(self.dtype, copy=False), requirements="C")
        buf = data.ctypes.data if data.nbytes else C.addressof(_EMPTY)
        _call("zarr_array_append", self.handle, axis, data.shape[axis], buf, data.nbytes)

    def append_vlen(self, items, count, axis=0):
        """Append a flat C-order list of bytes objects (`count` positions along `axis`) to an object array."""
        offsets = [0]
        for item in items:
            offsets.append(offsets[-1] + len(item))
        blob = b"".join(items)
        _call("zarr_array_append_vlen", self.handle, axis, count, (C.c_int64 * len(offsets))(*offsets),
              len(offsets), blob if blob else C.addressof(_EMPTY), len(blob))

    def read(self, start=None, count=None):
        """Read the region [start, start+count) (default: everything) into a new native-order array."""
        start, count = self._region(start, count)
        out = np.empty(count, self.dtype)
        nbytes = out.nbytes
        buf = out.ctypes.data if nbytes else C.addressof(_EMPTY)
        _call("zarr_array_read", self.handle, len(count), _u64(start), _u64(count), buf, nbytes)
        return out

    def write(self, data, start=None):
        """Write `data` (any array-like; converted to the native-order dtype) at `start`."""
        data = np.require(np.asarray(data).astype(self.dtype, copy=False), requirements="C")
        start = tuple(start) if start is not None else (0,) * data.ndim
        buf = data.ctypes.data if data.nbytes else C.addressof(_EMPTY)
        _call("zarr_array_write", self.handle, data.ndim, _u64(start), _u64(data.shape), buf, data.nbytes)

    # ------------------------------------------------------------ selections (strided, orthogonal, points)
    def _selection(self, selection):
        """Per-dimension selections -> (zarr_dim_selection[ndim], extent, dropped axes, index arrays to keep
        alive). Each item: a slice (positive step), an int (its axis is dropped from the result, as in
        zarr-python), or a 1-D sequence/ndarray of ints (any order, repeats; negative ones count from the end)
        or of bools (a mask)."""
        shape = self.shape
        if len(selection) != len(shape):
            raise ValueError(f"{len(selection)} selections for {len(shape)} dimensions")
        sel, extent, dropped, keep = (DimSelection * max(len(shape), 1))(), [], [], []
        for d, (item, n) in enumerate(zip(selection, shape)):
            if isinstance(item, slice):
                start, stop, step = item.indices(n)
                if step < 1:
                    raise ValueError("slice steps must be positive")
                sel[d] = DimSelection(None, len(range(start, stop, step)), start, step)
            elif isinstance(item, numbers.Integral):
                sel[d] = DimSelection(None, 1, item + n if item < 0 else item, 1)
                dropped.append(d)
            else:
                idx = np.asarray(item)
                if idx.dtype == bool and idx.ndim == 1:  # flags: libzarr checks the length
                    flags = np.ascontiguousarray(idx, np.uint8)
                    keep.append(flags)
                    sel[d] = DimSelection(None, len(flags), 0, 0, flags.ctypes.data_as(C.POINTER(C.c_uint8)))
                    extent.append(int(np.count_nonzero(flags)))
                    continue
                if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
                    raise ValueError(f"dimension {d}: not a slice, an int, a 1-D int list or a mask")
                idx = np.ascontiguousarray(np.where(idx < 0, idx + n, idx).astype(np.int64), np.uint64)
                keep.append(idx)  # negative indices still out of range wrap to huge values: out of bounds
                sel[d] = DimSelection(idx.ctypes.data_as(_u64p), len(idx), 0, 0)
            extent.append(sel[d].count)
        return sel, tuple(extent), dropped, keep

    def _read_into(self, fn, args, extent, out, dropped=()):
        """Calls a strided/orthogonal read into `out` (None: a new dense array, NULL buffer strides)."""
        result_shape = tuple(n for d, n in enumerate(extent) if d not in dropped)
        if out is None:
            out = np.empty(result_shape, self.dtype)
            ptr, size, strides = _data_ptr(out), out.nbytes, None
        else:
            if out.dtype != self.dtype or out.shape != result_shape or not out.flags.writeable:
                raise ValueError(f"out must be a writable {result_shape} array of {self.dtype}")
            ptr, size, strides = _view_buffer(np.expand_dims(out, tuple(dropped)))
        _call(fn, self.handle, len(extent), *args, strides, ptr, size)
        return out

    def _write_from(self, fn, args, extent, data, dropped=()):
        """Calls a strided/orthogonal write from `data`, broadcast to the selection (scalars repeat through
        zero strides). C-contiguous data goes dense (NULL buffer strides), any other view with its strides."""
        data = np.asarray(data)
        if data.dtype != self.dtype:
            data = data.astype(self.dtype)
        data = np.broadcast_to(data, tuple(n for d, n in enumerate(extent) if d not in dropped))
        data = np.expand_dims(data, tuple(dropped))
        if any(s < 0 or s % data.itemsize for s in data.strides):
            data = np.ascontiguousarray(data)
        if data.flags.c_contiguous:
            ptr, size, strides = _data_ptr(data), data.nbytes, None
        else:
            ptr, size, strides = _view_buffer(data)
        _call(fn, self.handle, len(extent), *args, strides, ptr, size)

    def describe(self, *, box=None, orthogonal=None, points=None, mask=None, blocks=None):
        """A zarr_selection of one kind -> (descriptor, result shape, objects to keep alive). box: (start,
        count[, step]); orthogonal: per-dimension items as read_orthogonal takes them (ints drop their axis);
        points: (npoints, ndim) coordinates; mask: a Boolean array of the array's shape; blocks:
        (block_start, block_count) in chunks."""
        n = self.ndim
        d = Selection(ndim=n)
        keep = []
        def u64(values):
            a = np.ascontiguousarray(np.asarray(values, np.int64), np.uint64)
            keep.append(a)
            return _u64p_of(a)
        if box is not None:
            d.kind, d.start, d.count = SELECT_BOX, u64(box[0]), u64(box[1])
            d.step = u64(box[2]) if len(box) > 2 and box[2] is not None else None
            shape = tuple(box[1])
        elif orthogonal is not None:
            sel, extent, dropped, more = self._selection(orthogonal)
            keep += [sel, more]
            d.kind, d.dims = SELECT_ORTHOGONAL, C.cast(sel, C.POINTER(DimSelection))
            shape = tuple(e for i, e in enumerate(extent) if i not in dropped)
        elif points is not None:
            npoints, c = self._points(points)
            keep.append(c)
            d.kind, d.npoints, d.coords = SELECT_POINTS, npoints, _u64p_of(c)
            shape = (npoints,)
        elif mask is not None:
            m = np.ascontiguousarray(mask, np.uint8)
            keep.append(m)
            d.kind, d.mask_size = SELECT_MASK, m.nbytes
            d.mask = C.cast(_data_ptr(m), C.POINTER(C.c_uint8))
            shape = (int(np.count_nonzero(m)),)
        elif blocks is not None:
            d.kind, d.start, d.count = SELECT_BLOCKS, u64(blocks[0]), u64(blocks[1])
            shape = self.block_box(blocks[0], blocks[1])[1]
        else:
            raise ValueError("no selection given")
        return d, tuple(shape), keep

    def selection_size(self, **selection):
        """zarr_array_selection_size: (elements, bytes) of a selection (see describe())."""
        d, _, keep = self.describe(**selection)
        items, size = C.c_size_t(), C.c_size_t()
        _call("zarr_array_selection_size", self.handle, C.byref(d), C.byref(items), C.byref(size))
        return items.value, size.value

    def read_vlen_selection(self, **selection):
        """The items of any selection of an object array (see describe()) as a flat list of bytes, in the
        result's C order, and the result's shape."""
        d, shape, keep = self.describe(**selection)
        items, size = C.c_size_t(), C.c_size_t()
        _call("zarr_array_selection_size", self.handle, C.byref(d), C.byref(items), C.byref(size))
        n = items.value
        offsets = (C.c_int64 * (n + 1))()
        data = C.create_string_buffer(max(size.value, 1))
        _call("zarr_array_read_vlen_selection", self.handle, C.byref(d), offsets, n + 1, data, size.value)
        raw = data.raw
        return [raw[offsets[i]:offsets[i + 1]] for i in range(n)], shape

    def write_vlen_selection(self, items, **selection):
        """Writes a flat list of bytes objects as the items of any selection (see describe())."""
        d, _, keep = self.describe(**selection)
        offsets = [0]
        for item in items:
            offsets.append(offsets[-1] + len(item))
        blob = b"".join(items)
        _call("zarr_array_write_vlen_selection", self.handle, C.byref(d), (C.c_int64 * len(offsets))(*offsets),
              len(offsets), blob if blob else C.addressof(_EMPTY), len(blob))

    def read_fields_selection(self, names, **selection):
        """The fields `names` of the records any selection picks (see describe()), packed, native order."""
        d, shape, keep = self.describe(**selection)
        dt = self.fields_dtype(names)
        if dt is None:
            dt = np.dtype("V1")
        out = np.empty(shape, dt)
        arr, n = self._names(names)
        _call("zarr_array_read_fields_selection", self.handle, C.byref(d), arr, n, _data_ptr(out), out.nbytes)
        return out

    def write_fields_selection(self, names, data, **selection):
        """Writes the fields `names` of the records any selection picks from `data` (a structured array of
        those fields, broadcast to the selection's result shape); the other fields keep their values."""
        d, shape, keep = self.describe(**selection)
        dt = self.fields_dtype(names)
        data = np.asarray(data)
        packed = np.empty(shape, dt)
        for name in names:
            packed[name] = data[name]
        arr, n = self._names(names)
        _call("zarr_array_write_fields_selection", self.handle, C.byref(d), arr, n, _data_ptr(packed),
              packed.nbytes)

    def read_mask(self, mask):
        """zarr_array_read_mask: the elements where the Boolean array `mask` (the array's shape) is
        True, in C order, as a 1-D array."""
        mask = np.ascontiguousarray(mask, np.uint8)
        out = np.empty(int(np.count_nonzero(mask)), self.dtype)
        _call("zarr_array_read_mask", self.handle, _data_ptr(mask), mask.nbytes, _data_ptr(out), out.nbytes)
        return out

    def write_mask(self, mask, data):
        """zarr_array_write_mask: `data` (1-D, or broadcast to the number of True) where `mask` is True."""
        mask = np.ascontiguousarray(mask, np.uint8)
        data = np.ascontiguousarray(np.broadcast_to(np.asarray(data, self.dtype), (int(np.count_nonzero(mask)),)))
        _call("zarr_array_write_mask", self.handle, _data_ptr(mask), mask.nbytes, _data_ptr(data), data.nbytes)

    def block_box(self, block_start, block_count):
        """zarr_array_block_box: (start, count) in elements of the chunks block_start..+block_count."""
        n = len(self.shape)
        start, count = (C.c_uint64 * max(n, 1))(), (C.c_uint64 * max(n, 1))()
        _call("zarr_array_block_box", self.handle, n, _u64(block_start), _u64(block_count), start, count)
        return tuple(start[:n]), tuple(count[:n])

    def read_blocks(self, block_start, block_count):
        """The chunks block_start..+block_count (zarr-python's get_block_selection with slices)."""
        start, count = self.block_box(block_start, block_count)
        return self.read(start, count)

    def read_strided(self, start, count, step=None, out=None):
        """Elements start[d], start[d]+step[d], ... (count[d] of them) in each dimension, into a new dense
        array, or into `out` (any writable numpy view of shape `count`, e.g. a slice of a bigger array or a
        Fortran-ordered array: its strides go to the library as buffer strides)."""
        args = (_u64(start), _u64(count), None if step is None else _u64(step))
        return self._read_into("zarr_array_read_strided", args, tuple(count), out)

    def write_strided(self, data, start, step=None, count=None):
        """Writes `data` (broadcast to `count`, default its shape) at start, start+step, ..."""
        count = tuple(np.shape(data) if count is None else count)
        args = (_u64(start), _u64(count), None if step is None else _u64(step))
        self._write_from("zarr_array_write_strided", args, count, data)

    def read_orthogonal(self, selection, out=None):
        """Like zarr-python's get_orthogonal_selection(tuple(selection)); see _selection() for the items."""
        sel, extent, dropped, keep = self._selection(selection)
        return self._read_into("zarr_array_read_orthogonal", (sel,), extent, out, dropped)

    def write_orthogonal(self, selection, data):
        """Like zarr-python's set_orthogonal_selection; where an index repeats, the last value wins."""
        sel, extent, dropped, keep = self._selection(selection)
        self._write_from("zarr_array_write_orthogonal", (sel,), extent, data, dropped)

    def _points(self, coords):
        ndim, c = self.ndim, np.asarray(coords)
        if c.ndim != 2 or c.shape[1] != ndim or (c.size and c.dtype.kind not in "iu"):
            raise ValueError(f"coords must be an (npoints, {ndim}) integer array")
        return c.shape[0], np.ascontiguousarray(c.astype(np.int64), np.uint64)

    def read_points(self, coords):
        """Like zarr-python's get_coordinate_selection(tuple(coords.T)): coords is (npoints, ndim)."""
        n, c = self._points(coords)
        out = np.empty(n, self.dtype)
        _call("zarr_array_read_points", self.handle, self.ndim, n, _u64p_of(c), _data_ptr(out), out.nbytes)
        return out

    def write_points(self, coords, values):
        """Like set_coordinate_selection; values broadcast to npoints; where a point repeats, the last wins."""
        n, c = self._points(coords)
        v = np.ascontiguousarray(np.broadcast_to(np.asarray(values).astype(self.dtype), (n,)))
        _call("zarr_array_write_points", self.handle, self.ndim, n, _u64p_of(c), _data_ptr(v), v.nbytes)

    # ------------------------------------------------------------ empty chunks
    @property
    def write_empty_chunks(self):
        flag = C.c_bool()
        _call("zarr_array_write_empty_chunks", self.handle, C.byref(flag))
        return flag.value

    @write_empty_chunks.setter
    def write_empty_chunks(self, flag):
        self.set_write_empty_chunks(flag)

    def set_write_empty_chunks(self, flag):
        """Whether writes through this handle store chunks holding only the fill value (default False)."""
        _call("zarr_array_set_write_empty_chunks", self.handle, bool(flag))

    def set_chunk_cache(self, max_bytes):
        """Turn this handle's cache of decoded chunks on with a byte budget, or off with 0."""
        _call("zarr_array_set_chunk_cache", self.handle, int(max_bytes))

    def chunk_cache_stats(self):
        """(hits, misses, bytes) of this handle's chunk cache."""
        out = [C.c_uint64() for _ in range(3)]
        _call("zarr_array_chunk_cache_stats", self.handle, *(C.byref(v) for v in out))
        return tuple(v.value for v in out)


def utf32_to_utf8(units, out_size=None):
    """zarr_utf32_to_utf8: UTF-32 code units (native byte order; a str is converted first) -> UTF-8 bytes.
    `out_size` is the output buffer's size (default 4 units per character, always enough)."""
    units = np.ascontiguousarray(np.frombuffer(units.encode("utf-32-le" if np.little_endian else "utf-32-be"),
                                               np.uint32) if isinstance(units, str) else units, np.uint32)
    size = 4 * units.size if out_size is None else out_size
    out, n = (C.c_char * max(size, 1))(), C.c_size_t()
    _call("zarr_utf32_to_utf8", _data_ptr(units), units.size, out, size, C.byref(n))
    return out.raw[:n.value]


def utf8_to_utf32(text, nchars):
    """zarr_utf8_to_utf32: UTF-8 (bytes, or a str encoded first) -> `nchars` uint32 code units, zero-padded."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    out = np.full(nchars, 0xDEADBEEF, np.uint32)  # the library must zero what the text leaves unused
    buf = C.create_string_buffer(data, max(len(data), 1))
    _call("zarr_utf8_to_utf32", buf, len(data), _data_ptr(out), nchars)
    return out


def _data_ptr(a):
    return a.ctypes.data if a.nbytes else C.addressof(_EMPTY)


def _u64p_of(a):
    return a.ctypes.data_as(_u64p) if a.size else C.cast(C.addressof(_EMPTY), _u64p)


try:
    _byte_bounds = np.lib.array_utils.byte_bounds  # numpy >= 2
except AttributeError:  # pragma: no cover
    _byte_bounds = np.byte_bounds


def _view_buffer(a):
    """(first element's address, bytes from there to the end of the underlying buffer, buffer strides in
    elements) for a numpy view with non-negative strides."""
    item = a.itemsize
    if any(s < 0 or s % item for n, s in zip(a.shape, a.strides) if n > 1):
        raise ValueError(f"strides {a.strides} are not non-negative multiples of the item size {item}")
    strides = [s // item if n > 1 else 0 for n, s in zip(a.shape, a.strides)]  # length-1 axes: any stride
    if a.size == 0:
        return C.addressof(_EMPTY), 0, _u64(strides)
    base = a
    while isinstance(base.base, np.ndarray):
        base = base.base
    ptr = a.ctypes.data
    end = max(_byte_bounds(base)[1], ptr + item * (1 + sum((n - 1) * s for n, s in zip(a.shape, strides))))
    return ptr, end - ptr, _u64(strides)
