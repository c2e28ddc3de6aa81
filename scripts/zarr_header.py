"""Reads `include/zarr.h` (cbindgen's output, a regular subset of C) into Python objects, for
the scripts that write or check bindings against it: scripts/generate-fortran.py (the Fortran
module) and scripts/check-python-binding.py (the ctypes declarations of bindings/python).

What it understands: `#define NAME <integer>` constants, other `#define`s (kept as text, for
the caller to use or refuse), `typedef struct NAME NAME;` (opaque handles), `typedef struct
{ members } NAME;`, `typedef <scalar type> NAME;`, `typedef RET (*NAME)(PARAMS);` (function
pointer types) and function prototypes (variadic ones marked so), with `const`, pointers and
function pointers in parameters and members. Anything else (an enum, a union, an array member,
a conditional other than the `#ifdef __cplusplus` guards) raises HeaderError naming it, so that
a binding is never written from a header this parser misread.
"""
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = ROOT / "include" / "zarr.h"


class HeaderError(Exception):
    pass


@dataclass(frozen=True)
class CType:
    """A C type as written: `base` (e.g. "uint64_t", "zarr_store", "char", "void") with `const`
    on it, then one entry in `ptrs` per `*`, innermost first, each True when that pointer is
    itself const (`const char *const *` is base char, const, ptrs (True, False)). A function
    pointer written inline (a struct member `zarr_status (*read)(...)`) has `fn` instead."""
    base: str = ""
    const: bool = False
    ptrs: tuple = ()
    fn: "FnSig" = None

    @property
    def depth(self):
        return len(self.ptrs)

    def pointee(self):
        """The type this pointer points to."""
        if not self.ptrs:
            raise HeaderError(f"{self} is not a pointer")
        return CType(self.base, self.const, self.ptrs[:-1], self.fn)

    def __str__(self):
        if self.fn is not None:
            return f"{self.fn.ret} (*)({', '.join(str(p.type) for p in self.fn.params) or 'void'})"
        text = ("const " if self.const else "") + self.base
        for const in self.ptrs:
            text += " *const" if const else " *"
        return text.replace("* *", "**")


def _named(t, name):
    """`const char *name`, as C writes a declaration."""
    text = str(t)
    return f"{text}{name}" if text.endswith("*") else f"{text} {name}"


@dataclass(frozen=True)
class Param:
    type: CType
    name: str


@dataclass(frozen=True)
class FnSig:
    ret: CType
    params: tuple


@dataclass(frozen=True)
class Function:
    name: str
    ret: CType
    params: tuple
    variadic: bool = False  # `...` after `params`

    def __str__(self):
        args = [_named(p.type, p.name) for p in self.params] + (["..."] if self.variadic else [])
        return _named(self.ret, f"{self.name}({', '.join(args) or 'void'})")


