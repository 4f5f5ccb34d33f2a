#!/usr/bin/env bash
# The weight-sharing example end to end: prefill + decode compiled as one group (3 files), both
# run by ortc and by ONNX Runtime 1.30 on the same inputs (the decode step on the KV cache the
# prefill produced), and the decode step checked against a 17-token prefill.
# Usage: llm_pair.sh ORTC_BINARY WORK_DIR
set -euo pipefail
ortc=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ ! -d "$root/test/reference/node_modules/onnxruntime-node" ]; then
  echo "SKIP: onnxruntime-node is not installed (run scripts/setup.sh)" >&2
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/out"
py=/usr/bin/python3
$py "$root/examples/make_llm_pair.py" "$work" 16 > /dev/null
$py "$root/examples/make_llm_pair.py" "$work/long" 17 > /dev/null
"$ortc" compile "$work/prefill.onnx" "$work/decode.onnx" --share-weights -o "$work/out" -q
files=$(ls "$work/out" | sort | tr '\n' ' ')
[ "$files" = "decode_ctx.onnx prefill_cpu.bin prefill_ctx.onnx " ] || { echo "unexpected files: $files" >&2; exit 1; }

$py - "$work" <<'PY'
import sys
import numpy as np
w = sys.argv[1]
rng = np.random.default_rng(3)
tokens = rng.integers(0, 256, (1, 17)).astype(np.int64)
np.save(f"{w}/tokens16.npy", tokens[:, :16]); np.save(f"{w}/pos16.npy", np.arange(16, dtype=np.int64)[None])
np.save(f"{w}/tokens17.npy", tokens); np.save(f"{w}/pos17.npy", np.arange(17, dtype=np.int64)[None])
np.save(f"{w}/token.npy", tokens[:, 16:]); np.save(f"{w}/pos.npy", np.array([[16]], np.int64))
PY
ort="node $root/test/reference/ort_run.js"
$ort "$work/prefill.onnx" "$work/ort_prefill" tokens="$work/tokens16.npy" positions="$work/pos16.npy" > /dev/null
"$ortc" run "$work/out/prefill_ctx.onnx" --input tokens="$work/tokens16.npy" --input positions="$work/pos16.npy" \
  --output-dir "$work/ortc_prefill" > /dev/null
$py "$here/compare_outputs.py" prefill "$work/ort_prefill" "$work/ortc_prefill"

past=()
for l in 0 1; do
  past+=(--input "past_k$l=$work/ortc_prefill/present_k$l.npy" --input "past_v$l=$work/ortc_prefill/present_v$l.npy")
done
"$ortc" run "$work/out/decode_ctx.onnx" --input tokens="$work/token.npy" --input positions="$work/pos.npy" \
  "${past[@]}" --output-dir "$work/ortc_decode" > /dev/null
ort_past=()
for l in 0 1; do
  ort_past+=("past_k$l=$work/ortc_prefill/present_k$l.npy" "past_v$l=$work/ortc_prefill/present_v$l.npy")
done
$ort "$work/decode.onnx" "$work/ort_decode" tokens="$work/token.npy" positions="$work/pos.npy" "${ort_past[@]}" > /dev/null
$py "$here/compare_outputs.py" decode "$work/ort_decode" "$work/ortc_decode"

# Decoding token 17 on the cache must give what a 17-token prefill gives for its last token.
$ort "$work/long/prefill.onnx" "$work/ort_long" tokens="$work/tokens17.npy" positions="$work/pos17.npy" > /dev/null
$py - "$work" <<'PY'
import sys
import numpy as np
w = sys.argv[1]
step = np.load(f"{w}/ortc_decode/logits.npy")[0, 0]
full = np.load(f"{w}/ort_long/logits.npy")[0, 16]
err = float(np.max(np.abs(step - full)))
assert np.allclose(step, full, rtol=1e-3, atol=1e-4), err
print(f"decode with KV cache vs 17-token prefill: max abs error {err:.3g}")
PY
echo "llm pair: 3 files; prefill and decode match ONNX Runtime 1.30"
