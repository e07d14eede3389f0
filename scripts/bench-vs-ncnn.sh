#!/usr/bin/env bash
# The README's CPU model table: infer beside ncnn's benchncnn on this machine, in one sitting.
# Runs `infer-bench --ncnn BENCHNCNN --rounds N` at 1 and then 2 threads (each model alternating
# between the two engines, round after round), the same for the networks of models/sweep/ (grouped
# convolutions, outside ncnn's benchmark set), and bench_peak (this machine's FMA peak and memory
# bandwidth), then writes the dated record between the README's bench-cpu markers.
#
# Usage: scripts/bench-vs-ncnn.sh [--benchncnn PATH] [--rounds N] [--loops N] [--no-readme]
#   --benchncnn  ncnn's benchncnn (default ../shared/peers/benchncnn)
#   --rounds     interleaved rounds per thread count (default 3)
#   --loops      loops per run, as benchncnn's first argument (default 8)
#   --no-readme  print the record instead of writing it into README.md
# Needs the release build with benchmarks: cmake --preset release && cmake --build --preset release
# --target infer_bench bench_peak (INFER_BENCH_BUILD=DIR names another build directory).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
benchncnn="$root/../shared/peers/benchncnn"
rounds=3
loops=8
readme=1
while [ $# -gt 0 ]; do
  case "$1" in
    --benchncnn) benchncnn="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --loops) loops="$2"; shift 2 ;;
    --no-readme) readme=0; shift ;;
    *) echo "bench-vs-ncnn.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
build=${INFER_BENCH_BUILD:-build/release}
bench="$build/tools/infer-bench"
peak="$build/benchmarks/bench_peak"
for f in "$bench" "$peak"; do
  [ -x "$f" ] || { echo "bench-vs-ncnn.sh: $f not built (cmake --build --preset release --target infer_bench bench_peak)" >&2; exit 1; }
done
[ -x "$benchncnn" ] || { echo "bench-vs-ncnn.sh: $benchncnn: no benchncnn there (--benchncnn PATH)" >&2; exit 1; }

