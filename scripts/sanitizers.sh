#!/usr/bin/env bash
# Sanitizer, valgrind and Miri runs (issue #11). Each subcommand works alone; with none, all
# four run in this order:
#   scripts/sanitizers.sh [c-asan] [valgrind] [tsan] [miri]
#
#   c-asan    The C tests and examples of CMakeLists.txt compiled by gcc with
#             -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
#             (CMake option ZARR_SANITIZE) into build/asan, linked against the normal release
#             libzarr (target/release), run by CTest. Any AddressSanitizer, LeakSanitizer or
#             UBSan report fails its test. The Rust code is not instrumented, but its heap
#             goes through ASan's malloc, so C-side misuse of what libzarr hands out (double
#             frees, use after free, leaks of handles and strings) is caught.
#   valgrind  The same programs, compiled normally into build/valgrind, each run by CTest under
#             valgrind memcheck (CMake option ZARR_TEST_LAUNCHER) with --error-exitcode=99
#             --leak-check=full --errors-for-leak-kinds=definite: an invalid access, a use of
#             uninitialised memory or a definite leak, in C or in libzarr, fails the test.
#             No suppressions: none has been needed (a suppression file would be for proven
#             false positives in third-party code only). valgrind is installed with apt when
#             missing.
#   tsan      ThreadSanitizer (nightly, -Zsanitizer=thread -Zbuild-std) over the concurrency
#             tests: tests/concurrent_writers.rs, tests/chunk_cache.rs and the library's unit
#             tests of the thread pool, the chunk cache, the stores (lock stripes,
#             read-modify-write), the parallel copies and the C API round trips on the pool
#             (ffi/tests.rs). Target dir target/tsan. The C codecs (blosc, zstd, ...) are
#             compiled without instrumentation: their own memory accesses are not checked
#             (no false reports follow, since none of them runs threads of its own).
#   miri      Miri (nightly) over the pure-Rust unit tests of the unsafe code and what feeds it:
#             the strided copy and fill kernels (strided.rs), caller buffer layout checks
#             (array/buffer.rs), selection arithmetic (selection/), byte swaps, blosc frame
#             checks before C sees them, the FFI pointer helpers (ffi/boundary.rs) and the C
#             entry points called through raw pointers on a memory store (ffi/tests.rs; those
#             on the thread pool under Tree Borrows, see below). Tests that need C code are not
#             selected (Miri cannot call it). Target dir target/miri.
#
# A subcommand whose tool or toolchain is missing (no gcc sanitizer runtime, no valgrind and no
# apt, no nightly toolchain) is skipped with a message and does not fail the run. rust-src and
# miri are added to the nightly toolchain with rustup when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# Builds are niced: this machine and CI runners are shared.
nice_cmd=(nice -n 10)

has_nightly() {
  rustup toolchain list 2>/dev/null | grep -q '^nightly'
}

