"""GPU benchmark runner: LLM generation. A Llama-architecture decoder of the entry's size in ONNX
Runtime GenAI's form (make_kv_decoder.py --config, packed beside the runner) is compiled for CUDA
at fp16 with a fixed-size cache (one compile: a shape profile per prompt length and one decode
graph for every step, sharing one binary) and timed by `ortc generate`; PyTorch runs transformers' LlamaForCausalLM of the same
configuration (random weights: the timing, not the tokens, is compared) at fp16 through
`generate`, with eager attention and with a static cache under torch.compile(mode=
"reduce-overhead"). Per prompt length: time to first token, decode ms per token, and the ratios.
Targets (issue: LLM generation): decode ms/token at the longest prompt <= 0.5x eager and <= 1.0x
the static-cache compile."""
import json
import os
import sys
import time

from gpu_bench_common import HERE, log, run_lines, step_timeout, worker_command
from gpu_bench_ortc import run_limited

GENERATOR = "make_kv_decoder.py"  # packed beside the runner
TORCH_MODES = ("eager", "static_compile")


def cache_inputs(model):
    """{past input: [kv heads, head size]} of the GenAI model."""
    import onnx
    graph = onnx.load(model, load_external_data=False).graph
    return {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim][1:4:2]
            for i in graph.input if i.name.startswith("past")}


def compile_profiles(ortc, env, model, e, caches, ep, target_arch, out_dir, timeout):
    """Compiles the GenAI model once with a shape profile per prompt length ("prefill<P>") and one
    for the decode step ("decode"), all with a cache of the entry's context: one weight-sharing
    group, one binary per backend. Returns ({compile_s, ...} or {error}, {profile: ctx path})."""
    context = max(e["prompts"]) + e["new_tokens"]
    rows = {f"prefill{p}": p for p in e["prompts"]} | {"decode": 1}
    # --last-token-logits: the LM head on the last position only, as transformers' generate
    # computes it (it passes logits_to_keep=1), so both sides do the same work.
    args = [ortc, "compile", model, "--ep", ep, "-o", out_dir + "/", "-q", "--json",
            "--input-shape", f"attention_mask=1x{context}", "--last-token-logits"]
    for name, n in rows.items():
        args += ["--shape-profile", f"{name}:input_ids=1x{n}"]
    if ep != "cpu":
        args += ["--precision", "fp16", "--max-partitions", "1"]
        args += ["--target-arch", target_arch] if target_arch else []
    for name, (heads, size) in caches.items():
        args += ["--input-shape", f"{name}=1x{heads}x{context}x{size}"]
    t0 = time.time()
    r, why = run_limited(args, timeout, env=env)
    rec = {"compile_s": round(time.time() - t0, 1), "context": context}
    if r is None or r.returncode:
        rec["error"] = why or (r.stdout + r.stderr).strip()[-400:]
    stem = os.path.basename(model)[:-len(".onnx")]
    return rec, {name: os.path.join(out_dir, f"{stem}_{name}_ctx.onnx") for name in rows}


def ortc_generation(e, a, ortc, env, target_arch, wd):
    """ortc's rows: {prompt: {time_to_first_token_ms, decode_ms_per_token, kv_cache, ...}}."""
    import numpy as np
    model = os.path.join(wd, "kv_genai.onnx")
    r, why = run_limited([sys.executable, os.path.join(HERE, GENERATOR), wd, "--seed", "1", "--config",
                          e["config"]], step_timeout(a, 300))
    if r is None or r.returncode:
        return {"error": "writing the model: " + (why or r.stderr.strip()[-300:])}
    ep = "cpu" if a.dry_run else "cuda,cpu"
    compiled, ctx = compile_profiles(ortc, env, model, e, cache_inputs(model), ep, target_arch,
                                     os.path.join(wd, "bundle"), step_timeout(a, 1200))
    rows = {"compile": compiled}
    if "error" in compiled:
        return rows
    rng = np.random.default_rng(a.seed)
    for prompt in e["prompts"]:
        rec = {}
        ids = ",".join(str(int(x)) for x in rng.integers(0, e["hf_config"]["vocab_size"], prompt))
        run, why = run_limited([ortc, "generate", ctx[f"prefill{prompt}"], ctx["decode"], "--prompt-ids", ids,
                                "--max-new-tokens", str(e["new_tokens"]), "--json"], step_timeout(a, 300), env=env)
        if run is None or run.returncode:
            rec["error"] = why or (run.stdout + run.stderr).strip()[-400:]
        else:
            j = json.loads(run.stdout)
            rec.update({k: j.get(k) for k in ("time_to_first_token_ms", "decode_ms_per_token",
                                               "decode_tokens_per_s", "kv_cache", "load_ms")})
        rows[str(prompt)] = rec
    return rows


