#!/usr/bin/env python3
"""Writes the Fortran module `fortran/zarr.f90` and its test of every kind and rank,
`fortran/test_fortran_kinds.f90`, from `include/zarr.h`.

Everything the module binds is read from the header (scripts/zarr_header.py parses it): every
function becomes a public `bind(c)` interface of the same name, every `#define ZARR_* <integer>`
an integer parameter, every struct a `bind(c)` derived type, and every function pointer type an
abstract interface. C types become `iso_c_binding` kinds through one table (C_KINDS), and
parameters become dummy arguments through the rules of `dummy` (pointers to outputs, arrays,
buffers, strings, handles, callbacks); the few parameters those rules cannot tell apart are
named in the tables below it. A function of the header that the rules cannot map and that
LEFT_OUT does not list, with the reason, fails the generation (and so `--check` in CI).

Hand-written here are only the Fortran-friendly wrappers of the module (HELPERS: strings,
handles in derived types, Fortran order, status results) and the generic `zarr_get` and
`zarr_put`, which have one specific procedure per kind and rank (9 kinds x ranks 0-7), each a
few lines: the box (`box`, which checks the type) and one call of zarr_array_read or
zarr_array_write, as netCDF-Fortran generates its `nf90_get_var` specifics. `--check` compares
instead of writing and fails when a committed file is stale (scripts/test.sh runs it).
"""
import re
import sys
import textwrap
from pathlib import Path

import zarr_header

ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "fortran" / "zarr.f90"
MPI_MODULE = ROOT / "fortran" / "zarr_mpi.f90"
KINDS_TEST = ROOT / "fortran" / "test_fortran_kinds.f90"
MAX_RANK = 7

# C scalar type -> (Fortran type, iso_c_binding kind). Fortran has no unsigned integers: an
# unsigned C integer is the signed kind of its width (same bits; values above huge() of the
# kind read as negative).
C_KINDS = {
    "int8_t": ("integer", "c_int8_t"), "uint8_t": ("integer", "c_int8_t"),
    "int16_t": ("integer", "c_int16_t"), "uint16_t": ("integer", "c_int16_t"),
    "int32_t": ("integer", "c_int32_t"), "uint32_t": ("integer", "c_int32_t"),
    "int64_t": ("integer", "c_int64_t"), "uint64_t": ("integer", "c_int64_t"),
    "size_t": ("integer", "c_size_t"), "intptr_t": ("integer", "c_intptr_t"),
    "ptrdiff_t": ("integer", "c_ptrdiff_t"), "int": ("integer", "c_int"),
    "bool": ("logical", "c_bool"), "char": ("character", "c_char"),
    "float": ("real", "c_float"), "double": ("real", "c_double"),
}

# What the header declares that the module does not bind, with the reason. The generator fails
# on a function it cannot map unless it is listed here, and on a name listed here that the
# header no longer declares.
LEFT_OUT = {
    "ZARR_CHECK_VERSION": "a function-like C macro; from Fortran, "
                          "zarr_check_version(ZARR_VERSION_NUMBER) is the same check",
}

# C functions whose name Fortran has for something else: their bind(c) interface takes the
# name given here. The generator fails on any other clash of names (Fortran ignores case).
RENAMED = {
    "zarr_version": "zarr_version_c",  # the module's zarr_version() returns a Fortran string
    "zarr_status_name": "zarr_status_name_c",  # the same
    "zarr_version_number": "zarr_version_number_c",  # the constant ZARR_VERSION_NUMBER
}

# Parameters the rules of `dummy` cannot tell apart. A non-const pointer to a number named
# out_* is one value written (intent(out)) unless it is listed in ARRAY_OUTPUTS; one in a
# function that also takes a count (`ndim`, `n...`) must be listed in one of the two tables.
ARRAY_OUTPUTS = {
    ("zarr_array_shape", "out_shape"), ("zarr_array_chunks", "out_chunks"),
    ("zarr_array_inner_chunks", "out_chunks"), ("zarr_array_grid_shape", "out_grid"),
    ("zarr_array_block_box", "out_start"), ("zarr_array_block_box", "out_count"),
}
SCALAR_OUTPUTS = {
    ("zarr_array_vlen_size", "out_bytes"), ("zarr_utf32_to_utf8", "out_len"),
}
# `void *` parameters passed through to callbacks (not buffers): type(c_ptr), value.
OPAQUE_POINTERS = {"user_data", "sink"}
# Structs passed by pointer as arrays (one per dimension), not as one value.
ARRAY_STRUCTS = {"zarr_dim_selection"}
# Parameters taking a pointer libzarr gave (not a buffer the caller fills).
BY_VALUE = {("zarr_string_free", "s")}

# (name in procedure names, Fortran type, ZARR_DTYPE_* kind, NumPy type string, test value of i)
KINDS = [
    ("int8", "integer(int8)", "ZARR_DTYPE_INT", "|i1", "int(mod(i, 100) - 50, int8)"),
    ("int16", "integer(int16)", "ZARR_DTYPE_INT", "<i2", "int(i * 7 - 300, int16)"),
    ("int32", "integer(int32)", "ZARR_DTYPE_INT", "<i4", "int(i * 1000003, int32)"),
    ("int64", "integer(int64)", "ZARR_DTYPE_INT", "<i8", "int(i, int64) * 3000000000_int64"),
    ("real32", "real(real32)", "ZARR_DTYPE_FLOAT", "<f4", "real(i, real32) / 4"),
    ("real64", "real(real64)", "ZARR_DTYPE_FLOAT", "<f8", "real(i, real64) / 3"),
    ("complex32", "complex(real32)", "ZARR_DTYPE_COMPLEX", "<c8",
     "cmplx(i, -i, real32)"),
    ("complex64", "complex(real64)", "ZARR_DTYPE_COMPLEX", "<c16",
     "cmplx(i, 2 * i, real64)"),
    ("logical", "logical(c_bool)", "ZARR_DTYPE_BOOL", "|b1", "logical(mod(i, 3) == 0, c_bool)"),
]


def dims(rank):
    return "" if rank == 0 else "(" + ",".join(":" * rank) + ")"


