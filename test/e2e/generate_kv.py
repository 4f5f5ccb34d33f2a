"""`ortc generate` against ONNX Runtime 1.30 on generated decoders with a KV cache, two families,
each written in two export forms: a Llama-style decoder (make_kv_decoder.py: RMSNorm, rotary,
grouped-query attention, SwiGLU) and a GPT-2-style one (make_gpt2_kv_decoder.py: LayerNorm with
bias, learned position embedding, fused QKV, full multi-head attention, tanh GELU, tied LM head);
the Llama pair also with its attention as opset 23's Attention op (PyTorch's export of SDPA from
opset 23 on), a third entry of FAMILIES.
The Hugging Face form is a prefill graph and a decode graph (the cache concatenated inside it);
ONNX Runtime GenAI's form is one model with com.microsoft ops for every step. Every check below
runs on each family (FAMILIES):

1. The generated pair is a consistent KV-cache model: ONNX Runtime's greedy tokens, fed back
   through the prefill graph as one sequence, are the argmax at every position (teacher forcing),
   so the decode graph's cache carries what recomputing the whole sequence gives.
2. `ortc generate` on the plain ONNX models gives ONNX Runtime's 32 greedy tokens, for two
   prompts of different lengths.
3. The pair compiled as one `--share-weights` group for the CPU (two ctx models, one binary,
   every weight stored once: the decode model adds no bytes) gives the same tokens, and the JSON
   report has the fields schemas/cli_reports.md lists.
   The pair at static shapes with a padded cache (the prefill at the prompt's length, the decode
   step with a past of 63 rows and a mask of 64, each model's shapes a --shape-profile naming
   it; one group): one compiled decode graph serves every step (the runtime keeps the valid
   rows first and moves each appended row to the first free one) and gives the same tokens;
   asking past the cache is an error.
4. The GenAI form, compiled for the CPU: the same tokens as ONNX Runtime, starting from empty
   caches. Llama: GroupQueryAttention with rotary, SimplifiedLayerNormalization,
   SkipSimplifiedLayerNormalization, MatMulNBits 4-bit weights (its own weights). GPT-2:
   GroupQueryAttention on a packed QKV with kv_num_heads == num_heads and no rotary,
   LayerNormalization, SkipLayerNormalization with bias, FastGelu with bias, position
   embeddings by position_ids; the same weights as its pair, so ONNX Runtime's tokens must
   also equal the pair's.
   The GenAI model compiled at static shapes with a fixed-size cache (attention_mask and caches
   of 64 positions, the mask zero past the valid ones) as one weight-sharing group of two shape
   profiles (--shape-profile prefill / decode: two ctx models, one binary, each weight once): one
   compiled decode graph serves every step and gives the same tokens; asking past the cache is
   an error.
5. CUDA, at one decode step's static shapes: each graph (the prefill, the decode step with a
   growing and with a padded cache, for Llama also with a 9000-row cache that the decode kernel
   splits over its keys, the GenAI model with a growing and with a fixed-size cache) compiles as one CUDA group with no
   node left to the CPU (the GenAI model's int64 mask sum, seqlens_k, included), every
   attention recognised (the decode steps' as decode kernels; the Llama family's rotations as
   rotary ops in both forms, q's read rotated by the decode kernel itself), and its CUDA program agrees with the CPU runtime in the host
   emulator at fp32 and fp16 (skipped with a note without NVRTC).
6. Misuse is an error with a message and a nonzero exit, never a crash: the models swapped, a
   prompt that is not a list of ids.
7. Generation through the compiled CUDA programs: the GenAI model compiled for --ep cuda,cpu
   at the prefill's and the decode step's static shapes (fixed-size cache; the two profiles one
   group, one CUDA binary), run by `ortc
   generate` with the emulator backend plugin (the CUDA programs executed on the host, "device"
   memory being host memory): ONNX Runtime's 32 tokens at fp32, with the cache kept in device
   memory from the prefill to the last step ("kv_cache": "device"). The same for the Hugging
   Face pair with a padded cache, compiled for --ep cuda,cpu as one group (one CUDA group each).
8. The same generation through the real CUDA plugin and the stand-in CUDA libraries (which
   record every call and count the bytes each copy moves): one CUDA graph launch per token,
   across the bus only the ids, mask and positions in and the logits out, never the cache, no
   device-to-device copy of it either (bound into the captured graphs) but, for the padded
   cache, each new row moved once from the end of the present to the first free row, and
   the group's weights uploaded once for the prefill and decode sessions together.
Usage: generate_kv.py ORTC_BINARY WORK_DIR [EMULATOR_BINARY EMULATOR_PLUGIN_DIR [STANDIN_DIR]]
Exit 77 (skip) when onnxruntime-node is not installed.
"""
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NEW_TOKENS = 32
FIXED = 64  # positions of the fixed-size cache
PROMPTS = ([5, 17, 42, 8], [90, 3, 3, 61, 27, 11, 0, 54, 19])
CUDA_PROMPT = 8  # the CUDA checks' shapes: a prompt of 8, then a decode step at length 9
# A decode step past one block's keys (codegen's kDecodeMaxKeys, 8192): the decode kernel splits
# the cache's keys into runs on blocks of their own and merges them.
LONG_PAST = 9000


