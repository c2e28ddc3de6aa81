"""Thin ctypes binding of the libzarr C API (see include/zarr.h).

Every call checks its status and raises LibzarrError(status name + zarr_last_error()).
Strings returned through char** are copied and released with zarr_string_free.
Numeric buffers cross the boundary C-contiguous and in native byte order.
"""
import ctypes as C
import json
import os
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
LIB_PATH = os.environ.get("LIBZARR_PATH", str(REPO / "target" / "release" / "libzarr.so"))

MODE_READ, MODE_WRITE = 0, 1
ORDER_C, ORDER_F = 0, 1
DTYPE_KINDS = {1: "b", 2: "i", 3: "u", 4: "f", 5: "c"}

_h, _st, _sz, _u64p = C.c_void_p, C.c_int32, C.c_size_t, C.POINTER(C.c_uint64)
_out_h, _out_s = C.POINTER(C.c_void_p), C.POINTER(C.c_void_p)  # handle**, char**
_SIGNATURES = {
    "zarr_store_open": [C.c_char_p, C.c_int32, _out_h],
    "zarr_store_close": [_h],
    "zarr_array_create": [_h, C.c_char_p, C.c_char_p, _out_h],
    "zarr_array_open": [_h, C.c_char_p, _out_h],
    "zarr_array_close": [_h],
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
}

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


def _string(name, handle):
    p = C.c_void_p()
    _call(name, handle, C.byref(p))
    try:
        return C.string_at(p.value).decode("utf-8")
    finally:
        lib().zarr_string_free(p)


def version():
    return lib().zarr_version().decode()


def status_name(status):
    return lib().zarr_status_name(status).decode()


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
        mode = {"r": MODE_READ, "w": MODE_WRITE}.get(mode, mode)
        out = C.c_void_p()
        _call("zarr_store_open", _enc(os.fspath(location)), mode, C.byref(out))
        return cls(out)

    def _open(self, fn, kind, path, *extra):
        out = C.c_void_p()
        _call(fn, self.handle, _enc(path), *extra, C.byref(out))
        return kind(out, self)

    def create_array(self, path, meta):
        doc = meta if isinstance(meta, str) else json.dumps(meta, allow_nan=False)
        return self._open("zarr_array_create", Array, path, doc.encode())

    def open_array(self, path=""):
        return self._open("zarr_array_open", Array, path)

    def create_group(self, path=""):
        return self._open("zarr_group_create", Group, path)

    def open_group(self, path=""):
        return self._open("zarr_group_open", Group, path)


open_store = Store.open


class _Attrs:
    def attrs(self):
        return json.loads(_string(self._attrs_get, self.handle))

    def set_attrs(self, attrs):
        doc = attrs if isinstance(attrs, str) else json.dumps(attrs)  # NaN/Infinity as Python writes them
        _call(self._attrs_set, self.handle, doc.encode())


class Group(_Handle, _Attrs):
    _close, _attrs_get, _attrs_set = "zarr_group_close", "zarr_group_attrs_get", "zarr_group_attrs_set"

    def list(self):
        return json.loads(_string("zarr_group_list", self.handle))


class Array(_Handle, _Attrs):
    _close, _attrs_get, _attrs_set = "zarr_array_close", "zarr_array_attrs_get", "zarr_array_attrs_set"

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
    def dtype_kind(self):
        """(kind letter 'b'/'i'/'u'/'f'/'c', itemsize)"""
        k, s = C.c_int32(), C.c_size_t()
        _call("zarr_array_dtype", self.handle, C.byref(k), C.byref(s))
        return DTYPE_KINDS.get(k.value, k.value), s.value

    @property
    def dtype_string(self):
        return _string("zarr_array_dtype_string", self.handle)

    @property
    def dtype(self):
        """numpy dtype of the buffers exchanged with the library (native byte order)."""
        return np.dtype(self.dtype_string).newbyteorder("=")

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
