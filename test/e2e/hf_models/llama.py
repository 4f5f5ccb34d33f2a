"""Llama-family causal LMs in the dynamo form (RMSNorm, rotary, gated MLP): Llama and Qwen2, dynamic
or static, and Mistral, Gemma, Qwen3 and Phi-3 with their departures from Llama."""
import numpy as np
from onnx import TensorProto

from .dynamo_ops import (BoolMask, dy_attend, dy_expand, dy_gelu_tanh, dy_linear, dy_list, dy_mask, dy_repeat_kv, dy_rmsnorm,
                         dy_rmsnorm_gemma, dy_rotary_tables, dy_rotate, dy_sdpa_core, dy_size)
from .writer import INT64_MAX


def llama_family(g, c, v, B, S):
    """LlamaForCausalLM / Qwen2ForCausalLM, dynamo form, SDPA or eager attention (v["attn"]);
    static (ints B, S) folds every shape, mask and rotary computation into initializers as the
    exporter's optimizer does."""
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
            ctx = dy_attend(g, v, q, kk, vv, mask, d)
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

def decoder_dynamo(g, c, v, B, S):
    """Llama-like causal LMs, dynamo form, SDPA or eager attention, positions from cache_position;
    per architecture:
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
        ctx = dy_attend(g, v, q, kk, vv, mask, d)
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
