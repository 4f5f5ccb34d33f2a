#!/usr/bin/env bash
# The CPU benchmark models, prepared under WORK: prints one line per model,
# "model.onnx|input name|input shape|input dtype" (dtype empty for float32). The torch models
# (resnet18, mobilenet_v2, the GPT-style decoder) come only where torch and torchvision import.
# Usage: scripts/bench_models.sh WORK   (needs test/reference set up by setup.sh for the models)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$1
mkdir -p "$work"
models=$(scripts/fetch_test_models.sh build/test-models)
/usr/bin/python3 examples/make_tiny_cnn.py "$work/tiny_cnn.onnx" > /dev/null
echo "$work/tiny_cnn.onnx|image|1,3,32,32|"
echo "$models/ch_ppocr_mobile_v2.0_cls_infer.onnx|x|1,3,48,192|"
echo "$models/ch_PP-OCRv4_rec_infer.onnx|x|1,3,48,320|"
echo "$models/ch_PP-OCRv4_det_infer.onnx|x|1,3,320,320|"
if /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  /usr/bin/python3 test/e2e/make_torch_models.py "$work/torch" > /dev/null
  echo "$work/torch/resnet18.onnx|input|1,3,224,224|"
  echo "$work/torch/mobilenet_v2.onnx|input|1,3,224,224|"
  echo "$work/torch/gpt_decoder.onnx|tokens|1,16|int64"
fi
