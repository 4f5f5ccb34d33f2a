#!/usr/bin/env python3
"""Writes ONNX models in the exact op spellings PyTorch 2.11's exporters emit for Hugging Face
transformers 5.x models, without PyTorch or transformers: every node is written with onnx.helper,
weights are seeded random numbers (no pretrained model is named or downloaded).

The patterns were read op by op from real exports (test/fixtures/transformers) and from the
exporters' symbolic functions; sizes are parameters, so the same patterns come out for other
widths, depths, head counts and shapes. Two exporter forms:

  TorchScript (`torch.onnx.export(..., dynamo=False)`, opset 17, IR 8): small constants as
    Constant nodes named /<module path>/Constant_<k>, `Linear` as MatMul over a pre-transposed
    initializer `onnx::MatMul_<n>` + Add(bias, mm), sizes traced as Shape + Gather and packed back
    with Unsqueeze + Concat, `expand` with the ConstantOfShape/Mul(-1)/Equal/Where guard,
    `arange` as Range over a Cast, advanced indexing as Flatten + Gather, SDPA as Mul(q, d^-0.25),
    Mul(k^T, d^-0.25), Where(mask, 0, -inf), Softmax and the Where(IsNaN(p), 0, p) guard, erf GELU
    written out, opset-17 LayerNormalization.
  dynamo (`torch.onnx.export(..., dynamo=True)`, opset 18, IR 10): every constant an initializer
    `val_<n>` shared by value, symbolic sizes as Shape(start, end) + Squeeze, shape lists as
    Concat of Reshape(size, [-1]) and constant runs, `expand` through Abs, advanced indexing as
    GatherND over indices stacked on a last axis, SDPA's key transposed as Reshape [-1, S, D] /
    Transpose / Reshape, Where(mask, 0, float32 lowest), RMSNorm as Pow/ReduceMean/Add/Sqrt/
    Reciprocal/Mul/Mul, SwiGLU as Sigmoid/Mul/Mul. A static export (--static) folds every shape
    and mask computation into initializers, as the exporter's optimizer does.

Models (each name is one variant; --only picks some):
  bert_sdpa         BertModel, TorchScript, SDPA; token types from the buffer through Expand +
                    GatherElements; transformers 5 bidirectional + padding mask (ConstantOfShape,
                    GreaterOrEqual, And, Flatten/Gather indexing, Expand); pooler as Gemm + Tanh.
  bert_eager        BertModel, TorchScript, eager attention in the form most exported BERTs have:
                    scores Div sqrt(d), additive mask (1 - mask) * float32 lowest.
  bert_dynamo_sdpa  BertModel, dynamo, SDPA: the same mask functions as GreaterOrEqual/And/
                    GatherND, torchlib's SDPA and erf GELU, expand through Abs, Gemm pooler.
  roberta_sdpa      RobertaModel, TorchScript, SDPA; position ids from the input ids as Hugging Face
                    computes them (Equal/Not/Cast/CumSum/Mul/Cast/Add padding_idx).
  vit_eager         ViTModel, TorchScript, eager (transformers 5: Mul(scores, d^-0.5), Where(mask,
                    0, lowest) added, Softmax, Cast, Cast); dynamic batch, static image size.
  gpt2_sdpa         GPT2LMHeadModel, TorchScript, SDPA; Conv1D as Gemm over a flattened view, fused
                    QKV + Split, causal + padding mask (LessOrEqual, And, indexing, Expand), tanh
                    GELU with Pow 3, tied LM head.
  gpt2_eager        the same, eager: Div by a scale computed from the value's shape (Shape/Slice/
                    Squeeze/Cast/Pow/ConstantOfShape/Add), Where(mask, 0, lowest) sliced to the key
                    length and added, Softmax, Cast; Conv1D as MatMul + Add.
  llama_sdpa        LlamaForCausalLM, dynamo, SDPA, GQA (4 query, 2 key/value heads), positions
                    from Range, rotary cos/sin computed with MatMul/Transpose/Concat/Cos/Sin.
  qwen2_sdpa        Qwen2ForCausalLM, dynamo: Llama with q/k/v biases, position_ids an input.
  llama_mqa_static  LlamaForCausalLM with one key/value head (MQA), dynamo static export (as
                    the llama_dynamo_sdpa fixture): constant mask, GatherND indices and cos/sin
                    tables; shape from --static (default 1x32).

Dynamic models have dynamic batch and sequence axes as the exporters write them with
dynamic_axes / dynamic_shapes; fix them with `ortc ... --input-shape input_ids=1x32 ...`.
Beside the models, models.json describes each: file, inputs (name, dtype, dims with symbols),
outputs, vocabulary size, decoder or not.

Usage: make_hf_models.py OUT_DIR [--only NAME,...] [--size small|base] [--static BxS] [--list]
"""
import argparse
import collections
import contextlib
import json
import math
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

INT64_MAX = 2**63 - 1
F32_LOWEST = float(np.finfo(np.float32).min)  # torch.finfo(torch.float32).min
PRODUCER_VERSION = "2.11.0"

# Configurations: "small" matches the fixtures (hidden 64, 2 layers, 4 heads, vocabulary 1000);
# "base" the usual base sizes of each family.
SIZES = {
    "small": {
        "bert": dict(vocab=1000, hidden=64, heads=4, layers=2, ffn=128, max_pos=128, type_vocab=2),
        "roberta": dict(vocab=1000, hidden=64, heads=4, layers=2, ffn=128, max_pos=130, type_vocab=1),
        "vit": dict(hidden=64, heads=4, layers=2, ffn=128, image=32, patch=8, channels=3),
        "gpt2": dict(vocab=1000, hidden=64, heads=4, layers=2, ffn=256, max_pos=128),
        "llama": dict(vocab=1000, hidden=64, heads=4, layers=2, ffn=128, theta=10000.0, eps=1e-6),
        "qwen2": dict(vocab=1000, hidden=64, heads=4, layers=2, ffn=128, theta=1000000.0, eps=1e-6),
    },
    "base": {
        "bert": dict(vocab=30522, hidden=768, heads=12, layers=12, ffn=3072, max_pos=512, type_vocab=2),
        "roberta": dict(vocab=50265, hidden=768, heads=12, layers=12, ffn=3072, max_pos=514, type_vocab=1),
        "vit": dict(hidden=768, heads=12, layers=12, ffn=3072, image=224, patch=16, channels=3),
        "gpt2": dict(vocab=50257, hidden=768, heads=12, layers=12, ffn=3072, max_pos=1024),
        "llama": dict(vocab=32000, hidden=768, heads=12, layers=12, ffn=2048, theta=10000.0, eps=1e-6),
        "qwen2": dict(vocab=32000, hidden=768, heads=12, layers=12, ffn=2048, theta=1000000.0, eps=1e-6),
    },
}

