"""A voice-activity-detector-like model (make_vad_model.py: top-level If on a scalar int64 sample
rate, LSTM + Conv + Pad inside the branches, Constant-node weights, a [2,1,128] state) through
ortc, end to end:
  - `--ep cpu`: the If runs as a nested CPU program; both branches (16 kHz and 8 kHz inputs)
    match ONNX Runtime 1.30 to 1e-5;
  - `--ep cpu --input-value sr=16000`: the If is resolved at compile time; the ctx model keeps
    `sr` as an input and records the value; feeding 16000 matches ONNX Runtime, feeding 8000 is
    refused with a message naming --input-value;
  - `--ep cuda,cpu`: without a fixed rate the If stays on the CPU (CUDA refuses it saying
    --input-value would help); with `--input-value sr=16000` (and 8000) CUDA takes the branch's
    convolutions, the LSTM stays on the CPU with its reason, and every CUDA graph matches the
    CPU runtime in the host emulator (ortc_cuda_emulate). No GPU is needed or used.
Usage: vad_model.py ORTC_BINARY EMULATOR_BINARY WORK_DIR
Exit 77 (skip) when onnxruntime-node is not installed. Without NVRTC the CUDA compiles and
emulation are skipped with a note; everything else still runs.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import compare_outputs  # noqa: E402

TOL = 1e-5
RATES = {"16k": (16000, 512), "8k": (8000, 256)}


def run(cmd, check=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"FAILED ({r.returncode}): {' '.join(cmd)}\n{r.stdout}")
    return r


def feeds(models, tag, sr_tag=None):
    d = os.path.join(models, "inputs_" + tag)
    sr = os.path.join(models, "inputs_" + (sr_tag or tag), "sr.npy")
    return ["--input", "input=" + os.path.join(d, "input.npy"), "--input",
            "state=" + os.path.join(d, "state.npy"), "--input", "sr=" + sr]


def ortc_run(ortc, ctx, out, args, check=True):
    return run([ortc, "run", ctx, "--output-dir", out] + args, check)


def check_cpu(ortc, models, work, reference):
    out = os.path.join(work, "cpu")
    os.makedirs(out)
    run([ortc, "compile", os.path.join(models, "vad.onnx"), "--ep", "cpu", "-o", out, "-q"])
    for tag in RATES:
        got = os.path.join(out, "outputs_" + tag)
        ortc_run(ortc, os.path.join(out, "vad_ctx.onnx"), got, feeds(models, tag))
        compare_outputs.main(f"vad --ep cpu sr={RATES[tag][0]}", reference[tag], got, TOL, TOL)


def check_fixed_rate(ortc, models, work, reference):
    out = os.path.join(work, "cpu_fixed")
    os.makedirs(out)
    run([ortc, "compile", os.path.join(models, "vad.onnx"), "--ep", "cpu", "--input-value",
             "sr=16000", "-o", out, "-q"])
    ctx = os.path.join(out, "vad_ctx.onnx")
    model = json.loads(run(["/usr/bin/python3", "-c", (
        "import json,sys,onnx; m=onnx.load(sys.argv[1]); print(json.dumps({"
        "'inputs':[i.name for i in m.graph.input],"
        "'meta':{p.key:p.value for p in m.metadata_props},"
        "'ops':sorted({n.op_type for n in m.graph.node}),"
        "'branch_ops':[n.op_type for n in m.graph.node if n.op_type=='If']}))"), ctx]).stdout)
    assert model["inputs"] == ["input", "state", "sr"], f"ctx inputs {model['inputs']}"
    assert model["meta"].get("ortc.input_values") == "sr=int64:16000", model["meta"]
    assert not model["branch_ops"], "the If should be resolved at compile time"
    got = os.path.join(out, "outputs_16k")
    ortc_run(ortc, ctx, got, feeds(models, "16k"))
    compare_outputs.main("vad --input-value sr=16000", reference["16k"], got, TOL, TOL)
    refused = ortc_run(ortc, ctx, os.path.join(out, "refused"), feeds(models, "16k", "8k"), False)
    assert refused.returncode != 0, "feeding sr=8000 to a model compiled for 16000 must fail"
    assert "--input-value" in refused.stdout and "16000" in refused.stdout, refused.stdout
    print("vad --input-value sr=16000: feeding sr=8000 refused: " + refused.stdout.strip().splitlines()[-1])


def check_cuda(ortc, emulator, models, work):
    """False when NVRTC is missing (nothing checked)."""
    model = os.path.join(models, "vad.onnx")
    out = os.path.join(work, "cuda")
    os.makedirs(out)
    r = run([ortc, "compile", model, "--ep", "cuda,cpu", "--target-arch", "sm_80", "-q", "-o", out],
            check=False)
    if r.returncode != 0:
        if "NVRTC (CUDA toolkit runtime compiler) not found" in r.stdout:
            return False
        raise SystemExit(f"FAILED: CUDA compile of vad.onnx\n{r.stdout}")
    part = json.loads(run([ortc, "partition", model, "--ep", "cuda,cpu", "--json"]).stdout)
    reasons = {op: x["reason"] for x in part["refusals"] if x["backend"] == "cuda" for op in x["ops"]}
    assert "--input-value" in reasons.get("If", ""), f"CUDA's reason for If: {reasons}"
    for tag, (rate, samples) in RATES.items():
        shapes = [f"input=1x{samples}", "state=2x1x128"]
        part = json.loads(run([ortc, "partition", model, "--ep", "cuda,cpu", "--input-value",
                               f"sr={rate}", "--input-shape", shapes[0], "--json"]).stdout)
        placed = {}
        for g in part["groups"]:
            for n in g["nodes"]:
                placed[n] = g["backend"]
        ops = {op: x["reason"] for x in part["refusals"] if x["backend"] == "cuda" for op in x["ops"]}
        assert "If" not in ops and not any(n.startswith("If") for n in placed), "If not resolved"
        assert "recurrent" in ops.get("LSTM", ""), f"CUDA's reason for LSTM: {ops}"
        cuda_ops = sum(1 for b in placed.values() if b == "cuda")
        assert cuda_ops >= 7, f"CUDA took only {cuda_ops} nodes of the {rate} branch"
        r = run([emulator, model] + shapes + ["--input-value", f"sr={rate}"], check=False)
        if r.returncode == 77:
            return False
        if r.returncode != 0:
            raise SystemExit(f"FAILED: emulating vad sr={rate} ({r.returncode})\n{r.stdout}")
        print(f"vad --ep cuda,cpu --input-value sr={rate}: {cuda_ops} nodes on CUDA, LSTM on the CPU; "
              f"emulated {r.stdout.splitlines()[0]}")
    return True


def main(ortc, emulator, work):
    if not os.path.isdir(os.path.join(ROOT, "test", "reference", "node_modules", "onnxruntime-node")):
        print("SKIP: onnxruntime-node is not installed (run scripts/setup.sh)", file=sys.stderr)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    models = os.path.join(work, "models")
    run(["/usr/bin/python3", os.path.join(HERE, "make_vad_model.py"), models])
    reference = {}
    for tag in RATES:
        reference[tag] = os.path.join(work, "ort_" + tag)
        d = os.path.join(models, "inputs_" + tag)
        run(["node", os.path.join(ROOT, "test", "reference", "ort_run.js"), os.path.join(models, "vad.onnx"),
             reference[tag]] + [f"{k}={os.path.join(d, k + '.npy')}" for k in ("input", "state", "sr")])
    check_cpu(ortc, models, work, reference)
    check_fixed_rate(ortc, models, work, reference)
    if not check_cuda(ortc, emulator, models, work):
        print("note: NVRTC is not available: CUDA compiles and emulation skipped")
    print("vad model: CPU matches ONNX Runtime for both branches; fixed-rate compiles resolve the If")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
