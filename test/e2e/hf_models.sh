#!/usr/bin/env bash
# Hugging Face transformers as PyTorch 2.11's exporters write them, through ortc end to end:
# the five real exports in test/fixtures/transformers ("fixtures") and the models
# make_hf_models.py writes in the same op spellings for other architectures, sizes and export
# settings ("torchscript": BERT, RoBERTa, ViT, GPT-2; "dynamo": Llama, Qwen2, BERT, and Llama, BERT
# and Gemma exported at opset 23, where SDPA is the Attention op and GELU the Gelu op; "static": an MQA
# Llama exported at fixed shapes like the llama fixture; "more": architectures beyond those,
# DistilBERT and a T5 encoder (TorchScript), Mistral, Gemma, Qwen3, Phi-3, Phi-2, GPT-NeoX
# (dynamo); "settings": export settings beyond the defaults, opset_version=14 through the
# TorchScript exporter (LayerNorm decomposed) for BERT and GPT-2, attn_implementation="eager"
# through the dynamo exporter for Llama and Mistral; generated ones at [1,32] and [2,64], ViT at
# batch 1 and 2).
# The two KV-cache fixtures are also compiled together as one --share-weights group for CUDA
# (check share-weights). For each model and shape, one line per check:
#   reference      generated models with a numpy reference (make_hf_models.py --reference, the
#                  model's math written from its Hugging Face definition): ONNX Runtime's outputs
#                  against it at the real (unpadded) tokens, 1e-4 relative L2. A check of the
#                  generated graph, not of ortc: it says the graph is the model it claims to be;
#   partition      `ortc partition --ep cuda,cpu --max-partitions 1`: exactly one CUDA group, no
#                  CPU group, no dynamic value left once --input-shape fixes the inputs;
#   compile P      `ortc compile --ep cuda,cpu --max-partitions 1 --precision P` for fp32, fp16,
#                  bf16 succeeds (lowering counts printed: fused attentions, GELUs, LayerNorms...);
#   emulate P      the CUDA program in the host emulator (test/backends/cuda/emulator) agrees
#                  with the CPU runtime within the precision's bounds;
#                  a generated model's second shape is compiled and emulated at fp16 only: the
#                  precisions' kernels are checked at the first shape, the shape rules at fp16
#                  (what users run), and the run stays within CI's time;
#   cpu            the CPU bundle (`ortc compile --ep cpu`, `ortc run`) against PyTorch's outputs
#                  (fixtures) or ONNX Runtime's (generated models): 1e-4 relative L2 per output;
#   cpu-dynamic    generated models with dynamic axes: one CPU bundle compiled without
#                  --input-shape, run at every shape, against ONNX Runtime the same way.
# Every check runs even when an earlier one failed; the script exits 1 when any failed, 77
# (skipped, with the reason) only when the toolchain or the reference runtime is missing here.
# CUDA compiles target sm_80 alone: the checks are about the graph, and one NVRTC target keeps
# the run short (the emulator compiles the same way).
# Usage: hf_models.sh ORTC_BINARY EMULATE_BINARY WORK_DIR GROUP|MODEL...
#        GROUP: fixtures, torchscript, dynamo, static, more, settings, all
set -uo pipefail
ortc=$1 emulate=$2 work=$3
shift 3
[ $# -gt 0 ] || set -- all
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=/usr/bin/python3
check="$py $here/hf_check.py"
fixtures_dir=$root/test/fixtures/transformers
all_precisions=(fp32 fp16 bf16)

torchscript=(bert_sdpa bert_eager roberta_sdpa vit_eager gpt2_sdpa gpt2_eager)
dynamo=(llama_sdpa qwen2_sdpa bert_dynamo_sdpa llama_sdpa_opset23 bert_dynamo_sdpa_opset23 gemma_sdpa_opset23)
static=(llama_mqa_static)
more=(distilbert_sdpa t5_encoder_eager mistral_sdpa gemma_sdpa qwen3_sdpa phi3_sdpa phi_sdpa gpt_neox_sdpa)
settings=(bert_sdpa_opset14 gpt2_sdpa_opset14 llama_eager mistral_eager)
fixtures=(bert_torchscript_sdpa vit_torchscript_eager llama_dynamo_sdpa llama_kv_prefill_dynamo llama_kv_decode_dynamo)
want_fixtures=() want_models=()
for g in "$@"; do
  case $g in
    fixtures) want_fixtures+=("${fixtures[@]}") ;;
    torchscript) want_models+=("${torchscript[@]}") ;;
    dynamo) want_models+=("${dynamo[@]}") ;;
    static) want_models+=("${static[@]}") ;;
    more) want_models+=("${more[@]}") ;;
    settings) want_models+=("${settings[@]}") ;;
    all)
      want_fixtures+=("${fixtures[@]}")
      want_models+=("${torchscript[@]}" "${dynamo[@]}" "${static[@]}" "${more[@]}" "${settings[@]}")
      ;;
    *) if [ -d "$fixtures_dir/$g" ]; then want_fixtures+=("$g"); else want_models+=("$g"); fi ;;
  esac
