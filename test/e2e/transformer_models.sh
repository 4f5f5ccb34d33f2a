#!/usr/bin/env bash
# Transformers on CUDA, end to end, with the models make_transformer_models.py writes the way
# PyTorch's exporter writes Hugging Face-style code (BERT-like encoder, GPT-like decoder; opset
# 17 LayerNorm or its decomposition; legacy and modern mask chains; causal mask from a buffer or
# Trilu). For each at [1,128]:
#   - `ortc partition --max-partitions 1`: exactly one CUDA group, nothing left on the CPU;
#   - `ortc compile --ep cuda,cpu`: every attention fused, every GELU and decomposed LayerNorm
#     recognised (lowering statistics);
#   - ortc's CPU backend against ONNX Runtime on the same inputs;
#   - the CUDA program through the host emulator (test/backends/cuda/emulator) against the CPU
#     runtime at fp32, fp16 and bf16.
# Then a BERT-base-sized encoder: one CUDA group, 12 fused attentions at fp16.
# Usage: transformer_models.sh ORTC_BINARY EMULATE_BINARY WORK_DIR
set -euo pipefail
ortc=$1 emulate=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=/usr/bin/python3
if ! $py -c "import torch" 2> /dev/null; then
  echo "SKIP: python3-torch is not installed (run scripts/setup.sh)" >&2
  exit 77
fi
have_ort=1
[ -d "$root/test/reference/node_modules/onnxruntime-node" ] || have_ort=0
rm -rf "$work" && mkdir -p "$work"
gen="$py $root/test/e2e/make_transformer_models.py $work"
{
  $gen
  $gen --decomposed-layernorm --causal trilu
  $gen --mask-style modern
} 2>&1 | grep -v -i warning | grep -v "^ *$" || true

checked=0
for model in "$work"/bert_small*.onnx "$work"/gpt_small*.onnx; do
  name=$(basename "$model" .onnx)
  shapes=(--input-shape input_ids=1x128)
  emu_shapes=(input_ids=1x128)
  has_mask=0
  if [[ $name == bert* || $name == *modern* ]]; then
    shapes+=(--input-shape attention_mask=1x128)
    emu_shapes+=(attention_mask=1x128)
    has_mask=1
  fi
  "$ortc" partition "$model" --ep cuda,cpu "${shapes[@]}" --max-partitions 1 --json > "$work/$name.partition.json"
  mkdir -p "$work/$name.cuda"
  "$ortc" compile "$model" --ep cuda,cpu "${shapes[@]}" -o "$work/$name.cuda/" -q --json > "$work/$name.compile.json"
  $py - "$name" "$work/$name.partition.json" "$work/$name.compile.json" <<'PY'
import json, sys
name, part, comp = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
groups = {}
for g in part["groups"]:
    groups[g["backend"]] = groups.get(g["backend"], 0) + 1
assert groups == {"cuda": 1}, f"{name}: groups {groups}"
assert part["dynamic_values"] == [], f"{name}: dynamic after --input-shape: {part['dynamic_values'][:3]}"
low = comp["lowering"]
layers = 2
assert low["fused_attention"] == layers, f"{name}: {low['fused_attention']} fused attentions, want {layers}"
assert low["gelu_recognised"] == layers, f"{name}: {low['gelu_recognised']} GELUs recognised"
norms = 5  # embedding/final + 2 per layer
want_ln = norms if "decomposed" in name else 0
assert low["layernorm_recognised"] == want_ln, f"{name}: {low['layernorm_recognised']} LayerNorms recognised"
# The modern decoder's embedding sum (token + position computed at run time) feeds ln_1 and
# the residual stream: one AddLayerNormalization storing the sum.
# BERT's query/key/value projections merge into one GEMM per layer (GPT-2's already are one).
want_merged = layers if name.startswith("bert") else 0
assert low["projections_merged"] == want_merged, f"{name}: {low['projections_merged']} merges"
want_add_ln = 1 if name == "gpt_small_modern" else 0
assert low["add_layernorm_fused"] == want_add_ln, f"{name}: {low['add_layernorm_fused']} Add+LayerNorm fused"
print(f"{name}: 1 CUDA group; {low['steps']} steps ({low['gemm_calls']} GEMMs, {low['kernels']} kernels), "
      f"{low['fused_attention']} attentions fused")
PY

  # The same random inputs for ortc's CPU backend and ONNX Runtime.
  $py - "$work" "$name" "$has_mask" <<'PY'
