#!/usr/bin/env bash
# Makes this folder's reference outputs with ncnn itself (../shared/peers: ncnn_weights and
# ncnn_run, ncnn at commit a4d2ea1, CPU build, one thread). Run from the repository root:
#   bash tests/data/ncnn_nets/make.sh ../shared/peers
# For each case: ncnn_weights writes the .bin (seed 1234; infer regenerates the same bytes with
# Net::load_ncnn_random_weights), ncnn_run runs it on sin(i * 0.001) * 0.5 + 0.5 and writes the
# blob; this script keeps a detection blob whole and every k-th value of a dense one (k chosen so
# that at most 4096 values are kept), and writes its shape line: w h d c k.
set -euo pipefail
peers=${1:?usage: make.sh PEERS_DIR}
out=tests/data/ncnn_nets
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# case model size blob [from to]: with from/to, the model's text with `from` replaced by `to`
# (a lower confidence threshold, so that random weights give detections).
case_() {
  local name=$1 model=$2 size=$3 blob=$4 from=${5:-} to=${6:-}
  local param="models/$model.param"
  if [[ -n $from ]]; then
    grep -q -- "$from" "$param"
    sed "s/$from/$to/" "$param" >"$tmp/$name.param"
    param="$tmp/$name.param"
  fi
  "$peers/ncnn_weights" "models/$model.param" "$tmp/$model.bin" 1234 >/dev/null
  mkdir -p "$tmp/run"
  "$peers/ncnn_run" "$param" "$tmp/$model.bin" 3 "$size" "$size" "$tmp/run" 1 "$blob" >/dev/null
  python3 - "$tmp/run" "$out/$name.$blob" <<'PY'
import array, sys
src, dst = sys.argv[1], sys.argv[2]
w, h, d, c, _ = open(src + "/out.shape").read().split()
a = array.array("f")
a.frombytes(open(src + "/out.f32", "rb").read())
k = 1 if w == "6" and d == "1" and c == "1" else max(1, -(-len(a) // 4096))
array.array("f", a[::k]).tofile(open(dst + ".f32", "wb"))
open(dst + ".shape", "w").write(f"{w} {h} {d} {c} {k}\n")
PY
}

case_ nanodet_m nanodet_m 320 cls_pred_stride_8
case_ nanodet_m nanodet_m 320 cls_pred_stride_16
case_ nanodet_m nanodet_m 320 cls_pred_stride_32
case_ nanodet_m nanodet_m 320 dis_pred_stride_8
case_ nanodet_m nanodet_m 320 dis_pred_stride_16
case_ nanodet_m nanodet_m 320 dis_pred_stride_32
case_ FastestDet FastestDet 352 out0
case_ mobilenet_ssd mobilenet_ssd 300 output
case_ mobilenet_ssd_low mobilenet_ssd 300 output "4=2.500000e-01" "4=5.000000e-02"
case_ squeezenet_ssd squeezenet_ssd 300 output
case_ squeezenet_ssd_low squeezenet_ssd 300 output "4=2.500000e-01" "4=6.000000e-02"
case_ mobilenet_yolo_low mobilenet_yolo 416 output "2=4.000000e-01" "2=3.000000e-02"
case_ mobilenetv2_yolov3 mobilenetv2_yolov3 352 output
case_ yolov4-tiny yolov4-tiny 416 output
case_ yolo-fastest-1.1 yolo-fastest-1.1 320 output
case_ yolo-fastest-1.1_low yolo-fastest-1.1 320 output "2=5.500000e-01" "2=3.000000e-01"
case_ vision_transformer vision_transformer 384 cls_score
case_ mobilenet_ssd_int8 mobilenet_ssd_int8 300 output