def specific(direction, kind, rank, collective=False):
    """zarr_get/zarr_put of one kind and rank; with `collective`, zarr_mpi_get/zarr_mpi_put:
    zarr_box's checks, then the collective call, which every rank makes whatever its checks
    gave (their status is `local`)."""
    name, ftype, dtype = kind[0], kind[1], kind[2]
    intent = "out" if direction == "get" else "in"
    if collective:
        call = "read_all_f" if direction == "get" else "write_all_f"
        args, check = "comm, array, values, start, count", "local"
    else:
        call = "zarr_array_read" if direction == "get" else "zarr_array_write"
        args, check = "array, values, start, count", "status"
    lines = [f"  function {direction}_{name}_{rank}({args}) result(status)"]
    if collective:
        lines += ["    integer, intent(in) :: comm"]
    lines += ["    type(zarr_array), intent(in) :: array",
              f"    {ftype}, intent({intent}) :: values{dims(rank)}",
              "    integer, intent(in), optional :: start(:), count(:)",
              "    integer :: status"]
    # A scalar goes through an array of one (libzarr's buffer is an array).
    buffer, shape = ("one", "[integer(int64) ::]") if rank == 0 else ("values", "shape(values, kind=int64)")
    if rank == 0:
        lines += [f"    {ftype} :: one(1)"]
    lines += ["    integer(c_int64_t), allocatable :: cstart(:), ccount(:)",
              "    integer(c_size_t) :: itemsize"]
    if collective:
        lines += ["    integer(c_int32_t) :: local"]
    if rank == 0 and direction == "put":
        lines += ["    one(1) = values"]
    lines += [f"    itemsize = int(storage_size({buffer}) / 8, c_size_t)",
              f"    {check} = zarr_box(array, {rank}, {shape}, {dtype}, itemsize, start, count, cstart, ccount)"]
    if collective:
        lines += ["    if (.not. allocated(cstart)) allocate (cstart(0), ccount(0))",
                  f"    status = {call}(int(comm, c_int), local, zarr_c_handle(array), size(cstart, kind=c_size_t), &"]
    else:
        lines += [f"    if (status == ZARR_OK) status = {call}(array%handle, size(cstart, kind=c_size_t), &"]
    lines += [f"      cstart, ccount, {buffer}, size({buffer}, kind=c_size_t) * itemsize)"]
    if rank == 0 and direction == "get":
        lines += ["    if (status == ZARR_OK) values = one(1)"]
    lines += [f"  end function {direction}_{name}_{rank}", ""]
    return lines


MPI_INTERFACES = """  interface
    function store_open_f(comm, location, mode, options_json, out_store) &
        bind(c, name="zarr_mpi_store_open_f") result(status)
      import :: c_int, c_char, c_int32_t, c_ptr
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: location(*)
      integer(c_int32_t), value :: mode
      type(c_ptr), value :: options_json
      type(c_ptr), intent(out) :: out_store
      integer(c_int32_t) :: status
    end function store_open_f
    function array_create_f(comm, store, path, metadata_json, out_array) &
        bind(c, name="zarr_mpi_array_create_f") result(status)
      import :: c_int, c_char, c_int32_t, c_ptr
      integer(c_int), value :: comm
      type(c_ptr), value :: store
      character(kind=c_char), intent(in) :: path(*), metadata_json(*)
      type(c_ptr), intent(out) :: out_array
      integer(c_int32_t) :: status
    end function array_create_f
    function array_open_f(comm, store, path, out_array) &
        bind(c, name="zarr_mpi_array_open_f") result(status)
      import :: c_int, c_char, c_int32_t, c_ptr
      integer(c_int), value :: comm
      type(c_ptr), value :: store
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), intent(out) :: out_array
      integer(c_int32_t) :: status
    end function array_open_f
{moving}  end interface"""

MOVING = """    function {name}(comm, local, array, ndim, start, count, {buf}, {buf}_size) &
        bind(c, name="zarr_mpi_array_{call}_f") result(status)
      import :: c_int, c_int32_t, c_int64_t, c_ptr, c_size_t
      integer(c_int), value :: comm
      integer(c_int32_t), value :: local
      type(c_ptr), value :: array
      integer(c_size_t), value :: ndim
      integer(c_int64_t), intent(in) :: start(*), count(*)
      type(*), intent({intent}) :: {buf}(*)
      integer(c_size_t), value :: {buf}_size
      integer(c_int32_t) :: status
    end function {name}
"""

MPI_WRAPPERS = """  !> Opens the store at `location` on every rank of `comm` (zarr_mpi_store_open).
  function zarr_mpi_open_store(comm, location, mode, store) result(status)
    integer, intent(in) :: comm
    character(*), intent(in) :: location
    integer(c_int32_t), intent(in) :: mode
    type(zarr_store), intent(inout) :: store
    integer :: status
    type(c_ptr) :: handle
    status = store_open_f(int(comm, c_int), location // c_null_char, mode, c_null_ptr, handle)
    if (status == ZARR_OK) call zarr_set_c_handle(store, handle)
  end function zarr_mpi_open_store

  !> Creates the array at `path` from its metadata document (JSON, shapes in Zarr's C order),
  !> rank 0 writing it, and gives every rank a handle (zarr_mpi_array_create).
  function zarr_mpi_create_array(comm, store, path, metadata, array) result(status)
    integer, intent(in) :: comm
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path, metadata
    type(zarr_array), intent(inout) :: array
    integer :: status
    type(c_ptr) :: handle
    status = array_create_f(int(comm, c_int), zarr_c_handle(store), path // c_null_char, &
      metadata // c_null_char, handle)
    if (status == ZARR_OK) call zarr_set_c_handle(array, handle)
  end function zarr_mpi_create_array

  !> Opens the array at `path` on every rank, rank 0 reading its metadata (zarr_mpi_array_open).
  function zarr_mpi_open_array(comm, store, path, array) result(status)
    integer, intent(in) :: comm
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path
    type(zarr_array), intent(inout) :: array
    integer :: status
    type(c_ptr) :: handle
    status = array_open_f(int(comm, c_int), zarr_c_handle(store), path // c_null_char, handle)
    if (status == ZARR_OK) call zarr_set_c_handle(array, handle)
  end function zarr_mpi_open_array
"""


