"""Writes an LLM-style pair that shares every weight: a prefill graph (a prompt of SEQ tokens)
and a decode graph (one token, with a key/value cache in and out), from the same random
weights (fixed seed). Compile them as one group:
    ortc compile out/prefill.onnx out/decode.onnx --share-weights -o out/
Usage: python3 make_llm_pair.py OUT_DIR [SEQ]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VOCAB, DIM, LAYERS, FFN, MAX_POS = 256, 64, 2, 128, 512


def weights():
    rng = np.random.default_rng(0)
    w = {"embed": rng.normal(0, 0.5, (VOCAB, DIM)), "pos": rng.normal(0, 0.1, (MAX_POS, DIM)),
         "head": rng.normal(0, 0.2, (DIM, VOCAB)), "ln_f.g": rng.uniform(0.8, 1.2, DIM), "ln_f.b": rng.normal(0, 0.1, DIM)}
    for l in range(LAYERS):
        for n, shape in (("wq", (DIM, DIM)), ("wk", (DIM, DIM)), ("wv", (DIM, DIM)), ("wo", (DIM, DIM)),
                         ("w1", (DIM, FFN)), ("w2", (FFN, DIM))):
            w[f"l{l}.{n}"] = rng.normal(0, 1 / np.sqrt(shape[0]), shape)
        for n in ("ln1", "ln2"):
            w[f"l{l}.{n}.g"] = rng.uniform(0.8, 1.2, DIM)
            w[f"l{l}.{n}.b"] = rng.normal(0, 0.1, DIM)
    return {k: v.astype(np.float32) for k, v in w.items()}


def build(decode, seq):
    w = weights()
    nodes, inits = [], [numpy_helper.from_array(v, k) for k, v in w.items()]
    inits.append(numpy_helper.from_array(np.array(1 / np.sqrt(DIM), np.float32), "scale"))
    t = 1 if decode else seq
    inputs = [helper.make_tensor_value_info("tokens", TensorProto.INT64, [1, t]),
              helper.make_tensor_value_info("positions", TensorProto.INT64, [1, t])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, t, VOCAB])]
    if not decode:  # causal mask for the prompt
        mask = np.triu(np.full((seq, seq), -1e9, np.float32), k=1)
        inits.append(numpy_helper.from_array(mask, "causal_mask"))
    node = lambda op, ins, outs, **kw: nodes.append(helper.make_node(op, ins, outs, **kw))
    node("Gather", ["embed", "tokens"], ["tok_e"])
    node("Gather", ["pos", "positions"], ["pos_e"])
    node("Add", ["tok_e", "pos_e"], ["x0"])
    x = "x0"
    for l in range(LAYERS):
        p = f"l{l}."
        node("LayerNormalization", [x, p + "ln1.g", p + "ln1.b"], [p + "h"], axis=-1)
        for n in ("q", "k", "v"):
            node("MatMul", [p + "h", p + "w" + n], [p + n])
        k, v = p + "k", p + "v"
        if decode:
            inputs += [helper.make_tensor_value_info(f"past_k{l}", TensorProto.FLOAT, [1, "past", DIM]),
                       helper.make_tensor_value_info(f"past_v{l}", TensorProto.FLOAT, [1, "past", DIM])]
            node("Concat", [f"past_k{l}", k], [f"present_k{l}"], axis=1)
            node("Concat", [f"past_v{l}", v], [f"present_v{l}"], axis=1)
        else:
            node("Identity", [k], [f"present_k{l}"])
            node("Identity", [v], [f"present_v{l}"])
        outputs += [helper.make_tensor_value_info(f"present_k{l}", TensorProto.FLOAT, [1, "total", DIM]),
                    helper.make_tensor_value_info(f"present_v{l}", TensorProto.FLOAT, [1, "total", DIM])]
        node("Transpose", [f"present_k{l}"], [p + "kt"], perm=[0, 2, 1])
        node("MatMul", [p + "q", p + "kt"], [p + "s0"])
        node("Mul", [p + "s0", "scale"], [p + "s1"])
        if not decode:
            node("Add", [p + "s1", "causal_mask"], [p + "s2"])
        node("Softmax", [p + ("s1" if decode else "s2")], [p + "a"], axis=-1)
        node("MatMul", [p + "a", f"present_v{l}"], [p + "ctx"])
        node("MatMul", [p + "ctx", p + "wo"], [p + "o"])
        node("Add", [x, p + "o"], [p + "x1"])
        node("LayerNormalization", [p + "x1", p + "ln2.g", p + "ln2.b"], [p + "h2"], axis=-1)
        node("MatMul", [p + "h2", p + "w1"], [p + "f1"])
        node("Relu", [p + "f1"], [p + "f2"])
        node("MatMul", [p + "f2", p + "w2"], [p + "f3"])
        node("Add", [p + "x1", p + "f3"], [p + "x2"])
        x = p + "x2"
    node("LayerNormalization", [x, "ln_f.g", "ln_f.b"], ["xf"], axis=-1)
    node("MatMul", ["xf", "head"], ["logits"])
    graph = helper.make_graph(nodes, "decode" if decode else "prefill", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ortc-examples")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main(out, seq=128):
    os.makedirs(out, exist_ok=True)
    onnx.save(build(False, seq), os.path.join(out, "prefill.onnx"))
    onnx.save(build(True, seq), os.path.join(out, "decode.onnx"))
    print(f"wrote {out}/prefill.onnx (prompt of {seq}) and {out}/decode.onnx (one token with a KV cache)")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 128)
