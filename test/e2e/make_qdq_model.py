"""Writes a QDQ convolutional network as quantization tools export one, and its float twin.

qdq_cnn.onnx: float input -> QuantizeLinear (uint8) -> for each layer DequantizeLinear ->
Conv (int8 weights per output channel, axis 0, zero point 0; int32 bias through its own
DequantizeLinear, or a float bias) -> [Relu] -> QuantizeLinear -> ... -> DequantizeLinear ->
float output. fp32_cnn.onnx: the same network with the dequantized weights and no Q/DQ.
Usage: make_qdq_model.py OUT_DIR [CHANNELS SIZE LAYERS]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out, channels=16, size=24, layers=4):
    rng = np.random.default_rng(5)
    os.makedirs(out, exist_ok=True)
    qdq_nodes, fp_nodes, qdq_inits, fp_inits = [], [], [], []

    def const(name, value, both=False):
        t = numpy_helper.from_array(value, name)
        qdq_inits.append(t)
        if both:
            fp_inits.append(t)

    scale = 0.05
    const("in_s", np.array(scale, np.float32))
    const("in_z", np.array(128, np.uint8))
    qdq_nodes.append(helper.make_node("QuantizeLinear", ["x", "in_s", "in_z"], ["q0"]))
    fp_cur, q_cur, c_in = "x", "q0", 3
    for i in range(layers):
        c_out = channels
        w = rng.integers(-100, 101, [c_out, c_in, 3, 3]).astype(np.int8)
        w_s = rng.uniform(0.002, 0.006, [c_out]).astype(np.float32)
        const(f"w{i}", w)
        const(f"w{i}_s", w_s)
        const(f"w{i}_z", np.zeros([c_out], np.int8))
        b_f = rng.uniform(-0.5, 0.5, [c_out]).astype(np.float32)
        p = f"l{i}"
        qdq_nodes += [
            helper.make_node("DequantizeLinear", [q_cur, "in_s" if i == 0 else f"l{i-1}_s",
                                                  "in_z" if i == 0 else f"l{i-1}_z"], [p + "_x"]),
            helper.make_node("DequantizeLinear", [f"w{i}", f"w{i}_s", f"w{i}_z"], [p + "_w"],
                             axis=0)]
        conv_inputs = [p + "_x", p + "_w"]
        if i % 2 == 0:  # int32 bias through a DequantizeLinear, quantized with x_s * w_s
            x_s = scale if i == 0 else 0.08
            b_s = (x_s * w_s).astype(np.float32)
            const(f"b{i}", np.round(b_f / b_s).astype(np.int32))
            const(f"b{i}_s", b_s)
            qdq_nodes.append(helper.make_node("DequantizeLinear", [f"b{i}", f"b{i}_s"], [p + "_b"],
                                              axis=0))
            b_real = (np.round(b_f / b_s) * b_s).astype(np.float32)
        else:
            const(f"b{i}", b_f)
            qdq_nodes.append(helper.make_node("Identity", [f"b{i}"], [p + "_b"]))
            b_real = b_f
        conv_inputs.append(p + "_b")
        qdq_nodes.append(helper.make_node("Conv", conv_inputs, [p + "_y"], pads=[1, 1, 1, 1]))
        const(f"{p}_s", np.array(0.08, np.float32))
        const(f"{p}_z", np.array(0, np.uint8))
        qdq_nodes += [helper.make_node("Relu", [p + "_y"], [p + "_r"]),
                      helper.make_node("QuantizeLinear", [p + "_r", f"{p}_s", f"{p}_z"], [p + "_q"])]
        # The float twin: dequantized weights and bias.
        fp_inits += [numpy_helper.from_array((w.astype(np.float32) * w_s[:, None, None, None]),
                                             f"fw{i}"),
                     numpy_helper.from_array(b_real, f"fb{i}")]
        fp_nodes += [helper.make_node("Conv", [fp_cur, f"fw{i}", f"fb{i}"], [p + "_fy"],
                                      pads=[1, 1, 1, 1]),
                     helper.make_node("Relu", [p + "_fy"], [p + "_fr"])]
        q_cur, fp_cur, c_in = p + "_q", p + "_fr", c_out
    qdq_nodes.append(helper.make_node("DequantizeLinear",
                                      [q_cur, f"l{layers-1}_s", f"l{layers-1}_z"], ["y"]))
    fp_nodes.append(helper.make_node("Identity", [fp_cur], ["y"]))
    shape = [1, 3, size, size]
    for name, nodes, inits in (("qdq_cnn", qdq_nodes, qdq_inits), ("fp32_cnn", fp_nodes, fp_inits)):
        graph = helper.make_graph(
            nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, size, size])],
            inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, name + ".onnx"))
    print(out)


if __name__ == "__main__":
    main(sys.argv[1], *[int(a) for a in sys.argv[2:5]])
