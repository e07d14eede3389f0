#!/usr/bin/env bash
# The full check: dependencies, release build + tests (examples and tools built too),
# ASan/UBSan build + tests, the fuzzers for a bounded time, then the install/consumer check.
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

section() { printf '\n==== %s ====\n' "$*"; }
start=$SECONDS

section "dependencies"
bash scripts/install-deps.sh

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

section "fuzz: .param and .bin readers (libFuzzer, ASan + UBSan, 60 s each)"
FUZZ_SECONDS=${FUZZ_SECONDS:-60} bash scripts/fuzz.sh

section "install: consumer of the installed package"
bash scripts/check-install.sh build/release

section "summary"
echo "test.sh: ALL PASSED (release tests, asan tests, fuzzers, install check) in $((SECONDS - start)) s"
