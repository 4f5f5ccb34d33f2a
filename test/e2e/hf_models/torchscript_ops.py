"""Subgraphs as PyTorch's TorchScript exporter (opset 17) writes them: traced sizes, expand, arange,
Linear, LayerNorm, GELU, transformers 5's attention mask and the SDPA symbolic."""
import math

import numpy as np
from onnx import TensorProto, numpy_helper

from .writer import INT64_MAX, is_static


def ts_size(g, x, i):
    """x.size(i) with a dynamic axis: Shape, then Gather of a scalar index (one Shape per call)."""
    return g.op("Gather", [g.op("Shape", [x]), g.i64(i)], axis=0)


def ts_size_last(g, x):
    """x.size(-1): Shape, Slice [-1:], Squeeze."""
    s = g.op("Shape", [x])
    axes, starts, ends = g.i64([0]), g.i64([-1]), g.i64([INT64_MAX])
    return g.op("Squeeze", [g.op("Slice", [s, starts, ends, axes]), g.i64([0])])


def ts_unsqueeze(g, x, axis):
    return g.op("Unsqueeze", [x, g.i64([axis])])


def ts_list(g, dims):
    """A size list (ints and traced sizes) as one int64 tensor: a Constant when all are known,
    else Concat of Unsqueeze'd sizes and one-element Constants."""
    if is_static(dims):
        return g.i64(dims)
    parts = [ts_unsqueeze(g, d, 0) if isinstance(d, str) else g.i64([d]) for d in dims]
    return g.op("Concat", parts, axis=0)


def ts_expand(g, x, dims):
    """x.expand(*dims): the exporter turns -1 into 1 with ConstantOfShape/Mul/Equal/Where."""
    if is_static(dims):
        size = g.i64(dims)
        ones = g.op("ConstantOfShape", [g.i64([len(dims)])], value=numpy_helper.from_array(np.array([1], np.int64)))
    else:
        size = g.op("Reshape", [ts_list(g, dims), g.i64([-1])], allowzero=0)
        ones = g.op("ConstantOfShape", [g.op("Shape", [size])], value=numpy_helper.from_array(np.array([1], np.int64)))
    neg = g.op("Mul", [ones, g.i64(-1)])
    size = g.op("Where", [g.op("Equal", [size, neg]), ones, size])
    return g.op("Expand", [x, size])


def ts_arange(g, n):
    """torch.arange(n) over a traced size: Range(0, Cast(n), 1)."""
    start = g.i64(0)
    end = g.op("Cast", [n], to=TensorProto.INT64)
    return g.op("Range", [start, end, g.i64(1)])


def ts_linear(g, x, w, b, scope, path=None):
    """nn.Linear on a 3-D input: MatMul over the folded W^T, then Add(bias, mm)."""
    with g.scope(scope):
        mm = g.op("MatMul", [x, g.folded_weight(w.T, path)])
        return g.op("Add", [g.param(f"{b[0]}", b[1]), mm]) if b is not None else mm


def ts_layernorm(g, x, weight, bias, eps, scope):
    """nn.LayerNorm: the opset-17 op, or below opset 17 (opset_version=14, what many export
    scripts still pass) the exporter's decomposition: mean over the last axis, x - mean, the
    mean of its square (Pow 2), Add eps, Sqrt, Div, then * weight + bias."""
    with g.scope(scope):
        if g.opset >= 17:
            return g.op("LayerNormalization", [x, weight, bias], axis=-1, epsilon=eps)
        mean = g.op("ReduceMean", [x], axes=[-1])
        centred = g.op("Sub", [x, mean])
        var = g.op("ReduceMean", [g.op("Pow", [centred, g.f32(2.0)])], axes=[-1])
        normed = g.op("Div", [centred, g.op("Sqrt", [g.op("Add", [var, g.f32(eps)])])])
        return g.op("Add", [g.op("Mul", [normed, weight]), bias])


def ts_gelu_erf(g, x, scope):
    """GELU as the exporter writes it: x * (1 + erf(x / sqrt 2)) * 0.5."""
    with g.scope(scope):
        d = g.op("Div", [x, g.f32(1.4142135381698608)])
        e = g.op("Erf", [d])
        a = g.op("Add", [e, g.f32(1.0)])
        m = g.op("Mul", [x, a])
        return g.op("Mul", [m, g.f32(0.5)])


