#!/usr/bin/env bash
# Fetches ONNX Runtime's C, C++ and plugin-EP API headers (never committed) for the ONNX Runtime
# plugin execution provider (onnxruntime_ep/). They ship inside the npm package
# com.github.asus4.onnxruntime (ONNX Runtime 1.29's headers; the C API is versioned and backward
# compatible, so they work with the 1.30 library of onnxruntime-node).
# Usage: fetch_ort_headers.sh [DEST]   (default .deps/onnxruntime-headers)
# A no-op when DEST already has the headers. Exits 77 when the npm registry cannot be reached.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-.deps/onnxruntime-headers}
pkg=com.github.asus4.onnxruntime@0.4.9
[ -f "$dest/onnxruntime_ep_c_api.h" ] && exit 0
mkdir -p "$(dirname "$dest")"
tmp=$(mktemp -d "$(dirname "$dest")/.ort-headers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && npm pack "$pkg" --silent > pack.log 2>&1); then
  echo "SKIP: npm pack $pkg failed (registry unreachable?): $(tail -1 "$tmp/pack.log")" >&2
  exit 77
fi
# The package carries the same headers for several Apple targets: take one set.
framework='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers'
mkdir -p "$tmp/x"
tar -xzf "$tmp"/*.tgz -C "$tmp/x" "$framework"
mkdir -p "$tmp/headers"
mv "$tmp/x/$framework"/*.h "$tmp/headers/"
[ -f "$tmp/headers/onnxruntime_ep_c_api.h" ] || { echo "error: $pkg has no onnxruntime_ep_c_api.h" >&2; exit 1; }
rm -rf "$dest"
mv -T "$tmp/headers" "$dest"
echo "fetch_ort_headers: ONNX Runtime headers in $dest"
