"""Seeds written by zarr-python for the fuzz corpora (committed in fuzz/corpus/; run again only
to refresh them). Run with a zarr-python 2 and a zarr-python 3 environment:

    .venv/zarr2/bin/python fuzz/seeds/python_seeds.py
    .venv/zarr3/bin/python fuzz/seeds/python_seeds.py

It writes fuzz/corpus/zip_archive/py<N>-*.zip (archives zarr-python's ZipStore wrote, and one
with deflated members), fuzz/corpus/store_image/py<N>-* (directory stores packed as the
store_image target reads them) and fuzz/corpus/metadata/py<N>-* (their metadata documents).
"""

import os
import shutil
import sys
import tempfile
import zipfile

import numpy as np
import zarr

MAJOR = int(zarr.__version__.split(".")[0])
HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "corpus")
MEMBER = b"***NEWFILE***:"


def out(target, name, data):
    os.makedirs(os.path.join(CORPUS, target), exist_ok=True)
    with open(os.path.join(CORPUS, target, f"py{MAJOR}-{name}"), "wb") as f:
        f.write(data)


def fill(root, fmt=None):
    """A small hierarchy: a group with attributes, arrays of a few types and codecs."""
    kw = {} if fmt is None else {"zarr_format": fmt}
    g = root.create_group("g", **kw) if MAJOR == 2 else root.create_group("g")
    g.attrs["title"] = "seed"
    a = g.create_dataset("a", shape=(10, 7), chunks=(4, 3), dtype="<i4", fill_value=5) if MAJOR == 2 \
        else g.create_array("a", shape=(10, 7), chunks=(4, 3), dtype="<i4", fill_value=5)
    a[:] = np.arange(70, dtype="<i4").reshape(10, 7)
    a.attrs["units"] = "m"
    if MAJOR == 2:
        from numcodecs import Blosc, Zstd, VLenUTF8
        b = root.create_dataset("b", shape=(20,), chunks=(8,), dtype=">f8",
                                compressor=Blosc(cname="lz4", shuffle=Blosc.BITSHUFFLE))
        b[:] = np.linspace(0, 1, 20)
        s = root.create_dataset("s", shape=(5,), chunks=(2,), dtype=object,
                                object_codec=VLenUTF8(), compressor=Zstd(level=1))
        s[:] = np.array(["a", "bb", "", "dddd", "é"], dtype=object)
    else:
        b = root.create_array("b", shape=(20,), chunks=(8,), dtype=">f8")
        b[:] = np.linspace(0, 1, 20)
        if fmt != 2:
            sh = root.create_array("sh", shape=(8, 6), chunks=(2, 3), shards=(4, 6),
                                   dtype="uint16", fill_value=3)
            sh[:5] = np.arange(30, dtype="uint16").reshape(5, 6)
        s = root.create_array("s", shape=(5,), chunks=(2,), dtype=str)
        s[:] = ["a", "bb", "", "dddd", "é"]


def pack(directory):
    data = b""
    for base, _, files in sorted(os.walk(directory)):
        for name in sorted(files):
            path = os.path.join(base, name)
            key = os.path.relpath(path, directory)
            with open(path, "rb") as f:
                data += MEMBER + key.encode() + b"\n" + f.read()
    return data


def main():
    tmp = tempfile.mkdtemp()
    try:
        formats = [None] if MAJOR == 2 else [2, 3]
        for fmt in formats:
            tag = "" if fmt is None else f"v{fmt}-"
            # A zip written by ZipStore.
            path = os.path.join(tmp, f"{tag}store.zip")
            if MAJOR == 2:
                store = zarr.ZipStore(path, mode="w")
                root = zarr.group(store=store)
                fill(root)
                zarr.consolidate_metadata(store)
                store.close()
            else:
                store = zarr.storage.ZipStore(path, mode="w")
                root = zarr.group(store=store, zarr_format=fmt)
                fill(root, fmt)
                zarr.consolidate_metadata(store)
                store.close()
            with open(path, "rb") as f:
                out("zip_archive", f"{tag}zipstore.zip", f.read())
            # A directory store, packed, and the same members in a deflated zip.
            directory = os.path.join(tmp, f"{tag}dir")
            root = zarr.open_group(directory, mode="w", **({} if fmt is None else {"zarr_format": fmt}))
            fill(root, fmt)
            zarr.consolidate_metadata(directory)
            out("store_image", f"{tag}hierarchy", pack(directory))
            deflated = os.path.join(tmp, f"{tag}deflated.zip")
            with zipfile.ZipFile(deflated, "w", compression=zipfile.ZIP_DEFLATED) as z:
                for base, _, files in sorted(os.walk(directory)):
                    for name in sorted(files):
                        full = os.path.join(base, name)
                        z.write(full, os.path.relpath(full, directory))
            with open(deflated, "rb") as f:
                out("zip_archive", f"{tag}deflated.zip", f.read())
            # Metadata documents, with the pick byte of the metadata target.
            for rel, pick in [("g/a/.zarray", 0), ("g/a/zarr.json", 1), ("sh/zarr.json", 1),
                              ("s/.zarray", 0), ("s/zarr.json", 1), ("g/.zgroup", 2),
                              ("g/a/.zattrs", 3), (".zmetadata", 4), ("zarr.json", 5)]:
                full = os.path.join(directory, rel)
                if os.path.exists(full):
                    with open(full, "rb") as f:
                        out("metadata", f"{tag}{rel.replace('/', '_')}", bytes([pick]) + f.read())
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