# Adds rustup components to the nightly toolchain when missing.
nightly_components() {
  local missing=() c
  for c in "$@"; do
    rustup component list --toolchain nightly --installed 2>/dev/null | grep -q "^$c" ||
      missing+=("$c")
  done
  [ ${#missing[@]} -eq 0 ] || rustup component add --toolchain nightly "${missing[@]}"
}

# cmake from .venv/tools, as scripts/test.sh uses it.
cmake_tools() {
  source scripts/venv.sh
  venv tools tests/requirements-tools.txt
  export PATH="$root/.venv/tools/bin:$PATH"
}

run_c_asan() {
  local probe
  probe=$(mktemp -d)
  if ! echo 'int main(void) { return 0; }' |
    gcc -fsanitize=address,undefined -x c - -o "$probe/a.out" 2>/dev/null; then
    rm -rf "$probe"
    echo "== c-asan skipped: gcc cannot link -fsanitize=address,undefined (install libasan, libubsan)"
    return 0
  fi
  rm -rf "$probe"
  echo "== C tests under AddressSanitizer and UBSan (gcc, build/asan)"
  cmake_tools
  cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc \
    -DCMAKE_CXX_COMPILER=g++ -DZARR_SANITIZE=address,undefined >/dev/null
  "${nice_cmd[@]}" cmake --build build/asan --parallel 2
  # allocator_may_return_null: libzarr asks for chunk buffers with try_reserve and reports a
  # failed allocation (test_errors asks for a 2^61-byte chunk and expects ZARR_ERR_TOO_LARGE);
  # by default ASan aborts on such a request instead of returning NULL as glibc does.
  local asan=detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:allocator_may_return_null=1
  ASAN_OPTIONS=$asan:strict_string_checks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build/asan --output-on-failure -E "$not_sanitized|^test_fortran"
  # The Fortran tests without strict_string_checks: libgfortran hands Fortran strings, which
  # have no NUL, to strndup with their length (formatted I/O, execute_command_line), which is
  # correct but what that check reports.
  ASAN_OPTIONS=$asan UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build/asan --output-on-failure -R "^test_fortran"
}

# The fault injection test runs only in the plain CTest run: libfiu's LD_PRELOAD wrappers and
# ASan's interceptors take over the same libc calls (the test crashes at start under ASan), and
# under valgrind its 2,300 runs would take many minutes; it tests failing system calls, not
# memory use, and its C code is the other tests' kind. The MPI tests run their programs under
# mpiexec, whose MPI library's own allocations LeakSanitizer and valgrind would report.
not_sanitized="^fault_injection$|^mpi_"

run_valgrind() {
  if ! command -v valgrind >/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" -eq 0 ]; then
      apt-get update -qq && apt-get install -y -qq valgrind
    else
      echo "== valgrind skipped: valgrind is not installed (apt-get install valgrind)"
      return 0
    fi
  fi
  echo "== C tests under valgrind memcheck (build/valgrind)"
  cmake_tools
  local launcher="valgrind;--error-exitcode=99;--leak-check=full;--errors-for-leak-kinds=definite"
  launcher+=";--num-callers=40"
  cmake -S . -B build/valgrind -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DZARR_TEST_LAUNCHER=$launcher" >/dev/null
  "${nice_cmd[@]}" cmake --build build/valgrind --parallel 2
  ctest --test-dir build/valgrind --output-on-failure -E "$not_sanitized"
}

run_tsan() {
  if ! has_nightly; then
    echo "== tsan skipped: no nightly toolchain (rustup toolchain install nightly)"
    return 0
  fi
  nightly_components rust-src
  local target
  target=$(rustc -vV | sed -n 's/^host: //p')
  echo "== ThreadSanitizer over the concurrency tests (target/tsan)"
  local cargo=(env RUSTFLAGS="-Zsanitizer=thread" RUSTDOCFLAGS="-Zsanitizer=thread"
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
    "${nice_cmd[@]}" cargo +nightly test -Zbuild-std --target "$target" --target-dir target/tsan)
  "${cargo[@]}" --test concurrent_writers --test chunk_cache
  "${cargo[@]}" --lib -- parallel:: array::chunk_cache:: store:: copy:: ffi::tests::on_the_pool_
}

run_miri() {
  if ! has_nightly; then
    echo "== miri skipped: no nightly toolchain (rustup toolchain install nightly)"
    return 0
  fi
  nightly_components rust-src miri
  echo "== Miri over the unit tests of the unsafe code (target/miri)"
  local tests=(strided:: array::buffer:: selection:: dtype::byte_swap:: codec::swap_bytes::
    codec::blosc_frame:: ffi::)
  # The tests whose selections run on the thread pool (ffi/tests.rs, on_the_pool_*): rayon's
  # crossbeam-epoch is known to break Stacked Borrows (crossbeam-rs/crossbeam#545, open) while
  # following Tree Borrows, which crossbeam's own CI checks it with, and it casts integers to
  # pointers; so these run under Tree Borrows with permissive provenance, everything else
  # under the default, stricter Stacked Borrows. -Zmiri-ignore-leaks: the pool's threads live
  # as long as the process.
  local pool_tests=ffi::tests::on_the_pool_
  local cargo=("${nice_cmd[@]}" cargo +nightly miri test --target-dir target/miri --lib)
  "${cargo[@]}" -- "${tests[@]}" --skip "$pool_tests"
  MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-tree-borrows -Zmiri-permissive-provenance -Zmiri-ignore-leaks" \
    "${cargo[@]}" -- "$pool_tests"
}

commands=("$@")
[ ${#commands[@]} -gt 0 ] || commands=(c-asan valgrind tsan miri)
for command in "${commands[@]}"; do
  case "$command" in
    c-asan | valgrind | tsan | miri) ;;
    *)
      echo "unknown subcommand $command (c-asan, valgrind, tsan, miri)" >&2
      exit 2
      ;;
  esac
done
for command in "${commands[@]}"; do
  "run_${command//-/_}"
done
