#!/usr/bin/env bash
# Compile cost of infer's heaviest users, one file at a time (nothing else should run): wall time
# and peak memory (/usr/bin/time) of g++ -O3 -march=native on
#   net_user       a file that constructs and runs infer::Net (benchmarks/compile_cost/net_user.cpp)
#   resnet50       a generated ResNet-50 static graph with load and forward called
#   mobilenet_v2   the same for MobileNetV2
#   <test files>   the test files that take longest to compile (INFER_COST_TEST, space-separated;
#                  default: test_convolution_depthwise.cpp, the longest before the fusing layers'
#                  kernels moved to instance files, and test_binary_op.cpp, the longest after)
# Targets: net_user <= 10 s and 500 MB, resnet50 <= 30 s and 1 GB; the last two are reported only.
#
# Usage: scripts/compile-cost.sh [--guard] [--only NAME...] [--header-only]
#   --guard        compile net_user only and fail above three times its target (30 s or 1.5 GB):
#                  CI's regression guard, which machine noise cannot trip
#   --header-only  compile net_user with INFER_HEADER_ONLY (Net's layer table in the file itself)
# Needs infer-gen for the generated graphs: built in $INFER_COST_BUILD (default build/release).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

guard=0
header_only=0
only=()
while (($#)); do
  case "$1" in
    --guard) guard=1 ;;
    --header-only) header_only=1 ;;
    --only) shift; only+=("$1") ;;
    *) echo "compile-cost: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
((guard)) && only=(net_user)
((${#only[@]})) || only=(net_user resnet50 mobilenet_v2 test)

cxx=${CXX:-g++}
read -r -a test_files <<<"${INFER_COST_TEST:-tests/test_convolution_depthwise.cpp tests/test_binary_op.cpp}"
build=${INFER_COST_BUILD:-build/release}
work=$(mktemp -d "${TMPDIR:-/tmp}/infer-cost.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The built-in layer list <infer/layers/builtin.hpp>, generated as CMake's configure does.
cmake -DLAYERS_DIR="$root/include/infer/layers" -DOUT_DIR="$work/generated" \
  -P "$root/cmake/InferLayers.cmake"
flags=(-std=c++20 -O3 -DNDEBUG -march=native -fopenmp -I"$root/include" -I"$work/generated" -c
       -o "$work/out.o")

# name, seconds, MB of the last measure()
results=()
measure() {
  local name=$1
  shift
  if ! /usr/bin/time -f '%e %M' -o "$work/time" "$cxx" "${flags[@]}" "$@" 2>"$work/err"; then
    cat "$work/err" >&2
    echo "compile-cost: $name failed to compile" >&2
    exit 1
  fi
  read -r secs kb <"$work/time"
  local mb=$((kb / 1024))
  results+=("$name $secs $mb")
  printf '%-40s %8.1f s %7d MB\n' "$name" "$secs" "$mb"
}

wants() { [[ " ${only[*]} " == *" $1 "* ]]; }

gen_model() {
  local model=$1
  if [[ ! -x "$build/tools/infer-gen" ]]; then
    [[ -f "$build/build.ninja" ]] || cmake --preset release >/dev/null
    cmake --build "$build" --target infer_gen >/dev/null
  fi
  "$build/tools/infer-gen" "models/$model.param" -o "$work/$model.hpp"
}

echo "compile-cost: $($cxx --version | head -n1), -O3 -march=native, $(nproc) cores"
if wants net_user; then
  extra=()
  label=net_user
  if ((header_only)); then
    extra=(-DINFER_HEADER_ONLY)
    label="net_user (INFER_HEADER_ONLY)"
  fi
  measure "$label" "${extra[@]}" benchmarks/compile_cost/net_user.cpp
fi
for model in resnet50 mobilenet_v2; do
  if wants "$model"; then
    gen_model "$model"
    measure "$model (generated static graph)" -I"$work" -DINFER_COST_MODEL="$model" \
      -fconstexpr-ops-limit=1073741824 benchmarks/compile_cost/static_graph_user.cpp
  fi
done
if wants test; then
  for test_file in "${test_files[@]}"; do
    measure "$test_file" -I"$root/tests" "$test_file"
  done
fi

if ((guard)); then
  read -r _ secs mb <<<"${results[0]}"
  if awk -v s="$secs" -v m="$mb" 'BEGIN { exit !(s > 30 || m > 1536) }'; then
    echo "compile-cost: GUARD FAILED: net_user took ${secs} s and ${mb} MB (limit 30 s, 1536 MB:" \
      "three times the 10 s / 500 MB target)" >&2
    exit 1
  fi
  echo "compile-cost: guard passed (net_user ${secs} s, ${mb} MB; limit 30 s, 1536 MB)"
fi
