"""int8 convolutions on the CPU through oneDNN, against ONNX Runtime 1.30 and a direct formula.

1. A QDQ network (make_qdq_model.py: QuantizeLinear, DequantizeLinear -> Conv -> Relu ->
   QuantizeLinear per layer, int8 per-channel weights, int32 and float biases): the compile
   report must show every convolution fused into QLinearConv, and the outputs must equal the
   fused network computed exactly here in numpy (integer convolutions, float32 requantization).
2. QLinearConv with uint8 input and int8 per-channel weights, plain and grouped: equal to the
   ONNX formula.
3. QLinearConv with int8 input and uint8 output (ONNX Runtime has no kernel for it): equal to
   the ONNX formula.
Where the CPU has VNNI, cases 1 and 2 must also equal ONNX Runtime's outputs (it fuses the same
way). Without VNNI, ONNX Runtime's and oneDNN's u8*s8 kernels add pairs of products into int16
with saturation, so ONNX Runtime is not exact there: ortc must still be, and ONNX Runtime's
difference is printed.
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


def qlinear_model(path, x_type, groups, rng, channels=16, outs=32, size=12, w_max=127):
    w = rng.integers(-w_max, w_max + 1, [outs, channels // groups, 3, 3]).astype(np.int8)
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


def host_has_vnni():
    """Whether this CPU sums int8 products straight into int32 (AVX512-VNNI or AVX-VNNI)."""
    with open("/proc/cpuinfo") as f:
        flags = f.read().split()
    return "avx512_vnni" in flags or "avx_vnni" in flags


def integer_conv(xs, w, groups, pad=1):
    """Exact integer convolution of int64 arrays (NCHW, OIHW, 3x3 window, stride 1)."""
    n, c, h, wd = xs.shape
    m = w.shape[0]
    padded = np.pad(xs, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    acc = np.zeros([n, m, h, wd], np.int64)
    cg, mg = c // groups, m // groups
    for oc in range(m):
        g = oc // mg
        for kh in range(3):
            for kw in range(3):
                patch = padded[:, g * cg:(g + 1) * cg, kh:kh + h, kw:kw + wd]
                acc[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, kh, kw])
    return acc


def requantize(acc, scale, zero, lo, hi):
    """acc * scale in float32, rounded half to even, plus the zero point, saturated."""
    q = np.rint(acc.astype(np.float32) * scale.astype(np.float32)[None, :, None, None])
    return np.clip(q + np.float32(zero), lo, hi)


def reference_qlinear(x, p, groups):
    """ONNX's QLinearConv: integer convolution, int32 bias, requantized in float32 with
    round-half-to-even and saturation."""
    xs = x.astype(np.int64) - int(p["xz"])
    w = p["w"].astype(np.int64)
    acc = integer_conv(xs, w, groups) + p["b"].astype(np.int64)[None, :, None, None]
    scale = (np.float32(p["xs"]) * p["ws"] / np.float32(p["ys"])).astype(np.float32)
    return requantize(acc, scale, p["yz"], 0, 255).astype(np.uint8)


def reference_qdq_network(model_path, x):
    """The QDQ network of make_qdq_model.py as its fusion into QLinearConv computes it: the
    input quantized, each layer an exact integer convolution with its bias quantized to int32 at
    x_scale * w_scale (float biases too), requantized in float32 (the Relu is the output zero
    point's clamp), the last output dequantized."""
    model = onnx.load(model_path)
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    in_s, in_z = np.float32(inits["in_s"]), int(inits["in_z"])
    q = np.clip(np.rint(x / in_s) + in_z, 0, 255).astype(np.int64)
    x_s, x_z = in_s, in_z
    layer = 0
    while f"w{layer}" in inits:
        w = inits[f"w{layer}"].astype(np.int64)
        w_s = inits[f"w{layer}_s"].astype(np.float32)
        if f"b{layer}_s" in inits:  # int32 bias through a DequantizeLinear
            b_f = inits[f"b{layer}"].astype(np.float64) * inits[f"b{layer}_s"].astype(np.float64)
        else:
            b_f = inits[f"b{layer}"].astype(np.float64)
        b_q = np.rint(b_f / (np.float64(x_s) * w_s.astype(np.float64))).astype(np.int64)
        acc = integer_conv(q - x_z, w, 1) + b_q[None, :, None, None]
        y_s, y_z = np.float32(inits[f"l{layer}_s"]), int(inits[f"l{layer}_z"])
        scale = (x_s * w_s / y_s).astype(np.float32)
        q = requantize(acc, scale, y_z, 0, 255).astype(np.int64)
        x_s, x_z = y_s, y_z
        layer += 1
    return ((q - x_z).astype(np.float32) * x_s).astype(np.float32)


def check_against_ort(what, got, want, exact):
    """got equals ONNX Runtime's want where ONNX Runtime is exact; elsewhere the difference is
    printed, since ONNX Runtime's kernels saturate without VNNI."""
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64)).max()
    if host_has_vnni():
        assert diff == 0, f"{what}: max abs difference {diff} from ONNX Runtime"
        print(f"{what}: equal to ONNX Runtime")
    else:
        ort_exact = np.array_equal(want, exact)
        print(f"{what}: no VNNI on this CPU; ONNX Runtime differs from the exact result by "
              f"up to {diff} ({'exact' if ort_exact else 'its int16 saturation'}), ortc is exact")


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
    exact = reference_qdq_network(os.path.join(work, "qdq_cnn.onnx"), np.load(x))
    diff = np.abs(got["y"] - exact).max()
    assert diff == 0, f"QDQ network: max abs difference {diff} from the exact fused network"
    print(f"QDQ network: {fused} convolutions fused into QLinearConv; outputs exact")
    want = ort_outputs(work, os.path.join(work, "qdq_cnn.onnx"), {"x": x})
    check_against_ort("QDQ network", got["y"], want["y"], exact)

    for groups in (1, 4):
        model = os.path.join(work, f"qlinear_u8_g{groups}.onnx")
        xv, params = qlinear_model(model, np.uint8, groups, rng)
        np.save(os.path.join(work, "xq.npy"), xv)
        feeds = {"x": os.path.join(work, "xq.npy")}
        _, got = ortc_outputs(ortc, work, model, feeds)
        exact = reference_qlinear(xv, params, groups)
        assert np.array_equal(got["y"], exact), f"QLinearConv group {groups} differs"
        what = f"QLinearConv uint8 x, int8 weights, group {groups}"
        print(f"{what}: equal to the ONNX formula")
        check_against_ort(what, got["y"], ort_outputs(work, model, feeds)["y"], exact)

    # Weights within +-64: oneDNN's int8 kernels are exact with or without VNNI and run them.
    model = os.path.join(work, "qlinear_u8_w7.onnx")
    xv, params = qlinear_model(model, np.uint8, 1, rng, w_max=64)
    np.save(os.path.join(work, "xq.npy"), xv)
    _, got = ortc_outputs(ortc, work, model, {"x": os.path.join(work, "xq.npy")})
    assert np.array_equal(got["y"], reference_qlinear(xv, params, 1)), "7-bit weights differ"
    print("QLinearConv uint8 x, weights within +-64: equal to the ONNX formula")

    model = os.path.join(work, "qlinear_s8.onnx")
    xv, params = qlinear_model(model, np.int8, 1, rng)
    np.save(os.path.join(work, "xs8.npy"), xv)
    _, got = ortc_outputs(ortc, work, model, {"x": os.path.join(work, "xs8.npy")})
    assert np.array_equal(got["y"], reference_qlinear(xv, params, 1)), "int8 x differs"
    print("QLinearConv int8 x, uint8 y: equal to the ONNX formula")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
