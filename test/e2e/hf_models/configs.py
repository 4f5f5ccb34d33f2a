"""What make_hf_models.py can write: each architecture's sizes (small as the fixtures, base as the
usual checkpoints) and each variant's architecture, exporter form and attention implementation."""

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
    # torch.onnx.export(..., dynamo=False, opset_version=14): LayerNorm decomposed
    "bert_sdpa_opset14": dict(arch="bert", form="torchscript", attn="sdpa", opset=14),
    "gpt2_sdpa_opset14": dict(arch="gpt2", form="torchscript", attn="sdpa", conv1d="gemm", opset=14),
    # attn_implementation="eager" through the dynamo exporter: MatMul over a transposed key,
    # scale after the product, the float mask added, Softmax, no IsNaN guard.
    "llama_eager": dict(arch="llama", form="dynamo", attn="eager", kv_heads=2),
    "mistral_eager": dict(arch="mistral", form="dynamo", attn="eager"),
    # torch.onnx.export(..., dynamo=True, opset_version=23): SDPA as the Attention op, GELUs as
    # the Gelu op; the rest as at opset 18.
    "llama_sdpa_opset23": dict(arch="llama", form="dynamo", attn="sdpa", kv_heads=2, opset=23),
    "bert_dynamo_sdpa_opset23": dict(arch="bert", form="dynamo", attn="sdpa", opset=23),
    "gemma_sdpa_opset23": dict(arch="gemma", form="dynamo", attn="sdpa", opset=23),
}
