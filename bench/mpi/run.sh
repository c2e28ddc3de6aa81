#!/usr/bin/env bash
# Builds bench_mpi and libzarr_mpi with mpicc against the built libzarr, runs the matrix
# (stores x ranks; bench_mpi does modes x ops x REPS), prints a Markdown table of medians.
#
#   bench/mpi/run.sh                      # local directory, S3, S3 + 20 ms proxy; N = 2, 4
#   REPS=3 RANKS="2 4" STORES="local s3 s3-20ms" DELAY_MS=20 bench/mpi/run.sh
#
# S3 settings come from SRV_ENV (default /tmp/srv.env: LIBZARR_TEST_S3_ENDPOINT, _KEY, _SECRET;
# bucket zarr-test). Nothing is written outside WORK (default a new /tmp/bench-mpi.XXXXXX) but
# the S3 arrays, which bench_mpi deletes at the end.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
LIBDIR="${LIBDIR:-$ROOT/target/release}"
REPS="${REPS:-3}"
RANKS="${RANKS:-2 4}"
STORES="${STORES:-local s3 s3-20ms}"
DELAY_MS="${DELAY_MS:-20}"
SRV_ENV="${SRV_ENV:-/tmp/srv.env}"
WORK="${WORK:-$(mktemp -d /tmp/bench-mpi.XXXXXX)}"
mkdir -p "$WORK"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

# ---- build ---------------------------------------------------------------------------------
test -f "$LIBDIR/libzarr.so" || { echo "no $LIBDIR/libzarr.so (cargo build --release)" >&2; exit 1; }
mpicc -O2 -fPIC -shared -I"$ROOT/include" "$ROOT/mpi/zarr_mpi.c" \
  -L"$LIBDIR" -lzarr -Wl,-rpath,"$LIBDIR" -o "$WORK/libzarr_mpi.so"
mpicc -O2 -Wall -Wextra -I"$ROOT/include" "$HERE/bench_mpi.c" \
  -L"$WORK" -lzarr_mpi -L"$LIBDIR" -lzarr -Wl,-rpath,"$WORK:$LIBDIR" -o "$WORK/bench_mpi"

# ---- S3 and the latency proxy ----------------------------------------------------------------
PROXY_PID=""
cleanup() { if [ -n "$PROXY_PID" ]; then kill "$PROXY_PID" 2>/dev/null || true; wait "$PROXY_PID" 2>/dev/null || true; fi; }
trap cleanup EXIT
if [[ " $STORES " == *" s3"* ]]; then
  set -a; . "$SRV_ENV"; set +a
  export AWS_ACCESS_KEY_ID="$LIBZARR_TEST_S3_KEY" AWS_SECRET_ACCESS_KEY="$LIBZARR_TEST_S3_SECRET"
  export AWS_REGION=us-east-1
fi
if [[ " $STORES " == *" s3-20ms "* || " $STORES " == *" s3-proxy "* ]]; then
  python3 "$ROOT/scripts/http_proxy.py" --upstream "$LIBZARR_TEST_S3_ENDPOINT" \
    --listen-port 0 --delay-ms "$DELAY_MS" --port-file "$WORK/proxy.port" &
  PROXY_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/proxy.port" ] && break; sleep 0.1; done
  PROXY_URL="http://127.0.0.1:$(cat "$WORK/proxy.port")"
fi

# ---- the matrix ----------------------------------------------------------------------------
ROWS="$WORK/rows.tsv"
: > "$ROWS"
LOAD="$WORK/load.txt"
(while true; do cut -d' ' -f1 /proc/loadavg >> "$LOAD"; sleep 5; done) &
LOAD_PID=$!
trap 'kill $LOAD_PID 2>/dev/null || true; cleanup' EXIT
echo "load before: $(cat /proc/loadavg)" >&2
T0=$(date +%s)
for store in $STORES; do
  for n in $RANKS; do
    case "$store" in
      local) loc="$WORK/local-$n.zarr"; endpoint="" ;;
      s3) loc="s3://zarr-test/bench-mpi-$RANDOM$RANDOM.zarr"; endpoint="$LIBZARR_TEST_S3_ENDPOINT" ;;
      s3-*) loc="s3://zarr-test/bench-mpi-$RANDOM$RANDOM.zarr"; endpoint="$PROXY_URL" ;;
    esac
    echo "== $store N=$n $loc" >&2
    AWS_ENDPOINT_URL="$endpoint" mpiexec -n "$n" -x AWS_ENDPOINT_URL -x AWS_ACCESS_KEY_ID \
      -x AWS_SECRET_ACCESS_KEY -x AWS_REGION "$WORK/bench_mpi" "$loc" "$store" "$REPS" \
      | tee -a "$ROWS" >&2 || echo "bench_mpi $store N=$n: exit status $?" >&2
    rm -rf "$WORK/local-$n.zarr"
  done
done
echo "load after: $(cat /proc/loadavg); wall $(( $(date +%s) - T0 )) s" >&2
kill $LOAD_PID 2>/dev/null || true

# ---- the table -----------------------------------------------------------------------------
python3 - "$ROWS" "$LOAD" <<'EOF'
import statistics, sys
from collections import OrderedDict
cells = OrderedDict()
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] != "ROW":
        continue
    key = (f[1], int(f[2]), f[3], f[4])
    cells.setdefault(key, []).append([float(f[6])] + [int(x) for x in f[7:13]])
print("| store | N | mode | op | median s | runs (s) | requests | PUT | GET | bytes sent | conflicts | wrong elements |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for (store, n, mode, op), runs in cells.items():
    med = lambda k: statistics.median(r[k] for r in runs)
    times = " / ".join(f"{r[0]:.3f}" for r in runs)
    counts = [f"{med(k):.0f}" for k in range(1, 6)]
    wrong = " / ".join(str(r[6]) for r in runs)
    print(f"| {store} | {n} | {mode} | {op} | {med(0):.3f} | {times} | " + " | ".join(counts) + f" | {wrong} |")
loads = [float(x) for x in open(sys.argv[2]).read().split()] if len(sys.argv) > 2 else []
if loads:
    print(f"\nLoad average (1 min) during the run, sampled every 5 s: min {min(loads):.2f}, "
          f"median {statistics.median(loads):.2f}, max {max(loads):.2f} ({len(loads)} samples).")
print("\nCounts are medians over the runs, summed over ranks; wrong elements per run "
      "(writes: rank 0 reads the whole array back; reads: every rank checks its boxes).")
EOF
