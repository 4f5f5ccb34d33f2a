#!/usr/bin/env bash
# The runtime built alone (-DORTC_BUILD_COMPILER=OFF): configures and builds this source tree
# in a separate folder, checks that no compiler was built and that none of the compiler's
# dependencies (libonnx, spdlog, fmt, NVRTC) was looked for or linked, then runs its ortc-run on
# a bundle compiled by the main build's ortc.
# Usage: runtime_only_build.sh ORTC_BINARY WORK_DIR
set -euo pipefail
ortc=$1
work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work"
# Unoptimised (-O0, no debug info): what is checked is which libraries the build looks for and
# links, not speed, and -O0 compiles much faster on CI's two cores (204 s for this test alone).
cmake -S "$src" -B "$work/build" -G Ninja -DORTC_BUILD_COMPILER=OFF -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_C_FLAGS_DEBUG=-O0 > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"
run=$work/build/tools/ortc-run
[ -x "$run" ] || { echo "FAIL: no ortc-run in the runtime-only build" >&2; exit 1; }
[ ! -e "$work/build/tools/ortc" ] || { echo "FAIL: the compiler was built" >&2; exit 1; }
if grep -qi "spdlog_DIR:PATH=/" "$work/build/CMakeCache.txt"; then
  echo "FAIL: the runtime-only build looked for spdlog" >&2
  exit 1
fi
for f in "$run" "$work"/build/runtime/libortc_runtime.so.0; do
  if ldd "$f" | grep -E "libonnx\.so|spdlog|libfmt|nvrtc"; then
    echo "FAIL: $f needs a compile-side library" >&2
    exit 1
  fi
done
/usr/bin/python3 "$src/examples/make_tiny_cnn.py" "$work/tiny_cnn.onnx" > /dev/null
"$ortc" compile "$work/tiny_cnn.onnx" --bundle "$work/bundle" -q
out=$("$run" run "$work/bundle/tiny_cnn_ctx.onnx" --json)
/usr/bin/python3 -c "import json,sys; r=json.loads(sys.argv[1]); assert r['ok'] and r['outputs'][0]['shape'] == [1, 10], r" "$out"
"$run" check "$work/bundle" > /dev/null
echo "runtime-only build: ortc-run and libortc_runtime built without the compiler, ran a bundle"
