#!/usr/bin/env bash
# Nsight Compute's counters for the suite's kernels (the default set, bench/profile.cpp: every
# strategy's map kernel, scalar and vec, at k = 1 and 64, and 01's, 16's and 17's on the square and the
# threshold; tasks' per-element switch, table and virtual kernels, uniform and random; the objects
# workload; the tiled GEMM of every strategy; the blur, global and tiled), one validated
# launch each, into results/<device>/profile.json beside bench.json; reports/report.py then adds
# its sections. Needs ncu and permission to read the counters (root, or the driver's
# NVreg_RestrictProfilingToAdminUsers=0); says so and exits 2 otherwise.
#   scripts/profile.sh [--only SUBSTRING]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release > /dev/null
cmake --build --preset release --target cdl_profile
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 \
  | tr -c 'A-Za-z0-9_.\n-' '_' || true)
if [ -z "$device" ]; then
  echo "profile: no GPU found (nvidia-smi lists none): nothing to profile on this machine." >&2
  exit 2
fi
mkdir -p "results/$device"
python=$(sed -n 's/^CDL_PYTHON:FILEPATH=//p' build/release/CMakeCache.txt)
"${python:-python3}" reports/profile.py build/release "results/$device/profile.json" "$@"