def mpi_module():
    names = [f"{k[0]}_{r}" for k in KINDS for r in range(MAX_RANK + 1)]
    out = ["! Generated by scripts/generate-fortran.py: do not edit.",
           "!",
           "! Collective Zarr I/O over MPI for Fortran: `use zarr_mpi` (over `use zarr` and",
           "! libzarr_mpi; docs/mpi.md). Every call is collective over `comm`, the communicator as",
           "! the `mpi` module gives it (an integer such as MPI_COMM_WORLD; with mpi_f08, comm%MPI_VAL),",
           "! and every rank returns the same status. Values, starts and counts are as zarr_get and",
           "! zarr_put take them (Fortran order, 1-based); a rank with nothing to write or read gives",
           "! zero counts.",
           "module zarr_mpi",
           "  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int32_t, c_int64_t, c_null_char, &",
           "    c_null_ptr, c_ptr, c_size_t, c_bool",
           "  use, intrinsic :: iso_fortran_env, only: int8, int16, int32, int64, real32, real64",
           "  use zarr, only: zarr_store, zarr_array, zarr_box, zarr_c_handle, zarr_set_c_handle, ZARR_OK, &",
           "    ZARR_DTYPE_INT, ZARR_DTYPE_FLOAT, ZARR_DTYPE_COMPLEX, ZARR_DTYPE_BOOL",
           "  implicit none",
           "  private",
           "  public :: zarr_mpi_open_store, zarr_mpi_create_array, zarr_mpi_open_array, zarr_mpi_get, &",
           "    zarr_mpi_put",
           ""]
    for direction, doc in [("get", "Reads each rank's box of the array into values(...), collectively (zarr_mpi_array_read_all)."),
                           ("put", "Writes each rank's values(...) into the array, collectively (zarr_mpi_array_write_all):\n"
                                   "  !> ranks' boxes may share chunks and shards but not elements.")]:
        out += [f"  !> {doc}", f"  interface zarr_mpi_{direction}"]
        for i in range(0, len(names), 4):
            chunk = ", ".join(f"{direction}_{n}" for n in names[i:i + 4])
            more = ", &" if i + 4 < len(names) else ""
            lead = "    module procedure " if i == 0 else "      "
            out.append(f"{lead}{chunk}{more}")
        out += [f"  end interface zarr_mpi_{direction}", ""]
    moving = "".join(MOVING.format(name=f"{call}_f", call=call, buf=buf, intent=intent)
                     for call, buf, intent in [("write_all", "data", "in"), ("read_all", "out", "inout")])
    out += MPI_INTERFACES.replace("{moving}", moving).splitlines() + ["", "contains", ""] + MPI_WRAPPERS.splitlines() + [""]
    for direction in ("get", "put"):
        for kind in KINDS:
            for rank in range(MAX_RANK + 1):
                out += specific(direction, kind, rank, collective=True)
    out += ["end module zarr_mpi"]
    return "\n".join(out) + "\n"


class MappingError(Exception):
    pass


def scalar(base, where):
    """The Fortran type of the C scalar type `base`, and the iso_c_binding name it needs."""
    if base not in C_KINDS:
        raise MappingError(f"{where}: no Fortran kind for the C type `{base}` (add it to C_KINDS)")
    ftype, kind = C_KINDS[base]
    return (f"character(kind={kind})" if ftype == "character" else f"{ftype}({kind})"), {kind}


def counted(function):
    """Whether `function` takes a count by value (`ndim`, `npoints`, ...), next to which an
    out_* pointer may be an array."""
    return any(p.type.depth == 0 and p.type.fn is None and re.fullmatch(r"ndim|n[a-z]+", p.name)
               for p in function.params)


def dummy(header, function, p, callee=False):
    """(declaration attributes, whether an array `(*)`, iso_c_binding and type names used) of the
    dummy argument for parameter `p` of `function`: of a bind(c) interface libzarr implements,
    or with `callee`, of a callback the program implements (every pointer but outputs and
    structs a type(c_ptr) by value there: the callee converts what it uses)."""
    t = header.resolve(p.type)
    where = f"{function.name}: parameter `{p.name}` ({p.type})"
    if t.fn is not None:
        return "type(c_funptr), value", False, {"c_funptr"}  # c_funloc(proc) or c_null_funptr
    k = header.kind(t.base)
    if t.depth == 0:
        if k == "scalar":
            spec, used = scalar(t.base, where)
            return spec + ", value", False, used
        if k == "struct":
            return f"type({t.base}), value", False, {t.base}
        raise MappingError(f"{where}: a {k} by value")
    out = p.name.startswith("out_") or p.name.endswith("_out")
    if callee:
        if t.depth == 1 and k == "struct" and t.const:
            return f"type({t.base}), intent(in)", False, {t.base}
        if t.depth == 1 and k == "scalar" and t.base != "char" and not t.const and out:
            spec, used = scalar(t.base, where)
            return spec + ", intent(out)", False, used
        return "type(c_ptr), value", False, {"c_ptr"}
    # Every pointer passed by reference is optional: an absent argument is NULL, which the
    # header allows where it says so (and is ZARR_ERR_NULL_POINTER elsewhere).
    opt = ", optional"
    if (function.name, p.name) in BY_VALUE:
        return "type(c_ptr), value", False, {"c_ptr"}
    if t.depth >= 2:
        inner = t.pointee()
        if t.depth == 2 and inner.ptrs[-1]:  # T *const *: pointers read (c_loc of each)
            return "type(c_ptr), intent(in)" + opt, True, {"c_ptr"}
        if t.depth == 2:  # T **: a pointer written (a handle, a string to free)
            return "type(c_ptr), intent(out)" + opt, False, {"c_ptr"}
        raise MappingError(f"{where}: a pointer to a pointer to a pointer")
    if k == "opaque":  # a handle
        return "type(c_ptr), value", False, {"c_ptr"}
    if k == "void":
        if p.name in OPAQUE_POINTERS:
            return "type(c_ptr), value", False, {"c_ptr"}
        # A buffer of values of any type (an array: a scalar goes as [x] or x(1:1)).
        return "type(*), intent(" + ("in" if t.const else "inout") + ")" + opt, True, set()
    if k == "struct":
        return (f"type({t.base}), intent(" + ("in" if t.const else "out") + ")" + opt,
                t.base in ARRAY_STRUCTS, {t.base})
    spec, used = scalar(t.base, where)
    if t.base == "char":  # a NUL-terminated string read, or a buffer of characters written
        return spec + ", intent(" + ("in" if t.const else "inout") + ")" + opt, True, used
    if t.const:  # an input array (a single input would be passed by value)
        return spec + ", intent(in)" + opt, True, used
    if out:
        key = (function.name, p.name)
        if key not in ARRAY_OUTPUTS and key not in SCALAR_OUTPUTS and counted(function):
            raise MappingError(f"{where}: one value or an array? Add it to ARRAY_OUTPUTS or "
                               "SCALAR_OUTPUTS of scripts/generate-fortran.py")
        return spec + ", intent(out)" + opt, key in ARRAY_OUTPUTS, used
    return spec + ", intent(inout)" + opt, True, used  # an array written (offsets, out)


