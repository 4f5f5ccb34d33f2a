#!/usr/bin/env bash
# The out-of-tree backend template (examples/backend_skeleton, backend `npu`) built against
# `cmake --install`'s output alone, then used by the installed ortc beside the in-tree CUDA and
# CPU backends: one weight-sharing group of two int8 QDQ models (batch 1 and 2) compiled across
# npu, cuda and cpu, run (CUDA programs in the host emulator plugin, npu graphs in the skeleton's
# host simulation) and held to a numpy reference computed by the operators' definitions; the
# version gate asks the npu plugin about the SDK the binary was compiled with. Given the ONNX
# Runtime test host and the ortc EP library, stock ONNX Runtime runs the same bundles too.
# Usage: backend_skeleton.sh BUILD_DIR WORK_DIR CUDA_EMULATOR_PLUGIN_DIR [ORT_HOST EP_LIBRARY]
set -euo pipefail
build=$1
work=$2
emulator=$3
ort_host=${4:-}
ort_ep=${5:+$(realpath "$5")}  # ONNX Runtime resolves a relative path against its own folder
src=$(cd "$(dirname "$0")/../.." && pwd)
py=/usr/bin/python3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
ortc=$prefix/bin/ortc

# 1. The skeleton builds against the installed package alone, and its own test passes.
cmake -S "$src/examples/backend_skeleton" -B "$work/npu" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$work/npu-configure.log"
cmake --build "$work/npu" > "$work/npu-build.log"
ctest --test-dir "$work/npu" --output-on-failure > "$work/npu-test.log" ||
  { cat "$work/npu-test.log" >&2; fail "the skeleton's own test"; }
symbols=$(nm -D --defined-only "$work/npu/libortc_backend_npu.so" | awk '{print $3}' | sort | tr '\n' ' ')
[ "$symbols" = "ortc_backend_compiler_create ortc_backend_compiler_release ortc_backend_create ortc_backend_release " ] ||
  fail "the npu plugin exports [$symbols]"
echo "skeleton: built against the installed package, its test passed, it exports the four ABI symbols"

# 2. A weight-sharing group compiled across three backends.
"$py" "$src/test/e2e/make_qdq_three_backends.py" "$work/models" > /dev/null
m=$work/models
# The partition: the plugin's claims and its reasons for what it leaves, in ortc's report.
"$ortc" partition "$m/qdq_b1.onnx" --ep npu,cuda,cpu --backend-path "$work/npu" --json \
  > "$work/partition.json"
"$py" - "$work/partition.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
by_backend = {}
for g in r["groups"]:
    by_backend.setdefault(g["backend"], []).append(g)
npu_nodes = sorted(n for g in by_backend.get("npu", []) for n in g["nodes"])
assert {"conv1", "conv2", "fc", "q_c1", "dq_w3"} <= set(npu_nodes), f"npu groups: {npu_nodes}"
assert "cuda" in by_backend and "cpu" in by_backend, f"groups per backend: {list(by_backend)}"
reasons = [x["reason"] for x in r["refusals"] if x["backend"] == "npu"]
assert any("QuantizeLinear only as the output" in x for x in reasons), reasons
assert any("Softmax" in x for x in reasons), reasons
print("partition: the npu takes the QDQ Conv and MatMul units; its refusals carry its reasons")
PY
"$ortc" compile "$m/qdq_b1.onnx" "$m/qdq_b2.onnx" --share-weights --ep npu,cuda,cpu \
  --backend-path "$work/npu" --target-arch sm_80 -o "$work/out/" --json > "$work/compile.json"
"$py" - "$work/compile.json" "$work/out" <<'PY'
import json, os, sys
report = json.load(open(sys.argv[1]))
out = sys.argv[2]
bins = sorted(f for f in os.listdir(out) if f.endswith(".bin"))
backends = sorted(b.rsplit("_", 1)[1][:-4] for b in bins)
assert backends == ["cpu", "cuda", "npu"], f"one binary per backend expected, got {bins}"
import onnx
for ctx in ("qdq_b1_ctx.onnx", "qdq_b2_ctx.onnx"):
    model = onnx.load(os.path.join(out, ctx))
    sources = {}
    for node in model.graph.node:
        if node.op_type == "EPContext":
            src = [a.s.decode() for a in node.attribute if a.name == "source"][0]
            sources[src] = sources.get(src, 0) + 1
    assert sorted(sources) == ["ortc.cpu", "ortc.cuda", "ortc.npu"], f"{ctx}: {sources}"
    assert sources["ortc.npu"] == 2, f"{ctx}: two npu groups (the convolutions, the matmul): {sources}"
