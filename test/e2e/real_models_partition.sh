#!/usr/bin/env bash
# `ortc partition --ep cuda,cpu --json` on the PaddleOCR det/rec/cls models, each checked
# against an independent reading of the model by ONNX's Python package.
# Usage: real_models_partition.sh ORTC_BINARY CACHE_DIR
set -euo pipefail
ortc=$1
here=$(cd "$(dirname "$0")" && pwd)
models=$("$here/../../scripts/fetch_test_models.sh" "$2") || exit $?
count=0
for m in "$models"/*.onnx; do
  out=$(mktemp)
  "$ortc" partition "$m" --ep cuda,cpu --json > "$out"
  /usr/bin/python3 "$here/check_partition_report.py" "$m" "$out"
  rm -f "$out"
  count=$((count + 1))
done
[ "$count" -eq 3 ] || { echo "expected 3 models, found $count" >&2; exit 1; }
echo "real models: $count partitioned and checked"
