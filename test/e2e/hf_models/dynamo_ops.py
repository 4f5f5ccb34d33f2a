"""Subgraphs as PyTorch's dynamo exporter (opset 18, torchlib) writes them: symbolic sizes, expand,
Linear, RMSNorm/LayerNorm, GELUs, rotary embeddings, repeat_kv, the attention mask and SDPA."""
import math

import numpy as np
from onnx import TensorProto

from .writer import F32_LOWEST, INT64_MAX, is_static


def dy_size(g, x, i):
    """A SymInt of a graph input: Shape(start=i, end=i+1), Squeeze to a scalar."""
    return g.op("Squeeze", [g.op("Shape", [x], start=i, end=i + 1)], name="sym_size_int")


def dy_list(g, dims):
    """A SymInt list: constant runs as one initializer, each symbol as Reshape(s, [-1])."""
    if is_static(dims):
        return g.i64(dims)
    parts, run = [], []
    for d in dims:
        if isinstance(d, int):
            run.append(d)
            continue
        if run:
            parts.append(g.i64(run))
            run = []
        parts.append(g.op("Reshape", [d, g.i64([-1])], allowzero=0))
    if run:
        parts.append(g.i64(run))
    return g.op("Concat", parts, axis=0)


def dy_expand(g, x, dims, name="expand"):
    """aten.expand: -1 means "keep", which Expand's broadcasting spells 1: Abs of the size."""
    if is_static(dims):
        return g.op("Expand", [x, g.i64([abs(d) for d in dims])], name=name)
    return g.op("Expand", [x, g.op("Abs", [dy_list(g, dims)])], name=name)


def dy_linear(g, x, w, b=None, name="linear", path=None):
    """aten.linear on a 3-D input: MatMul over the folded W^T, then Add(mm, bias)."""
    mm = g.op("MatMul", [x, g.folded_weight(w.T, path)], name=None if b is not None else name)
    return g.op("Add", [mm, b], name=name) if b is not None else mm


def dy_rmsnorm(g, x, weight, eps):
    p = g.op("Pow", [x, g.f32(2.0)], name="pow")
    mean = g.op("ReduceMean", [p, g.i64([-1])], keepdims=1, noop_with_empty_axes=0, name="mean")
    r = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [mean, g.f32(eps)], name="add")])], name="rsqrt")
    return g.op("Mul", [weight, g.op("Mul", [x, r], name="mul")], name="mul")


def dy_rmsnorm_gemma(g, x, weight_plus_one, eps):
    """GemmaRMSNorm: x * rsqrt(mean(x^2) + eps) * (1 + weight) in float32 (the casts are no-ops
    in an fp32 export). The exporter's constant folder turns (1 + weight), an Add over an
    initializer and a scalar, into one initializer, so the pattern differs from Llama's only in
    the last Mul's operand order; `weight_plus_one` is that folded initializer."""
    p = g.op("Pow", [x, g.f32(2.0)], name="pow")
    mean = g.op("ReduceMean", [p, g.i64([-1])], keepdims=1, noop_with_empty_axes=0, name="mean")
    r = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [mean, g.f32(eps)], name="add")])], name="rsqrt")
    return g.op("Mul", [g.op("Mul", [x, r], name="mul"), weight_plus_one], name="mul")


def dy_layernorm(g, x, weight, bias, eps):
    return g.op("LayerNormalization", [x, weight, bias], axis=-1, epsilon=eps, name="layer_norm")


def dy_gelu_op(g, x, approximate):
    """aten.gelu from opset 20 on: torchlib writes the opset-20 Gelu op."""
    return g.op("Gelu", [x], approximate=approximate, name="gelu")


def dy_gelu_erf(g, x):
    """aten.gelu (approximate="none") in PyTorch's own torchlib (torch.onnx's _torchlib ops/nn.py,
    which takes precedence over onnxscript's below opset 20): x * (0.5 * (erf(x / sqrt 2) + 1)).
    bert_dynamo_sdpa writes onnxscript's older order, 0.5 * (x * (erf + 1)); both reach ortc.
    From opset 20 on, the Gelu op."""
    if g.opset >= 20:
        return dy_gelu_op(g, x, "none")
    e = g.op("Erf", [g.op("Div", [x, g.f32(1.4142135623730951)])])
    inner = g.op("Mul", [g.f32(0.5), g.op("Add", [e, g.f32(1.0)])])
    return g.op("Mul", [x, inner], name="gelu")


