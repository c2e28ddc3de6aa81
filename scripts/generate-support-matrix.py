#!/usr/bin/env python3
"""Writes docs/support-matrix.md from what this build of libzarr lists (`zarr version --json`, the same JSON as
`zarr_features()`) and what tests/interop/test_support_matrix.py found when it ran each Zarr v3 feature against
zarr-python, zarrs and TensorStore in both directions (tests/interop/support-results.json).

    python3 scripts/generate-support-matrix.py [--check] [--zarr PATH | --features FILE] [--results FILE]
                                               [--output FILE]

`--zarr` is the `zarr` program to ask (default: target/release/zarr); `--features` reads a saved
`zarr version --json` instead. `--check` writes nothing: it prints the difference and exits with 1 when the
committed page is not what the two sources give (scripts/test.sh runs it, as scripts/generate-fortran.py
--check). Only the Python standard library is needed.
"""
import argparse
import difflib
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "tests" / "interop" / "support-results.json"
OUTPUT = ROOT / "docs" / "support-matrix.md"
ZARR = ROOT / "target" / "release" / "zarr"
PEERS = ("zarr-python", "zarrs", "tensorstore")
PEER_TITLES = {"zarr-python": "zarr-python", "zarrs": "zarrs", "tensorstore": "TensorStore"}
DIRECTIONS = ("peer_writes", "peer_reads")
# the Zarr v3 sections: (zarr_features list, title, what a row is)
SECTIONS = (("data_types", "Zarr v3 data types", "data type"),
            ("codecs", "Zarr v3 codecs", "codec"),
            ("chunk_grids", "Chunk grids", "chunk grid"),
            ("chunk_key_encodings", "Chunk key encodings", "encoding"))
MARKS = {"yes": "✓", "no": "✗", "libzarr": "‼", "differ": "≠"}
WIDTH = 110
SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
REGENERATE = """LIBZARR_SUPPORT_RESULTS_WRITE=1 LIBZARR_PATH=$PWD/target/release/libzarr.so \\
  .venv/zarr3-newest/bin/python -m pytest -q -p no:cacheprovider tests/interop/test_support_matrix.py
python3 scripts/generate-support-matrix.py"""


class Failure(Exception):
    pass


