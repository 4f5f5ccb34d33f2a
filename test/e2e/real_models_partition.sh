#!/usr/bin/env bash
# `ortc partition --ep cuda,cpu --json` on the PaddleOCR det/rec/cls models, each checked
# against an independent reading of the model by ONNX's Python package. The models' dims are
# symbolic; CUDA takes only static shapes, so each gets the input shape PaddleOCR feeds it.
# Usage: real_models_partition.sh ORTC_BINARY CACHE_DIR
set -euo pipefail
ortc=$1
here=$(cd "$(dirname "$0")" && pwd)
models=$("$here/../../scripts/fetch_test_models.sh" "$2") || exit $?
count=0
for m in "$models"/*.onnx; do
  case $(basename "$m") in
    *det*) shape=x=1x3x640x640 ;;
    *rec*) shape=x=1x3x48x320 ;;
    *cls*) shape=x=1x3x48x192 ;;
    *) echo "no input shape known for $m" >&2; exit 1 ;;
  esac
  out=$(mktemp)
  "$ortc" partition "$m" --ep cuda,cpu --input-shape "$shape" --json > "$out"
  /usr/bin/python3 "$here/check_partition_report.py" "$m" "$out"
  rm -f "$out"
  count=$((count + 1))
done
[ "$count" -eq 3 ] || { echo "expected 3 models, found $count" >&2; exit 1; }
echo "real models: $count partitioned and checked"
