#!/usr/bin/env bash
# Installs a C++ compiler (Debian's g++) with apt when none is on PATH. blosc's snappy (the
# default cargo feature blosc-snappy) is C++, so building libzarr needs one; a machine with
# only gcc gets g++ here. Used by scripts/demo.sh and scripts/test.sh.
set -euo pipefail
if ! command -v c++ >/dev/null 2>&1; then
  echo "== installing g++ (blosc's snappy is C++)"
  apt-get install -y -qq --no-install-recommends g++ >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends g++; } >/dev/null
fi
