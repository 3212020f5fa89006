#!/usr/bin/env bash
# Builds the release configuration, runs the benchmark suite on this machine's GPU and writes the
# performance report:
#   results/<device>/bench.json        cdl_bench's results (Google Benchmark JSON)
#   results/<device>/build_facts.json  what nvcc and NVRTC accept (the articles' compile-time claims)
#   results/<device>/resources.json    each kernel's registers, stack and spills (and SASS facts)
#   results/<device>/repeat.json       some benchmarks again, in a new process: the run's own noise threshold
#   results/<device>/jit_cache_disabled.json
#                                      the JIT stages again with CUDA_CACHE_DISABLE=1 (the compilers' own
#                                      caches off)
#   results/<device>/python.json       the articles' own systems (bench/python: CuPy, Numba, cuda-python,
#                                      PyCUDA), each skipped with a line where it cannot run; the
#                                      interpreter is $CDL_PEERS_PYTHON (default python3)
#   results/<device>/report.md + *.png the report (reports/report.py)
#   results/<device>/compare.md        this run against the committed reference (reports/compare.py)
# Pass --quick for the short sweep (under a minute of benchmarks on an H100); other arguments go to
# cdl_bench (Google Benchmark flags). Without a GPU it says so and regenerates the reports of the
# committed reference results (reports/reference/<device>/) instead.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
cmake --preset release
cmake --build --preset release

python=$(sed -n 's/^CDL_PYTHON:FILEPATH=//p' build/release/CMakeCache.txt)
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -c 'A-Za-z0-9_.\n-' '_' || true)
if [ -z "$device" ]; then
  echo "bench: no GPU found (nvidia-smi lists none): nothing to measure on this machine." >&2
  echo "bench: regenerating the reports of the committed reference results instead." >&2
  for d in reports/reference/*/; do "$python" reports/report.py "$d"; done
  exit 0
fi

args=()
for a in "$@"; do [ "$a" = --quick ] && args+=(--cdl_quick) || args+=("$a"); done
out="results/$device"
mkdir -p "$out"
./build/release/bench/cdl_build_facts "$out/build_facts.json"
"$python" reports/resources.py build/release "$out/resources.json" --occupancy build/release/bench/cdl_occupancy
# cdl_bench writes bench.json whole or not at all: interrupted (Ctrl-C), it keeps the finished
# benchmarks in bench.interrupted.json and leaves an earlier bench.json as it was. Its exit status 3
# means some benchmark failed: the report lists the failures first, so go on to it.
bench=0
./build/release/bench/cdl_bench --benchmark_out="$out/bench.json" --benchmark_out_format=json "${args[@]}" || bench=$?
[ "$bench" -eq 0 ] || [ "$bench" -eq 3 ] || exit "$bench"
# The run's own noise: a slice of the suite again, in a new process (the report's noise threshold).
# And the JIT stages with the compilers' driver caches off, beside the run's own (but for jit/parts/:
# every compile there is of a new text, which no cache answers, and the report reads them from the run;
# Google Benchmark's POSIX regex has no lookahead, so "not parts/" is spelled out).
rm -f "$out/repeat.json" "$out/jit_cache_disabled.json"
./build/release/bench/cdl_bench "${args[@]}" --benchmark_out="$out/repeat.json" --benchmark_out_format=json \
  --benchmark_filter='^map/(01_template_functor|03_switch|04_function_pointer.symbol|05_virtual|06_nvrtc_jit|08_expression_jit)/vec/op:(quadratic|sine)/type:f32/n:16777216/k:(1|16|256)/|^tasks/.*/layout:random/distinct:32/' \
  > /dev/null || echo "bench: the repeat run failed; the report falls back to a fixed noise threshold" >&2
CUDA_CACHE_DISABLE=1 ./build/release/bench/cdl_bench "${args[@]}" --benchmark_filter='^jit/([^p]|p[^a])' \
  --benchmark_out="$out/jit_cache_disabled.json" --benchmark_out_format=json > /dev/null \
  || echo "bench: the JIT stages with the caches off failed; the report leaves that column out" >&2
rm -f "$out/python.json"  # never report an earlier run's peers beside this one
quick=(); for a in "$@"; do [ "$a" = --quick ] && quick=(--quick); done
peers=0
PYTHONPATH=bench/python "${CDL_PEERS_PYTHON:-python3}" -m cdl_peers --cdl-problem build/release/bench/cdl_problem \
  --out "$out/python.json" "${quick[@]}" || peers=$?
report=0
"$python" reports/report.py "$out" || report=$?
# This run against the committed reference of the same GPU, or of the first GPU there is one of
# when there is none for this one (reports/compare.py: B / A per benchmark; its exit status 1
# means changes were found, which is what a comparison is for, not a failure of this script).
reference="reports/reference/$device"
[ -d "$reference" ] || reference=$(ls -d reports/reference/*/ 2>/dev/null | head -1)
if [ -n "$reference" ]; then
  echo "bench: comparing with the reference in $reference (another GPU's, if the name differs)"
  "$python" reports/compare.py "$reference" "$out" --out "$out/compare.md" \
    || { rc=$?; [ $rc -eq 1 ] || echo "bench: the comparison with the reference failed (exit status $rc)" >&2; }
fi
worst=$(( report > peers ? report : peers ))
exit $(( bench > worst ? bench : worst ))
