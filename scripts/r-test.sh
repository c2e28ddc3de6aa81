#!/usr/bin/env bash
# Builds the R demo (bindings/r/zarr.c) with R CMD SHLIB against target/release/libzarr.so and
# runs bindings/r/test.R. Needs R (Debian's r-base-core; scripts/test.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/build/r
rm -rf "$work"
mkdir -p "$work"
cp bindings/r/zarr.c "$work/"
(cd "$work" && PKG_CPPFLAGS="-I$root/include" \
  PKG_LIBS="-L$root/target/release -lzarr -Wl,-rpath,$root/target/release" \
  R CMD SHLIB -o zarr_r.so zarr.c >/dev/null)
target/release/zarr create "$work/tool.zarr" i --metadata \
  '{"shape": [2, 5], "chunks": [2, 2], "dtype": "<i2", "fill_value": 7}' >/dev/null
Rscript bindings/r/test.R "$work/zarr_r.so" bindings/r/zarr.R "$work"
