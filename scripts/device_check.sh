#!/usr/bin/env bash
# One call on a lent GPU machine: build, GPU tests, SASS facts, benchmarks, short table last.
# Full logs and results go under $OUT (or ./device_out when OUT is unset).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-device_out}
mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > /tmp/gpu.txt 2>&1
cat /tmp/gpu.txt

{ cmake --preset release -DBUILD_TESTING=ON && cmake --build --preset release -j 16; } > "$OUT/build.log" 2>&1 \
  || { tail -40 "$OUT/build.log"; exit 1; }
echo "build ok (${SECONDS}s)"

ctest --preset release -j 8 --output-on-failure > "$OUT/ctest.log" 2>&1
echo "ctest rc=$? (${SECONDS}s)"; grep -E "tests passed|tests failed|Skipped" "$OUT/ctest.log" | tail -3

# Machine-code facts the strategy headers state: calls through a register (indirect) and the
# stack frame of one float kernel per strategy. Direct CALLs (to sinf/cosf's slow-path
# argument reduction) are not dispatch and are not counted.
objs=build/release/strategies/CMakeFiles/cdl_strategies.dir
{ for f in "00_inline:inline_quadratic_vecIf" "01_template_functor:map_vec_kernelIf.*quadratic" \
           "04_function_pointer:map_vec_kernelIf.*pointer_invoker" "04_function_pointer:as_device_function.*quadratic.*f"; do
    o=$objs/${f%%:*}.cu.o
    echo "== ${f%%:*}: indirect calls: $(cuobjdump -sass $o | grep -cE 'CALL\.[A-Z.]* R[0-9]+'), direct calls: $(cuobjdump -sass $o | grep -cE 'CALL\.[A-Z.]* 0x')"
    echo "   ${f##*:}: $(cuobjdump -res-usage $o 2>&1 | grep -A1 -E "${f##*:}" | grep -m1 -o "REG:[0-9]* STACK:[0-9]*")"
  done
  cuobjdump -sass $objs/04_function_pointer.cu.o | grep -m3 -E "CALL.* R[0-9]+"
} > "$OUT/sass.txt" 2>&1
cat "$OUT/sass.txt"

# The demo, and the faults a user meets first: a size that cannot fit, no visible GPU.
./build/release/bench/cdl_run --strategy all --op sine --n 2^24 --k 16 --json "$OUT/run_records.json" > /tmp/run.txt 2>&1
echo "cdl_run rc=$?"; cat /tmp/run.txt
./build/release/bench/cdl_run --strategy 00_inline/vec --n 2^40; echo "oversize rc=$?"
CUDA_VISIBLE_DEVICES= ./build/release/bench/cdl_bench; echo "no-gpu bench rc=$?"

start=$SECONDS
./build/release/bench/cdl_bench "$@" --benchmark_out="$OUT/bench.json" --benchmark_out_format=json \
  > "$OUT/bench.log" 2> "$OUT/bench.err"
echo "bench rc=$? ($((SECONDS - start))s)"; head -2 "$OUT/bench.err"; grep -i error "$OUT/bench.log" | head -5
/usr/bin/env python3 reports/summary.py "$OUT/bench.json"
