#!/usr/bin/env bash
# Compiles and runs every example program in README.md and docs/*.md, twice each.
#
# Convention for code blocks in those files (the info string after the opening ```):
#   ```c        a complete C program: compiled with
#               cc -std=c11 -Wall -Werror -Iinclude ... -lzarr, then run twice in one fresh
#               temporary directory (the second run must also exit 0, so an example that
#               creates something must overwrite it: ZARR_CREATE_OVERWRITE, ZARR_MODE_OVERWRITE)
#   ```cpp      a complete C++17 program (include/zarr.hpp): compiled with c++ -std=c++17 and run
#               the same way
#   ```fortran  a complete Fortran program (`use zarr`): compiled with gfortran against
#               fortran/zarr.f90 and run the same way
#   anything else (```c-fragment, ```cpp-fragment, ```fortran-fragment, ```sh, ```cmake, ...)
#               is not compiled: use it for pieces of programs.
# Examples write only below the current directory (a temporary one here) and need no network.
#
# Needs target/release/libzarr.so (cargo build --release; LIBZARR_LIB_DIR names another
# directory holding libzarr.so), a C compiler, and for the C++ and Fortran blocks c++ and
# gfortran (blocks of a language whose compiler is missing are reported and skipped).
# Prints one line per block and, last, "N passed, 0 failed"; exits 1 when any block fails,
# naming its file and line.
#   scripts/doc-examples.sh [FILE.md...]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
lib=${LIBZARR_LIB_DIR:-$root/target/release}
if [ ! -e "$lib/libzarr.so" ]; then
  echo "doc-examples: $lib/libzarr.so is missing: build it first (cargo build --release)" >&2
  exit 1
fi
if [ $# -gt 0 ]; then files=("$@"); else files=(README.md docs/*.md); fi

work=$(mktemp -d "${TMPDIR:-/tmp}/libzarr-doc-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Extract the blocks: each becomes $work/blocks/N.EXT, and a line "N EXT FILE LINE" in the
# index (LINE: the line of the opening fence). Indented fences (in lists) lose their indent.
mkdir -p "$work/blocks"
for file in "${files[@]}"; do
  awk -v file="$file" -v out="$work/blocks" '
    function flush() { close(path) }
    !inside && match($0, /^[ ]*```(c|cpp|fortran)[ ]*$/) {
      indent = index($0, "`") - 1
      lang = $0; sub(/^[ ]*```/, "", lang); sub(/[ ]*$/, "", lang)
      ext = (lang == "fortran") ? "f90" : lang
      n = ++count
      path = out "/" FILENAME_ID "-" n "." ext
      printf "" > path
      print FILENAME_ID "-" n, ext, file, FNR >> (out "/index")
      inside = 1
      next
    }
    !inside && /^[ ]*```/ { other = 1; inside = 2; next }
    inside && /^[ ]*```[ ]*$/ { if (inside == 1) flush(); inside = 0; next }
    inside == 1 { line = $0; if (substr(line, 1, indent) ~ /^[ ]*$/) line = substr(line, indent + 1); print line >> path }
    END { if (inside) { print file ": a code block is not closed" > "/dev/stderr"; exit 1 } }
  ' FILENAME_ID="$(printf '%s' "$file" | tr '/.' '__')" "$file"
done
touch "$work/blocks/index"

# The Fortran module, compiled once.
fortran_ready=""
fortran_skip=""
if grep -q ' f90 ' "$work/blocks/index"; then
  if command -v gfortran >/dev/null; then
    mkdir -p "$work/fortran"
    if gfortran -c -J "$work/fortran" fortran/zarr.f90 -o "$work/fortran/zarr.o" 2>"$work/fortran/log"; then
      fortran_ready=1
    else
      cat "$work/fortran/log" >&2
      echo "doc-examples: fortran/zarr.f90 does not compile" >&2
      exit 1
    fi
  else
    fortran_skip="no gfortran"
  fi
fi
cxx_skip=""
command -v c++ >/dev/null || cxx_skip="no c++"

passed=0
failed=0
skipped=0
while read -r id ext file line; do
  src="$work/blocks/$id.$ext"
  exe="$work/blocks/$id"
  where="$file:$line"
  log="$work/blocks/$id.log"
  case $ext in
    c)
      compile=(cc -std=c11 -Wall -Werror -I"$root/include" "$src" -L"$lib" -lzarr
        -Wl,-rpath,"$lib" -lm -o "$exe") ;;
    cpp)
      if [ -n "$cxx_skip" ]; then echo "skip  $where (cpp: $cxx_skip)"; skipped=$((skipped + 1)); continue; fi
      compile=(c++ -std=c++17 -Wall -Werror -I"$root/include" "$src" -L"$lib" -lzarr
        -Wl,-rpath,"$lib" -o "$exe") ;;
    f90)
      if [ -z "$fortran_ready" ]; then echo "skip  $where (fortran: $fortran_skip)"; skipped=$((skipped + 1)); continue; fi
      compile=(gfortran -std=f2018 -Wall -Werror -fimplicit-none -I"$work/fortran" "$src"
        "$work/fortran/zarr.o" -L"$lib" -lzarr -Wl,-rpath,"$lib" -o "$exe") ;;
  esac
  if ! "${compile[@]}" >"$log" 2>&1; then
    echo "FAIL  $where ($ext): does not compile" >&2
    sed 's/^/    /' "$log" >&2
    failed=$((failed + 1))
    continue
  fi
  run_dir="$work/run-$id"
  mkdir "$run_dir"
  ok=1
  for run in 1 2; do
    status=0
    (cd "$run_dir" && timeout 120 "$exe") >"$log" 2>&1 </dev/null || status=$?
    if [ "$status" -ne 0 ]; then
      echo "FAIL  $where ($ext): run $run of 2 exited with status $status" >&2
      sed 's/^/    /' "$log" >&2
      ok=""
      break
    fi
  done
  if [ -n "$ok" ]; then
    echo "ok    $where ($ext, run twice)"
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done <"$work/blocks/index"

[ "$skipped" -eq 0 ] || echo "$skipped skipped (compiler missing)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
