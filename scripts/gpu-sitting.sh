#!/usr/bin/env bash
# One sitting on the GPU machine for the Vulkan record (README, "The Vulkan backend"): infer beside
# ncnn's benchncnn-vulkan on the same GPU in one run, each model alternating between the two
# engines round after round, then the cuDNN anchors (PyTorch, ../shared/peers/torch_anchor.py) and
# the per-step profile of the networks named in PROFILE. Every figure it prints was measured in
# this run; nothing is kept from an earlier one.
#
# Usage (on the GPU machine, from the repository root):
#   scripts/gpu-sitting.sh BIN_DIR [ROUNDS] [LOOPS]
#   BIN_DIR holds infer-bench, benchncnn-vulkan and optionally torch_anchor.py; ROUNDS (default 3)
#   interleaved rounds of LOOPS (default 300) forwards each, after 50 warm-up forwards.
#   PROFILE="mnasnet mobilenet_v3" (the default) lists the networks to profile step by step;
#   MODELS the networks of the side-by-side table (default: the eleven classification networks of
#   the Vulkan issue's table; every network of models/ takes longer than one 10-minute call).
# The Vulkan loader and the driver's ICD must be found (VK_DRIVER_FILES on the GPU machine). The
# NVIDIA ICD (libGLX_nvidia.so.0) needs libglvnd beside the loader: carry libvulkan1 with libglvnd0,
# libglx0, libgl1, libegl1, libgles2 and libopengl0 (with libvulkan1 alone, vkCreateInstance gives
# ErrorIncompatibleDriver: "Could not get 'vkCreateInstance' via 'vk_icdGetInstanceProcAddr'").
# INFER_VULKAN_TC_SMALL in the environment (conv_gemm_tc_small_rule) reaches infer-bench.
set -uo pipefail
bin=${1:?usage: gpu-sitting.sh BIN_DIR [ROUNDS] [LOOPS]}
rounds=${2:-3}
loops=${3:-300}
profile=${PROFILE:-mnasnet mobilenet_v3}
models=${MODELS:-squeezenet mobilenet mobilenet_v2 mobilenet_v3 shufflenet_v2 mnasnet efficientnet_b0 resnet18 resnet50 vgg16 alexnet}
section() { printf '\n==== %s ====\n' "$*"; }

section "machine"
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv 2>/dev/null || true
"$bin/infer-bench" --models-dir models --device vulkan --loops 1 --warmup 1 squeezenet 2>&1 | head -3

section "infer beside ncnn-vulkan: $rounds rounds of $loops forwards, f16 storage on both sides"
"$bin/infer-bench" --models-dir models --device vulkan --warmup 50 --loops "$loops" --ncnn "$bin/benchncnn-vulkan" \
  --rounds "$rounds" $models

if [ -f "$bin/torch_anchor.py" ] && command -v python3 >/dev/null; then
  section "cuDNN anchors (PyTorch, batch 1, 224x224, channels-last; min of 50)"
  PYTHONUNBUFFERED=1 python3 "$bin/torch_anchor.py" 2>&1 | grep -v -i warn
fi

for m in $profile; do
  section "profile: $m (each step's minimum)"
  "$bin/infer-bench" --models-dir models --device vulkan --warmup 50 --loops 200 --profile "$m"
done
