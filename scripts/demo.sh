#!/usr/bin/env bash
# Main demo: builds the conversion-kernel benchmarks in the release preset and prints them as a
# console table (time per iteration and the bytes/s each benchmark measures). Extra arguments go to
# the benchmark, e.g. --benchmark_filter=f16.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

section() { printf '\n==== %s ====\n' "$*"; }

section "dependencies"
bash scripts/install-deps.sh

section "release: configure"
cmake --preset release
section "release: build bench_convert (-j2)"
cmake --build --preset release --target bench_convert

section "bench_convert"
build/release/benchmarks/bench_convert --benchmark_format=console "$@"
