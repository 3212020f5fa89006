#!/usr/bin/env bash
# Runs the GPU test suite (cdl_gpu_tests) under each of compute-sanitizer's four tools and fails
# on any finding:
#   memcheck   out-of-bounds and misaligned accesses, invalid frees, device-side leaks
#   racecheck  shared-memory hazards between threads of a block (the tiled and staged kernels)
#   synccheck  barriers where not every thread of the block arrives, and other invalid syncs
#   initcheck  reads of device memory that nothing wrote
#   scripts/sanitize.sh [BUILD_DIR] [GTEST_FILTER]    (defaults: build/release, every test)
# The four run at once (they are independent processes on one GPU); each writes
# $LOGS/sanitize-<tool>.log (LOGS defaults to ./sanitize_logs). The summary names, per tool, the
# tests run and the kernels launched under it, and the findings. Exit status 1 on any finding or
# failed test, 2 when the tool or the tests are missing, 0 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
# Left out: a test that times GPU work against a bound (instrumentation changes the timing, not
# the result) and the tests that provoke a failing CUDA call on purpose (the tools report it).
filter=${2:-*-Harness.EventTimingMeasuresGpuWork:Harness.OversizedAllocationSaysHowMuchIsFree}
tests="$build/tests/cdl_gpu_tests"
LOGS=${LOGS:-sanitize_logs}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "sanitize: compute-sanitizer not found (it comes with the CUDA Toolkit)" >&2; exit 2; }
[ -x "$tests" ] || { echo "sanitize: $tests not found: build the tests first (cmake --build --preset release)" >&2; exit 2; }
nvidia-smi -L > /dev/null 2>&1 || { echo "sanitize: no GPU visible: the sanitizer checks GPU code as it runs" >&2; exit 2; }
mkdir -p "$LOGS"
export CDL_JIT_CACHE_DIR="$build/jit-cache-sanitize"  # the JIT strategies compile under the tool too

declare -A pids
declare -A options=(
  [memcheck]="--leak-check full --padding 32"
  [racecheck]="--racecheck-report all"
  [synccheck]=""
  [initcheck]=""
)
for tool in memcheck racecheck synccheck initcheck; do
  # --kernel-name-exclude none: every kernel is checked; --print-limit: enough to read, not a flood.
  # shellcheck disable=SC2086
  "$sanitizer" --tool "$tool" ${options[$tool]} --error-exitcode 99 --print-limit 20 \
    --launch-timeout 0 --print-level info \
    "$tests" --gtest_filter="$filter" > "$LOGS/sanitize-$tool.log" 2>&1 &
  pids[$tool]=$!
done
status=0
printf '%-10s %6s %8s %8s %9s  %s\n' tool rc tests skipped findings "kernels launched"
for tool in memcheck racecheck synccheck initcheck; do
  wait "${pids[$tool]}"; rc=$?
  log="$LOGS/sanitize-$tool.log"
  passed=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?.*/\1/p' "$log" | tail -1)
  skipped=$(sed -nE 's/^\[  SKIPPED \] ([0-9]+) tests?.*/\1/p' "$log" | tail -1)
  failed=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?.*/\1/p' "$log" | tail -1)
  findings=$(sed -nE 's/^========= (ERROR|LEAK|RACECHECK|WARN)[^0-9]*([0-9]+) (errors|hazards).*/\2/p' "$log" | tail -1)
  summary=$(grep -E '^========= (ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY)' "$log" | tr '\n' ' ')
  # --print-level info lists each kernel launch the tool saw; count distinct kernels and launches.
  launches=$(grep -c 'Kernel launch' "$log" || true)
  printf '%-10s %6s %8s %8s %9s  %s\n' "$tool" "$rc" "${passed:-?}" "${skipped:-0}" "${findings:-?}" "$launches"
  echo "           ${summary:-no summary line: see $log}"
  if [ "$rc" -ne 0 ] || [ -n "$failed" ] || [ -z "$passed" ]; then
    status=1
    grep -E '^========= (Invalid|Race|Barrier|Uninitialized|Leaked|Program hit|  at )|^\[  FAILED  \]' "$log" | head -20
  fi
done
exit $status
