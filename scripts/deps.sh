#!/usr/bin/env bash
# Installs what the suite needs from Debian/Ubuntu packages when it is missing (as root, or
# through sudo when it can), else names the packages. The CUDA Toolkit itself (nvcc, NVRTC,
# nvJitLink, cuBLAS) is not a Debian package here: it must already be installed.
set -euo pipefail

need=()
have_header() { [ -e "/usr/include/$1" ] || [ -e "/usr/local/include/$1" ]; }
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
have_header benchmark/benchmark.h || need+=(libbenchmark-dev)
have_header gtest/gtest.h || need+=(libgtest-dev)
have_header nlohmann/json.hpp || need+=(nlohmann-json3-dev)
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null && ! python3 -c 'import matplotlib' 2>/dev/null; then
  need+=(python3-matplotlib)
fi
# CI also checks the formatting (scripts/format.sh --check), with Debian's clang-format-14 and black.
[ "${CDL_CI:-}" != 1 ] || command -v clang-format-14 >/dev/null || need+=(clang-format-14)
[ "${CDL_CI:-}" != 1 ] || command -v black >/dev/null || need+=(black)

if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  if { [ -z "$sudo" ] || $sudo true 2>/dev/null; } && command -v apt-get >/dev/null; then
    echo "deps: installing ${need[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "deps: missing ${need[*]}; install them (apt-get install ${need[*]}) and run again" >&2
    exit 1
  fi
fi

if ! command -v nvcc >/dev/null; then
  for d in /usr/local/cuda/bin /opt/cuda/bin; do [ -x "$d/nvcc" ] && export PATH="$PATH:$d"; done
fi
command -v nvcc >/dev/null \
  || { echo "deps: nvcc not found: install the CUDA Toolkit (13.0 or newer)" >&2; exit 1; }
