#!/usr/bin/env bash
# Builds everything and runs the whole test suite. Without a GPU, the CPU tests run and the
# GPU tests are reported as skipped, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
preset=${CDL_PRESET:-release}
cmake --preset "$preset" -DBUILD_TESTING=ON
cmake --build --preset "$preset"
# A ctest test is a process (the GPU tests run as a shard per core: tests/CMakeLists.txt says why):
# two per core at once, at least four: the shards run at a lower priority (nice), and the other tests
# (the lessons' builds, the CPU tests) take the cores beside them rather than wait for a slot.
jobs=$((2 * $(nproc 2>/dev/null || echo 2)))
[ "$jobs" -ge 4 ] || jobs=4
ctest --preset "$preset" -j "$jobs" "$@"
