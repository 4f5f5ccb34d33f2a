#!/usr/bin/env bash
# Configures and builds ortc (Release, Ninja, ccache when present) into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${ORTC_BUILD_DIR:-build}
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build_dir" --parallel "$(nproc)"
