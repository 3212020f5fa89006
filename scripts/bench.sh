#!/usr/bin/env bash
# Builds the release configuration and runs the benchmark suite on this machine's GPU,
# writing results/<device>/bench.json (Google Benchmark JSON with the environment in
# "context"). Pass --quick for the short sweep; other arguments go to the benchmark program.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
cmake --preset release
cmake --build --preset release

args=()
for a in "$@"; do [ "$a" = --quick ] && args+=(--cdl_quick) || args+=("$a"); done

device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -c 'A-Za-z0-9_.\n-' '_' || true)
if [ -z "$device" ]; then
  echo "bench: no GPU found (nvidia-smi lists none); nothing to measure on this machine" >&2
  exit 1
fi
out="results/$device"
mkdir -p "$out"
# Google Benchmark writes the file at the end; write to a temporary name and move it into place
# so an interrupted run never leaves a half-written results file.
./build/release/bench/cdl_bench --benchmark_out="$out/bench.json.partial" --benchmark_out_format=json "${args[@]}"
mv "$out/bench.json.partial" "$out/bench.json"
echo "bench: results in $out/bench.json"
/usr/bin/env python3 reports/summary.py "$out/bench.json"
