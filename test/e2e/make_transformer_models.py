"""Writes transformer test models the way PyTorch's ONNX exporter writes Hugging Face-style code
(random weights, fixed seed; no pretrained model is named or downloaded):

  bert_<size>.onnx  encoder: input_ids + int64 attention_mask (turned into an additive mask by
                    Unsqueeze/Cast/Sub/Mul), position ids sliced from a buffer by the sequence
                    length, erf GELU, LayerNorm (opset 17 op, or with --decomposed-layernorm the
                    ReduceMean/Sub/Pow/Sqrt/Div chain older exporters write), pooler.
  gpt_<size>.onnx   decoder: input_ids, position ids from Range(seq_len), fused QKV Gemm + Split,
                    causal mask sliced from a lower-triangular buffer (or --causal trilu:
                    torch.tril at run time, a Trilu node) applied with Where, scale by Div,
                    tanh GELU written out, logits through the tied token embedding.

--mask-style modern writes the masks as newer Hugging Face code does: BERT expands the mask and
uses masked_fill (Expand, Cast, Where); GPT takes an attention_mask, derives positions with
CumSum/Equal/Where and builds one additive causal + padding mask (ConstantOfShape, Range, Less,
Expand, Where).
Sequence and batch axes are exported dynamic, as exporters do, so the mask, position and shape
chains stay in the graph; fix them with `ortc compile --input-shape input_ids=1x128,...`.
Sizes: small (2 layers, hidden 64) and base (12 layers, hidden 768, BERT-base/GPT-2 small).
Usage: make_transformer_models.py OUT_DIR [--size small|base] [--decomposed-layernorm]
       [--causal buffer|trilu] [--mask-style legacy|modern] [--opset N]
"""
import argparse
import math
import os

import torch

SIZES = {
    "small": dict(vocab=1000, hidden=64, heads=4, layers=2, ffn=256, max_pos=256),
    "base": dict(vocab=30522, hidden=768, heads=12, layers=12, ffn=3072, max_pos=512),
}


class LayerNormDecomposed(torch.nn.Module):
    """LayerNorm as older exporters wrote it: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div."""

    def __init__(self, hidden, eps=1e-12):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.bias = torch.nn.Parameter(torch.zeros(hidden))
        self.eps = eps

    def forward(self, x):
        u = x.mean(-1, keepdim=True)
        s = (x - u).pow(2).mean(-1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight * x + self.bias


def layer_norm(hidden, decomposed, eps):
    return LayerNormDecomposed(hidden, eps) if decomposed else torch.nn.LayerNorm(hidden, eps=eps)


class BertSelfAttention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.head_dim = c["heads"], c["hidden"] // c["heads"]
        self.query = torch.nn.Linear(c["hidden"], c["hidden"])
        self.key = torch.nn.Linear(c["hidden"], c["hidden"])
        self.value = torch.nn.Linear(c["hidden"], c["hidden"])

    def split_heads(self, x):
        x = x.view(x.size()[:-1] + (self.heads, self.head_dim))
        return x.permute(0, 2, 1, 3)

    def forward(self, h, additive_mask):
        q, k, v = self.split_heads(self.query(h)), self.split_heads(self.key(h)), self.split_heads(self.value(h))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + additive_mask, dim=-1)
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return context.view(context.size()[:-2] + (self.heads * self.head_dim,))


class BertLayer(torch.nn.Module):
    def __init__(self, c, decomposed):
        super().__init__()
        self.attention = BertSelfAttention(c)
        self.attention_out = torch.nn.Linear(c["hidden"], c["hidden"])
        self.attention_norm = layer_norm(c["hidden"], decomposed, 1e-12)
        self.intermediate = torch.nn.Linear(c["hidden"], c["ffn"])
        self.output = torch.nn.Linear(c["ffn"], c["hidden"])
        self.output_norm = layer_norm(c["hidden"], decomposed, 1e-12)

    def forward(self, h, additive_mask):
        h = self.attention_norm(self.attention_out(self.attention(h, additive_mask)) + h)
        inner = torch.nn.functional.gelu(self.intermediate(h))  # erf GELU
        return self.output_norm(self.output(inner) + h)