done

if ! $py -c "import numpy, onnx" 2> /dev/null; then
  echo "SKIP: python3-numpy and python3-onnx are needed (run scripts/setup.sh)" >&2
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"

# NVRTC is what CUDA compiles need: without it nothing here can be checked, which is a skip of
# the whole test, not a failure of one model. Only ortc's "not found" message counts (the
# emulator's test, test/support/run_ortc.h): a kernel NVRTC rejects is a failure.
$check probe-model "$work/probe.onnx"
if ! "$ortc" compile "$work/probe.onnx" --ep cuda,cpu --target-arch sm_80 -o "$work/probe/" -q > "$work/probe.log" 2>&1 &&
  grep -q "NVRTC (CUDA toolkit runtime compiler) not found" "$work/probe.log"; then
  echo "SKIP: CUDA compiles need NVRTC: $(tail -1 "$work/probe.log")" >&2
  exit 77
fi
have_ort=1
[ -d "$root/test/reference/node_modules/onnxruntime-node" ] || have_ort=0

passed=0 failed=0 unavailable=0
failures=()
report() {  # report MODEL SHAPE CHECK STATUS MESSAGE
  printf '%-24s %-9s %-12s %-4s %s\n' "$1" "$2" "$3" "$4" "$5"
  case $4 in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) failures+=("$1 $2 $3: $5") ;;
    *) unavailable=$((unavailable + 1)) ;;
  esac
}
# The last lines of a command's error output, on one line.
err_tail() { tail -n "${2:-3}" "$1" 2> /dev/null | tr '\n' ' ' | cut -c1-600; }

# check_model LABEL SHAPE MODEL DIR REFERENCE PRECISION...: the CUDA checks at each PRECISION,
# then the CPU bundle against REFERENCE ("ort", or a fixture folder holding out_*.npy). Expects
# shape_args, emu_args, feeds and ort_feeds set by hf_check.py inputs / fixture-inputs.
check_model() {
  local name=$1 shape=$2 model=$3 d=$4 ref=$5 msg rc p stem
  shift 5
  local precisions=("$@")
  stem=$(basename "$model" .onnx)
  mkdir -p "$d"
  "$ortc" partition "$model" --ep cuda,cpu --max-partitions 1 --json "${shape_args[@]}" \
    > "$d/partition.json" 2> "$d/partition.err"
  if msg=$($check partition "$d/partition.json"); then
    report "$name" "$shape" partition PASS "$msg"
  else
    report "$name" "$shape" partition FAIL "$msg $(err_tail "$d/partition.err" 1)"
  fi
  for p in "${precisions[@]}"; do
    "$ortc" compile "$model" --ep cuda,cpu --max-partitions 1 --precision "$p" --target-arch sm_80 \
      "${shape_args[@]}" -o "$d/cuda_$p/" -q --json > "$d/compile_$p.json" 2> "$d/compile_$p.err"
    rc=$?
    if msg=$($check lowering "$d/compile_$p.json") && [ $rc -eq 0 ]; then
      report "$name" "$shape" "compile $p" PASS "$msg"
    else
      report "$name" "$shape" "compile $p" FAIL "exit $rc: $msg $(err_tail "$d/compile_$p.err" 1)"
    fi
    rm -f "$d/cuda_$p"/*.bin
  done
  for p in "${precisions[@]}"; do
    # Verbose: every intermediate's error, so a failure names the first value beyond tolerance.
    ORTC_EMULATE_VERBOSE=1 "$emulate" "$model" "${emu_args[@]}" --precision "$p" > "$d/emulate_$p.txt" 2>&1
    rc=$?
    case $rc in
      0) report "$name" "$shape" "emulate $p" PASS "$(head -1 "$d/emulate_$p.txt" | sed 's/^[a-z0-9]* //')" ;;
      77) report "$name" "$shape" "emulate $p" SKIP "emulator: $(err_tail "$d/emulate_$p.txt" 1)" ;;
      6) # the summary, then the first values beyond tolerance (outputs, then intermediates in
        # buffer order, which is about execution order)
        msg="$(head -1 "$d/emulate_$p.txt" | sed 's/^[a-z0-9]* //') | beyond: $(tail -n +2 "$d/emulate_$p.txt" |
          grep -E ' [1-9][0-9]* beyond$' | head -4 | sed 's/^ *//' | tr '\n' ';')"
        report "$name" "$shape" "emulate $p" FAIL "$msg" ;;
      *) report "$name" "$shape" "emulate $p" FAIL "exit $rc: $(err_tail "$d/emulate_$p.txt" 2)" ;;
    esac
  done
  # The CPU bundle at the same fixed shapes.
  if ! "$ortc" compile "$model" --ep cpu "${shape_args[@]}" -o "$d/cpu/" -q 2> "$d/cpu.err"; then
    report "$name" "$shape" cpu FAIL "compile: $(err_tail "$d/cpu.err" 2)"
  elif ! "$ortc" run "$d/cpu/${stem}_ctx.onnx" "${feeds[@]}" --output-dir "$d/cpu_out" > /dev/null 2> "$d/cpu.err"; then
    report "$name" "$shape" cpu FAIL "run: $(err_tail "$d/cpu.err" 2)"
  elif [ "$ref" = ort ]; then
    if [ $have_ort = 0 ]; then
      report "$name" "$shape" cpu SKIP "onnxruntime-node is not installed (scripts/setup.sh)"
    elif [ ! -d "$d/ort" ] && ! node "$root/test/reference/ort_run.js" "$model" "$d/ort" "${ort_feeds[@]}" \
      > /dev/null 2> "$d/ort.err"; then
      report "$name" "$shape" cpu FAIL "ONNX Runtime could not run the model: $(err_tail "$d/ort.err" 2)"
    elif msg=$($check compare "$d/ort" "" "$d/cpu_out"); then
      report "$name" "$shape" cpu PASS "vs ONNX Runtime, $msg"
    else
      report "$name" "$shape" cpu FAIL "vs ONNX Runtime: $msg"
    fi
  elif msg=$($check compare "$ref" out_ "$d/cpu_out"); then
    report "$name" "$shape" cpu PASS "vs PyTorch, $msg"
  else
    report "$name" "$shape" cpu FAIL "vs PyTorch: $msg"
  fi
}

