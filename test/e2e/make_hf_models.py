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
  distilbert_sdpa   DistilBertModel, TorchScript, SDPA: no token types, q_lin/k_lin/v_lin/out_lin,
                    create_bidirectional_mask, sinusoidal position table, post-LayerNorm blocks.
  t5_encoder_eager  T5EncoderModel, TorchScript, T5's eager attention: RMS norms without mean or
                    bias, unscaled scores plus the bucketed relative position bias (block 0's,
                    shared) and the mask, ReLU FFN.
  mistral_sdpa      MistralForCausalLM, dynamo: Llama with the sliding-window causal mask (window
                    16, below the sequence lengths checked).
  gemma_sdpa        GemmaForCausalLM, dynamo: (1 + weight) RMSNorm, sqrt(hidden) embedding scale,
                    GeGLU with tanh GELU, head_dim 32 with hidden 64 / 4 heads, MQA, tied head.
  qwen3_sdpa        Qwen3ForCausalLM, dynamo: per-head q_norm/k_norm before rotary, head_dim 32,
                    GQA, tied head.
  phi3_sdpa         Phi3ForCausalLM, dynamo: fused qkv_proj cut by Slices, partial rotary 0.75,
                    gate_up_proj split in two, GQA, sliding window 2047.
  phi_sdpa          PhiForCausalLM (Phi-2), dynamo: parallel attention and MLP off one LayerNorm,
                    partial rotary 0.4, gelu_new, biases, LM head bias.
  gpt_neox_sdpa     GPTNeoXForCausalLM, dynamo: per-head interleaved fused QKV chunked in three,
                    rotary_pct 0.25, parallel residual with two LayerNorms, erf GELU.

The models after llama_mqa_static have numpy references (ref_*, the model's math written from its
Hugging Face definition): `--weights` saves each model's parameters beside it, `--reference NAME`
computes NAME's outputs from them on .npy inputs, so ONNX Runtime's outputs can be checked against
the model rather than against the graph.

Dynamic models have dynamic batch and sequence axes as the exporters write them with
dynamic_axes / dynamic_shapes; fix them with `ortc ... --input-shape input_ids=1x32 ...`.
Beside the models, models.json describes each: file, inputs (name, dtype, dims with symbols),
outputs, vocabulary size, decoder or not.

