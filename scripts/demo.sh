#!/usr/bin/env bash
# Main demo: builds the examples and tools in the release preset, runs the static-graph examples
# (each prints its composed graph and checks its result), runs an ncnn model both ways (infer::Net
# and its generated static graph), runs one through infer-run, then times the benchmark networks
# with infer-bench. Extra arguments go to infer-bench (e.g. --threads 2).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

section() { printf '\n==== %s ====\n' "$*"; }

section "dependencies"
bash scripts/install-deps.sh

section "release: configure"
cmake --preset release
section "release: build the examples and tools (-j2)"
cmake --build --preset release --target example_static_graph example_custom_layer \
  example_ncnn_model infer_run infer_bench

section "examples/static_graph"
build/release/examples/static_graph build/release/static_graph.dot
section "examples/custom_layer"
build/release/examples/custom_layer
section "examples/ncnn_model: squeezenet through infer::Net and as a generated static graph"
build/release/examples/ncnn_model

section "infer-run: mobilenet_v2, random weights, the plan and the output's shape"
build/release/tools/infer-run models/mobilenet_v2.param --random-weights 1 --print-plan | tail -n 8

section "infer-run: a photo (examples/data/chelsea.png) through mobilenet_v2, top 5"
echo "(random weights: the pipeline is real - decode, resize, ImageNet mean/norm, forward - the classes are not)"
build/release/tools/infer-run models/mobilenet_v2.param --random-weights 1 \
  --image examples/data/chelsea.png --size 224,224 --mean 123.675,116.28,103.53 \
  --norm 0.017125,0.017507,0.017429 --top 5

section "infer-bench: every model in models/ (ms; benchncnn, beside it, is in ../shared/peers)"
build/release/tools/infer-bench "$@"
