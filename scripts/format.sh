#!/usr/bin/env bash
# Formats the C++/CUDA sources with .clang-format (clang-format 14, Debian's clang-format-14) and the
# Python sources with black (pyproject.toml; Debian's black), or with --check says which files are not
# formatted and exits 1 (.ci/run runs the check).
set -euo pipefail
cd "$(dirname "$0")/.."
tool=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$tool" ] \
  || { echo "format: clang-format not found (Debian: apt-get install clang-format-14)" >&2; exit 2; }
command -v black >/dev/null || { echo "format: black not found (Debian: apt-get install black)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cu' '*.cuh' '*.cpp' '*.hpp')
mapfile -t python < <(git ls-files '*.py')
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do "$tool" "$f" | cmp -s - "$f" || bad+=("$f"); done
  mapfile -t -O "${#bad[@]}" bad < <(black --check "${python[@]}" 2>&1 | sed -n 's/^would reformat //p')
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: ${#bad[@]} files are not formatted (scripts/format.sh formats them): ${bad[*]}" >&2
    exit 1
  fi
  # Neither formatter breaks a long comment or string, so the column limit is checked on its own,
  # over the scripts and the CMake files too.
  long=$(git ls-files '*.cu' '*.cuh' '*.cpp' '*.hpp' '*.py' '*.sh' '*.cmake' '*CMakeLists.txt' .ci/run \
    | python3 -c 'import sys
for f in sys.stdin.read().split():
    for i, line in enumerate(open(f, encoding="utf-8"), 1):
        if len(line.rstrip("\n")) > 110: print(f"{f}:{i}")')
  if [ -n "$long" ]; then
    echo "format: lines over 110 columns (.clang-format's limit, and black's):" $long >&2
    exit 1
  fi
  echo "format: ${#files[@]} C++/CUDA files formatted ($("$tool" --version | head -1))," \
    "${#python[@]} Python files ($(black --version | head -1)), no line over 110 columns"
else
  "$tool" -i "${files[@]}"
  black -q "${python[@]}"
fi
