"""T5EncoderModel in the TorchScript form with T5's eager attention: RMS LayerNorms without bias
and the bucketed relative position bias of block 0, shared by every layer."""
import math

import numpy as np
from onnx import TensorProto, numpy_helper

from .torchscript_ops import ts_arange, ts_list, ts_mask, ts_size, ts_unsqueeze
from .writer import F32_LOWEST, INT64_MAX


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