@dataclass
class Family:
    """A generated decoder: `script` writes <stem>_prefill.onnx, <stem>_decode.onnx and
    <stem>_genai.onnx into a folder."""
    name: str
    script: str
    stem: str
    genai_same_weights: bool  # the GenAI form is the pair's model: ONNX Runtime's tokens agree
    # Positions of its rotary table (make_kv_decoder.py's MAX_POSITIONS), when its decode graph
    # takes a cache of any length: the long-cache CUDA check reads random positions from it.
    # GPT-2's learned positions and causal table stop at 128, so it has no such check.
    rotary_positions: int = 0
    args: tuple = ()  # the script's options beyond the folder and the seed
    # MatMuls of the GenAI form its CPU compile keeps at 4 bits (MatMulInt4): the MLP's
    # MatMulNBits, large enough not to be dequantized at graph level.
    genai_int4_matmuls: int = 0

    def path(self, work, kind):
        return os.path.join(work, f"{self.stem}_{kind}.onnx")


# Seed 1: greedy continuations that vary (16 to 23 distinct tokens in 32, both families), a
# stronger check than a model that repeats one token.
SEED = 1
FAMILIES = (Family("Llama", "make_kv_decoder.py", "kv", genai_same_weights=False, rotary_positions=256,
                   genai_int4_matmuls=6),
            Family("GPT-2", "make_gpt2_kv_decoder.py", "gpt2", genai_same_weights=True),
            # The Llama pair as PyTorch exports SDPA from opset 23 on: one Attention op a layer
            # (GQA over the unrepeated key/value heads, a boolean mask).
            Family("Llama (opset-23 Attention)", "make_kv_decoder.py", "kv23", genai_same_weights=False,
                   rotary_positions=256, args=("--attention-op",), genai_int4_matmuls=6))


