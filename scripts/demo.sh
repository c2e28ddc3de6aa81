#!/usr/bin/env bash
# Builds libzarr, compiles examples/demo.c with plain gcc (no CMake) and runs it on a fresh
# store under target/. If a virtual environment under .venv/ has zarr-python (scripts/test.sh
# makes .venv/zarr2 and .venv/zarr3), shows what zarr-python reads back.
# Needs only Rust (cargo), gcc and python3 (g++, for blosc's snappy, is installed with apt when
# missing). Works from any directory.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/ensure-cxx.sh
scripts/ensure-zfp-tools.sh
echo "== cargo build --release"
cargo build --release

echo "== compile examples/demo.c"
gcc -std=c11 -Wall -Iinclude examples/demo.c -Ltarget/release -lzarr \
    -Wl,-rpath,"$PWD/target/release" -o target/zarr_demo

echo "== run target/zarr_demo target/demo.zarr"
rm -rf target/demo.zarr
target/zarr_demo target/demo.zarr

python=""
for candidate in .venv/bin/python .venv/zarr3/bin/python .venv/zarr2/bin/python; do
    if [ -x "$candidate" ] && "$candidate" -c 'import zarr' 2>/dev/null; then
        python=$candidate
        break
    fi
done

if [ -n "$python" ]; then
    echo "== what zarr-python sees ($python)"
    "$python" - target/demo.zarr <<'PY'
import sys
import numpy as np
import zarr

root = zarr.open_group(sys.argv[1], mode="r")
t = root["measurements/temperature"]
print("zarr-python", zarr.__version__)
print("measurements attrs:", dict(root["measurements"].attrs))
print("temperature:", t.shape, t.chunks, t.dtype, "compressor/codecs:",
      getattr(t, "compressors", None) or getattr(t, "compressor", None))
print("box [898:902, 500:503]:")
print(np.asarray(t[898:902, 500:503]))
PY
fi
