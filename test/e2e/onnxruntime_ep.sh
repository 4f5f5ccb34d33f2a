#!/usr/bin/env bash
# Stock ONNX Runtime 1.30 (onnxruntime-node's library) with ortc's plugin EP, through a small
# host program (test/onnxruntime_ep/ort_ep_host.cpp):
#   1. runs every CPU bundle of the end-to-end suite (tiny CNN, PaddleOCR det/rec/cls, the
#      openWakeWord models, a decoder exported at opset 23) with outputs bit-identical to `ortc
#      run`'s, and close to ONNX Runtime's own on the source models, and survives ONNX Runtime
#      unloading the plugin while OpenMP workers spin;
#   2. runs the LLM pair compiled as one weight-sharing group, both sessions in one process with
#      the shared binary mapped once, and an embed-mode-1 bundle;
#   3. compiles through ONNX Runtime's compile API (path or buffer in, path or buffer out, embed
#      modes, an external initializers file), including a model with a node ortc cannot run,
#      which stays an ONNX node for ONNX Runtime between two EPContext nodes;
#   4. turns a wrong-version and a corrupt binary into ONNX Runtime errors carrying ortc's
#      reason, and maps the version gate's verdicts to ONNX Runtime's compatibility answers.
# Usage: onnxruntime_ep.sh ORTC HOST EP_LIBRARY CACHE_DIR WORK_DIR
set -euo pipefail
ortc=$1 host=$2 lib=$3 cache=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=/usr/bin/python3
models=$("$root/scripts/fetch_test_models.sh" "$cache") || exit $?
rm -rf "$work" && mkdir -p "$work"
ep=("$host" --ep-library "$lib")
identical() { $py "$here/compare_outputs.py" "$1" "$2" "$3" 0 0; }  # rtol 0, atol 0
close() { $py "$here/compare_outputs.py" "$@"; }

make_input() {  # make_input FILE SHAPE KIND: uniform floats, or int64 tokens
  $py - "$1" "$2" "$3" <<'PY'
import sys
import numpy as np
path, shape, kind = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], sys.argv[3]
rng = np.random.default_rng(42)
x = rng.integers(0, 256, shape).astype(np.int64) if kind == "tokens" else rng.uniform(-1, 1, shape).astype(np.float32)
np.save(path, x)
PY
}

echo "== 1. CPU bundles of the end-to-end suite, run by ONNX Runtime with the ortc EP"
$py "$root/examples/make_tiny_cnn.py" "$work/tiny_cnn.onnx" > /dev/null
cases=(
  "$work/tiny_cnn.onnx|image|2,3,32,32"
  "$models/ch_PP-OCRv4_det_infer.onnx|x|1,3,96,128"
  "$models/ch_PP-OCRv4_rec_infer.onnx|x|1,3,48,160"
  "$models/ch_ppocr_mobile_v2.0_cls_infer.onnx|x|1,3,48,192"
  "$cache/oww-browser/melspectrogram.onnx|input|1,1280"
  "$cache/oww-browser/embedding_model.onnx|input_1|1,76,32,1"
)
# The openWakeWord classifiers ortc compiles (hey_jarvis has an If: section 3), static shapes.
for model in "$cache"/oww-browser/{alexa,hey_mycroft,hey_rhasspy,timer,weather}_v0.1.onnx \
             "$cache"/oww-js/{hello,namaste}_deepa.onnx; do
  cases+=("$model|$($py -c "import onnx,sys; i=onnx.load(sys.argv[1]).graph.input[0]; print(i.name+'|'+','.join(str(d.dim_value) for d in i.type.tensor_type.shape.dim))" "$model")")