for f in "${want_fixtures[@]}"; do
  if ! args=$($check fixture-inputs "$fixtures_dir/$f"); then
    report "$f" - inputs FAIL "cannot read the fixture: $args"
    continue
  fi
  eval "$args"
  shape=$($py -c "import numpy as np, sys; a = np.load(sys.argv[1]); print('x'.join(map(str, a.shape)))" \
    "$(ls "$fixtures_dir/$f"/in_*.npy | head -1)")
  check_model "$f" "$shape" "$fixtures_dir/$f/model.onnx" "$work/$f" "$fixtures_dir/$f" \
    "${all_precisions[@]}"
done

# The KV-cache pair (prefill and one decode step of one Llama) as one weight-sharing group for
# CUDA: two ctx models, one CUDA binary, each graph one CUDA group, every weight stored once.
if [[ " ${want_fixtures[*]} " == *" llama_kv_prefill_dynamo "* &&
  " ${want_fixtures[*]} " == *" llama_kv_decode_dynamo "* ]]; then
  d=$work/llama_kv_shared
  mkdir -p "$d"
  cp "$fixtures_dir/llama_kv_prefill_dynamo/model.onnx" "$d/prefill.onnx"
  cp "$fixtures_dir/llama_kv_decode_dynamo/model.onnx" "$d/decode.onnx"
  "$ortc" compile "$d/prefill.onnx" "$d/decode.onnx" --share-weights --ep cuda,cpu --max-partitions 1 \
    --target-arch sm_80 -o "$d/bundle/" --json > "$d/compile.json" 2> "$d/compile.err"
  if msg=$($check shared-group "$d/compile.json"); then
    report llama_kv_shared - share-weights PASS "$msg"
  else
    report llama_kv_shared - share-weights FAIL "$msg $(err_tail "$d/compile.err" 1)"
  fi
fi