def result(header, name, ret):
    """(declaration of the function result, names used), or None for a subroutine."""
    t = header.resolve(ret)
    if t.fn is not None:
        return "type(c_funptr)", {"c_funptr"}
    if t.depth:
        return "type(c_ptr)", {"c_ptr"}
    k = header.kind(t.base)
    if k == "void":
        return None
    if k == "struct":
        return f"type({t.base})", {t.base}
    if k == "scalar":
        return scalar(t.base, f"{name}: result")
    raise MappingError(f"{name}: returns a {k} by value")


def wrap(text, indent, width=100):
    """`text` (starting with `indent`) broken after commas into lines of at most `width`."""
    lines, line = [], ""
    for piece in re.split(r"(?<=, )", text):
        if line and len(line) + len(piece) + 2 > width:
            lines.append(line.rstrip() + " &")
            line = indent + "    " + piece
        else:
            line += piece
    return lines + [line]


def procedure(header, function, fname, bind, callee=False):
    """The interface body of `function` (a zarr_header.Function or one of a callback type), and
    the names it imports."""
    args = [p.name for p in function.params]
    lowered = [a.lower() for a in args]
    if len(set(lowered)) != len(lowered) or fname.lower() in lowered:
        raise MappingError(f"{function.name}: parameter names that Fortran cannot tell apart")
    res = result(header, function.name, function.ret)
    word = "subroutine" if res is None else "function"
    used, decls = set(), []
    for p in function.params:
        spec, array, names = dummy(header, function, p, callee)
        used |= names
        decls.append(f"      {spec} :: {p.name}{'(*)' if array else ''}")
    if res is not None:
        used |= res[1]
        decls.append(f"      {res[0]} :: {fname}")
    clash = used & {a.lower() for a in args}
    if clash:
        raise MappingError(f"{function.name}: a parameter is named as a type: {sorted(clash)}")
    lines = wrap(f"    {word} {fname}({', '.join(args)}) {bind}", "    ")
    if used:
        lines += wrap("      import :: " + ", ".join(sorted(used)), "      ")
    return lines + decls + [f"    end {word} {fname}"], used


def component(header, struct, p):
    """The declaration of member `p` of bind(c) type `struct`, zero by default as `{0}` in C."""
    t = header.resolve(p.type)
    if t.fn is not None:
        return f"    type(c_funptr) :: {p.name} = c_null_funptr", {"c_funptr", "c_null_funptr"}
    if t.depth:
        return f"    type(c_ptr) :: {p.name} = c_null_ptr", {"c_ptr", "c_null_ptr"}
    k = header.kind(t.base)
    if k == "struct":
        return f"    type({t.base}) :: {p.name}", set()
    if k != "scalar":
        raise MappingError(f"struct {struct}: member `{p.name}` is a {k}")
    spec, used = scalar(t.base, f"struct {struct}: member `{p.name}`")
    zero = {"integer": "0", "real": "0", "logical": ".false.", "character": "c_null_char"}
    if spec.startswith("character"):
        used = used | {"c_null_char"}
    return f"    {spec} :: {p.name} = {zero[spec.split('(')[0]]}", used


def check_tables(header):
    """Fails on an entry of the tables above that names what the header no longer has."""
    names = {f.name for f in header.functions} | set(header.macros)
    for name in list(LEFT_OUT) + list(RENAMED):
        if name not in names:
            raise MappingError(f"LEFT_OUT or RENAMED names {name}, which zarr.h does not declare")
    for fname, pname in ARRAY_OUTPUTS | SCALAR_OUTPUTS | BY_VALUE:
        f = header.function(fname)
        if f is None or pname not in [p.name for p in f.params]:
            raise MappingError(f"a table of generate-fortran.py names {fname}({pname}), "
                               "which zarr.h does not declare")


def reason(name):
    """The comment saying why `name` is not bound."""
    return textwrap.wrap(f"{name}: {LEFT_OUT[name]}", 96, initial_indent="  !   ",
                         subsequent_indent="  !     ")


