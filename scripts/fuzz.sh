#!/usr/bin/env bash
# Runs libzarr's fuzz targets (fuzz/fuzz_targets/) with cargo fuzz (libFuzzer, AddressSanitizer)
# for SECONDS each (default 60), starting from the committed seed corpora (fuzz/corpus/TARGET,
# left unchanged: new inputs go to target/fuzz-corpus/TARGET; a dictionary from fuzz/dict/ when
# there is one). Needs the nightly toolchain;
# installs cargo-fuzz when missing. A crash, a leak, a timeout (10 s) or more than 2.5 GB of
# memory fails the run, leaving the reproducer in fuzz/artifacts/TARGET/. The C dependencies are
# instrumented too: under cargo fuzz the cc crate adds -fsanitize=address (CARGO_CFG_SANITIZE).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] ||
  targets=(store_image chunk_decode metadata shard zip_archive selection key_path c_api references)

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
mkdir -p target/fuzz-logs
for target in "${targets[@]}"; do
  echo "== fuzz $target for ${seconds} s"
  mkdir -p "target/fuzz-corpus/$target"
  log="target/fuzz-logs/$target.log"
  status=0
  dict=()
  [ -f "fuzz/dict/$target.dict" ] && dict=(-dict="fuzz/dict/$target.dict")
  cargo +nightly fuzz run --release "$target" "target/fuzz-corpus/$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -max_len=1048576 \
    -print_final_stats=1 "${dict[@]}" > "$log" 2>&1 || status=$?
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)|^INFO: seed corpus|(INITED|DONE) +cov:" "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -60 "$log" >&2
    echo "fuzz $target failed (status $status; the reproducer is in fuzz/artifacts/$target/)" >&2
    exit 1
  fi
done
