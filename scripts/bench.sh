#!/usr/bin/env bash
# Runs the benchmark suite (bench/README.md): builds libzarr and the bench crate in release
# mode, installs zarr-python 3, tensorstore and matplotlib into .venv/bench on first use (and the
# newest zarr-python 3 into .venv/bench-newest), writes
# the data once into bench/data/, times every implementation and writes bench/results/.
# Arguments go to bench/run.py, e.g. `scripts/bench.sh --reps 3 --impls libzarr,zarrs`.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release
cargo build --release --manifest-path bench/Cargo.toml

source scripts/venv.sh
venv bench bench/requirements.txt
# The newest zarr-python 3 (bench/requirements-newest.txt: 3.2 and later have rectilinear chunk
# grids; 3.4 needs Python 3.12 or later, pyenv's newest 3.13 or 3.12 as scripts/test.sh picks it)
# writes the rectilinear variant and runs as the zarr-python-newest worker.
newest_python=$(ls -d /root/.pyenv/versions/3.1[32]*/bin/python3 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$newest_python" ]; then
  echo "error: the rectilinear variant needs the newest zarr-python 3, which needs Python 3.12 or" \
    "later from pyenv, but neither /root/.pyenv/versions/3.13* nor /root/.pyenv/versions/3.12* is there" >&2
  exit 1
fi
venv bench-newest bench/requirements-newest.txt "$newest_python"

.venv/bench/bin/python bench/run.py "$@"
