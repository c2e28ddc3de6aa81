"""Shared by the corpus writers (tests/corpus/write_*.py, run by scripts/corpus.sh, each in its own Python):
writes `<store>.expected.json` next to a store, holding what the writer itself reads back from it.

Format (one JSON document, NaN/Infinity as Python's json writes them):
  {"writer": ..., "versions": {...}, "store": "<directory name beside this file>", "zarr_format": 2 or 3,
   "consolidated": bool, "budget_array": "<path of the array the request budget test opens>",
   "groups": [{"path", "attributes", "ignored_attributes"}] (none when the writer writes no group documents),
   "arrays": [{"path", "shape", "dtype" (numpy str), "dimension_names" (list, names or null; null when
               the writer reports none), "attributes", "ignored_attributes" (names in the stored
               attributes that the writer consumes itself and does not report), "values"}]}
`values` is the array as nested lists: numbers as they are, text as str, fixed-length bytes as latin-1 text.
Only NumPy and the standard library are used here.
"""
import json
import os

import numpy as np


def plain(x):
    """A JSON-able copy of an attribute value (NumPy scalars and arrays, bytes)."""
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return plain(x.tolist())
    if isinstance(x, np.generic):
        return plain(x.item())
    if isinstance(x, bytes):
        return x.decode("utf-8")
    return x


def values(a):
    """The array's values as nested lists (see the module docstring)."""
    a = np.asarray(a)
    kind = a.dtype.kind
    if kind in "biuf":
        return a.tolist()
    if kind in "UOT":
        return np.vectorize(str, otypes=[object])(a).tolist() if a.size else a.tolist()
    if kind == "S":
        return np.vectorize(lambda b: b.decode("latin-1"), otypes=[object])(a).tolist() if a.size else []
    if kind in "Mm":
        return a.view("i8").tolist()
    raise TypeError(f"no JSON form for dtype {a.dtype}")


def array_entry(path, data, dtype, dims, attrs, ignored=()):
    data = np.asarray(data)
    dtype = np.dtype(dtype)
    # Variable-length text: "|O" as zarr-python 2 names it (zarr-python 3 reads NumPy's StringDType).
    dtype = "|O" if dtype.kind in "OT" else dtype.str
    return {"path": path, "shape": list(data.shape), "dtype": dtype,
            "dimension_names": None if dims is None else [d if d else None for d in dims],
            "attributes": plain(dict(attrs)), "ignored_attributes": sorted(ignored), "values": values(data)}


def write(store_dir, doc):
    """Writes `<store_dir>.expected.json` (the store's directory name recorded in it)."""
    store_dir = os.path.normpath(store_dir)
    doc = dict(doc, store=os.path.basename(store_dir))
    doc["arrays"] = sorted(doc["arrays"], key=lambda a: a["path"])
    doc["groups"] = sorted(({"ignored_attributes": [], **g} for g in doc.get("groups", [])),
                           key=lambda g: g["path"])
    paths = {a["path"] for a in doc["arrays"]}
    if doc.get("budget_array") not in paths:
        raise ValueError(f"budget_array {doc.get('budget_array')!r} is not one of the arrays {sorted(paths)}")
    tmp = store_dir + ".expected.json.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
    os.replace(tmp, store_dir + ".expected.json")
