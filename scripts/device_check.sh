#!/usr/bin/env bash
# On a lent GPU machine: build, GPU tests, demos, build facts, kernel resources, benchmarks,
# the report (its short table last).
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

{ cmake --preset release -DBUILD_TESTING=ON && cmake --build --preset release -j 16; } > "$LOGS/build.log" 2>&1 \
  || { tail -40 "$LOGS/build.log"; exit 1; }
echo "build ok (${SECONDS}s)"

if [ "$phase" != bench ]; then
ctest --preset release -j 16 --output-on-failure > "$OUT/ctest.log" 2>&1
echo "ctest rc=$? (${SECONDS}s)"; grep -E "tests passed|tests failed|Skipped" "$OUT/ctest.log" | tail -3
echo "slowest tests:"; sed -nE 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/p' "$OUT/ctest.log" | sort -rn | head -8

grep -E "fault_tests" "$OUT/ctest.log"  # the faults (tests/faults) on this machine

# The demo.
./build/release/bench/cdl_run --strategy all --op sine --n 2^24 --k 16 --json "$OUT/run_records.json" > /tmp/run.txt 2>&1
echo "cdl_run rc=$?"; cat /tmp/run.txt

# A user's op through 06 and 07, beside the built-in strategies; then ops that must be refused.
for k in 1 16; do
  ./build/release/bench/cdl_run --expr 'x * x + 2.0f * x + 1.0f' --n 2^26 --k $k > /tmp/expr.txt 2>&1
  echo "cdl_run --expr k=$k rc=$?"; cat /tmp/expr.txt
done
# A program of 08's language through 06, 07 and 08, and the SASS of 08's vec kernel: the same
# 16-byte loads through the non-coherent cache (LDG.E.128.CONSTANT) as strategy 01's kernel.
./build/release/bench/cdl_run --expr 's = sin(x); x > 0.5 ? s * s : 2 * x' --n 2^26 --k 16 --strategy 01_template_functor/vec \
  > /tmp/lang.txt 2>&1; echo "cdl_run --expr (language) rc=$?"; cat /tmp/lang.txt
./build/release/bench/cdl_run --expr 'x * x + 2 * x + 1' --ptx /tmp/08.ptx \
  && ptxas -arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | tr -d .) /tmp/08.ptx -o /tmp/08.cubin \
  && cuobjdump -sass /tmp/08.cubin | grep -E "Function|LDG|STG" | sort | uniq -c
./build/release/bench/cdl_run --expr 'x * nope(x)' --n 2^20; echo "bad expr rc=$?"
./build/release/bench/cdl_run --expr 'x; } __global__ void evil() {' --n 2^20; echo "injected expr rc=$?"
fi
[ "$phase" = tests ] && exit 0

# The compiler's answers (build facts), each kernel's resources with its SASS, then the suite.
./build/release/bench/cdl_build_facts "$OUT/build_facts.json" || echo "build facts FAILED"
python3 reports/resources.py build/release "$OUT/resources.json" --occupancy build/release/bench/cdl_occupancy \
  || echo "resources FAILED"
start=$SECONDS
./build/release/bench/cdl_bench "$@" --benchmark_out="$OUT/bench.json" --benchmark_out_format=json \
  > "$LOGS/bench.log" 2> "$LOGS/bench.err"
echo "bench rc=$? ($((SECONDS - start))s)"; head -2 "$LOGS/bench.err"; grep -i error "$LOGS/bench.log" | head -5
sort -t, -k2 -rn <(sed -nE 's/^\[[0-9]+\/[0-9]+, ([0-9.]+) s, [0-9]+ s in\] (.*)/\2,\1/p' "$LOGS/bench.err") | head -5
# Run to run: some benchmarks again, in a new process, into repeat.json (the report's noise threshold);
# the JIT stages with the compilers' driver caches off.
REPEAT_FILTER=${REPEAT_FILTER:-'^map/(01_template_functor|03_switch|04_function_pointer.symbol|05_virtual|06_nvrtc_jit|08_expression_jit)/vec/op:(quadratic|sine)/type:f32/n:16777216/k:(1|16|256)/|^tasks/.*/layout:random/distinct:32/'}
./build/release/bench/cdl_bench "$@" --benchmark_filter="$REPEAT_FILTER" --benchmark_out="$OUT/repeat.json" \
  --benchmark_out_format=json > /dev/null 2> "$LOGS/repeat.err"
echo "repeat rc=$? ($((SECONDS - start))s)"
# (as scripts/bench.sh: every stage but jit/parts/, whose compiles are all of new texts)
CUDA_CACHE_DISABLE=1 ./build/release/bench/cdl_bench "$@" --benchmark_filter='^jit/([^p]|p[^a])' \
  --benchmark_out="$OUT/jit_cache_disabled.json" --benchmark_out_format=json > /dev/null 2> "$LOGS/jit.err"
echo "jit, caches off rc=$? ($((SECONDS - start))s)"
# The articles' own systems from Python (CuPy, Numba, cuda-python, PyCUDA), beside the suite.
[ -z "$pycuda" ] || { wait "$pycuda"; echo "pycuda build rc=$? ($(tail -1 "$LOGS/pycuda.log"))"; }
quick=(); for a in "$@"; do [ "$a" = --cdl_quick ] && quick=(--quick); done
PYTHONPATH=bench/python python3 -m cdl_peers --cdl-problem build/release/bench/cdl_problem --out "$OUT/python.json" \
  "${quick[@]}" > "$LOGS/peers.log" 2>&1
echo "python peers rc=$?"; grep -E "skipped|FAILED|experiment|workaround|restored" "$LOGS/peers.log" | cut -c1-200
# The report goes to /tmp (the results come back; regenerate it from them), its table here.
python3 reports/report.py "$OUT" --out /tmp/report | tail -15
