#!/usr/bin/env bash
# Installs libzarr with CMake into a fresh prefix and builds tests/consumer/app.c against the
# installed tree five ways, running each program without LD_LIBRARY_PATH: the CMake package
# (Zarr::zarr, then Zarr::zarr_static), pkg-config with the shared library (RPATH from the
# .pc's libdir), pkg-config with the static one, and a Makefile (tests/consumer/Makefile)
# using pkg-config; then tests/consumer/codecs.c with the
# system's codec libraries, against the static and the shared library; then the Fortran
# program tests/consumer/fortran/app.f90, with the CMake package and by hand; then, where
# libzarr_mpi was installed, tests/consumer/mpi/app.c on two ranks with the CMake package's
# `mpi` component and with mpicc and pkg-config, and tests/consumer/mpi-fortran/app.f90 with
# the package's Zarr::zarr_mpi_fortran and with mpif90 by hand (ZARR_REQUIRE_MPI set: it must be). Checks what each
# program links (NEEDED), the installed files, and that the shared and static libraries
# define zarr_* functions alone. Also runs the installed `zarr` tool, loads the installed GDAL
# plugin into gdalinfo, and builds libzarr as a
# subproject (add_subdirectory) of tests/consumer/subproject, which must build no libzarr
# tests. Needs cmake (scripts/test.sh puts its own first on the PATH), pkg-config, a C
# compiler, gfortran and the development files of zlib, zstd, lz4, bzip2, liblzma and c-blosc
# (scripts/test.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/build/consumer
rm -rf "$work"
mkdir -p "$work"

# Runs a command, showing its output only when it fails.
quiet() { local out; out=$("$@" 2>&1) || { echo "$out" >&2; return 1; }; }

echo "-- install into $work/prefix"
quiet cmake -S . -B "$work/libzarr" -DCMAKE_BUILD_TYPE=Release -DZARR_BUILD_TESTS=OFF
quiet cmake --build "$work/libzarr"
quiet cmake --install "$work/libzarr" --prefix "$work/prefix"
prefix=$work/prefix
for file in include/zarr.h include/zarr.hpp include/zarr.mod lib/libzarr_fortran.a \
  lib/gdalplugins/gdal_LIBZARR.so share/doc/libzarr/LICENSE; do
  [ -f "$prefix/$file" ] || { echo "the install lacks $file" >&2; exit 1; }
done
# The shared library exports the C API alone (build.rs hides what dependencies export).
others=$(nm -D --defined-only "$prefix/lib/libzarr.so.0.1.0" | awk '$3 !~ /^zarr_/ { print $3 }')
[ -z "$others" ] || { echo "libzarr.so exports more than zarr_*: $others" >&2; exit 1; }
echo "exports: $(nm -D --defined-only "$prefix/lib/libzarr.so.0.1.0" | grep -c ' zarr_') zarr_* functions, nothing else"
# So does the static library (CMakeLists.txt makes every other symbol local).
others=$(readelf -sW "$prefix/lib/libzarr.a" \
  | awk '($5 == "GLOBAL" || $5 == "WEAK") && $7 != "UND" && $8 !~ /^zarr_/ { print $8 }')
[ -z "$others" ] || { echo "libzarr.a defines more than zarr_*: $(echo $others | head -c 2000)" >&2; exit 1; }
echo "libzarr.a: $(readelf -sW "$prefix/lib/libzarr.a" | awk '$5 == "GLOBAL" && $7 != "UND"' | grep -c ' zarr_') zarr_* functions, nothing else"
# The installed GDAL plugin loads, and finds the installed libzarr through its RPATH.
formats=$(env -u LD_LIBRARY_PATH GDAL_DRIVER_PATH="$prefix/lib/gdalplugins" gdalinfo --formats)
grep -q "LIBZARR -raster-" <<<"$formats" || { echo "the installed GDAL plugin does not load" >&2; exit 1; }
echo "GDAL plugin: $(grep LIBZARR <<<"$formats" | sed 's/^ *//')"
version=$(env -u LD_LIBRARY_PATH "$prefix/bin/zarr" --version)
echo "installed tool: $version"
[ "$version" = "zarr $(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)" ]

needs() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
check() { # check NAME PROGRAM EXPECTED-LIBZARR-NEEDED(yes|no)
  local out
  out=$(env -u LD_LIBRARY_PATH "$2") || { echo "$1: the program failed: $out" >&2; exit 1; }
  case "$(needs "$2")" in
    *libzarr.so.*) [ "$3" = yes ] || { echo "$1: links libzarr.so: $(needs "$2")" >&2; exit 1; } ;;
    *) [ "$3" = no ] || { echo "$1: does not link libzarr.so: $(needs "$2")" >&2; exit 1; } ;;
  esac
  echo "$1: $out (NEEDED: $(needs "$2"))"
}

for kind in shared static; do
  static=OFF; [ $kind = static ] && static=ON
  quiet cmake -S tests/consumer -B "$work/cmake-$kind" -DCMAKE_PREFIX_PATH="$prefix" \
    -DZARR_STATIC=$static
  quiet cmake --build "$work/cmake-$kind"
  check "CMake package, $kind" "$work/cmake-$kind/app" $([ $kind = shared ] && echo yes || echo no)
done

# (PKG_CONFIG_PATH is not exported: cargo would rebuild crates whose build scripts read it.)
pc() { PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config "$@"; }
libdir=$(pc --variable=libdir zarr)
cc -std=c11 -Wall -Wextra -Werror tests/consumer/app.c $(pc --cflags --libs zarr) \
  -Wl,-rpath,"$libdir" -o "$work/pc-shared"
