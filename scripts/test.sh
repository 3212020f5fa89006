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
# one per core at once, at least four, and two more, so that every shard starts beside the two
# longest lessons' builds.
jobs=$(nproc 2>/dev/null || echo 4)
[ "$jobs" -ge 4 ] || jobs=4
jobs=$((jobs + 2))
ctest --preset "$preset" -j "$jobs" "$@"
