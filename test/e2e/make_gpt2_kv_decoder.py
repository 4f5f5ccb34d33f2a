#!/usr/bin/env python3
"""Writes a small GPT-2-style decoder with a KV cache in the two forms a generation loop runs,
next to the Llama-style one of make_kv_decoder.py, so that `ortc generate` is checked on the
other common decoder family: LayerNormalization with bias, a learned position embedding, one
fused QKV projection, full multi-head attention (no GQA, no rotary), the tanh GELU and an LM
head tied to the token embedding.

1. The Hugging Face export form (gpt2_prefill.onnx without past, gpt2_decode.onnx with the cache
   concatenated inside the graph), written op for op as a GPT-2 export writes it: token and
   position embeddings (Gather by input_ids and by position_ids); per layer LayerNormalization,
   c_attn (MatMul + bias, split into q/k/v, as HF's Conv1D), heads by Reshape/Transpose, scores
   divided by sqrt(head size), the causal mask sliced out of the layer's lower-triangular bias
   buffer at [key_length - query_length, key_length) and applied with Where(mask, scores,
   float32 lowest), then the padding mask (1 - attention_mask) * float32 lowest added; softmax,
   c_proj + bias, residual; LayerNormalization, c_fc + bias, "gelu_new" written out with
   Pow/Mul/Add/Tanh, c_proj + bias, residual; final LayerNormalization and logits = h @ wte^T
   (a Transpose of the embedding itself: the weights are tied). Both graphs have dynamic batch
   and sequence axes and the same weights (names and bytes), so `--share-weights` stores them
   once.
   Inputs:  input_ids [B, S] int64, attention_mask [B, P + S] int64, position_ids [B, S] int64,
            (decode only) past_key_<i>, past_value_<i> [B, HEADS, P, HEAD_DIM] float32
   Outputs: logits [B, S, VOCAB], present_key_<i>, present_value_<i> [B, HEADS, P + S, HEAD_DIM]
2. ONNX Runtime GenAI's form (gpt2_genai.onnx, one model for every step from empty caches), with
   com.microsoft ops and the same weights: LayerNormalization then SkipLayerNormalization (the
   projections' biases as its bias input, the residual sum as its fourth output), the packed
   QKV projection fed to GroupQueryAttention alone (kv_num_heads == num_heads, do_rotary=0;
   seqlens_k and total_sequence_length computed from attention_mask as GenAI's models do),
   FastGelu with the c_fc bias, and a pre-transposed copy of the embedding as the LM head (as
   exporters fold the tie).
   Inputs:  input_ids, attention_mask, position_ids as above,
            past_key_values.<i>.key/value [B, HEADS, P, HEAD_DIM]
   Outputs: logits, present.<i>.key/value [B, HEADS, max(P, P + S), HEAD_DIM]

Usage: make_gpt2_kv_decoder.py OUT_DIR [--seed N]   (writes gpt2_prefill.onnx, gpt2_decode.onnx
                                                     and gpt2_genai.onnx)
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

import make_kv_decoder

VOCAB, HIDDEN, HEADS, HEAD_DIM, LAYERS, FFN = 97, 32, 4, 8, 2, 128
MAX_POSITIONS, EPS = 128, 1e-5
LOWEST = np.finfo(np.float32).min


class Graph(make_kv_decoder.Graph):
    """make_kv_decoder's graph, with named constants made once and nodes of several outputs."""

    def const(self, name, value):
        if all(t.name != name for t in self.inits):
            super().const(name, value)
        return name

    def ops(self, op_type, inputs, used, domain="", **attrs):
        """A node of several outputs, `used` flagging each (an unused one is named ""): returns
        the names of the used ones."""
        self.count += 1
        outs = [f"{op_type.lower()}_{self.count}_{i}" if u else "" for i, u in enumerate(used)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, domain=domain, **attrs))
        return [o for o in outs if o]


