#!/usr/bin/env bash
# Runs the GPU test suite (cdl_gpu_tests) under each of compute-sanitizer's four tools and fails
# on any finding:
#   memcheck   out-of-bounds and misaligned accesses, invalid frees, leaks (of device and
#              page-locked memory, at exit)
#   racecheck  shared-memory hazards between threads of a block (the tiled and staged kernels)
#   synccheck  barriers where not every thread of the block arrives, and other invalid syncs
#   initcheck  reads of device memory that nothing wrote
#
#   scripts/sanitize.sh [BUILD_DIR] [GTEST_FILTER]    (defaults: build/release, every test)
#   TOOLS="racecheck" SHARDS=8 scripts/sanitize.sh    (some tools; the suite in 8 parallel pieces)
#   TOOLS=racecheck SHARDS=45 SHARD_RANGE=0-14 scripts/sanitize.sh
#                                          (pieces 0 to 14 of 45 only: racecheck over the whole suite
#                                          takes longer than one call of a lent GPU machine, so it
#                                          runs as three such calls, 0-14, 15-29 and 30-44)
#
# A tool slows the tests 10 to 100 times, mostly on the host, so each tool runs the suite in
# SHARDS pieces at once (GoogleTest's sharding; default: about 16 processes in all, one per core
# of the machines we use). Logs: $LOGS/<tool>.<shard>.log (LOGS defaults to ./sanitize_logs). The summary
# gives, per tool, the tests that passed and were skipped and the findings, and the tests the tool
# cannot check (named, with the reason; they run under the tools that can); then the kernels those
# tests run, counted by a CUPTI census (tests/kernel_census.cpp) preloaded into the same tests run
# once more without a tool, at the same time (CUPTI sees nothing under a tool). Exit status 1 on
# any finding, failed test or tool that did not finish, 2 when the tool, the tests or a GPU is
# missing, 0 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
# Left out: a test that times GPU work against a bound (instrumentation changes the timing, not
# the result) and the test that provokes a failing allocation on purpose (the tools report it).
filter=${2:-*-Harness.EventTimingMeasuresGpuWork:Harness.OversizedAllocationSaysHowMuchIsFree}
tools=(${TOOLS:-memcheck racecheck synccheck initcheck})
# An odd number of shards: GoogleTest deals tests out in turn, and the heaviest ones (the 1080p
# blur of each image strategy) come every fourth test; four shards would give them all to one.
shards=${SHARDS:-$(( 16 / ${#tools[@]} | 1 ))}
range=${SHARD_RANGE:-0-$((shards - 1))}
first=${range%-*} last=${range#*-}
[[ "$first" =~ ^[0-9]+$ && "$last" =~ ^[0-9]+$ && $first -le $last && $last -lt $shards ]] \
  || { echo "sanitize: SHARD_RANGE=$range is not FIRST-LAST within the $shards shards" >&2; exit 2; }
run_shards=$((last - first + 1))
tests="$build/tests/cdl_gpu_tests"
census="$build/tests/libcdl_kernel_census.so"
LOGS=${LOGS:-sanitize_logs}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
missing() { echo "sanitize: $1" >&2; exit 2; }
[ -x "$sanitizer" ] || missing "compute-sanitizer not found (it comes with the CUDA Toolkit)"
[ -x "$tests" ] || missing "$tests not found: build the tests first (cmake --build --preset release)"
nvidia-smi -L > /dev/null 2>&1 || missing "no GPU visible: the sanitizer checks GPU code as it runs"
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log "$LOGS"/*.kernels.*
export CDL_JIT_CACHE_DIR="$build/jit-cache-sanitize"  # the JIT strategies compile under the tool too
# The float64 references the map's tests share, computed once as under ctest (without it each
# process computes them again, and the CPU, not the tool, sets the time).
export CDL_REFERENCE_CACHE="$build/reference-cache"

declare -A options=(
  [memcheck]="--leak-check full --padding 32"
  [racecheck]="--racecheck-report all"
  [synccheck]=""
  [initcheck]=""
)
# Tests a tool cannot check, left out of that tool's run and named in the summary with the reason;
# each runs under the other tools.
# racecheck, synccheck and initcheck do not support CUDA Dynamic Parallelism ("not supported by
# the selected tool", counted as an error): strategy 15 launches kernels from a kernel.
declare -A pattern=([15_device_launch]='*15_device_launch*')
declare -A why=(
  [15_device_launch]="CUDA Dynamic Parallelism is not supported by racecheck, synccheck and initcheck"
)
declare -A left_out=([racecheck]=15_device_launch [synccheck]=15_device_launch [initcheck]=15_device_launch)
# Tests each tool runs in a process of its own once the shards are done, alone on the GPU: strategy
# 14's conditional graphs. On an H100 memcheck reported reads out of bounds under cudaGraphLaunch in
# them while other tool processes shared the GPU, and none when they ran alone, nor in every
# strategy's edge-size tests in one process (the README gives the runs).
alone='*14_graph_switch*'
# The filter without the tests of a pattern (GoogleTest: POSITIVE-NEGATIVE:NEGATIVE...).
without() { case "$1" in *-*) echo "$1:$2" ;; *) echo "$1-$2" ;; esac; }
listed() {  # the full names of the tests a filter selects
  "$tests" --gtest_list_tests --gtest_filter="$1" | awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }'
}
for tool in "${tools[@]}"; do
  [ -n "${options[$tool]+known}" ] || missing "unknown tool '$tool' (valid: ${!options[*]})"
done
total_tests=$(GTEST_TOTAL_SHARDS=1 GTEST_SHARD_INDEX=0 listed "$filter" | wc -l)
echo "sanitize: ${tools[*]} over $tests (filter $filter, $total_tests tests), $shards shards per tool" \
  "$([ "$run_shards" -eq "$shards" ] || echo "(shards $range of them here)")"
[ "$run_shards" -eq "$shards" ] || total_tests=$(( (total_tests * run_shards + shards - 1) / shards ))
pids=()
start=$SECONDS
for ((shard = first; shard <= last; ++shard)); do
  export GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard
  for tool in "${tools[@]}"; do
    tool_filter=$(without "$filter" "$alone")
    for name in ${left_out[$tool]:-}; do tool_filter=$(without "$tool_filter" "${pattern[$name]}"); done
    # shellcheck disable=SC2086
    "$sanitizer" --tool "$tool" ${options[$tool]} --error-exitcode 99 --print-limit 100 --launch-timeout 0 \
      "$tests" --gtest_filter="$tool_filter" > "$LOGS/$tool.$shard.log" 2>&1 &
    pids+=($!)
  done
  [ -f "$census" ] && LD_PRELOAD=$(realpath "$census") CDL_KERNEL_CENSUS="$LOGS/census.$shard.kernels" \
    "$tests" --gtest_filter="$filter" > "$LOGS/census.$shard.log" 2>&1 &
done
# How far along, every 30 s: the tests the tools have finished.
said=$SECONDS
while sleep 2; do
  running=0
  for pid in "${pids[@]}"; do kill -0 "$pid" 2> /dev/null && running=$((running + 1)); done
  [ "$running" -gt 0 ] || break
  [ $((SECONDS - said)) -ge 30 ] || continue
  said=$SECONDS
  finished_tests=$(cat "${tools[@]/#/$LOGS/}".*.log 2> /dev/null \
    | grep -cE '^\[ +(OK|FAILED|SKIPPED) +\] .*\(')
  echo "sanitize: $finished_tests of about $((total_tests * ${#tools[@]})) test runs done," \
    "$running of ${#pids[@]} processes left, $((SECONDS - start)) s" >&2
done
for pid in "${pids[@]}"; do wait "$pid"; done
wait  # the census
echo "sanitize: the shards finished in $((SECONDS - start)) s" >&2
if [ "$last" -eq $((shards - 1)) ]; then  # once per whole run: with its last shard
  for tool in "${tools[@]}"; do
    alone_filter=$alone
    for name in ${left_out[$tool]:-}; do alone_filter=$(without "$alone_filter" "${pattern[$name]}"); done
    echo "sanitize: $alone under $tool, alone on the GPU" >&2
    # shellcheck disable=SC2086
    GTEST_TOTAL_SHARDS=1 GTEST_SHARD_INDEX=0 "$sanitizer" --tool "$tool" ${options[$tool]} \
      --error-exitcode 99 --print-limit 100 --launch-timeout 0 "$tests" --gtest_filter="$alone_filter" \
      > "$LOGS/$tool.alone.log" 2>&1
  done
  run_shards=$((run_shards + 1))  # each tool's logs: its shards and the process alone
fi
echo "sanitize: the tools finished in $((SECONDS - start)) s" >&2

sum() { awk '{ s += $1 } END { print s + 0 }'; }
status=0
printf '%-10s %7s %7s %7s %9s\n' tool passed skipped failed findings
for tool in "${tools[@]}"; do
  logs=("$LOGS/$tool".*.log)
  passed=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?.*/\1/p' "${logs[@]}" | sum)
  skipped=$(sed -nE 's/^\[  SKIPPED \] ([0-9]+) tests?.*/\1/p' "${logs[@]}" | sum)
  failed=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?.*/\1/p' "${logs[@]}" | sum)
  # A tool ends with "ERROR SUMMARY: N errors", racecheck with "RACECHECK SUMMARY: N hazards
  # displayed (E errors, W warnings)": every hazard counts.
  summary='^========= (ERROR SUMMARY: ([0-9]+) errors?|RACECHECK SUMMARY: ([0-9]+) hazards?).*'
  finished=$(grep -lE "$summary" "${logs[@]}" | wc -l)
  findings=$(sed -nE "s/$summary/"'\2\3/p' "${logs[@]}" | sum)
  printf '%-10s %7s %7s %7s %9s\n' "$tool" "$passed" "$skipped" "$failed" "$findings"
  for name in ${left_out[$tool]:-}; do
    count=$(GTEST_TOTAL_SHARDS=1 GTEST_SHARD_INDEX=0 listed "${pattern[$name]}" | wc -l)
    echo "           $count tests left out ($name): ${why[$name]}"
  done
  [ -f "$LOGS/$tool.alone.log" ] && echo "           $(grep -cE '^\[ +(OK|FAILED|SKIPPED) +\] .*\(' \
    "$LOGS/$tool.alone.log") tests ($alone) run in a process of their own, alone on the GPU"
  if [ "$findings" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ] \
     || [ "$finished" -ne "$run_shards" ]; then
    status=1
    [ "$finished" -ne "$run_shards" ] \
      && echo "           $((run_shards - finished)) of $run_shards shards did not finish:" \
              "see $LOGS/$tool.*.log"
    kinds='Invalid|Race|Barrier|Uninitialized|Leaked|Host API|Program hit|Error|    at '
    grep -hE "^========= ($kinds)|^\[  FAILED  \]" \
      "${logs[@]}" | head -20
  fi
done

# The kernels: distinct names and runs over the census's shards; a census that failed, or that saw
# no kernel, says so instead of a count.
censuses=("$LOGS"/census.*.kernels.*)
if [ ! -f "${censuses[0]}" ]; then
  echo "kernels: no census ($census not built, CUPTI not found, or it wrote nothing)"
elif grep -q '^census failed' "${censuses[@]}"; then
  echo "kernels: no count: $(grep -h '^census failed' "${censuses[@]}" | head -1)"
else
  cat "${censuses[@]}" > "$LOGS/kernels.txt"
  census_passed=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?.*/\1/p' "$LOGS"/census.*.log | sum)
  echo "kernels: $(cut -d' ' -f2- "$LOGS/kernels.txt" | sort -u | grep -c .) distinct," \
    "$(cut -d' ' -f1 "$LOGS/kernels.txt" | sum) runs in the same tests ($census_passed passed)" \
    "under a CUPTI census," \
    "without a tool: $LOGS/kernels.txt"
fi
exit $status
