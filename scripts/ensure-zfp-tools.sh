#!/usr/bin/env bash
# Installs with apt what building zfp needs (the default cargo feature `zfp`: crate zfp-sys builds
# the zfp C library with cmake and binds its header with bindgen, which loads libclang) when the
# machine lacks it: Debian's cmake and libclang-dev. Used by .ci/run, scripts/demo.sh and
# scripts/test.sh before their first cargo build.
set -euo pipefail
packages=()
command -v cmake >/dev/null 2>&1 || packages+=(cmake)
dpkg -s libclang-dev >/dev/null 2>&1 || packages+=(libclang-dev)
if [ ${#packages[@]} -gt 0 ]; then
  echo "== installing ${packages[*]} (zfp's build)"
  apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${packages[@]}"; } >/dev/null
fi