print("compile: both models span npu, cuda and cpu; one binary per backend:", ", ".join(bins))
PY
npu_bin=$(ls "$work/out/"*_npu.bin)
"$ortc" inspect "$npu_bin" --json > "$work/inspect_npu.json"
"$py" - "$work/inspect_npu.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
graphs = r["graphs"]
assert len(graphs) == 4, f"two npu graphs per model expected, got {[g['name'] for g in graphs]}"
# w1, b1, w2 and w3 are the same tensors in both models: the pool holds each once.
refs = sum(g["weights"]["count"] for g in graphs)
assert refs == 8, f"the 4 graphs use 8 weight slots, got {refs}"
w = r["weights"]
assert w["count"] == 8 and w["unique_count"] == 4, f"w1, b1, w2, w3 stored once each: {w}"
print("share-weights: 4 npu graphs reference one pool of 4 weights, each stored once")
PY

# 3. Both bundles run, held to the reference.
export ORTC_BACKEND_PATH="$work/npu:$emulator"
for b in 1 2; do
  "$ortc" run "$work/out/qdq_b${b}_ctx.onnx" --input "x=$m/x_b$b.npy" --output-dir "$work/run_b$b" > /dev/null
  "$py" - "$work/run_b$b" "$m" "$b" <<'PY'
import sys
import numpy as np
run, m, b = sys.argv[1:]
q2 = np.load(f"{run}/q2.npy").astype(int)
want_q2 = np.load(f"{m}/expected_q2_b{b}.npy").astype(int)
diff = np.abs(q2 - want_q2)
assert diff.max() <= 1 and (diff > 0).mean() < 0.01, f"int8 q2: max diff {diff.max()}, {(diff > 0).sum()} of {diff.size} differ"
assert len(np.unique(q2)) > 20, "q2 is too uniform to prove anything"
label = np.load(f"{run}/label.npy")
probs = np.load(f"{run}/probs.npy")
want = np.load(f"{m}/expected_probs_b{b}.npy")
assert np.array_equal(label, np.load(f"{m}/expected_label_b{b}.npy")), f"label {label}"
assert np.allclose(probs, want, atol=1e-5), f"probs differ by {np.abs(probs - want).max()}"
print(f"run batch {b}: q2 within 1 LSB of the reference ({(diff > 0).sum()} of {diff.size} off by one), probs and label equal it")
PY
done

# 3b. Stock ONNX Runtime runs the same bundles through the ortc EP, plugins and all.
if [ -n "$ort_host" ]; then
  for b in 1 2; do
    "$ort_host" --ep-library "$ort_ep" \
      --session "$work/out/qdq_b${b}_ctx.onnx|$work/ort_b$b|x=$m/x_b$b.npy" > /dev/null
    "$py" - "$work/ort_b$b" "$work/run_b$b" <<'PY'
import sys
import numpy as np
ort, own = sys.argv[1:]
for name in ("q2", "probs", "label"):
    assert np.array_equal(np.load(f"{ort}/{name}.npy"), np.load(f"{own}/{name}.npy")), name
PY
  done
  echo "ONNX Runtime: both bundles run through the ortc EP with outputs identical to ortc run's"
  # ONNX Runtime's compile API, with the npu named in the EP's backends.
  mkdir -p "$work/ort_compiled"
  "$ort_host" --ep-library "$ort_ep" --config ep.ortc.backends=npu,cpu \
    --compile "$m/qdq_b1.onnx" "$work/ort_compiled/qdq_ctx.onnx" > "$work/ort_compile.log" 2>&1 ||
    { cat "$work/ort_compile.log" >&2; fail "ONNX Runtime's compile API with ep.ortc.backends=npu,cpu"; }
  [ -f "$work/ort_compiled/qdq_npu.bin" ] || fail "ONNX Runtime's compile wrote no npu binary"
  "$ort_host" --ep-library "$ort_ep" \
    --session "$work/ort_compiled/qdq_ctx.onnx|$work/ort_compiled/run|x=$m/x_b1.npy" > /dev/null
  "$py" - "$work/ort_compiled/run" "$m" <<'PY'