class BertEncoder(torch.nn.Module):
    def __init__(self, c, decomposed, mask_style):
        super().__init__()
        self.mask_style = mask_style
        self.word = torch.nn.Embedding(c["vocab"], c["hidden"])
        self.position = torch.nn.Embedding(c["max_pos"], c["hidden"])
        self.token_type = torch.nn.Embedding(2, c["hidden"])
        self.register_buffer("position_ids", torch.arange(c["max_pos"]).expand((1, -1)))
        self.embed_norm = layer_norm(c["hidden"], decomposed, 1e-12)
        self.layers = torch.nn.ModuleList([BertLayer(c, decomposed) for _ in range(c["layers"])])
        self.pooler = torch.nn.Linear(c["hidden"], c["hidden"])

    def forward(self, input_ids, attention_mask):
        seq = input_ids.size(1)
        positions = self.position_ids[:, :seq]
        token_types = torch.zeros_like(input_ids)
        h = self.word(input_ids) + self.token_type(token_types) + self.position(positions)
        h = self.embed_norm(h)
        if self.mask_style == "modern":  # expand + masked_fill, as newer Hugging Face code writes it
            b, s = attention_mask.shape
            expanded = attention_mask[:, None, None, :].expand(b, 1, s, s).to(h.dtype)
            inverted = 1.0 - expanded
            additive_mask = inverted.masked_fill(inverted.to(torch.bool), torch.finfo(h.dtype).min)
        else:
            mask = attention_mask[:, None, None, :].to(h.dtype)
            additive_mask = (1.0 - mask) * torch.finfo(h.dtype).min
        for layer in self.layers:
            h = layer(h, additive_mask)
        pooled = torch.tanh(self.pooler(h[:, 0]))
        return h, pooled


