"""Writes a voice-activity-detector-like model shaped like the ones real VAD exporters write:
a top-level If on a scalar int64 input `sr` picks the 16 kHz or the 8 kHz branch; each branch
pads the audio (reflect), runs two Conv + Relu layers, an LSTM whose initial state comes from
the stateful `state` input [2, 1, 128], and a sigmoid head; every weight is a Constant node
inside its branch. Outputs: `output` [1, 1] and the next state `stateN` [2, 1, 128].
Random weights and inputs with a fixed seed.

  vad.onnx                  the model (opset 17)
  inputs_16k/*.npy          input [1, 512], state, sr = 16000
  inputs_8k/*.npy           input [1, 256], state, sr = 8000

Usage: make_vad_model.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN = 128


def const(nodes, rng, name, shape, scale):
    value = rng.uniform(-scale, scale, shape).astype(np.float32)
    nodes.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value, name)))
    return name


def ints(nodes, name, values):
    nodes.append(helper.make_node("Constant", [], [name],
                                  value=numpy_helper.from_array(np.array(values, np.int64), name)))
    return name


def branch(tag, rng, kernel, stride, c1, c2):
    """One sample-rate branch; names carry `tag` so both branches stay distinct (SSA)."""
    n, p = [], lambda s: f"{tag}_{s}"
    w1 = const(n, rng, p("w1"), [c1, 1, kernel], 0.5)
    b1 = const(n, rng, p("b1"), [c1], 0.1)
    w2 = const(n, rng, p("w2"), [c2, c1, 3], 0.3)
    b2 = const(n, rng, p("b2"), [c2], 0.1)
    w = const(n, rng, p("W"), [1, 4 * HIDDEN, c2], 0.2)
    r = const(n, rng, p("R"), [1, 4 * HIDDEN, HIDDEN], 0.1)
    b = const(n, rng, p("B"), [1, 8 * HIDDEN], 0.1)
    wo = const(n, rng, p("Wout"), [HIDDEN, 1], 0.3)
    bo = const(n, rng, p("bout"), [1], 0.1)
    n.append(helper.make_node("Unsqueeze", ["input", ints(n, p("axis1"), [1])], [p("x3")]))
    pad = kernel // 2
    n.append(helper.make_node("Pad", [p("x3"), ints(n, p("pads"), [0, 0, pad, 0, 0, pad])], [p("xp")],
                              mode="reflect"))
    n.append(helper.make_node("Conv", [p("xp"), w1, b1], [p("c1")], strides=[stride]))
    n.append(helper.make_node("Relu", [p("c1")], [p("r1")]))
    n.append(helper.make_node("Conv", [p("r1"), w2, b2], [p("c2")], pads=[1, 1]))
    n.append(helper.make_node("Relu", [p("c2")], [p("r2")]))
    n.append(helper.make_node("Transpose", [p("r2")], [p("seq")], perm=[2, 0, 1]))
    zero, one, two = ints(n, p("zero"), [0]), ints(n, p("one"), [1]), ints(n, p("two"), [2])
    n.append(helper.make_node("Slice", ["state", zero, one], [p("h0")]))
    n.append(helper.make_node("Slice", ["state", one, two], [p("c0")]))
    n.append(helper.make_node("LSTM", [p("seq"), w, r, b, "", p("h0"), p("c0")],
                              [p("Y"), p("Y_h"), p("Y_c")], hidden_size=HIDDEN))
    n.append(helper.make_node("Concat", [p("Y_h"), p("Y_c")], [p("stateN")], axis=0))
    n.append(helper.make_node("Squeeze", [p("Y_h"), zero], [p("h")]))
    n.append(helper.make_node("MatMul", [p("h"), wo], [p("logit0")]))
    n.append(helper.make_node("Add", [p("logit0"), bo], [p("logit")]))
    n.append(helper.make_node("Sigmoid", [p("logit")], [p("output")]))
    outs = [helper.make_tensor_value_info(p("output"), TensorProto.FLOAT, [1, 1]),
            helper.make_tensor_value_info(p("stateN"), TensorProto.FLOAT, [2, 1, HIDDEN])]
    return helper.make_graph(n, f"vad_{tag}", [], outs)


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(16000)
    then_g = branch("sr16k", rng, kernel=8, stride=4, c1=16, c2=32)
    else_g = branch("sr8k", rng, kernel=4, stride=2, c1=16, c2=32)
    nodes = [
        helper.make_node("Constant", [], ["rate16k"], value=numpy_helper.from_array(np.array(16000, np.int64))),
        helper.make_node("Equal", ["sr", "rate16k"], ["is16k"]),
        helper.make_node("If", ["is16k"], ["output", "stateN"], then_branch=then_g, else_branch=else_g),
    ]
    graph = helper.make_graph(
        nodes, "vad",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, "samples"]),
         helper.make_tensor_value_info("state", TensorProto.FLOAT, [2, 1, HIDDEN]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1]),
         helper.make_tensor_value_info("stateN", TensorProto.FLOAT, [2, 1, HIDDEN])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, "vad.onnx"))
    for tag, rate, samples in (("16k", 16000, 512), ("8k", 8000, 256)):
        d = os.path.join(out, "inputs_" + tag)
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "input.npy"), rng.uniform(-1, 1, (1, samples)).astype(np.float32))
        np.save(os.path.join(d, "state.npy"), rng.uniform(-0.5, 0.5, (2, 1, HIDDEN)).astype(np.float32))
        np.save(os.path.join(d, "sr.npy"), np.array(rate, np.int64))


if __name__ == "__main__":
    main(sys.argv[1])
