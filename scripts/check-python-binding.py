#!/usr/bin/env python3
"""Checks the ctypes declarations of bindings/python/libzarr.py against include/zarr.h.

libzarr.py declares by hand the `argtypes` and `restype` of each function it calls. This
script parses the header (scripts/zarr_header.py), loads the binding with a stand-in for the
library that records what it declares (no libzarr.so and no NumPy needed), and fails, naming
the function and the argument, when a declaration does not match the header's prototype:

- the number of arguments;
- each argument and the result by kind: an integer of the same width and signedness, bool,
  double or float as the C scalar; a pointer for a pointer, where `c_void_p` stands for any
  pointer, `c_char_p` only for `char *` (or a `void *` buffer), and `POINTER(X)` must point to
  what the C pointer points to (checked in turn); a CFUNCTYPE for a function pointer, whose
  result and arguments are checked the same way; a Structure for a struct, field by field
  (name and type);
- every header function the binding names (`_call("zarr_...")`, `lib().zarr_...`) is declared
  (ctypes would otherwise pass Python ints as C int), and the binding declares no function the
  header does not have.

Run by scripts/test.sh next to `scripts/generate-fortran.py --check`.
"""
import ast
import ctypes as C
import sys
import types
from pathlib import Path

import zarr_header

ROOT = Path(__file__).resolve().parent.parent
BINDING = ROOT / "bindings" / "python" / "libzarr.py"

INT_WIDTHS = {"int8_t": (1, True), "uint8_t": (1, False), "int16_t": (2, True),
              "uint16_t": (2, False), "int32_t": (4, True), "uint32_t": (4, False),
              "int64_t": (8, True), "uint64_t": (8, False), "int": (C.sizeof(C.c_int), True),
              "size_t": (C.sizeof(C.c_size_t), False), "intptr_t": (C.sizeof(C.c_void_p), True),
              "uintptr_t": (C.sizeof(C.c_void_p), False), "ptrdiff_t": (C.sizeof(C.c_void_p), True)}
# ctypes' type codes of the simple types.
INT_CODES = set("bBhHiIlLqQ")
FLOATS = {"float": "f", "double": "d"}


class _Anything(types.ModuleType):
    """A stand-in for NumPy when it is not installed: libzarr.py only touches it at import
    time to pick functions (np.lib..., np.byte_bounds), which the check never calls."""

    def __getattr__(self, name):
        return _Anything(name)

    def __call__(self, *args, **kwargs):
        return self


class _Function:
    def __init__(self, name):
        self.name, self.declared = name, {}

    def __setattr__(self, key, value):
        if key in ("argtypes", "restype"):
            self.declared[key] = value
        else:
            object.__setattr__(self, key, value)

    def __call__(self, *args):
        raise RuntimeError(f"{self.name} called while checking the binding")


class _Library:
    """Records what the binding declares of each function it looks up."""

    def __init__(self, *args, **kwargs):
        object.__setattr__(self, "functions", {})

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self.functions.setdefault(name, _Function(name))


