"""int8 convolutions on the CPU through oneDNN, against ONNX Runtime 1.30 and a direct formula.

1. A QDQ network (make_qdq_model.py: QuantizeLinear, DequantizeLinear -> Conv -> Relu ->
   QuantizeLinear per layer, int8 per-channel weights, int32 and float biases): the compile
   report must show every convolution fused into QLinearConv, and the outputs must equal ONNX
   Runtime's (which fuses the same way).
2. QLinearConv with uint8 input and int8 per-channel weights, plain and grouped: equal to ONNX
   Runtime's outputs.
3. QLinearConv with int8 input and uint8 output (ONNX Runtime has no kernel for it): equal to
   the ONNX formula computed here in numpy.
Usage: cpu_int8.py ORTC_BINARY WORK_DIR
Exit 77 (skip) when onnxruntime-node is not installed.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import make_qdq_model  # noqa: E402


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAILED ({r.returncode}): {' '.join(cmd)}\n{r.stdout}")
    return r.stdout


def ortc_outputs(ortc, work, model, feeds):
    name = os.path.splitext(os.path.basename(model))[0]
    out = os.path.join(work, name + "_bundle")
    os.makedirs(out, exist_ok=True)
    report = json.loads(run([ortc, "compile", model, "--ep", "cpu", "-o", out + "/", "--json"]))
    got = os.path.join(work, name + "_ortc")
    run([ortc, "run", os.path.join(out, name + "_ctx.onnx"), "--output-dir", got] +
        [a for k, f in feeds.items() for a in ("--input", f"{k}={f}")])
    return report, {f[:-4]: np.load(os.path.join(got, f)) for f in os.listdir(got)}


def ort_outputs(work, model, feeds):
    want = os.path.join(work, os.path.basename(model) + "_ort")
    run(["node", os.path.join(ROOT, "test", "reference", "ort_run.js"), model, want] +
        [f"{k}={f}" for k, f in feeds.items()])
    return {f[:-4]: np.load(os.path.join(want, f)) for f in os.listdir(want)}


def qlinear_model(path, x_type, groups, rng, channels=16, outs=32, size=12):
    w = rng.integers(-127, 128, [outs, channels // groups, 3, 3]).astype(np.int8)
    inits = {
        "w": w,
        "xs": np.array(0.02, np.float32),
        "xz": np.array(3 if x_type == np.int8 else 128, x_type),
        "ws": rng.uniform(0.001, 0.01, [outs]).astype(np.float32),
        "wz": np.zeros([outs], np.int8),
        "ys": np.array(0.5, np.float32),
        "yz": np.array(100, np.uint8),
        "b": rng.integers(-5000, 5000, [outs]).astype(np.int32),
    }
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], pads=[1, 1, 1, 1], group=groups)
    elem = TensorProto.INT8 if x_type == np.int8 else TensorProto.UINT8
    graph = helper.make_graph(
        [node], "qlinear", [helper.make_tensor_value_info("x", elem, [1, channels, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, outs, size, size])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    info = np.iinfo(x_type)
    x = rng.integers(info.min, info.max + 1, [1, channels, size, size]).astype(x_type)
    return x, inits


def reference_qlinear(x, p, groups):
    """ONNX's QLinearConv: integer convolution, int32 bias, requantized in float32 with
    round-half-to-even and saturation."""
    xs = x.astype(np.int64) - int(p["xz"])
    w = p["w"].astype(np.int64)
    n, c, h, wd = xs.shape
    m = w.shape[0]
    padded = np.pad(xs, ((0, 0), (0, 0), (1, 1), (1, 1)))
    acc = np.zeros([n, m, h, wd], np.int64)
    cg, mg = c // groups, m // groups
    for oc in range(m):
        g = oc // mg
        for kh in range(3):
            for kw in range(3):
                patch = padded[:, g * cg:(g + 1) * cg, kh:kh + h, kw:kw + wd]
                acc[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, kh, kw])
    acc += p["b"].astype(np.int64)[None, :, None, None]
    scale = (np.float32(p["xs"]) * p["ws"] / np.float32(p["ys"])).astype(np.float32)
    q = np.rint(acc.astype(np.float32) * scale[None, :, None, None]) + np.float32(p["yz"])
    return np.clip(q, 0, 255).astype(np.uint8)


def main(ortc, work):
    if not os.path.isdir(os.path.join(ROOT, "test", "reference", "node_modules", "onnxruntime-node")):
        print("SKIP: onnxruntime-node is not installed (run scripts/setup.sh)", file=sys.stderr)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(11)

    make_qdq_model.main(work)
    x = os.path.join(work, "x.npy")
    np.save(x, rng.uniform(0, 5, [1, 3, 24, 24]).astype(np.float32))
    report, got = ortc_outputs(ortc, work, os.path.join(work, "qdq_cnn.onnx"), {"x": x})
    fused = report["lowering"]["qdq_convolutions_fused"]
    assert fused == 4, report["lowering"]
    want = ort_outputs(work, os.path.join(work, "qdq_cnn.onnx"), {"x": x})
    diff = np.abs(got["y"] - want["y"])
    assert diff.max() == 0, f"QDQ network: max abs difference {diff.max()}"
    print(f"QDQ network: {fused} convolutions fused into QLinearConv; outputs equal ONNX Runtime's")

    for groups in (1, 4):
        model = os.path.join(work, f"qlinear_u8_g{groups}.onnx")
        xv, _ = qlinear_model(model, np.uint8, groups, rng)
        np.save(os.path.join(work, "xq.npy"), xv)
        feeds = {"x": os.path.join(work, "xq.npy")}
        _, got = ortc_outputs(ortc, work, model, feeds)
        want = ort_outputs(work, model, feeds)
        assert np.array_equal(got["y"], want["y"]), f"QLinearConv group {groups} differs"
        print(f"QLinearConv uint8 x, int8 weights, group {groups}: equal to ONNX Runtime")

    model = os.path.join(work, "qlinear_s8.onnx")
    xv, params = qlinear_model(model, np.int8, 1, rng)
    np.save(os.path.join(work, "xs8.npy"), xv)
    _, got = ortc_outputs(ortc, work, model, {"x": os.path.join(work, "xs8.npy")})
    assert np.array_equal(got["y"], reference_qlinear(xv, params, 1)), "int8 x differs"
    print("QLinearConv int8 x, uint8 y: equal to the ONNX formula")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