done
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r model input shape <<< "$c"
  name=$(basename "$model" .onnx)
  d="$work/$name"
  mkdir -p "$d/bundle"
  make_input "$d/in.npy" "$shape" float
  "$ortc" compile "$model" -o "$d/bundle/" -q
  "$ortc" run "$d/bundle/${name}_ctx.onnx" --input "$input=$d/in.npy" --output-dir "$d/ortc" > /dev/null
  "${ep[@]}" --session "$d/bundle/${name}_ctx.onnx|$d/ort_ep|$input=$d/in.npy" > /dev/null
  "$host" --no-ep --session "$model|$d/ort|$input=$d/in.npy" > /dev/null
  identical "$name (ORT+ortc EP vs ortc run)" "$d/ortc" "$d/ort_ep"
  close "$name (ORT+ortc EP vs ORT alone)" "$d/ort" "$d/ort_ep"
  n=$((n + 1))
done
[ "$n" -eq 13 ] || { echo "expected 13 bundles, ran $n" >&2; exit 1; }
# ONNX Runtime dlcloses the plugin when its environment goes, while OpenMP workers of the last
# run may still spin (always, with OMP_WAIT_POLICY=ACTIVE). Before the plugin was linked
# -z nodelete, libgomp was unmapped under them and this crashed (intermittently by default).
m="$work/hey_mycroft_v0.1"
OMP_WAIT_POLICY=ACTIVE "${ep[@]}" --session \
  "$m/bundle/hey_mycroft_v0.1_ctx.onnx|$m/spinning|onnx::Flatten_0=$m/in.npy" > /dev/null
identical "hey_mycroft_v0.1, OpenMP workers spinning at unload" "$m/ortc" "$m/spinning"
# Selected by ONNX Runtime's device policy instead of by name.
"${ep[@]}" --select-by-policy --session "$work/tiny_cnn/bundle/tiny_cnn_ctx.onnx|$work/tiny_cnn/policy|image=$work/tiny_cnn/in.npy" > /dev/null
identical "tiny_cnn, EP chosen by the PREFER_CPU policy" "$work/tiny_cnn/ortc" "$work/tiny_cnn/policy"

# A decoder exported at opset 23 (ONNX's Attention, RMSNormalization, RotaryEmbedding ops, which
# ortc rewrites at load): its bundle in ONNX Runtime, against `ortc run` and ONNX Runtime's own
# kernels for those ops on the source model.
o="$work/opset23"
mkdir -p "$o/bundle"
$py "$here/make_newer_op_models.py" "$o/models" > /dev/null
name=llama_block_opset23
feeds=() host_feeds=""
for i in input_ids attention_mask position_ids; do
  feeds+=(--input "$i=$o/models/$name/inputs/$i.npy")
  host_feeds+="|$i=$o/models/$name/inputs/$i.npy"
done
"$ortc" compile "$o/models/$name.onnx" -o "$o/bundle/" -q
"$ortc" run "$o/bundle/${name}_ctx.onnx" "${feeds[@]}" --output-dir "$o/ortc" > /dev/null
"${ep[@]}" --session "$o/bundle/${name}_ctx.onnx|$o/ort_ep$host_feeds" > /dev/null
"$host" --no-ep --session "$o/models/$name.onnx|$o/ort$host_feeds" > /dev/null
identical "$name (ORT+ortc EP vs ortc run)" "$o/ortc" "$o/ort_ep"
close "$name (ORT+ortc EP vs ORT alone)" "$o/ort" "$o/ort_ep"

echo "== 2. the LLM pair as one weight-sharing group, and embed mode 1"
g="$work/llm"
mkdir -p "$g/out"
$py "$root/examples/make_llm_pair.py" "$g" 16 > /dev/null
"$ortc" compile "$g/prefill.onnx" "$g/decode.onnx" --share-weights -o "$g/out" -q
$py - "$g" <<'PY'
import sys
import numpy as np
g = sys.argv[1]
rng = np.random.default_rng(3)
tokens = rng.integers(0, 256, (1, 17)).astype(np.int64)
np.save(f"{g}/tokens16.npy", tokens[:, :16]); np.save(f"{g}/pos16.npy", np.arange(16, dtype=np.int64)[None])
np.save(f"{g}/token.npy", tokens[:, 16:]); np.save(f"{g}/pos.npy", np.array([[16]], np.int64))
PY
"$ortc" run "$g/out/prefill_ctx.onnx" --input tokens="$g/tokens16.npy" --input positions="$g/pos16.npy" \
  --output-dir "$g/ortc_prefill" > /dev/null
