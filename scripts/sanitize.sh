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
#
# A tool slows the tests 10 to 100 times, mostly on the host, so each tool runs the suite in
# SHARDS pieces at once (GoogleTest's sharding; default: 16 processes in all, one per core of the
# machines we use). Logs: $LOGS/<tool>.<shard>.log (LOGS defaults to ./sanitize_logs). The summary
# gives, per tool, the tests that passed and were skipped, the findings, and the kernels the tool
# checked: distinct kernels and kernel runs, counted by the CUPTI census (tests/kernel_census.cpp)
# preloaded into the same processes ($LOGS/<tool>.<shard>.kernels.<pid>). Exit status 1 on any
# finding, failed test or tool that did not finish, 2 when the tool, the tests or a GPU is
# missing, 0 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
# Left out: a test that times GPU work against a bound (instrumentation changes the timing, not
# the result) and the test that provokes a failing allocation on purpose (the tools report it).
filter=${2:-*-Harness.EventTimingMeasuresGpuWork:Harness.OversizedAllocationSaysHowMuchIsFree}
tools=(${TOOLS:-memcheck racecheck synccheck initcheck})
shards=${SHARDS:-$(( (16 + ${#tools[@]} - 1) / ${#tools[@]} ))}
tests="$build/tests/cdl_gpu_tests"
census="$build/tests/libcdl_kernel_census.so"
LOGS=${LOGS:-sanitize_logs}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "sanitize: compute-sanitizer not found (it comes with the CUDA Toolkit)" >&2; exit 2; }
[ -x "$tests" ] || { echo "sanitize: $tests not found: build the tests first (cmake --build --preset release)" >&2; exit 2; }
nvidia-smi -L > /dev/null 2>&1 || { echo "sanitize: no GPU visible: the sanitizer checks GPU code as it runs" >&2; exit 2; }
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log "$LOGS"/*.kernels.*
preload=()
[ -f "$census" ] && preload=(--preload-library "$(realpath "$census")")
export CDL_JIT_CACHE_DIR="$build/jit-cache-sanitize"  # the JIT strategies compile under the tool too

declare -A options=(
  [memcheck]="--leak-check full --padding 32"
  [racecheck]="--racecheck-report all"
  [synccheck]=""
  [initcheck]=""
)
echo "sanitize: ${tools[*]} over $tests (filter $filter), $shards shards per tool"
pids=()
for tool in "${tools[@]}"; do
  for ((shard = 0; shard < shards; ++shard)); do
    # shellcheck disable=SC2086
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard CDL_KERNEL_CENSUS="$LOGS/$tool.$shard.kernels" \
      "$sanitizer" --tool "$tool" ${options[$tool]} "${preload[@]}" --error-exitcode 99 --print-limit 100 \
      --launch-timeout 0 "$tests" --gtest_filter="$filter" > "$LOGS/$tool.$shard.log" 2>&1 &
    pids+=($!)
  done
done
for pid in "${pids[@]}"; do wait "$pid"; done

sum() { awk '{ s += $1 } END { print s + 0 }'; }
status=0
printf '%-10s %7s %7s %7s %9s %8s %9s\n' tool passed skipped failed findings kernels 'kernel runs'
for tool in "${tools[@]}"; do
  logs=("$LOGS/$tool".*.log)
  passed=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?.*/\1/p' "${logs[@]}" | sum)
  skipped=$(sed -nE 's/^\[  SKIPPED \] ([0-9]+) tests?.*/\1/p' "${logs[@]}" | sum)
  failed=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?.*/\1/p' "${logs[@]}" | sum)
  finished=$(grep -l '^========= ERROR SUMMARY' "${logs[@]}" | wc -l)
  # Every tool's "ERROR SUMMARY: N errors", and racecheck's warnings (hazards it does not call errors).
  findings=$(sed -nE -e 's/^========= ERROR SUMMARY: ([0-9]+) errors?.*/\1/p' \
    -e 's/^========= RACECHECK SUMMARY: .*, ([0-9]+) warnings?\).*/\1/p' "${logs[@]}" | sum)
  censuses=("$LOGS/$tool".*.kernels.*)
  if [ -f "${censuses[0]}" ] && ! grep -q '^census failed' "${censuses[@]}"; then
    kernels=$(cut -d' ' -f2- "${censuses[@]}" | sort -u | wc -l)
    runs=$(cut -d' ' -f1 "${censuses[@]}" | sum)
  else
    kernels='?' runs='?'
  fi
  printf '%-10s %7s %7s %7s %9s %8s %9s\n' "$tool" "$passed" "$skipped" "$failed" "$findings" "$kernels" "$runs"
  [ "$kernels" = '?' ] && { grep -h '^census failed' "${censuses[@]}" 2>/dev/null | sort | uniq -c | head -3 \
                            || echo "           no kernel census: $census not built (no CUPTI) or not written"; }
  if [ "$findings" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ] || [ "$finished" -ne "$shards" ]; then
    status=1
    [ "$finished" -ne "$shards" ] && echo "           $((shards - finished)) of $shards shards did not finish: see $LOGS/$tool.*.log"
    grep -hE '^========= (Invalid|Race|Barrier|Uninitialized|Leaked|Program hit|Error|    at )|^\[  FAILED  \]' \
      "${logs[@]}" | head -20
  fi
done
exit $status
