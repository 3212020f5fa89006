#!/usr/bin/env bash
# Builds everything and runs the whole test suite. Without a GPU, the CPU tests run and the
# GPU tests are reported as skipped, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
preset=${CDL_PRESET:-release}
cmake --preset "$preset" -DBUILD_TESTING=ON
cmake --build --preset "$preset"
ctest --preset "$preset" "$@"
