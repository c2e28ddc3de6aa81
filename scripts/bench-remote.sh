#!/usr/bin/env bash
# Runs the remote benchmark (bench/README.md): libzarr, tensorstore and zarr-python 3 reading
# and writing a 256 MiB array in an S3 bucket (SeaweedFS on 127.0.0.1, started here as the
# tests start it, and stopped on exit), straight and through scripts/http_proxy.py adding
# 20 ms per request. Builds libzarr and the bench crate in release mode, installs .venv/bench,
# writes bench/results/REMOTE.md and remote.json. Arguments go to bench/remote.py, e.g.
# `scripts/bench-remote.sh --reps 1 --modes latency --ops open,read_boxes`.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release
cargo build --release --manifest-path bench/Cargo.toml

source scripts/venv.sh
venv bench bench/requirements.txt
source scripts/servers.sh
start_servers "$PWD/target/bench-remote-servers"

.venv/bench/bin/python bench/remote.py "$@"