Usage: make_hf_models.py OUT_DIR [--only NAME,...] [--size small|base] [--static BxS] [--weights] [--list]
       make_hf_models.py OUT_DIR --reference NAME --inputs IN_DIR --outputs OUT_DIR
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
        "distilbert": dict(vocab=1000, hidden=64, heads=4, layers=2, ffn=128, max_pos=128, sinusoidal=True),
        # a window below the sequence lengths checked (32, 64), so it masks
        "mistral": dict(vocab=1000, hidden=64, heads=4, kv_heads=2, layers=2, ffn=128, theta=10000.0, eps=1e-5,
                        sliding_window=16),
        "gemma": dict(vocab=1000, hidden=64, heads=4, kv_heads=1, head_dim=32, layers=2, ffn=128, theta=10000.0,
                      eps=1e-6, tie=True),
        "qwen3": dict(vocab=1000, hidden=64, heads=4, kv_heads=2, head_dim=32, layers=2, ffn=128, theta=1000000.0,
                      eps=1e-6, tie=True),
        "phi3": dict(vocab=1000, hidden=64, heads=4, kv_heads=2, layers=2, ffn=128, theta=10000.0, eps=1e-5,
                     partial_rotary=0.75, sliding_window=2047),
        "gpt_neox": dict(vocab=1000, hidden=64, heads=4, layers=2, ffn=256, theta=10000.0, eps=1e-5, rotary_pct=0.25),
        "phi": dict(vocab=1000, hidden=64, heads=4, layers=2, ffn=256, theta=10000.0, eps=1e-5, partial_rotary=0.4),
        "t5": dict(vocab=1000, hidden=64, heads=4, d_kv=16, layers=2, ffn=128, buckets=32, max_distance=128, eps=1e-6),
    },
    "base": {
        "bert": dict(vocab=30522, hidden=768, heads=12, layers=12, ffn=3072, max_pos=512, type_vocab=2),
        "roberta": dict(vocab=50265, hidden=768, heads=12, layers=12, ffn=3072, max_pos=514, type_vocab=1),
        "vit": dict(hidden=768, heads=12, layers=12, ffn=3072, image=224, patch=16, channels=3),
        "gpt2": dict(vocab=50257, hidden=768, heads=12, layers=12, ffn=3072, max_pos=1024),
        "llama": dict(vocab=32000, hidden=768, heads=12, layers=12, ffn=2048, theta=10000.0, eps=1e-6),
        "qwen2": dict(vocab=32000, hidden=768, heads=12, layers=12, ffn=2048, theta=1000000.0, eps=1e-6),
        "distilbert": dict(vocab=30522, hidden=768, heads=12, layers=6, ffn=3072, max_pos=512, sinusoidal=False),
        "mistral": dict(vocab=32000, hidden=768, heads=12, kv_heads=4, layers=12, ffn=2048, theta=10000.0, eps=1e-5,
                        sliding_window=4096),
        "gemma": dict(vocab=32000, hidden=768, heads=8, kv_heads=1, head_dim=128, layers=12, ffn=3072,
                      theta=10000.0, eps=1e-6, tie=True),
        "qwen3": dict(vocab=32000, hidden=1024, heads=16, kv_heads=8, head_dim=128, layers=12, ffn=3072,
                      theta=1000000.0, eps=1e-6, tie=True),
        "phi3": dict(vocab=32000, hidden=768, heads=12, kv_heads=4, layers=12, ffn=2048, theta=10000.0, eps=1e-5,
                     partial_rotary=0.75, sliding_window=2047),
        "gpt_neox": dict(vocab=50304, hidden=768, heads=12, layers=12, ffn=3072, theta=10000.0, eps=1e-5,
                         rotary_pct=0.25),
        # Phi-2's head_dim 80 (rotary on 32 channels) at a base-model width
        "phi": dict(vocab=51200, hidden=1280, heads=16, layers=12, ffn=5120, theta=10000.0, eps=1e-5,
                    partial_rotary=0.4),
        "t5": dict(vocab=32128, hidden=768, heads=12, d_kv=64, layers=12, ffn=3072, buckets=32, max_distance=128,
                   eps=1e-6),
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
    "distilbert_sdpa": dict(arch="distilbert", form="torchscript", attn="sdpa"),
    "mistral_sdpa": dict(arch="mistral", form="dynamo", attn="sdpa"),
    "gemma_sdpa": dict(arch="gemma", form="dynamo", attn="sdpa"),
    "qwen3_sdpa": dict(arch="qwen3", form="dynamo", attn="sdpa"),
    "phi3_sdpa": dict(arch="phi3", form="dynamo", attn="sdpa"),
    "gpt_neox_sdpa": dict(arch="gpt_neox", form="dynamo", attn="sdpa"),
    "phi_sdpa": dict(arch="phi", form="dynamo", attn="sdpa"),
    "t5_encoder_eager": dict(arch="t5", form="torchscript", attn="eager"),
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
        # Every parameter under its Hugging Face name, in PyTorch's layout (Linear weights
        # [out, in]): what the numpy references (ref_*) compute from, whatever the graph names.
        self.weights = {}

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
        self.weights[name] = arr
        return name

    def folded_weight(self, arr, path=None):
        """A weight the exporter transposed at export time (Linear's W^T), under its own name;
        `path` records the parameter (arr^T) under its module path for the references."""
        if path is not None:
            self.weights[path] = np.ascontiguousarray(arr.T)
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


def ts_linear(g, x, w, b, scope, path=None):
    """nn.Linear on a 3-D input: MatMul over the folded W^T, then Add(bias, mm)."""
    with g.scope(scope):
        mm = g.op("MatMul", [x, g.folded_weight(w.T, path)])
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


def dy_gelu_erf(g, x):
    """aten.gelu (approximate="none") in PyTorch's own torchlib (torch.onnx's _torchlib ops/nn.py,
    which takes precedence over onnxscript's below opset 20): x * (0.5 * (erf(x / sqrt 2) + 1)).
    bert_dynamo_sdpa writes onnxscript's older order, 0.5 * (x * (erf + 1)); both reach ortc."""
    e = g.op("Erf", [g.op("Div", [x, g.f32(1.4142135623730951)])])
    inner = g.op("Mul", [g.f32(0.5), g.op("Add", [e, g.f32(1.0)])])
    return g.op("Mul", [x, inner], name="gelu")


def dy_gelu_tanh(g, x):
    """aten.gelu(approximate="tanh") (gelu_pytorch_tanh) in the same torchlib: Pow(x, 3) with an
    int64 exponent (onnxscript turns the Python 3 of op.Pow(self, 3) into INT64, Pow's exponent
    type being free), 0.044715 * x^3, + x, * sqrt(2 / pi) (Sqrt(Div(2, pi)) folded to one float32
    scalar), Tanh, + 1, * 0.5, * x."""
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


def sinusoidal_table(n_pos, dim):
    """DistilBERT's sinusoidal_pos_embds initial values: angle pos / 10000^(2 (j // 2) / dim),
    sine on even columns, cosine on odd ones (transformers 5 only initialises the learned
    table with them; the graph is the same Gather either way)."""
    pos = np.arange(n_pos, dtype=np.float64)[:, None]
    j = np.arange(dim)[None, :]
    angle = pos / np.power(10000.0, 2 * (j // 2) / dim)
    out = np.empty((n_pos, dim), np.float32)
    out[:, 0::2] = np.sin(angle[:, 0::2])
    out[:, 1::2] = np.cos(angle[:, 1::2])
    return out


def distilbert(g, c, v, B, S):
    """DistilBertModel, TorchScript form, SDPA. transformers 5 gives DistilBERT the BERT attention
    interface (q_lin/k_lin/v_lin views to (*input_shape, -1, head_dim), SDPA with scale
    head_dim^-0.5, out_lin) and create_bidirectional_mask; no token types; position ids are the
    buffer sliced to inputs_embeds.size(1) (the word embeddings' length, not input_ids');
    post-LayerNorm blocks (sa_layer_norm, output_layer_norm) around an erf-GELU FFN lin1/lin2."""
    H, nh = c["hidden"], c["heads"]
    d = H // nh
    ids = g.input("input_ids", TensorProto.INT64, [B, S])
    mask_in = g.input("attention_mask", TensorProto.INT64, [B, S])
    ln_w = lambda: g.uniform(0.8, 1.2, H)  # noqa: E731
    small = lambda *s: g.uniform(-0.1, 0.1, *s)  # noqa: E731

    def linear(x, n_out, n_in, prefix, scope):
        return ts_linear(g, x, g.randn(n_out, n_in), (f"{prefix}.bias", small(n_out)), scope, path=f"{prefix}.weight")

    with g.scope("embeddings"):
        with g.scope("word_embeddings"):
            we = g.op("Gather", [g.param("embeddings.word_embeddings.weight", g.randn(c["vocab"], H, std=0.5)), ids])
        seq = ts_size(g, we, 1)
        buf = g.i64(np.arange(c["max_pos"], dtype=np.int64)[None])
        position_ids = g.op("Slice", [buf, g.i64([0]), ts_unsqueeze(g, seq, 0), g.i64([1]), g.i64([1])])
        table = sinusoidal_table(c["max_pos"], H) if c["sinusoidal"] else g.randn(c["max_pos"], H, std=0.5)
        with g.scope("position_embeddings"):
            pe = g.op("Gather", [g.param("embeddings.position_embeddings.weight", table), position_ids])
        h = g.op("Add", [we, pe])
        h = ts_layernorm(g, h, g.param("embeddings.LayerNorm.weight", ln_w()),
                         g.param("embeddings.LayerNorm.bias", small(H)), 1e-12, "LayerNorm")
    mask = ts_mask(g, h, mask_in, "bidirectional")
    for i in range(c["layers"]):
        p = f"transformer.layer.{i}"
        with g.scope(f"transformer/layer.{i}"):
            with g.scope("attention"):
                b_, s_ = ts_size(g, h, 0), ts_size(g, h, 1)  # input_shape = hidden_states.shape[:-1]
                proj = {}
                for n in ("q_lin", "k_lin", "v_lin"):
                    x = linear(h, H, H, f"{p}.attention.{n}", n)
                    proj[n] = g.op("Reshape", [x, ts_list(g, [b_, s_, -1, d])], allowzero=0)
                q = g.op("Transpose", [proj["q_lin"]], perm=[0, 2, 1, 3])
                vv = g.op("Transpose", [proj["v_lin"]], perm=[0, 2, 1, 3])
                k_t = g.op("Transpose", [proj["k_lin"]], perm=[0, 2, 3, 1])
                ctx = ts_sdpa(g, q, k_t, vv, mask, d)
                ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3])
                ctx = g.op("Reshape", [ctx, ts_list(g, [b_, s_, -1])], allowzero=0)
                o = linear(ctx, H, H, f"{p}.attention.out_lin", "out_lin")
            h = ts_layernorm(g, g.op("Add", [o, h]), g.param(f"{p}.sa_layer_norm.weight", ln_w()),
                             g.param(f"{p}.sa_layer_norm.bias", small(H)), 1e-12, "sa_layer_norm")
            with g.scope("ffn"):
                x = linear(h, c["ffn"], H, f"{p}.ffn.lin1", "lin1")
                x = ts_gelu_erf(g, x, "activation")
                x = linear(x, H, c["ffn"], f"{p}.ffn.lin2", "lin2")
            h = ts_layernorm(g, g.op("Add", [x, h]), g.param(f"{p}.output_layer_norm.weight", ln_w()),
                             g.param(f"{p}.output_layer_norm.bias", small(H)), 1e-12, "output_layer_norm")
    g.output(h, "last_hidden_state", TensorProto.FLOAT, [B, S, H])
    return ["input_ids", "attention_mask"]


def decoder_dynamo(g, c, v, B, S):
    """Llama-like causal LMs, dynamo form, SDPA, positions from cache_position; per architecture:
      mistral  MistralForCausalLM: config.sliding_window set, so create_sliding_window_causal_mask
               (the window comparison and'ed into the causal mask); GQA.
      gemma    GemmaForCausalLM: GemmaRMSNorm (x * rsqrt(mean(x^2) + eps) * (1 + weight), the
               1 + weight folded), embeddings times the embed_scale buffer sqrt(hidden), GeGLU MLP
               down(gelu_tanh(gate(x)) * up(x)), head_dim 2x hidden / heads, MQA, tied LM head.
      qwen3    Qwen3ForCausalLM: q_norm/k_norm (RMSNorm over head_dim) on the [B, S, heads, d]
               views before the transpose and rotary, head_dim 2x hidden / heads, tied LM head.
      phi3     Phi3ForCausalLM (as Phi-4-mini configures it: GQA, partial_rotary_factor 0.75;
               sliding_window 2047 as Phi-3-mini's): fused qkv_proj cut by three Slices on the
               last axis, partial rotary (Slice rotated / passed-through parts, Concat),
               gate_up_proj chunked in two (Split num_outputs=2), up * silu(gate)."""
    arch = v["arch"]
    H, nh, kvh = c["hidden"], c["heads"], c["kv_heads"]
    d = c.get("head_dim") or H // nh
    rd = int(d * c.get("partial_rotary", 1.0))
    rep = nh // kvh
    gemma = arch == "gemma"
    ids = g.input("input_ids", TensorProto.INT64, [B, S])
    mask_in = g.input("attention_mask", TensorProto.INT64, [B, S])

    def norm(x, path, n):
        if gemma:  # zero-centred weight, the scale is 1 + weight
            w = g.uniform(-0.2, 0.2, n)
            g.weights[path] = w
            return dy_rmsnorm_gemma(g, x, g.folded_weight((1.0 + w).astype(np.float32)), c["eps"])
        return dy_rmsnorm(g, x, g.param(path, g.uniform(0.8, 1.2, n)), c["eps"])

    def linear(x, n_out, n_in, path):
        return dy_linear(g, x, g.randn(n_out, n_in), path=path)

    # Tied tables are the LM head too: std 0.1 keeps the logits O(1) (Gemma scales its
    # embeddings by sqrt(hidden) on the way in).
    embed = g.randn(c["vocab"], H, std=0.1 if c.get("tie") else 0.5)
    h = g.op("Gather", [g.param("model.embed_tokens.weight", embed), ids], axis=0, name="embedding")
    if gemma:  # GemmaTextScaledWordEmbedding: * embed_scale.to(weight.dtype), a float32 buffer
        scale = g.param("model.embed_tokens.embed_scale", np.array(H ** 0.5, np.float32))
        h = g.op("Mul", [h, scale], name="mul")
    batch, seq = dy_size(g, ids, 0), dy_size(g, ids, 1)
    mask, cache_position = dy_mask(g, mask_in, batch, seq, "causal", window=c.get("sliding_window"))
    mask = BoolMask(mask)
    position_ids = g.op("Unsqueeze", [cache_position, g.i64([0])], name="unsqueeze")
    cos, sin = dy_rotary_tables(g, position_ids, batch, rd, c["theta"], expand_batch=False)

    for i in range(c["layers"]):
        p = f"model.layers.{i}"
        residual = h
        x = norm(h, f"{p}.input_layernorm.weight", H)
        if arch == "phi3":
            qd, kvd = nh * d, kvh * d
            qkv = linear(x, qd + 2 * kvd, H, f"{p}.self_attn.qkv_proj.weight")
            parts = [g.op("Slice", [qkv, g.i64([a]), g.i64([b]), g.i64([2]), g.i64([1])], name="slice")
                     for a, b in ((0, qd), (qd, qd + kvd), (qd + kvd, INT64_MAX))]
        else:
            parts = [linear(x, count * d, H, f"{p}.self_attn.{n}.weight")
                     for n, count in (("q_proj", nh), ("k_proj", kvh), ("v_proj", kvh))]
        heads = []
        for n, y in zip("qkv", parts):
            y = g.op("Reshape", [y, dy_list(g, [batch, seq, -1, d])], allowzero=1, name="view")
            if arch == "qwen3" and n != "v":
                y = dy_rmsnorm(g, y, g.param(f"{p}.self_attn.{n}_norm.weight", g.uniform(0.8, 1.2, d)), c["eps"])
            heads.append(g.op("Transpose", [y], perm=[0, 2, 1, 3], name="transpose"))
        q = dy_rotate(g, heads[0], cos, sin, rd, d)
        k = dy_rotate(g, heads[1], cos, sin, rd, d)
        kk = dy_repeat_kv(g, k, batch, seq, kvh, rep, d)
        vv = dy_repeat_kv(g, heads[2], batch, seq, kvh, rep, d)
        ctx = dy_sdpa(g, q, kk, vv, mask, d)
        ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3], name="transpose")
        ctx = g.op("Reshape", [ctx, dy_list(g, [batch, seq, -1])], allowzero=1, name="view")
        h = g.op("Add", [residual, linear(ctx, H, nh * d, f"{p}.self_attn.o_proj.weight")], name="add")
        residual = h
        x = norm(h, f"{p}.post_attention_layernorm.weight", H)
        if arch == "phi3":
            gu = linear(x, 2 * c["ffn"], H, f"{p}.mlp.gate_up_proj.weight")
            gate, up = g.op("Split", [gu], outs=2, axis=2, num_outputs=2, name="split")
            y = g.op("Mul", [up, g.op("Mul", [gate, g.op("Sigmoid", [gate])], name="silu")], name="mul")
        else:
            gate = linear(x, c["ffn"], H, f"{p}.mlp.gate_proj.weight")
            act = dy_gelu_tanh(g, gate) if gemma else g.op("Mul", [gate, g.op("Sigmoid", [gate])], name="silu")
            y = g.op("Mul", [act, linear(x, c["ffn"], H, f"{p}.mlp.up_proj.weight")], name="mul")
        h = g.op("Add", [residual, linear(y, H, c["ffn"], f"{p}.mlp.down_proj.weight")], name="add")
    h = norm(h, "model.norm.weight", H)
    if c.get("tie"):  # the exporter folds the tied table's transpose into its own initializer
        logits = dy_linear(g, h, embed)
    else:
        logits = linear(h, c["vocab"], H, "lm_head.weight")
    g.output(logits, "logits", TensorProto.FLOAT, [B, S, c["vocab"]])
    return ["input_ids", "attention_mask"]