VARIANTS = {
    "bert_sdpa": dict(arch="bert", form="torchscript", attn="sdpa"),
    "bert_eager": dict(arch="bert", form="torchscript", attn="eager"),
    "bert_dynamo_sdpa": dict(arch="bert", form="dynamo", attn="sdpa"),
    "roberta_sdpa": dict(arch="roberta", form="torchscript", attn="sdpa"),
    "vit_eager": dict(arch="vit", form="torchscript", attn="eager"),
    "gpt2_sdpa": dict(arch="gpt2", form="torchscript", attn="sdpa", conv1d="gemm"),
    "gpt2_eager": dict(arch="gpt2", form="torchscript", attn="eager", conv1d="matmul"),
    "llama_sdpa": dict(arch="llama", form="dynamo", attn="sdpa", kv_heads=2),
    "qwen2_sdpa": dict(arch="qwen2", form="dynamo", attn="sdpa", kv_heads=2, position_ids=True),
    "llama_mqa_static": dict(arch="llama", form="dynamo", attn="sdpa", kv_heads=1, static=True),
}


class Writer:
    """Collects nodes and initializers, naming them the way each exporter does."""

    def __init__(self, form, seed):
        assert form in ("torchscript", "dynamo")
        self.form = form
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self._scope = ""
        self._ts_counts = collections.Counter()
        self._dy_counts = collections.Counter()
        self._val = 0
        self._const_cache = {}
        self._matmul_id = 300  # TorchScript numbers folded weights onnx::MatMul_<n>

    @contextlib.contextmanager
    def scope(self, name):
        """TorchScript names nodes after the module path that created them."""
        old = self._scope
        self._scope = f"{old}/{name}"
        try:
            yield
        finally:
            self._scope = old

    def _ts_name(self, op):
        key = (self._scope, op)
        k = self._ts_counts[key]
        self._ts_counts[key] += 1
        return f"{self._scope}/{op}" + (f"_{k}" if k else "")

    def _dy_value(self, base):
        if base is None:
            self._val += 1
            return f"val_{self._val}"
        k = self._dy_counts[base]
        self._dy_counts[base] += 1
        return base if k == 0 else f"{base}_{k}"

    def op(self, op_type, inputs, outs=1, name=None, **attrs):
        """One node; returns its output name (a list for outs > 1). `name` is the dynamo value
        name (its aten op: linear, view, transpose...); TorchScript derives names from the scope."""
        if self.form == "torchscript":
            node_name = self._ts_name(op_type)
            outputs = [f"{node_name}_output_{i}" for i in range(outs)]
        else:
            outputs = [self._dy_value(name) for _ in range(outs)]
            node_name = f"node_{outputs[0]}"
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs, name=node_name, **attrs))
        return outputs[0] if outs == 1 else outputs

    def const(self, value, dtype):
        """A constant: a Constant node in TorchScript form, a shared initializer in dynamo form."""
        arr = np.array(value, dtype=dtype)
        if self.form == "torchscript":
            node_name = self._ts_name("Constant")
            out = f"{node_name}_output_0"
            self.nodes.append(helper.make_node("Constant", [], [out], name=node_name,
                                               value=numpy_helper.from_array(arr)))
            return out
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in self._const_cache:
            name = self._dy_value(None)
            self.inits.append(numpy_helper.from_array(arr, name))
            self._const_cache[key] = name
        return self._const_cache[key]

    def i64(self, value):
        return self.const(value, np.int64)

    def f32(self, value):
        return self.const(value, np.float32)

    def param(self, name, arr):
        """A model parameter kept under its module path."""
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def folded_weight(self, arr):
        """A weight the exporter transposed at export time (Linear's W^T), under its own name."""
        if self.form == "torchscript":
            name = f"onnx::MatMul_{self._matmul_id}"
            self._matmul_id += 1
        else:
            name = self._dy_value(None)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    # Seeded random weights, scaled so every layer carries signal.
    def randn(self, *shape, std=0.05):
        return (self.rng.standard_normal(shape) * std).astype(np.float32)

    def uniform(self, lo, hi, *shape):
        return self.rng.uniform(lo, hi, shape).astype(np.float32)

    def input(self, name, elem, dims):
        self.inputs.append(helper.make_tensor_value_info(name, elem, dims))
        return name

    def output(self, value, name, elem, dims):
        """Renames the value producing `name` so the graph output carries the exporter's name."""
        for n in self.nodes:
            for i, o in enumerate(n.output):
                if o == value:
                    n.output[i] = name
            for i, x in enumerate(n.input):
                if x == value:
                    n.input[i] = name
        self.outputs.append(helper.make_tensor_value_info(name, elem, dims))
        return name

    def model(self):
        opset, ir = (17, 8) if self.form == "torchscript" else (18, 10)
        graph = helper.make_graph(self.nodes, "main_graph", self.inputs, self.outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="pytorch", producer_version=PRODUCER_VERSION)
        m.ir_version = ir
        return m


def is_static(dims):
    return all(isinstance(d, int) for d in dims)


# ---- TorchScript: traced sizes and the symbolic functions' helper chains ----

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


