#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with ASan + UBSan (clang 14) and runs each for
# FUZZ_SECONDS (default 60) seconds, all three side by side (builds too). Seeds: models/*.param plus a few hand-made inputs, and small
# images in fuzz/seeds/ (PNG, JPEG, gray+alpha PNG, written once). Exits
# nonzero when libFuzzer reports a finding (crash, sanitizer report, timeout, out of memory); the
# input that caused it is left in the work directory (FUZZ_WORK, default a fresh temp dir).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${FUZZ_SECONDS:-60}
cxx=${FUZZ_CXX:-clang++-14}
work=${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/infer-fuzz.XXXXXX")}
mkdir -p "$work"
echo "fuzz: work directory $work, ${seconds}s per target"

# The built-in layer list <infer/layers/builtin.hpp>, generated as CMake's configure does.
cmake -DLAYERS_DIR="$root/include/infer/layers" -DOUT_DIR="$work/generated" \
  -P "$root/cmake/InferLayers.cmake"
flags=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -I"$root/include" -I"$work/generated")
targets=(fuzz_param fuzz_model_bin fuzz_image)
# The targets build side by side (one compile each) and run side by side, each for $seconds.
pids=()
for t in "${targets[@]}"; do
  echo "fuzz: building $t"
  # fuzz_image links Debian's libpng and libjpeg-turbo (fuzzed upstream, not instrumented here).
  "$cxx" "${flags[@]}" "$root/fuzz/$t.cpp" -lfmt -lpng -lturbojpeg -o "$work/$t" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

# --- seed corpora ---------------------------------------------------------------------------------
# Little-endian int32s as raw bytes.
le32() { for v in "$@"; do printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' \
  $((v & 255)) $(((v >> 8) & 255)) $(((v >> 16) & 255)) $(((v >> 24) & 255)))"; done; }

param_corpus="$work/corpus_fuzz_param"
mkdir -p "$param_corpus"
cp "$root"/models/*.param "$param_corpus"/
printf '7767517\n2 2\nInput data 0 1 data 0=4 1=4 2=1\nSoftmax prob 1 1 data prob 0=0 1=1.5 -23300=2,1,2.0\n' \
  >"$param_corpus/small.param"
printf '7767517\n1 1\nInput in 0 1 x 30=1,2,3\n' >"$param_corpus/new_array.param"
# Binary: Input (16) producing blob 0 with 0=4; ReLU (26) reading 0, producing 1, with an array.
le32 7767517 2 2 16 0 1 0 0 4 -233 26 1 1 0 1 -23330 2 1 2 -233 >"$param_corpus/small.param.bin"

bin_corpus="$work/corpus_fuzz_model_bin"
mkdir -p "$bin_corpus"
# One call, tagged, count 2: f32 tag + 2 floats.
{ printf '\x00\x00\x02\x00\x00\x00'; le32 0 1065353216 1073741824; } >"$bin_corpus/f32"
# Two calls: tagged count 3 (f16 tag) then raw count 1.
{ printf '\x01\x00\x03\x00\x00\x00\x01\x01\x00\x00\x00'; le32 19950407;
  printf '\x00\x3c\x00\x40\x00\x42\x00\x00'; le32 1065353216; } >"$bin_corpus/f16_raw"
# One call, tagged count 4 with a quantization table (any other tag).
{ printf '\x00\x00\x04\x00\x00\x00'; le32 7; head -c 1024 /dev/zero; printf '\x00\x01\x02\x03'; } \
  >"$bin_corpus/table"

image_corpus="$work/corpus_fuzz_image"
mkdir -p "$image_corpus"
cp "$root"/fuzz/seeds/* "$image_corpus"/

# --- runs -----------------------------------------------------------------------------------------
status=0
run_one() {
  local t=$1
  extra=()
  [[ $t == fuzz_param ]] && extra=(-dict="$root/fuzz/param.dict")
  echo "fuzz: running $t"
  start=$SECONDS
  if ! "$work/$t" "$work/corpus_$t" "${extra[@]}" -max_total_time="$seconds" \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$work/$t-" >"$work/$t.log" 2>&1; then
    status=1
    echo "fuzz: $t FOUND A PROBLEM; log: $work/$t.log" >&2
    tail -n 40 "$work/$t.log" >&2
    ls "$work/$t-"* >&2 2>/dev/null || true
  else
    echo "fuzz: $t clean after $((SECONDS - start))s ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$t.log" | grep -o '[0-9]*$' || echo '?') runs)"
  fi
  return $status
}
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
