#!/usr/bin/env bash
# Installs a configured infer build tree into a temporary prefix, then configures, builds and runs
# tests/consumer against it: proves find_package(infer), infer::infer (a header-only static graph)
# and infer::runtime (a Net user in compiled mode) work for a user. With
# INFER_CHECK_RUNTIME_FROM_SOURCE=1 the Net user links a runtime compiled in the consumer's build
# from the installed sources (infer_add_runtime) instead.
# Usage: scripts/check-install.sh [build-dir]   (default: build/release)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$(cd "${1:-$root/build/release}" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/infer-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

generator=()
if command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi

echo "check-install: installing $build_dir into $prefix"
cmake --install "$build_dir" --prefix "$prefix"

echo "check-install: building tests/consumer against $prefix"
cmake -S "$root/tests/consumer" -B "$work/consumer" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCONSUMER_RUNTIME_FROM_SOURCE="${INFER_CHECK_RUNTIME_FROM_SOURCE:-0}"
cmake --build "$work/consumer" -j2

"$work/consumer/net_user"
"$work/consumer/static_graph"
echo "check-install: the consumers built against the installed package and ran OK"