def ts_linear(g, x, w, b, scope):
    """nn.Linear on a 3-D input: MatMul over the folded W^T, then Add(bias, mm)."""
    with g.scope(scope):
        mm = g.op("MatMul", [x, g.folded_weight(w.T)])
        return g.op("Add", [g.param(f"{b[0]}", b[1]), mm]) if b is not None else mm


def ts_layernorm(g, x, weight, bias, eps, scope):
    with g.scope(scope):
        return g.op("LayerNormalization", [x, weight, bias], axis=-1, epsilon=eps)


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


# ---- dynamo: symbolic sizes and torchlib's lowerings ----

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


def dy_linear(g, x, w, b=None, name="linear"):
    """aten.linear on a 3-D input: MatMul over the folded W^T, then Add(mm, bias)."""
    mm = g.op("MatMul", [x, g.folded_weight(w.T)], name=None if b is not None else name)
    return g.op("Add", [mm, b], name=name) if b is not None else mm


def dy_rmsnorm(g, x, weight, eps):
    p = g.op("Pow", [x, g.f32(2.0)], name="pow")
    mean = g.op("ReduceMean", [p, g.i64([-1])], keepdims=1, noop_with_empty_axes=0, name="mean")
    r = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [mean, g.f32(eps)], name="add")])], name="rsqrt")
    return g.op("Mul", [weight, g.op("Mul", [x, r], name="mul")], name="mul")


def dy_mask(g, mask_in, batch, seq, kind):
    """transformers 5 sdpa_mask as the dynamo exporter writes it: the mask function (causal
    kv_idx <= q_idx, or bidirectional q_idx >= 0) over Range/Unsqueeze index tensors, and'ed with
    the padding function mask[batch_idx, kv_idx] (GatherND over the two indices broadcast and
    stacked on a last axis), then expand(batch, -1, q_len, kv_len). A static export (ints batch,
    seq) folds all of it but the GatherND into initializers and drops the expand, a no-op there.
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
    if kind == "causal":
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
    Softmax, the IsNaN guard. `mask` is a BoolMask shared by the layers."""
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


class BoolMask:
    """The bool attention mask and its Where(mask, 0, lowest): SDPA converts it in every layer,
    the exporter's CSE keeps the first (placed where layer 0 made it)."""

    def __init__(self, value):
        self.value, self._bias = value, None

    def bias(self, g):
        if self._bias is None:
            self._bias = g.op("Where", [self.value, g.f32(0.0), g.f32(F32_LOWEST)])
        return self._bias


# ---- the models ----