def gpt_neox(g, c, v, B, S):
    """GPTNeoXForCausalLM (Pythia), dynamo form, SDPA: fused query_key_value viewed per head as
    [B, S, heads, 3 * head_dim] and transposed, then chunked in three on the last axis (q, k, v
    interleaved per head; Split num_outputs=3), partial rotary (rotary_pct), parallel residual
    (attention and MLP each read their own LayerNorm of the same input: x + attn(ln1(x)) +
    mlp(ln2(x)), written mlp + attn + x), erf-GELU MLP, biases everywhere, untied embed_out."""
    H, nh = c["hidden"], c["heads"]
    d = H // nh
    rd = int(d * c["rotary_pct"])
    ids = g.input("input_ids", TensorProto.INT64, [B, S])
    mask_in = g.input("attention_mask", TensorProto.INT64, [B, S])
    small = lambda *s: g.uniform(-0.1, 0.1, *s)  # noqa: E731

    def layer_norm(x, prefix):
        return dy_layernorm(g, x, g.param(f"{prefix}.weight", g.uniform(0.8, 1.2, H)),
                            g.param(f"{prefix}.bias", small(H)), c["eps"])

    def linear(x, n_out, n_in, prefix, bias=True):
        b = g.param(f"{prefix}.bias", small(n_out)) if bias else None
        return dy_linear(g, x, g.randn(n_out, n_in), b, path=f"{prefix}.weight")

    h = g.op("Gather", [g.param("gpt_neox.embed_in.weight", g.randn(c["vocab"], H, std=0.5)), ids], axis=0,
             name="embedding")
    batch, seq = dy_size(g, ids, 0), dy_size(g, ids, 1)
    mask, cache_position = dy_mask(g, mask_in, batch, seq, "causal")
    mask = BoolMask(mask)
    position_ids = g.op("Unsqueeze", [cache_position, g.i64([0])], name="unsqueeze")
    cos, sin = dy_rotary_tables(g, position_ids, batch, rd, c["theta"], expand_batch=False)
    for i in range(c["layers"]):
        p = f"gpt_neox.layers.{i}"
        x = layer_norm(h, f"{p}.input_layernorm")
        qkv = linear(x, 3 * H, H, f"{p}.attention.query_key_value")
        qkv = g.op("Reshape", [qkv, dy_list(g, [batch, seq, -1, 3 * d])], allowzero=1, name="view")
        qkv = g.op("Transpose", [qkv], perm=[0, 2, 1, 3], name="transpose")
        q, k, vv = g.op("Split", [qkv], outs=3, axis=3, num_outputs=3, name="split")
        q, k = dy_rotate(g, q, cos, sin, rd, d), dy_rotate(g, k, cos, sin, rd, d)
        ctx = dy_sdpa(g, q, k, vv, mask, d)
        ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3], name="transpose")
        ctx = g.op("Reshape", [ctx, dy_list(g, [batch, seq, -1])], allowzero=1, name="view")
        attn = linear(ctx, H, H, f"{p}.attention.dense")
        x = layer_norm(h, f"{p}.post_attention_layernorm")
        x = linear(x, c["ffn"], H, f"{p}.mlp.dense_h_to_4h")
        x = linear(dy_gelu_erf(g, x), H, c["ffn"], f"{p}.mlp.dense_4h_to_h")
        h = g.op("Add", [g.op("Add", [x, attn], name="add"), h], name="add")
    h = layer_norm(h, "gpt_neox.final_layer_norm")
    logits = linear(h, c["vocab"], H, "embed_out", bias=False)
    g.output(logits, "logits", TensorProto.FLOAT, [B, S, c["vocab"]])
    return ["input_ids", "attention_mask"]


