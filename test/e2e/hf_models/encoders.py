"""Bidirectional encoders: BertModel and RobertaModel (TorchScript, SDPA or eager), BertModel in the
dynamo form, ViTModel (TorchScript, eager) and DistilBertModel (TorchScript, SDPA)."""
import math

import numpy as np
from onnx import TensorProto

from .dynamo_ops import BoolMask, dy_expand, dy_gelu_op, dy_linear, dy_list, dy_mask, dy_sdpa, dy_size
from .torchscript_ops import (ts_expand, ts_gelu_erf, ts_layernorm, ts_linear, ts_list, ts_mask, ts_sdpa, ts_size,
                              ts_unsqueeze)
from .writer import F32_LOWEST


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
        if g.opset >= 20:
            x = dy_gelu_op(g, x, "none")
        else:
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
