#!/usr/bin/env python3
"""Writes a small Llama-style decoder with a KV cache as the pair of graphs a generation loop
runs, in the Hugging Face export form: a prefill graph (no past) and a decode graph (past
key/values in, the cache concatenated inside the graph), both with dynamic batch and sequence
axes and the same weights (same names and bytes, so `--share-weights` stores them once).

The architecture: token embedding; per layer RMSNorm, q/k/v projections, rotary embedding
(rotate-half form, cos/sin tables gathered by position_ids), grouped-query attention (key/value
heads repeated with Unsqueeze/Expand/Reshape), a causal mask over cache slots (transformers'
cache_position: past length + 0..S-1) and a padding mask from attention_mask, softmax attention, output projection and residual, RMSNorm, SwiGLU MLP and
residual; final RMSNorm and an untied LM head.

Inputs:  input_ids [B, S] int64, attention_mask [B, P + S] int64, position_ids [B, S] int64,
         (decode only) past_key_<i>, past_value_<i> [B, KV_HEADS, P, HEAD_DIM] float32
Outputs: logits [B, S, VOCAB], present_key_<i>, present_value_<i> [B, KV_HEADS, P + S, HEAD_DIM]
The same architecture in ONNX Runtime GenAI's form (kv_genai.onnx, one model for every step,
starting from empty caches): see build_genai.

Usage: make_kv_decoder.py OUT_DIR [--seed N]   (writes kv_prefill.onnx, kv_decode.onnx and
                                                kv_genai.onnx)
       make_kv_decoder.py OUT_DIR --attention-op  (kv23_*.onnx: the pair's attention as opset
                                                  23's Attention op, as PyTorch exports SDPA)
       make_kv_decoder.py OUT_DIR --config base  (kv_genai.onnx alone, ~125M parameters)
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VOCAB, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, LAYERS, FFN = 97, 32, 4, 2, 8, 2, 64
MAX_POSITIONS, THETA, EPS = 256, 10000.0, 1e-6


class Graph:
    """Nodes, initializers and unique names for one graph."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0
        self.opset = 17

    def op(self, op_type, inputs, domain="", **attrs):
        self.count += 1
        out = f"{op_type.lower()}_{self.count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], domain=domain, **attrs))
        return out

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name