@dataclass
class Header:
    constants: list = field(default_factory=list)   # (name, int value), in header order
    macros: dict = field(default_factory=dict)      # other #defines: name -> (params or None, text)
    guards: list = field(default_factory=list)      # #define NAME with no value (include guard)
    opaque: list = field(default_factory=list)      # typedef struct X X;
    aliases: dict = field(default_factory=dict)     # typedef <type> NAME; name -> CType
    structs: dict = field(default_factory=dict)     # name -> tuple of Param (members)
    fntypes: dict = field(default_factory=dict)     # typedef RET (*NAME)(...); name -> FnSig
    functions: list = field(default_factory=list)   # Function, in header order

    def function(self, name):
        for f in self.functions:
            if f.name == name:
                return f
        return None

    def resolve(self, t):
        """`t` with scalar typedefs replaced by what they name (zarr_status: int32_t), and a
        typedef'd function pointer type (zarr_progress_fn) as a CType with `fn`."""
        if t.fn is not None:
            return t
        if t.base in self.aliases:
            a = self.resolve(self.aliases[t.base])
            return CType(a.base, a.const or t.const, a.ptrs + t.ptrs, a.fn)
        if t.base in self.fntypes:
            if t.ptrs:
                raise HeaderError(f"a pointer to the function pointer type {t.base} is not supported")
            return CType(fn=self.fntypes[t.base])
        return t

    def kind(self, base):
        """What a (resolved) base type names: "struct", "opaque", "void" or "scalar"."""
        if base in self.structs:
            return "struct"
        if base in self.opaque:
            return "opaque"
        if base == "void":
            return "void"
        return "scalar"


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _split_top(text, sep):
    """`text` split at `sep` outside parentheses and braces."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def _type(text, where):
    """A CType from `const uint64_t *const *` and the like (no name)."""
    tokens = re.findall(r"\w+|\*|\S", text)
    if not tokens or any(t not in ("*",) and not re.fullmatch(r"\w+", t) for t in tokens):
        raise HeaderError(f"{where}: cannot read the type `{text}`")
    base_words, const, ptrs = [], False, []
    for tok in tokens:
        if tok == "const":
            if ptrs:
                ptrs[-1] = True
            else:
                const = True
        elif tok == "*":
            ptrs.append(False)
        elif ptrs:
            raise HeaderError(f"{where}: cannot read the type `{text}`")
        elif tok in ("struct", "enum", "union", "volatile", "restrict"):
            raise HeaderError(f"{where}: `{tok}` in a type is not supported: `{text}`")
        else:
            base_words.append(tok)
    if not base_words:
        raise HeaderError(f"{where}: no type in `{text}`")
    return CType(" ".join(base_words), const, tuple(ptrs))


def _params(text, where, variadic_ok=False):
    """The parameters in `text`; with `variadic_ok`, and whether they end in `...`."""
    text = " ".join(text.split())
    out, variadic = [], False
    parts = [] if text in ("", "void") else [p.strip() for p in _split_top(text, ",")]
    if parts and parts[-1] == "..." and variadic_ok:
        parts, variadic = parts[:-1], True
    for i, part in enumerate(parts):
        if part == "...":
            raise HeaderError(f"{where}: a variadic function pointer is not supported")
        out.append(_decl(part, f"{where}, parameter {i + 1}"))
    return (tuple(out), variadic) if variadic_ok else tuple(out)


FN_POINTER = re.compile(r"^(.*?)\(\s*\*\s*(?:const\s+)?(\w+)\s*\)\s*\((.*)\)$", re.S)


def _decl(text, where):
    """A Param from `const char *name` or `zarr_status (*name)(params)`."""
    text = " ".join(text.split())
    m = FN_POINTER.match(text)
    if m:
        ret, name, params = m.groups()
        sig = FnSig(_type(ret, where), _params(params, f"{where} ({name})"))
        return Param(CType(fn=sig), name)
    if "[" in text or "(" in text:
        raise HeaderError(f"{where}: arrays and other declarators are not supported: `{text}`")
    m = re.fullmatch(r"(.*?)\s*\b(\w+)", text)
    if not m or not m.group(1).strip():
        raise HeaderError(f"{where}: cannot read the declaration `{text}`")
    return Param(_type(m.group(1), where), m.group(2))


def parse(path=HEADER):
    """The Header of `path` (include/zarr.h by default)."""
    text = _strip_comments(Path(path).read_text())
    header = Header()
    body, skipping = [], 0
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            d = re.match(r"#\s*(\w+)\s*(.*)", s)
            directive, rest = d.group(1), d.group(2).strip()
            if skipping:
                if directive in ("if", "ifdef", "ifndef"):
                    skipping += 1
                elif directive == "endif":
                    skipping -= 1
                continue
            if directive == "ifdef" and rest == "__cplusplus":
                skipping = 1  # extern "C" { ... }
            elif directive == "ifndef" and rest.endswith("_H"):
                pass  # the include guard
            elif directive in ("endif", "include"):
                pass
            elif directive == "define":
                m = re.fullmatch(r"(\w+)(\([^)]*\))?\s*(.*)", rest)
                name, params, value = m.groups()
                if params is None and re.fullmatch(r"-?(?:0x[0-9A-Fa-f]+|\d+)", value):
                    header.constants.append((name, int(value, 0)))
                elif params is None and value == "":
                    header.guards.append(name)
                else:
                    header.macros[name] = (params, value)
            else:
                raise HeaderError(f"unsupported preprocessor line: {s}")
            continue
        if not skipping:
            body.append(line)
    for stmt in _split_top("\n".join(body), ";"):
        stmt = " ".join(stmt.split())
        if not stmt:
            continue
        where = stmt[:80]
        m = re.fullmatch(r"typedef struct (\w+) (\w+)", stmt)
        if m:
            if m.group(1) != m.group(2):
                raise HeaderError(f"typedef struct {m.group(1)} {m.group(2)}: names differ")
            header.opaque.append(m.group(1))
            continue
        m = re.fullmatch(r"typedef struct \{(.*)\} (\w+)", stmt)
        if m:
            name = m.group(2)
            members = [s for s in _split_top(m.group(1), ";") if s.strip()]
            header.structs[name] = tuple(_decl(s, f"struct {name}") for s in members)
            continue
        if stmt.startswith("typedef "):
            p = _decl(stmt[len("typedef "):], where)
            if p.type.fn is not None:
                header.fntypes[p.name] = p.type.fn
            else:
                header.aliases[p.name] = p.type
            continue
        m = re.fullmatch(r"(.*?)\b(\w+)\s*\((.*)\)", stmt, re.S)
        if m and "{" not in stmt and "=" not in stmt:
            ret, name, params = m.groups()
            params, variadic = _params(params, name, variadic_ok=True)
            header.functions.append(Function(name, _type(ret, name), params, variadic))
            continue
        raise HeaderError(f"cannot read this declaration of the header: {stmt[:200]}")
    names = [f.name for f in header.functions]
    if len(set(names)) != len(names):
        raise HeaderError("a function is declared twice")
    if not header.functions:
        raise HeaderError(f"no function found in {path}")
    return header


if __name__ == "__main__":
    h = parse()
    print(f"{len(h.constants)} constants, {len(h.macros)} other macros, {len(h.opaque)} handles, "
          f"{len(h.aliases)} aliases, {len(h.structs)} structs, {len(h.fntypes)} function types, "
          f"{len(h.functions)} functions")
    for f in h.functions:
        print(f)