def ts_gelu_tanh(g, x, scope):
    """gelu_new (GPT-2): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))."""
    with g.scope(scope):
        half = g.op("Mul", [x, g.f32(0.5)])
        cube = g.op("Pow", [x, g.f32(3.0)])
        inner = g.op("Add", [x, g.op("Mul", [cube, g.f32(0.044715)])])
        t = g.op("Tanh", [g.op("Mul", [inner, g.f32(math.sqrt(2.0 / math.pi))])])
        return g.op("Mul", [half, g.op("Add", [t, g.f32(1.0)])])


def ts_mask(g, emb, attention_mask, kind, cache_position=None):
    """transformers 5 sdpa_mask traced (non-vmap expansion): index tensors from Range +
    Unsqueeze, the mask function applied to them, then expand(batch, -1, q_len, kv_len).
    kind: "bidirectional" (q_idx >= 0) or "causal" (kv_idx <= q_idx); attention_mask, when given,
    adds the padding function (mask[batch_idx, kv_idx], advanced indexing) through and_masks."""
    batch = ts_size(g, emb, 0)
    kv_len = ts_size(g, emb, 1)
    if cache_position is None:
        cache_position = ts_arange(g, ts_size(g, emb, 1))
    q = cache_position
    for axis in (0, 1, 3):
        q = ts_unsqueeze(g, q, axis)
    if attention_mask is None:  # a single mask function: no and_masks wrapper (ViT)
        result = g.op("GreaterOrEqual", [q, g.i64(0)])
        return ts_expand(g, result, [batch, -1, ts_size(g, cache_position, 0), kv_len])
    kv = g.op("Add", [ts_arange(g, kv_len), g.i64(0)])  # kv_arange += kv_offset
    padding = g.op("Cast", [attention_mask], to=TensorProto.BOOL)
    b = ts_arange(g, batch)
    for axis in (1, 2, 3):
        b = ts_unsqueeze(g, b, axis)
    for axis in (0, 1, 2):
        kv = ts_unsqueeze(g, kv, axis)
    result = g.op("ConstantOfShape", [g.i64(np.zeros(0, np.int64))],
                  value=numpy_helper.from_array(np.array([True])))
    if kind == "bidirectional":
        first = g.op("GreaterOrEqual", [q, g.i64(0)])
    else:
        first = g.op("LessOrEqual", [kv, q])
    result = g.op("And", [result, g.op("Cast", [first], to=TensorProto.BOOL)])
    # padding_mask[batch_idx, kv_idx]: the index symbolic flattens the leading dims and gathers
    # at batch_idx * size(1) + kv_idx, then restores the index's shape.
    dim1 = g.op("Gather", [g.op("Shape", [padding]), g.i64([1])], axis=0)
    flat = g.op("Flatten", [padding], axis=2)
    index = g.op("Add", [kv, g.op("Mul", [b, dim1])])
    picked = g.op("Gather", [flat, index], axis=0)
    index_shape = g.op("Shape", [index])
    picked = g.op("Reshape", [picked, g.i64([-1])], allowzero=0)
    picked = g.op("Reshape", [picked, g.op("Concat", [index_shape], axis=0)], allowzero=0)
    result = g.op("And", [result, g.op("Cast", [picked], to=TensorProto.BOOL)])
    return ts_expand(g, result, [batch, -1, ts_size(g, cache_position, 0), kv_len])


def ts_sdpa(g, q, k_t, v, mask, head_dim):
    """torch's scaled_dot_product_attention symbolic with a bool mask: the scale's square root
    on both operands, Where(mask, 0, -inf) added, Softmax, the IsNaN guard, MatMul."""
    root = math.sqrt(1.0 / math.sqrt(head_dim))
    qs = g.op("Mul", [q, g.f32(root)])
    ks = g.op("Mul", [k_t, g.f32(root)])
    scores = g.op("MatMul", [qs, ks])
    bias = g.op("Where", [mask, g.f32([0.0]), g.f32([-np.inf])])
    p = g.op("Softmax", [g.op("Add", [scores, bias])], axis=-1)
    p = g.op("Where", [g.op("IsNaN", [p]), g.f32([0.0]), p])
    return g.op("MatMul", [p, v])