# ---------------------------------------------------------------- inputs
def read_features(args):
    if args.features:
        return json.loads(Path(args.features).read_text(encoding="utf-8"))
    zarr = Path(args.zarr)
    if not zarr.exists():
        raise Failure(f"{zarr} does not exist: build it (cargo build --release), or pass --zarr PATH or "
                      f"--features FILE (a saved `zarr version --json`)")
    try:
        out = subprocess.run([str(zarr), "version", "--json"], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise Failure(f"`{zarr} version --json` failed: {e}") from e
    return json.loads(out)


def rows_of(kind, features, results):
    """The row names of a section: the features libzarr lists (the encodings with both separators), then
    those only the results have."""
    names = []
    for listed in features.get(kind, []):
        names += [f"{listed} /", f"{listed} ."] if kind == "chunk_key_encodings" else [listed]
    return names + sorted(n for n in results.get(kind, {}) if n not in names)


def listed(kind, name, features):
    base = name.split(" ")[0] if kind == "chunk_key_encodings" else name
    return base in features.get(kind, [])


# ---------------------------------------------------------------- cells and notes
def code(text):
    """Markdown code span of any text."""
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def split(result):
    """(mark kind, reason) of a recorded result: "yes", "no: ...", "libzarr: ...", "differ: ..."."""
    if result == "yes":
        return "yes", None
    kind, _, reason = result.partition(": ")
    if kind not in MARKS:
        raise Failure(f"unknown result {result!r} in {RESULTS.relative_to(ROOT)}")
    return kind, reason


def general(reason, name, doc):
    """A reason with the row's own names (the feature, its data type, its codecs) written <feature>, so that the
    same refusal of many features is one note."""
    names = {name.split(" ")[0]}
    dtype = doc.get("data_type")
    names.add(dtype if isinstance(dtype, str) else (dtype or {}).get("name", ""))
    names.discard("")
    for n in sorted(names, key=len, reverse=True):
        reason = re.sub(rf"(?<![\w.*-]){re.escape(n)}(?![\w*-])", "<feature>", reason)
    return re.sub(r"codecs\[\d+\]", "codecs[…]", reason)


class Notes:
    """The numbered notes of one table: one per reason, naming who gave it."""

    def __init__(self):
        self.numbers, self.whos = {}, {}

    def number(self, who, kind, reason):
        key = (kind, reason)
        if key not in self.numbers:
            self.numbers[key], self.whos[key] = len(self.numbers) + 1, []
        if who not in self.whos[key]:
            self.whos[key].append(who)
        return self.numbers[key]

    def lines(self):
        out = []
        for (kind, reason), n in self.numbers.items():
            whos = " and ".join(self.whos[(kind, reason)])
            out.append(f"{n}. {whos}{' (values differ)' if kind == 'differ' else ''}: {code(reason)}")
        return out


def mark(result, who, name, doc, notes):
    kind, reason = split(result)
    if kind == "yes":
        return MARKS["yes"]
    n = notes.number(who, kind, general(reason, name, doc))
    return MARKS[kind] + str(n).translate(SUPERSCRIPT)


def short_type(data_type):
    if isinstance(data_type, str):
        return data_type
    name, conf = data_type["name"], data_type.get("configuration", {})
    if "fields" in conf:
        fields = [f"{f['name']}: {f['data_type']}" if isinstance(f, dict) else f"{f[0]}: {f[1]}"
                  for f in conf["fields"]]
        return f"{name}({', '.join(fields)})"
    return f"{name}({', '.join(f'{k}={v}' for k, v in sorted(conf.items()))})"


def short_codecs(codecs):
    out = []
    for c in codecs:
        conf = c.get("configuration") or {}
        if c["name"] == "bytes" and "endian" in conf:
            out.append(f"bytes({conf['endian']})")
        elif c["name"] == "sharding_indexed":
            out.append(f"sharding_indexed({' → '.join(short_codecs(conf['codecs']))})")
        else:
            out.append(c["name"])
    return out


def tested_as(doc):
    """What the case was, in short: data type, codecs, and the grid and chunk keys when not the usual."""
    text = f"{code(short_type(doc['data_type']))}: {' → '.join(short_codecs(doc['codecs']))}"
    grid = doc["chunk_grid"]
    if grid["name"] != "regular":
        text += f"; {grid['name']} {json.dumps(grid['configuration'].get('chunk_shapes'))}"
    key = doc["chunk_key_encoding"]
    sep = (key.get("configuration") or {}).get("separator")
    if (key["name"], sep) != ("default", "/"):
        text += f"; keys {key['name']} {code(sep)}"
    return text


# ---------------------------------------------------------------- the page
def table(kind, row_title, features, results, peers):
    notes = Notes()
    head = [row_title, "libzarr"] + [f"{peers.get(p, p)}<br>writes · reads" for p in PEERS] + ["tested as"]
    lines = ["| " + " | ".join(head) + " |", "|---|:-:|" + ":-:|" * len(PEERS) + "---|"]
    counts = {k: 0 for k in MARKS}
    rows = results.get(kind, {})
    for name in rows_of(kind, features, results):
        row = rows.get(name)
        if row is None:
            cells = ["✓" if listed(kind, name, features) else "–"] + [""] * len(PEERS) + ["not tested: regenerate"]
            lines.append(f"| {code(name)} | " + " | ".join(cells) + " |")
            continue
        doc = row["zarr.json"]
        own = mark(row["libzarr"], "libzarr", name, doc, notes)
        libzarr = own if listed(kind, name, features) else f"not listed, {own}"
        cells = [code(name), libzarr]
        for peer in PEERS:
            marks = []
            for direction in DIRECTIONS:
                who = PEER_TITLES[peer]
                if peer == "zarrs" and row[peer][direction] == row["zarr-python"][direction] != "yes":
                    who = "zarrs (through zarr-python, which parses the document for it)"
                marks.append(mark(row[peer][direction], who, name, doc, notes))
                counts[split(row[peer][direction])[0]] += 1
            cells.append(" ".join(marks))
        lines.append("| " + " | ".join(cells + [tested_as(doc)]) + " |")
    if notes.numbers:
        lines += ["", "Notes:", ""] + notes.lines()
    return lines, counts, len(rows)


def page(features, data):
    results, peers = data["results"], data["peers"]
    sections, totals, nrows = [], {k: 0 for k in MARKS}, 0
    for kind, title, row_title in SECTIONS:
        lines, counts, n = table(kind, row_title, features, results, peers)
        nrows += n
        for k, v in counts.items():
            totals[k] += v
        sections.append((title, lines))
    names = [peers.get(p, p) for p in PEERS]
    peer_list = ", ".join(names[:-1]) + " and " + names[-1]
    summary = (f"{nrows} features × {len(PEERS)} peers × 2 directions = {sum(totals.values())} results: "
               f"{totals['yes']} ✓, {totals['no']} ✗, {totals['libzarr']} ‼, {totals['differ']} ≠.")
    out = [
        "# Support matrix",
        "",
        "<!-- Generated by scripts/generate-support-matrix.py from `zarr version --json` and",
        "     tests/interop/support-results.json: do not edit, regenerate (below). -->",
        "",
        f"What this build of libzarr reads and writes, and for every Zarr v3 feature whether {peer_list} exchange "
        "arrays with it, in both directions.",
        "",
        "How it is made: libzarr's own list is `zarr_features()` (`zarr version --json`). For each Zarr v3 "
        "feature on it, `tests/interop/test_support_matrix.py` takes one small array (7 × 5 in 4 × 3 chunks, "
        "seeded values; its document is in the results file), has each peer write it and libzarr read it, and "
        "libzarr write it and the peer read it, and records whether the values are the same in "
        "`tests/interop/support-results.json`. The test runs with the interoperability tests (the zarr3-newest "
        "flavour) and fails when its results differ from that file; `scripts/generate-support-matrix.py "
        "--check` fails when this page differs from what the file and the built `zarr` give. Neither can go "
        "stale unnoticed. What each feature means in libzarr: [formats.md](formats.md). To regenerate both after "
        "a change:",
        "",
        "```sh",
        REGENERATE,
        "```",
        "",
        "Reading the tables: **libzarr** is ✓ when libzarr lists the feature and reads back what it wrote. Each "
        "peer cell has two marks: the peer writes and libzarr reads, then libzarr writes and the peer reads. "
        "✓ the same values; ✗ the peer refuses it (or misreads its own array); ‼ libzarr fails (a libzarr bug); "
        "≠ both work but read other values. The numbered notes under each table give the reason (the "
        "exception's class and the gist of its message; `<feature>` stands for the row's own name).",
        "",
        "How the peers are driven: zarr-python takes the document (`ArrayV3Metadata.from_dict`) and writes its "
        "own serialisation of it. zarrs runs through zarrs-python's codec pipeline in strict mode "
        "(`codec_pipeline.strict`: it never falls back to zarr-python's codecs, and the test checks that the "
        "pipeline really is zarrs'), so zarr-python parses the document first: what zarr-python does not know "
        "is refused for zarrs too, even where the zarrs crate has it (`tests/small_types.rs` reads the small "
        "types, `bfloat16` to `uint4`, from arrays the crate wrote, and writes the same chunk files). TensorStore "
        "(`zarr3` driver) creates the "
        "array from the document and writes its own `zarr.json`; records are opened one field at a time (its "
        "`field`). Rectilinear grids are experimental in zarr-python: the test turns on "
        "`array.rectilinear_chunks`. zarr-python's `cast_value` is the "
        f"{peers.get('cast_value', 'cast-value')} plugin's (zarr-python's own needs `cast-value-rs`, not "
        "installed).",
        "",
        summary,
    ]
    for title, lines in sections:
        out += ["", f"## {title}", ""]
        if title == "Zarr v3 data types":
            out += ["`r*` stands for the raw-bits types `r8`, `r16`, …; it is tested as `r16`.", ""]
        out += lines
    out += ["", "## Zarr v2 and stores", "",
            "What libzarr lists besides Zarr v3 (`zarr_features()`); the peers are not run for these here. "
            "[tests/interop/README.md](../tests/interop/README.md) describes the interoperability tests of Zarr v2 "
            "(zarr-python 2.18, 3.1 and 3.4 with numcodecs) and of the stores.", ""]
    for key, title in (("zarr_formats", "Zarr formats"), ("compressors", "Compressors (numcodecs ids)"),
                       ("blosc_compressors", "Blosc compressors (`cname`)"),
                       ("filters", "Filters (numcodecs ids, in `filters`)"),
                       ("object_codecs", "Object codecs (`|O` arrays)"),
                       ("stores", "Stores (this build)")):
        values = features.get(key, [])
        out.append(f"- **{title}:** " + (", ".join(code(str(v)) for v in values) if values else "none"))
    return "\n".join(wrap(line) for line in out) + "\n"


def wrap(line):
    """Prose at WIDTH columns (tables, code and list items of the v2 section stay one line each)."""
    if line.startswith(("|", "```", "- ", "<!--", "     ")) or len(line) <= WIDTH or "\n" in line:
        return line
    indent = " " * (line.index(" ") + 1) if re.match(r"\d+\. ", line) else ""
    return textwrap.fill(line, WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed page instead of writing")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--zarr", default=str(ZARR), help="the zarr program (default: target/release/zarr)")
    source.add_argument("--features", help="a saved `zarr version --json` to read instead")
    parser.add_argument("--results", default=str(RESULTS), help="default: tests/interop/support-results.json")
    parser.add_argument("--output", default=str(OUTPUT), help="default: docs/support-matrix.md")
    args = parser.parse_args()
    try:
        features = read_features(args)
        data = json.loads(Path(args.results).read_text(encoding="utf-8"))
        text = page(features, data)
    except (Failure, OSError, ValueError, KeyError) as e:
        sys.exit(f"scripts/generate-support-matrix.py: {e}")
    output = Path(args.output)
    shown = output.resolve().relative_to(ROOT) if output.resolve().is_relative_to(ROOT) else output
    if args.check:
        old = output.read_text(encoding="utf-8") if output.exists() else ""
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                       f"{shown} (committed)", "(generated)"))
            sys.exit(f"stale: {shown} (run scripts/generate-support-matrix.py; if the results changed, "
                     f"regenerate them first: see the top of that page)")
        return
    output.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
