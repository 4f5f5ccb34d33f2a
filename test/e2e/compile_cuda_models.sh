#!/usr/bin/env bash
# Compiles the example CNN and the PaddleOCR det/rec/cls models for CUDA (with the CPU taking
# the rest) in fp32 and fp16 on this GPU-less machine, then checks each with `ortc inspect`:
# CUDA graphs present, a cubin for every default arch plus PTX, generated kernels, precision.
# Also compiles the LLM example pair as a weight-sharing group. Prints the bin sizes. Usage: compile_cuda_models.sh ORTC_BINARY CACHE_DIR WORK_DIR
set -euo pipefail
ortc=$1 cache=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
models_dir=$("$root/scripts/fetch_test_models.sh" "$cache") || exit $?
rm -rf "$work" && mkdir -p "$work"
/usr/bin/python3 "$root/examples/make_tiny_cnn.py" "$work/tiny_cnn.onnx" > /dev/null

checked=0
for model in "$work/tiny_cnn.onnx" "$models_dir"/*.onnx; do
  name=$(basename "$model" .onnx)
  case $name in
    tiny_cnn) shape=image=1x3x32x32 ;;
    *det*) shape=x=1x3x640x640 ;;
    *rec*) shape=x=1x3x48x320 ;;
    *cls*) shape=x=1x3x48x192 ;;
    *) echo "no input shape known for $name" >&2; exit 1 ;;
  esac
  for precision in fp32 fp16; do
    out="$work/$name.$precision"
    mkdir -p "$out"
    "$ortc" compile "$model" --ep cuda,cpu --input-shape "$shape" --precision "$precision" \
      -o "$out/" --json > "$out/report.json"
    "$ortc" inspect "$out/${name}_ctx.onnx" --json > "$out/inspect.json"
    /usr/bin/python3 - "$name" "$precision" "$out" <<'PY'
import json, os, sys
name, precision, out = sys.argv[1], sys.argv[2], sys.argv[3]
report = json.load(open(os.path.join(out, "report.json")))
inspect = json.load(open(os.path.join(out, "inspect.json")))
assert report["ok"] and inspect["ok"], inspect.get("error")
cuda_nodes = [n for n in inspect["ep_context_nodes"] if n["source"] == "ortc.cuda"]
assert cuda_nodes, "no CUDA graph"
for n in cuda_nodes:
    assert n["status"] == "ok", n
    assert n["precision"] == precision, n
    assert n["hardware_architecture"] == "sm_80,sm_86,sm_89,sm_90,compute_90", n
    assert n["ep_sdk_version"].startswith("CUDA "), n
cuda_bin = [b for b in inspect["binaries"] if b["backend"] == "cuda"]
assert len(cuda_bin) == 1
bin_ = cuda_bin[0]
assert bin_["versions"]["cuda.precision"] == precision
assert bin_["hardware_targets"] == ["sm_80", "sm_86", "sm_89", "sm_90", "compute_90"]
want = precision.upper()
kernels = convs = gemms = 0
for g in bin_["graphs"]:
    c = g["cuda"]
    assert "error" not in c, c
    assert c["precision"] == want, c
    kernels += len(c["kernels"])
    convs += c["steps"].get("conv", 0)
    gemms += c["steps"].get("gemm", 0)
    if c["kernels"]:
        targets = sorted(m["target"] for m in c["modules"])
        assert targets == ["compute_90", "sm_80", "sm_86", "sm_89", "sm_90"], targets
        assert all(m["bytes"] > 0 for m in c["modules"])
assert kernels > 0, "no generated kernel"
files = {f["kind"]: f["bytes"] for f in report["files"] if f["kind"] != "context_binary"}
bins = {os.path.basename(f["path"]): f["bytes"] for f in report["files"] if f["kind"] == "context_binary"}
cuda_bytes = [v for k, v in bins.items() if k.endswith("_cuda.bin")][0]
print(f"{name} {precision}: {len(cuda_nodes)} CUDA graph(s), {convs} conv / {gemms} gemm calls, "
      f"{kernels} kernels; cuda.bin {cuda_bytes} B, ctx {files['ctx_model']} B; "
      f"{report['phases_ms']['total'] / 1e3:.1f} s")
PY
    checked=$((checked + 1))
  done
done
[ "$checked" -eq 8 ] || { echo "expected 8 compiles, checked $checked" >&2; exit 1; }
echo "compiled and checked $checked CUDA builds"

# The LLM example as a weight-sharing group: prefill + decode -> 2 ctx models + 1 CUDA binary
# holding both models' graphs, each shared weight once. --input-shape names decode's KV cache
# inputs only (prefill has none): each applies to the models that have it.
llm="$work/llm"
mkdir -p "$llm"
/usr/bin/python3 "$root/examples/make_llm_pair.py" "$llm" > /dev/null
kv=()
for t in past_k0 past_v0 past_k1 past_v1; do kv+=(--input-shape "$t=1x127x64"); done
"$ortc" compile "$llm/prefill.onnx" "$llm/decode.onnx" --share-weights --ep cuda,cpu "${kv[@]}" \
  --precision fp16 -o "$llm/" --json > "$llm/report.json"
"$ortc" inspect "$llm/prefill_ctx.onnx" --json > "$llm/prefill.json"
"$ortc" inspect "$llm/decode_ctx.onnx" --json > "$llm/decode.json"
/usr/bin/python3 - "$llm" <<'PY'
import json, os, sys
llm = sys.argv[1]
report = json.load(open(os.path.join(llm, "report.json")))
bins = [f for f in report["files"] if f["kind"] == "context_binary"]
assert [os.path.basename(f["path"]) for f in bins] == ["prefill_cuda.bin"], bins
w = report["weights"]
assert w["unique_bytes"] < w["bytes"], w  # the two models share weights: stored once
ids = set()
for which in ("prefill", "decode"):
    inspect = json.load(open(os.path.join(llm, which + ".json")))
    assert inspect["ok"], inspect.get("error")
    cuda = [n for n in inspect["ep_context_nodes"] if n["source"] == "ortc.cuda"]
    assert cuda and all(n["status"] == "ok" and n["precision"] == "fp16" for n in cuda), cuda
    ids |= {b["content_id"] for b in inspect["binaries"] if b["backend"] == "cuda"}
assert len(ids) == 1, ids  # both ctx models point at the same binary
print(f"llm pair fp16 (--share-weights): 1 CUDA binary {bins[0]['bytes']} B; weights "
      f"{w['bytes']} B -> {w['unique_bytes']} B stored")
PY
