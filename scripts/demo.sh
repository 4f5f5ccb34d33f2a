#!/usr/bin/env bash
# The main job on an example model: set up, build, generate examples/out/tiny_cnn.onnx, show
# how ortc partitions it across the CUDA and CPU backends, compile it and inspect the result.
set -euo pipefail
cd "$(dirname "$0")/.."
ORTC_SKIP_NODE=1 scripts/setup.sh
scripts/build.sh
mkdir -p examples/out
/usr/bin/python3 examples/make_tiny_cnn.py examples/out/tiny_cnn.onnx
build/compiler/ortc partition examples/out/tiny_cnn.onnx --ep cuda,cpu
build/compiler/ortc compile examples/out/tiny_cnn.onnx -o examples/out/
build/compiler/ortc inspect examples/out/tiny_cnn_ctx.onnx
build/compiler/ortc run examples/out/tiny_cnn_ctx.onnx --shape image=1x3x32x32 --bench 10