def bindings(header):
    """The generated parts of the module: constants, bind(c) types, abstract interfaces,
    interfaces, the public names, the names defined and the iso_c_binding names used."""
    check_tables(header)
    for name in header.macros:
        if name not in LEFT_OUT:
            raise MappingError(f"zarr.h defines the macro {name}, which is neither bound nor in "
                               "LEFT_OUT of scripts/generate-fortran.py")
    used, defined = set(), {}

    def define(name, what):
        if name.lower() in defined:
            raise MappingError(f"{what} {name}: the name of {defined[name.lower()]} in Fortran")
        defined[name.lower()] = f"{what} {name}"

    constants = []
    for name, value in header.constants:
        define(name, "the constant")
        kind = "integer" if -2**31 <= value < 2**31 else "integer(c_int64_t)"
        constants.append(f"  integer, parameter, public :: {name} = {value}"
                         if kind == "integer" else
                         f"  {kind}, parameter, public :: {name} = {value}_c_int64_t")
        if kind != "integer":
            used.add("c_int64_t")
    types = []
    for name, members in header.structs.items():
        define(name, "the struct")
        types += [f"  !> struct {name} of zarr.h (zero by default, as {{0}} in C).",
                  f"  type, bind(c), public :: {name}"]
        for m in members:
            line, names = component(header, name, m)
            types.append(line)
            used |= names
        types += [f"  end type {name}", ""]
    # Callbacks the program implements: the function pointer types, and the members of structs.
    callbacks = [(name, zarr_header.Function(name, sig.ret, sig.params))
                 for name, sig in header.fntypes.items()]
    for sname, members in header.structs.items():
        for m in members:
            if m.type.fn is not None:
                callbacks.append((f"{sname}_{m.name}_fn",
                                  zarr_header.Function(f"{sname}.{m.name}", m.type.fn.ret,
                                                       m.type.fn.params)))
    abstract = []
    for name, fn in callbacks:
        define(name, "the callback type")
        lines, names = procedure(header, fn, name, "bind(c)", callee=True)
        abstract += lines
        used |= names
    interfaces, public, left_out = [], [], []
    for f in header.functions:
        if f.name in LEFT_OUT:
            left_out += reason(f.name)
            continue
        fname = RENAMED.get(f.name, f.name)
        define(fname, "the function")
        try:
            if f.variadic:
                raise MappingError(f"{f.name} is variadic, which Fortran cannot call")
            lines, names = procedure(header, f, fname, f'bind(c, name="{f.name}")')
        except (MappingError, zarr_header.HeaderError) as e:
            raise MappingError(f"{e}\n  (map it in scripts/generate-fortran.py, or list "
                               f"{f.name} in its LEFT_OUT with the reason)") from None
        interfaces += lines
        used |= names
        public.append(fname)
    for name in LEFT_OUT:
        if name in header.macros:
            left_out += reason(name)
    return {"constants": constants, "types": types, "abstract": abstract,
            "interfaces": interfaces, "public": [n for n, _ in callbacks] + public,
            "left_out": left_out, "defined": defined,
            "c_names": {n for n in used if n.startswith("c_")}}


# The public names of the module's Fortran-friendly procedures (hand-written in HELPERS).
WRAPPERS = ["zarr_version", "zarr_errmsg", "zarr_status_name", "zarr_open_store", "zarr_close",
            "zarr_create_group", "zarr_open_group", "zarr_create_array", "zarr_create",
            "zarr_open_array", "zarr_ndims", "zarr_shape", "zarr_get", "zarr_put",
            "zarr_get_attrs", "zarr_put_attrs", "zarr_c_handle", "zarr_set_c_handle", "zarr_box"]
# What the wrappers use of iso_c_binding.
WRAPPER_C_NAMES = {"c_ptr", "c_null_ptr", "c_char", "c_int32_t", "c_int64_t", "c_size_t",
                   "c_null_char", "c_associated", "c_f_pointer", "c_bool"}


def public_lines(names):
    return wrap("  public :: " + ", ".join(names), "  ")


def module():
    header = zarr_header.parse()
    gen = bindings(header)
    specifics = [f"{d}_{k[0]}_{r}" for d in ("get", "put") for k in KINDS for r in range(MAX_RANK + 1)]
    own = (WRAPPERS + ["zarr_store", "zarr_group", "zarr_array", "c_strlen"] + specifics
           + re.findall(r"^  (?:pure )?(?:function|subroutine) (\w+)", HELPERS, re.M))
    for name in own:
        if name.lower() in gen["defined"]:
            raise MappingError(f"{name} of the module's wrappers is also {gen['defined'][name.lower()]}"
                               " of zarr.h: add it to RENAMED of scripts/generate-fortran.py")
    names = [f"{k[0]}_{r}" for k in KINDS for r in range(MAX_RANK + 1)]
    renamed = ", ".join(RENAMED.values())
    c_names = sorted(gen["c_names"] | WRAPPER_C_NAMES)
    out = ["! Generated by scripts/generate-fortran.py from include/zarr.h: do not edit.",
           "!",
           "! libzarr for Fortran: `use zarr`. Every function returns a status, ZARR_OK (0) or a",
           "! negative ZARR_ERR_* code, and zarr_errmsg() says what failed (libzarr's message).",
           "!",
           "! Order, as in netCDF-Fortran: the Fortran array a(nx, ny, nz) is the Zarr array of",
           "! shape [nz, ny, nx] (C order). Shapes, chunk shapes, starts and counts are given and",
           "! returned in Fortran order and starts are 1-based; the module reverses them at the",
           "! boundary, and no value is ever transposed or copied on the way.",
           "!"] + ["! " + line for line in textwrap.wrap(
               "The whole C API is here too, as in zarr.h: every function is a bind(c) interface "
               f"of its C name (but {renamed}: names Fortran has for others), every ZARR_* "
               "constant an integer parameter, every struct a bind(c) type of its name (zero by "
               "default), every callback type an abstract interface. There, handles, strings "
               "returned (char **, to free with zarr_string_free) and callback data are "
               "type(c_ptr); strings passed are NUL-terminated character(kind=c_char) (text // "
               "c_null_char); callbacks are type(c_funptr) (c_funloc of a bind(c) procedure, or "
               "c_null_funptr); unsigned integers are the signed kind of their width; pointer "
               "arguments are optional (an absent one is NULL); shapes and indices are in C "
               "order and 0-based.", 90)] + [
           "module zarr"]
    out += wrap("  use, intrinsic :: iso_c_binding, only: " + ", ".join(c_names), "  ")
    out += ["  use, intrinsic :: iso_fortran_env, only: int8, int16, int32, int64, real32, real64",
            "  implicit none",
            "  private",
            ""]
    out += gen["constants"] + [""] + gen["types"]
    out += ["  !> A store: a directory, a zip file, memory or a URL (zarr_open_store).",
            "  type, public :: zarr_store",
            "    private",
            "    type(c_ptr) :: handle = c_null_ptr",
            "  end type zarr_store",
            "",
            "  !> A group of a store (zarr_create_group, zarr_open_group).",
            "  type, public :: zarr_group",
            "    private",
            "    type(c_ptr) :: handle = c_null_ptr",
            "  end type zarr_group",
            "",
            "  !> An array of a store (zarr_create, zarr_create_array, zarr_open_array).",
            "  type, public :: zarr_array",
            "    private",
            "    type(c_ptr) :: handle = c_null_ptr",
            "  end type zarr_array",
            "",
            ""]
    out += public_lines(WRAPPERS)
    out += ["", "  ! The C API (zarr.h): its callback types, then its functions."]
    out += public_lines(gen["public"])
    out += ["",
            "  !> Closes a store, group or array handle (a closed or never opened one is a no-op).",
            "  interface zarr_close",
            "    module procedure close_store, close_group, close_array",
            "  end interface zarr_close",
            "",
            "  !> The user attributes of an array or group, as JSON text.",
            "  interface zarr_get_attrs",
            "    module procedure get_array_attrs, get_group_attrs",
            "  end interface zarr_get_attrs",
            "",
            "  !> Replaces the user attributes of an array or group with a JSON object.",
            "  interface zarr_put_attrs",
            "    module procedure put_array_attrs, put_group_attrs",
            "  end interface zarr_put_attrs",
            "",
            "  !> The C handle of a store or array, for modules built on this one (zarr_mpi).",
            "  interface zarr_c_handle",
            "    module procedure store_c_handle, array_c_handle",
            "  end interface zarr_c_handle",
            "",
            "  !> Makes a store or array of a C handle libzarr gave, for modules built on this one.",
            "  interface zarr_set_c_handle",
            "    module procedure store_set_c_handle, array_set_c_handle",
            "  end interface zarr_set_c_handle",
            ""]
    for direction, doc in [("get", "Reads values(...) from the array: the box of count (default: shape(values))\n"
                                   "  !> values from start (default: all 1), in Fortran order. The array's type must be the\n"
                                   "  !> variable's kind (no conversion)."),
                           ("put", "Writes values(...) into the array, as zarr_get reads them.")]:
        out += [f"  !> {doc}", f"  interface zarr_{direction}"]
        for i in range(0, len(names), 4):
            chunk = ", ".join(f"{direction}_{n}" for n in names[i:i + 4])
            more = ", &" if i + 4 < len(names) else ""
            lead = "    module procedure " if i == 0 else "      "
            out.append(f"{lead}{chunk}{more}")
        out += [f"  end interface zarr_{direction}", ""]
    out += ["  !> The callbacks of zarr.h, as the program implements them (a bind(c) procedure passed",
            "  !> as c_funloc(proc)): pointers are type(c_ptr), but outputs and structs.",
            "  abstract interface"] + gen["abstract"] + ["  end interface", ""]
    out += ["  !> The functions of zarr.h.", "  interface"] + gen["interfaces"] + ["  end interface", ""]
    if gen["left_out"]:
        out += ["  ! Not bound (LEFT_OUT of scripts/generate-fortran.py):"] + gen["left_out"] + [""]
    out += LIBC.splitlines() + ["", "contains", ""] + HELPERS.splitlines() + [""]
    for direction in ("get", "put"):
        for kind in KINDS:
            for rank in range(MAX_RANK + 1):
                out += specific(direction, kind, rank)
    out += ["end module zarr"]
    return "\n".join(out) + "\n"