def run(cmd, ok=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if ok and r.returncode != 0:
        raise SystemExit(f"FAILED ({r.returncode}): {' '.join(cmd)}\n{r.stdout}")
    return r


def model_inputs(model):
    """{name: dims} of a model's graph inputs, a run-time size as None."""
    graph = onnx.load(model, load_external_data=False).graph
    return {i.name: [d.dim_value if d.HasField("dim_value") else None for d in i.type.tensor_type.shape.dim]
            for i in graph.input}


def cache_shapes(model, past_rows):
    """{past input: [1, heads, past_rows, head size]} from the model's cache inputs."""
    return {n: [1, d[1], past_rows, d[3]] for n, d in model_inputs(model).items() if n.startswith("past")}


def shape_args(shapes):
    return [a for n, d in shapes.items() for a in ("--input-shape", f"{n}=" + "x".join(map(str, d)))]


def ort_tokens(prefill, decode, prompt, empty_cache=None):
    extra = [",".join(map(str, empty_cache))] if empty_cache else []
    out = run(["node", os.path.join(ROOT, "test", "reference", "ort_generate.js"), prefill, decode,
               ",".join(map(str, prompt)), str(NEW_TOKENS)] + extra).stdout
    tokens = json.loads(out)["tokens"]
    assert len(tokens) == NEW_TOKENS, tokens
    return tokens


def teacher_forced_argmax(work, prefill, ids):
    """ONNX Runtime's prefill graph over the whole sequence: the argmax at every position."""
    feeds = {"input_ids": np.array([ids], np.int64), "attention_mask": np.ones([1, len(ids)], np.int64),
             "position_ids": np.arange(len(ids), dtype=np.int64)[None, :]}
    args = []
    for name, value in feeds.items():
        np.save(os.path.join(work, f"tf_{name}.npy"), value)
        args.append(f"{name}={os.path.join(work, f'tf_{name}.npy')}")
    out_dir = os.path.join(work, "tf_out")
    run(["node", os.path.join(ROOT, "test", "reference", "ort_run.js"), prefill, out_dir] + args)
    return np.load(os.path.join(out_dir, "logits.npy"))[0].argmax(-1).tolist()


def ortc_generate(ortc, prefill, decode, prompt):
    r = run([ortc, "generate", prefill, decode, "--prompt-ids", ",".join(map(str, prompt)),
             "--max-new-tokens", str(NEW_TOKENS), "--json"])
    report = json.loads(r.stdout)
    for key in ("ok", "prompt_tokens", "tokens", "time_to_first_token_ms", "decode_steps",
                "decode_ms_per_token", "decode_tokens_per_s"):
        assert key in report, f"ortc generate --json has no '{key}': {report}"
    assert report["prompt_tokens"] == len(prompt) and report["decode_steps"] == NEW_TOKENS - 1, report
    return report


def check_pair(ortc, work, fam):
    """Checks 1-3 on the Hugging Face pair; returns ONNX Runtime's tokens for each prompt."""
    prefill, decode = fam.path(work, "prefill"), fam.path(work, "decode")
    bundle = os.path.join(work, f"{fam.stem}_bundle")
    report = json.loads(run([ortc, "compile", prefill, decode, "--share-weights", "--ep", "cpu",
                             "-o", bundle + "/", "--json"]).stdout)
    bins = [f for f in report["files"] if f["kind"] == "context_binary"]
    assert len(bins) == 1, report["files"]
    models, weights = report["models"], report["weights"]
    assert models[1]["weights"]["new_unique_bytes"] == 0, models
    assert weights["unique_bytes"] == models[0]["weights"]["new_unique_bytes"] <= models[0]["weights"]["bytes"], report
    print(f"{fam.name} share-weights CPU bundle: 2 ctx models, one binary, weights {weights['count']} "
          f"tensors stored as {weights['unique_count']}")

    wanted = []
    for prompt in PROMPTS:
        want = ort_tokens(prefill, decode, prompt)
        forced = teacher_forced_argmax(work, prefill, prompt + want[:-1])
        assert forced[len(prompt) - 1:] == want, \
            f"{fam.name}: the decode cache disagrees with recomputation: {forced} {want}"
        got = ortc_generate(ortc, prefill, decode, prompt)
        assert got["tokens"] == want, \
            f"{fam.name} plain models, prompt {prompt}: {got['tokens']} != ONNX Runtime's {want}"
        got = ortc_generate(ortc, os.path.join(bundle, f"{fam.stem}_prefill_ctx.onnx"),
                            os.path.join(bundle, f"{fam.stem}_decode_ctx.onnx"), prompt)
        assert got["tokens"] == want, \
            f"{fam.name} bundle, prompt {prompt}: {got['tokens']} != ONNX Runtime's {want}"
        print(f"{fam.name}, prompt of {len(prompt)}: {NEW_TOKENS} tokens equal to ONNX Runtime's "
              f"(plain and compiled), {len(set(want))} distinct; decode {got['decode_ms_per_token']:.3f} ms/token")
        wanted.append(want)
    return wanted


def check_genai(ortc, work, fam, pair_tokens):
    """Check 4: the GenAI form from empty caches, and at static shapes with a fixed-size cache."""
    genai = fam.path(work, "genai")
    empty = next(iter(cache_shapes(genai, 0).values()))
    out = os.path.join(work, f"{fam.stem}_genai")
    report = json.loads(run([ortc, "compile", genai, "--ep", "cpu", "-o", out + "/", "--json"]).stdout)
    assert report["lowering"]["int4_matmuls"] == fam.genai_int4_matmuls, \
        f"{fam.name} GenAI form: {report['lowering']['int4_matmuls']} MatMul(s) at 4 bits, expected {fam.genai_int4_matmuls}"
    # Each layer's attention reads the cache's keys transposed in its GEMM, not through a copy
    # (2 layers in every generated decoder).
    assert report["lowering"]["transposed_operands_read"] == 2, \
        f"{fam.name} GenAI form: {report['lowering']['transposed_operands_read']} operand(s) read transposed, expected 2"
    ctx = os.path.join(out, f"{fam.stem}_genai_ctx.onnx")
    wanted = []
    for prompt, pair_want in zip(PROMPTS, pair_tokens):
        want = ort_tokens(genai, genai, prompt, empty_cache=empty)
        if fam.genai_same_weights:
            assert want == pair_want, f"{fam.name}: ONNX Runtime's GenAI-form tokens {want} != the pair's {pair_want}"
        got = ortc_generate(ortc, ctx, ctx, prompt)
        assert got["tokens"] == want, \
            f"{fam.name} GenAI form, prompt {prompt}: {got['tokens']} != ONNX Runtime's {want}"
        print(f"{fam.name} GenAI form, prompt of {len(prompt)}: {NEW_TOKENS} tokens equal to ONNX Runtime's, "
              f"{len(set(want))} distinct" + (" (and to the pair's)" if fam.genai_same_weights else ""))
        wanted.append(want)

    # A fixed-size cache: the GenAI model compiled at static shapes, the prefill at the prompt's
    # length and the decode step once for every step (mask and caches of FIXED positions), as one
    # weight-sharing group of two shape profiles.
    prompt = PROMPTS[0]
    ctx, _ = compile_fixed_profiles(ortc, work, fam, "cpu", [])
    got = ortc_generate(ortc, ctx["prefill"], ctx["decode"], prompt)
    assert got["tokens"] == wanted[0], f"{fam.name} fixed-size cache: {got['tokens']} != {wanted[0]}"
    print(f"{fam.name} GenAI form with a fixed-size cache of {FIXED} positions (one compiled decode "
          f"graph for every step): {NEW_TOKENS} tokens equal to ONNX Runtime's")
    full = run([ortc, "generate", ctx["prefill"], ctx["decode"], "--prompt-ids", ",".join(map(str, prompt)),
                "--max-new-tokens", str(FIXED)], ok=False)
    assert full.returncode not in (0, 1) and "the context is full" in full.stdout, full.stdout

    # --last-token-logits: both graphs output the last position's logits alone ([1, 1, vocab]),
    # the LM head computed for that position only, and generation reads the same tokens.
    ctx, _ = compile_fixed_profiles(ortc, work, fam, "cpu", ["--last-token-logits"], tag="_last")
    for name, model in ctx.items():
        logits = [o for o in onnx.load(model, load_external_data=False).graph.output if o.name == "logits"]
        dims = [d.dim_value for d in logits[0].type.tensor_type.shape.dim]
        assert len(logits) == 1 and dims[:2] == [1, 1], f"{fam.name} {name} with --last-token-logits: {dims}"
    got = ortc_generate(ortc, ctx["prefill"], ctx["decode"], prompt)
    assert got["tokens"] == wanted[0], f"{fam.name} --last-token-logits: {got['tokens']} != {wanted[0]}"
    print(f"{fam.name} GenAI form with --last-token-logits (logits {dims}): {NEW_TOKENS} tokens equal "
          f"to ONNX Runtime's")
    return wanted


def compile_fixed_profiles(ortc, work, fam, ep, extra, tag=""):
    """The GenAI model at a fixed-size cache of FIXED positions, compiled once with two shape
    profiles (prefill at PROMPTS[0]'s length, decode at one token): one group, one binary per
    backend, every weight stored once. Returns ({profile: ctx model}, the compile's report)."""
    genai, rows = fam.path(work, "genai"), {"prefill": len(PROMPTS[0]), "decode": 1}
    out = os.path.join(work, f"{fam.stem}_fixed_{ep.replace(',', '_')}{tag}")
    args = [ortc, "compile", genai, "--ep", ep, "-o", out + "/", "--json"] + extra
    for name, n in rows.items():
        profile = f"input_ids=1x{n}" + (f",position_ids=1x{n}" if "position_ids" in model_inputs(genai) else "")
        args += ["--shape-profile", f"{name}:{profile}"]
    report = json.loads(run(args + shape_args({"attention_mask": [1, FIXED]} | cache_shapes(genai, FIXED))).stdout)
    kinds = sorted(f["kind"] for f in report["files"])
    bins = [f for f in report["files"] if f["kind"] == "context_binary"]
    assert kinds.count("ctx_model") == 2 and len(bins) == 1, report["files"]  # all on the first backend
    assert all(os.path.basename(b["path"]).rsplit("_", 1)[0] == f"{fam.stem}_genai" for b in bins), bins
    models = report["models"]  # the decode profile adds only its few shape-specific constants
    assert models[1]["weights"]["new_unique_bytes"] <= 0.01 * models[0]["weights"]["new_unique_bytes"], models
    return {name: os.path.join(out, f"{fam.stem}_genai_{name}_ctx.onnx") for name in rows}, report


def compile_padded_pair(ortc, work, fam, ep, extra):
    """The Hugging Face pair at static shapes, a padded cache: the prefill at PROMPTS[0]'s length,
    the decode step with a past of FIXED - 1 rows (its present FIXED) and a mask of FIXED, each
    model's shapes given by a --shape-profile that names it, as one --share-weights group (two
    ctx models, one binary per backend, the decode model adding no weight). Returns
    ({"prefill" | "decode": ctx model}, the compile's report)."""
    prefill, decode = fam.path(work, "prefill"), fam.path(work, "decode")
    n = len(PROMPTS[0])
    rows = {"input_ids": 1, "position_ids": 1}
    decode_shapes = {k: [1, r] for k, r in rows.items()} | {"attention_mask": [1, FIXED]} | cache_shapes(decode, FIXED - 1)
    profiles = {f"{fam.stem}_prefill": {k: [1, n] for k in ("input_ids", "attention_mask", "position_ids")},
                f"{fam.stem}_decode": decode_shapes}
    out = os.path.join(work, f"{fam.stem}_padded_{ep.replace(',', '_')}")
    args = [ortc, "compile", prefill, decode, "--share-weights", "--ep", ep, "-o", out + "/", "--json"] + extra
    for name, shapes in profiles.items():
        args += ["--shape-profile", name + ":" + ",".join(f"{k}=" + "x".join(map(str, d)) for k, d in shapes.items())]
    report = json.loads(run(args).stdout)
    kinds = sorted(f["kind"] for f in report["files"])
    assert kinds.count("ctx_model") == 2 and kinds.count("context_binary") == 1, report["files"]
    assert report["models"][1]["weights"]["new_unique_bytes"] <= 0.01 * report["models"][0]["weights"]["new_unique_bytes"], report["models"]
    return {k: os.path.join(out, f"{fam.stem}_{k}_ctx.onnx") for k in ("prefill", "decode")}, report


def check_padded_cpu(ortc, work, fam, want):
    """Check 3b: the pair at static shapes with a padded cache, compiled for the CPU: one compiled
    decode graph serves every step and gives ONNX Runtime's tokens; past the cache is an error."""
    ctx, _ = compile_padded_pair(ortc, work, fam, "cpu", [])
    got = ortc_generate(ortc, ctx["prefill"], ctx["decode"], PROMPTS[0])
    assert got["tokens"] == want, f"{fam.name} padded cache: {got['tokens']} != ONNX Runtime's {want}"
    full = run([ortc, "generate", ctx["prefill"], ctx["decode"], "--prompt-ids", ",".join(map(str, PROMPTS[0])),
                "--max-new-tokens", str(FIXED)], ok=False)
    assert full.returncode not in (0, 1) and "the context is full" in full.stdout, full.stdout
    print(f"{fam.name} pair at static shapes with a padded cache of {FIXED - 1} rows (one compiled decode graph "
          f"for every step, prefill and decode one group): {NEW_TOKENS} tokens equal to ONNX Runtime's")


def check_cuda(ortc, emulator, work, fam):
    """Check 5: each graph at one decode step's shapes (prompt of CUDA_PROMPT, then a step at
    CUDA_PROMPT + 1): one CUDA group, and the emulator against the CPU runtime at fp32 and fp16.
    Returns False when NVRTC is missing."""
    def step(model, rows, total, past):
        shapes = {"input_ids": [1, rows], "attention_mask": [1, total]}
        if "position_ids" in model_inputs(model):
            shapes["position_ids"] = [1, rows]
        return shapes | cache_shapes(model, past)

    prefill, decode, genai = (fam.path(work, k) for k in ("prefill", "decode", "genai"))
    graphs = ((prefill, step(prefill, CUDA_PROMPT, CUDA_PROMPT, 0)),
              (decode, step(decode, 1, CUDA_PROMPT + 1, CUDA_PROMPT)),
              (decode, step(decode, 1, FIXED, FIXED - 1)),  # a padded cache
              (genai, step(genai, 1, CUDA_PROMPT + 1, CUDA_PROMPT)),
              (genai, step(genai, 1, FIXED, FIXED)))
    if fam.rotary_positions:  # a cache past one block's keys: split over them
        graphs += ((decode, step(decode, 1, LONG_PAST + 1, LONG_PAST)),)
    for model, shapes in graphs:
        name = os.path.basename(model)[:-len(".onnx")]
        total = shapes["attention_mask"][1]
        r = run([ortc, "compile", model, "--ep", "cuda,cpu", "--max-partitions", "1", "--target-arch", "sm_80",
                 "-o", os.path.join(work, f"cuda_{name}_{total}") + "/", "--json"] + shape_args(shapes), ok=False)
        if "NVRTC (CUDA toolkit runtime compiler) not found" in r.stdout:
            print("note: NVRTC is not available: the CUDA checks are skipped")
            return False
        assert r.returncode == 0, r.stdout
        report = json.loads(r.stdout)
        cuda = [b for b in report["backends"] if b["backend"] == "cuda"][0]
        cpu = [b for b in report["backends"] if b["backend"] == "cpu"][0]
        # Everything on CUDA, GenAI's seqlens_k (the int64 mask's row sum) included.
        assert cuda["group_count"] == 1 and cpu["node_count"] == 0 and not cuda["refusals"], (name, report["backends"])
        low = report["lowering"]
        # Every layer's attention recognised; at a decode step it runs as the decode kernel.
        assert low["fused_attention"] >= 1, (name, low)
        want_decode = low["fused_attention"] if shapes["input_ids"][1] == 1 else 0
        assert low["decode_attention"] == want_decode, (name, shapes, low)
        # A cache past one block's keys is split into runs in every layer; short ones are not
        # (too few keys for two runs of at least 256).
        want_split = want_decode if total > 8192 else 0
        assert low["decode_attention_split"] == want_split, (name, shapes, low)
        if fam.rotary_positions:  # Llama: q and k rotated in every layer, in every export form
            assert low["rotary_fused"] == 2 * low["fused_attention"], (name, low)
        # At a decode step the attention rotates q as it loads it (K's rotary writes the cache).
        want_rotary_q = want_decode if fam.rotary_positions else 0
        assert low["rotary_in_attention"] == want_rotary_q, (name, shapes, low)
        for precision in ("fp32", "fp16"):
            args = [emulator, model, "--precision", precision, "--int-range", "input_ids=0:96",
                    "--int-range", "attention_mask=1:1"] + [f"{n}=" + "x".join(map(str, d)) for n, d in shapes.items()]
            if "position_ids" in shapes:
                first, last = total - shapes["input_ids"][1], total - 1
                if last >= fam.rotary_positions > 0:  # past the table: any of its positions
                    first, last = 0, fam.rotary_positions - 1
                args += ["--int-range", f"position_ids={first}:{last}"]
            e = run(args, ok=False)
            assert e.returncode == 0, f"{name} emulated at {precision}: exit {e.returncode}\n{e.stdout}"
        print(f"{name} {shapes['attention_mask']}: one CUDA group at a decode step's shapes, {low['steps']} steps "
              f"({low['decode_attention']} decode attention kernels, {low['decode_attention_split']} split over the keys, "
              f"{low['rotary_fused']} rotary, {low['rotary_in_attention']} in the attention); emulated at "
              "fp32 and fp16")
    return True


ELEMENT_BYTES = {onnx.TensorProto.INT64: 8, onnx.TensorProto.INT32: 4, onnx.TensorProto.FLOAT: 4,
                 onnx.TensorProto.FLOAT16: 2, onnx.TensorProto.BOOL: 1}


def host_bytes(model):
    """Bytes of a model's inputs other than the caches (all static in a compiled ctx model)."""
    total = 0
    for i in onnx.load(model, load_external_data=False).graph.input:
        if not i.name.startswith("past"):
            dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
            total += int(np.prod(dims)) * ELEMENT_BYTES[i.type.tensor_type.elem_type]
    return total


def padded_rows_bytes(decode, rows):
    """Bytes of `rows` rows of every cache of a decode model (float32, [1, heads, past, head size])."""
    return sum(d[1] * rows * d[3] * 4 for n, d in model_inputs(decode).items() if n.startswith("past"))


def check_standin_calls(ortc, standin_dir, work, fam, prefill, decode, weight_bytes, moved_rows=0):
    """Check 8: the stand-in's record of a whole `ortc generate` through the real plugin.
    `moved_rows`: the cache rows the runtime moves device to device (a padded cache's new rows)."""
    report_path = os.path.join(work, f"{fam.stem}_{os.path.basename(decode)}_standin_report.json")
    env = dict(os.environ, LD_LIBRARY_PATH=standin_dir, ORTC_STANDIN_SM="80", ORTC_STANDIN_REPORT=report_path)
    env.pop("ORTC_BACKEND_PATH", None)  # the real plugin, next to the ortc binary
    prompt = PROMPTS[0]
    r = subprocess.run([ortc, "generate", prefill, decode, "--prompt-ids", ",".join(map(str, prompt)),
                        "--max-new-tokens", str(NEW_TOKENS), "--json"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["kv_cache"] == "device", r.stdout
    with open(report_path) as f:
        calls = json.load(f)
    vocab = onnx.load(fam.path(work, "genai")).graph.output[0].type.tensor_type.shape.dim[2].dim_value
    decode_steps = NEW_TOKENS - 1
    want_in = host_bytes(prefill) + decode_steps * host_bytes(decode)
    want_out = (len(prompt) + decode_steps) * vocab * 4  # float32 logits of every position run
    # One launch a token, and one as each of the two sessions loads (its graph's upload).
    assert calls.get("cuGraphLaunch") == NEW_TOKENS + 2, calls
    # The two sessions of the group share one device copy of each weight: the synchronous
    # uploads at load add up to at most the group's distinct weights (the compile report's),
    # where a copy per session would be about twice that.
    uploaded = calls.get("bytes:HtoD:sync", 0)
    assert 0.5 * weight_bytes < uploaded <= weight_bytes, (uploaded, weight_bytes)
    assert calls.get("bytes:HtoD") == want_in, (calls.get("bytes:HtoD"), want_in)
    assert calls.get("bytes:DtoH") == want_out, (calls.get("bytes:DtoH"), want_out)
    # The cache is bound into the captured graphs (the expanded GroupQueryAttention reads the
    # past before it writes the present): no byte copied device to device but a padded cache's
    # new rows, each moved once from where the graph appended it to the first free row.
    moved = padded_rows_bytes(decode, moved_rows)
    assert calls.get("bytes:DtoD", 0) == moved, (calls.get("bytes:DtoD"), moved)
    if moved_rows:
        # Each move is one call a cache, whatever its heads: a strided copy (cuMemcpy2DAsync)
        # of every head's new rows, after the prefill and after each decode step.
        caches = {n: d for n, d in model_inputs(decode).items() if n.startswith("past")}
        heads = {d[1] for d in caches.values()}
        copies = calls.get("cuMemcpy2DAsync", 0) + calls.get("cuMemcpyDtoDAsync", 0)
        assert copies == NEW_TOKENS * len(caches), (copies, NEW_TOKENS, len(caches))
        if max(heads) > 1:
            assert calls.get("cuMemcpy2DAsync", 0) == NEW_TOKENS * len(caches), calls
    print(f"{fam.name} {os.path.basename(decode)} through the real CUDA plugin (stand-in libraries): "
          f"{NEW_TOKENS} graph launches for {NEW_TOKENS} tokens (and one at each load), {want_in} bytes in (ids, mask, positions) and "
          f"{want_out} out (logits); the cache stayed on the device, bound into the graphs ({moved} bytes "
          f"copied device to device: {moved_rows} new rows" + (", one copy call a cache a step" if moved_rows else "") + "); weights uploaded once for both sessions "
          f"({uploaded} bytes of {weight_bytes} distinct)")


def generate_on_plugin(ortc, plugin_dir, prefill, decode, prompt, want, what):
    """`ortc generate` with the CUDA programs run by the emulator plugin: ONNX Runtime's tokens,
    the cache in device memory for every step."""
    env = dict(os.environ, ORTC_BACKEND_PATH=plugin_dir)
    r = subprocess.run([ortc, "generate", prefill, decode, "--prompt-ids", ",".join(map(str, prompt)),
                        "--max-new-tokens", str(NEW_TOKENS), "--json"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout)
    assert got["tokens"] == want, f"{what} through the CUDA programs: {got['tokens']} != ONNX Runtime's {want}"
    assert got["kv_cache"] == "device", got
    print(f"{what} through the compiled CUDA programs (emulated): {NEW_TOKENS} tokens equal to ONNX Runtime's, "
          "the cache in device memory for every step")


def check_cuda_generation(ortc, plugin_dir, standin_dir, work, fam, want, pair_want):
    """Check 7 (and 8 with the stand-in libraries): `ortc generate` through the CUDA programs of
    the GenAI model's prefill and decode profiles, compiled as one group for --ep cuda,cpu, and
    of the Hugging Face pair with a padded cache, compiled as one group."""
    prompt = PROMPTS[0]
    cuda = ["--max-partitions", "1", "--target-arch", "sm_80"]
    ctx, report = compile_fixed_profiles(ortc, work, fam, "cuda,cpu", cuda)
    generate_on_plugin(ortc, plugin_dir, ctx["prefill"], ctx["decode"], prompt, want, f"{fam.name} GenAI form")
    if standin_dir:
        check_standin_calls(ortc, standin_dir, work, fam, ctx["prefill"], ctx["decode"],
                            report["weights"]["unique_bytes"])

    ctx, report = compile_padded_pair(ortc, work, fam, "cuda,cpu", cuda)
    for b in report["backends"]:  # each graph one CUDA group, nothing on the CPU
        assert (b["group_count"], b["node_count"] == 0) == ((2, False) if b["backend"] == "cuda" else (0, True)), \
            report["backends"]
    generate_on_plugin(ortc, plugin_dir, ctx["prefill"], ctx["decode"], prompt, pair_want,
                       f"{fam.name} Hugging Face pair with a padded cache")
    if standin_dir:  # the prompt's rows after the prefill, then one row a decode step
        check_standin_calls(ortc, standin_dir, work, fam, ctx["prefill"], ctx["decode"],
                            report["weights"]["unique_bytes"], moved_rows=len(prompt) + NEW_TOKENS - 1)


def check_misuse(ortc, work, fam):
    """Check 6."""
    prefill, decode = fam.path(work, "prefill"), fam.path(work, "decode")
    swapped = run([ortc, "generate", decode, prefill, "--prompt-ids", "1,2"], ok=False)
    assert swapped.returncode not in (0, 1) and swapped.returncode < 128, swapped
    assert "the decode model has no past_* input" in swapped.stdout, swapped.stdout
    bad = run([ortc, "generate", prefill, decode, "--prompt-ids", "1,x"], ok=False)
    assert bad.returncode == 2 and "not a token id" in bad.stdout, bad
    print(f"{fam.name} misuse: swapped models and a bad prompt are errors with a message")


def main(ortc, work, emulator=None, plugin_dir=None, standin_dir=None):
    if not os.path.isdir(os.path.join(ROOT, "test", "reference", "node_modules", "onnxruntime-node")):
        print("SKIP: onnxruntime-node is not installed (run scripts/setup.sh)", file=sys.stderr)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cuda = bool(emulator)
    for fam in FAMILIES:
        run(["/usr/bin/python3", os.path.join(HERE, fam.script), work, "--seed", str(SEED), *fam.args])
        pair_tokens = check_pair(ortc, work, fam)
        check_padded_cpu(ortc, work, fam, pair_tokens[0])
        genai_tokens = check_genai(ortc, work, fam, pair_tokens)
        if cuda:
            cuda = check_cuda(ortc, emulator, work, fam)
        if cuda and plugin_dir:
            check_cuda_generation(ortc, plugin_dir, standin_dir, work, fam, genai_tokens[0], pair_tokens[0])
        check_misuse(ortc, work, fam)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:6]))