def phi(g, c, v, B, S):
    """PhiForCausalLM (Phi-2), dynamo form, SDPA: one LayerNorm feeding attention and MLP in
    parallel (attn(ln(x)) + mlp(ln(x)) + x), q/k/v/dense with biases, partial rotary
    (partial_rotary_factor 0.4, here on 6 of 16 channels: odd halves), gelu_new MLP fc1/fc2
    written out by NewGELUActivation (0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 *
    pow(x, 3.0))))), final_layernorm, LM head with a bias."""
    H, nh = c["hidden"], c["heads"]
    d = H // nh
    rd = int(d * c["partial_rotary"])
    ids = g.input("input_ids", TensorProto.INT64, [B, S])
    mask_in = g.input("attention_mask", TensorProto.INT64, [B, S])
    small = lambda *s: g.uniform(-0.1, 0.1, *s)  # noqa: E731

    def layer_norm(x, prefix):
        return dy_layernorm(g, x, g.param(f"{prefix}.weight", g.uniform(0.8, 1.2, H)),
                            g.param(f"{prefix}.bias", small(H)), c["eps"])

    def linear(x, n_out, n_in, prefix):
        return dy_linear(g, x, g.randn(n_out, n_in), g.param(f"{prefix}.bias", small(n_out)), path=f"{prefix}.weight")

    h = g.op("Gather", [g.param("model.embed_tokens.weight", g.randn(c["vocab"], H, std=0.5)), ids], axis=0,
             name="embedding")
    batch, seq = dy_size(g, ids, 0), dy_size(g, ids, 1)
    mask, cache_position = dy_mask(g, mask_in, batch, seq, "causal")
    mask = BoolMask(mask)
    position_ids = g.op("Unsqueeze", [cache_position, g.i64([0])], name="unsqueeze")
    cos, sin = dy_rotary_tables(g, position_ids, batch, rd, c["theta"], expand_batch=False)
    for i in range(c["layers"]):
        p = f"model.layers.{i}"
        x = layer_norm(h, f"{p}.input_layernorm")
        heads = []
        for n in ("q_proj", "k_proj", "v_proj"):
            y = linear(x, H, H, f"{p}.self_attn.{n}")
            y = g.op("Reshape", [y, dy_list(g, [batch, seq, -1, d])], allowzero=1, name="view")
            heads.append(g.op("Transpose", [y], perm=[0, 2, 1, 3], name="transpose"))
        q, k = dy_rotate(g, heads[0], cos, sin, rd, d), dy_rotate(g, heads[1], cos, sin, rd, d)
        ctx = dy_sdpa(g, q, k, heads[2], mask, d)
        ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3], name="transpose")
        ctx = g.op("Reshape", [ctx, dy_list(g, [batch, seq, -1])], allowzero=1, name="view")
        attn = linear(ctx, H, H, f"{p}.self_attn.dense")
        m = linear(dy_gelu_new(g, linear(x, c["ffn"], H, f"{p}.mlp.fc1")), H, c["ffn"], f"{p}.mlp.fc2")
        h = g.op("Add", [g.op("Add", [attn, m], name="add"), h], name="add")
    h = layer_norm(h, "model.final_layernorm")
    logits = linear(h, c["vocab"], H, "lm_head")
    g.output(logits, "logits", TensorProto.FLOAT, [B, S, c["vocab"]])
    return ["input_ids", "attention_mask"]