def weights(seed):
    rng = np.random.default_rng(seed)

    def w(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    p = {"embed": w(VOCAB, HIDDEN, scale=1.0), "final_norm": 1 + w(HIDDEN, scale=0.1),
         "lm_head": w(HIDDEN, VOCAB)}
    for i in range(LAYERS):
        p.update({f"l{i}.in_norm": 1 + w(HIDDEN, scale=0.1), f"l{i}.q": w(HIDDEN, HEADS * HEAD_DIM),
                  f"l{i}.k": w(HIDDEN, KV_HEADS * HEAD_DIM), f"l{i}.v": w(HIDDEN, KV_HEADS * HEAD_DIM),
                  f"l{i}.o": w(HEADS * HEAD_DIM, HIDDEN), f"l{i}.post_norm": 1 + w(HIDDEN, scale=0.1),
                  f"l{i}.gate": w(HIDDEN, FFN), f"l{i}.up": w(HIDDEN, FFN), f"l{i}.down": w(FFN, HIDDEN)})
    inv = 1.0 / THETA ** (np.arange(0, HEAD_DIM, 2, dtype=np.float64) / HEAD_DIM)
    ang = np.arange(MAX_POSITIONS, dtype=np.float64)[:, None] * inv[None, :]
    ang = np.concatenate([ang, ang], axis=1)
    p["cos"], p["sin"] = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    return p


def rms_norm(g, x, weight):
    if g.opset >= 18:  # the axes an input
        var = g.op("ReduceMean", [g.op("Pow", [x, "two"]), g.const("last_axis", np.array([-1]))], keepdims=1)
    else:
        var = g.op("ReduceMean", [g.op("Pow", [x, "two"])], axes=[-1], keepdims=1)
    return g.op("Mul", [g.op("Div", [x, g.op("Sqrt", [g.op("Add", [var, "eps"])])]), weight])


def heads(g, x, n):
    """[B, S, n * D] -> [B, n, S, D]"""
    return g.op("Transpose", [g.op("Reshape", [x, g.const(f"shape_heads_{n}", np.array([0, 0, n, HEAD_DIM]))])],
                perm=[0, 2, 1, 3])


def rotary(g, x, cos, sin):
    half = HEAD_DIM // 2
    lo = g.op("Slice", [x, "zero1", g.const("half", np.array([half])), "axis3"])
    hi = g.op("Slice", [x, g.const("half_start", np.array([half])), g.const("end", np.array([HEAD_DIM])), "axis3"])
    rotated = g.op("Concat", [g.op("Neg", [hi]), lo], axis=-1)
    return g.op("Add", [g.op("Mul", [x, cos]), g.op("Mul", [rotated, sin])])


def build(with_past, p, attention_op=False):
    """attention_op: as PyTorch's exporter writes SDPA from opset 23 on, one Attention op (the
    boolean mask, query heads over the unrepeated key/value heads, the scale attribute) instead
    of MatMul / Softmax / MatMul; opset 23."""
    g = Graph()
    g.opset = 23 if attention_op else 17
    for name, value in p.items():
        g.const(name, value)
    g.const("two", np.array(2.0, np.float32))
    g.const("eps", np.array(EPS, np.float32))
    g.const("zero1", np.array([0]))
    g.const("axis3", np.array([3]))
    g.const("scale", np.array(1.0 / np.sqrt(HEAD_DIM), np.float32))
    g.const("masked", np.array(np.finfo(np.float32).min, np.float32))
    g.const("fzero", np.array(0.0, np.float32))
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total_sequence"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "sequence"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", VOCAB])]
    cache = ["batch", KV_HEADS, "total_sequence", HEAD_DIM]
    for i in range(LAYERS):
        for kind in ("key", "value"):
            if with_past:
                inputs.append(helper.make_tensor_value_info(
                    f"past_{kind}_{i}", TensorProto.FLOAT, ["batch", KV_HEADS, "past_sequence", HEAD_DIM]))
            outputs.append(helper.make_tensor_value_info(f"present_{kind}_{i}", TensorProto.FLOAT, cache))

    x = g.op("Gather", ["embed", "input_ids"])
    # Rotary tables at each token's position: [B, 1, S, D].
    cos = g.op("Unsqueeze", [g.op("Gather", ["cos", "position_ids"]), g.const("ax1", np.array([1]))])
    sin = g.op("Unsqueeze", [g.op("Gather", ["sin", "position_ids"]), "ax1"])
    # Mask [B, 1, S, T] as transformers builds it: key j visible to the query in cache slot c
    # when j <= c and the attention mask keeps j; additive 0 or the float32 lowest. The query's
    # slots are the cache's next ones (past length + 0..S-1, transformers' cache_position), not
    # its position_ids, so a cache with masked rows (padding) keeps the causal rule right.
    total = g.op("Shape", ["attention_mask"], start=1, end=2)
    key_pos = g.op("Range", [g.const("izero", np.array(0)), g.op("Squeeze", [total, "zero1"]), g.const("ione", np.array(1))])
    past_len = (g.op("Squeeze", [g.op("Shape", ["past_key_0"], start=2, end=3), "zero1"]) if with_past
                else "izero")
    rows = g.op("Squeeze", [g.op("Shape", ["input_ids"], start=1, end=2), "zero1"])
    slots = g.op("Range", [past_len, g.op("Add", [past_len, rows]), "ione"])
    causal = g.op("LessOrEqual", [g.op("Reshape", [key_pos, g.const("shape_keys", np.array([1, 1, 1, -1]))]),
                                  g.op("Reshape", [slots, g.const("shape_slots", np.array([1, 1, -1, 1]))])])
    keep = g.op("Cast", [g.op("Unsqueeze", ["attention_mask", g.const("ax12", np.array([1, 2]))])], to=TensorProto.BOOL)
    visible = g.op("And", [causal, keep])
    mask = g.op("Where", [visible, "fzero", "masked"])
    for i in range(LAYERS):
        h = rms_norm(g, x, f"l{i}.in_norm")
        q = rotary(g, heads(g, g.op("MatMul", [h, f"l{i}.q"]), HEADS), cos, sin)
        k = rotary(g, heads(g, g.op("MatMul", [h, f"l{i}.k"]), KV_HEADS), cos, sin)
        v = heads(g, g.op("MatMul", [h, f"l{i}.v"]), KV_HEADS)
        if with_past:
            k = g.op("Concat", [f"past_key_{i}", k], axis=2)
            v = g.op("Concat", [f"past_value_{i}", v], axis=2)
        g.nodes.append(helper.make_node("Identity", [k], [f"present_key_{i}"]))
        g.nodes.append(helper.make_node("Identity", [v], [f"present_value_{i}"]))

        def repeat(t):  # [B, KV, T, D] -> [B, H, T, D]
            shape = g.op("Shape", [t])
            b_kv = g.op("Slice", [shape, "zero1", g.const("two1", np.array([2]))])
            t_d = g.op("Slice", [shape, "two1", g.const("four1", np.array([4]))])
            groups = g.const("groups", np.array([HEADS // KV_HEADS]))
            expanded = g.op("Expand", [g.op("Unsqueeze", [t, "two1"]),
                                       g.op("Concat", [b_kv, groups, t_d], axis=0)])
            return g.op("Reshape", [expanded, g.const("shape_rep", np.array([0, HEADS, -1, HEAD_DIM]))])

        if attention_op:
            ctx = g.op("Attention", [q, k, v, visible], scale=float(1.0 / np.sqrt(HEAD_DIM)))
        else:
            scores = g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [repeat(k)], perm=[0, 1, 3, 2])]), "scale"])
            probs = g.op("Softmax", [g.op("Add", [scores, mask])], axis=-1)
            ctx = g.op("MatMul", [probs, repeat(v)])
        ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, g.const("shape_merge", np.array([0, 0, HEADS * HEAD_DIM]))])
        x = g.op("Add", [x, g.op("MatMul", [ctx, f"l{i}.o"])])
        h = rms_norm(g, x, f"l{i}.post_norm")
        gate = g.op("MatMul", [h, f"l{i}.gate"])
        act = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
        x = g.op("Add", [x, g.op("MatMul", [g.op("Mul", [act, g.op("MatMul", [h, f"l{i}.up"])]), f"l{i}.down"])])
    g.nodes.append(helper.make_node("MatMul", [rms_norm(g, x, "final_norm"), "lm_head"], ["logits"]))
    # Constants made once by name: drop the repeats g.const added per layer, and those only the
    # MatMul / Softmax form reads.
    read = {i for n in g.nodes for i in n.input}
    seen, inits = set(), []
    for t in g.inits:
        if t.name in read and t.name not in seen:
            seen.add(t.name)
            inits.append(t)
    graph = helper.make_graph(g.nodes, "kv_decode" if with_past else "kv_prefill", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23 if attention_op else 17)])
    model.ir_version = 10 if attention_op else 8
    if not attention_op:  # the ONNX library here predates opset 23
        onnx.checker.check_model(model)
    return model