import sys
import numpy as np
work, name, has_mask = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
rng = np.random.default_rng(7)
np.save(f"{work}/{name}.ids.npy", rng.integers(0, 1000, (1, 128)).astype(np.int64))
mask = np.ones((1, 128), np.int64)
mask[0, 100:] = 0  # right padding
np.save(f"{work}/{name}.mask.npy", mask)
PY
  feeds=(--input "input_ids=$work/$name.ids.npy")
  ort_feeds=("input_ids=$work/$name.ids.npy")
  if [ "$has_mask" = 1 ]; then
    feeds+=(--input "attention_mask=$work/$name.mask.npy")
    ort_feeds+=("attention_mask=$work/$name.mask.npy")
  fi
  if [ "$have_ort" = 1 ]; then
    mkdir -p "$work/$name.cpu"
    "$ortc" compile "$model" --ep cpu -o "$work/$name.cpu/" -q
    "$ortc" run "$work/$name.cpu/${name}_ctx.onnx" "${feeds[@]}" --output-dir "$work/$name.ortc" > /dev/null
    node "$root/test/reference/ort_run.js" "$model" "$work/$name.ort" "${ort_feeds[@]}" > /dev/null
    $py "$here/compare_outputs.py" "$name cpu vs ONNX Runtime" "$work/$name.ort" "$work/$name.ortc" 1e-4 1e-4
  fi

  # Random masks with holes for the encoder; the decoder's padding mask all ones (a random
  # hole in front would leave a causal row with no key, where any output is as good as another).
  ranges=(--int-range input_ids=0:999)
  [[ $name == gpt*modern* ]] && ranges+=(--int-range attention_mask=1:1)
  for precision in fp32 fp16 bf16; do
    rc=0
    "$emulate" "$model" "${emu_shapes[@]}" "${ranges[@]}" --precision "$precision" > "$work/$name.$precision.emu" || rc=$?
    if [ $rc -ne 0 ]; then
      cat "$work/$name.$precision.emu" >&2
      [ $rc -eq 77 ] && { echo "SKIP: emulator skipped (NVRTC missing?)" >&2; exit 77; }
      echo "$name $precision: emulated CUDA program beyond tolerance" >&2
      exit 1
    fi
    echo "$name $precision emulated: $(head -1 "$work/$name.$precision.emu" | sed 's/.*elements: //')"
  done
  checked=$((checked + 1))
done
[ "$checked" -eq 6 ] || { echo "expected 6 models, checked $checked" >&2; exit 1; }

# Without --input-shape, `ortc partition` traces the dynamic values to the inputs' dims.
"$ortc" partition "$work/bert_small.onnx" --ep cuda,cpu --json > "$work/dynamic.json"
$py - "$work/dynamic.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert all(x["kind"] == "graph_input" for x in r["dynamic_roots"]), r["dynamic_roots"]
roots = {x["name"]: x for x in r["dynamic_roots"]}
assert set(roots) == {"input_ids", "attention_mask"}, r["dynamic_roots"]
assert roots["input_ids"]["fix"].startswith("--input-shape input_ids="), roots["input_ids"]
print(f"bert_small without shapes: {len(r['dynamic_values'])} dynamic values, roots "
      + ", ".join(f"{x['name']} ({x['value_count']})" for x in r["dynamic_roots"]))
PY

# BERT-base-sized (12 layers, hidden 768): still one CUDA group, every attention fused.
$gen --size base --only bert 2>&1 | grep -v -i warning | grep -v "^ *$" || true
mkdir -p "$work/base"
"$ortc" compile "$work/bert_base.onnx" --ep cuda,cpu --input-shape input_ids=1x128 \
  --input-shape attention_mask=1x128 --precision fp16 --max-partitions 1 -o "$work/base/" -q --json > "$work/base.json"
$py - "$work/base.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
low = r["lowering"]
assert low["fused_attention"] == 12 and low["gelu_recognised"] == 12, low
print(f"bert_base fp16: {low['steps']} steps ({low['gemm_calls']} GEMMs, {low['kernels']} kernels), "
      f"12 attentions fused")
PY
rm -f "$work/bert_base.onnx" "$work"/base/*.bin
echo "checked $checked transformer models and the base-sized encoder"
[ "$have_ort" = 1 ] || { echo "note: onnxruntime-node missing, ONNX Runtime comparisons not run" >&2; }
