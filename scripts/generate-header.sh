#!/usr/bin/env bash
# Regenerates include/zarr.h from the Rust sources with cbindgen.
set -euo pipefail
cd "$(dirname "$0")/.."
ZARR_UPDATE_HEADER=1 cargo test --quiet --test header
echo "include/zarr.h regenerated"