def torch_generation(e, a, wd):
    """PyTorch's rows from a worker process: {mode: {prompt: {...}}}, or {"error"}."""
    spec = os.path.join(wd, "generation_spec.json")
    with open(spec, "w") as f:
        json.dump({"hf_config": e["hf_config"], "prompts": e["prompts"], "new_tokens": e["new_tokens"],
                   "device": a.torch_device, "seed": a.seed, "modes": list(TORCH_MODES)}, f)
    with open(os.path.join(wd, "torch_generation.log"), "w") as logf:
        lines, err = run_lines(worker_command("--generation-worker", spec), step_timeout(a, 900), logf)
    out = {"error": err} if err else {}
    for kind, body in lines:
        if kind == "INFO":
            out["info"] = body
        elif kind == "RESULT":
            out.setdefault(body["mode"], {})[str(body["prompt"])] = body
    return out


def bench_generation(e, a, ortc, env, target_arch, work, out, result):
    """One generation entry: ortc, then PyTorch (when transformers is installed); the record goes
    to result["generation"]. Returns the number of failed ortc steps."""
    import importlib.util
    wd = os.path.join(work, e["name"])
    os.makedirs(wd, exist_ok=True)
    log(f"{e['name']}: writing the {e['config']} model, compiling, ortc generate")
    rec = {"name": e["name"], "prompts": e["prompts"], "new_tokens": e["new_tokens"],
           "ortc": ortc_generation(e, a, ortc, env, target_arch, wd)}
    if importlib.util.find_spec("transformers") is None:
        rec["torch"] = {"error": "transformers is not installed"}
    elif a.dry_run and a.torch_device != "cpu":
        rec["torch"] = {"error": "dry run"}
    else:
        log(f"{e['name']}: PyTorch generate ({', '.join(TORCH_MODES)})")
        rec["torch"] = torch_generation(e, a, wd)
    result.setdefault("generation", []).append(rec)
    o = rec["ortc"]
    return int("error" in o or "error" in o.get("compile", {}) or
               any("error" in o.get(str(p), {"error": 1}) for p in e["prompts"]))


class TokenClock:
    """A transformers streamer that notes when each step's tokens arrive (the first put is the
    prompt), after synchronising the device, as a host waiting for each token would."""

    def __init__(self, sync):
        self.sync, self.times = sync, []

    def put(self, value):
        self.sync()
        self.times.append(time.perf_counter())

    def end(self):
        pass


def generation_worker(spec_file):
    """PyTorch side (a process of its own): prints INFO and RESULT lines."""
    import torch
    import transformers
    spec = json.load(open(spec_file))
    device = spec["device"]
    dtype = torch.float16 if device == "cuda" else torch.float32
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    print("INFO " + json.dumps({"torch": torch.__version__, "transformers": transformers.__version__}), flush=True)
    torch.manual_seed(spec["seed"])
    n = spec["new_tokens"]
    for mode in spec["modes"]:
        try:
            cfg = transformers.LlamaConfig(**spec["hf_config"])
            model = transformers.LlamaForCausalLM._from_config(cfg, attn_implementation="eager")
            model = model.to(device=device, dtype=dtype).eval()
            auto_compile = getattr(transformers, "CompileConfig", None)
            if mode == "static_compile":
                model.generation_config.cache_implementation = "static"
                if auto_compile:  # generate compiles the decode step itself, as transformers documents;
                    # a forward compiled by hand fails on 5.x ("accessing tensor output of CUDAGraphs
                    # that has been overwritten"): the static cache updates its length in place
                    model.generation_config.compile_config = auto_compile(fullgraph=True, mode="reduce-overhead")
                else:
                    model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
            for prompt in spec["prompts"]:
                ids = torch.randint(0, cfg.vocab_size, (1, prompt), device=device)

                def once():
                    clock = TokenClock(sync)
                    sync()
                    start = time.perf_counter()
                    with torch.inference_mode():
                        model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n,
                                       min_new_tokens=n, do_sample=False, pad_token_id=0, streamer=clock)
                    t = clock.times  # [prompt, token 1, ..., token n]
                    return (t[1] - start) * 1e3, (t[-1] - t[1]) * 1e3 / max(len(t) - 2, 1)

                for _ in range(3 if mode == "static_compile" else 1):  # compile and record graphs
                    once()
                if mode == "static_compile" and auto_compile and getattr(model, "_compiled_call", None) is None:
                    raise RuntimeError("generate ran without compiling the forward (static cache): not a "
                                       "torch.compile figure")
                runs = sorted(once() for _ in range(3))
                ttft = sorted(r[0] for r in runs)[1]
                decode = sorted(r[1] for r in runs)[1]
                print("RESULT " + json.dumps({"mode": mode, "prompt": prompt, "time_to_first_token_ms": ttft,
                                              "decode_ms_per_token": decode,
                                              "decode_tokens_per_s": 1e3 / decode if decode else None}),
                      flush=True)
            del model
        except Exception as ex:  # one mode failing (a compile error) leaves the other's rows
            print("RESULT " + json.dumps({"mode": mode, "prompt": 0, "error": f"{type(ex).__name__}: {ex}"[:400]}),
                  flush=True)
    return 0


