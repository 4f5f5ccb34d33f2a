"""Writes control-flow models in the forms ONNX's conformance data leaves out, with input .npy
files and a manifest for control_flow_models.py:
  loop_if_nested   Loop whose body holds an If; the branches read a main-graph initializer and a
                   main-graph input two scopes up, one holds its own initializer; a loop-carried
                   value and a scan output
  scan_axes        Scan-16 over axis 1, scanning backwards, scan output on axis 1 reversed
  loop_sequence    Loop carrying a sequence (SequenceInsert each iteration), ConcatFromSequence
  if_passthrough   If returning an outer intermediate (Identity, then) or a new value (else), read
                   again after the If; static shapes so the memory plan reuses buffers
Usage: make_control_flow_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array), name))


def loop_if_nested():
    then_g = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "bias"], ["t_sum"]),
         helper.make_node("Mul", ["t_sum", "k"], ["t_out"])],
        "then", [], [vi("t_out", F, [3])],
        initializer=[numpy_helper.from_array(np.array([1.5, -0.5, 0.25], np.float32), "k")])
    else_g = helper.make_graph([helper.make_node("Sub", ["acc_in", "x"], ["e_out"])], "else", [],
                               [vi("e_out", F, [3])])
    body = helper.make_graph(
        [const("two", np.array(2, np.int64)), const("zero", np.array(0, np.int64)),
         helper.make_node("Mod", ["i", "two"], ["parity"]),
         helper.make_node("Equal", ["parity", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["acc_out"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Mul", ["acc_out", "x"], ["scan_out"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("acc_in", F, [3])],
        [vi("c_out", B, []), vi("acc_out", F, [3]), vi("scan_out", F, [3])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["acc", "scans"], body=body)], "loop_if_nested",
        [vi("x", F, [3]), vi("n", I64, [])], [vi("acc", F, [3]), vi("scans", F, [None, 3])],
        initializer=[numpy_helper.from_array(np.array([0.5, -1.0, 2.0], np.float32), "bias")])
    feeds = {"x": np.array([0.3, -0.7, 1.1], np.float32), "n": np.array(5, np.int64)}
    return graph, 16, [feeds]


def scan_axes():
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "x_t"], ["y_t"])],
        "body", [vi("s_in", F, [2]), vi("x_t", F, [2])], [vi("s_out", F, [2]), vi("y_t", F, [2])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["s0", "X"], ["s_final", "Y"], body=body, num_scan_inputs=1,
                          scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1],
                          scan_output_directions=[1])],
        "scan_axes", [vi("s0", F, [2]), vi("X", F, [2, 4])], [vi("s_final", F, [2]), vi("Y", F, [2, 4])])
    rng = np.random.default_rng(9)
    feeds = {"s0": rng.uniform(-1, 1, 2).astype(np.float32), "X": rng.uniform(-1, 1, (2, 4)).astype(np.float32)}
    return graph, 16, [feeds]


def loop_sequence():
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["i_f"], to=F),
         helper.make_node("Mul", ["x", "i_f"], ["scaled"]),
         helper.make_node("SequenceInsert", ["seq_in", "scaled"], ["seq_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [vi("i", I64, []), vi("c_in", B, []),
                 helper.make_tensor_sequence_value_info("seq_in", F, None)],
        [vi("c_out", B, []), helper.make_tensor_sequence_value_info("seq_out", F, None)])
    graph = helper.make_graph(
        [helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
         helper.make_node("Loop", ["n", "", "empty"], ["seq"], body=body),
         helper.make_node("ConcatFromSequence", ["seq"], ["stacked"], axis=0, new_axis=1)],
        "loop_sequence", [vi("x", F, [2, 3]), vi("n", I64, [])], [vi("stacked", F, [None, 2, 3])])
    feeds = {"x": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5, "n": np.array(4, np.int64)}
    return graph, 16, [feeds]


def if_passthrough():
    # ONNX Runtime wants an Identity between an outer value and a branch output; ortc's Identity
    # hands back the same memory, so the If's result is still the outer buffer.
    then_g = helper.make_graph([helper.make_node("Identity", ["a"], ["a_id"])], "then", [],
                               [vi("a_id", F, [4, 4])])
    else_g = helper.make_graph([helper.make_node("Mul", ["a", "a"], ["sq"])], "else", [], [vi("sq", F, [4, 4])])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["a"]),
         helper.make_node("If", ["cond"], ["picked"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Neg", ["picked"], ["n1"]),
         helper.make_node("Relu", ["n1"], ["r1"]),
         helper.make_node("Add", ["r1", "x"], ["c"]),
         helper.make_node("Mul", ["c", "c"], ["d"]),
         helper.make_node("Sub", ["d", "x"], ["e"])],
        "if_passthrough", [vi("x", F, [4, 4]), vi("cond", B, [])],
        [vi("picked", F, [4, 4]), vi("e", F, [4, 4])])
    x = np.linspace(-2, 2, 16, dtype=np.float32).reshape(4, 4)
    return graph, 16, [{"x": x, "cond": np.array(True)}, {"x": x, "cond": np.array(False)}]


def main(out):
    os.makedirs(out, exist_ok=True)
    manifest = []
    for make in (loop_if_nested, scan_axes, loop_sequence, if_passthrough):
        graph, opset, feed_sets = make()
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        name = graph.name
        onnx.save(model, os.path.join(out, name + ".onnx"))
        for k, feeds in enumerate(feed_sets):
            d = os.path.join(out, name, f"inputs_{k}")
            os.makedirs(d, exist_ok=True)
            for key, value in feeds.items():
                np.save(os.path.join(d, key + ".npy"), value)
        manifest.append({"name": name, "inputs": list(feed_sets[0]), "sets": len(feed_sets)})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
