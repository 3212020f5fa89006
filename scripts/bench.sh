#!/usr/bin/env bash
# Builds the programs, runs the benchmark suite on this machine's GPU and writes the performance
# report under results/<device>/, in phases; each says its name when it starts and its time when
# it ends:
#   build   configure and build the release preset (the programs; the tests are test.sh's)
#   facts   build_facts.json, what nvcc and NVRTC accept (the articles' compile-time claims), beside
#           resources.json, each kernel's registers, stack, spills, SASS and occupancy
#   map     cdl_bench's map workload: bench.map.json
#   suite   cdl_bench's other workloads, the JIT stages and the tiered streams: bench.suite.json
#   noise   repeat.json, some benchmarks again in a new process (the report's noise threshold), and
#           jit_cache_disabled.json, the JIT stages with the compilers' driver caches off (not in the
#           quick mode)
#   peers   python.json, the articles' own systems from Python (bench/python: CuPy, Numba,
#           cuda-python, PyCUDA), each skipped with a line where it cannot run ($CDL_PEERS_PYTHON,
#           default python3), and the articles' experiments (not in the quick mode)
#   today   what a Python user picks today (Triton, torch.compile, JAX), added to python.json;
#           not in the quick mode, whose python.json names them as not run
#   report  bench.json (the two parts merged), report.md with its plots, and compare.md (this run
#           against the committed reference)
#
#   scripts/bench.sh [--quick] [--phases NAME,NAME,...] [cdl_bench flags, e.g. --benchmark_filter=tasks/]
#
# --quick runs the short sweeps, and leaves to a full run what its report names as left out (the JIT
# stages with the caches off, the articles' experiments, today's systems). --phases runs only the
# phases named (in the order above), each on what the earlier ones left in results/<device>/: a full
# run as calls of a few minutes each, or one phase again. A whole run starts by removing the files
# it writes, so that nothing of an earlier run is reported beside it. Without a GPU it says so and
# regenerates the reports of the committed reference results (reports/reference/<device>/) instead.
set -euo pipefail
cd "$(dirname "$0")/.."
all_phases=(build facts map suite noise peers today report)
selected=("${all_phases[@]}")
quick=()
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick); args+=(--cdl_quick) ;;
    --phases=*) IFS=, read -ra selected <<< "${1#--phases=}" ;;
    --phases) [ $# -ge 2 ] || { echo "bench: --phases needs a list, of: ${all_phases[*]}" >&2; exit 2; }
              IFS=, read -ra selected <<< "$2"; shift ;;
    *) args+=("$1") ;;
  esac
  shift
done
for p in "${selected[@]}"; do
  [[ " ${all_phases[*]} " == *" $p "* ]] \
    || { echo "bench: unknown phase '$p' (the phases: ${all_phases[*]})" >&2; exit 2; }
done
wanted() { [[ " ${selected[*]} " == *" $1 "* ]]; }

number=0
total=${#selected[@]}
echo "bench: phases: ${selected[*]}${quick:+ (quick)}" >&2
# Runs one phase: its name and what it does when it starts, its time when it ends.
phase() {
  local name=$1 what=$2 start=$SECONDS
  shift 2
  number=$((number + 1))
  echo "bench: [$number/$total] $name: $what" >&2
  local rc=0
  "$@" || rc=$?
  local ended="done"
  [ $rc -eq 0 ] || ended="exit status $rc"
  echo "bench: [$number/$total] $name: $ended in $((SECONDS - start)) s" >&2
  return $rc
}

source scripts/deps.sh
# Each object's SASS is written beside it as the build goes (cmake/ptxas_report.sh), for the facts.
build() { cmake --preset release -DBUILD_TESTING=OFF && CDL_KEEP_SASS=1 cmake --build --preset release; }
wanted build && phase build "configure and build the programs (release preset)" build
[ -x build/release/bench/cdl_bench ] \
  || { echo "bench: no build/release/bench/cdl_bench: run the build phase first" >&2; exit 2; }

python=$(sed -n 's/^CDL_PYTHON:FILEPATH=//p' build/release/CMakeCache.txt)
[ -n "$python" ] || python=/usr/bin/python3
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 \
  | tr -c 'A-Za-z0-9_.\n-' '_' || true)