past=() past_host=""
for l in 0 1; do
  past+=(--input "past_k$l=$g/ortc_prefill/present_k$l.npy" --input "past_v$l=$g/ortc_prefill/present_v$l.npy")
  past_host+="|past_k$l=$g/ortc_prefill/present_k$l.npy|past_v$l=$g/ortc_prefill/present_v$l.npy"
done
"$ortc" run "$g/out/decode_ctx.onnx" --input tokens="$g/token.npy" --input positions="$g/pos.npy" \
  "${past[@]}" --output-dir "$g/ortc_decode" > /dev/null
"${ep[@]}" --session "$g/out/prefill_ctx.onnx|$g/ep_prefill|tokens=$g/tokens16.npy|positions=$g/pos16.npy" \
  --session "$g/out/decode_ctx.onnx|$g/ep_decode|tokens=$g/token.npy|positions=$g/pos.npy$past_host" \
  --count-mappings "$g/out/prefill_cpu.bin" > "$g/host.log"
cat "$g/host.log"
grep -qx "mappings of $g/out/prefill_cpu.bin: 1" "$g/host.log" || {
  echo "the shared binary should be mapped once for both sessions" >&2; exit 1; }
identical "llm prefill (group)" "$g/ortc_prefill" "$g/ep_prefill"
identical "llm decode (group)" "$g/ortc_decode" "$g/ep_decode"
"$host" --no-ep --session "$g/prefill.onnx|$g/ort_prefill|tokens=$g/tokens16.npy|positions=$g/pos16.npy" \
  --session "$g/decode.onnx|$g/ort_decode|tokens=$g/token.npy|positions=$g/pos.npy$past_host" > /dev/null
close "llm prefill (group) vs ORT alone" "$g/ort_prefill" "$g/ep_prefill"
close "llm decode (group) vs ORT alone" "$g/ort_decode" "$g/ep_decode"

e="$work/embed"
mkdir -p "$e"
"$ortc" compile "$work/tiny_cnn.onnx" -o "$e/" --embed-mode 1 -q
[ ! -e "$e/tiny_cnn_cpu.bin" ] || { echo "embed mode 1 wrote a binary file" >&2; exit 1; }
"${ep[@]}" --session "$e/tiny_cnn_ctx.onnx|$e/ort_ep|image=$work/tiny_cnn/in.npy" > /dev/null
identical "tiny_cnn embed mode 1" "$work/tiny_cnn/ortc" "$e/ort_ep"

echo "== 3. ONNX Runtime's compile API with the ortc EP"
c="$work/compile"
mkdir -p "$c/path" "$c/buffer_in" "$c/buffer_out" "$c/mixed" "$c/cls"
check_bundle() {  # check_bundle CTX_MODEL EXPECTED_EP_CONTEXT_NODES EXPECTED_OTHER_NODES
  $py - "$@" <<'PY'
import sys
import onnx
path, want_ep, want_other = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
m = onnx.load(path, load_external_data=False)
ep = [n for n in m.graph.node if n.op_type == "EPContext"]
other = [n for n in m.graph.node if n.op_type != "EPContext"]
assert len(ep) == want_ep and len(other) == want_other, (path, [n.op_type for n in m.graph.node])
attrs = [{a.name: a for a in n.attribute} for n in ep]
assert all(a["source"].s == b"ortc.cpu" for a in attrs), attrs
assert sum(a["main_context"].i for a in attrs) == 1, "one main context per backend"
meta = {p.key: p.value for p in m.metadata_props}
assert meta.get("ep_compatibility_info.ortc", "").startswith("ortc;format="), meta
print(f"{path}: {len(ep)} EPContext node(s), {len(other)} ONNX node(s), compatibility "
      f"'{meta['ep_compatibility_info.ortc']}'")
PY
}
# Path in, path out, binary beside the ctx model, named as `ortc compile` names it.
"${ep[@]}" --compile "$work/tiny_cnn.onnx" "$c/path/tiny_cnn_ctx.onnx" > /dev/null
[ -f "$c/path/tiny_cnn_cpu.bin" ] || { echo "no binary beside the ctx model: $(ls "$c/path")" >&2; exit 1; }
check_bundle "$c/path/tiny_cnn_ctx.onnx" 1 0
$py - "$c/path/tiny_cnn_ctx.onnx" "$work/tiny_cnn/bundle/tiny_cnn_ctx.onnx" <<'PY'
import sys
import onnx
via_ort, via_ortc = ({p.key: p.value for p in onnx.load(f).metadata_props}["ep_compatibility_info.ortc"]
                     for f in sys.argv[1:])
