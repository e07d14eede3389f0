#!/usr/bin/env bash
# Main demo: builds the examples and the conversion-kernel benchmarks in the release preset, runs
# the static-graph examples (each prints its composed graph and checks its result), then prints the
# benchmark table. Extra arguments go to the benchmark, e.g. --benchmark_filter=f16.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

section() { printf '\n==== %s ====\n' "$*"; }

section "dependencies"
bash scripts/install-deps.sh

section "release: configure"
cmake --preset release
section "release: build the examples and bench_convert (-j2)"
cmake --build --preset release --target example_static_graph example_custom_layer bench_convert

section "examples/static_graph"
build/release/examples/static_graph build/release/static_graph.dot
section "examples/custom_layer"
build/release/examples/custom_layer

section "bench_convert"
build/release/benchmarks/bench_convert --benchmark_format=console "$@"