if [ -z "$device" ]; then
  echo "bench: no GPU found (nvidia-smi lists none): nothing to measure on this machine." >&2
  echo "bench: regenerating the reports of the committed reference results instead." >&2
  for d in reports/reference/*/; do "$python" reports/report.py "$d"; done
  exit 0
fi
out="results/$device"
# The float64 references of the largest maps, computed once and shared by the phases and the tests
# (common/reference_cache.hpp; the tests' own cache, in the build tree).
export CDL_REFERENCE_CACHE="$PWD/build/release/reference-cache"
mkdir -p "$out"
if [ "${#selected[@]}" -eq "${#all_phases[@]}" ]; then
  (cd "$out" && rm -f bench.json bench.map.json bench.suite.json build_facts.json resources.json repeat.json \
    jit_cache_disabled.json python.json)
fi
bin=build/release/bench
status=0  # the worst exit status of a phase that failed but left the rest something to report
worse() { [ "$1" -le "$status" ] || status=$1; }

# The compiler's answers and the kernels' resources at once: one runs nvcc, the other cuobjdump.
facts() {
  local rc=0
  local start=$SECONDS
  { "$bin/cdl_build_facts" "$out/build_facts.json" > "$out/build_facts.log" 2>&1 \
      && echo "bench: facts: the compilers' answers in $((SECONDS - start)) s" >&2; } &
  local facts_pid=$!
  "$python" reports/resources.py build/release "$out/resources.json" --occupancy "$bin/cdl_occupancy" \
    --jit "$bin/cdl_jit_resources" || rc=$?
  echo "bench: facts: the kernels' resources in $((SECONDS - start)) s" >&2
  wait "$facts_pid" || { rc=$?; cat "$out/build_facts.log" >&2; }
  rm -f "$out/build_facts.log"
  return $rc
}
wanted facts && { phase facts "the compilers' answers and every kernel's resources" facts || worse 1; }

# cdl_bench writes its results file whole or not at all: interrupted (Ctrl-C), it keeps the finished
# benchmarks in <file>.interrupted.json and leaves an earlier file as it was. Exit status 3 means
# some benchmark failed: the report lists the failures first, so the run goes on to it.
part() {
  local rc=0
  "$bin/cdl_bench" --cdl_part="$1" --benchmark_out="$out/bench.$1.json" --benchmark_out_format=json \
    "${args[@]}" || rc=$?
  [ $rc -eq 3 ] && worse 3 && rc=0
  return $rc
}
wanted map && phase map "cdl_bench, the map workload" part map
wanted suite && phase suite "cdl_bench, the other workloads, the JIT stages and the tiered streams" part suite

# The run's own noise: a slice of the suite again, in a new process (the report's noise threshold).
# And the JIT stages with the compilers' driver caches off, beside the run's own (but for jit/parts/:
# every compile there is of a new text, which no cache answers, and the report reads them from the run;
# Google Benchmark's POSIX regex has no lookahead, so "not parts/" is spelled out).
repeat_filter='^map/(01_template_functor|03_switch|04_function_pointer.symbol|05_virtual|06_nvrtc_jit|'
repeat_filter+='08_expression_jit)/vec/op:(quadratic|sine)/type:f32/n:16777216/k:(1|16|256)/'
repeat_filter+='|^tasks/.*/layout:random/distinct:32/'
noise() {
  rm -f "$out/repeat.json" "$out/jit_cache_disabled.json"
  "$bin/cdl_bench" "${args[@]}" --benchmark_out="$out/repeat.json" --benchmark_out_format=json \
    --benchmark_filter="$repeat_filter" \
    > /dev/null || echo "bench: the repeat run failed; the report falls back to a fixed noise threshold" >&2
  if [ ${#quick[@]} -gt 0 ]; then
    echo "bench: noise: the JIT stages with the caches off are left to a full run (the report says so)" >&2
    return 0
  fi
  CUDA_CACHE_DISABLE=1 "$bin/cdl_bench" "${args[@]}" --benchmark_filter='^jit/([^p]|p[^a])' \
    --benchmark_out="$out/jit_cache_disabled.json" --benchmark_out_format=json > /dev/null \
    || echo "bench: the JIT stages with the caches off failed; the report leaves that column out" >&2
}
wanted noise && phase noise "a slice of the suite again, and the JIT stages with the caches off" noise

cdl_peers() {
  PYTHONPATH=bench/python "${CDL_PEERS_PYTHON:-python3}" -m cdl_peers --cdl-problem "$bin/cdl_problem" \
    --out "$out/python.json" "${quick[@]}" "$@"
}
peers() {
  rm -f "$out/python.json"  # never report an earlier run's peers beside this one
  # The quick mode's default names today's systems as not run; the full mode runs them in `today`.
  if [ ${#quick[@]} -gt 0 ]; then cdl_peers; else cdl_peers --systems cupy,numba,cuda_python,pycuda; fi
}
wanted peers && { phase peers "the articles' own systems from Python" peers || worse $?; }
today() {
  if [ ${#quick[@]} -gt 0 ]; then
    echo "bench: today: not in the quick mode (python.json names the systems as not run)" >&2
    return 0
  fi
  [ -f "$out/python.json" ] \
    || { echo "bench: today: no python.json: run the peers phase first" >&2; return 2; }
  cdl_peers --systems triton,torch,jax --add
}
wanted today && { phase today "Triton, torch.compile and JAX, added to python.json" today || worse $?; }

report() {
  local parts=()
  for p in map suite; do [ -f "$out/bench.$p.json" ] && parts+=("$out/bench.$p.json"); done
  if [ ${#parts[@]} -gt 0 ]; then
    "$python" reports/merge.py "$out/bench.json" "${parts[@]}" || return $?
  fi
  local rc=0
  "$python" reports/report.py "$out" || rc=$?
  # This run against the committed reference of the same GPU, or of the first GPU there is one of
  # when there is none for this one (reports/compare.py: B / A per benchmark; its exit status 1
  # means changes were found, which is what a comparison is for, not a failure of this script).
  local reference="reports/reference/$device"
  [ -d "$reference" ] || reference=$(ls -d reports/reference/*/ 2>/dev/null | head -1)
  if [ -n "$reference" ]; then
    echo "bench: comparing with the reference in $reference (another GPU's, if the name differs)"
    "$python" reports/compare.py "$reference" "$out" --out "$out/compare.md" \
      || { local c=$?; [ $c -eq 1 ] || echo "bench: the comparison with the reference failed ($c)" >&2; }
  fi
  return $rc
}
wanted report && { phase report "merge the parts, write the report and the comparison" report || worse $?; }
echo "bench: ${selected[*]} in $SECONDS s; results in $out/" >&2
exit $status