assert via_ort == via_ortc, (via_ort, via_ortc)
print(f"ortc compile and ONNX Runtime's compile API write the same compatibility string: {via_ortc}")
PY
"$ortc" run "$c/path/tiny_cnn_ctx.onnx" --input image="$work/tiny_cnn/in.npy" --output-dir "$c/path/ortc" > /dev/null
"${ep[@]}" --session "$c/path/tiny_cnn_ctx.onnx|$c/path/ort_ep|image=$work/tiny_cnn/in.npy" > /dev/null
identical "tiny_cnn compiled by ONNX Runtime: ortc run vs ORT+EP" "$c/path/ortc" "$c/path/ort_ep"
identical "tiny_cnn compiled by ONNX Runtime vs ortc compile" "$work/tiny_cnn/ortc" "$c/path/ortc"
# A real model, and the session that compiles for itself (no ctx model written).
"${ep[@]}" --compile "$models/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$c/cls/cls_ctx.onnx" > /dev/null
check_bundle "$c/cls/cls_ctx.onnx" 1 0
cls="$work/ch_ppocr_mobile_v2.0_cls_infer"
"${ep[@]}" --session "$c/cls/cls_ctx.onnx|$c/cls/ort_ep|x=$cls/in.npy" > /dev/null
identical "PaddleOCR cls compiled by ONNX Runtime vs ortc compile" "$cls/ortc" "$c/cls/ort_ep"
"${ep[@]}" --session "$models/ch_ppocr_mobile_v2.0_cls_infer.onnx|$c/cls/jit|x=$cls/in.npy" > /dev/null
# Not bit for bit: a session that compiles for itself hands ortc the graph after ONNX Runtime's
# own graph optimizations (its default level), which may fold or fuse differently from ortc's
# compile (the logits differed in the last bit, 3e-8, once the softmax no longer hid it).
close "PaddleOCR cls compiled in the session vs ortc compile" "$cls/ortc" "$c/cls/jit" 1e-6 1e-7
[ -z "$(find "$models" "$c" -name '.ortc-ep-*')" ] || { echo "temporary folders left behind" >&2; exit 1; }
# Buffer in, path out; path in, buffer out with the binary embedded.
"${ep[@]}" --compile "$work/tiny_cnn.onnx" "$c/buffer_in/tiny_cnn_ctx.onnx" --from-buffer > /dev/null
check_bundle "$c/buffer_in/tiny_cnn_ctx.onnx" 1 0
"${ep[@]}" --session "$c/buffer_in/tiny_cnn_ctx.onnx|$c/buffer_in/ort_ep|image=$work/tiny_cnn/in.npy" > /dev/null
identical "tiny_cnn compiled from a buffer" "$c/path/ortc" "$c/buffer_in/ort_ep"
"${ep[@]}" --compile "$work/tiny_cnn.onnx" "$c/buffer_out/tiny_cnn_ctx.onnx" --to-buffer --embed > /dev/null
check_bundle "$c/buffer_out/tiny_cnn_ctx.onnx" 1 0
[ "$(ls "$c/buffer_out")" = "tiny_cnn_ctx.onnx" ] || { echo "embed mode wrote more files: $(ls "$c/buffer_out")" >&2; exit 1; }
"$ortc" run "$c/buffer_out/tiny_cnn_ctx.onnx" --input image="$work/tiny_cnn/in.npy" --output-dir "$c/buffer_out/ortc" > /dev/null
identical "tiny_cnn compiled to a buffer (embedded), run by ortc" "$c/path/ortc" "$c/buffer_out/ortc"
# Buffer in and buffer out without embedding: the binary has nowhere to go, and the error says so.
if "${ep[@]}" --compile "$work/tiny_cnn.onnx" "$c/nowhere.onnx" --from-buffer --to-buffer 2> "$c/nowhere.err"; then
  echo "compiling buffer to buffer without embedding should fail" >&2; exit 1
