"""RNN, GRU and LSTM through ortc against ONNX Runtime, on the models make_recurrent_models.py
writes (the forms ONNX's conformance data lacks: bidirectional with sequence_lens, initial
states, layout 1, clip, peepholes, linear_before_reset, input_forget, activation lists, omitted
outputs, double): `ortc compile --ep cpu`, `ortc run`, outputs compared with ONNX Runtime 1.30
on the CPU to 1e-5.

ONNX Runtime refuses layout 1 and double for these ops; for those forms it runs the model's
layout-0 float twin on the same values, and its outputs are transposed / cast back.
Usage: recurrent_ops.py ORTC_BINARY WORK_DIR
Exit 77 (skip) when onnxruntime-node is not installed.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import compare_outputs  # noqa: E402

TOLERANCE = 1e-5


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAILED ({r.returncode}): {' '.join(cmd)}\n{r.stdout}")
    return r


def feeds_of(models, name, inputs):
    return {k: os.path.join(models, name, "inputs", k + ".npy") for k in inputs}


def reference(models, work, spec):
    """ONNX Runtime's outputs for the model, in the model's layout and dtype."""
    name = spec["name"]
    ref = spec.get("reference", name)
    want = os.path.join(work, "ort", name)
    run(["node", os.path.join(ROOT, "test", "reference", "ort_run.js"),
         os.path.join(models, ref + ".onnx"), want] +
        [f"{k}={f}" for k, f in feeds_of(models, ref, spec["inputs"]).items()])
    if ref != name:
        for f in os.listdir(want):
            out = f[:-4]
            v = np.load(os.path.join(want, f))
            if out in spec["transpose"]:
                v = v.transpose(spec["transpose"][out])
            np.save(os.path.join(want, f), np.ascontiguousarray(v.astype(spec["dtype"])))
    return want


def check(ortc, models, work, spec):
    name = spec["name"]
    out = os.path.join(work, "cpu", name)
    os.makedirs(out)
    run([ortc, "compile", os.path.join(models, name + ".onnx"), "--ep", "cpu", "-o", out, "-q"])
    got = os.path.join(out, "outputs")
    run([ortc, "run", os.path.join(out, name + "_ctx.onnx"), "--output-dir", got] +
        [a for k, f in feeds_of(models, name, spec["inputs"]).items()
         for a in ("--input", f"{k}={f}")])
    want = reference(models, work, spec)
    return compare_outputs.main(f"{name} (cpu vs ort)", want, got, TOLERANCE, TOLERANCE)


def main(ortc, work):
    if not os.path.isdir(os.path.join(ROOT, "test", "reference", "node_modules", "onnxruntime-node")):
        print("SKIP: onnxruntime-node is not installed (run scripts/setup.sh)", file=sys.stderr)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    models = os.path.join(work, "models")
    run(["/usr/bin/python3", os.path.join(HERE, "make_recurrent_models.py"), models])
    with open(os.path.join(models, "manifest.json")) as f:
        manifest = json.load(f)
    worst = max(check(ortc, models, work, spec) for spec in manifest)
    print(f"recurrent ops: {len(manifest)} models match ONNX Runtime on the CPU "
          f"(worst max abs error {worst:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
