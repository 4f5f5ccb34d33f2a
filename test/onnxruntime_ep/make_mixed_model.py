"""Writes mixed.onnx: a model ortc's CPU backend covers except for one node (ONNX Runtime's
com.microsoft FusedMatMul, which ortc does not run, with a weight of its own) between two groups
ortc can compile. Through ONNX Runtime's compile API with the ortc EP it becomes a ctx model with
two EPContext nodes and the FusedMatMul left to ONNX Runtime's CPU EP: a bundle with CPU-side
ONNX nodes.
Usage: make_mixed_model.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out_dir):
    rng = np.random.default_rng(7)
    w1 = numpy_helper.from_array(rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.normal(0, 0.1, (8,)).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.normal(0, 0.3, (8, 4)).astype(np.float32), "w2")
    b2 = numpy_helper.from_array(rng.normal(0, 0.1, (4,)).astype(np.float32), "b2")
    # Stays an initializer of the ctx model (only FusedMatMul reads it): exercises ONNX Runtime's
    # external initializers file.
    scale = numpy_helper.from_array(rng.normal(0, 0.3, (8, 8)).astype(np.float32), "scale")
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["act"], name="relu"),
        helper.make_node("ReduceMean", ["act"], ["mean"], name="mean", axes=[2, 3], keepdims=0),
        helper.make_node("FusedMatMul", ["mean", "scale"], ["pooled"], name="fused_matmul",
                         domain="com.microsoft", alpha=0.5),
        helper.make_node("MatMul", ["pooled", "w2"], ["logits0"], name="matmul"),
        helper.make_node("Add", ["logits0", "b2"], ["logits"], name="add"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "mixed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("act", TensorProto.FLOAT, [1, 8, 16, 16])],
        [w1, b1, w2, b2, scale])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    os.makedirs(out_dir, exist_ok=True)
    onnx.save(model, os.path.join(out_dir, "mixed.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
