#!/usr/bin/env bash
# The runtime tarball (scripts/pack_runtime) on a "device": unpacked into a fresh folder outside
# the build tree, its ortc-run runs and checks a bundle with a bare environment (no
# LD_LIBRARY_PATH, no ORTC_BACKEND_PATH); every non-system library it loads comes from the
# tarball, and none of the compiler's (libonnx, spdlog, fmt, NVRTC) is among them.
# Usage: runtime_tarball.sh ORTC_BINARY BUILD_DIR WORK_DIR
set -euo pipefail
ortc=$1
build=$2
work=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work"
# Run from outside the repository, the output named relative to there: the script resolves it
# against the caller's folder and, with no build folder given, uses the repository's build/.
if [ "$(realpath "$build")" = "$src/build" ]; then
  (cd "$work" && "$src/scripts/pack_runtime" ortc-runtime.tar.gz)
else
  (cd "$work" && "$src/scripts/pack_runtime" ortc-runtime.tar.gz "$(realpath "$build")")
fi
device=$(mktemp -d)
trap 'rm -rf "$device"' EXIT
tar -C "$device" -xzf "$work/ortc-runtime.tar.gz"
root=$(echo "$device"/ortc-runtime-*)
run=$root/bin/ortc-run
[ ! -e "$root/bin/ortc" ] || { echo "FAIL: the runtime tarball holds the compiler" >&2; exit 1; }

/usr/bin/python3 "$src/examples/make_tiny_cnn.py" "$work/tiny_cnn.onnx" > /dev/null
"$ortc" compile "$work/tiny_cnn.onnx" --bundle "$device/bundle" -q
bare=(env -i PATH=/usr/bin:/bin HOME="$device")

libs=$("${bare[@]}" ldd "$run" "$root"/lib/libortc_runtime.so.0)
if grep -E "not found|libonnx\.so|spdlog|libfmt|nvrtc" <<< "$libs"; then
  echo "FAIL: ortc-run misses a library or needs a compile-side one" >&2
  exit 1
fi
system='^(linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libdl\.so|libpthread|librt\.so)'
outside=$(awk '$2 == "=>" && $1 !~ /'"$system"'/ {print $1, $3}' <<< "$libs" | grep -v " $root/" || true)
[ -z "$outside" ] || { echo "FAIL: loaded from outside the tarball:" >&2; echo "$outside" >&2; exit 1; }

out=$(cd "$device" && "${bare[@]}" "$run" run bundle/tiny_cnn_ctx.onnx --json)
/usr/bin/python3 -c "import json,sys; r=json.loads(sys.argv[1]); assert r['ok'] and r['outputs'][0]['shape'] == [1, 10], r" "$out"
(cd "$device" && "${bare[@]}" "$run" check bundle > /dev/null)
"${bare[@]}" "$run" --version | head -1 | grep -q "^ortc-run "
echo "runtime tarball: ortc-run ran and checked a bundle from $(basename "$root"), libraries all from it"