def ts_t5_layernorm(g, x, weight, eps, scope):
    """T5LayerNorm (RMS, no mean subtraction, no bias) traced: Pow 2, ReduceMean (opset 17: axes an
    attribute), + eps, rsqrt as Div(1, Sqrt), * x, weight * (the fp32 casts are no-ops)."""
    with g.scope(scope):
        var = g.op("ReduceMean", [g.op("Pow", [x, g.f32(2.0)])], axes=[-1], keepdims=1)
        r = g.op("Div", [g.f32([1.0]), g.op("Sqrt", [g.op("Add", [var, g.f32(eps)])])])
        return g.op("Mul", [weight, g.op("Mul", [x, r])])


def t5_encoder(g, c, v, B, S):
    """T5EncoderModel, TorchScript form, T5's eager attention: RMS LayerNorms (T5LayerNorm) before
    each sub-layer, unscaled attention (eager_attention_forward's scaling 1.0 kept as a Mul),
    the relative position bias computed in block 0 and shared: buckets from cache_position and
    a key Range (bidirectional: sign bucket, exact buckets below max_exact, log-spaced ones up to
    max_distance through Abs/Less/Cast/Div/Log/Div/Mul/Cast/Add/Min with full_like/Where), looked
    up in relative_attention_bias, permuted to [1, heads, q, k], sliced [-q_len:] and added to the
    eager bidirectional mask (Where(mask, 0, lowest)); ReLU FFN wi/wo without biases."""
    H, nh, dkv = c["hidden"], c["heads"], c["d_kv"]
    nb, max_dist, eps = c["buckets"], c["max_distance"], c["eps"]
    ids = g.input("input_ids", TensorProto.INT64, [B, S])
    mask_in = g.input("attention_mask", TensorProto.INT64, [B, S])
    norm_w = lambda: g.uniform(0.8, 1.2, H)  # noqa: E731

    def linear(x, n_out, n_in, path, scope):
        with g.scope(scope):
            return g.op("MatMul", [x, g.folded_weight(g.randn(n_out, n_in, std=n_in ** -0.5).T, path)])

    with g.scope("encoder"):
        with g.scope("embed_tokens"):
            h = g.op("Gather", [g.param("shared.weight", g.randn(c["vocab"], H, std=1.0)), ids])
        cache_position = ts_arange(g, ts_size(g, h, 1))
        # create_bidirectional_mask with eager attention: eager_mask's Where(mask, 0, lowest)
        mask = g.op("Where", [ts_mask(g, h, mask_in, "bidirectional"), g.f32(0.0), g.f32(F32_LOWEST)])
        position_bias = None
        for i in range(c["layers"]):
            p = f"encoder.block.{i}"
            with g.scope(f"block.{i}"):
                with g.scope("layer.0"):
                    x = ts_t5_layernorm(g, h, g.param(f"{p}.layer.0.layer_norm.weight", norm_w()), eps, "layer_norm")
                    with g.scope("SelfAttention"):
                        a = f"{p}.layer.0.SelfAttention"
                        b_, s_ = ts_size(g, x, 0), ts_size(g, x, 1)  # bsz, tgt_len = hidden_states.shape[:-1]
                        heads = {}
                        for n in ("q", "k", "v"):
                            y = linear(x, nh * dkv, H, f"{a}.{n}.weight", n)
                            heads[n] = g.op("Reshape", [y, ts_list(g, [b_, s_, -1, dkv])], allowzero=0)
                        q = g.op("Transpose", [heads["q"]], perm=[0, 2, 1, 3])
                        k = g.op("Transpose", [heads["k"]], perm=[0, 2, 1, 3])
                        vv = g.op("Transpose", [heads["v"]], perm=[0, 2, 1, 3])
                        if position_bias is None:
                            position_bias = t5_position_bias(g, q, k, cache_position, mask, nh, nb, max_dist, a)
                        k_t = g.op("Transpose", [heads["k"]], perm=[0, 2, 3, 1])
                        scores = g.op("Mul", [g.op("MatMul", [q, k_t]), g.f32(1.0)])
                        kv_len = ts_unsqueeze(g, ts_size(g, k, 2), 0)
                        bias = g.op("Slice", [position_bias, g.i64([0]), kv_len, g.i64([3]), g.i64([1])])
                        probs = g.op("Softmax", [g.op("Add", [scores, bias])], axis=-1)
                        ctx = g.op("Transpose", [g.op("MatMul", [probs, vv])], perm=[0, 2, 1, 3])
                        ctx = g.op("Reshape", [ctx, ts_list(g, [b_, s_, -1])], allowzero=0)
                        o = linear(ctx, H, nh * dkv, f"{a}.o.weight", "o")
                    h = g.op("Add", [h, o])
                with g.scope("layer.1"):
                    x = ts_t5_layernorm(g, h, g.param(f"{p}.layer.1.layer_norm.weight", norm_w()), eps, "layer_norm")
                    with g.scope("DenseReluDense"):
                        f = f"{p}.layer.1.DenseReluDense"
                        x = linear(x, c["ffn"], H, f"{f}.wi.weight", "wi")
                        with g.scope("act"):
                            x = g.op("Relu", [x])
                        x = linear(x, H, c["ffn"], f"{f}.wo.weight", "wo")
                    h = g.op("Add", [h, x])
        h = ts_t5_layernorm(g, h, g.param("encoder.final_layer_norm.weight", norm_w()), eps, "final_layer_norm")
    g.output(h, "last_hidden_state", TensorProto.FLOAT, [B, S, H])
    return ["input_ids", "attention_mask"]


