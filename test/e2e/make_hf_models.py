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
  bert_sdpa_opset14, gpt2_sdpa_opset14
                    BERT and GPT-2 through the TorchScript exporter with opset_version=14, as
                    many export scripts still ask: LayerNorm decomposed (ReduceMean, Sub, Pow,
                    ReduceMean, Add, Sqrt, Div, Mul, Add), the rest as at opset 17.
  llama_eager, mistral_eager
                    Llama and Mistral with attn_implementation="eager" through the dynamo
                    exporter: MatMul over a Transpose of the repeated key, Mul by the scale after
                    the product, Where(mask, 0, lowest) added, Softmax, no IsNaN guard.
  llama_sdpa_opset23, bert_dynamo_sdpa_opset23, gemma_sdpa_opset23
                    the same models exported with opset_version=23: torchlib writes SDPA as the
                    Attention op (4-D heads, the bool mask, transformers' scale) and GELUs as the
                    opset-20 Gelu op; everything else as at opset 18.

The architectures from DistilBERT on (in any export form) have numpy references (ref_*, the
model's math written from its Hugging Face definition): `--weights` saves each model's parameters
beside it, `--reference NAME` computes NAME's outputs from them on .npy inputs, so ONNX Runtime's
outputs can be checked against the model rather than against the graph.

Dynamic models have dynamic batch and sequence axes as the exporters write them with
dynamic_axes / dynamic_shapes; fix them with `ortc ... --input-shape input_ids=1x32 ...`.
Beside the models, models.json describes each: file, inputs (name, dtype, dims with symbols),
outputs, vocabulary size, decoder or not.

This file is the command line; the generator is the package hf_models/ beside it: writer.py (the
graph writer, naming as the exporters do), torchscript_ops.py and dynamo_ops.py (each exporter's
subgraphs: sizes, masks, SDPA, norms, GELUs, rotary), encoders.py (BERT, RoBERTa, ViT,
DistilBERT), t5.py, gpt.py (GPT-2, GPT-NeoX, Phi-2), llama.py (Llama, Qwen2, Mistral, Gemma, Qwen3,
Phi-3), references.py (the numpy references), configs.py (sizes and variants), generate.py (one
model written with its models.json entry, a reference run).

Usage: make_hf_models.py OUT_DIR [--only NAME,...] [--size small|base] [--static BxS] [--weights] [--list]
       make_hf_models.py OUT_DIR --reference NAME --inputs IN_DIR --outputs OUT_DIR
"""
import argparse
import json
import os
import sys

from hf_models.configs import SIZES, VARIANTS
from hf_models.generate import reference, write


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
