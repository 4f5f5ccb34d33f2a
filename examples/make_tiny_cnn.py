"""Writes a small image classifier (random weights, fixed seed) used by the README's demo.

Conv-BatchNorm-Relu blocks, global pooling, a Gemm head, Softmax and an ArgMax that the CUDA
backend does not take, so the demo shows a split across backends.
Usage: python3 make_tiny_cnn.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out_path):
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def weight(name, shape, scale=0.1):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    x = "image"
    channels = [3, 16, 32]
    for i in range(2):
        cin, cout = channels[i], channels[i + 1]
        nodes.append(helper.make_node("Conv", [x, weight(f"conv{i}.w", (cout, cin, 3, 3)), weight(f"conv{i}.b", (cout,))],
                                      [f"conv{i}"], pads=[1, 1, 1, 1], name=f"conv{i}"))
        bn = [weight(f"bn{i}.scale", (cout,), 1.0), weight(f"bn{i}.bias", (cout,)),
              weight(f"bn{i}.mean", (cout,)), f"bn{i}.var"]
        inits.append(numpy_helper.from_array(rng.uniform(0.5, 1.5, cout).astype(np.float32), f"bn{i}.var"))
        nodes.append(helper.make_node("BatchNormalization", [f"conv{i}"] + bn, [f"bn{i}"], name=f"bn{i}"))
        nodes.append(helper.make_node("Relu", [f"bn{i}"], [f"relu{i}"], name=f"relu{i}"))
        nodes.append(helper.make_node("MaxPool", [f"relu{i}"], [f"pool{i}"], kernel_shape=[2, 2], strides=[2, 2],
                                      name=f"pool{i}"))
        x = f"pool{i}"
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["features"], name="flatten"))
    nodes.append(helper.make_node("Gemm", ["features", weight("fc.w", (10, 32)), weight("fc.b", (10,))], ["logits"],
                                  transB=1, name="fc"))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probs"], axis=-1, name="softmax"))
    nodes.append(helper.make_node("ArgMax", ["probs"], ["label"], axis=-1, keepdims=0, name="argmax"))

    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10]),
         helper.make_tensor_value_info("label", TensorProto.INT64, ["batch"])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ortc-examples")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out_path)
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main(sys.argv[1])
