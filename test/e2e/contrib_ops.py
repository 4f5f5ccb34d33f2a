"""ONNX Runtime's transformer contrib ops through ortc, end to end, on the models
make_contrib_models.py writes (one per op and form, and optimized-BERT-like encoders):
  - `ortc compile --ep cpu`, `ortc run`, outputs compared with ONNX Runtime 1.30 on the CPU (or
    with numpy where ONNX Runtime's CPU kernel refuses the form);
  - `ortc partition --ep cuda,cpu` at static shapes: every contrib node reported as expanded,
    none left for a backend to refuse, and one CUDA group (`--max-partitions 1`) for the models
    whose expansion is all device work;
  - `ortc compile --ep cuda,cpu`, and the CUDA graphs run by the host emulator
    (ortc_cuda_emulate) against the CPU runtime at fp32 and fp16.
Usage: contrib_ops.py ORTC_BINARY EMULATOR_BINARY WORK_DIR [GENERATOR]
GENERATOR (default make_contrib_models.py) writes the models and their manifest;
make_newer_op_models.py writes those of the ai.onnx ops newer than ortc's ONNX library
(opset 23's Attention, RMSNormalization, RotaryEmbedding; opset 24's Swish, TensorScatter),
which ortc expands the same way.
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


def run(cmd, check=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"FAILED ({r.returncode}): {' '.join(cmd)}\n{r.stdout}")
    return r


def shape_args(spec):
    args = []
    for name, i in spec["inputs"].items():
        if name in spec.get("input_values", {}):
            continue
        args += ["--input-shape", f"{name}=" + "x".join(str(d) for d in i["shape"])]
    for name, value in spec.get("input_values", {}).items():
        args += ["--input-value", f"{name}={value}"]
    return args


def check_cpu(ortc, models, work, spec):
    name = spec["name"]
    model = os.path.join(models, name + ".onnx")
    out = os.path.join(work, "cpu", name)
    os.makedirs(out)
    report = json.loads(run([ortc, "compile", model, "--ep", "cpu", "-o", out, "--json"]).stdout)
    if spec.get("int4_matmuls") is not None:
        kept = report["lowering"]["int4_matmuls"]
        assert kept == spec["int4_matmuls"], \
            f"{name}: {kept} MatMul(s) kept at 4 bits on the CPU, expected {spec['int4_matmuls']}"
    feeds = {k: os.path.join(models, name, "inputs", k + ".npy") for k in spec["inputs"]}
    got = os.path.join(out, "outputs")
    run([ortc, "run", os.path.join(out, name + "_ctx.onnx"), "--output-dir", got] +
        [a for k, f in feeds.items() for a in ("--input", f"{k}={f}")])
    if spec["reference"] == "numpy":
        want = os.path.join(models, name, "expected")
    else:
        want = os.path.join(work, "ort", name)
        run(["node", os.path.join(ROOT, "test", "reference", "ort_run.js"), model, want] +
            [f"{k}={f}" for k, f in feeds.items()])
    compare_outputs.main(f"{name} (cpu vs {spec['reference']})", want, got)


def check_partition(ortc, models, spec):
    name = spec["name"]
    model = os.path.join(models, name + ".onnx")
    r = run([ortc, "partition", model, "--ep", "cuda,cpu", "--json"] + shape_args(spec))
    report = json.loads(r.stdout)
    expanded = report.get("expanded", [])
    assert len(expanded) == spec["contrib_nodes"], f"{name}: expanded {expanded}"
    assert not any("com.microsoft" in op for x in report["refusals"] for op in x["ops"]), \
        f"{name}: {report['refusals']}"
    cuda = [g for g in report["groups"] if g["backend"] == "cuda"]
    if spec["one_cuda_group"]:
        assert len(report["groups"]) == 1 and len(cuda) == 1, \
            f"{name}: groups {[(g['name'], g['node_count']) for g in report['groups']]}, refused {report['refusals']}"
        run([ortc, "partition", model, "--ep", "cuda,cpu", "--max-partitions", "1"] + shape_args(spec))
    text = run([ortc, "partition", model, "--ep", "cuda,cpu"] + shape_args(spec)).stdout
    line = spec.get("expanded_line") or \
        f"contrib ops: {spec['contrib_nodes']} com.microsoft node(s) expanded into standard ops"
    assert line in text, f"{name}: no '{line}' in\n{text}"
    print(f"{name}: {len(expanded)} node(s) expanded at load; CUDA groups {len(cuda)} of "
          f"{len(report['groups'])}")


def check_cuda(ortc, emulator, models, work, spec, precisions):
    """False when NVRTC is missing (nothing checked)."""
    name = spec["name"]
    model = os.path.join(models, name + ".onnx")
    out = os.path.join(work, "cuda", name)
    os.makedirs(out)
    r = run([ortc, "compile", model, "--ep", "cuda,cpu", "--target-arch", "sm_80", "-q", "-o", out] +
            shape_args(spec), check=False)
    if r.returncode != 0:
        if "NVRTC (CUDA toolkit runtime compiler) not found" in r.stdout:
            return False
        raise SystemExit(f"FAILED: CUDA compile of {name}\n{r.stdout}")
    for precision in precisions:
        args = [emulator, model, "--precision", precision]
        for fixed, value in spec.get("input_values", {}).items():
            args += ["--input-value", f"{fixed}={value}"]
        for k, i in spec["inputs"].items():
            if k in spec.get("input_values", {}):
                continue
            args.append(f"{k}=" + "x".join(str(d) for d in i["shape"]))
            if i["int_range"]:
                args += ["--int-range", f"{k}={i['int_range'][0]}:{i['int_range'][1]}"]
        r = run(args, check=False)
        if r.returncode == 77:
            return False
        if r.returncode != 0:
            raise SystemExit(f"FAILED: emulating {name} at {precision} ({r.returncode})\n{r.stdout}")
        summary = [line for line in r.stdout.splitlines() if line.startswith(precision + " ")]
        print(f"{name}: emulated {summary[0] if summary else r.stdout.splitlines()[0]}")
    return True


def main(ortc, emulator, work, generator="make_contrib_models.py"):
    if not os.path.isdir(os.path.join(ROOT, "test", "reference", "node_modules", "onnxruntime-node")):
        print("SKIP: onnxruntime-node is not installed (run scripts/setup.sh)", file=sys.stderr)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    models = os.path.join(work, "models")
    run(["/usr/bin/python3", os.path.join(HERE, generator), models])
    with open(os.path.join(models, "manifest.json")) as f:
        manifest = json.load(f)
    nvrtc = True
    for spec in manifest:
        check_cpu(ortc, models, work, spec)
        check_partition(ortc, models, spec)
        if nvrtc:
            precisions = ["fp32", "fp16"]
            nvrtc = check_cuda(ortc, emulator, models, work, spec, precisions)
            if not nvrtc:
                print("note: NVRTC is not available: CUDA compiles and emulation skipped")
    print(f"{generator}: {len(manifest)} models match ONNX Runtime on the CPU" +
          ("; CUDA graphs match the CPU runtime in the emulator" if nvrtc else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