def dy_gelu_tanh(g, x):
    """aten.gelu(approximate="tanh") (gelu_pytorch_tanh) in the same torchlib: Pow(x, 3) with an
    int64 exponent (onnxscript turns the Python 3 of op.Pow(self, 3) into INT64, Pow's exponent
    type being free), 0.044715 * x^3, + x, * sqrt(2 / pi) (Sqrt(Div(2, pi)) folded to one float32
    scalar), Tanh, + 1, * 0.5, * x. From opset 20 on, the Gelu op."""
    if g.opset >= 20:
        return dy_gelu_op(g, x, "tanh")
    cubed = g.op("Pow", [x, g.i64(3)])
    inner = g.op("Add", [x, g.op("Mul", [g.f32(0.044715), cubed])])
    inner = g.op("Mul", [g.f32(np.sqrt(np.float32(2.0) / np.float32(math.pi))), inner])
    inner = g.op("Add", [g.op("Tanh", [inner]), g.f32(1.0)])
    return g.op("Mul", [x, g.op("Mul", [g.f32(0.5), inner])], name="gelu")


def dy_gelu_new(g, x):
    """gelu_new (NewGELUActivation, Phi-2) is Python arithmetic, traced op by op: x * 0.5,
    pow(x, 3.0) (a float exponent), * 0.044715, x +, * sqrt(2 / pi), Tanh, + 1.0, then the two
    halves multiplied."""
    half = g.op("Mul", [x, g.f32(0.5)], name="mul")
    cube = g.op("Pow", [x, g.f32(3.0)], name="pow")
    inner = g.op("Add", [x, g.op("Mul", [cube, g.f32(0.044715)], name="mul")], name="add")
    t = g.op("Tanh", [g.op("Mul", [inner, g.f32(math.sqrt(2.0 / math.pi))], name="mul")], name="tanh")
    return g.op("Mul", [half, g.op("Add", [t, g.f32(1.0)], name="add")], name="mul")


def dy_rotary_tables(g, position_ids, batch, rot_dim, theta, expand_batch):
    """The rotary embedding's cos/sin [B or 1, 1, S, rot_dim] from position ids, as
    LlamaRotaryEmbedding (and the Gemma, Qwen3, Phi-3, GPT-NeoX copies of it) computes them:
    inv_freq[None, :, None].expand(B, -1, 1) @ position_ids[:, None, :], transposed, duplicated
    along the last axis, Cos and Sin, unsqueezed for the heads. Positions from cache_position
    have batch 1 and the expand folds to a constant. `rot_dim` below head_dim is partial rotary
    (Phi-3's partial_rotary_factor, GPT-NeoX's rotary_pct): inv_freq covers rot_dim only."""
    inv_freq = (1.0 / (theta ** (np.arange(0, rot_dim, 2, dtype=np.int64).astype(np.float32) / rot_dim)))
    inv = g.const(inv_freq.astype(np.float32)[None, :, None], np.float32)
    if expand_batch:
        inv = dy_expand(g, inv, [batch, -1, 1])
    pos = g.op("Cast", [g.op("Unsqueeze", [position_ids, g.i64([1])], name="unsqueeze")], to=TensorProto.FLOAT,
               name="_to_copy")
    freqs = g.op("Transpose", [g.op("MatMul", [inv, pos], name="matmul")], perm=[0, 2, 1], name="transpose")
    emb = g.op("Concat", [freqs, freqs], axis=-1, name="cat")
    cos = g.op("Unsqueeze", [g.op("Cos", [emb], name="cos"), g.i64([1])], name="unsqueeze")
    sin = g.op("Unsqueeze", [g.op("Sin", [emb], name="sin"), g.i64([1])], name="unsqueeze")
    return cos, sin


