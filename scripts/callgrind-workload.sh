#!/usr/bin/env bash
# Instructions and cache misses of a step of the standard workload, under valgrind's callgrind
# with its cache simulation: for each size and implementation, the workload bench's profiler
# run (AABB_BENCH_PROFILE, see the top of crates/peers/benches/workload.rs) counts the update and pair
# search of the profiled steps only (the function `profiled_step`), and this prints them per
# step. Counts are the same from run to run, whatever else the machine is doing: they judge a
# change where the timings of a shared machine cannot.
#
# Usage: scripts/callgrind-workload.sh [SIZES [IMPLEMENTATIONS]]
#   SIZES            comma list (default 1000,100000)
#   IMPLEMENTATIONS  comma list of label fragments (default ours,parry; `ours` is our default
#                    configuration, `obvhs`, `real` (Box2D), `bvh`, `rstar` the other peers)
# Environment: CALLGRIND_BENCH=PATH runs that workload bench executable instead of building
# one; CALLGRIND_OUT=DIR keeps the callgrind files there (default target/callgrind).
# The simulated caches are the project machine's: 32 KiB first level (8-way), a 32 MiB last
# level (16-way; callgrind simulates two levels, so the 1 MiB second level is not counted).
# Steps: 60 warm-up steps then 600 counted at N <= 10,000; 10 then 20 above (callgrind runs
# some 50 to 100 times slower than the machine).
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES="${1:-1000,100000}"
IMPLS="${2:-ours,parry}"
OUT="${CALLGRIND_OUT:-${CARGO_TARGET_DIR:-target}/callgrind}"
mkdir -p "$OUT"

if ! command -v valgrind > /dev/null; then
  echo "callgrind-workload: valgrind is not installed (apt-get install valgrind)" >&2
  exit 1
fi

BENCH="${CALLGRIND_BENCH:-}"
if [ -z "$BENCH" ]; then
  BENCH=$(cargo bench -p aabb-peers --bench workload --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*workload-[0-9a-f]*\)).*/\1/p' | tail -1)
fi
if [ -z "$BENCH" ] || [ ! -x "$BENCH" ]; then
  echo "callgrind-workload: no workload bench executable (set CALLGRIND_BENCH)" >&2
  exit 1
fi

printf '%-10s %-8s %6s %14s %12s %12s %12s %12s  %s\n' \
  "N" "impl" "steps" "instr/step" "D refs/step" "D1 miss/st" "LL miss/st" "I1 miss/st" "pairs, hash"
IFS=',' read -ra size_list <<< "$SIZES"
IFS=',' read -ra impl_list <<< "$IMPLS"
for n in "${size_list[@]}"; do
  if [ "$n" -le 10000 ]; then warm=60; steps=600; else warm=10; steps=20; fi
  for impl in "${impl_list[@]}"; do
    file="$OUT/callgrind.$impl.$n.out"
    log="$OUT/callgrind.$impl.$n.log"
    AABB_BENCH_PROFILE="$impl" AABB_BENCH_N="$n" AABB_BENCH_PROFILE_WARM="$warm" \
      AABB_BENCH_PROFILE_STEPS="$steps" \
      valgrind --tool=callgrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 \
      --LL=33554432,16,64 --collect-atstart=no \
      --toggle-collect='*profiled_step*' --callgrind-out-file="$file" \
      "$BENCH" --bench > "$log" 2>&1 || {
        echo "callgrind-workload: the run of $impl at $n failed; see $log" >&2
        exit 1
      }
    result=$(grep 'profiled steps' "$log" | sed 's/.*profiled steps: //')
    # events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw; the totals line sums every function.
    awk -v n="$n" -v impl="$impl" -v steps="$steps" -v result="$result" '
      /^events:/ { for (i = 2; i <= NF; i++) name[i - 1] = $i }
      /^(summary|totals):/ { for (i = 2; i <= NF; i++) v[name[i - 1]] = $i }
      END {
        printf "%-10s %-8s %6d %14.0f %12.0f %12.1f %12.1f %12.1f  %s\n", n, impl, steps,
          v["Ir"] / steps, (v["Dr"] + v["Dw"]) / steps, (v["D1mr"] + v["D1mw"]) / steps,
          (v["ILmr"] + v["DLmr"] + v["DLmw"]) / steps, v["I1mr"] / steps, result
      }' "$file"
  done
done