# Of the C library, for the wrappers' strings (private).
LIBC = """  interface
    function c_strlen(text) bind(c, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: text
      integer(c_size_t) :: n
    end function c_strlen
  end interface"""

HELPERS = """  !> `text` as a NUL-terminated C string.
  pure function c_str(text) result(out)
    character(*), intent(in) :: text
    character(kind=c_char, len=len(text) + 1) :: out
    out = text // c_null_char
  end function c_str

  !> A copy of the NUL-terminated C string at `ptr` ("" for NULL).
  function f_str(ptr) result(text)
    type(c_ptr), intent(in) :: ptr
    character(:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: n, i
    if (.not. c_associated(ptr)) then
      text = ""
      return
    end if
    n = c_strlen(ptr)
    call c_f_pointer(ptr, chars, [n])
    allocate (character(len=n) :: text)
    do i = 1, n
      text(i:i) = chars(i)
    end do
  end function f_str

  !> A string libzarr allocated, copied and freed.
  function taken(ptr) result(text)
    type(c_ptr), intent(in) :: ptr
    character(:), allocatable :: text
    text = f_str(ptr)
    call zarr_string_free(ptr)
  end function taken

  !> libzarr's version, e.g. "0.1.0".
  function zarr_version() result(version)
    character(:), allocatable :: version
    version = f_str(zarr_version_c())
  end function zarr_version

  !> What the last failed call of this thread said (libzarr's message), or "".
  function zarr_errmsg() result(message)
    character(:), allocatable :: message
    message = f_str(zarr_last_error())
  end function zarr_errmsg

  !> The name of a status, e.g. "ZARR_ERR_NOT_FOUND".
  function zarr_status_name(status) result(name)
    integer, intent(in) :: status
    character(:), allocatable :: name
    name = f_str(zarr_status_name_c(int(status, c_int32_t)))
  end function zarr_status_name

  !> Opens the store at `location` (a directory path, a .zip file, "memory:", s3://, gs://,
  !> az://, http(s)://) with `mode` ZARR_MODE_READ or ZARR_MODE_WRITE.
  function zarr_open_store(location, mode, store) result(status)
    character(*), intent(in) :: location
    integer, intent(in) :: mode
    type(zarr_store), intent(out) :: store
    integer :: status
    status = zarr_store_open(c_str(location), int(mode, c_int32_t), store%handle)
  end function zarr_open_store

  function close_store(store) result(status)
    type(zarr_store), intent(inout) :: store
    integer :: status
    status = zarr_store_close(store%handle)
    store%handle = c_null_ptr
  end function close_store

  function close_group(group) result(status)
    type(zarr_group), intent(inout) :: group
    integer :: status
    status = zarr_group_close(group%handle)
    group%handle = c_null_ptr
  end function close_group

  function close_array(array) result(status)
    type(zarr_array), intent(inout) :: array
    integer :: status
    status = zarr_array_close(array%handle)
    array%handle = c_null_ptr
  end function close_array

  !> Creates a group at `path` ("" is the store's root), with its missing ancestors.
  function zarr_create_group(store, path, group) result(status)
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path
    type(zarr_group), intent(out) :: group
    integer :: status
    status = zarr_group_create(store%handle, c_str(path), group%handle)
  end function zarr_create_group

  !> Opens the group at `path`.
  function zarr_open_group(store, path, group) result(status)
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path
    type(zarr_group), intent(out) :: group
    integer :: status
    status = zarr_group_open(store%handle, c_str(path), group%handle)
  end function zarr_open_group

  !> Creates an array at `path` from a metadata document (`.zarray` or v3 `zarr.json` JSON, as
  !> zarr_array_create takes it: shapes there are in Zarr's C order).
  function zarr_create_array(store, path, metadata, array) result(status)
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path, metadata
    type(zarr_array), intent(out) :: array
    integer :: status
    status = zarr_array_create(store%handle, c_str(path), c_str(metadata), array%handle)
  end function zarr_create_array

  !> Creates a Zarr v2 array at `path` of `shape` in `chunks` (both in Fortran order) and the
  !> NumPy type `dtype` (e.g. "<f8"), compressed with `compressor` (numcodecs JSON, "null" for
  !> none; default: libzarr's, as zarr-python's); `fill_value` is JSON (default 0).
  function zarr_create(store, path, shape, chunks, dtype, array, compressor, fill_value) &
      result(status)
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path, dtype
    integer(int64), intent(in) :: shape(:), chunks(:)
    type(zarr_array), intent(out) :: array
    character(*), intent(in), optional :: compressor, fill_value
    integer :: status
    character(:), allocatable :: metadata
    metadata = '{"zarr_format": 2, "shape": ' // json_dims(shape) // ', "chunks": ' // &
      json_dims(chunks) // ', "dtype": "' // dtype // '"'
    if (present(compressor)) metadata = metadata // ', "compressor": ' // compressor
    if (present(fill_value)) metadata = metadata // ', "fill_value": ' // fill_value
    metadata = metadata // '}'
    status = zarr_create_array(store, path, metadata, array)
  end function zarr_create

  !> `dims` reversed, as a JSON list.
  function json_dims(dims) result(json)
    integer(int64), intent(in) :: dims(:)
    character(:), allocatable :: json
    character(len=24) :: number
    integer :: i
    json = "["
    do i = size(dims), 1, -1
      write (number, "(I0)") dims(i)
      json = json // trim(number)
      if (i > 1) json = json // ", "
    end do
    json = json // "]"
  end function json_dims

  !> Opens the array at `path`.
  function zarr_open_array(store, path, array) result(status)
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path
    type(zarr_array), intent(out) :: array
    integer :: status
    status = zarr_array_open(store%handle, c_str(path), array%handle)
  end function zarr_open_array

  !> The array's number of dimensions.
  function zarr_ndims(array, ndims) result(status)
    type(zarr_array), intent(in) :: array
    integer, intent(out) :: ndims
    integer :: status
    integer(c_size_t) :: n
    status = zarr_array_ndim(array%handle, n)
    ndims = int(n)
  end function zarr_ndims

  !> The array's shape in Fortran order.
  function zarr_shape(array, shape) result(status)
    type(zarr_array), intent(in) :: array
    integer(int64), allocatable, intent(out) :: shape(:)
    integer :: status
    integer(c_size_t) :: n
    integer(c_int64_t), allocatable :: dims(:)
    status = zarr_array_ndim(array%handle, n)
    if (status /= ZARR_OK) return
    allocate (dims(n))
    status = zarr_array_shape(array%handle, n, dims)
    if (status == ZARR_OK) shape = dims(n:1:-1)
  end function zarr_shape

  function get_array_attrs(array, json) result(status)
    type(zarr_array), intent(in) :: array
    character(:), allocatable, intent(out) :: json
    integer :: status
    type(c_ptr) :: text
    status = zarr_array_attrs_get(array%handle, text)
    if (status == ZARR_OK) json = taken(text)
  end function get_array_attrs

  function get_group_attrs(group, json) result(status)
    type(zarr_group), intent(in) :: group
    character(:), allocatable, intent(out) :: json
    integer :: status
    type(c_ptr) :: text
    status = zarr_group_attrs_get(group%handle, text)
    if (status == ZARR_OK) json = taken(text)
  end function get_group_attrs

  function put_array_attrs(array, json) result(status)
    type(zarr_array), intent(in) :: array
    character(*), intent(in) :: json
    integer :: status
    status = zarr_array_attrs_set(array%handle, c_str(json))
  end function put_array_attrs

  function put_group_attrs(group, json) result(status)
    type(zarr_group), intent(in) :: group
    character(*), intent(in) :: json
    integer :: status
    status = zarr_group_attrs_set(group%handle, c_str(json))
  end function put_group_attrs

  !> The C handle of a store or array (for modules built on this one: zarr_mpi).
  function store_c_handle(store) result(handle)
    type(zarr_store), intent(in) :: store
    type(c_ptr) :: handle
    handle = store%handle
  end function store_c_handle

  function array_c_handle(array) result(handle)
    type(zarr_array), intent(in) :: array
    type(c_ptr) :: handle
    handle = array%handle
  end function array_c_handle

  !> Makes a store or array of a C handle libzarr gave (for modules built on this one).
  subroutine store_set_c_handle(store, handle)
    type(zarr_store), intent(inout) :: store
    type(c_ptr), intent(in) :: handle
    store%handle = handle
  end subroutine store_set_c_handle

  subroutine array_set_c_handle(array, handle)
    type(zarr_array), intent(inout) :: array
    type(c_ptr), intent(in) :: handle
    array%handle = handle
  end subroutine array_set_c_handle

  !> The box libzarr reads or writes for a variable of `rank` and `extent` (Fortran order)
  !> whose values are libzarr's type `kind` of `itemsize` bytes (checked): `count` (default:
  !> the extent, 1 for dimensions past the variable's rank) values from `start` (1-based,
  !> default 1), both in Fortran order and of the array's rank, reversed for libzarr.
  function zarr_box(array, rank, extent, kind, itemsize, start, count, cstart, ccount) &
      result(status)
    type(zarr_array), intent(in) :: array
    integer, intent(in) :: rank
    integer(int64), intent(in) :: extent(:)
    integer(c_int32_t), intent(in) :: kind
    integer(c_size_t), intent(in) :: itemsize
    integer, intent(in), optional :: start(:), count(:)
    integer(c_int64_t), allocatable, intent(out) :: cstart(:), ccount(:)
    integer :: status
    integer(c_size_t) :: ndim
    integer :: i, d
    status = zarr_array_check_dtype(array%handle, kind, itemsize)
    if (status /= ZARR_OK) return
    if (present(count)) then
      ndim = size(count)
    else if (present(start)) then
      ndim = size(start)
    else
      status = zarr_array_ndim(array%handle, ndim)
      if (status /= ZARR_OK) return
    end if
    allocate (cstart(ndim), ccount(ndim))
    do i = 1, int(ndim)
      d = int(ndim) + 1 - i ! the Fortran dimension of libzarr's dimension i
      cstart(i) = 0
      if (present(start)) then
        if (d <= size(start)) cstart(i) = start(d) - 1
      end if
      if (present(count)) then
        ccount(i) = 0
        if (d <= size(count)) ccount(i) = count(d)
      else if (d <= rank) then
        ccount(i) = extent(d)
      else
        ccount(i) = 1
      end if
    end do
  end function zarr_box
"""


