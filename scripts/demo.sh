#!/usr/bin/env bash
# The main job on an example model: set up, build, generate examples/out/tiny_cnn.onnx and
# show how ortc partitions it across the CUDA and CPU backends.
set -euo pipefail
cd "$(dirname "$0")/.."
ORTC_SKIP_NODE=1 scripts/setup.sh
scripts/build.sh
mkdir -p examples/out
/usr/bin/python3 examples/make_tiny_cnn.py examples/out/tiny_cnn.onnx
build/compiler/ortc partition examples/out/tiny_cnn.onnx --ep cuda,cpu
