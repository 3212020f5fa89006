#!/usr/bin/env bash
# Formats the C++/CUDA sources with .clang-format (clang-format 14, Debian's clang-format-14), or
# with --check says which files are not formatted and exits 1 (.ci/run runs the check).
set -euo pipefail
cd "$(dirname "$0")/.."
tool=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$tool" ] || { echo "format: clang-format not found (Debian: apt-get install clang-format-14)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cu' '*.cuh' '*.cpp' '*.hpp')
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do "$tool" "$f" | cmp -s - "$f" || bad+=("$f"); done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: ${#bad[@]} files are not formatted (scripts/format.sh formats them): ${bad[*]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted ($("$tool" --version | head -1))"
else
  "$tool" -i "${files[@]}"
fi
