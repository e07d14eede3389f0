#!/usr/bin/env bash
# The full check: dependencies, the compile-cost guard, release build + tests (examples and tools
# built too; the install/consumer check and the soak are among the tests), ASan/UBSan build +
# tests, ThreadSanitizer build + the threads tests, then the fuzzers for a bounded time.
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

start=$SECONDS
# Each section's header says when it began (seconds since the start): the log times the phases.
section() { printf '\n==== %s (at %d s) ====\n' "$*" "$((SECONDS - start))"; }

section "dependencies"
bash scripts/install-deps.sh

section "compile cost: a file using infer::Net must compile within 3x its target (30 s, 1.5 GB)"
bash scripts/compile-cost.sh --guard

section "release: configure (benchmarks are not built here: the demo builds and runs them)"
cmake --preset release -DINFER_BUILD_BENCHMARKS=OFF
section "release: build (tests, examples, tools; -j2)"
cmake --build --preset release
section "release: test"
ctest --preset release

section "asan: configure"
cmake --preset asan
section "asan: build (-j2)"
cmake --build --preset asan
section "asan: test"
ctest --preset asan

section "tsan: configure (the threads tests under ThreadSanitizer, kernels without OpenMP)"
cmake --preset tsan
section "tsan: build (-j2)"
cmake --build --preset tsan
section "tsan: test"
ctest --preset tsan

section "fuzz: .param, .bin and image readers (libFuzzer, ASan + UBSan, 40 s each)"
FUZZ_SECONDS=${FUZZ_SECONDS:-40} bash scripts/fuzz.sh

section "summary"
echo "test.sh: ALL PASSED (compile-cost guard, release tests incl. the install check and the soak," \
  "asan tests, tsan tests, fuzzers) in $((SECONDS - start)) s"
