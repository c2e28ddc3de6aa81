#!/usr/bin/env bash
# Runs the benchmark suite (bench/README.md): builds libzarr and the bench crate in release
# mode, installs zarr-python 3, tensorstore and matplotlib into .venv/bench on first use, writes
# the data once into bench/data/, times every implementation and writes bench/results/.
# Arguments go to bench/run.py, e.g. `scripts/bench.sh --reps 3 --impls libzarr,zarrs`.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release
cargo build --release --manifest-path bench/Cargo.toml

source scripts/venv.sh
venv bench bench/requirements.txt

.venv/bench/bin/python bench/run.py "$@"
