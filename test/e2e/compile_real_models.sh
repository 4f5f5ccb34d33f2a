#!/usr/bin/env bash
# Compiles the example model and the PaddleOCR models for the CPU, then checks each result:
# `ortc inspect` verifies it, ONNX's full checker accepts the ctx model, and ONNX Runtime 1.30
# parses it and refuses it only because no session EP owns the EPContext node (never for a
# schema, attribute-type or graph error). Prints sizes and dedup figures.
# Usage: compile_real_models.sh ORTC_BINARY CACHE_DIR WORK_DIR
set -euo pipefail
ortc=$1 cache=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ort_loader="$root/test/reference/ort_load.js"
if [ ! -d "$root/test/reference/node_modules/onnxruntime-node" ]; then
  echo "SKIP: onnxruntime-node is not installed (run scripts/setup.sh)" >&2
  exit 77
fi
models_dir=$("$root/scripts/fetch_test_models.sh" "$cache") || exit $?
rm -rf "$work" && mkdir -p "$work"
/usr/bin/python3 "$root/examples/make_tiny_cnn.py" "$work/tiny_cnn.onnx" > /dev/null

checked=0
for model in "$work/tiny_cnn.onnx" "$models_dir"/*.onnx; do
  name=$(basename "$model" .onnx)
  out="$work/$name"
  mkdir -p "$out"
  "$ortc" compile "$model" -o "$out/" --json > "$out/report.json"
  "$ortc" inspect "$out/${name}_ctx.onnx" --json > "$out/inspect.json"
  /usr/bin/python3 "$here/check_ctx_model.py" "$out/${name}_ctx.onnx"
  node "$ort_loader" "$out/${name}_ctx.onnx" > "$out/ort.json"
  /usr/bin/python3 - "$model" "$out" <<'PY'
import json, os, sys
model, out = sys.argv[1], sys.argv[2]
ort = json.load(open(os.path.join(out, "ort.json")))
assert ort["version"].startswith("1.30"), ort
assert not ort["ok"], "ORT ran a model it has no EP for"
expected = "is not compatible with any execution provider added to the session"
assert expected in ort["error"], "ORT rejected the ctx model for another reason: " + ort["error"]
report = json.load(open(os.path.join(out, "report.json")))
inspect = json.load(open(os.path.join(out, "inspect.json")))
assert report["ok"] and inspect["ok"], (report, inspect)
assert all(n["status"] == "ok" for n in inspect["ep_context_nodes"])
w = report["weights"]
files = {f["kind"]: f["bytes"] for f in report["files"]}
print(f"{os.path.basename(model)}: source {os.path.getsize(model)} B -> ctx {files['ctx_model']} B + bin "
      f"{files['context_binary']} B; weights {w['count']} tensors / {w['bytes']} B -> {w['unique_count']} / "
      f"{w['unique_bytes']} B stored (dedup {w['dedup_ratio']:.3f}x); lowering {report['lowering']}; "
      f"{report['phases_ms']['total']:.1f} ms")
PY
  checked=$((checked + 1))
done
[ "$checked" -eq 4 ] || { echo "expected 4 models, checked $checked" >&2; exit 1; }
echo "compiled and checked $checked models"