check "pkg-config, shared" "$work/pc-shared" yes
cc -std=c11 -Wall -Wextra -Werror tests/consumer/app.c $(pc --cflags zarr) \
  -Wl,-Bstatic $(pc --libs zarr) -Wl,-Bdynamic $(pc --libs --static zarr | sed 's/-lzarr//') \
  -o "$work/pc-static"
check "pkg-config, static" "$work/pc-static" no
PKG_CONFIG_PATH=$prefix/lib/pkgconfig quiet make -C tests/consumer OUT="$work"
check "Makefile with pkg-config" "$work/app-make" yes

# With the system's codec libraries linked after libzarr, the program gets those and libzarr
# keeps its own (tests/consumer/codecs.c), statically and dynamically.
system_codecs="-lz -lzstd -llz4 -lbz2 -llzma -lblosc"
cc -std=c11 -Wall -Wextra -Werror -fPIE -pie tests/consumer/codecs.c $(pc --cflags zarr) \
  -Wl,-Bstatic $(pc --libs zarr) -Wl,-Bdynamic $system_codecs \
  $(pc --libs --static zarr | sed 's/-lzarr//') -o "$work/codecs-static"
check "system codecs, static" "$work/codecs-static" no
cc -std=c11 -Wall -Wextra -Werror -fPIE -pie tests/consumer/codecs.c $(pc --cflags --libs zarr) \
  $system_codecs -ldl -Wl,-rpath,"$libdir" -o "$work/codecs-shared"
check "system codecs, shared" "$work/codecs-shared" yes

# Fortran: the CMake package's component, and gfortran by hand (the module is in include/).
quiet cmake -S tests/consumer/fortran -B "$work/fortran" -DCMAKE_PREFIX_PATH="$prefix"
quiet cmake --build "$work/fortran"
check "CMake package, Fortran" "$work/fortran/app" yes
gfortran -Wall -Werror tests/consumer/fortran/app.f90 -I"$prefix/include" -L"$libdir" \
  -lzarr_fortran -lzarr -Wl,-rpath,"$libdir" -o "$work/fortran-by-hand"
check "gfortran by hand" "$work/fortran-by-hand" yes

# MPI: the CMake package's component, and mpicc with pkg-config, run on two ranks (OpenMPI is
# told to allow root and more ranks than cores; other MPIs ignore the variables); then the
# Fortran module, with the CMake package and by hand with mpif90.
if [ -e "$libdir/libzarr_mpi.so" ]; then
  run_mpi() { # run_mpi NAME PROGRAM STORE: rank 0 must print "ok"
    local out
    out=$(cd "$work" && env -u LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 \
      OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
      mpiexec -n 2 "$2" "$3" 2>"$work/mpi.err") ||
      { echo "$1: the program failed: $out $(cat "$work/mpi.err")" >&2; exit 1; }
    [ "$out" = ok ] || { echo "$1: $out" >&2; exit 1; }
    echo "$1: $out"
  }
  quiet cmake -S tests/consumer/mpi -B "$work/mpi" -DCMAKE_PREFIX_PATH="$prefix"
  quiet cmake --build "$work/mpi"
  run_mpi "CMake package, MPI" "$work/mpi/app" "$work/mpi.zarr"
  mpicc -std=c11 -Wall -Wextra -Werror tests/consumer/mpi/app.c $(pc --cflags --libs zarr-mpi) \
    -Wl,-rpath,"$libdir" -o "$work/mpi-pkg-config"
  run_mpi "pkg-config, MPI" "$work/mpi-pkg-config" "$work/mpi-pc.zarr"
  for file in include/zarr_mpi.h include/zarr_mpi.mod lib/libzarr_mpi_fortran.a; do
    [ -f "$prefix/$file" ] || { echo "the install lacks $file" >&2; exit 1; }
  done
  quiet cmake -S tests/consumer/mpi-fortran -B "$work/mpi-fortran" -DCMAKE_PREFIX_PATH="$prefix"
  quiet cmake --build "$work/mpi-fortran"
  run_mpi "CMake package, MPI Fortran" "$work/mpi-fortran/app" "$work/mpi-fortran.zarr"
  mpif90 -Wall -Werror tests/consumer/mpi-fortran/app.f90 -I"$prefix/include" -L"$libdir" \
    -lzarr_mpi_fortran -lzarr_fortran -lzarr_mpi -lzarr -Wl,-rpath,"$libdir" \
    -o "$work/mpi-fortran-by-hand"
  run_mpi "mpif90 by hand" "$work/mpi-fortran-by-hand" "$work/mpi-fortran-hand.zarr"
elif [ -n "${ZARR_REQUIRE_MPI:-}" ]; then
  echo "libzarr_mpi was not installed" >&2
  exit 1
fi

quiet cmake -S tests/consumer/subproject -B "$work/subproject" -DLIBZARR_DIR="$root"
quiet cmake --build "$work/subproject"
check "add_subdirectory" "$work/subproject/app" yes
# (CMake's own probes, such as FindMPI's test programs under CMakeFiles/, are not libzarr's.)
if [ -n "$(find "$work/subproject" -path '*/CMakeFiles' -prune -o -name 'test_*' -type f -perm -u+x -print)" ]; then
  echo "add_subdirectory built libzarr's tests" >&2
  exit 1
fi
echo "-- consumers built and ran"
