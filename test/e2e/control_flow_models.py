"""Control flow through ortc against ONNX Runtime 1.30, on the models make_control_flow_models.py
writes (nested If in Loop reading values two scopes up, Scan over axis 1 backwards, a Loop
carrying a sequence, an If passing an outer intermediate through): `ortc compile --ep cpu`,
`ortc run` on every input set, outputs compared to 1e-5.
Usage: control_flow_models.py ORTC_BINARY WORK_DIR
Exit 77 (skip) when onnxruntime-node is not installed.
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


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAILED ({r.returncode}): {' '.join(cmd)}\n{r.stdout}")
    return r


def main(ortc, work):
    if not os.path.isdir(os.path.join(ROOT, "test", "reference", "node_modules", "onnxruntime-node")):
        print("SKIP: onnxruntime-node is not installed (run scripts/setup.sh)", file=sys.stderr)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    models = os.path.join(work, "models")
    run(["/usr/bin/python3", os.path.join(HERE, "make_control_flow_models.py"), models])
    with open(os.path.join(models, "manifest.json")) as f:
        manifest = json.load(f)
    worst, runs = 0.0, 0
    for spec in manifest:
        name = spec["name"]
        model = os.path.join(models, name + ".onnx")
        out = os.path.join(work, name)
        os.makedirs(out)
        run([ortc, "compile", model, "--ep", "cpu", "-o", out, "-q"])
        for k in range(spec["sets"]):
            d = os.path.join(models, name, f"inputs_{k}")
            files = {i: os.path.join(d, i + ".npy") for i in spec["inputs"]}
            want, got = os.path.join(out, f"ort_{k}"), os.path.join(out, f"ortc_{k}")
            run(["node", os.path.join(ROOT, "test", "reference", "ort_run.js"), model, want] +
                [f"{i}={f}" for i, f in files.items()])
            run([ortc, "run", os.path.join(out, name + "_ctx.onnx"), "--output-dir", got] +
                [a for i, f in files.items() for a in ("--input", f"{i}={f}")])
            worst = max(worst, compare_outputs.main(f"{name} set {k}", want, got, 1e-5, 1e-5))
            runs += 1
    print(f"control flow: {len(manifest)} models, {runs} input sets match ONNX Runtime "
          f"(worst max abs error {worst:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