fi
grep -q "embed" "$c/nowhere.err" || { echo "unhelpful error: $(cat "$c/nowhere.err")" >&2; exit 1; }
# A node ortc does not run (com.microsoft FusedMatMul) stays an ONNX node: two EPContext nodes
# around it, its weight in the external initializers file.
$py "$root/test/onnxruntime_ep/make_mixed_model.py" "$c/mixed" > /dev/null
make_input "$c/mixed/x.npy" 1,3,16,16 float
mkdir -p "$c/mixed/out"
"${ep[@]}" --compile "$c/mixed/mixed.onnx" "$c/mixed/out/mixed_ctx.onnx" --external-initializers mixed_weights.bin > /dev/null
check_bundle "$c/mixed/out/mixed_ctx.onnx" 2 1
[ -s "$c/mixed/out/mixed_weights.bin" ] || { echo "no external initializers file: $(ls "$c/mixed/out")" >&2; exit 1; }
"${ep[@]}" --session "$c/mixed/out/mixed_ctx.onnx|$c/mixed/ort_ep|x=$c/mixed/x.npy" > /dev/null
"$host" --no-ep --session "$c/mixed/mixed.onnx|$c/mixed/ort|x=$c/mixed/x.npy" > /dev/null
close "mixed model (2 EPContext nodes + ONNX Runtime's FusedMatMul)" "$c/mixed/ort" "$c/mixed/ort_ep"