def t5_position_bias(g, q, k, cache_position, mask, nh, nb, max_dist, prefix):
    """T5Attention.compute_bias(real_seq_length, key_length, cache_position) traced, then
    position_bias[:, :, -q_length:, :] + mask[:, :, :, :key_length]."""
    context = ts_unsqueeze(g, cache_position, 1)  # cache_position[:, None]
    memory = ts_unsqueeze(g, ts_arange(g, ts_size(g, k, 2)), 0)  # arange(key_length)[None, :]
    rel = g.op("Sub", [memory, context])
    # _relative_position_bucket, bidirectional: num_buckets //= 2
    half = nb // 2
    sign = g.op("Mul", [g.op("Cast", [g.op("Greater", [rel, g.i64(0)])], to=TensorProto.INT64), g.i64(half)])
    buckets = g.op("Add", [sign, g.i64(0)])  # relative_buckets = 0; relative_buckets += ...
    rel = g.op("Abs", [rel])
    max_exact = half // 2
    is_small = g.op("Less", [rel, g.i64(max_exact)])
    large = g.op("Div", [g.op("Cast", [rel], to=TensorProto.FLOAT), g.f32(float(max_exact))])
    large = g.op("Div", [g.op("Log", [large]), g.f32(math.log(max_dist / max_exact))])
    large = g.op("Cast", [g.op("Mul", [large, g.f32(float(half - max_exact))])], to=TensorProto.INT64)
    large = g.op("Add", [large, g.i64(max_exact)])
    full = g.op("ConstantOfShape", [g.op("Shape", [large])],
                value=numpy_helper.from_array(np.array([half - 1], np.int64)))
    large = g.op("Min", [large, full])
    buckets = g.op("Add", [buckets, g.op("Where", [is_small, rel, large])])
    with g.scope("relative_attention_bias"):
        values = g.op("Gather", [g.param(f"{prefix}.relative_attention_bias.weight", g.randn(nb, nh, std=0.5)),
                                 buckets])
    values = ts_unsqueeze(g, g.op("Transpose", [values], perm=[2, 0, 1]), 0)
    q_len = ts_unsqueeze(g, g.op("Neg", [ts_size(g, q, 2)]), 0)
    values = g.op("Slice", [values, q_len, g.i64([INT64_MAX]), g.i64([2]), g.i64([1])])
    kv_len = ts_unsqueeze(g, ts_size(g, k, 2), 0)
    return g.op("Add", [values, g.op("Slice", [mask, g.i64([0]), kv_len, g.i64([3]), g.i64([1])])])


# ---- numpy references ----
# Each model's math written from its Hugging Face definition, in float64 over the parameters the
# generator recorded (Writer.weights, saved with --weights): nothing here reads the ONNX graph, so
# ONNX Runtime agreeing with it says the graph is the model it claims to be.

_erf = np.vectorize(math.erf)


def _ref_linear(w, x, prefix, bias=True):
    y = x @ w[f"{prefix}.weight"].T
    return y + w[f"{prefix}.bias"] if bias else y


def _ref_layernorm(w, x, prefix, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w[f"{prefix}.weight"] + w[f"{prefix}.bias"]


def _ref_rmsnorm(weight, x, eps, one_plus=False):
    n = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return n * (1.0 + weight) if one_plus else weight * n


def _ref_gelu(x, tanh=False):
    if tanh:
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _ref_allowed(mask, causal, window=None):
    """[B, 1, S, S] booleans: key j visible to query i (padding, causality, sliding window)."""
    s = mask.shape[1]
    i, j = np.arange(s)[:, None], np.arange(s)[None, :]
    ok = (j <= i) if causal else np.ones((s, s), bool)
    if window is not None:
        ok = ok & (i - j < window)
    return (ok[None] & mask.astype(bool)[:, None, :])[:, None]


def _ref_attention(q, k, v, allowed, scale, bias=None):
    """softmax(q k^T * scale + bias) v over the visible keys, heads grouped over the key/value
    heads; a query with no visible key gives 0 (torch's SDPA since 2.5)."""
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) * scale
    s = np.where(allowed, s if bias is None else s + bias, -np.inf)
    top = s.max(-1, keepdims=True)
    e = np.where(allowed, np.exp(s - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = e.sum(-1, keepdims=True)
    return (e / np.where(total > 0, total, 1.0)) @ v


def _ref_rope(x, rot_dim, theta):
    """Rotary embedding at positions 0..S-1 on x [B, heads, S, d]: the first rot_dim channels as
    rotate-half pairs (i, i + rot_dim / 2) at frequency theta^(-2i / rot_dim), the rest unchanged."""
    s = x.shape[2]
    inv = theta ** (-np.arange(0, rot_dim, 2) / rot_dim)
    ang = np.arange(s)[:, None] * inv[None, :]
    cos, sin = np.cos(ang), np.sin(ang)
    half = rot_dim // 2
    a, b = x[..., :half], x[..., half:rot_dim]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin, x[..., rot_dim:]], axis=-1)


def _heads(x, n):
    b, s, _ = x.shape
    return x.reshape(b, s, n, -1).transpose(0, 2, 1, 3)


def _merge(x):
    b, n, s, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, s, n * d)