def dy_rotate(g, x, cos, sin, rot_dim, head_dim):
    """apply_rotary_pos_emb on one of q, k [B, heads, S, head_dim]: x * cos + cat(-x2, x1) * sin
    with the halves as Slice on axis 3. With partial rotary (rot_dim < head_dim, the Phi-3 and
    GPT-NeoX form) x[..., :rot_dim] is rotated, x[..., rot_dim:] passed through and the two
    concatenated back."""
    if rot_dim < head_dim:
        x_rot = g.op("Slice", [x, g.i64([0]), g.i64([rot_dim]), g.i64([3]), g.i64([1])], name="slice")
        x_pass = g.op("Slice", [x, g.i64([rot_dim]), g.i64([INT64_MAX]), g.i64([3]), g.i64([1])], name="slice")
    else:
        x_rot, x_pass = x, None
    a = g.op("Mul", [x_rot, cos], name="mul")
    x1 = g.op("Slice", [x_rot, g.i64([0]), g.i64([rot_dim // 2]), g.i64([3]), g.i64([1])], name="slice")
    x2 = g.op("Slice", [x_rot, g.i64([rot_dim // 2]), g.i64([INT64_MAX]), g.i64([3]), g.i64([1])], name="slice")
    r = g.op("Concat", [g.op("Neg", [x2], name="neg"), x1], axis=-1, name="cat")
    out = g.op("Add", [a, g.op("Mul", [r, sin], name="mul")], name="add")
    if x_pass is None:
        return out
    return g.op("Concat", [out, x_pass], axis=-1, name="cat")


def dy_repeat_kv(g, x, batch, seq, kv_heads, rep, head_dim):
    """repeat_kv: x[:, :, None].expand(batch, kv_heads, n_rep, seq, d).reshape(batch, heads, seq, d)."""
    if rep == 1:
        return x
    u = g.op("Unsqueeze", [x, g.i64([2])], name="unsqueeze")
    e = dy_expand(g, u, [batch, kv_heads, rep, seq, head_dim])
    return g.op("Reshape", [e, dy_list(g, [batch, kv_heads * rep, seq, head_dim])], allowzero=1, name="_unsafe_view")


def dy_mask(g, mask_in, batch, seq, kind, window=None):
    """transformers 5 sdpa_mask as the dynamo exporter writes it: the mask function (causal
    kv_idx <= q_idx, or bidirectional q_idx >= 0) over Range/Unsqueeze index tensors, and'ed with
    the padding function mask[batch_idx, kv_idx] (GatherND over the two indices broadcast and
    stacked on a last axis), then expand(batch, -1, q_len, kv_len). A static export (ints batch,
    seq) folds all of it but the GatherND into initializers and drops the expand, a no-op there.
    `window` (causal only, dynamic only): create_sliding_window_causal_mask's function,
    and_masks(sliding_window_overlay, causal), i.e. kv_idx > q_idx - window and'ed in before the
    causal comparison, one and_masks nested in the padding one.
    Returns the bool mask and cache_position (None when static)."""
    padding = g.op("Cast", [mask_in], to=TensorProto.BOOL, name="_to_copy")
    if isinstance(batch, int):
        S = seq
        fn = np.tril(np.ones((S, S), bool)) if kind == "causal" else np.ones((S, S), bool)
        first = g.const(fn[None, None], bool)
        index = np.stack(np.broadcast_arrays(np.arange(batch)[:, None, None, None],
                                             np.arange(S)[None, None, None, :]), axis=-1)
        picked = g.op("GatherND", [padding, g.i64(index)], batch_dims=0, name="index")
        return g.op("And", [first, picked], name="bitwise_and"), None
    # cache_position and kv_arange are the same Range(0, seq): the exporter's CSE keeps one
    cache_position = kv_arange = g.op("Range", [g.i64(0), seq, g.i64(1)], name="arange")
    batch_arange = g.op("Range", [g.i64(0), batch, g.i64(1)], name="arange")
    bi = g.op("Unsqueeze", [batch_arange, g.i64([1, 2, 3])], name="unsqueeze")
    qi = g.op("Unsqueeze", [cache_position, g.i64([0, 1, 3])], name="unsqueeze")
    ki = g.op("Unsqueeze", [kv_arange, g.i64([0, 1, 2])], name="unsqueeze")
    if kind == "causal" and window is not None:
        true = g.const(True, bool)
        overlay = g.op("Greater", [ki, g.op("Sub", [qi, g.i64(window)], name="sub")], name="gt")
        inner = g.op("And", [true, overlay], name="bitwise_and")
        fn = g.op("And", [inner, g.op("LessOrEqual", [ki, qi], name="le")], name="bitwise_and")
    elif kind == "causal":
        fn = g.op("LessOrEqual", [ki, qi], name="le")
    else:
        fn = g.op("GreaterOrEqual", [qi, g.i64(0)], name="ge")
    first = g.op("And", [g.const(True, bool), fn], name="bitwise_and")
    shape = dy_list(g, [batch, 1, 1, seq])
    stacked = [g.op("Unsqueeze", [g.op("Expand", [t, shape]), g.i64([-1])]) for t in (bi, ki)]
    index = g.op("Concat", stacked, axis=-1)
    picked = g.op("GatherND", [padding, index], batch_dims=0, name="index")
    mask = g.op("And", [first, picked], name="bitwise_and")
    return dy_expand(g, mask, [batch, -1, seq, seq]), cache_position


def dy_sdpa(g, q, k, v, mask, head_dim):
    """torchlib's scaled_dot_product_attention with a bool mask: the key transposed through a
    [-1, S, D] view, the scale's square root on both operands, Where(mask, 0, lowest) added,
    Softmax, the IsNaN guard. `mask` is a BoolMask shared by the layers. From opset 23 on, one
    Attention op (dy_attention)."""
    if g.opset >= 23:
        return dy_attention(g, q, k, v, mask, head_dim)
    ks = g.op("Shape", [k])
    last = g.op("Slice", [ks, g.i64([-1]), g.i64([INT64_MAX])])
    second = g.op("Slice", [ks, g.i64([-2]), g.i64([-1])])
    first = g.op("Slice", [ks, g.i64([0]), g.i64([-2])])
    k3 = g.op("Reshape", [k, g.op("Concat", [g.i64([-1]), second, last], axis=0)])
    k_t = g.op("Reshape", [g.op("Transpose", [k3], perm=[0, 2, 1]),
                           g.op("Concat", [first, last, second], axis=0)], allowzero=0)
    return dy_sdpa_core(g, q, k_t, v, mask, head_dim)


def dy_sdpa_core(g, q, k_t, v, mask, head_dim):
    root = g.f32(math.sqrt(head_dim ** -0.5))
    qs, ks = g.op("Mul", [q, root]), g.op("Mul", [k_t, root])
    bias = mask.bias(g)
    probs = g.op("Softmax", [g.op("Add", [g.op("MatMul", [qs, ks]), bias])], axis=-1)
    probs = g.op("Where", [g.op("IsNaN", [probs]), g.f32(0.0), probs])
    return g.op("MatMul", [probs, v], name="scaled_dot_product_attention")


def dy_attention(g, q, k, v, mask, head_dim):
    """torchlib's scaled_dot_product_attention from opset 23 on (aten_scaled_dot_product_attention_23):
    Attention(query, key, value, attn_mask) on the 4-D heads, the bool mask itself, the scale
    transformers passes (head_dim^-0.5) as the attribute, four outputs of which only Y is read.
    Key/value heads arrive already repeated (transformers' sdpa path repeats them when a mask is
    given)."""
    outs = g.op("Attention", [q, k, v, mask.value], outs=4, scale=head_dim ** -0.5,
                name="scaled_dot_product_attention")
    return outs[0]


def dy_eager_attention(g, q, k, v, mask, head_dim):
    """transformers' eager_attention_forward (attn_implementation="eager") as the dynamo exporter
    writes it: matmul(q, k.transpose(2, 3)) as a Transpose of the last two axes and a MatMul,
    * scaling after the product, + the float mask (eager_mask: Where(mask, 0, lowest), the
    same BoolMask bias SDPA adds), Softmax (softmax(dtype=float32) and .to(query.dtype) are
    no-op casts in an fp32 export, which the exporter drops), MatMul with v. No IsNaN guard: a
    fully masked row is uniform, not NaN."""
    scores = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2], name="transpose")], name="matmul")
    scores = g.op("Mul", [scores, g.f32(head_dim ** -0.5)], name="mul")
    probs = g.op("Softmax", [g.op("Add", [scores, mask.bias(g)], name="add")], axis=-1, name="softmax")
    return g.op("MatMul", [probs, v], name="matmul")


def dy_attend(g, v, q, k, vv, mask, head_dim):
    """The attention core of variant v: SDPA (torchlib's decomposition or, from opset 23, the
    Attention op) or transformers' eager attention."""
    if v["attn"] == "eager":
        return dy_eager_attention(g, q, k, vv, mask, head_dim)
    return dy_sdpa(g, q, k, vv, mask, head_dim)


class BoolMask:
    """The bool attention mask and its Where(mask, 0, lowest): SDPA converts it in every layer,
    the exporter's CSE keeps the first (placed where layer 0 made it)."""

    def __init__(self, value):
        self.value, self._bias = value, None

    def bias(self, g):
        if self._bias is None:
            self._bias = g.op("Where", [self.value, g.f32(0.0), g.f32(F32_LOWEST)])
        return self._bias