def generation_targets(result):
    """(status, text) per target, at the longest prompt of each entry."""
    out = []
    for rec in result.get("generation", []):
        p = str(max(rec["prompts"]))
        mine = (rec.get("ortc") or {}).get(p, {}).get("decode_ms_per_token")
        torch_rows = rec.get("torch") or {}
        for mode, factor in (("eager", 0.5), ("static_compile", 1.0)):
            theirs = (torch_rows.get(mode) or {}).get(p, {}).get("decode_ms_per_token")
            name = f"{rec['name']} decode ms/token at prompt {p} <= {factor}x PyTorch {mode}"
            if mine is None or theirs is None:
                out.append(("n/a", f"{name}: not measured"))
            else:
                out.append(("PASS" if mine <= factor * theirs else "FAIL",
                            f"{name}: {mine:.3f} ms vs {theirs:.3f} ms ({mine / theirs:.2f}x)"))
        load = (rec.get("ortc") or {}).get(p, {}).get("load_ms") or {}
        name = f"{rec['name']}: the decode session (second of the weight-sharing group) loads in <= 0.1x the first"
        if load.get("prefill") and load.get("decode") is not None:
            ratio = load["decode"] / load["prefill"]
            out.append(("PASS" if ratio <= 0.1 else "FAIL",
                        f"{name}: {load['decode']:.1f} ms vs {load['prefill']:.1f} ms ({ratio:.3f}x)"))
        else:
            out.append(("n/a", f"{name}: not measured"))
    return out


def render_generation(result, notes):
    """The generation table: per prompt, ortc and PyTorch's time to first token and decode ms."""
    lines = []
    for rec in result.get("generation", []):
        o, t = rec.get("ortc") or {}, rec.get("torch") or {}
        lines += ["", f"== {rec['name']} generation, {rec['new_tokens']} new tokens (ms; fp16; "
                  f"ratios = ortc / PyTorch decode)",
                  f"{'prompt':<8}{'ortc ttft':>10}{'decode':>8}{'eager ttft':>11}{'decode':>8}"
                  f"{'static ttft':>12}{'decode':>8}{'/eager':>8}{'/static':>8}  kv_cache  load ms (prefill, decode)"]
        for p in rec["prompts"]:
            mine = o.get(str(p), {})
            cells = [mine.get("time_to_first_token_ms"), mine.get("decode_ms_per_token")]
            for mode in TORCH_MODES:
                r = (t.get(mode) or {}).get(str(p), {})
                cells += [r.get("time_to_first_token_ms"), r.get("decode_ms_per_token")]
            ratios = [cells[1] / cells[i] if cells[1] and cells[i] else None for i in (3, 5)]
            fmt = [f"{c:.3f}" if c is not None else "-" for c in cells]
            lines.append(f"{p:<8}{fmt[0]:>10}{fmt[1]:>8}{fmt[2]:>11}{fmt[3]:>8}{fmt[4]:>12}{fmt[5]:>8}"
                         + "".join(f"{(f'{x:.2f}x' if x else '-'):>8}" for x in ratios)
                         + f"  {mine.get('kv_cache', '-')}"
                         + "".join(f"  {(mine.get('load_ms') or {}).get(k, 0):.1f}" for k in ("prefill", "decode")
                                   if mine.get("load_ms")))
            if mine.get("error"):
                notes.append(f"{rec['name']} prompt {p} ortc: {mine['error']}")
        if (o.get("compile") or {}).get("error"):
            notes.append(f"{rec['name']} compile: {o['compile']['error']}")
        if o.get("error"):
            notes.append(f"{rec['name']} ortc: {o['error']}")
        if t.get("error"):
            notes.append(f"{rec['name']} PyTorch: {t['error']}")
        for mode in TORCH_MODES:
            for r in (t.get(mode) or {}).values():
                if r.get("error"):
                    notes.append(f"{rec['name']} PyTorch {mode}: {r['error']}")
    return lines