# For CUDA too, on a machine without a GPU: a compile-only session loads nothing. Needs NVRTC.
cu="$c/cuda"
mkdir -p "$cu"
if "$ortc" compile "$work/tiny_cnn.onnx" --ep cuda,cpu --input-shape image=2x3x32x32 -o "$cu/" -q 2> /dev/null; then
  rm -f "$cu"/*
  "${ep[@]}" --ep-option backends=cuda,cpu --free-dim batch=2 --compile "$work/tiny_cnn.onnx" "$cu/tiny_cnn_ctx.onnx" > /dev/null
  [ "$(ls "$cu" | tr '\n' ' ')" = "tiny_cnn_cpu.bin tiny_cnn_ctx.onnx tiny_cnn_cuda.bin " ] || {
    echo "unexpected files: $(ls "$cu")" >&2; exit 1; }
  "$ortc" inspect "$cu/tiny_cnn_ctx.onnx" --json > "$cu/inspect.json"
  $py - "$cu" <<'PY'
import json, sys
import onnx
d = sys.argv[1]
inspect = json.load(open(f"{d}/inspect.json"))
sources = sorted(n["source"] for n in inspect["ep_context_nodes"])
assert inspect["ok"] and sources == ["ortc.cpu", "ortc.cuda"], inspect
assert all(n["status"] == "ok" for n in inspect["ep_context_nodes"]), inspect
meta = {p.key: p.value for p in onnx.load(f"{d}/tiny_cnn_ctx.onnx").metadata_props}
assert ";cuda=sm_" in meta["ep_compatibility_info.ortc"], meta
print(f"tiny_cnn for cuda,cpu through ONNX Runtime's compile API: {sources}, "
      f"compatibility '{meta['ep_compatibility_info.ortc']}'")
PY
  if ! command -v nvidia-smi > /dev/null; then
    # No GPU: ONNX Runtime asks the EP first and refuses the bundle.
    if "${ep[@]}" --session "$cu/tiny_cnn_ctx.onnx|$cu/out|image=$work/tiny_cnn/in.npy" 2> "$cu/err"; then
      echo "a CUDA bundle ran without a GPU" >&2; exit 1
    fi
    grep -q "not supported by execution provider: ortc" "$cu/err" || { echo "unexpected: $(cat "$cu/err")" >&2; exit 1; }
    echo "without a GPU, ONNX Runtime refuses the CUDA bundle: $(cat "$cu/err")"
  fi
else
  echo "note: NVRTC not available; the CUDA compile through ONNX Runtime is not checked" >&2
fi

# A real model with an If (which ortc has no kernel for): a session on the source model compiles
# the nodes around it and ONNX Runtime runs the If. (ONNX Runtime 1.30's compile API writes an
# invalid model for this one even without any EP: its If subgraph's initializers come out twice.)
hj="$c/hey_jarvis"
mkdir -p "$hj"
make_input "$hj/x.npy" 1,16,96 float
"${ep[@]}" --session "$cache/oww-browser/hey_jarvis_v0.1.onnx|$hj/ort_ep|x.1=$hj/x.npy" > /dev/null
"$host" --no-ep --session "$cache/oww-browser/hey_jarvis_v0.1.onnx|$hj/ort|x.1=$hj/x.npy" > /dev/null
close "hey_jarvis (ortc groups around ONNX Runtime's If)" "$hj/ort" "$hj/ort_ep"

echo "== 4. version gate through ONNX Runtime"
b="$work/bad"
mkdir -p "$b"
cp "$work/tiny_cnn/bundle/tiny_cnn_ctx.onnx" "$work/tiny_cnn/bundle/tiny_cnn_cpu.bin" "$b/"
expect_error() {  # expect_error TEXT: the session must fail with ortc's reason in ONNX Runtime's error
  if "${ep[@]}" --session "$b/tiny_cnn_ctx.onnx|$b/out|image=$work/tiny_cnn/in.npy" 2> "$b/err"; then
    echo "ONNX Runtime accepted a bad binary" >&2; exit 1
  fi
  grep -q "ortc: .*$1" "$b/err" || { echo "expected '$1' in: $(cat "$b/err")" >&2; exit 1; }
  echo "refused: $(cat "$b/err")"
}
printf '\x09' | dd of="$b/tiny_cnn_cpu.bin" bs=1 seek=8 conv=notrunc 2> /dev/null  # format major 9
expect_error "format version 9.0 cannot be read"
cp "$work/tiny_cnn/bundle/tiny_cnn_cpu.bin" "$b/"
size=$(stat -c %s "$b/tiny_cnn_cpu.bin")
printf '\xff\xff\xff\xff' | dd of="$b/tiny_cnn_cpu.bin" bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
expect_error "checksum mismatch"
compat() {  # compat INFO EXPECTED
  got=$("${ep[@]}" --compatibility "$1")
  [ "$got" = "compatibility: $2" ] || { echo "'$1': $got, expected $2" >&2; exit 1; }
  echo "'$1' -> $2"
}
compat "ortc;format=1.0;cpu=generic-le" EP_SUPPORTED_OPTIMAL
compat "ortc;format=9.0;cpu=generic-le" EP_UNSUPPORTED
compat "ortc;format=1.0;cpu=no_such_isa" EP_UNSUPPORTED
compat "something else" EP_NOT_APPLICABLE
if grep -qw avx2 /proc/cpuinfo; then compat "ortc;format=1.0;cpu=sse4.2" EP_SUPPORTED_PREFER_RECOMPILATION; fi
# ONNX Runtime asks at session creation, from the metadata its compile API wrote: an unsupported
# bundle is refused; a suboptimal one runs, or is refused under
# session.fail_on_suboptimal_compiled_model=1 (ortc's "require optimal" policy).
with_info() {  # with_info INFO OUT [CTX]: a bundle (default: the compile API's) with another string
  $py - "${3:-$c/path/tiny_cnn_ctx.onnx}" "$1" "$2" <<'PY'
import sys
import onnx
m = onnx.load(sys.argv[1])
keys = [p for p in m.metadata_props if p.key == "ep_compatibility_info.ortc"]
assert len(keys) == 1, f"{sys.argv[1]}: {m.metadata_props}"
keys[0].value = sys.argv[2]
onnx.save(m, sys.argv[3])
PY
}
with_info "ortc;format=9.0;cpu=generic-le" "$c/path/unsupported_ctx.onnx"
if "${ep[@]}" --session "$c/path/unsupported_ctx.onnx|$b/out|image=$work/tiny_cnn/in.npy" 2> "$b/err"; then
  echo "ONNX Runtime ran a bundle the EP called unsupported" >&2; exit 1
fi
grep -q "not supported by execution provider: ortc" "$b/err" || { echo "unexpected: $(cat "$b/err")" >&2; exit 1; }
if grep -qw avx2 /proc/cpuinfo; then
  with_info "ortc;format=1.0;cpu=sse4.2" "$c/path/suboptimal_ctx.onnx"
  "${ep[@]}" --session "$c/path/suboptimal_ctx.onnx|$b/out|image=$work/tiny_cnn/in.npy" > /dev/null
  if "${ep[@]}" --config session.fail_on_suboptimal_compiled_model=1 \
      --session "$c/path/suboptimal_ctx.onnx|$b/out|image=$work/tiny_cnn/in.npy" 2> "$b/err"; then
    echo "ONNX Runtime ran a suboptimal bundle under fail_on_suboptimal_compiled_model" >&2; exit 1
  fi
  grep -q "suboptimal for execution provider: ortc" "$b/err" || { echo "unexpected: $(cat "$b/err")" >&2; exit 1; }
fi
# `ortc compile` writes the same string, so ONNX Runtime asks about its bundles too.
with_info "ortc;format=9.0;cpu=generic-le" "$work/tiny_cnn/bundle/unsupported_ctx.onnx" "$work/tiny_cnn/bundle/tiny_cnn_ctx.onnx"
if "${ep[@]}" --session "$work/tiny_cnn/bundle/unsupported_ctx.onnx|$b/out|image=$work/tiny_cnn/in.npy" 2> "$b/err"; then
  echo "ONNX Runtime ran an ortc compile bundle the EP called unsupported" >&2; exit 1
fi
grep -q "not supported by execution provider: ortc" "$b/err" || { echo "unexpected: $(cat "$b/err")" >&2; exit 1; }
echo "session creation follows the compatibility answers"

echo "== 5. models from buffers, and bad options"
# A ctx model given as bytes has no folder: its binary is found through ep.context_file_path,
# and without it the error says so. An embedded binary needs nothing.
tiny_ctx="$work/tiny_cnn/bundle/tiny_cnn_ctx.onnx"
if "${ep[@]}" --sessions-from-buffer --session "$tiny_ctx|$b/out|image=$work/tiny_cnn/in.npy" 2> "$b/err"; then
  echo "a buffer load found a binary without a path" >&2; exit 1
fi
grep -q "ortc: .*context_file_path" "$b/err" || { echo "unexpected: $(cat "$b/err")" >&2; exit 1; }
"${ep[@]}" --sessions-from-buffer --config "ep.context_file_path=$tiny_ctx" \
  --session "$tiny_ctx|$b/from_buffer|image=$work/tiny_cnn/in.npy" > /dev/null
identical "tiny_cnn from a buffer" "$work/tiny_cnn/ortc" "$b/from_buffer"
"${ep[@]}" --sessions-from-buffer --session "$e/tiny_cnn_ctx.onnx|$b/embedded|image=$work/tiny_cnn/in.npy" > /dev/null
identical "tiny_cnn embedded, from a buffer" "$work/tiny_cnn/ortc" "$b/embedded"
bad_option() {  # bad_option OPTION TEXT
  if "${ep[@]}" --ep-option "$1" --session "$work/tiny_cnn.onnx|$b/out|image=$work/tiny_cnn/in.npy" 2> "$b/err"; then
    echo "option $1 was accepted" >&2; exit 1
  fi
  grep -q "ortc: .*$2" "$b/err" || { echo "option $1: unexpected: $(cat "$b/err")" >&2; exit 1; }
  echo "refused $1: $(cat "$b/err")"
}
bad_option backends=npu9 "unknown backend 'npu9'"
bad_option require_optimal=yes "require_optimal must be 0 or 1"
echo "onnxruntime_ep: all checks passed"
