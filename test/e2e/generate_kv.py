"""`ortc generate` against ONNX Runtime 1.30 on a generated Llama-style decoder with a KV cache
(make_kv_decoder.py: a prefill graph and a decode graph in the Hugging Face export form).

1. The generated pair is a consistent KV-cache model: ONNX Runtime's greedy tokens, fed back
   through the prefill graph as one sequence, are the argmax at every position (teacher forcing),
   so the decode graph's cache carries what recomputing the whole sequence gives.
2. `ortc generate` on the plain ONNX models gives ONNX Runtime's 32 greedy tokens, for two
   prompts of different lengths.
3. The pair compiled as one `--share-weights` group for the CPU (two ctx models, one binary,
   every weight stored once) gives the same tokens, and the JSON report has the fields
   schemas/cli_reports.md lists.
4. The same decoder in ONNX Runtime GenAI's form (kv_genai.onnx: one model for every step with
   GroupQueryAttention, RotaryEmbedding inside it, SimplifiedLayerNormalization,
   SkipSimplifiedLayerNormalization, MatMulNBits 4-bit weights), compiled for the CPU: the same
   tokens as ONNX Runtime, starting from empty caches.
   The GenAI model compiled at static shapes with a fixed-size cache (attention_mask and caches
   of 64 positions, the mask zero past the valid ones): one compiled decode graph serves every
   step and gives the same tokens; asking past the cache is an error.
5. CUDA, at one decode step's static shapes: each graph (the prefill, the decode step, the
   GenAI model with a growing and with a fixed-size cache) compiles as one CUDA group (the GenAI
   model's int64 mask sum, seqlens_k, stays on the CPU: no integer reduction kernel yet), and its
   CUDA program agrees with the CPU runtime in the host emulator at fp32 and fp16 (skipped with
   a note without NVRTC).
6. Misuse is an error with a message and a nonzero exit, never a crash: the models swapped, a
   prompt that is not a list of ids.
Usage: generate_kv.py ORTC_BINARY WORK_DIR [EMULATOR_BINARY]
Exit 77 (skip) when onnxruntime-node is not installed.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NEW_TOKENS = 32
FIXED = 64  # positions of the fixed-size cache
PROMPTS = ([5, 17, 42, 8], [90, 3, 3, 61, 27, 11, 0, 54, 19])


def run(cmd, ok=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if ok and r.returncode != 0:
        raise SystemExit(f"FAILED ({r.returncode}): {' '.join(cmd)}\n{r.stdout}")
    return r


def ort_tokens(prefill, decode, prompt, empty_cache=None):
    extra = [",".join(map(str, empty_cache))] if empty_cache else []
    out = run(["node", os.path.join(ROOT, "test", "reference", "ort_generate.js"), prefill, decode,
               ",".join(map(str, prompt)), str(NEW_TOKENS)] + extra).stdout
    return json.loads(out)["tokens"]


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


def check_cuda(ortc, emulator, work):
    """Each graph at one decode step's shapes (prompt of 8, then a step at length 9): one CUDA
    group, and the emulator against the CPU runtime at fp32 and fp16."""
    def cache(names, past, kv, head):
        return {n: [1, kv, past, head] for n in names}

    hf_cache = [f"past_{kind}_{i}" for i in range(2) for kind in ("key", "value")]
    genai_cache = [f"past_key_values.{i}.{kind}" for i in range(2) for kind in ("key", "value")]
    graphs = (("kv_prefill", {"input_ids": [1, 8], "attention_mask": [1, 8], "position_ids": [1, 8]}),
              ("kv_decode", {"input_ids": [1, 1], "attention_mask": [1, 9], "position_ids": [1, 1],
                             **cache(hf_cache, 8, 2, 8)}),
              ("kv_genai", {"input_ids": [1, 1], "attention_mask": [1, 9], **cache(genai_cache, 8, 2, 16)}),
              ("kv_genai", {"input_ids": [1, 1], "attention_mask": [1, FIXED],
                            **cache(genai_cache, FIXED, 2, 16)}))
    for name, shapes in graphs:
        model = os.path.join(work, name + ".onnx")
        shape_args = [a for n, d in shapes.items() for a in ("--input-shape", f"{n}=" + "x".join(map(str, d)))]
        r = run([ortc, "compile", model, "--ep", "cuda,cpu", "--max-partitions", "1", "--target-arch", "sm_80",
                 "-o", os.path.join(work, f"cuda_{name}_{shapes['attention_mask'][1]}") + "/", "--json"] +
                shape_args, ok=False)
        if "NVRTC (CUDA toolkit runtime compiler) not found" in r.stdout:
            print("note: NVRTC is not available: the CUDA checks are skipped")
            return
        assert r.returncode == 0, r.stdout
        report = json.loads(r.stdout)
        cuda = [b for b in report["backends"] if b["name"] == "cuda"][0]
        cpu = [b for b in report["backends"] if b["name"] == "cpu"][0]
        # GenAI's seqlens_k is the int64 mask's row sum: CUDA has no integer reduction kernel
        # yet, so that one node runs on the CPU before the CUDA group.
        cpu_allowed = 1 if name == "kv_genai" else 0
        refusals = [x["reason"] for x in cuda["refusals"]]
        assert cuda["groups"] == 1 and cpu["nodes"] == cpu_allowed, report["backends"]
        assert all(r == "ReduceSum on INT64 is not supported" for r in refusals), refusals
        for precision in ("fp32", "fp16"):
            args = [emulator, model, "--precision", precision, "--int-range", "input_ids=0:96",
                    "--int-range", "attention_mask=1:1"] + [f"{n}=" + "x".join(map(str, d)) for n, d in shapes.items()]
            if "position_ids" in shapes:
                args += ["--int-range", f"position_ids={shapes['attention_mask'][1] - shapes['input_ids'][1]}:"
                         f"{shapes['attention_mask'][1] - 1}"]
            e = run(args, ok=False)
            assert e.returncode == 0, f"{name} emulated at {precision}: exit {e.returncode}\n{e.stdout}"
        print(f"{name} {shapes['attention_mask']}: one CUDA group at a decode step's shapes; emulated at "
              "fp32 and fp16")


def main(ortc, work, emulator=None):
    if not os.path.isdir(os.path.join(ROOT, "test", "reference", "node_modules", "onnxruntime-node")):
        print("SKIP: onnxruntime-node is not installed (run scripts/setup.sh)", file=sys.stderr)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # Seed 1: its greedy continuations vary (over 20 distinct tokens in 32), a stronger check than
    # a model that repeats one token.
    run(["/usr/bin/python3", os.path.join(HERE, "make_kv_decoder.py"), work, "--seed", "1"])
    prefill, decode = os.path.join(work, "kv_prefill.onnx"), os.path.join(work, "kv_decode.onnx")

    bundle = os.path.join(work, "bundle")
    report = json.loads(run([ortc, "compile", prefill, decode, "--share-weights", "--ep", "cpu",
                             "-o", bundle + "/", "--json"]).stdout)
    bins = [f for f in report["files"] if f["kind"] == "context_binary"]
    assert len(bins) == 1, report["files"]
    assert report["models"][1]["new_unique_bytes"] == 0, report["models"]
    print(f"share-weights CPU bundle: 2 ctx models, one binary, weights {report['weights']['count']} "
          f"tensors stored as {report['weights']['unique_count']}")

    for prompt in PROMPTS:
        want = ort_tokens(prefill, decode, prompt)
        assert len(want) == NEW_TOKENS
        forced = teacher_forced_argmax(work, prefill, prompt + want[:-1])
        assert forced[len(prompt) - 1:] == want, f"the decode cache disagrees with recomputation: {forced} {want}"
        got = ortc_generate(ortc, prefill, decode, prompt)
        assert got["tokens"] == want, f"plain models, prompt {prompt}: {got['tokens']} != ONNX Runtime's {want}"
        got = ortc_generate(ortc, os.path.join(bundle, "kv_prefill_ctx.onnx"),
                            os.path.join(bundle, "kv_decode_ctx.onnx"), prompt)
        assert got["tokens"] == want, f"bundle, prompt {prompt}: {got['tokens']} != ONNX Runtime's {want}"
        print(f"prompt of {len(prompt)}: {NEW_TOKENS} tokens equal to ONNX Runtime's (plain and "
              f"compiled), {len(set(want))} distinct; decode {got['decode_ms_per_token']:.3f} ms/token")

    genai = os.path.join(work, "kv_genai.onnx")
    run([ortc, "compile", genai, "--ep", "cpu", "-o", os.path.join(work, "genai") + "/", "-q"])
    genai_ctx = os.path.join(work, "genai", "kv_genai_ctx.onnx")
    for prompt in PROMPTS:
        want = ort_tokens(genai, genai, prompt, empty_cache=[1, 2, 0, 16])
        got = ortc_generate(ortc, genai_ctx, genai_ctx, prompt)
        assert got["tokens"] == want, f"GenAI form, prompt {prompt}: {got['tokens']} != ONNX Runtime's {want}"
        print(f"GenAI form, prompt of {len(prompt)}: {NEW_TOKENS} tokens equal to ONNX Runtime's, "
              f"{len(set(want))} distinct")

    # A fixed-size cache: the GenAI model compiled at static shapes, the prefill at the prompt's
    # length and the decode step once for every step (mask and caches of FIXED positions).
    caches = [a for i in range(2) for kind in ("key", "value")
              for a in ("--input-shape", f"past_key_values.{i}.{kind}=1x2x{FIXED}x16")]
    prompt = PROMPTS[0]
    for name, rows in (("fixed_prefill", len(prompt)), ("fixed_decode", 1)):
        run([ortc, "compile", genai, "--ep", "cpu", "-o", os.path.join(work, name) + "/", "-q",
             "--input-shape", f"input_ids=1x{rows}", "--input-shape", f"attention_mask=1x{FIXED}"] + caches)
    got = ortc_generate(ortc, os.path.join(work, "fixed_prefill", "kv_genai_ctx.onnx"),
                        os.path.join(work, "fixed_decode", "kv_genai_ctx.onnx"), prompt)
    assert got["tokens"] == ort_tokens(genai, genai, prompt, empty_cache=[1, 2, 0, 16]), got["tokens"]
    print(f"GenAI form with a fixed-size cache of {FIXED} positions (one compiled decode graph for "
          f"every step): {NEW_TOKENS} tokens equal to ONNX Runtime's")
    full = run([ortc, "generate", os.path.join(work, "fixed_prefill", "kv_genai_ctx.onnx"),
                os.path.join(work, "fixed_decode", "kv_genai_ctx.onnx"), "--prompt-ids",
                ",".join(map(str, prompt)), "--max-new-tokens", str(FIXED)], ok=False)
    assert full.returncode not in (0, 1) and "the context is full" in full.stdout, full.stdout

    if emulator:
        check_cuda(ortc, emulator, work)

    swapped = run([ortc, "generate", decode, prefill, "--prompt-ids", "1,2"], ok=False)
    assert swapped.returncode not in (0, 1) and swapped.returncode < 128, swapped
    assert "the decode model has no past_* input" in swapped.stdout, swapped.stdout
    bad = run([ortc, "generate", prefill, decode, "--prompt-ids", "1,x"], ok=False)
    assert bad.returncode == 2 and "not a token id" in bad.stdout, bad
    print("misuse: swapped models and a bad prompt are errors with a message")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
