#!/usr/bin/env bash
# On a lent GPU machine: build, GPU tests, demos, build facts, kernel resources, benchmarks,
# the report (its short table last).
#   scripts/device_check.sh [tests|bench|all] [scripts/bench.sh arguments...]   (default: all)
# `tests` stops before the benchmarks, `bench` skips the tests (the build is incremental), so a
# long session can be split into calls of under 10 minutes. Full logs and results go under
# $OUT (or ./device_out when OUT is unset).
set -uo pipefail
phase=all
case "${1:-}" in tests|bench|all) phase=$1; shift ;; esac
cd "$(dirname "$0")/.."
OUT=${OUT:-device_out}
mkdir -p "$OUT"
# Results stay in $OUT; logs go to $LOGS and come back as one archive ($OUT returns 8 files at most),
# packed on any exit; ctest's log is written under $OUT itself, so that it comes back even from a
# command stopped at its time limit.
LOGS=$(mktemp -d)
trap 'tar -czf "$OUT/logs.tgz" -C "$LOGS" .' EXIT
trap 'exit 143' INT TERM
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > /tmp/gpu.txt 2>&1
cat /tmp/gpu.txt
# PyCUDA, where its source was carried in .pycuda/ (tools/ and vendor/ of ../shared): built in the
# background while the rest runs; the Python peers wait for it.
pycuda=""
if [ -x .pycuda/tools/pycuda-on-gpu-machine.sh ]; then
  .pycuda/tools/pycuda-on-gpu-machine.sh python3 > "$LOGS/pycuda.log" 2>&1 &
  pycuda=$!
fi

{ cmake --preset release -DBUILD_TESTING=ON && cmake --build --preset release -j 16; } \
  > "$LOGS/build.log" 2>&1 \
  || { tail -40 "$LOGS/build.log"; exit 1; }
echo "build ok (${SECONDS}s)"

if [ "$phase" != bench ]; then
ctest --preset release -j 16 --output-on-failure > "$OUT/ctest.log" 2>&1
echo "ctest rc=$? (${SECONDS}s)"; grep -E "tests passed|tests failed|Skipped" "$OUT/ctest.log" | tail -3
echo "slowest tests:"
sed -nE 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/p' "$OUT/ctest.log" | sort -rn | head -8

grep -E "fault_tests" "$OUT/ctest.log"  # the faults (tests/faults) on this machine

# The demo.
./build/release/bench/cdl_run --strategy all --op sine --n 2^24 --k 16 --json "$OUT/run_records.json" \
  > /tmp/run.txt 2>&1
echo "cdl_run rc=$?"; cat /tmp/run.txt

# A user's op through 06 and 07, beside the built-in strategies; then ops that must be refused.
for k in 1 16; do
  ./build/release/bench/cdl_run --expr 'x * x + 2.0f * x + 1.0f' --n 2^26 --k $k > /tmp/expr.txt 2>&1
  echo "cdl_run --expr k=$k rc=$?"; cat /tmp/expr.txt
done
# A program of 08's language through 06, 07 and 08, and the SASS of 08's vec kernel: the same
# 16-byte loads through the non-coherent cache (LDG.E.128.CONSTANT) as strategy 01's kernel.
./build/release/bench/cdl_run --expr 's = sin(x); x > 0.5 ? s * s : 2 * x' --n 2^26 --k 16 \
  --strategy 01_template_functor/vec \
  > /tmp/lang.txt 2>&1; echo "cdl_run --expr (language) rc=$?"; cat /tmp/lang.txt
./build/release/bench/cdl_run --expr 'x * x + 2 * x + 1' --ptx /tmp/08.ptx \
  && ptxas -arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | tr -d .) /tmp/08.ptx \
       -o /tmp/08.cubin \
  && cuobjdump -sass /tmp/08.cubin | grep -E "Function|LDG|STG" | sort | uniq -c
./build/release/bench/cdl_run --expr 'x * nope(x)' --n 2^20; echo "bad expr rc=$?"
./build/release/bench/cdl_run --expr 'x; } __global__ void evil() {' --n 2^20; echo "injected expr rc=$?"
fi
[ "$phase" = tests ] && exit 0

# The benchmarks, as the README's command runs them (scripts/bench.sh: its phases, the report and the
# comparison); the results files come back in $OUT, the logs in the archive.
[ -z "$pycuda" ] || { wait "$pycuda"; echo "pycuda build rc=$? ($(tail -1 "$LOGS/pycuda.log"))"; }
start=$SECONDS
scripts/bench.sh "$@" > "$LOGS/bench.log" 2> "$LOGS/bench.err"
echo "bench.sh rc=$? ($((SECONDS - start))s)"; grep -E "^bench: " "$LOGS/bench.err"
grep -E "resources:|skipped|FAILED|WRONG" "$LOGS/bench.err" | cut -c1-200 | head -20
results=$(ls -d results/*/ | head -1)
cp "$results"/*.json "$OUT"/ 2>/dev/null
tail -15 "$LOGS/bench.log"