def bert_family(g, c, v, B, S):
    """BertModel / RobertaModel, TorchScript form."""
    roberta = v["arch"] == "roberta"
    H, nh = c["hidden"], c["heads"]
    d = H // nh
    ids = g.input("input_ids", TensorProto.INT64, [B, S])
    mask_in = g.input("attention_mask", TensorProto.INT64, [B, S])
    ln_w = lambda: g.uniform(0.8, 1.2, H)  # noqa: E731
    small = lambda *s: g.uniform(-0.1, 0.1, *s)  # noqa: E731

    with g.scope("embeddings"):
        batch, seq = ts_size(g, ids, 0), ts_size(g, ids, 1)
        if roberta:
            # create_position_ids_from_input_ids: (cumsum(ids != pad) * (ids != pad)) + pad
            pad = 1
            ne = g.op("Not", [g.op("Equal", [ids, g.i64(pad)])])
            m = g.op("Cast", [ne], to=TensorProto.INT32)
            inc = g.op("Mul", [g.op("CumSum", [m, g.const(1, np.int32)]), m])
            position_ids = g.op("Add", [g.op("Cast", [inc], to=TensorProto.INT64), g.i64(pad)])
            # token_type_ids buffer sliced to the length, expanded to the batch
            buf = g.i64(np.zeros((1, c["max_pos"]), np.int64))
            tt = g.op("Slice", [buf, g.i64([0]), ts_unsqueeze(g, seq, 0), g.i64([1]), g.i64([1])])
            token_types = ts_expand(g, tt, [batch, seq])
        else:
            # position_ids buffer [:, 0:seq]; the token-type buffer expanded to the positions'
            # batch, gathered at the positions, expanded to (batch, seq)
            buf = g.i64(np.arange(c["max_pos"], dtype=np.int64)[None])
            position_ids = g.op("Slice", [buf, g.i64([0]), ts_unsqueeze(g, seq, 0), g.i64([1]), g.i64([1])])
            zeros = g.i64(np.zeros((1, c["max_pos"]), np.int64))
            tt = ts_expand(g, zeros, [ts_size(g, position_ids, 0), -1])
            tt = g.op("GatherElements", [tt, position_ids], axis=1)
            token_types = ts_expand(g, tt, [batch, seq])
        with g.scope("word_embeddings"):
            we = g.op("Gather", [g.param("embeddings.word_embeddings.weight", g.randn(c["vocab"], H, std=0.5)), ids])
        with g.scope("token_type_embeddings"):
            te = g.op("Gather", [g.param("embeddings.token_type_embeddings.weight",
                                         g.randn(c["type_vocab"], H, std=0.5)), token_types])
        h = g.op("Add", [we, te])
        with g.scope("position_embeddings"):
            pe = g.op("Gather", [g.param("embeddings.position_embeddings.weight",
                                         g.randn(c["max_pos"], H, std=0.5)), position_ids])
        h = g.op("Add", [h, pe])
        h = ts_layernorm(g, h, g.param("embeddings.LayerNorm.weight", ln_w()),
                         g.param("embeddings.LayerNorm.bias", small(H)), 1e-12, "LayerNorm")

    if v["attn"] == "sdpa":
        mask = ts_mask(g, h, mask_in, "bidirectional")
    else:
        # get_extended_attention_mask: mask[:, None, None, :], (1 - mask) * lowest
        ext = ts_unsqueeze(g, ts_unsqueeze(g, mask_in, 1), 2)
        ext = g.op("Cast", [ext], to=TensorProto.FLOAT)
        mask = g.op("Mul", [g.op("Sub", [g.f32(1.0), ext]), g.f32(F32_LOWEST)])

    for i in range(c["layers"]):
        p = f"encoder.layer.{i}"
        with g.scope(f"encoder/layer.{i}"):
            with g.scope("attention/self"):
                if v["attn"] == "sdpa":
                    # hidden_shape = (*hidden_states.shape[:-1], -1, head_dim)
                    b_, s_ = ts_size(g, h, 0), ts_size(g, h, 1)
                    shape = lambda: ts_list(g, [b_, s_, -1, d])  # noqa: E731
                else:
                    # transpose_for_scores: x.size()[:-1] + (heads, head_dim)
                    shape = None
                proj = {}
                for n in ("query", "key", "value"):
                    x = ts_linear(g, h, g.randn(H, H), (f"{p}.attention.self.{n}.bias", small(H)), n)
                    target = shape() if shape else ts_list(g, [ts_size(g, x, 0), ts_size(g, x, 1), nh, d])
                    proj[n] = g.op("Reshape", [x, target], allowzero=0)
                q = g.op("Transpose", [proj["query"]], perm=[0, 2, 1, 3])
                vv = g.op("Transpose", [proj["value"]], perm=[0, 2, 1, 3])
                k_t = g.op("Transpose", [proj["key"]], perm=[0, 2, 3, 1])  # transpose(1,2) then (-1,-2), fused
                if v["attn"] == "sdpa":
                    ctx = ts_sdpa(g, q, k_t, vv, mask, d)
                else:
                    scores = g.op("Div", [g.op("MatMul", [q, k_t]), g.f32(math.sqrt(d))])
                    probs = g.op("Softmax", [g.op("Add", [scores, mask])], axis=-1)
                    ctx = g.op("MatMul", [probs, vv])
                ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3])
                if v["attn"] == "sdpa":
                    ctx = g.op("Reshape", [ctx, ts_list(g, [b_, s_, -1])], allowzero=0)
                else:
                    target = ts_list(g, [ts_size(g, ctx, 0), ts_size(g, ctx, 1), H])
                    ctx = g.op("Reshape", [ctx, target], allowzero=0)
            with g.scope("attention/output"):
                o = ts_linear(g, ctx, g.randn(H, H), (f"{p}.attention.output.dense.bias", small(H)), "dense")
                o = g.op("Add", [o, h])
                h = ts_layernorm(g, o, g.param(f"{p}.attention.output.LayerNorm.weight", ln_w()),
                                 g.param(f"{p}.attention.output.LayerNorm.bias", small(H)), 1e-12, "LayerNorm")
            with g.scope("intermediate"):
                x = ts_linear(g, h, g.randn(c["ffn"], H), (f"{p}.intermediate.dense.bias", small(c["ffn"])), "dense")
                x = ts_gelu_erf(g, x, "intermediate_act_fn")
            with g.scope("output"):
                x = ts_linear(g, x, g.randn(H, c["ffn"]), (f"{p}.output.dense.bias", small(H)), "dense")
                x = g.op("Add", [x, h])
                h = ts_layernorm(g, x, g.param(f"{p}.output.LayerNorm.weight", ln_w()),
                                 g.param(f"{p}.output.LayerNorm.bias", small(H)), 1e-12, "LayerNorm")
    h = g.output(h, "last_hidden_state", TensorProto.FLOAT, [B, S, H])
    if not roberta:
        with g.scope("pooler"):
            first = g.op("Gather", [h, g.i64(0)], axis=1)  # hidden_states[:, 0]
            with g.scope("dense"):  # nn.Linear on a 2-D input: Gemm with transB
                y = g.op("Gemm", [first, g.param("pooler.dense.weight", g.randn(H, H)),
                                  g.param("pooler.dense.bias", small(H))], alpha=1.0, beta=1.0, transB=1)
            with g.scope("activation"):
                pooled = g.op("Tanh", [y])
        g.output(pooled, "pooler_output", TensorProto.FLOAT, [B, H])
    return ["input_ids", "attention_mask"]