def weights(seed):
    """HF GPT-2's parameter names; Conv1D weights are [in, out]."""
    rng = np.random.default_rng(seed)

    def w(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    # A token embedding small next to the position embedding: with the LM head tied to it, a
    # larger one makes the residual stream's own token the argmax, and greedy generation repeats
    # one token (seed 1 gives 19 and 16 distinct tokens in 32 for generate_kv.py's prompts).
    p = {"transformer.wte.weight": w(VOCAB, HIDDEN, scale=0.3),
         "transformer.wpe.weight": w(MAX_POSITIONS, HIDDEN, scale=1.0)}
    for i in range(LAYERS):
        h = f"transformer.h.{i}."
        p.update({h + "ln_1.weight": 1 + w(HIDDEN, scale=0.1), h + "ln_1.bias": w(HIDDEN, scale=0.1),
                  h + "attn.c_attn.weight": w(HIDDEN, 3 * HIDDEN), h + "attn.c_attn.bias": w(3 * HIDDEN, scale=0.1),
                  h + "attn.c_proj.weight": w(HIDDEN, HIDDEN), h + "attn.c_proj.bias": w(HIDDEN, scale=0.1),
                  h + "ln_2.weight": 1 + w(HIDDEN, scale=0.1), h + "ln_2.bias": w(HIDDEN, scale=0.1),
                  h + "mlp.c_fc.weight": w(HIDDEN, FFN), h + "mlp.c_fc.bias": w(FFN, scale=0.1),
                  h + "mlp.c_proj.weight": w(FFN, HIDDEN), h + "mlp.c_proj.bias": w(HIDDEN, scale=0.1)})
    p["transformer.ln_f.weight"] = 1 + w(HIDDEN, scale=0.1)
    p["transformer.ln_f.bias"] = w(HIDDEN, scale=0.1)
    return p


def io(with_past, past_name, present_name, present_length):
    """Graph inputs and outputs; the caches named by past_name(i, kind) / present_name(i, kind)."""
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total_sequence"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "sequence"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", VOCAB])]
    for i in range(LAYERS):
        for kind in ("key", "value"):
            if with_past:
                inputs.append(helper.make_tensor_value_info(
                    past_name(i, kind), TensorProto.FLOAT, ["batch", HEADS, "past_sequence", HEAD_DIM]))
            outputs.append(helper.make_tensor_value_info(
                present_name(i, kind), TensorProto.FLOAT, ["batch", HEADS, present_length, HEAD_DIM]))
    return inputs, outputs


def finish(g, name, inputs, outputs, opsets):
    graph = helper.make_graph(g.nodes, name, inputs, outputs, g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def linear(g, x, name):
    """HF's Conv1D: x @ weight + bias."""
    return g.op("Add", [g.op("MatMul", [x, name + ".weight"]), name + ".bias"])


def layer_norm(g, x, name):
    return g.op("LayerNormalization", [x, name + ".weight", name + ".bias"], axis=-1, epsilon=EPS)


def gelu_new(g, x):
    """0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), as the export writes it."""
    g.const("three", np.array(3.0, np.float32))
    g.const("gelu_c", np.array(0.044715, np.float32))
    g.const("sqrt_2_over_pi", np.array(np.sqrt(2.0 / np.pi), np.float32))
    g.const("one", np.array(1.0, np.float32))
    g.const("half", np.array(0.5, np.float32))
    inner = g.op("Add", [x, g.op("Mul", ["gelu_c", g.op("Pow", [x, "three"])])])
    th = g.op("Tanh", [g.op("Mul", ["sqrt_2_over_pi", inner])])
    return g.op("Mul", [g.op("Mul", ["half", x]), g.op("Add", ["one", th])])


def heads(g, x):
    """[B, S, HIDDEN] -> [B, HEADS, S, HEAD_DIM]"""
    shape = g.const("shape_heads", np.array([0, 0, HEADS, HEAD_DIM]))
    return g.op("Transpose", [g.op("Reshape", [x, shape])], perm=[0, 2, 1, 3])


def causal_mask(g, layer, q, k):
    """The layer's bias buffer [1, 1, M, M] (lower triangle true) sliced at
    [key_length - query_length, key_length) x [0, key_length): GPT-2's causal mask."""
    buffer = g.const(f"transformer.h.{layer}.attn.bias",
                     np.tril(np.ones([MAX_POSITIONS, MAX_POSITIONS], bool))[None, None])
    g.const("idx2", np.array([2]))
    key_len = g.op("Slice", [g.op("Shape", [k]), "idx2", g.const("idx3", np.array([3]))])
    query_len = g.op("Slice", [g.op("Shape", [q]), "idx2", "idx3"])
    starts = g.op("Concat", [g.op("Sub", [key_len, query_len]), g.const("idx0", np.array([0]))], axis=0)
    ends = g.op("Concat", [key_len, key_len], axis=0)
    return g.op("Slice", [buffer, starts, ends, g.const("axes23", np.array([2, 3]))])


def build(with_past, p):
    """The Hugging Face form: the prefill graph, or with_past the decode graph."""
    g = Graph()
    for name, value in p.items():
        g.const(name, value)
    inputs, outputs = io(with_past, lambda i, kind: f"past_{kind}_{i}", lambda i, kind: f"present_{kind}_{i}",
                         "total_sequence")
    x = g.op("Add", [g.op("Gather", ["transformer.wte.weight", "input_ids"]),
                     g.op("Gather", ["transformer.wpe.weight", "position_ids"])])
    # (1 - attention_mask[:, None, None, :]) * lowest: [B, 1, 1, T]
    mask = g.op("Cast", [g.op("Unsqueeze", ["attention_mask", g.const("ax12", np.array([1, 2]))])],
                to=TensorProto.FLOAT)
    padding = g.op("Mul", [g.op("Sub", [g.const("one", np.array(1.0, np.float32)), mask]),
                           g.const("lowest", np.array(LOWEST, np.float32))])
    g.const("split_qkv", np.array([HIDDEN, HIDDEN, HIDDEN]))
    g.const("scale", np.array(np.sqrt(HEAD_DIM), np.float32))
    for i in range(LAYERS):
        h = f"transformer.h.{i}."
        qkv = linear(g, layer_norm(g, x, h + "ln_1"), h + "attn.c_attn")
        q, k, v = (heads(g, t) for t in g.ops("Split", [qkv, "split_qkv"], [1, 1, 1], axis=2))
        if with_past:
            k = g.op("Concat", [f"past_key_{i}", k], axis=2)
            v = g.op("Concat", [f"past_value_{i}", v], axis=2)
        g.nodes.append(helper.make_node("Identity", [k], [f"present_key_{i}"]))
        g.nodes.append(helper.make_node("Identity", [v], [f"present_value_{i}"]))
        scores = g.op("Div", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), "scale"])
        scores = g.op("Where", [causal_mask(g, i, q, k), scores, "lowest"])
        probs = g.op("Softmax", [g.op("Add", [scores, padding])], axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, g.const("shape_merge", np.array([0, 0, HIDDEN]))])
        x = g.op("Add", [linear(g, ctx, h + "attn.c_proj"), x])
        mlp = linear(g, gelu_new(g, linear(g, layer_norm(g, x, h + "ln_2"), h + "mlp.c_fc")), h + "mlp.c_proj")
        x = g.op("Add", [x, mlp])
    tied = g.op("Transpose", ["transformer.wte.weight"], perm=[1, 0])
    g.nodes.append(helper.make_node("MatMul", [layer_norm(g, x, "transformer.ln_f"), tied], ["logits"]))
    return finish(g, "gpt2_decode" if with_past else "gpt2_prefill", inputs, outputs, [("", 17)])


