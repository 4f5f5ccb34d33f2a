"""GPT-style causal LMs with LayerNorm and biases: GPT2LMHeadModel (TorchScript, SDPA or eager),
GPTNeoXForCausalLM and PhiForCausalLM (Phi-2) in the dynamo form."""
import numpy as np
from onnx import TensorProto, numpy_helper

from .dynamo_ops import (BoolMask, dy_gelu_erf, dy_gelu_new, dy_layernorm, dy_linear, dy_list, dy_mask,
                         dy_rotary_tables, dy_rotate, dy_sdpa, dy_size)
from .torchscript_ops import (ts_arange, ts_gelu_tanh, ts_layernorm, ts_list, ts_mask, ts_sdpa, ts_size, ts_size_last,
                              ts_unsqueeze)
from .writer import F32_LOWEST


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