def vit(g, c, v, B, S):
    """ViTModel, TorchScript form, transformers 5 eager attention; the image size is static."""
    H, nh = c["hidden"], c["heads"]
    d = H // nh
    n_patches = (c["image"] // c["patch"]) ** 2
    px = g.input("pixel_values", TensorProto.FLOAT, [B, c["channels"], c["image"], c["image"]])
    ln_w = lambda: g.uniform(0.8, 1.2, H)  # noqa: E731
    small = lambda *s: g.uniform(-0.1, 0.1, *s)  # noqa: E731
    with g.scope("embeddings"):
        batch = ts_size(g, px, 0)
        with g.scope("patch_embeddings"):
            with g.scope("projection"):
                conv = g.op("Conv", [px, g.param("embeddings.patch_embeddings.projection.weight",
                                                 g.randn(H, c["channels"], c["patch"], c["patch"])),
                                     g.param("embeddings.patch_embeddings.projection.bias", small(H))],
                            dilations=[1, 1], group=1, kernel_shape=[c["patch"]] * 2, pads=[0, 0, 0, 0],
                            strides=[c["patch"]] * 2)
            # flatten(2): Shape[0:2] + [-1]; then transpose(1, 2)
            lead = g.op("Slice", [g.op("Shape", [conv]), g.i64([0]), g.i64([2]), g.i64([0])])
            flat = g.op("Reshape", [conv, g.op("Concat", [lead, g.i64([-1])], axis=0)], allowzero=0)
            patches = g.op("Transpose", [flat], perm=[0, 2, 1])
        cls = ts_expand(g, g.param("embeddings.cls_token", g.randn(1, 1, H, std=0.5)), [batch, -1, -1])
        e = g.op("Concat", [cls, patches], axis=1)
        h = g.op("Add", [e, g.param("embeddings.position_embeddings", g.randn(1, n_patches + 1, H, std=0.5))])
    bias = g.op("Where", [ts_mask(g, h, None, "bidirectional"), g.f32(0.0), g.f32(F32_LOWEST)])
    for i in range(c["layers"]):
        p = f"layers.{i}"
        with g.scope(p):
            ln = ts_layernorm(g, h, g.param(f"{p}.layernorm_before.weight", ln_w()),
                              g.param(f"{p}.layernorm_before.bias", small(H)), 1e-12, "layernorm_before")
            with g.scope("attention"):
                b_, s_ = ts_size(g, ln, 0), ts_size(g, ln, 1)
                proj = {}
                for n in ("q_proj", "k_proj", "v_proj"):
                    x = ts_linear(g, ln, g.randn(H, H), (f"{p}.attention.{n}.bias", small(H)), n)
                    proj[n] = g.op("Reshape", [x, ts_list(g, [b_, s_, -1, d])], allowzero=0)
                q = g.op("Transpose", [proj["q_proj"]], perm=[0, 2, 1, 3])
                vv = g.op("Transpose", [proj["v_proj"]], perm=[0, 2, 1, 3])
                k_t = g.op("Transpose", [proj["k_proj"]], perm=[0, 2, 3, 1])
                scores = g.op("Mul", [g.op("MatMul", [q, k_t]), g.f32(d ** -0.5)])
                probs = g.op("Softmax", [g.op("Add", [scores, bias])], axis=-1)
                # softmax(..., dtype=float32).to(query.dtype)
                probs = g.op("Cast", [g.op("Cast", [probs], to=TensorProto.FLOAT)], to=TensorProto.FLOAT)
                ctx = g.op("Transpose", [g.op("MatMul", [probs, vv])], perm=[0, 2, 1, 3])
                ctx = g.op("Reshape", [ctx, ts_list(g, [b_, s_, -1])], allowzero=0)
                o = ts_linear(g, ctx, g.randn(H, H), (f"{p}.attention.o_proj.bias", small(H)), "o_proj")
            h = g.op("Add", [o, h])
            ln = ts_layernorm(g, h, g.param(f"{p}.layernorm_after.weight", ln_w()),
                              g.param(f"{p}.layernorm_after.bias", small(H)), 1e-12, "layernorm_after")
            with g.scope("mlp"):
                x = ts_linear(g, ln, g.randn(c["ffn"], H), (f"{p}.mlp.fc1.bias", small(c["ffn"])), "fc1")
                x = ts_gelu_erf(g, x, "activation_fn")
                x = ts_linear(g, x, g.randn(H, c["ffn"]), (f"{p}.mlp.fc2.bias", small(H)), "fc2")
            h = g.op("Add", [x, h])
    h = ts_layernorm(g, h, g.param("layernorm.weight", ln_w()), g.param("layernorm.bias", small(H)),
                     1e-12, "layernorm")
    g.output(h, "last_hidden_state", TensorProto.FLOAT, [B, n_patches + 1, H])
    return ["pixel_values"]


def gpt2(g, c, v, B, S):
    """GPT2LMHeadModel, TorchScript form."""
    H, nh = c["hidden"], c["heads"]
    d = H // nh
    ids = g.input("input_ids", TensorProto.INT64, [B, S])
    mask_in = g.input("attention_mask", TensorProto.INT64, [B, S])
    ln_w = lambda: g.uniform(0.8, 1.2, H)  # noqa: E731
    small = lambda *s: g.uniform(-0.1, 0.1, *s)  # noqa: E731

    def conv1d(x, n_in, n_out, prefix, scope):
        """transformers' Conv1D: addmm(bias, x.view(-1, x.size(-1)), weight).view(size_out), or
        x @ weight + bias where the exporter saw a plain matmul."""
        w = g.param(f"{prefix}.weight", g.randn(n_in, n_out))
        b = g.param(f"{prefix}.bias", small(n_out))
        with g.scope(scope):
            if v.get("conv1d") == "matmul":
                return g.op("Add", [g.op("MatMul", [x, w]), b])
            s0, s1 = ts_size(g, x, 0), ts_size(g, x, 1)
            last = ts_size_last(g, x)
            flat = g.op("Reshape", [x, g.op("Concat", [g.i64([-1]), ts_unsqueeze(g, last, 0)], axis=0)], allowzero=0)
            y = g.op("Gemm", [flat, w, b], alpha=1.0, beta=1.0)
            return g.op("Reshape", [y, ts_list(g, [s0, s1, n_out])], allowzero=0)

    # Tied to the LM head, so its scale sets the logits': std 0.1 keeps them O(1) like the other
    # models' outputs (with 0.5 they reached 30, and fp16 storage alone put near-zero logits
    # beyond the emulator's absolute bound).
    wte = g.randn(c["vocab"], H, std=0.1)
    with g.scope("transformer"):
        with g.scope("wte"):
            emb = g.op("Gather", [g.param("transformer.wte.weight", wte), ids])
        # cache_position = arange(0, inputs_embeds.shape[1]); position_ids = cache_position[None]
        cache_position = ts_arange(g, ts_size(g, emb, 1))
        position_ids = ts_unsqueeze(g, cache_position, 0)
        with g.scope("wpe"):
            pe = g.op("Gather", [g.param("transformer.wpe.weight", g.randn(c["max_pos"], H, std=0.5)), position_ids])
        h = g.op("Add", [emb, pe])
        mask = ts_mask(g, emb, mask_in, "causal", cache_position)
        if v["attn"] == "eager":  # eager_mask: where(mask, 0, lowest)
            mask = g.op("Where", [mask, g.f32(0.0), g.f32(F32_LOWEST)])
        for i in range(c["layers"]):
            p = f"transformer.h.{i}"
            with g.scope(f"h.{i}"):
                ln = ts_layernorm(g, h, g.param(f"{p}.ln_1.weight", ln_w()), g.param(f"{p}.ln_1.bias", small(H)),
                                  1e-5, "ln_1")
                with g.scope("attn"):
                    qkv = conv1d(ln, H, 3 * H, f"{p}.attn.c_attn", "c_attn")
                    q, k, vv = g.op("Split", [qkv, g.i64([H, H, H])], outs=3, axis=2)
                    views = []
                    for t in (q, k, vv):  # (*t.shape[:-1], -1, head_dim)
                        views.append(g.op("Reshape", [t, ts_list(g, [ts_size(g, t, 0), ts_size(g, t, 1), -1, d])],
                                          allowzero=0))
                    q = g.op("Transpose", [views[0]], perm=[0, 2, 1, 3])
                    vv = g.op("Transpose", [views[2]], perm=[0, 2, 1, 3])
                    k_t = g.op("Transpose", [views[1]], perm=[0, 2, 3, 1])
                    if v["attn"] == "sdpa":
                        ctx = ts_sdpa(g, q, k_t, vv, mask, d)
                    else:
                        # w / full([], value.size(-1) ** 0.5); w + mask[:, :, :, :key.shape[-2]]
                        k = g.op("Transpose", [views[1]], perm=[0, 2, 1, 3])
                        scores = g.op("MatMul", [q, k_t])
                        root = g.op("Pow", [g.op("Cast", [ts_size_last(g, vv)], to=TensorProto.FLOAT), g.f32(0.5)])
                        zero = g.op("ConstantOfShape", [g.i64(np.zeros(0, np.int64))],
                                    value=numpy_helper.from_array(np.array([0.0], np.float32)))
                        scores = g.op("Div", [scores, g.op("Add", [zero, root])])
                        kv_len = ts_unsqueeze(g, ts_size(g, k, 2), 0)
                        sliced = g.op("Slice", [mask, g.i64([0]), kv_len, g.i64([3]), g.i64([1])])
                        probs = g.op("Softmax", [g.op("Add", [scores, sliced])], axis=-1)
                        probs = g.op("Cast", [probs], to=TensorProto.FLOAT)  # .type(value.dtype)
                        ctx = g.op("MatMul", [probs, vv])
                    ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3])
                    # reshape(*attn_output.shape[:-2], -1)
                    ctx = g.op("Reshape", [ctx, ts_list(g, [ts_size(g, ctx, 0), ts_size(g, ctx, 1), -1])], allowzero=0)
                    o = conv1d(ctx, H, H, f"{p}.attn.c_proj", "c_proj")
                h = g.op("Add", [o, h])
                ln = ts_layernorm(g, h, g.param(f"{p}.ln_2.weight", ln_w()), g.param(f"{p}.ln_2.bias", small(H)),
                                  1e-5, "ln_2")
                with g.scope("mlp"):
                    x = conv1d(ln, H, c["ffn"], f"{p}.mlp.c_fc", "c_fc")
                    x = ts_gelu_tanh(g, x, "act")
                    x = conv1d(x, c["ffn"], H, f"{p}.mlp.c_proj", "c_proj")
                h = g.op("Add", [h, x])
        h = ts_layernorm(g, h, g.param("transformer.ln_f.weight", ln_w()), g.param("transformer.ln_f.bias", small(H)),
                         1e-5, "ln_f")
    with g.scope("lm_head"):  # tied to wte: the exporter folds wte^T into its own initializer
        logits = g.op("MatMul", [h, g.folded_weight(wte.T)])
    g.output(logits, "logits", TensorProto.FLOAT, [B, S, c["vocab"]])
    return ["input_ids", "attention_mask"]


