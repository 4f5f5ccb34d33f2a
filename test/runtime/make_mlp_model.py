"""Writes a small fp32 MLP (Gemm 1536->128, Relu, Gemm 128->1, Sigmoid; the shape of the
openWakeWord classifiers) whose Gemms run on OpenMP threads: the model of unload_test.
Usage: make_mlp_model.py OUT.onnx"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
w1 = numpy_helper.from_array(rng.standard_normal((128, 1536)).astype(np.float32) * 0.03, "w1")
b1 = numpy_helper.from_array(np.zeros(128, np.float32), "b1")
w2 = numpy_helper.from_array(rng.standard_normal((1, 128)).astype(np.float32) * 0.1, "w2")
b2 = numpy_helper.from_array(np.zeros(1, np.float32), "b2")
nodes = [
    helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
    helper.make_node("Relu", ["h"], ["r"]),
    helper.make_node("Gemm", ["r", "w2", "b2"], ["logit"], transB=1),
    helper.make_node("Sigmoid", ["logit"], ["score"]),
]
graph = helper.make_graph(
    nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1536])],
    [helper.make_tensor_value_info("score", TensorProto.FLOAT, [1, 1])], [w1, b1, w2, b2])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
