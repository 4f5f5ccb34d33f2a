"""Writes small models that use ONNX Runtime's transformer contrib ops (domain com.microsoft), the
way its transformer optimizer writes them, with random weights (fixed seed), input .npy files and
a manifest for test/e2e/contrib_ops.py:

  <name>.onnx              one model per op and form (masks, causal, qkv_hidden_sizes, present
                           outputs, packed forms ortc reads, opsets 11 / 13 / 17 / 20)
  bert_like*.onnx          an optimized-BERT-like encoder: EmbedLayerNormalization -> Attention
                           (its mask_index) -> MatMul + SkipLayerNormalization -> MatMul +
                           BiasGelu / FastGelu -> MatMul + SkipLayerNormalization, 2 layers;
                           opsets 11, 17 and 20, and one with dynamic batch and sequence
  <name>/inputs/*.npy      the inputs the comparisons run on
  <name>/expected/*.npy    numpy reference outputs, for forms ONNX Runtime's CPU kernels refuse
  manifest.json            per model: inputs (shape, dtype, integer range), the reference
                           ("ort" or "numpy"), how many contrib nodes it has, and whether its
                           standard-op form must be one CUDA group at static shapes

Usage: make_contrib_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

B, S, H, N = 2, 8, 16, 2  # batch, sequence, hidden, heads
MS = "com.microsoft"
F32, I32 = TensorProto.FLOAT, TensorProto.INT32


class Model:
    """One model being written; make_newer_op_models.py's models are these with other opset
    imports, IR version and expanded ops (the hooks below)."""
    IR_VERSION = 8

    def __init__(self, name, opset=17, seed=0, dynamic=False):
        self.name, self.opset, self.dynamic = name, opset, dynamic
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.feeds, self.int_ranges, self.contrib = {}, {}, 0
        self.one_cuda_group, self.reference = True, "ort"
        self.input_values = {}  # scalar inputs the CUDA checks fix with --input-value
        self.int4_matmuls = None  # MatMuls the CPU compile must keep at 4 bits, when checked

    def weight(self, name, shape, scale=None):
        scale = scale if scale is not None else 1 / np.sqrt(shape[0])
        self.inits.append(numpy_helper.from_array(self.rng.normal(0, scale, shape).astype(np.float32), name))
        return name

    def gamma(self, name):
        self.inits.append(numpy_helper.from_array(self.rng.uniform(0.8, 1.2, H).astype(np.float32), name))
        return name

    def input(self, name, shape, dtype=F32, values=None, int_range=None):
        declared = shape if not self.dynamic else ["batch", "seq"] + shape[2:]
        self.inputs.append(helper.make_tensor_value_info(name, dtype, declared))
        if values is None:
            values = self.rng.normal(0, 1, shape).astype(np.float32)
        self.feeds[name] = values
        if int_range is not None:
            self.int_ranges[name] = int_range
        return name

    def output(self, name):
        self.outputs.append(helper.make_tensor_value_info(name, F32, None))

    def node(self, op, inputs, outputs, name, domain="", **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, domain=domain, **attrs))
        self.contrib += self.expanded_at_load(op, domain)
        return outputs[0]

    def expanded_at_load(self, op, domain):
        # ai.onnx's SimplifiedLayerNormalization is ONNX Runtime's too, and expanded as well.
        return domain == MS or op == "SimplifiedLayerNormalization"

    def opset_imports(self):
        return [helper.make_opsetid("", self.opset), helper.make_opsetid(MS, 1)]

    def manifest_extra(self):
        return {}

    def save(self, out_dir, manifest, expected=None):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, opset_imports=self.opset_imports())
        model.ir_version = self.IR_VERSION
        onnx.save(model, os.path.join(out_dir, self.name + ".onnx"))
        for sub, arrays in (("inputs", self.feeds), ("expected", expected or {})):
            if arrays:
                os.makedirs(os.path.join(out_dir, self.name, sub), exist_ok=True)
            for k, v in arrays.items():
                np.save(os.path.join(out_dir, self.name, sub, k + ".npy"), v)
        manifest.append({
            "name": self.name,
            "inputs": {k: {"shape": list(v.shape), "dtype": str(v.dtype),
                           "int_range": self.int_ranges.get(k)} for k, v in self.feeds.items()},
            "reference": self.reference if not expected else "numpy",
            "contrib_nodes": self.contrib,
            "one_cuda_group": self.one_cuda_group,
            "input_values": self.input_values,
            **({"int4_matmuls": self.int4_matmuls} if self.int4_matmuls is not None else {}),
            **self.manifest_extra(),
        })


def mask_2d():
    """0/1 rows: a full row, and one with padding at the end and a hole in the middle."""
    m = np.ones((B, S), np.int32)
    m[1, S - 3:] = 0
    m[1, 2] = 0
    return m


# ---- single ops ----

def activations(out, manifest):
    m = Model("gelu")
    m.node("Gelu", [m.input("x", [B, S, H])], ["y"], "Gelu_0", MS)
    m.output("y")
    m.save(out, manifest)

    m = Model("bias_gelu")  # MatMul -> BiasGelu, as the optimizer fuses Add + Gelu
    h = m.node("MatMul", [m.input("x", [B, S, H]), m.weight("w", [H, 4 * H])], ["h"], "MatMul_0")
    m.node("BiasGelu", [h, m.weight("b", [4 * H], 0.1)], ["y"], "BiasGelu_0", MS)
    m.output("y")
    m.save(out, manifest)

    for opset in (13, 20):  # the tanh formula before opset 20, ai.onnx Gelu(tanh) from 20
        m = Model(f"fast_gelu_opset{opset}", opset)
        y = m.node("FastGelu", [m.input("x", [B, S, H]), m.weight("b", [H], 0.1)], ["y"], "FastGelu_0", MS)
        m.node("FastGelu", [y], ["z"], "FastGelu_1", MS)
        m.output("y")
        m.output("z")
        m.save(out, manifest)


def skip_layer_norm(out, manifest):
    for opset in (13, 17):  # decomposed before 17, LayerNormalization from 17
        m = Model(f"skip_layer_norm_opset{opset}", opset)
        m.node("SkipLayerNormalization",
               [m.input("x", [B, S, H]), m.input("skip", [B, S, H]), m.gamma("g"), m.weight("beta", [H], 0.1),
                m.weight("bias", [H], 0.1)],
               ["y", "", "", "sum"], "SkipLayerNorm_0", MS, epsilon=1e-5)
        m.output("y")
        m.output("sum")
        m.save(out, manifest)

    # No beta, no bias, a [S, H] skip broadcast over the batch, and the mean / inv_std_var
    # outputs (the CPU computes those: CUDA's LayerNormalization writes no statistics).
    m = Model("skip_layer_norm_stats")
    m.node("SkipLayerNormalization", [m.input("x", [B, S, H]), m.input("skip", [S, H]), m.gamma("g")],
           ["y", "mean", "inv_std"], "SkipLayerNorm_0", MS)
    for o in ("y", "mean", "inv_std"):
        m.output(o)
    m.one_cuda_group = False
    m.save(out, manifest)


def embed_layer_norm(out, manifest):
    vocab, max_pos = 50, 16
    m = Model("embed_layer_norm")
    ids = m.input("input_ids", [B, S], I32, m.rng.integers(0, vocab, (B, S)).astype(np.int32), [0, vocab - 1])
    seg = m.input("segment_ids", [B, S], I32, m.rng.integers(0, 2, (B, S)).astype(np.int32), [0, 1])
    mask = m.input("attention_mask", [B, S], I32, mask_2d(), [0, 1])
    m.node("EmbedLayerNormalization",
           [ids, seg, m.weight("word", [vocab, H], 1.0), m.weight("pos", [max_pos, H], 0.5),
            m.weight("seg", [2, H], 0.5), m.gamma("g"), m.weight("beta", [H], 0.1), mask],
           ["y", "mask_index", "embedding_sum"], "EmbedLayerNorm_0", MS, epsilon=1e-12)
    # mask_index is a 1-D int32 vector: shape arithmetic, which stays on the CPU.
    m.one_cuda_group = False
    for o in ("y", "embedding_sum"):
        m.output(o)
    m.outputs.append(helper.make_tensor_value_info("mask_index", I32, None))
    m.save(out, manifest)

    # No segment, explicit position_ids [1, S], mask_index named but unread (ONNX Runtime's shape
    # inference wants the output).
    m = Model("embed_layer_norm_positions")
    ids = m.input("input_ids", [B, S], I32, m.rng.integers(0, vocab, (B, S)).astype(np.int32), [0, vocab - 1])
    pos = m.input("position_ids", [1, S], I32, np.arange(S, 0, -1, dtype=np.int32)[None] - 1, [0, S - 1])
    m.node("EmbedLayerNormalization",
           [ids, "", m.weight("word", [vocab, H], 1.0), m.weight("pos", [max_pos, H], 0.5), "",
            m.gamma("g"), m.weight("beta", [H], 0.1), "", pos], ["y", "mask_index"], "EmbedLayerNorm_0", MS)
    m.output("y")
    m.save(out, manifest)


def attention(out, manifest):
    def qkv(m, sizes=(H, H, H), bias=True):
        w = m.weight("qkv_weight", [H, sum(sizes)])
        return [m.input("x", [B, S, H]), w, m.weight("qkv_bias", [sum(sizes)], 0.1) if bias else ""]

    m = Model("attention_mask2d")
    m.node("Attention", qkv(m) + [m.input("mask", [B, S], I32, mask_2d(), [0, 1])], ["y"], "Attention_0", MS,
           num_heads=N)
    m.output("y")
    m.save(out, manifest)

    m = Model("attention_mask1d")  # key lengths [B]
    m.node("Attention", qkv(m) + [m.input("mask", [B], I32, np.array([S, S - 3], np.int32), [1, S])], ["y"],
           "Attention_0", MS, num_heads=N)
    m.output("y")
    m.save(out, manifest)

    m = Model("attention_mask3d_opset11", 11)  # [B, S, T], values 0..2 (> 0 attends)
    mask = m.rng.integers(0, 3, (B, S, S)).astype(np.int32)
    m.node("Attention", qkv(m) + [m.input("mask", [B, S, S], I32, mask, [0, 2])], ["y"], "Attention_0", MS,
           num_heads=N)
    m.output("y")
    m.save(out, manifest)

    m = Model("attention_causal")  # unidirectional plus padding, custom mask_filter_value
    m.node("Attention", qkv(m) + [m.input("mask", [B, S], I32, mask_2d(), [0, 1])], ["y"], "Attention_0", MS,
           num_heads=N, unidirectional=1, mask_filter_value=-1000.0)
    m.output("y")
    m.save(out, manifest)

    m = Model("attention_sizes")  # qkv_hidden_sizes with a wider V, custom scale, no mask
    m.node("Attention", qkv(m, (H, H, 2 * H)), ["y"], "Attention_0", MS, num_heads=4,
           qkv_hidden_sizes=[H, H, 2 * H], scale=0.3)
    m.output("y")
    m.save(out, manifest)

    # No bias: ONNX Runtime 1.30's CPU kernel crashes on it, numpy is the reference.
    m = Model("attention_no_bias")
    m.node("Attention", qkv(m, bias=False), ["y"], "Attention_0", MS, num_heads=N)
    m.output("y")
    q, k, v = np.split(m.feeds["x"] @ numpy_helper.to_array(m.inits[0]), 3, axis=-1)
    m.save(out, manifest, {"y": attention_ref(q, k, v, N, 0.0).astype(np.float32)})

    m = Model("attention_bias_present")  # attention_bias [1, N, S, S] and the present output
    inputs = qkv(m) + ["", "", m.input("attention_bias", [1, N, S, S])]
    m.node("Attention", inputs, ["y", "present"], "Attention_0", MS, num_heads=N)
    m.output("y")
    m.output("present")
    m.save(out, manifest)

    # A [B, 1, M, M] (Megatron) mask: ONNX Runtime's CPU kernel refuses it, numpy is the reference.
    m = Model("attention_mask4d")
    big = S + 2
    mask4 = (m.rng.uniform(0, 1, (B, 1, big, big)) > 0.3).astype(np.int32)
    ins = qkv(m) + [m.input("mask", [B, 1, big, big], I32, mask4, [0, 1])]
    m.node("Attention", ins, ["y"], "Attention_0", MS, num_heads=N)
    m.output("y")
    w = numpy_helper.to_array(m.inits[0]); b = numpy_helper.to_array(m.inits[1])
    q, k, v = np.split(m.feeds["x"] @ w + b, 3, axis=-1)
    bias = np.where(mask4[:, :, :S, :S] > 0, 0.0, -10000.0)
    m.save(out, manifest, {"y": attention_ref(q, k, v, N, bias).astype(np.float32)})


def attention_ref(q, k, v, heads, bias, scale=None):
    def split(t):
        return t.reshape(t.shape[0], t.shape[1], heads, -1).transpose(0, 2, 1, 3)
    q, k, v = split(q.astype(np.float64)), split(k.astype(np.float64)), split(v.astype(np.float64))
    s = q @ k.transpose(0, 1, 3, 2) * (scale or 1 / np.sqrt(q.shape[-1])) + bias
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ v).transpose(0, 2, 1, 3)
    return o.reshape(o.shape[0], o.shape[1], -1)


def multi_head_attention(out, manifest):
    def project(m, x, name):
        return m.node("MatMul", [x, m.weight(name, [H, H])], [name + "_out"], "MatMul_" + name)

    m = Model("mha_self")  # Q, K, V projections + one bias, 2-D key_padding_mask
    x = m.input("x", [B, S, H])
    m.node("MultiHeadAttention",
           [project(m, x, "q"), project(m, x, "k"), project(m, x, "v"), m.weight("bias", [3 * H], 0.1),
            m.input("mask", [B, S], I32, mask_2d(), [0, 1])], ["y"], "MultiHeadAttention_0", MS, num_heads=N)
    m.output("y")
    m.save(out, manifest)

    m = Model("mha_cross")  # a longer key/value sequence, 1-D key lengths, present outputs
    kv_len = S + 4
    mem = m.input("memory", [B, kv_len, H])
    q = project(m, m.input("x", [B, S, H]), "q")
    m.node("MultiHeadAttention",
           [q, project(m, mem, "k"), project(m, mem, "v"), "",
            m.input("mask", [B], I32, np.array([kv_len, 5], np.int32), [1, kv_len])],
           ["y", "present_key", "present_value"], "MultiHeadAttention_0", MS, num_heads=N)
    for o in ("y", "present_key", "present_value"):
        m.output(o)
    m.save(out, manifest)

    m = Model("mha_split_heads")  # key and value already [B, N, T, head], causal, scale
    x = m.input("x", [B, S, H])
    heads = []
    for n in ("k", "v"):
        r = m.node("Reshape", [project(m, x, n), n + "_shape"], [n + "_heads"], "Reshape_" + n)
        m.inits.append(numpy_helper.from_array(np.array([B, S, N, H // N], np.int64), n + "_shape"))
        heads.append(m.node("Transpose", [r], [n + "_bnsh"], "Transpose_" + n, perm=[0, 2, 1, 3]))
    m.node("MultiHeadAttention", [project(m, x, "q")] + heads, ["y"], "MultiHeadAttention_0", MS,
           num_heads=N, unidirectional=1, scale=0.25)
    m.output("y")
    m.save(out, manifest)


def bert_like(out, manifest, name, opset, vocab=60, ffn=4 * H, layers=2, dynamic=False):
    m = Model(name, opset, seed=7, dynamic=dynamic)
    ids = m.input("input_ids", [B, S], I32, m.rng.integers(0, vocab, (B, S)).astype(np.int32), [0, vocab - 1])
    seg = m.input("segment_ids", [B, S], I32, (np.arange(S) >= S // 2).astype(np.int32)[None].repeat(B, 0),
                  [0, 1])
    mask = m.input("attention_mask", [B, S], I32, mask_2d(), [0, 1])
    h, mask_index = m.node("EmbedLayerNormalization",
                           [ids, seg, m.weight("word_embeddings", [vocab, H], 1.0),
                            m.weight("position_embeddings", [32, H], 0.5), m.weight("token_type_embeddings", [2, H], 0.5),
                            m.gamma("emb_ln_g"), m.weight("emb_ln_b", [H], 0.1), mask],
                           ["embeddings", "mask_index"], "EmbedLayerNorm_0", MS, epsilon=1e-12), "mask_index"
    for l in range(layers):
        p = f"layer{l}."
        a = m.node("Attention", [h, m.weight(p + "qkv_w", [H, 3 * H]), m.weight(p + "qkv_b", [3 * H], 0.1),
                                 mask_index], [p + "attention"], f"Attention_{l}", MS, num_heads=N)
        a = m.node("MatMul", [a, m.weight(p + "out_w", [H, H])], [p + "attention_out"], f"MatMul_{3 * l}")
        h1 = m.node("SkipLayerNormalization", [a, h, m.gamma(p + "ln1_g"), m.weight(p + "ln1_b", [H], 0.1),
                                               m.weight(p + "out_b", [H], 0.1)],
                    [p + "ln1"], f"SkipLayerNorm_{2 * l}", MS, epsilon=1e-12)
        f = m.node("MatMul", [h1, m.weight(p + "ffn1_w", [H, ffn])], [p + "ffn1"], f"MatMul_{3 * l + 1}")
        act = "BiasGelu" if l % 2 == 0 else "FastGelu"
        f = m.node(act, [f, m.weight(p + "ffn1_b", [ffn], 0.1)], [p + "gelu"], f"{act}_{l}", MS)
        f = m.node("MatMul", [f, m.weight(p + "ffn2_w", [ffn, H])], [p + "ffn2"], f"MatMul_{3 * l + 2}")
        h = m.node("SkipLayerNormalization", [f, h1, m.gamma(p + "ln2_g"), m.weight(p + "ln2_b", [H], 0.1),
                                              m.weight(p + "ffn2_b", [H], 0.1)],
                   [p + "output"], f"SkipLayerNorm_{2 * l + 1}", MS, epsilon=1e-12)
    m.node("Identity", [h], ["last_hidden_state"], "Identity_out")
    m.output("last_hidden_state")
    m.save(out, manifest)


def simplified_layer_norm(out, manifest):
    """ONNX Runtime's RMSNorm ops as GenAI's Llama exports write them: SimplifiedLayerNormalization
    in the ai.onnx domain, SkipSimplifiedLayerNormalization (com.microsoft) with the residual sum
    as a second result, with and without a bias."""
    m = Model("simplified_layer_norm")
    m.node("SimplifiedLayerNormalization", [m.input("x", [B, S, H]), m.gamma("g")], ["y"],
           "SimplifiedLayerNorm_0", axis=-1, epsilon=1e-6, stash_type=1)
    m.output("y")
    m.save(out, manifest)

    for bias in (False, True):
        m = Model("skip_simplified_layer_norm" + ("_bias" if bias else ""))
        inputs = [m.input("x", [B, S, H]), m.input("skip", [B, S, H]), m.gamma("g")]
        if bias:
            inputs.append(m.weight("bias", [H], 0.1))
        y = m.node("SkipSimplifiedLayerNormalization", inputs, ["y", "", "", "sum"],
                   "SkipSimplifiedLayerNorm_0", MS, epsilon=1e-6)
        # The next layer's form: the sum feeds the next residual, y a projection.
        m.node("SimplifiedLayerNormalization", [m.node("MatMul", [y, m.weight("w", [H, H])], ["h"], "MatMul_0"),
                                                m.gamma("g2")], ["z"], "SimplifiedLayerNorm_1", epsilon=1e-6)
        for o in ("y", "sum", "z"):
            m.output(o)
        m.save(out, manifest)


def rotary_embedding(out, manifest):
    """com.microsoft RotaryEmbedding as GenAI's exports write it (before GroupQueryAttention):
    [B, N, S, D] with [B, S] position ids; [B, S, hidden] with num_heads, interleaved pairs and
    an offset position; a partial rotary dimension."""
    D, positions = 8, 32

    def caches(m, width):
        inv = 1.0 / 10000 ** (np.arange(width, dtype=np.float64) / width)
        ang = np.arange(positions)[:, None] * inv[None, :]
        m.inits += [numpy_helper.from_array(np.cos(ang).astype(np.float32), "cos"),
                    numpy_helper.from_array(np.sin(ang).astype(np.float32), "sin")]
        return ["cos", "sin"]

    cases = (("rotary_bnsd", [B, N, S, D], dict(), D // 2, [B, S]),
             ("rotary_bsh_interleaved_offset", [B, S, N * D], dict(num_heads=N, interleaved=1), D // 2, [1]),
             ("rotary_partial", [B, N, S, D], dict(rotary_embedding_dim=D // 2, num_heads=N), D // 4, [B, S]))
    for name, shape, attrs, width, pos_shape in cases:
        m = Model(name)
        values = m.rng.integers(0, positions - S, pos_shape).astype(np.int64)
        if len(pos_shape) == 2:
            values = np.sort(m.rng.integers(0, positions, pos_shape), axis=1).astype(np.int64)
        pos = m.input("position_ids", pos_shape, TensorProto.INT64, values)
        m.node("RotaryEmbedding", [m.input("x", shape), pos] + caches(m, width), ["y"], "RotaryEmbedding_0",
               MS, **attrs)
        m.output("y")
        m.save(out, manifest)


def quantize_4bit(w, block, rng, zero_points):
    """MatMulNBits' layout of w [K, N]: per output column, blocks of `block` values along K, each
    with a scale (and a zero point): B uint8 [N, blocks, block / 2], low nibble first."""
    K, N = w.shape
    blocks = -(-K // block)
    padded = np.zeros([blocks * block, N], np.float32)
    padded[:K] = w
    cols = padded.T.reshape(N, blocks, block)
    if zero_points:
        lo, hi = cols.min(-1), cols.max(-1)
        scale = np.maximum(hi - lo, 1e-6) / 15
        zp = np.clip(np.round(-lo / scale), 0, 15).astype(np.uint8)
    else:
        scale = np.maximum(np.abs(cols).max(-1), 1e-6) / 7
        zp = np.full([N, blocks], 8, np.uint8)
    q = np.clip(np.round(cols / scale[..., None]) + zp[..., None], 0, 15).astype(np.uint8)
    packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
    zp_cols = np.concatenate([zp, np.zeros([N, blocks % 2], np.uint8)], axis=1)
    zp_packed = (zp_cols[:, 0::2] | (zp_cols[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
    return packed, scale.astype(np.float32).reshape(-1), zp_packed


def matmul_nbits(out, manifest):
    """com.microsoft MatMulNBits (4-bit weight-only quantization, GenAI's int4 models): symmetric
    (zero point 8) with a bias, and with packed zero points and a K that is not a multiple of the
    block size; and weights of 128 KiB and more, past what graph-level folding takes (64 KiB):
    their unpacking (uint8 Mod/Div, which CUDA kernels refuse) must still fold inside the CUDA
    group, and the CPU compile must keep them at 4 bits (MatMulInt4), for many rows (a GEMM) and
    for one (a decode step's dot products), with packed zero points over an odd block count and
    zero points in the forms graph-level folding leaves them in, and for a weight larger as
    floats than folding took before weight preprocessing was exempt (64 MiB)."""
    # (name, K, N, block, zero points, bias, rows (B, S) of x, MatMuls kept at 4 bits on the CPU)
    for name, K, N, block, zero_points, bias, rows, int4 in (
            ("matmul_nbits", 64, 48, 32, False, True, (B, S), 0),  # folded at graph level
            ("matmul_nbits_zero_points", 40, 24, 16, True, False, (B, S), 0),  # K % block != 0
            ("matmul_nbits_large", 256, 1024, 32, False, False, (B, S), 1),
            ("matmul_nbits_zero_points_large", 256, 384, 64, True, True, (B, S), 1),
            ("matmul_nbits_decode_row", 384, 512, 128, True, False, (1, 1), 1),
            # Zero points in whatever form graph-level folding (64 KiB at most) leaves them: as
            # floats (above), unpacked bytes (512 x 64 blocks), two half-byte tensors (33024 x 2
            # blocks: each nibble tensor folds, their concatenation does not).
            ("matmul_nbits_many_blocks", 2048, 512, 32, True, False, (1, 1), 1),
            ("matmul_nbits_wide", 64, 33024, 32, True, False, (1, 1), 1),
            # A weight of 68 MB as floats, past the 64 MiB any folding took before: it must
            # still be kept at 4 bits on the CPU (not dequantized in every run) and fold into
            # the CUDA group, as a 7B model's layers (4096 x 11008) must.
            ("matmul_nbits_past_fold_limit", 4096, 4160, 32, True, False, (1, 1), 1)):
        m = Model(name)
        w = m.rng.normal(0, 0.2, [K, N]).astype(np.float32)
        packed, scales, zps = quantize_4bit(w, block, m.rng, zero_points)
        m.inits += [numpy_helper.from_array(packed, "w_q"), numpy_helper.from_array(scales, "w_scales")]
        inputs = [m.input("x", [*rows, K]), "w_q", "w_scales"]
        if zero_points:
            m.inits.append(numpy_helper.from_array(zps, "w_zero_points"))
            inputs.append("w_zero_points")
        if bias:
            inputs += [""] * (5 - len(inputs)) + [m.weight("bias", [N], 0.1)]
        m.node("MatMulNBits", inputs, ["y"], "MatMulNBits_0", MS, K=K, N=N, bits=4, block_size=block)
        m.output("y")
        m.int4_matmuls = int4
        m.save(out, manifest)


def group_query_attention(out, manifest):
    """com.microsoft GroupQueryAttention as GenAI's decoders write it: a prefill without past; a
    decode step with a past cache and rotary embedding; packed QKV over a past buffer longer than
    its valid rows; a fixed-size cache (seqlens_k says how many rows are valid); and batches of
    two sequences, each with its own valid length (a prefill, a decode step, a fixed-size
    cache)."""
    KV, D, positions = 1, 16, 32  # ONNX Runtime's rotary wants heads of a multiple of 16
    inv = 1.0 / 10000 ** (np.arange(D // 2, dtype=np.float64) / (D // 2))
    ang = np.arange(positions)[:, None] * inv[None, :]
    # (name, new rows, past buffer rows, valid past rows of each sequence, rotary, packed QKV,
    # fixed size): a fixed size cache is a decode step over a buffer of the maximum context,
    # total_sequence_length that maximum and seqlens_k the valid lengths, as a graph compiled
    # once for every step sees.
    cases = (("gqa_prefill", S, 0, (0,), False, False, False),
             ("gqa_decode_rotary", 1, S - 1, (S - 1,), True, False, False),
             ("gqa_packed_past_buffer", 3, 12, (5,), False, True, False),
             ("gqa_fixed_size_cache", 1, 16, (5,), True, False, True),
             ("gqa_batch2_prefill", S, 0, (0, 0), True, False, False),
             ("gqa_batch2_decode_rotary", 1, 12, (5, 11), True, False, False),
             ("gqa_batch2_fixed_size_cache", 1, 16, (3, 9), True, False, True))
    for name, q_len, buffer, valid, rotary, packed, fixed in cases:
        m = Model(name)
        b = len(valid)
        total = buffer if fixed else max(valid) + q_len
        if packed:
            inputs = [m.input("qkv", [b, q_len, (N + 2 * KV) * D]), "", ""]
        else:
            inputs = [m.input("q", [b, q_len, N * D]), m.input("k", [b, q_len, KV * D]),
                      m.input("v", [b, q_len, KV * D])]
        if buffer:
            inputs += [m.input("past_key", [b, KV, buffer, D]), m.input("past_value", [b, KV, buffer, D])]
        else:
            inputs += ["", ""]
        seqlens = np.array([v + q_len - 1 for v in valid], np.int32)
        inputs += [m.input("seqlens_k", [b], TensorProto.INT32, seqlens),
                   m.input("total_sequence_length", [], TensorProto.INT32, np.array(total, np.int32))]
        attrs = dict(num_heads=N, kv_num_heads=KV)
        if rotary:
            m.inits += [numpy_helper.from_array(np.cos(ang).astype(np.float32), "cos"),
                        numpy_helper.from_array(np.sin(ang).astype(np.float32), "sin")]
            inputs += ["cos", "sin"]
            attrs["do_rotary"] = 1
        m.node("GroupQueryAttention", inputs, ["y", "present_key", "present_value"], "GroupQueryAttention_0",
               MS, **attrs)
        for o in ("y", "present_key", "present_value"):
            m.output(o)
        # total_sequence_length decides the present caches' length: CUDA takes it once
        # --input-value fixes it.
        m.input_values = {"total_sequence_length": total}
        m.save(out, manifest)


def main(out):
    os.makedirs(out, exist_ok=True)
    manifest = []
    activations(out, manifest)
    skip_layer_norm(out, manifest)
    embed_layer_norm(out, manifest)
    simplified_layer_norm(out, manifest)
    rotary_embedding(out, manifest)
    matmul_nbits(out, manifest)
    group_query_attention(out, manifest)
    attention(out, manifest)
    multi_head_attention(out, manifest)
    bert_like(out, manifest, "bert_like", 17)
    bert_like(out, manifest, "bert_like_opset11", 11)
    bert_like(out, manifest, "bert_like_opset20", 20)
    # Batch and sequence exported dynamic: the CPU compile keeps them so (the mask and position
    # arithmetic runs at run time); the CUDA checks fix them with --input-shape.
    bert_like(out, manifest, "bert_like_dynamic", 17, dynamic=True)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"{len(manifest)} models in {out}")


if __name__ == "__main__":
    main(sys.argv[1])