def bert_dynamo(g, c, v, B, S):
    """BertModel, dynamo form (torch.onnx.export's default since PyTorch 2.9), SDPA: the same
    module code as bert_family through torchlib's lowerings."""
    H, nh = c["hidden"], c["heads"]
    d = H // nh
    ids = g.input("input_ids", TensorProto.INT64, [B, S])
    mask_in = g.input("attention_mask", TensorProto.INT64, [B, S])
    ln_w = lambda: g.uniform(0.8, 1.2, H)  # noqa: E731
    small = lambda *s: g.uniform(-0.1, 0.1, *s)  # noqa: E731

    def layer_norm(x, prefix):
        return g.op("LayerNormalization", [x, g.param(f"{prefix}.weight", ln_w()), g.param(f"{prefix}.bias", small(H))],
                    axis=-1, epsilon=1e-12, name="layer_norm")

    batch, seq = dy_size(g, ids, 0), dy_size(g, ids, 1)
    # position_ids buffer [:, 0:seq]; the token-type buffer's expand(position_ids.shape[0] == 1, -1)
    # folds away, gather at the positions, expand(batch, seq)
    end = g.op("Reshape", [seq, g.i64([-1])], allowzero=0)
    position_ids = g.op("Slice", [g.i64(np.arange(c["max_pos"], dtype=np.int64)[None]), g.i64([0]), end, g.i64([1]),
                                  g.i64([1])], name="slice")
    tt = g.op("GatherElements", [g.i64(np.zeros((1, c["max_pos"]), np.int64)), position_ids], axis=1, name="gather")
    tt = dy_expand(g, tt, [batch, seq])
    we = g.op("Gather", [g.param("embeddings.word_embeddings.weight", g.randn(c["vocab"], H, std=0.5)), ids], axis=0,
              name="embedding")
    te = g.op("Gather", [g.param("embeddings.token_type_embeddings.weight", g.randn(c["type_vocab"], H, std=0.5)), tt],
              axis=0, name="embedding")
    h = g.op("Add", [we, te], name="add")
    pe = g.op("Gather", [g.param("embeddings.position_embeddings.weight", g.randn(c["max_pos"], H, std=0.5)),
                         position_ids], axis=0, name="embedding")
    h = layer_norm(g.op("Add", [h, pe], name="add"), "embeddings.LayerNorm")
    mask = BoolMask(dy_mask(g, mask_in, batch, seq, "bidirectional")[0])

    for i in range(c["layers"]):
        p = f"encoder.layer.{i}"
        heads = []
        for n in ("query", "key", "value"):
            y = dy_linear(g, h, g.randn(H, H), g.param(f"{p}.attention.self.{n}.bias", small(H)))
            y = g.op("Reshape", [y, dy_list(g, [batch, seq, -1, d])], allowzero=1, name="view")
            heads.append(g.op("Transpose", [y], perm=[0, 2, 1, 3], name="transpose"))
        ctx = dy_sdpa(g, heads[0], heads[1], heads[2], mask, d)
        ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3], name="transpose")
        ctx = g.op("Reshape", [ctx, dy_list(g, [batch, seq, -1])], allowzero=1, name="view")
        o = dy_linear(g, ctx, g.randn(H, H), g.param(f"{p}.attention.output.dense.bias", small(H)))
        h = layer_norm(g.op("Add", [o, h], name="add"), f"{p}.attention.output.LayerNorm")
        x = dy_linear(g, h, g.randn(c["ffn"], H), g.param(f"{p}.intermediate.dense.bias", small(c["ffn"])))
        # torchlib's gelu (approximate="none") below opset 20: 0.5 * (x * (erf(x / sqrt 2) + 1))
        e = g.op("Erf", [g.op("Div", [x, g.f32(1.4142135623730951)])])
        x = g.op("Mul", [g.f32(0.5), g.op("Mul", [x, g.op("Add", [e, g.f32(1.0)])])], name="gelu")
        x = dy_linear(g, x, g.randn(H, c["ffn"]), g.param(f"{p}.output.dense.bias", small(H)))
        h = layer_norm(g.op("Add", [x, h], name="add"), f"{p}.output.LayerNorm")
    h = g.output(h, "last_hidden_state", TensorProto.FLOAT, [B, S, H])
    first = g.op("Gather", [h, g.i64(0)], axis=1, name="select")  # hidden_states[:, 0]
    # aten.linear on a 2-D input: Gemm with transB over the parameter itself
    y = g.op("Gemm", [first, g.param("pooler.dense.weight", g.randn(H, H)), g.param("pooler.dense.bias", small(H))],
             transA=0, transB=1, name="linear")
    g.output(g.op("Tanh", [y], name="tanh"), "pooler_output", TensorProto.FLOAT, [B, H])
    return ["input_ids", "attention_mask"]