import sys
import numpy as np
run, m = sys.argv[1:]
assert np.array_equal(np.load(f"{run}/q2.npy"), np.load(f"{m}/expected_q2_b1.npy")), "q2"
assert np.array_equal(np.load(f"{run}/label.npy"), np.load(f"{m}/expected_label_b1.npy")), "label"
PY
  echo "ONNX Runtime: its compile API compiled through ortc onto the npu, and the result runs"
  # ONNX Runtime's question before it loads a compiled model: the string names the npu binary's
  # facts, and the npu plugin answers.
  info=$("$py" -c "import onnx, sys; print({p.key: p.value for p in onnx.load(sys.argv[1]).metadata_props}['ep_compatibility_info.ortc'])" "$work/out/qdq_b1_ctx.onnx")
  case "$info" in *";npu=npu-sim-v1;npu.npu_sdk=1.0"*) ;; *) fail "compatibility string without the npu's facts: $info" ;; esac
  answer() { "$ort_host" --ep-library "$ort_ep" --compatibility "$info" | sed -n 's/^compatibility: //p'; }
  [ "$(answer)" = EP_SUPPORTED_OPTIMAL ] || fail "SDK 1.0 device: $(answer)"
  [ "$(ORTC_NPU_SIM_SDK_VERSION=1.2 answer)" = EP_SUPPORTED_PREFER_RECOMPILATION ] ||
    fail "SDK 1.2 device: $(ORTC_NPU_SIM_SDK_VERSION=1.2 answer)"
  [ "$(ORTC_NPU_SIM_SDK_VERSION=2.0 answer)" = EP_UNSUPPORTED ] ||
    fail "SDK 2.0 device: $(ORTC_NPU_SIM_SDK_VERSION=2.0 answer)"
  echo "ONNX Runtime: the compatibility string carries the npu's SDK; the plugin's answers reach ONNX Runtime (optimal, prefer recompilation, unsupported)"
else
  echo "ONNX Runtime: not checked here (its test host is not built)"
fi

# 4. The version gate reads the npu plugin's SDK version.
if ORTC_NPU_SIM_SDK_VERSION=2.0 "$ortc" run "$work/out/qdq_b1_ctx.onnx" --input "x=$m/x_b1.npy" \
  > "$work/gate.out" 2>&1; then
  fail "a binary from NPU SDK 1.0 ran on a device with SDK 2.0"
fi
grep -q "1.0" "$work/gate.out" && grep -q "2.0" "$work/gate.out" && grep -q "npu" "$work/gate.out" ||
  { cat "$work/gate.out" >&2; fail "the gate's error names neither both SDK versions nor the backend"; }
ORTC_NPU_SIM_SDK_VERSION=1.2 "$ortc" check "$work/out/qdq_b1_ctx.onnx" --json > "$work/check.json" || true
grep -Eq "prefer.recompilation" "$work/check.json" ||
  { cat "$work/check.json" >&2; fail "SDK 1.0 binary on an SDK 1.2 device: verdict prefer_recompilation expected"; }
echo "version gate: SDK 2.0 device refuses the SDK 1.0 binary, naming both; SDK 1.2 runs it but prefers a recompile"

# 5. Without the plugin the bundle is refused with the remedy.
if ORTC_BACKEND_PATH="$emulator" "$ortc" run "$work/out/qdq_b1_ctx.onnx" --input "x=$m/x_b1.npy" \
  > "$work/missing.out" 2>&1; then
  fail "an npu bundle ran without the npu plugin"
fi
grep -q "ORTC_BACKEND_PATH" "$work/missing.out" ||
  { cat "$work/missing.out" >&2; fail "the missing-plugin error does not say where to put it"; }
echo "missing plugin: refused, naming ORTC_BACKEND_PATH"