class GptConv1D(torch.nn.Module):
    """GPT-2's Conv1D: addmm over the flattened rows (exported as Reshape, Gemm, Reshape)."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(n_in, n_out) * 0.02)
        self.bias = torch.nn.Parameter(torch.randn(n_out) * 0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.weight.size(-1),)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GptAttention(torch.nn.Module):
    def __init__(self, c, causal):
        super().__init__()
        self.heads, self.head_dim, self.hidden = c["heads"], c["hidden"] // c["heads"], c["hidden"]
        self.c_attn = GptConv1D(c["hidden"], 3 * c["hidden"])
        self.c_proj = GptConv1D(c["hidden"], c["hidden"])
        self.causal = causal
        n = c["max_pos"]
        self.register_buffer("bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n))

    def split_heads(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, h, additive_mask=None):
        q, k, v = self.c_attn(h).split(self.hidden, dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype, device=w.device)
        q_len, k_len = q.size(-2), k.size(-2)
        if self.causal == "trilu":
            causal_mask = torch.tril(torch.ones((q_len, k_len), dtype=torch.bool, device=w.device))
            causal_mask = causal_mask.view(1, 1, q_len, k_len)
        else:
            causal_mask = self.bias[:, :, k_len - q_len : k_len, :k_len]
        if additive_mask is not None:  # modern: one additive mask, causal and padding together
            w = w + additive_mask
        else:
            mask_value = torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype, device=w.device)
            w = torch.where(causal_mask, w, mask_value)
        w = torch.softmax(w, dim=-1)
        out = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        return self.c_proj(out.view(out.size()[:-2] + (self.hidden,)))


class GptBlock(torch.nn.Module):
    def __init__(self, c, causal, decomposed):
        super().__init__()
        self.ln_1 = layer_norm(c["hidden"], decomposed, 1e-5)
        self.attn = GptAttention(c, causal)
        self.ln_2 = layer_norm(c["hidden"], decomposed, 1e-5)
        self.c_fc = GptConv1D(c["hidden"], c["ffn"])
        self.c_proj = GptConv1D(c["ffn"], c["hidden"])

    def forward(self, h, additive_mask=None):
        h = h + self.attn(self.ln_1(h), additive_mask)
        return h + self.c_proj(gelu_tanh(self.c_fc(self.ln_2(h))))


class GptDecoder(torch.nn.Module):
    def __init__(self, c, causal, decomposed, mask_style):
        super().__init__()
        self.mask_style = mask_style
        self.wte = torch.nn.Embedding(c["vocab"], c["hidden"])
        self.wpe = torch.nn.Embedding(c["max_pos"], c["hidden"])
        self.blocks = torch.nn.ModuleList([GptBlock(c, causal, decomposed) for _ in range(c["layers"])])
        self.ln_f = layer_norm(c["hidden"], decomposed, 1e-5)

    def forward(self, input_ids, attention_mask=None):
        # Tensors made in forward are made on the inputs' device: the benchmark runs this module on
        # a GPU (scripts/gpu_bench); the exported graph is the same (the device is not traced).
        seq = input_ids.size(-1)
        additive_mask = None
        if self.mask_style == "modern":
            # Positions from the padding mask (CumSum, Equal, Where); the causal mask from
            # ConstantOfShape, Range, Less and Where; padding folded in with Expand and Where.
            positions = attention_mask.long().cumsum(-1) - 1
            positions = positions.masked_fill(attention_mask == 0, 1)
            h = self.wte(input_ids) + self.wpe(positions)
            low = torch.finfo(h.dtype).min
            causal = torch.full((seq, seq), low, device=h.device)
            cond = torch.arange(seq, device=h.device)
            causal = causal.masked_fill(cond < (cond + 1).view(seq, 1), 0.0)
            b = input_ids.size(0)
            causal = causal[None, None, :, :].expand(b, 1, seq, seq)
            padding = attention_mask[:, None, None, :].expand(b, 1, seq, seq).to(h.dtype)
            additive_mask = causal.masked_fill((1.0 - padding).to(torch.bool), low)
        else:
            positions = torch.arange(0, seq, dtype=torch.long, device=input_ids.device).unsqueeze(0)
            h = self.wte(input_ids) + self.wpe(positions)
        for block in self.blocks:
            h = block(h, additive_mask)
        h = self.ln_f(h)
        return torch.matmul(h, self.wte.weight.t())  # tied embedding


def randomise(model):
    """Random but well-scaled weights: LayerNorm gains near 1 so the outputs carry signal."""
    for name, p in model.named_parameters():
        with torch.no_grad():
            if p.dim() == 1 and ("norm" in name or "ln_" in name) and name.endswith("weight"):
                p.uniform_(0.8, 1.2)
            elif p.dim() == 1:
                p.uniform_(-0.1, 0.1)
            else:
                p.normal_(0.0, 0.05)
    return model


def export(model, args, names, outputs, path, opset):
    model.eval()
    dynamic = {n: {0: "batch", 1: "sequence"} for n in names + outputs}
    dynamic.update({n: {0: "batch"} for n in outputs if n == "pooler_output"})
    with torch.no_grad():
        torch.onnx.export(model, args, path, opset_version=opset, input_names=names, output_names=outputs,
                          dynamic_axes=dynamic,
                          do_constant_folding=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--decomposed-layernorm", action="store_true")
    parser.add_argument("--causal", choices=["buffer", "trilu"], default="buffer")
    parser.add_argument("--mask-style", choices=["legacy", "modern"], default="legacy")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--only", choices=["bert", "gpt"])
    a = parser.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    c = SIZES[a.size]
    suffix = a.size + ("_decomposed" if a.decomposed_layernorm else "") + ("_trilu" if a.causal == "trilu" else "")
    suffix += "_modern" if a.mask_style == "modern" else ""
    torch.manual_seed(0)
    ids = torch.randint(0, c["vocab"], (1, 8))
    mask = torch.ones(1, 8, dtype=torch.long)
    if a.only in (None, "bert"):
        bert = randomise(BertEncoder(c, a.decomposed_layernorm, a.mask_style))
        path = os.path.join(a.out_dir, f"bert_{suffix}.onnx")
        export(bert, (ids, mask), ["input_ids", "attention_mask"], ["last_hidden_state", "pooler_output"], path, a.opset)
        print(path)
    if a.only in (None, "gpt"):
        gpt = randomise(GptDecoder(c, a.causal, a.decomposed_layernorm, a.mask_style))
        path = os.path.join(a.out_dir, f"gpt_{suffix}.onnx")
        if a.mask_style == "modern":
            export(gpt, (ids, mask), ["input_ids", "attention_mask"], ["logits"], path, a.opset)
        else:
            export(gpt, (ids,), ["input_ids"], ["logits"], path, a.opset)
        print(path)


if __name__ == "__main__":
    main()
