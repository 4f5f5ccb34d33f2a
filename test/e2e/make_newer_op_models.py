"""Writes small models that use the ai.onnx ops newer than ortc's ONNX library: opset 23's
Attention (what PyTorch's exporter writes for scaled_dot_product_attention from opset 23 on),
RMSNormalization (torch.nn.functional.rms_norm) and RotaryEmbedding, opset 24's Swish,
TensorScatter and Attention with nonpad_kv_seqlen, with random weights (fixed seed), input .npy
files and a manifest for test/e2e/contrib_ops.py (ONNX Runtime 1.30 is the reference):

  attention_*.onnx        one per form: 4-D GQA with a boolean padding + causal mask, 3-D with
                          head counts, a past cache and is_causal, a float mask with softcap and
                          an explicit scale (and the qk_matmul_output), opset 24's external
                          cache with nonpad_kv_seqlen
  rms_norm, rotary_*, swish, tensor_scatter_*
  llama_block_opset23/24  a 2-layer Llama-style decoder written with these ops: RMSNormalization,
                          RotaryEmbedding at position ids, Attention (GQA, mask from
                          attention_mask and a causal table), SwiGLU (Swish at opset 24)

Usage: make_newer_op_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from make_contrib_models import Model as ContribModel  # noqa: E402

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
NEWER_OPS = {"Attention": 23, "RMSNormalization": 23, "RotaryEmbedding": 23, "Swish": 24,
             "TensorScatter": 24}  # the opset each op appeared in


class Model(ContribModel):
    """make_contrib_models.py's model with the opset (23 or 24) alone, IR 10 (what ONNX Runtime
    1.30 and ortc both read with these opsets), and the newer ops as what is expanded at load."""
    IR_VERSION = 10

    def __init__(self, name, opset=23, seed=0):
        super().__init__(name, opset, seed)

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def expanded_at_load(self, op, domain):
        return self.opset >= NEWER_OPS.get(op, 99)

    def opset_imports(self):
        return [helper.make_opsetid("", self.opset)]

    def manifest_extra(self):
        return {"expanded_line": f"newer ops: {self.contrib} ai.onnx node(s) expanded into older ops"}


def padding_mask(batch, seq):
    """[B, S] 0/1: a full row, and one padded at the end (no query row loses every key)."""
    m = np.ones((batch, seq), np.int64)
    m[-1, seq - 3:] = 0
    return m


def attention_models(out, manifest):
    B, S, D = 2, 6, 8
    # 4-D GQA (4 query heads over 2), boolean mask: padding (a column) and causal (a triangle).
    m = Model("attention_gqa_bool_mask")
    mask = np.tril(np.ones((S, S), bool))[None, None] & padding_mask(B, S).astype(bool)[:, None, None, :]
    m.node("Attention", [m.input("q", [B, 4, S, D]), m.input("k", [B, 2, S, D]), m.input("v", [B, 2, S, D]),
                         m.input("mask", [B, 1, S, S], BOOL, mask)], ["y"], "Attention_0")
    m.output("y")
    m.save(out, manifest)

    # 3-D inputs with head counts, a past cache, is_causal (query i sees keys j <= i + past).
    m = Model("attention_3d_past_causal", seed=1)
    P = 5
    m.node("Attention", [m.input("q", [B, S, 4 * D]), m.input("k", [B, S, 2 * D]), m.input("v", [B, S, 2 * D]), "",
                         m.input("past_key", [B, 2, P, D]), m.input("past_value", [B, 2, P, D])],
           ["y", "present_key", "present_value"], "Attention_0", q_num_heads=4, kv_num_heads=2, is_causal=1)
    for o in ("y", "present_key", "present_value"):
        m.output(o)
    m.save(out, manifest)

    # A float additive mask, softcap and an explicit scale; the scores after the mask as the
    # fourth output.
    m = Model("attention_float_mask_softcap", seed=2)
    bias = np.where(padding_mask(B, S)[:, None, None, :] > 0, 0.0, -1e4).astype(np.float32)
    bias = bias + m.rng.normal(0, 0.5, (B, 1, S, S)).astype(np.float32)
    m.node("Attention", [m.input("q", [B, 2, S, D]), m.input("k", [B, 2, S, D]), m.input("v", [B, 2, S, D]),
                         m.input("bias", [B, 1, S, S], F32, bias)], ["y", "", "", "scores"], "Attention_0",
           softcap=2.5, scale=0.3, qk_matmul_output_mode=2)
    m.output("y")
    m.output("scores")
    m.save(out, manifest)

    # Opset 24: one decode row against an external cache of T rows, nonpad_kv_seqlen valid.
    m = Model("attention_nonpad_decode", opset=24, seed=3)
    T = 10
    m.node("Attention", [m.input("q", [B, 4, 1, D]), m.input("k", [B, 2, T, D]), m.input("v", [B, 2, T, D]), "", "",
                         "", m.input("nonpad", [B], I64, np.array([7, 10], np.int64), [1, T])],
           ["y"], "Attention_0", is_causal=1)
    m.output("y")
    m.save(out, manifest)


def rope_tables(m, width, positions=32):
    inv = 1.0 / 10000 ** (np.arange(width, dtype=np.float64) / width)
    ang = np.arange(positions)[:, None] * inv[None, :]
    return (m.const("cos", np.cos(ang).astype(np.float32)), m.const("sin", np.sin(ang).astype(np.float32)))


def layer_models(out, manifest):
    B, S, N, D = 2, 6, 2, 8
    m = Model("rms_norm")
    m.node("RMSNormalization", [m.input("x", [B, S, 16]), m.const("g", m.rng.uniform(0.8, 1.2, 16).astype(np.float32))],
           ["y"], "RMSNormalization_0", epsilon=1e-6)
    m.output("y")
    m.save(out, manifest)
    # Over the last two axes (torch's rms_norm with a 2-D normalized_shape).
    m = Model("rms_norm_two_axes")
    m.node("RMSNormalization", [m.input("x", [B, S, 4, 4]), m.const("g", m.rng.uniform(0.8, 1.2, (4, 4)).astype(np.float32))],
           ["y"], "RMSNormalization_0", axis=-2)
    m.output("y")
    m.save(out, manifest)

    positions = np.sort(np.random.default_rng(4).integers(0, 32, (B, S)), axis=1).astype(np.int64)
    cases = (("rotary_bnsd", [B, N, S, D], {}, D // 2),
             ("rotary_bsh_interleaved", [B, S, N * D], dict(num_heads=N, interleaved=1), D // 2),
             ("rotary_partial", [B, N, S, D], dict(rotary_embedding_dim=D // 2), D // 4))
    for name, shape, attrs, width in cases:
        m = Model(name)
        cos, sin = rope_tables(m, width)
        m.node("RotaryEmbedding", [m.input("x", shape), cos, sin, m.input("position_ids", [B, S], I64, positions, [0, 31])],
               ["y"], "RotaryEmbedding_0", **attrs)
        m.output("y")
        m.save(out, manifest)
    # No position ids: the caches are already [B, S, D / 2].
    m = Model("rotary_no_positions")
    ang = m.rng.uniform(0, 3, (B, S, D // 2)).astype(np.float32)
    m.node("RotaryEmbedding", [m.input("x", [B, N, S, D]), m.input("cos", [B, S, D // 2], F32, np.cos(ang)),
                               m.input("sin", [B, S, D // 2], F32, np.sin(ang))], ["y"], "RotaryEmbedding_0")
    m.output("y")
    m.save(out, manifest)

    m = Model("swish", opset=24)
    x = m.input("x", [B, S, 16])
    m.node("Swish", [x], ["y"], "Swish_0")
    m.node("Swish", ["y"], ["y2"], "Swish_1", alpha=1.7)
    m.output("y")
    m.output("y2")
    m.save(out, manifest)

    for mode in ("linear", "circular"):
        m = Model("tensor_scatter_" + mode, opset=24)
        T, new = 8, 3
        at = np.array([2, 5] if mode == "linear" else [6, 1], np.int64)
        m.node("TensorScatter", [m.input("cache", [B, N, T, D]), m.input("update", [B, N, new, D]),
                                 m.input("write_indices", [B], I64, at, [0, T - new])],
               ["y"], "TensorScatter_0", mode=mode)
        m.output("y")
        m.save(out, manifest)


def llama_block(out, manifest, opset):
    """A 2-layer Llama-style decoder in the newer ops, [B, S] ids and attention_mask in."""
    B, S, H, N, KV, V, F = 2, 8, 32, 4, 2, 50, 64
    D = H // N
    m = Model(f"llama_block_opset{opset}", opset=opset, seed=opset)
    ids = m.input("input_ids", [B, S], I64, m.rng.integers(0, V, (B, S)).astype(np.int64), [0, V - 1])
    mask_in = m.input("attention_mask", [B, S], I64, padding_mask(B, S), [1, 1])
    pos = m.input("position_ids", [B, S], I64, np.tile(np.arange(S, dtype=np.int64), (B, 1)), [0, S - 1])
    cos, sin = rope_tables(m, D // 2)
    # mask [B, 1, S, S] = padding (keys) and causal, as transformers builds it.
    keys = m.node("Unsqueeze", [m.node("Cast", [mask_in], ["mask_bool"], "Cast_mask", to=BOOL),
                                m.const("axes_12", np.array([1, 2], np.int64))], ["key_mask"], "Unsqueeze_mask")
    causal = m.const("causal", np.tril(np.ones((1, 1, S, S), bool)))
    mask = m.node("And", [keys, causal], ["mask"], "And_mask")
    h = m.node("Gather", [m.weight("embed", [V, H], 1.0), ids], ["h0"], "Gather_embed")

    def rms(x, tag):
        return m.node("RMSNormalization", [x, m.const(tag + "_g", m.rng.uniform(0.8, 1.2, H).astype(np.float32))],
                      [tag], tag, epsilon=1e-6)

    def heads(x, n, tag):
        r = m.node("Reshape", [x, m.const(tag + "_shape", np.array([B, S, n, D], np.int64))], [tag + "_r"], tag + "_r")
        return m.node("Transpose", [r], [tag], tag, perm=[0, 2, 1, 3])

    for layer in range(2):
        p = f"l{layer}"
        x = rms(h, p + "_ln1")
        q = heads(m.node("MatMul", [x, m.weight(p + "_wq", [H, N * D])], [p + "_q"], p + "_q"), N, p + "_qh")
        k = heads(m.node("MatMul", [x, m.weight(p + "_wk", [H, KV * D])], [p + "_k"], p + "_k"), KV, p + "_kh")
        v = heads(m.node("MatMul", [x, m.weight(p + "_wv", [H, KV * D])], [p + "_v"], p + "_v"), KV, p + "_vh")
        q = m.node("RotaryEmbedding", [q, cos, sin, pos], [p + "_q_rot"], p + "_q_rot")
        k = m.node("RotaryEmbedding", [k, cos, sin, pos], [p + "_k_rot"], p + "_k_rot")
        att = m.node("Attention", [q, k, v, mask], [p + "_att"], p + "_att")
        att = m.node("Reshape", [m.node("Transpose", [att], [p + "_att_t"], p + "_att_t", perm=[0, 2, 1, 3]),
                                 m.const(p + "_merge", np.array([B, S, H], np.int64))], [p + "_att_m"], p + "_att_m")
        h = m.node("Add", [h, m.node("MatMul", [att, m.weight(p + "_wo", [H, H])], [p + "_o"], p + "_o")],
                   [p + "_h1"], p + "_h1")
        x = rms(h, p + "_ln2")
        gate = m.node("MatMul", [x, m.weight(p + "_wg", [H, F])], [p + "_gate"], p + "_gate")
        if opset >= 24:
            act = m.node("Swish", [gate], [p + "_act"], p + "_act")
        else:
            act = m.node("Mul", [gate, m.node("Sigmoid", [gate], [p + "_sig"], p + "_sig")], [p + "_act"], p + "_act")
        up = m.node("MatMul", [x, m.weight(p + "_wu", [H, F])], [p + "_up"], p + "_up")
        down = m.node("MatMul", [m.node("Mul", [act, up], [p + "_glu"], p + "_glu"), m.weight(p + "_wd", [F, H])],
                      [p + "_down"], p + "_down")
        h = m.node("Add", [h, down], [p + "_h2"], p + "_h2")
    m.node("MatMul", [rms(h, "final_ln"), m.weight("lm_head", [H, V])], ["logits"], "lm_head")
    m.output("logits")
    m.save(out, manifest)


def main(out):
    os.makedirs(out, exist_ok=True)
    manifest = []
    attention_models(out, manifest)
    layer_models(out, manifest)
    llama_block(out, manifest, 23)
    llama_block(out, manifest, 24)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"{len(manifest)} models in {out}")


if __name__ == "__main__":
    main(sys.argv[1])
