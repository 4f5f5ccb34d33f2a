#!/usr/bin/env bash
# Installs what ortc needs on a fresh Debian machine: the packages in scripts/apt-packages.txt
# and the reference runtime for tests (onnxruntime-node, into test/reference/node_modules), and
# ONNX Runtime's C/EP API headers for the ONNX Runtime plugin EP (into .deps/).
# A no-op when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
while read -r pkg; do
  [ -z "$pkg" ] && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < <(grep -v '^#' scripts/apt-packages.txt)
# Node may come from another packaging with npm bundled: test for the commands, not packages.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# A full disk fails the first large write (npm's unpacking, then the build) with messages that
# do not say so; say it first. A build and its tests take about 4 GiB (build/ is 3.7 GiB).
free_kib=$(df -Pk . | awk 'NR == 2 { print $4 }')
if [ "${free_kib:-0}" -lt $((5 * 1024 * 1024)) ]; then
  echo "setup: warning: only $((free_kib / 1024)) MiB free on the file system of $(pwd);" \
    "a build and its tests take about 4 GiB" >&2
fi

# The reference runtime: its postinstall step downloads extras we do not use, so skip scripts.
if [ "${ORTC_SKIP_NODE:-0}" != 1 ] && [ ! -d test/reference/node_modules/onnxruntime-node ]; then
  echo "setup: installing onnxruntime-node into test/reference"
  if ! (cd test/reference && npm install --ignore-scripts --no-audit --no-fund --no-package-lock --loglevel=error); then
    rm -rf test/reference/node_modules  # a half-unpacked package would pass the test above
    echo "setup: npm could not install onnxruntime-node (npm's messages above say why;" \
      "$(df -Pk . | awk 'NR == 2 { print int($4 / 1024) }') MiB free here)." \
      "Tests need it as their reference runtime; ORTC_SKIP_NODE=1 builds without it." >&2
    exit 1
  fi
fi
# ONNX Runtime's plugin EP headers (for onnxruntime_ep/), from an npm package; without them the
# plugin EP and its tests are not built, and the build says so.
if [ "${ORTC_SKIP_NODE:-0}" != 1 ] && [ ! -f .deps/onnxruntime-headers/onnxruntime_ep_c_api.h ]; then
  echo "setup: fetching ONNX Runtime's headers into .deps/onnxruntime-headers"
  scripts/fetch_ort_headers.sh || echo "setup: ONNX Runtime headers not fetched; libortc_ort_ep will not be built"
fi
echo "setup: all dependencies present"