def load_binding():
    """libzarr.py's module and what its lib() declared: {name: {"argtypes": [...], "restype": ...}}."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        sys.modules["numpy"] = _Anything("numpy")
    sys.path.insert(0, str(BINDING.parent))
    import libzarr
    real = C.CDLL
    C.CDLL = _Library
    try:
        libzarr._lib = None
        lib = libzarr.lib()
    finally:
        C.CDLL = real
        libzarr._lib = None
    return libzarr, {name: f.declared for name, f in lib.functions.items()}


def describe(py):
    """A ctypes type as the binding writes it."""
    if py is None:
        return "None"
    if isinstance(py, type) and issubclass(py, C._Pointer):
        return f"POINTER({describe(py._type_)})"
    if isinstance(py, type) and issubclass(py, C._CFuncPtr):
        args = ", ".join(describe(a) for a in py._argtypes_)
        return f"CFUNCTYPE({describe(py._restype_)}{', ' if args else ''}{args})"
    if isinstance(py, type) and issubclass(py, C.Array):
        return f"{describe(py._type_)} * {py._length_}"
    name = getattr(py, "__name__", repr(py))
    if isinstance(py, type) and issubclass(py, C._SimpleCData) and py._type_ in INT_CODES:
        bits = 8 * C.sizeof(py)
        return f"{name} ({'' if py._type_.islower() else 'u'}int{bits})"
    return name


class Checker:
    def __init__(self, header):
        self.header, self.errors, self.seen = header, [], set()

    def fail(self, where, message):
        self.errors.append(f"{where}: {message}")

    def compare(self, py, ctype, where):
        """Checks the ctypes type `py` against the C type `ctype`."""
        t = self.header.resolve(ctype)
        said = f"the header has `{ctype}`, the binding {describe(py)}"
        if t.fn is not None:
            if py is C.c_void_p:
                return  # an untyped function pointer: only NULL or an address can be passed
            if not (isinstance(py, type) and issubclass(py, C._CFuncPtr)):
                return self.fail(where, f"{said}: a function pointer needs a CFUNCTYPE")
            self.compare_signature(py._restype_, py._argtypes_, t.fn.params, t.fn.ret,
                                   f"{where} (the callback)")
            return
        kind = self.header.kind(t.base) if not t.ptrs else "pointer"
        if kind == "void":
            if py is not None:
                self.fail(where, f"{said}: void is None")
            return
        if py is None:
            return self.fail(where, f"{said}: None is void")
        if kind == "pointer":
            return self.compare_pointer(py, t, ctype, where)
        if kind == "struct":
            return self.compare_struct(py, t.base, where, said)
        if kind == "opaque":
            return self.fail(where, f"{said}: a handle is passed by pointer")
        simple = isinstance(py, type) and issubclass(py, C._SimpleCData)
        code = py._type_ if simple else None
        if t.base in INT_WIDTHS:
            width, signed = INT_WIDTHS[t.base]
            if code not in INT_CODES:
                return self.fail(where, f"{said}: not an integer")
            if C.sizeof(py) != width:
                return self.fail(where, f"{said}: an integer of {C.sizeof(py)} bytes, not {width}")
            if code.islower() != signed:
                return self.fail(where, f"{said}: {'un' if signed else ''}signed, not "
                                        f"{'' if signed else 'un'}signed")
        elif t.base == "bool":
            if code != "?":
                self.fail(where, f"{said}: bool is c_bool")
        elif t.base in FLOATS:
            if code != FLOATS[t.base]:
                self.fail(where, f"{said}: {t.base} is c_{t.base}")
        elif t.base == "char":
            if code not in ("c", "b", "B"):
                self.fail(where, f"{said}: char is c_char")
        else:
            self.fail(where, f"the header has `{ctype}`, a type this check does not know")

    def compare_pointer(self, py, t, ctype, where):
        said = f"the header has `{ctype}`, the binding {describe(py)}"
        pointee = t.pointee()
        simple = isinstance(py, type) and issubclass(py, C._SimpleCData)
        if simple and py._type_ == "P":
            return  # c_void_p: any pointer
        if simple and py._type_ == "z":
            if pointee.depth == 0 and self.header.resolve(pointee).base in ("char", "void"):
                return
            return self.fail(where, f"{said}: c_char_p is for `char *` (a string) only")
        if isinstance(py, type) and (issubclass(py, C._Pointer) or issubclass(py, C.Array)):
            target = self.header.resolve(pointee)
            if target.depth == 0 and target.fn is None:
                kind = self.header.kind(target.base)
                if kind == "void":
                    return  # a buffer of anything
                if kind == "opaque":
                    inner = py._type_
                    if isinstance(inner, type) and issubclass(inner, C.Structure) \
                            and not getattr(inner, "_fields_", None):
                        return  # POINTER(an empty Structure): a typed handle
                    return self.fail(where, f"{said}: a handle is c_void_p")
            self.compare(py._type_, pointee, f"{where}, what it points to")
            return
        self.fail(where, f"{said}: a pointer is c_void_p, c_char_p or POINTER(...)")

    def compare_struct(self, py, name, where, said):
        if not (isinstance(py, type) and issubclass(py, C.Structure)):
            return self.fail(where, f"{said}: struct {name} needs a Structure")
        if (py, name) in self.seen:
            return
        self.seen.add((py, name))
        members = self.header.structs[name]
        fields = list(getattr(py, "_fields_", []))
        at = f"Structure {py.__name__} (struct {name})"
        if getattr(py, "_pack_", 0):
            self.fail(at, "has _pack_; the C struct has the natural layout")
        if len(fields) != len(members):
            self.fail(at, f"{len(fields)} fields, the header {len(members)} "
                          f"({', '.join(m.name for m in members)})")
        for i, (f, m) in enumerate(zip(fields, members)):
            if len(f) != 2:
                self.fail(f"{at}, field {i + 1}", "a bit field; the header has none")
                continue
            if f[0] != m.name:
                self.fail(f"{at}, field {i + 1}", f"named {f[0]!r}, the header's is {m.name!r}")
            self.compare(f[1], m.type, f"{at}, field {i + 1} ({m.name})")

    def compare_signature(self, restype, argtypes, params, ret, where):
        argtypes = list(argtypes or [])
        if len(argtypes) != len(params):
            names = ", ".join(p.name for p in params) or "none"
            self.fail(where, f"{len(argtypes)} arguments declared, the header has "
                             f"{len(params)} ({names})")
        for i, (py, p) in enumerate(zip(argtypes, params)):
            self.compare(py, p.type, f"{where}, argument {i + 1} ({p.name})")
        self.compare(restype, ret, f"{where}, result")


def referenced(names):
    """Header functions libzarr.py names in its code: in strings ("zarr_array_read") and as
    attributes (lib().zarr_version)."""
    found = set()
    for node in ast.walk(ast.parse(BINDING.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            found.add(node.value)
        elif isinstance(node, ast.Attribute) and node.attr in names:
            found.add(node.attr)
    return found


def main():
    try:
        header = zarr_header.parse()
    except zarr_header.HeaderError as e:
        sys.exit(f"scripts/check-python-binding.py: include/zarr.h: {e}")
    _, declared = load_binding()
    check = Checker(header)
    rel = BINDING.relative_to(ROOT)
    for name, decl in sorted(declared.items()):
        f = header.function(name)
        if f is None:
            if decl:
                check.fail(name, "declared in the binding but not in include/zarr.h")
            continue
        if "argtypes" not in decl:
            check.fail(name, "no argtypes declared (ctypes would pass Python ints as C int)")
        else:
            if f.variadic:
                check.fail(name, "variadic in the header: check its declaration by hand")
            restype = decl.get("restype", C.c_int)  # ctypes' default
            check.compare_signature(restype, decl["argtypes"], f.params, f.ret, name)
    names = {f.name for f in header.functions}
    for name in sorted(referenced(names) - set(declared)):
        check.fail(name, "named by the binding but never declared (argtypes, restype)")
    if check.errors:
        for e in check.errors:
            print(f"{rel}: {e}", file=sys.stderr)
        n = len(check.errors)
        sys.exit(f"scripts/check-python-binding.py: {n} mismatch{'es' if n > 1 else ''} between "
                 f"{rel} and include/zarr.h")
    n = sum(1 for name in declared if name in names)
    print(f"ok: the {n} functions {rel} declares match include/zarr.h "
          f"({len(names) - n} of the header's {len(names)} it does not use)")


if __name__ == "__main__":
    main()