def llama_family(g, c, v, B, S):
    """LlamaForCausalLM / Qwen2ForCausalLM, dynamo form; static (ints B, S) folds every shape,
    mask and rotary computation into initializers as the exporter's optimizer does."""
    H, nh, kvh = c["hidden"], c["heads"], v["kv_heads"]
    d, rep = H // nh, nh // kvh
    static = isinstance(B, int)
    bias = v["arch"] == "qwen2"
    ids = g.input("input_ids", TensorProto.INT64, [B, S])
    mask_in = g.input("attention_mask", TensorProto.INT64, [B, S])
    pos_in = g.input("position_ids", TensorProto.INT64, [B, S]) if v.get("position_ids") else None
    small = lambda *s: g.uniform(-0.1, 0.1, *s)  # noqa: E731
    norm_w = lambda: g.uniform(0.8, 1.2, H)  # noqa: E731
    inv_freq = (1.0 / (c["theta"] ** (np.arange(0, d, 2, dtype=np.int64).astype(np.float32) / d))).astype(np.float32)

    h = g.op("Gather", [g.param("model.embed_tokens.weight", g.randn(c["vocab"], H, std=0.5)), ids], axis=0,
             name="embedding")
    if static:
        batch, seq = B, S
    else:
        batch, seq = dy_size(g, ids, 0), dy_size(g, ids, 1)

    mask, cache_position = dy_mask(g, mask_in, batch, seq, "causal")
    mask = BoolMask(mask)

    # Rotary tables.
    if static:
        # position_ids = cache_position[None]: batch 1, broadcast over the batch later
        freqs = np.arange(S, dtype=np.float32)[None, :, None] * inv_freq[None, None, :]
        emb = np.concatenate([freqs, freqs], axis=-1)
        cos = g.const(np.cos(emb)[:, None].astype(np.float32), np.float32)
        sin = g.const(np.sin(emb)[:, None].astype(np.float32), np.float32)
    else:
        position_ids = pos_in if pos_in else g.op("Unsqueeze", [cache_position, g.i64([0])], name="unsqueeze")
        # inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1) @ position_ids[:, None, :];
        # positions from cache_position have batch 1, and the expand folds to a constant
        inv = g.const(inv_freq[None, :, None], np.float32)
        if pos_in:
            inv = dy_expand(g, inv, [batch, -1, 1])
        pos = g.op("Cast", [g.op("Unsqueeze", [position_ids, g.i64([1])], name="unsqueeze")], to=TensorProto.FLOAT,
                   name="_to_copy")
        freqs = g.op("Transpose", [g.op("MatMul", [inv, pos], name="matmul")], perm=[0, 2, 1], name="transpose")
        emb = g.op("Concat", [freqs, freqs], axis=-1, name="cat")
        cos = g.op("Unsqueeze", [g.op("Cos", [emb], name="cos"), g.i64([1])], name="unsqueeze")
        sin = g.op("Unsqueeze", [g.op("Sin", [emb], name="sin"), g.i64([1])], name="unsqueeze")

    def rotate(x):
        """x * cos + cat(-x2, x1) * sin, the halves as Slice on axis 3."""
        a = g.op("Mul", [x, cos], name="mul")
        x1 = g.op("Slice", [x, g.i64([0]), g.i64([d // 2]), g.i64([3]), g.i64([1])], name="slice")
        x2 = g.op("Slice", [x, g.i64([d // 2]), g.i64([INT64_MAX]), g.i64([3]), g.i64([1])], name="slice")
        r = g.op("Concat", [g.op("Neg", [x2], name="neg"), x1], axis=-1, name="cat")
        return g.op("Add", [a, g.op("Mul", [r, sin], name="mul")], name="add")

    def repeat_kv(x, final_reshape=True):
        """x[:, :, None].expand(batch, kv_heads, n_rep, seq, d).reshape(batch, heads, seq, d)"""
        if rep == 1:
            return x
        u = g.op("Unsqueeze", [x, g.i64([2])], name="unsqueeze")
        e = dy_expand(g, u, [batch, kvh, rep, seq, d])
        if not final_reshape:
            return e
        return g.op("Reshape", [e, dy_list(g, [batch, nh, seq, d])], allowzero=1, name="_unsafe_view")

    for i in range(c["layers"]):
        p = f"model.layers.{i}"
        residual = h
        x = dy_rmsnorm(g, h, g.param(f"{p}.input_layernorm.weight", norm_w()), c["eps"])
        heads = {}
        for n, count in (("q_proj", nh), ("k_proj", kvh), ("v_proj", kvh)):
            b = g.param(f"{p}.self_attn.{n}.bias", small(count * d)) if bias else None
            y = dy_linear(g, x, g.randn(count * d, H), b)
            y = g.op("Reshape", [y, dy_list(g, [batch, seq, -1, d])], allowzero=1, name="view")
            heads[n] = g.op("Transpose", [y], perm=[0, 2, 1, 3], name="transpose")
        q, k, vv = rotate(heads["q_proj"]), rotate(heads["k_proj"]), heads["v_proj"]
        # SDPA's key transpose: [-1, S, D] view, Transpose, back to [..., D, S]. A static export
        # folds the GQA reshape and the first view into one Reshape.
        if static:
            kk = repeat_kv(k, final_reshape=False)
            vv = repeat_kv(vv)
            k3 = g.op("Reshape", [kk, g.i64([B * nh, S, d])])
            k_t = g.op("Reshape", [g.op("Transpose", [k3], perm=[0, 2, 1]), g.i64([B, nh, d, S])], allowzero=0)
            ctx = dy_sdpa_core(g, q, k_t, vv, mask, d)
        else:
            kk = repeat_kv(k)
            vv = repeat_kv(vv)
            ctx = dy_sdpa(g, q, kk, vv, mask, d)
        ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3], name="transpose")
        ctx = g.op("Reshape", [ctx, dy_list(g, [batch, seq, -1])], allowzero=1, name="view")
        h = g.op("Add", [residual, dy_linear(g, ctx, g.randn(H, nh * d))], name="add")
        residual = h
        x = dy_rmsnorm(g, h, g.param(f"{p}.post_attention_layernorm.weight", norm_w()), c["eps"])
        gate = dy_linear(g, x, g.randn(c["ffn"], H))
        silu = g.op("Mul", [gate, g.op("Sigmoid", [gate])], name="silu")
        up = dy_linear(g, x, g.randn(c["ffn"], H))
        down = dy_linear(g, g.op("Mul", [silu, up], name="mul"), g.randn(H, c["ffn"]))
        h = g.op("Add", [residual, down], name="add")
    h = dy_rmsnorm(g, h, g.param("model.norm.weight", norm_w()), c["eps"])
    logits = dy_linear(g, h, g.randn(c["vocab"], H))
    g.output(logits, "logits", TensorProto.FLOAT, [B, S, c["vocab"]])
    return ["input_ids", "attention_mask"] + (["position_ids"] if pos_in else [])


BUILDERS = {"bert": bert_family, "roberta": bert_family, "vit": vit, "gpt2": gpt2,
            "llama": llama_family, "qwen2": llama_family}


def write(name, size, static_shape, out_dir, seed):
    v = VARIANTS[name]
    c = SIZES[size][v["arch"]]
    g = Writer(v["form"], seed)
    if v.get("static"):
        B, S = static_shape
        stem = f"{name}_{B}x{S}"
    else:
        # the axis names users give dynamic_axes / dynamic_shapes
        B, S = ("batch_size", "sequence_length") if v["form"] == "torchscript" else ("batch", "sequence_length")
        stem = name
    if size != "small":
        stem += f"_{size}"
    build = bert_dynamo if (v["arch"], v["form"]) == ("bert", "dynamo") else BUILDERS[v["arch"]]
    build(g, c, v, B, S)  # the graph inputs are read back from the model below
    model = g.model()
    path = os.path.join(out_dir, stem + ".onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())

    def dims(vi):
        return [x.dim_param or x.dim_value for x in vi.type.tensor_type.shape.dim]

    return {
        "name": stem, "variant": name, "file": stem + ".onnx", "arch": v["arch"], "form": v["form"],
        "attention": v["attn"], "static": bool(v.get("static")), "layers": c["layers"],
        "vocab": c.get("vocab"), "decoder": v["arch"] in ("gpt2", "llama", "qwen2"),
        "inputs": [{"name": x.name, "dtype": {TensorProto.INT64: "int64", TensorProto.FLOAT: "float32"}
                    [x.type.tensor_type.elem_type], "dims": dims(x)} for x in model.graph.input],
        "outputs": [{"name": x.name, "dims": dims(x)} for x in model.graph.output],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--only", help="comma-separated model names (default: all)")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--static", default="1x32", help="BxS of static exports (default 1x32)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    a = parser.parse_args()
    if a.list:
        print("\n".join(VARIANTS))
        return 0
    if not a.out_dir:
        parser.error("OUT_DIR is required")
    names = a.only.split(",") if a.only else list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; --list shows them")
    static_shape = tuple(int(x) for x in a.static.lower().split("x"))
    os.makedirs(a.out_dir, exist_ok=True)
    index_path = os.path.join(a.out_dir, "models.json")
    index = {}
    if os.path.exists(index_path):  # several runs (shapes, sizes) share one folder
        index = {m["name"]: m for m in json.load(open(index_path))}
    for k, n in enumerate(names):
        entry = write(n, a.size, static_shape, a.out_dir, a.seed + k)
        index[entry["name"]] = entry
        print(os.path.join(a.out_dir, entry["file"]))
    with open(index_path, "w") as f:
        json.dump(sorted(index.values(), key=lambda m: m["name"]), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
