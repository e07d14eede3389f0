#!/usr/bin/env bash
# Installs infer's build, test and benchmark dependencies on Debian 12. Idempotent: when every
# package is already installed it returns without touching apt.
set -euo pipefail

packages=(
  build-essential cmake ninja-build g++
  libxsimd-dev libfmt-dev catch2 libbenchmark-dev
  libvulkan-dev glslc mesa-vulkan-drivers
  clang-14 libclang-rt-14-dev
  ccache time
  libpng-dev libturbojpeg0-dev
)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: missing ${missing[*]}; run as root or install sudo" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
