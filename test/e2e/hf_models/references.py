"""numpy references of the generated models (DistilBERT, T5 encoder, Mistral, Gemma, Qwen3, Phi-3,
GPT-NeoX, Phi-2), written from the Hugging Face definitions, to check the graphs against."""
import math

import numpy as np

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