def ref_distilbert(w, c, feeds):
    ids, mask = feeds["input_ids"], feeds["attention_mask"]
    nh, eps = c["heads"], 1e-12
    positions = np.arange(ids.shape[1])
    h = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][positions]
    h = _ref_layernorm(w, h, "embeddings.LayerNorm", eps)
    allowed = _ref_allowed(mask, causal=False)
    for i in range(c["layers"]):
        p = f"transformer.layer.{i}"
        q, k, v = (_heads(_ref_linear(w, h, f"{p}.attention.{n}"), nh) for n in ("q_lin", "k_lin", "v_lin"))
        ctx = _merge(_ref_attention(q, k, v, allowed, q.shape[-1] ** -0.5))
        h = _ref_layernorm(w, _ref_linear(w, ctx, f"{p}.attention.out_lin") + h, f"{p}.sa_layer_norm", eps)
        f = _ref_linear(w, _ref_gelu(_ref_linear(w, h, f"{p}.ffn.lin1")), f"{p}.ffn.lin2")
        h = _ref_layernorm(w, f + h, f"{p}.output_layer_norm", eps)
    return {"last_hidden_state": h}


def ref_decoder(w, c, feeds, arch):
    ids, mask = feeds["input_ids"], feeds["attention_mask"]
    nh, kvh, eps = c["heads"], c["kv_heads"], c["eps"]
    d = c.get("head_dim") or c["hidden"] // nh
    rd = int(d * c.get("partial_rotary", 1.0))
    gemma = arch == "gemma"

    def norm(x, path):
        return _ref_rmsnorm(w[path], x, eps, one_plus=gemma)

    h = w["model.embed_tokens.weight"][ids]
    if gemma:
        h = h * np.float32(c["hidden"] ** 0.5)
    allowed = _ref_allowed(mask, causal=True, window=c.get("sliding_window"))
    for i in range(c["layers"]):
        p = f"model.layers.{i}"
        x = norm(h, f"{p}.input_layernorm.weight")
        if arch == "phi3":
            qkv = _ref_linear(w, x, f"{p}.self_attn.qkv_proj", bias=False)
            q, k, v = np.split(qkv, [nh * d, (nh + kvh) * d], axis=-1)
        else:
            q, k, v = (_ref_linear(w, x, f"{p}.self_attn.{n}", bias=False) for n in ("q_proj", "k_proj", "v_proj"))
        q, k, v = _heads(q, nh), _heads(k, kvh), _heads(v, kvh)
        if arch == "qwen3":
            q = _ref_rmsnorm(w[f"{p}.self_attn.q_norm.weight"], q, eps)
            k = _ref_rmsnorm(w[f"{p}.self_attn.k_norm.weight"], k, eps)
        q, k = _ref_rope(q, rd, c["theta"]), _ref_rope(k, rd, c["theta"])
        ctx = _merge(_ref_attention(q, k, v, allowed, d ** -0.5))
        h = h + _ref_linear(w, ctx, f"{p}.self_attn.o_proj", bias=False)
        x = norm(h, f"{p}.post_attention_layernorm.weight")
        if arch == "phi3":
            gate, up = np.split(_ref_linear(w, x, f"{p}.mlp.gate_up_proj", bias=False), 2, axis=-1)
        else:
            gate = _ref_linear(w, x, f"{p}.mlp.gate_proj", bias=False)
            up = _ref_linear(w, x, f"{p}.mlp.up_proj", bias=False)
        act = _ref_gelu(gate, tanh=True) if gemma else gate / (1.0 + np.exp(-gate))
        h = h + _ref_linear(w, act * up, f"{p}.mlp.down_proj", bias=False)
    h = norm(h, "model.norm.weight")
    head = w["model.embed_tokens.weight"] if c.get("tie") else w["lm_head.weight"]
    return {"logits": h @ head.T}


def ref_gpt_neox(w, c, feeds):
    ids, mask = feeds["input_ids"], feeds["attention_mask"]
    nh, eps = c["heads"], c["eps"]
    d = c["hidden"] // nh
    h = w["gpt_neox.embed_in.weight"][ids]
    allowed = _ref_allowed(mask, causal=True)
    for i in range(c["layers"]):
        p = f"gpt_neox.layers.{i}"
        x = _ref_layernorm(w, h, f"{p}.input_layernorm", eps)
        qkv = _heads(_ref_linear(w, x, f"{p}.attention.query_key_value"), nh)  # [B, heads, S, 3d]
        q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
        rd = int(d * c["rotary_pct"])
        q, k = _ref_rope(q, rd, c["theta"]), _ref_rope(k, rd, c["theta"])
        attn = _ref_linear(w, _merge(_ref_attention(q, k, v, allowed, d ** -0.5)), f"{p}.attention.dense")
        m = _ref_layernorm(w, h, f"{p}.post_attention_layernorm", eps)
        m = _ref_linear(w, _ref_gelu(_ref_linear(w, m, f"{p}.mlp.dense_h_to_4h")), f"{p}.mlp.dense_4h_to_h")
        h = h + attn + m
    h = _ref_layernorm(w, h, "gpt_neox.final_layer_norm", eps)
    return {"logits": _ref_linear(w, h, "embed_out", bias=False)}


def ref_phi(w, c, feeds):
    ids, mask = feeds["input_ids"], feeds["attention_mask"]
    nh, eps = c["heads"], c["eps"]
    d = c["hidden"] // nh
    rd = int(d * c["partial_rotary"])
    h = w["model.embed_tokens.weight"][ids]
    allowed = _ref_allowed(mask, causal=True)
    for i in range(c["layers"]):
        p = f"model.layers.{i}"
        x = _ref_layernorm(w, h, f"{p}.input_layernorm", eps)
        q, k, v = (_heads(_ref_linear(w, x, f"{p}.self_attn.{n}"), nh) for n in ("q_proj", "k_proj", "v_proj"))
        q, k = _ref_rope(q, rd, c["theta"]), _ref_rope(k, rd, c["theta"])
        attn = _ref_linear(w, _merge(_ref_attention(q, k, v, allowed, d ** -0.5)), f"{p}.self_attn.dense")
        m = _ref_linear(w, _ref_gelu(_ref_linear(w, x, f"{p}.mlp.fc1"), tanh=True), f"{p}.mlp.fc2")
        h = attn + m + h
    h = _ref_layernorm(w, h, "model.final_layernorm", eps)
    return {"logits": _ref_linear(w, h, "lm_head")}


