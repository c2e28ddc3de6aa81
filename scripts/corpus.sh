#!/usr/bin/env bash
# Writes the real-world corpus: Zarr stores written by real tools, each with what the tool itself
# reads back beside it (STORE.expected.json), for tests/interop/test_realworld_corpus.py.
#
#   scripts/corpus.sh [OUTDIR]    (default target/corpus)
#
# One directory per writer under OUTDIR, each written by tests/corpus/write_*.py:
#   xarray-zarr2/  xarray 2025.6.1 + zarr-python 2.18 (.venv/corpus-xarray-zarr2)
#   xarray-zarr3/  xarray + zarr-python 3, v3 and v2 (.venv/corpus-xarray-zarr3)
#   zarr26/        zarr-python 2.6.1's NestedDirectoryStore (.venv/corpus-zarr26)
#   gdal/          Debian's gdal-bin: gdal_translate -of Zarr (Debian's Python with python3-gdal)
#   netcdf/        Debian's netcdf-bin: ncgen, nccopy (Debian's Python with python3-netcdf4)
#   tensorstore/   TensorStore's zarr and zarr3 drivers (.venv/corpus-tensorstore)
# A writer whose directory is complete (its stamp names the same writer script, helper and
# requirements) is skipped, so a second run only checks. The virtual environments are made once
# (scripts/venv.sh) and the Debian packages installed when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/corpus}
source scripts/venv.sh

packages="gdal-bin python3-gdal netcdf-bin python3-netcdf4"
# shellcheck disable=SC2086 # the package list is split on purpose
if ! dpkg -s $packages >/dev/null 2>&1; then
  apt-get install -y -qq --no-install-recommends $packages >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends $packages; } >/dev/null
fi

# writer NAME SCRIPT PYTHON [REQUIREMENTS]: runs tests/corpus/SCRIPT with PYTHON (of .venv/corpus-NAME,
# made from REQUIREMENTS, when given) into OUTDIR/NAME unless that is complete for the same sources.
writer() {
  local name=$1 script=$2 python=$3 requirements=${4:-} dir="$out/$1" stamp start
  stamp=$(cat "tests/corpus/$script" tests/corpus/expected.py ${requirements:+"$requirements"} | sha1sum | cut -c1-12)
  if [ -f "$dir/.complete-$stamp" ]; then
    echo "   $name: up to date"
    return
  fi
  [ -n "$requirements" ] && venv "corpus-$name" "$requirements"
  start=$SECONDS
  rm -rf "$dir" && mkdir -p "$dir"
  "$python" "tests/corpus/$script" "$dir"
  touch "$dir/.complete-$stamp"
  echo "   $name: written in $((SECONDS - start)) s"
}

writer xarray-zarr2 write_xarray.py .venv/corpus-xarray-zarr2/bin/python tests/corpus/requirements-xarray-zarr2.txt
writer xarray-zarr3 write_xarray.py .venv/corpus-xarray-zarr3/bin/python tests/corpus/requirements-xarray-zarr3.txt
writer zarr26 write_zarr26.py .venv/corpus-zarr26/bin/python tests/corpus/requirements-zarr26.txt
writer tensorstore write_tensorstore.py .venv/corpus-tensorstore/bin/python tests/corpus/requirements-tensorstore.txt
writer gdal write_gdal.py /usr/bin/python3
writer netcdf write_netcdf.py /usr/bin/python3
echo "   corpus: $(find "$out" -name '*.expected.json' | wc -l) stores in $out"