def build_genai(p):
    """ONNX Runtime GenAI's form: one model for every step, past and present caches of GQA."""
    g = Graph()
    ms = {"domain": "com.microsoft"}
    inputs, outputs = io(True, lambda i, kind: f"past_key_values.{i}.{kind}", lambda i, kind: f"present.{i}.{kind}",
                         "present_sequence")
    for name, value in p.items():
        g.const(name, value)
    g.const("lm_head.weight", np.ascontiguousarray(p["transformer.wte.weight"].T))
    g.const("one_i64", np.array(1, np.int64))
    seqlens = g.op("Cast", [g.op("Sub", [g.op("ReduceSum", ["attention_mask", g.const("ax1", np.array([1]))],
                                               keepdims=0), "one_i64"])], to=TensorProto.INT32)
    total = g.op("Cast", [g.op("Gather", [g.op("Shape", ["attention_mask"]), "one_i64"])], to=TensorProto.INT32)
    x = g.op("Add", [g.op("Gather", ["transformer.wte.weight", "input_ids"]),
                     g.op("Gather", ["transformer.wpe.weight", "position_ids"])])
    h = layer_norm(g, x, "transformer.h.0.ln_1")
    residual = x
    for i in range(LAYERS):
        n = f"transformer.h.{i}."
        qkv = linear(g, h, n + "attn.c_attn")
        g.count += 1
        attn = f"attn_{g.count}"
        g.nodes.append(helper.make_node(
            "GroupQueryAttention", [qkv, "", "", f"past_key_values.{i}.key", f"past_key_values.{i}.value",
                                    seqlens, total],
            [attn, f"present.{i}.key", f"present.{i}.value"], num_heads=HEADS, kv_num_heads=HEADS, do_rotary=0,
            **ms))
        o = g.op("MatMul", [attn, n + "attn.c_proj.weight"])
        h, residual = g.ops("SkipLayerNormalization",
                            [o, residual, n + "ln_2.weight", n + "ln_2.bias", n + "attn.c_proj.bias"],
                            [1, 0, 0, 1], epsilon=EPS, **ms)
        act = g.op("FastGelu", [g.op("MatMul", [h, n + "mlp.c_fc.weight"]), n + "mlp.c_fc.bias"], **ms)
        o = g.op("MatMul", [act, n + "mlp.c_proj.weight"])
        # The next layer's ln_1 (or ln_f) over the residual sum; the last one's sum is unused.
        last = i + 1 == LAYERS
        norm = "transformer.ln_f" if last else f"transformer.h.{i + 1}.ln_1"
        h, *rest = g.ops("SkipLayerNormalization",
                         [o, residual, norm + ".weight", norm + ".bias", n + "mlp.c_proj.bias"],
                         [1, 0, 0, not last], epsilon=EPS, **ms)
        residual = rest[0] if rest else None
    g.nodes.append(helper.make_node("MatMul", [h, "lm_head.weight"], ["logits"]))
    return finish(g, "gpt2_genai", inputs, outputs, [("", 17), ("com.microsoft", 1)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    p = weights(args.seed)
    for name, with_past in (("gpt2_prefill", False), ("gpt2_decode", True)):
        onnx.save(build(with_past, p), os.path.join(args.out_dir, name + ".onnx"))
    onnx.save(build_genai(p), os.path.join(args.out_dir, "gpt2_genai.onnx"))
    print(args.out_dir)


if __name__ == "__main__":
    main()
