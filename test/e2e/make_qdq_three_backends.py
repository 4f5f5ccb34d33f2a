"""Writes a small int8 QDQ network that three backends share, and what it must compute.

The network alternates float steps (which the CUDA backend takes), lone QuantizeLinear and
DequantizeLinear nodes (which only the CPU backend takes) and int8 QDQ units (DequantizeLinear ->
Conv or MatMul -> QuantizeLinear, which the skeleton npu backend takes), and ends in ArgMax
(CPU only):

  x -> Mul, Add (cuda) -> Q (cpu) -> [DQ Conv Q] -> [DQ Conv/2 Q] (npu) -> q2 (an output)
    -> DQ (cpu) -> Relu, GlobalAveragePool, Flatten (cuda) -> Q (cpu) -> [DQ MatMul Q] (npu)
    -> DQ (cpu) -> Softmax (cuda) -> probs;  ArgMax (cpu) -> label

Two models of one weight set, batch 1 and batch 2 (a weight-sharing group), their inputs, and
the outputs computed here with numpy by ONNX's definitions of the operators (round half to even,
saturation): the reference the compiled bundles are held to.
Usage: make_qdq_three_backends.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

S_IN, S1, S2, S3, S4 = 0.04, 0.08, 0.06, 0.03, 0.05


def weights():
    rng = np.random.default_rng(11)
    w = {
        "norm_scale": rng.uniform(0.5, 1.5, (1, 3, 1, 1)).astype(np.float32),
        "norm_bias": rng.uniform(-0.3, 0.3, (1, 3, 1, 1)).astype(np.float32),
        "w1": rng.integers(-100, 101, (8, 3, 3, 3)).astype(np.int8),
        "b1": rng.integers(-2000, 2001, (8,)).astype(np.int32),
        "w2": rng.integers(-100, 101, (8, 8, 3, 3)).astype(np.int8),
        "w3": rng.integers(-100, 101, (8, 10)).astype(np.int8),
    }
    w["sw1"] = np.array(0.004, np.float32)
    w["sw2"] = np.array(0.003, np.float32)
    w["sw3"] = np.array(0.005, np.float32)
    return w


def model(batch, w):
    f = TensorProto.FLOAT
    inits = [numpy_helper.from_array(v, k) for k, v in w.items()]
    for name, value in [("s_in", S_IN), ("s1", S1), ("s2", S2), ("s3", S3), ("s4", S4)]:
        inits.append(numpy_helper.from_array(np.array(value, np.float32), name))
    inits.append(numpy_helper.from_array(np.array(0, np.int8), "z0"))
    inits.append(numpy_helper.from_array(np.array(3, np.int8), "z1"))
    inits.append(numpy_helper.from_array(np.array(-2, np.int8), "z2"))
    inits.append(numpy_helper.from_array(np.array(0, np.int32), "zb"))
    inits.append(numpy_helper.from_array(np.array(S_IN * 0.004, np.float32), "sb1"))
    n = helper.make_node
    nodes = [
        n("Mul", ["x", "norm_scale"], ["xs"], name="norm_mul"),
        n("Add", ["xs", "norm_bias"], ["xn"], name="norm_add"),
        n("QuantizeLinear", ["xn", "s_in", "z0"], ["q0"], name="q_in"),
        # unit 1: 3x3 conv, pads 1, int32 bias
        n("DequantizeLinear", ["q0", "s_in", "z0"], ["d0"], name="dq_x1"),
        n("DequantizeLinear", ["w1", "sw1", "z0"], ["dw1"], name="dq_w1"),
        n("DequantizeLinear", ["b1", "sb1", "zb"], ["db1"], name="dq_b1"),
        n("Conv", ["d0", "dw1", "db1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        n("QuantizeLinear", ["c1", "s1", "z1"], ["q1"], name="q_c1"),
        # unit 2: 3x3 conv, stride 2, no bias
        n("DequantizeLinear", ["q1", "s1", "z1"], ["d1"], name="dq_x2"),
        n("DequantizeLinear", ["w2", "sw2"], ["dw2"], name="dq_w2"),
        n("Conv", ["d1", "dw2"], ["c2"], name="conv2", pads=[1, 1, 1, 1], strides=[2, 2]),
        n("QuantizeLinear", ["c2", "s2", "z2"], ["q2"], name="q_c2"),
        # float head
        n("DequantizeLinear", ["q2", "s2", "z2"], ["d2"], name="dq_head"),
        n("Relu", ["d2"], ["r2"], name="relu"),
        n("GlobalAveragePool", ["r2"], ["g2"], name="pool"),
        n("Flatten", ["g2"], ["flat"], name="flatten"),
        n("QuantizeLinear", ["flat", "s3", "z0"], ["q3"], name="q_fc"),
        # unit 3: matmul
        n("DequantizeLinear", ["q3", "s3", "z0"], ["d3"], name="dq_x3"),
        n("DequantizeLinear", ["w3", "sw3"], ["dw3"], name="dq_w3"),
        n("MatMul", ["d3", "dw3"], ["m3"], name="fc"),
        n("QuantizeLinear", ["m3", "s4", "z0"], ["q4"], name="q_fc_out"),
        n("DequantizeLinear", ["q4", "s4", "z0"], ["logits"], name="dq_logits"),
        n("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
        n("ArgMax", ["probs"], ["label"], name="argmax", axis=-1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, f"qdq_three_backends_b{batch}",
        [helper.make_tensor_value_info("x", f, [batch, 3, 16, 16])],
        [helper.make_tensor_value_info("probs", f, [batch, 10]),
         helper.make_tensor_value_info("label", TensorProto.INT64, [batch]),
         helper.make_tensor_value_info("q2", TensorProto.INT8, [batch, 8, 8, 8])],
        inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


# ---- the reference, by the operators' definitions ----

def quantize(x, scale, zero):
    return np.clip(np.rint(x / np.float64(scale)) + zero, -128, 127).astype(np.int8)


def dequantize(q, scale, zero):
    return (q.astype(np.float64) - zero) * np.float64(scale)


def conv(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w)
    return y + (0 if b is None else b.reshape(1, -1, 1, 1))


def reference(x, w):
    xn = x.astype(np.float32) * w["norm_scale"] + w["norm_bias"]
    q0 = quantize(xn.astype(np.float64), S_IN, 0)
    c1 = conv(dequantize(q0, S_IN, 0), dequantize(w["w1"], w["sw1"], 0),
              dequantize(w["b1"], np.float32(S_IN * 0.004), 0), 1, 1)
    q1 = quantize(c1, S1, 3)
    c2 = conv(dequantize(q1, S1, 3), dequantize(w["w2"], w["sw2"], 0), None, 2, 1)
    q2 = quantize(c2, S2, -2)
    pooled = np.maximum(dequantize(q2, S2, -2), 0).mean(axis=(2, 3))
    q3 = quantize(pooled, S3, 0)
    q4 = quantize(dequantize(q3, S3, 0) @ dequantize(w["w3"], w["sw3"], 0), S4, 0)
    logits = dequantize(q4, S4, 0)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    return probs, probs.argmax(axis=-1).astype(np.int64), q2


def main(out):
    os.makedirs(out, exist_ok=True)
    w = weights()
    rng = np.random.default_rng(3)
    for batch in (1, 2):
        onnx.save(model(batch, w), os.path.join(out, f"qdq_b{batch}.onnx"))
        x = rng.uniform(-2, 2, (batch, 3, 16, 16)).astype(np.float32)
        np.save(os.path.join(out, f"x_b{batch}.npy"), x)
        probs, label, q2 = reference(x, w)
        np.save(os.path.join(out, f"expected_probs_b{batch}.npy"), probs)
        np.save(os.path.join(out, f"expected_label_b{batch}.npy"), label)
        np.save(os.path.join(out, f"expected_q2_b{batch}.npy"), q2)
    print(f"wrote qdq_b1.onnx, qdq_b2.onnx and their references to {out}")


if __name__ == "__main__":
    main(sys.argv[1])