def _ref_t5_buckets(s, num_buckets, max_distance):
    """T5's bidirectional relative position buckets of key j for query i (relative position
    j - i): half the buckets per sign, exact below max_exact, log-spaced up to max_distance. The
    log branch in float32 and truncated, as PyTorch computes it (relative_position.float())."""
    rel = np.arange(s)[None, :] - np.arange(s)[:, None]
    half = num_buckets // 2
    max_exact = half // 2
    a = np.abs(rel)
    scaled = (np.log(np.maximum(a, 1).astype(np.float32) / np.float32(max_exact))
              / np.float32(math.log(max_distance / max_exact)) * np.float32(half - max_exact))
    large = np.minimum(max_exact + scaled.astype(np.int64), half - 1)
    return (rel > 0) * half + np.where(a < max_exact, a, large)


def ref_t5_encoder(w, c, feeds):
    ids, mask = feeds["input_ids"], feeds["attention_mask"]
    nh, eps = c["heads"], c["eps"]

    def norm(x, path):
        return _ref_rmsnorm(w[path], x, eps)

    def lin(x, path):
        return x @ w[path].T

    h = w["shared.weight"][ids]
    buckets = _ref_t5_buckets(ids.shape[1], c["buckets"], c["max_distance"])
    table = w["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]
    bias = table[buckets].transpose(2, 0, 1)[None]  # [1, heads, q, k]
    allowed = _ref_allowed(mask, causal=False)
    for i in range(c["layers"]):
        p = f"encoder.block.{i}.layer"
        x = norm(h, f"{p}.0.layer_norm.weight")
        q, k, v = (_heads(lin(x, f"{p}.0.SelfAttention.{n}.weight"), nh) for n in "qkv")
        h = h + lin(_merge(_ref_attention(q, k, v, allowed, 1.0, bias)), f"{p}.0.SelfAttention.o.weight")
        x = norm(h, f"{p}.1.layer_norm.weight")
        h = h + lin(np.maximum(lin(x, f"{p}.1.DenseReluDense.wi.weight"), 0.0), f"{p}.1.DenseReluDense.wo.weight")
    return {"last_hidden_state": norm(h, "encoder.final_layer_norm.weight")}


REFERENCES = {
    "distilbert": ref_distilbert,
    "mistral": lambda w, c, f: ref_decoder(w, c, f, "mistral"),
    "gemma": lambda w, c, f: ref_decoder(w, c, f, "gemma"),
    "qwen3": lambda w, c, f: ref_decoder(w, c, f, "qwen3"),
    "phi3": lambda w, c, f: ref_decoder(w, c, f, "phi3"),
    "gpt_neox": ref_gpt_neox,
    "phi": ref_phi,
    "t5": ref_t5_encoder,
}


BUILDERS = {"bert": bert_family, "roberta": bert_family, "vit": vit, "gpt2": gpt2,
            "llama": llama_family, "qwen2": llama_family, "distilbert": distilbert, "mistral": decoder_dynamo,
            "gemma": decoder_dynamo, "qwen3": decoder_dynamo, "phi3": decoder_dynamo, "gpt_neox": gpt_neox,
            "phi": phi, "t5": t5_encoder}
DECODERS = ("gpt2", "llama", "qwen2", "mistral", "gemma", "qwen3", "phi3", "gpt_neox", "phi")


def write(name, size, static_shape, out_dir, seed, save_weights=False):
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
    if save_weights:
        np.savez(os.path.join(out_dir, stem + ".weights.npz"), **g.weights)

    def dims(vi):
        return [x.dim_param or x.dim_value for x in vi.type.tensor_type.shape.dim]

    return {
        "name": stem, "variant": name, "file": stem + ".onnx", "arch": v["arch"], "form": v["form"],
        "attention": v["attn"], "static": bool(v.get("static")), "layers": c["layers"],
        "vocab": c.get("vocab"), "decoder": v["arch"] in DECODERS, "config": c,
        "reference": v["arch"] in REFERENCES,
        "inputs": [{"name": x.name, "dtype": {TensorProto.INT64: "int64", TensorProto.FLOAT: "float32"}
                    [x.type.tensor_type.elem_type], "dims": dims(x)} for x in model.graph.input],
        "outputs": [{"name": x.name, "dims": dims(x)} for x in model.graph.output],
    }


def reference(models_dir, name, in_dir, out_dir):
    """The numpy reference of a written model (REFERENCES) on .npy inputs."""
    entry = {m["name"]: m for m in json.load(open(os.path.join(models_dir, "models.json")))}.get(name)
    if entry is None or not entry.get("reference"):
        print(f"no numpy reference for {name}", file=sys.stderr)
        return 2
    stem = entry["file"][:-len(".onnx")]
    with np.load(os.path.join(models_dir, stem + ".weights.npz")) as z:
        weights = {k: z[k].astype(np.float64) for k in z.files}
    feeds = {x["name"]: np.load(os.path.join(in_dir, x["name"] + ".npy")) for x in entry["inputs"]}
    outputs = REFERENCES[entry["arch"]](weights, entry["config"], feeds)
    os.makedirs(out_dir, exist_ok=True)
    for k, arr in outputs.items():
        np.save(os.path.join(out_dir, k + ".npy"), arr.astype(np.float32))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--only", help="comma-separated model names (default: all)")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--static", default="1x32", help="BxS of static exports (default 1x32)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    parser.add_argument("--weights", action="store_true",
                        help="also save each model's parameters as <name>.weights.npz (what --reference reads)")
    parser.add_argument("--reference", metavar="NAME",
                        help="instead of writing models: compute model NAME of OUT_DIR (written with --weights) "
                             "in numpy on the inputs in --inputs, writing <output>.npy to --outputs")
    parser.add_argument("--inputs", help="--reference: folder of <input>.npy")
    parser.add_argument("--outputs", help="--reference: folder for <output>.npy")
    a = parser.parse_args()
    if a.list:
        print("\n".join(VARIANTS))
        return 0
    if not a.out_dir:
        parser.error("OUT_DIR is required")
    if a.reference:
        return reference(a.out_dir, a.reference, a.inputs, a.outputs)
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
        entry = write(n, a.size, static_shape, a.out_dir, a.seed + k, a.weights)
        index[entry["name"]] = entry
        print(os.path.join(a.out_dir, entry["file"]))
    with open(index_path, "w") as f:
        json.dump(sorted(index.values(), key=lambda m: m["name"]), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