# The GenAI form: ONNX Runtime GenAI's builder writes one model for every step, with
# com.microsoft ops. Heads of 16 (ONNX Runtime's rotary in GroupQueryAttention wants a multiple
# of 16).
# G_FFN 320: the MLP's weights (64 x 320 floats, 80 KiB) are past what graph-level folding
# dequantizes (64 KiB), so the CPU compile keeps them at 4 bits (MatMulInt4), as in real models.
G_HIDDEN, G_HEADS, G_KV_HEADS, G_HEAD_DIM, G_FFN, G_BLOCK = 64, 4, 2, 16, 320, 32


def quantize_4bit(w, rng):
    """MatMulNBits' layout of w [K, N]: blocks of G_BLOCK along K per output column, symmetric
    (zero point 8): B uint8 [N, blocks, G_BLOCK / 2], low nibble first, scales [N * blocks]."""
    K, N = w.shape
    cols = w.T.reshape(N, K // G_BLOCK, G_BLOCK)
    scale = np.maximum(np.abs(cols).max(-1), 1e-6) / 7
    q = (np.clip(np.round(cols / scale[..., None]), -8, 7) + 8).astype(np.uint8)
    return (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8), scale.astype(np.float32).reshape(-1)


def build_genai(seed):
    """input_ids [B, S], attention_mask [B, T], past_key_values.<i>.key/value [B, KV, P, H] ->
    logits, present.<i>.key/value: SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization,
    MatMulNBits 4-bit projections, GroupQueryAttention with rotary (seqlens_k and
    total_sequence_length computed from the attention mask, as GenAI's models do)."""
    rng = np.random.default_rng(seed)
    g = Graph()

    def w(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def linear(x, name, k, n):
        packed, scales = quantize_4bit(w(k, n), rng)
        g.const(name + ".qweight", packed)
        g.const(name + ".scales", scales)
        return g.op("MatMulNBits", [x, name + ".qweight", name + ".scales"], domain="com.microsoft",
                    K=k, N=n, bits=4, block_size=G_BLOCK)

    g.const("embed", w(VOCAB, G_HIDDEN, scale=1.0))
    inv = 1.0 / THETA ** (np.arange(0, G_HEAD_DIM, 2, dtype=np.float64) / G_HEAD_DIM)
    ang = np.arange(MAX_POSITIONS, dtype=np.float64)[:, None] * inv[None, :]
    g.const("cos_cache", np.cos(ang).astype(np.float32))
    g.const("sin_cache", np.sin(ang).astype(np.float32))
    g.const("one", np.array(1, np.int64))
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total_sequence"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", VOCAB])]
    seqlens = g.op("Cast", [g.op("Sub", [g.op("ReduceSum", ["attention_mask", g.const("ax1", np.array([1]))],
                                               keepdims=0), "one"])], to=TensorProto.INT32)
    total = g.op("Cast", [g.op("Gather", [g.op("Shape", ["attention_mask"]), "one"])], to=TensorProto.INT32)
    x = g.op("Gather", ["embed", "input_ids"])
    residual, h = x, None
    for i in range(LAYERS):
        norm = g.const(f"l{i}.in_norm", 1 + w(G_HIDDEN, scale=0.1))
        if i == 0:
            h = g.op("SimplifiedLayerNormalization", [x, norm], axis=-1, epsilon=EPS)
        else:
            g.count += 1
            h, residual = f"norm_{g.count}", f"residual_{g.count}"
            g.nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", [x, residual_prev, norm],
                                            [h, "", "", residual], domain="com.microsoft", epsilon=EPS))
        past_k, past_v = f"past_key_values.{i}.key", f"past_key_values.{i}.value"
        cache = ["batch", G_KV_HEADS, "past_sequence", G_HEAD_DIM]
        inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, cache) for n in (past_k, past_v)]
        present = ["batch", G_KV_HEADS, "total_sequence", G_HEAD_DIM]
        outputs += [helper.make_tensor_value_info(f"present.{i}.{kind}", TensorProto.FLOAT, present)
                    for kind in ("key", "value")]
        q = linear(h, f"l{i}.q", G_HIDDEN, G_HEADS * G_HEAD_DIM)
        k = linear(h, f"l{i}.k", G_HIDDEN, G_KV_HEADS * G_HEAD_DIM)
        v = linear(h, f"l{i}.v", G_HIDDEN, G_KV_HEADS * G_HEAD_DIM)
        g.count += 1
        attn = f"attn_{g.count}"
        g.nodes.append(helper.make_node(
            "GroupQueryAttention", [q, k, v, past_k, past_v, seqlens, total, "cos_cache", "sin_cache"],
            [attn, f"present.{i}.key", f"present.{i}.value"], domain="com.microsoft", num_heads=G_HEADS,
            kv_num_heads=G_KV_HEADS, do_rotary=1))
        o = linear(attn, f"l{i}.o", G_HEADS * G_HEAD_DIM, G_HIDDEN)
        g.count += 1
        h2, residual2 = f"norm_{g.count}", f"residual_{g.count}"
        g.nodes.append(helper.make_node("SkipSimplifiedLayerNormalization",
                                        [o, residual, g.const(f"l{i}.post_norm", 1 + w(G_HIDDEN, scale=0.1))],
                                        [h2, "", "", residual2], domain="com.microsoft", epsilon=EPS))
        gate = linear(h2, f"l{i}.gate", G_HIDDEN, G_FFN)
        act = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
        x = linear(g.op("Mul", [act, linear(h2, f"l{i}.up", G_HIDDEN, G_FFN)]), f"l{i}.down", G_FFN, G_HIDDEN)
        residual_prev = residual2
    g.count += 1
    final = f"norm_{g.count}"
    g.nodes.append(helper.make_node("SkipSimplifiedLayerNormalization",
                                    [x, residual_prev, g.const("final_norm", 1 + w(G_HIDDEN, scale=0.1))],
                                    [final], domain="com.microsoft", epsilon=EPS))
    g.nodes.append(helper.make_node("MatMul", [final, g.const("lm_head", w(G_HIDDEN, VOCAB))], ["logits"]))
    graph = helper.make_graph(g.nodes, "kv_genai", inputs, outputs, g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


# --config base: the GenAI model at about 125M parameters (a Llama-architecture model of the size
# scripts/gpu_bench times generation with; its transformers LlamaConfig is in gpu_bench_pack.py).
BASE_GENAI = dict(VOCAB=32000, G_HIDDEN=768, G_HEADS=12, G_KV_HEADS=4, G_HEAD_DIM=64, G_FFN=2048,
                  LAYERS=12, MAX_POSITIONS=2048)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--attention-op", action="store_true",
                        help="write kv23_*.onnx: the pair with opset 23's Attention op (the GenAI model as usual)")
    parser.add_argument("--config", choices=("test", "base"), default="test",
                        help="base: only kv_genai.onnx, at about 125M parameters (for benchmarks)")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    if args.config == "base":
        globals().update(BASE_GENAI)
        onnx.save(build_genai(args.seed), os.path.join(args.out_dir, "kv_genai.onnx"))
        print(args.out_dir)
        return
    p = weights(args.seed)
    stem = "kv23" if args.attention_op else "kv"
    for kind, with_past in (("prefill", False), ("decode", True)):
        onnx.save(build(with_past, p, args.attention_op), os.path.join(args.out_dir, f"{stem}_{kind}.onnx"))
    onnx.save(build_genai(args.seed), os.path.join(args.out_dir, f"{stem}_genai.onnx"))
    print(args.out_dir)


if __name__ == "__main__":
    main()