def kinds_test():
    out = ["! Generated by scripts/generate-fortran.py: do not edit.",
           "!",
           "! Every kind and rank of zarr_get and zarr_put: an array of each kind and rank 0-7",
           "! (extents 2, 1, 3, 1, 2, 1, 2 in Fortran order) is written whole in a memory store,",
           "! read back whole, and compared; then its first element is read alone with start and",
           "! count. Exits 1 naming the first failure.",
           "program test_fortran_kinds",
           "  use, intrinsic :: iso_c_binding, only: c_bool",
           "  use, intrinsic :: iso_fortran_env, only: int8, int16, int32, int64, real32, real64",
           "  use zarr",
           "  implicit none",
           "  type(zarr_store) :: store",
           "  integer :: checked",
           "  call check(zarr_open_store(\"memory:\", ZARR_MODE_WRITE, store), \"open a memory store\")",
           "  checked = 0"]
    extents = [2, 1, 3, 1, 2, 1, 2]
    for kind in KINDS:
        out.append(f"  call {kind[0]}_all()")
    out += ["  call check(zarr_close(store), \"close the store\")",
            "  print \"(A, I0, A)\", \"ok \", checked, \" kinds x ranks written and read back\"",
            "",
            "contains",
            "",
            "  subroutine check(status, what)",
            "    integer, intent(in) :: status",
            "    character(*), intent(in) :: what",
            "    if (status /= ZARR_OK) then",
            "      print \"(A, A, A, A)\", what, \" failed: \", zarr_errmsg(), \"\"",
            "      stop 1",
            "    end if",
            "  end subroutine check",
            ""]
    for name, ftype, _, typestr, value in KINDS:
        out += [f"  subroutine {name}_all()"]
        decls = []
        for rank in range(MAX_RANK + 1):
            shape = "" if rank == 0 else "(" + ",".join(str(e) for e in extents[:rank]) + ")"
            decls.append(f"    {ftype} :: a{rank}{shape}, b{rank}{shape}")
        out += decls + ["    {0} :: first(1)".format(ftype),
                        "    type(zarr_array) :: array",
                        "    integer :: i",
                        "    integer(int64), allocatable :: got(:)",
                        "    character(len=16) :: path"]
        for rank in range(MAX_RANK + 1):
            ext = extents[:rank]
            shape_arr = f"shape(a{rank}, kind=int64)" if rank else "[integer(int64) ::]"
            if rank == 0:
                fill = f"    i = 7\n    a0 = {value}"
                same = "a0 .eqv. b0" if name == "logical" else "a0 == b0"
            else:
                fill = (f"    a{rank} = reshape([({value}, i = 1, size(a{rank}))], shape(a{rank}))")
                same = (f"all(a{rank} .eqv. b{rank})" if name == "logical"
                        else f"all(a{rank} == b{rank})")
            label = f"{name} rank {rank}"
            out += [f"    write (path, \"(A, I0)\") \"{name}/r\", {rank}",
                    fill,
                    f"    call check(zarr_create(store, trim(path), {shape_arr}, &",
                    f"      {shape_arr}, \"{typestr}\", array), \"create {label}\")",
                    f"    call check(zarr_shape(array, got), \"shape of {label}\")",
                    f"    if (any(got /= {shape_arr})) then",
                    f"      print *, \"{label}: shape \", got",
                    "      stop 1",
                    "    end if",
                    f"    call check(zarr_put(array, a{rank}), \"put {label}\")",
                    f"    call check(zarr_get(array, b{rank}), \"get {label}\")",
                    f"    if (.not. ({same})) then",
                    f"      print *, \"{label}: read back other values\"",
                    "      stop 1",
                    "    end if"]
            if rank > 0:
                ones = ", ".join("1" for _ in ext)
                first_same = ("first(1) .eqv. a{0}({1})" if name == "logical"
                              else "first(1) == a{0}({1})").format(rank, ones)
                out += [f"    call check(zarr_get(array, first, start=[{ones}], count=[{ones}]), &",
                        f"      \"get the first of {label}\")",
                        f"    if (.not. ({first_same})) then",
                        f"      print *, \"{label}: the first value differs\"",
                        "      stop 1",
                        "    end if"]
            out += ["    call check(zarr_close(array), \"close\")",
                    "    checked = checked + 1"]
        out += [f"  end subroutine {name}_all", ""]
    out += ["end program test_fortran_kinds"]
    return "\n".join(out) + "\n"


def main():
    try:
        files = {MODULE: module(), KINDS_TEST: kinds_test(), MPI_MODULE: mpi_module()}
    except (MappingError, zarr_header.HeaderError) as e:
        sys.exit(f"scripts/generate-fortran.py: {e}")
    if sys.argv[1:] == ["--check"]:
        stale = [str(p.relative_to(ROOT)) for p, text in files.items()
                 if not p.exists() or p.read_text() != text]
        if stale:
            sys.exit(f"stale: {', '.join(stale)} (run scripts/generate-fortran.py)")
        return
    for path, text in files.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)


if __name__ == "__main__":
    main()