out=$(mktemp)
trap 'rm -f "$out" "$out".*' EXIT
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
flags=$( (grep -o -w -E 'avx512f|avx512_vnni|avx512_bf16' /proc/cpuinfo || echo "avx2, no avx512") | sort -u | tr '\n' ' ')
"$peak" 2>/dev/null >"$out.peak"
# A bench_peak figure: the counter of the line whose name starts with $1.
peak_of() { grep "^$1/" "$out.peak" | grep "_per_s=" | sed 's/.*_per_s=//' | head -1 || true; }
for t in 1 2; do
  "$bench" --ncnn "$benchncnn" --threads "$t" --loops "$loops" --rounds "$rounds" >"$out.$t"
  # Like for like: ncnn's CPU default stores every InnerProduct's weights as fp16, so the eleven
  # classification networks again with infer's f16-weight option (alexnet's and vgg16's
  # fully-connected layers are most of their weights; the others end in one of 1-8 MB).
  "$bench" --ncnn "$benchncnn" --threads "$t" --loops "$loops" --rounds "$rounds" --fp16-weights \
    squeezenet mobilenet mobilenet_v2 mobilenet_v3 shufflenet_v2 mnasnet efficientnet_b0 \
    resnet18 resnet50 vgg16 alexnet >"$out.f16.$t"
  # ncnn's int8 networks: both sides run them quantized (int8 convolutions and InnerProduct).
  "$bench" --ncnn "$benchncnn" --threads "$t" --loops "$loops" --rounds "$rounds" \
    squeezenet_int8 mobilenet_int8 resnet18_int8 resnet50_int8 vgg16_int8 mobilenet_ssd_int8 >"$out.int8.$t"
  # Networks outside ncnn's benchmark set, of grouped convolutions (scripts/make-sweep-nets.py).
  "$bench" --ncnn "$benchncnn" --threads "$t" --loops "$loops" --rounds "$rounds" \
    models/sweep/*.param >"$out.sweep.$t"
done

{
  echo "<!-- bench-cpu:begin (written by scripts/bench-vs-ncnn.sh; do not edit by hand) -->"
  echo "Measured $(date -u +%Y-%m-%d) on a $(nproc)-core $cpu VM ($flags), $(uname -r); infer built in"
  echo "\`$build\` ($(sed -n 's/^CMAKE_CXX_FLAGS:STRING=//p' "$build/CMakeCache.txt" | head -1)$(grep -q '^INFER_NATIVE:BOOL=ON' "$build/CMakeCache.txt" && echo ' -march=native'))."
  echo "Peer: ncnn's benchncnn from \`../shared/peers\` (its README names the ncnn commit), its CPU defaults:"
  echo "fp32 arithmetic, InnerProduct weights stored as fp16 where the CPU has F16C; infer in fp32."
  echo "Each figure is the min ms of $loops loops; each model alternates between the two engines for"
  echo "$rounds rounds per thread count; \"best\" is the best round, \"median\" the median round, \"spread\""
  echo "the best to worst round; ncnn / infer divides the best figures."
  # The widest FMA the CPU has (bench_peak reports the others as unsupported).
  isa=avx512
  [ -n "$(peak_of peak/fma_avx512/threads:1)" ] || isa=avx2
  label=$([ "$isa" = avx512 ] && echo "AVX-512" || echo "AVX2")
  echo "bench_peak on this machine: $label FMA peak $(peak_of peak/fma_$isa/threads:1) /"
  echo "$(peak_of peak/fma_$isa/threads:2) GFLOP/s at 1 / 2 threads, copy bandwidth"
  if [ -n "$(peak_of peak/fma_avx512_vnni/threads:1)" ]; then
    echo "$(peak_of memory/copy_256M/threads:1) / $(peak_of memory/copy_256M/threads:2) GB/s; AVX-512 VNNI int8 peak"
    echo "$(peak_of peak/fma_avx512_vnni/threads:1) / $(peak_of peak/fma_avx512_vnni/threads:2) GOP/s."
  else
    echo "$(peak_of memory/copy_256M/threads:1) / $(peak_of memory/copy_256M/threads:2) GB/s (no AVX-512 VNNI)."
  fi
  echo
  for t in 1 2; do
    echo "$t thread(s):"
    echo
    echo "| model | infer best | median | spread | ncnn best | median | spread | ncnn / infer |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    awk 'f && NF == 8 { printf "| %s | %s | %s | %s | %s | %s | %s | %sx |\n", $1, $2, $3, $4, $5, $6, $7, $8 } /ncnn\/infer/ { f = 1 }' "$out.$t"
    awk 'f && NF == 8 { printf "| %s, infer with f16 InnerProduct weights (--fp16-weights) | %s | %s | %s | %s | %s | %s | %sx |\n", $1, $2, $3, $4, $5, $6, $7, $8 } /ncnn\/infer/ { f = 1 }' "$out.f16.$t"
    awk 'f && NF == 8 { printf "| %s (int8 on both sides) | %s | %s | %s | %s | %s | %s | %sx |\n", $1, $2, $3, $4, $5, $6, $7, $8 } /ncnn\/infer/ { f = 1 }' "$out.int8.$t"
    awk 'f && NF == 8 { printf "| %s (models/sweep, not in ncnn'"'"'s set) | %s | %s | %s | %s | %s | %s | %sx |\n", $1, $2, $3, $4, $5, $6, $7, $8 } /ncnn\/infer/ { f = 1 }' "$out.sweep.$t"
    echo
  done
  echo "<!-- bench-cpu:end -->"
} >"$out.md"

if [ "$readme" = 1 ]; then
  grep -q "bench-cpu:begin" README.md || { echo "bench-vs-ncnn.sh: README.md has no bench-cpu markers" >&2; exit 1; }
  awk -v rec="$out.md" '
    /bench-cpu:begin/ { while ((getline line < rec) > 0) print line; skip = 1; next }
    /bench-cpu:end/ { skip = 0; next }
    !skip { print }' README.md >"$out.readme"
  cp "$out.readme" README.md
  echo "bench-vs-ncnn.sh: README.md's CPU table rewritten"
fi
cat "$out.md"