gen="$py $here/make_hf_models.py $work/models --weights"
for m in "${want_models[@]}"; do
  if [[ $m == vit* ]]; then shapes=(1 2); else shapes=(1x32 2x64); fi
  # A static export has its shape baked in: one model per shape.
  static=0
  [[ $m == *_static ]] && static=1
  if [ $static = 0 ] && ! $gen --only "$m" > "$work/gen.log" 2>&1; then
    report "$m" - generate FAIL "$(err_tail "$work/gen.log" 2)"
    continue
  fi
  for shape in "${shapes[@]}"; do
    name=$m
    if [ $static = 1 ]; then
      name=${m}_$shape
      if ! $gen --only "$m" --static "$shape" > "$work/gen.log" 2>&1; then
        report "$m" "$shape" generate FAIL "$(err_tail "$work/gen.log" 2)"
        continue
      fi
    fi
    d=$work/$name.$shape
    if ! args=$($check inputs "$work/models/models.json" "$name" "$shape" "$d/in"); then
      report "$m" "$shape" inputs FAIL "$args"
      continue
    fi
    eval "$args"
    # The generated graph against the model's numpy reference, where it has one (ONNX Runtime's
    # outputs are kept for the cpu check). Only real tokens count: a query with no visible key
    # (a left-padded decoder row) is undefined in the model, PyTorch's SDPA giving 0 and the
    # exported graph's finite "lowest" bias a uniform average.
    if [ $have_ort = 1 ] && $py -c "import json, sys
sys.exit(0 if {e['name']: e for e in json.load(open(sys.argv[1]))}[sys.argv[2]].get('reference') else 1)" \
      "$work/models/models.json" "$name"; then
      rows=()
      [ -f "$d/in/attention_mask.npy" ] && rows=("$d/in/attention_mask.npy")
      if ! node "$root/test/reference/ort_run.js" "$work/models/$name.onnx" "$d/ort" "${ort_feeds[@]}" \
        > /dev/null 2> "$d/ort.err"; then
        rm -rf "$d/ort"
        report "$m" "$shape" reference FAIL "ONNX Runtime could not run the model: $(err_tail "$d/ort.err" 2)"
      elif ! $gen --reference "$name" --inputs "$d/in" --outputs "$d/reference" > /dev/null 2> "$d/reference.err"; then
        report "$m" "$shape" reference FAIL "numpy reference: $(err_tail "$d/reference.err" 2)"
      elif msg=$($check compare "$d/reference" "" "$d/ort" "${rows[@]}"); then
        report "$m" "$shape" reference PASS "ONNX Runtime vs numpy reference, $msg"
      else
        report "$m" "$shape" reference FAIL "ONNX Runtime vs numpy reference: $msg"
      fi
    fi
    if [ "$shape" = "${shapes[0]}" ]; then
      check_model "$m" "$shape" "$work/models/$name.onnx" "$d" ort "${all_precisions[@]}"
    else
      check_model "$m" "$shape" "$work/models/$name.onnx" "$d" ort fp16
    fi
  done
  # One CPU bundle with the axes left dynamic, run at every shape.
  [ $static = 1 ] && continue
  if ! "$ortc" compile "$work/models/$m.onnx" --ep cpu -o "$work/$m.cpu_dynamic/" -q 2> "$work/$m.cpu_dynamic.err"; then
    report "$m" any cpu-dynamic FAIL "compile: $(err_tail "$work/$m.cpu_dynamic.err" 2)"
    continue
  fi
  for shape in "${shapes[@]}"; do
    d=$work/$m.$shape
    args=$($check inputs "$work/models/models.json" "$m" "$shape" "$d/in") && eval "$args"
    if ! "$ortc" run "$work/$m.cpu_dynamic/${m}_ctx.onnx" "${feeds[@]}" --output-dir "$d/cpu_dynamic_out" \
      > /dev/null 2> "$d/cpu_dynamic.err"; then
      report "$m" "$shape" cpu-dynamic FAIL "run: $(err_tail "$d/cpu_dynamic.err" 2)"
    elif [ ! -d "$d/ort" ]; then
      report "$m" "$shape" cpu-dynamic SKIP "no ONNX Runtime outputs to compare with"
    elif msg=$($check compare "$d/ort" "" "$d/cpu_dynamic_out"); then
      report "$m" "$shape" cpu-dynamic PASS "vs ONNX Runtime, $msg"
    else
      report "$m" "$shape" cpu-dynamic FAIL "vs ONNX Runtime: $msg"
    fi
  done
done

echo "hf_models: $passed checks passed, $failed failed, $unavailable not run"
if [ "$failed" -gt 0 ]; then
  printf 'FAILED: %s\n' "${failures[@]}"
  exit 1
fi
if [ "$unavailable" -gt 0 ]; then
  echo "SKIP: $unavailable checks could not run here (see the SKIP lines above)" >&2
  exit 77
fi
[ "$passed" -gt 0 ] || { echo "no checks ran" >&2; exit 1; }
