#!/usr/bin/env bash
# The main job on an example model: set up, build, generate examples/out/tiny_cnn.onnx, show
# how ortc partitions it across the CUDA and CPU backends, compile it for CUDA + CPU (no GPU
# needed), inspect the result, ask the version gate whether this machine can run it, and run a
# CPU-only build of the same model.
set -euo pipefail
cd "$(dirname "$0")/.."
ORTC_SKIP_NODE=1 scripts/setup.sh
scripts/build.sh
ortc=build/tools/ortc
shape=image=1x3x32x32  # CUDA kernels are specialized to static shapes
mkdir -p examples/out/cuda examples/out/cpu
/usr/bin/python3 examples/make_tiny_cnn.py examples/out/tiny_cnn.onnx
$ortc partition examples/out/tiny_cnn.onnx --ep cuda,cpu --input-shape $shape
$ortc compile examples/out/tiny_cnn.onnx --ep cuda,cpu --input-shape $shape -o examples/out/cuda/
$ortc inspect examples/out/cuda/tiny_cnn_ctx.onnx
if ! $ortc check examples/out/cuda/tiny_cnn_ctx.onnx; then
  echo "(the CUDA build needs an NVIDIA GPU and driver to run; the gate above says what is missing)"
fi
$ortc compile examples/out/tiny_cnn.onnx -o examples/out/cpu/
$ortc run examples/out/cpu/tiny_cnn_ctx.onnx --input-shape $shape --bench 10
