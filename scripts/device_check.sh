#!/usr/bin/env bash
# On a lent GPU machine: build, GPU tests, SASS facts, demos, benchmarks, short table last.
#   scripts/device_check.sh [tests|bench|all] [cdl_bench flags...]   (default: all)
# `tests` stops before the benchmarks, `bench` skips the tests (the build is incremental), so a
# long session can be split into calls of under 10 minutes. Full logs and results go under
# $OUT (or ./device_out when OUT is unset).
set -uo pipefail
phase=all
case "${1:-}" in tests|bench|all) phase=$1; shift ;; esac
cd "$(dirname "$0")/.."
OUT=${OUT:-device_out}
mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > /tmp/gpu.txt 2>&1
cat /tmp/gpu.txt

{ cmake --preset release -DBUILD_TESTING=ON && cmake --build --preset release -j 16; } > "$OUT/build.log" 2>&1 \
  || { tail -40 "$OUT/build.log"; exit 1; }
echo "build ok (${SECONDS}s)"

if [ "$phase" != bench ]; then
ctest --preset release -j 16 --output-on-failure > "$OUT/ctest.log" 2>&1
echo "ctest rc=$? (${SECONDS}s)"; grep -E "tests passed|tests failed|Skipped" "$OUT/ctest.log" | tail -3

# Machine-code facts the strategy headers state: calls through a register (indirect) and the
# stack frame of one float kernel per strategy. Direct CALLs (to sinf/cosf's slow-path
# argument reduction) are not dispatch and are not counted.
objs=build/release/strategies/CMakeFiles/cdl_strategies.dir
{ for f in 00_inline 01_template_functor 02_device_lambda 03_switch 04_function_pointer 05_virtual; do
    o=$objs/$f.cu.o
    sass=$(cuobjdump -sass $o)
    echo "== $f: indirect calls $(grep -cE 'CALL\.[A-Z.]* R[0-9]+' <<<"$sass"), direct calls $(grep -cE 'CALL\.[A-Z.]* 0x' <<<"$sass"), BRX $(grep -c 'BRX' <<<"$sass")"
    # Registers and stack of the float map kernels (vec form) for the quadratic op or its invoker.
    cuobjdump -res-usage $o 2>&1 | grep -A1 -E "map_vec_kernelIf|map_quadratic_vecIf" | grep -oE "REG:[0-9]+ STACK:[0-9]+" | sort | uniq -c | head -4
  done
  cuobjdump -sass $objs/05_virtual.cu.o | grep -m1 -B4 -E "CALL.* R[0-9]+"
} > "$OUT/sass.txt" 2>&1
cat "$OUT/sass.txt"

# The demo, and the faults a user meets first: a size that cannot fit, no visible GPU.
./build/release/bench/cdl_run --strategy all --op sine --n 2^24 --k 16 --json "$OUT/run_records.json" > /tmp/run.txt 2>&1
echo "cdl_run rc=$?"; cat /tmp/run.txt
./build/release/bench/cdl_run --strategy 00_inline/vec --n 2^40; echo "oversize rc=$?"
CUDA_VISIBLE_DEVICES= ./build/release/bench/cdl_bench; echo "no-gpu bench rc=$?"

# A user's op through 06 and 07, beside the built-in strategies; then ops that must be refused.
for k in 1 16; do
  ./build/release/bench/cdl_run --expr 'x * x + 2.0f * x + 1.0f' --n 2^26 --k $k > /tmp/expr.txt 2>&1
  echo "cdl_run --expr k=$k rc=$?"; cat /tmp/expr.txt
done
./build/release/bench/cdl_run --expr 'x * nope(x)' --n 2^20; echo "bad expr rc=$?"
./build/release/bench/cdl_run --expr 'x; } __global__ void evil() {' --n 2^20; echo "injected expr rc=$?"
fi
[ "$phase" = tests ] && exit 0

start=$SECONDS
./build/release/bench/cdl_bench "$@" --benchmark_out="$OUT/bench.json" --benchmark_out_format=json \
  > "$OUT/bench.log" 2> "$OUT/bench.err"
echo "bench rc=$? ($((SECONDS - start))s)"; head -2 "$OUT/bench.err"; grep -i error "$OUT/bench.log" | head -5
/usr/bin/env python3 reports/summary.py "$OUT/bench.json"
