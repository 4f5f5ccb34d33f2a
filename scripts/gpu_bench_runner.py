#!/usr/bin/env python3
"""ortc against PyTorch on one NVIDIA GPU, in one run: latency ratios, accuracy, the issue's targets.

Copied as gpu_bench.py into a folder made by `scripts/gpu_bench pack OUT_DIR` (see that script),
and run there with `OUT_DIR/run.sh [options]` on a machine with the NVIDIA driver and a python3
that has numpy, torch 2.x, torchvision (for the CNNs), onnx and pip's CUDA 13 libraries. Per model,
batch and precision (fp32 = strict IEEE fp32, tf32, fp16; bf16 on request):
  ortc:    `ortc compile --ep cuda,cpu --precision P` (transformers also `--max-partitions 1`),
           then `ortc run --bench N --json` on fixed inputs (host to host; p50 of N runs after one
           warm-up), the first output checked by relative L2 error against PyTorch's strict-fp32
           output (torchvision and transformer models, same weights) and every float output
           against ortc's own CPU build (`--ep cpu`, every model);
  PyTorch: eager, torch.compile and torch.compile(mode="reduce-overhead") on the same GPU and
           inputs, host to host (copy in, run, copy out, synchronize), warm-up then median of N;
           run in a worker process so a compile that fails or passes --compile-timeout is
           reported as "failed: ..." and the rest goes on.
Transformers (bert_*, gpt_*: test/e2e/make_transformer_models.py, packed beside this file): int64
input_ids [1,128] random in [0, vocab) (+ attention_mask [1,128], ones with the last 28 positions
0, for BERT); the compared output is last_hidden_state (every position: padding masks keys only,
so padded rows are well defined too) or logits. Unless packed (`pack --pack-transformers`), the
ONNX file and its weights (.npz state_dict, which PyTorch loads) are exported here, once, with
this machine's torch (TorchScript exporter, dynamo=False) into models/ beside this file (or the
work folder when that is read-only); a later run reuses them.
Hugging Face models (hf_*, "hf" entries): built by this machine's transformers from the packed
config values (random init, no download), exported in background processes (TorchScript by
default, dynamo on request or when TorchScript fails; state_dict saved for PyTorch), compiled by
ortc at fp16 with --max-partitions 1 (else split: groups and reasons), timed against PyTorch fp16
eager (attention sdpa and eager) and torch.compile reduce-overhead. The attention table
("attention" entry): ortc's fused kernel (device time per step from `ortc run --profile`)
against PyTorch's scaled_dot_product_attention (CUDA events), per sequence length.
--budget-s bounds the whole run: each step's timeout is cut to what is left.
Prints one table per model and the targets (PASS/FAIL); writes results.json and results.txt to
--out, else $OUT, else OUT_DIR/results (rewritten after every model, so a cut-off run leaves what
it measured). `--report results.json` prints a saved result again. Exit codes: 0 ran (targets
may have failed; --strict makes a failed target or ortc step exit 1), 77 no CUDA device, 2 usage.
"""
import argparse
import copy
import glob
import importlib.util
import json
import os
import re
import selectors
import shutil
import signal
import site
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
MODES = ("eager", "compile", "reduce-overhead")
EAGER_MODES = ("eager", "eager_attn")  # eager_attn: HF models with attn_implementation="eager"
HF_MODES = ("eager", "eager_attn", "reduce-overhead", "compile")
ERROR_BOUND = {"fp32": 1e-4, "tf32": 1e-2, "fp16": 2e-2, "bf16": 1e-1}  # sanity, not targets


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def entry_inputs(e):
    """[{name, shape, dtype, ...}] of a manifest entry (CNN entries name one float input)."""
    return e.get("inputs") or [{"name": e["input"], "shape": e["shape"], "dtype": "float32"}]


def make_inputs(e, seed, wd):
    """Writes the entry's inputs as .npy into wd: [(name, path)]."""
    import numpy as np
    rng = np.random.default_rng(seed)
    feeds = []
    for i in entry_inputs(e):
        if i.get("fill") == "ids":  # token ids, uniform in [0, vocab)
            x = rng.integers(0, i["high"], i["shape"]).astype(i["dtype"])
        elif i.get("fill") == "mask":  # attention mask: ones, the last `padding` positions 0
            x = np.ones(i["shape"], i["dtype"])
            if i.get("padding"):
                x[..., -i["padding"]:] = 0
        else:
            x = rng.uniform(-1, 1, i["shape"]).astype(i["dtype"])
        path = os.path.join(wd, f"input_{i['name']}.npy" if e.get("inputs") else "input.npy")
        np.save(path, x)
        feeds.append((i["name"], path))
    return feeds


# ------------------------------------------- transformers (test/e2e/make_transformer_models.py)
def load_transformer_module(path):
    """make_transformer_models.py as a module (it imports only torch, math, argparse, os)."""
    spec = importlib.util.spec_from_file_location("make_transformer_models", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build_transformer(mod, t):
    """The untrained torch module of a manifest entry's "transformer" record."""
    c = mod.SIZES[t["size"]]
    if t["kind"] == "bert":
        return mod.BertEncoder(c, False, "legacy")
    return mod.GptDecoder(c, "buffer", False, "legacy")


def export_transformer(e, module_path, onnx_path, weights_path):
    """Exports entry e with this machine's torch as the module's main() does (seeded random
    weights, opset 17 LayerNorm, legacy masks, dynamic batch and sequence axes) with the
    TorchScript exporter (dynamo=False where torch has the choice); its state_dict goes to
    weights_path (.npz). Both written atomically. Returns what was used."""
    import inspect
    import warnings
    import numpy as np
    import torch
    t0 = time.time()
    mod = load_transformer_module(module_path)
    t = e["transformer"]
    c = mod.SIZES[t["size"]]
    torch.manual_seed(t["seed"])
    ids = torch.randint(0, c["vocab"], (1, 8))
    model = mod.randomise(build_transformer(mod, t)).eval()
    names = [i["name"] for i in entry_inputs(e)]
    example = tuple(ids if n == "input_ids" else torch.ones(1, 8, dtype=torch.long) for n in names)
    real_export = torch.onnx.export
    try:
        legacy = {"dynamo": False} if "dynamo" in inspect.signature(real_export).parameters else {}
    except (TypeError, ValueError):
        legacy = {"dynamo": False}
    tmp_onnx, tmp_npz = onnx_path + ".tmp", weights_path[:-len(".npz")] + ".tmp.npz"
    torch.onnx.export = lambda *args, **kw: real_export(*args, **kw, **legacy)  # what mod.export calls
    try:
        with warnings.catch_warnings():  # the tracer's warnings about shapes turned constant
            warnings.simplefilter("ignore")
            mod.export(model, example, names, e["outputs"], tmp_onnx, t["opset"])
    finally:
        torch.onnx.export = real_export
    np.savez(tmp_npz, **{k: v.detach().cpu().numpy() for k, v in model.state_dict().items()})
    if importlib.util.find_spec("onnx"):  # the names ortc gets --input-shape for
        import onnx
        g = onnx.load(tmp_onnx, load_external_data=False).graph
        inits = {i.name for i in g.initializer}
        got = ([i.name for i in g.input if i.name not in inits], [o.name for o in g.output])
        if got != (names, e["outputs"]):
            raise RuntimeError(f"{onnx_path}: inputs/outputs {got}, expected {(names, e['outputs'])}")
    os.replace(tmp_onnx, onnx_path)
    os.replace(tmp_npz, weights_path)
    return {"torch": torch.__version__, "exporter": "torchscript" + (" (dynamo=False)" if legacy else ""),
            "export_s": round(time.time() - t0, 1)}


def export_main(spec_file):
    """--export-model: the export above in its own process (the runner itself never imports torch)."""
    spec = json.load(open(spec_file))
    info = export_transformer(spec["entry"], spec["module"], spec["onnx"], spec["weights"])
    print("EXPORTED", json.dumps(info), flush=True)
    return 0


def transformer_files(e, a, work, logf):
    """(onnx path, weights path, info) of a transformer entry: the packed files, else the ones a
    previous run exported here, else exported now; info has "error" when that failed."""
    t = e["transformer"]
    if t.get("packed"):
        return (os.path.join(HERE, e["file"]), os.path.join(HERE, t["weights"]),
                {"source": "packed", **t.get("exported_with", {})})
    d = os.path.join(HERE, os.path.dirname(e["file"]))
    try:
        os.makedirs(d, exist_ok=True)
        if not os.access(d, os.W_OK):
            raise OSError("read-only")
    except OSError:
        d = os.path.join(work, "models")
        os.makedirs(d, exist_ok=True)
    onnx_path = os.path.join(d, os.path.basename(e["file"]))
    weights = os.path.join(d, os.path.basename(t["weights"]))
    stamp = onnx_path[:-len(".onnx")] + ".export.json"
    try:
        done = json.load(open(stamp))
        if done.get("transformer") == t and os.path.exists(onnx_path) and os.path.exists(weights):
            return onnx_path, weights, {**done["info"], "source": "exported here earlier"}
    except (OSError, ValueError):
        pass
    log(f"{e['name']}: exporting with this machine's torch (once; kept in {d})")
    spec_file = os.path.join(work, f"export_{e['name']}.json")
    json.dump({"entry": e, "module": os.path.join(HERE, t["module"]), "onnx": onnx_path,
               "weights": weights}, open(spec_file, "w"))
    try:
        timeout = step_timeout(a, a.export_timeout)
        if timeout <= 0:
            return onnx_path, weights, {"error": "export: skipped, --budget-s spent"}
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--export-model", spec_file],
                           stdout=subprocess.PIPE, stderr=logf, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return onnx_path, weights, {"error": f"export: timeout after {timeout:.0f} s"}
    done = [l for l in r.stdout.splitlines() if l.startswith("EXPORTED ")]
    if r.returncode or not done:
        logf.flush()
        tail = open(logf.name, errors="replace").read().strip().splitlines()[-1:] or [f"exit {r.returncode}"]
        return onnx_path, weights, {"error": f"export with this machine's torch failed: {tail[0][:300]}"}
    info = json.loads(done[-1][len("EXPORTED "):])
    with open(stamp, "w") as f:
        json.dump({"transformer": t, "info": info}, f)
    return onnx_path, weights, {**info, "source": "exported here"}


# ------------------------------------------------------------------- budget (--budget-s) helpers
RESERVE_S = 5         # seconds kept at the end of --budget-s for writing the results
HF_ESSENTIAL_S = 75   # seconds one HF model's ortc steps and eager timings are expected to take:
                      # kept free for each HF model still to come before a torch.compile starts
MIN_COMPILE_S = 40    # a torch.compile given less than this is deferred to the end of the run


def step_timeout(a, default):
    """Timeout of one step: its default, cut to what --budget-s has left (<= 0: skip the step)."""
    return min(default, a.hard_end - RESERVE_S - time.time())


def run_lines(args, timeout, logf):
    """Runs a worker process that prints `KIND {json}` lines: ([(kind, obj)], error or None). Past
    the timeout its process group is killed and the lines it printed until then are kept."""
    if timeout <= 0:
        return [], "skipped: --budget-s spent"
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=logf, text=True, start_new_session=True)
    err = None
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        err = f"timeout after {timeout:.0f} s"
    lines = []
    for line in out.splitlines():
        kind, _, body = line.partition(" ")
        if kind in ("INFO", "START", "RESULT", "EXPORTED"):
            try:
                lines.append((kind, json.loads(body)))
            except ValueError:
                pass  # a stray line of torch's own output
    if p.returncode and not err:
        logf.flush()
        tail = open(logf.name, errors="replace").read().strip().splitlines()[-1:] or [""]
        err = f"worker exited with code {p.returncode}: {tail[0][:300]}"
    return lines, err


def models_dir(work):
    """models/ beside this script, or the work folder's when that is read-only."""
    d = os.path.join(HERE, "models")
    try:
        os.makedirs(d, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    d = os.path.join(work, "models")
    os.makedirs(d, exist_ok=True)
    return d


# ------------------------------------------------ Hugging Face models (transformers, random init)
# A manifest entry's "hf" record (scripts/gpu_bench): model_class (BertModel, GPT2LMHeadModel,
# LlamaForCausalLM), config_class and its values, auto_class (AutoModel, AutoModelForCausalLM),
# output (last_hidden_state or logits), causal (use_cache=False in every call), seed, opset
# (TorchScript) and dynamo_opset. Nothing is downloaded: the model is built from the config.
def build_hf(hf, impl, state=None):
    """(model, attention implementation it reports) of an "hf" record: seeded random weights (or
    state, a state_dict), eval mode, fp32, attention implementation impl ("sdpa" or "eager")."""
    import torch
    import transformers
    config = getattr(transformers, hf["config_class"])(**hf["config"])
    torch.manual_seed(hf["seed"])
    try:  # the public way: from_config takes attn_implementation
        model = getattr(transformers, hf["auto_class"]).from_config(config, attn_implementation=impl)
    except TypeError:  # older signature: set it on the config
        config._attn_implementation = impl
        model = getattr(transformers, hf["model_class"])(config)
    if type(model).__name__ != hf["model_class"]:
        raise RuntimeError(f"{hf['auto_class']} built {type(model).__name__}, not {hf['model_class']}")
    model = model.float().eval()
    if state is not None:
        model.load_state_dict(state)
    return model, getattr(model.config, "_attn_implementation", None)


def hf_wrapper(model, hf, names):
    """The model as a module of the ONNX inputs (input_ids[, attention_mask], in that order) that
    returns one tensor (hf["output"]): what is exported, timed and compiled with torch.compile."""
    import torch
    extra = {"use_cache": False} if hf.get("causal") else {}
    field = hf["output"]

    def pick(out):
        if isinstance(out, torch.Tensor):
            return out
        value = getattr(out, field, None)
        return value if value is not None else out[0]

    class Ids(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids):
            return pick(self.m(input_ids=input_ids, **extra))

    class IdsMask(Ids):
        def forward(self, input_ids, attention_mask):
            return pick(self.m(input_ids=input_ids, attention_mask=attention_mask, **extra))

    if names == ["input_ids"]:
        return Ids(model)
    if names == ["input_ids", "attention_mask"]:
        return IdsMask(model)
    raise ValueError(f"HF inputs {names}: expected input_ids[, attention_mask]")


def export_hf_one(wrapper, xs, names, hf, exporter, path, ref, threads):
    """Exports with one exporter (torchscript: dynamo=False, opset hf["opset"]; dynamo:
    dynamo=True, opset hf["dynamo_opset"], weights inside the file); then, when onnx and ONNX
    Runtime are installed, reads the file's inputs/outputs and runs it on the CPU on the same
    inputs (relative L2 error against PyTorch's fp32 output: tells an exporter fault from an ortc
    one). Returns its record; "error" when the export failed."""
    import inspect
    import warnings
    import torch
    t0 = time.time()
    tmp = path[:-len(".onnx")] + ".tmp.onnx"
    try:
        params = inspect.signature(torch.onnx.export).parameters
    except (TypeError, ValueError):
        params = {}
    kw = {"input_names": names, "output_names": [hf["output"]]}
    if exporter == "torchscript":
        kw.update(opset_version=hf["opset"], do_constant_folding=True)
        if "dynamo" in params:
            kw["dynamo"] = False
    else:
        if "dynamo" not in params:
            return {"error": f"torch {torch.__version__}: torch.onnx.export has no dynamo argument"}
        kw.update(opset_version=hf["dynamo_opset"], dynamo=True)
        if "external_data" in params:
            kw["external_data"] = False  # one file (< 2 GB): ortc and ONNX Runtime read either
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(wrapper, xs, tmp, **kw)
        os.replace(tmp, path)
    except Exception as e:  # noqa: BLE001 - reported with the row, the run goes on
        lines = str(e).strip().splitlines() or [""]
        return {"error": f"{type(e).__name__}: {lines[0][:300]}", "export_s": round(time.time() - t0, 1)}
    rec = {"file": path, "export_s": round(time.time() - t0, 1), "opset": kw["opset_version"],
           "inputs": names, "outputs": [hf["output"]]}
    try:
        import onnx
        g = onnx.load(path, load_external_data=False).graph
        inits = {i.name for i in g.initializer}
        rec.update(inputs=[i.name for i in g.input if i.name not in inits], outputs=[o.name for o in g.output],
                   nodes=len(g.node))
    except Exception as e:  # noqa: BLE001
        rec["onnx_error"] = f"{type(e).__name__}: {str(e)[:200]}"
    try:
        import onnxruntime as ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        want = {i.name for i in sess.get_inputs()}
        got = sess.run(None, {n: x.numpy() for n, x in zip(names, xs) if n in want})[0]
        rec["ort_rel_l2"] = rel_l2(got, ref)
    except ImportError:
        rec["ort"] = "onnxruntime is not installed"
    except Exception as e:  # noqa: BLE001
        rec["ort"] = f"{type(e).__name__}: {str(e).strip()[:200]}"
    return rec


def export_hf_main(spec_file):
    """--export-hf: builds one HF model (seeded random weights, eval, attention "sdpa"), writes its
    state_dict (torch.save: the PyTorch timings load it) and its fp32 CPU output for the
    benchmark's inputs, then exports it with each exporter asked. The example inputs are the
    benchmark's own, so whatever tracing fixes from their values (mask branches) is what runs.
    When the TorchScript export fails and spec["fallback"] is set, the dynamo exporter is tried
    (its record says so). Prints one EXPORTED line."""
    import numpy as np
    import torch
    import transformers
    spec = json.load(open(spec_file))
    hf, names = spec["hf"], spec["input_names"]
    torch.set_num_threads(max(1, spec.get("threads") or torch.get_num_threads()))
    t0 = time.time()
    model, impl = build_hf(hf, "sdpa")
    info = {"transformers": transformers.__version__, "torch": torch.__version__, "attn_implementation": impl,
            "params": int(sum(p.numel() for p in model.parameters())), "state": spec["state"],
            "reference": spec["reference"], "exports": {}}
    wrapper = hf_wrapper(model, hf, names).eval()
    xs = tuple(torch.from_numpy(np.load(f)) for f in spec["inputs"])
    with torch.no_grad():
        ref = wrapper(*xs).float().numpy()
    np.save(spec["reference"][:-len(".npy")] + ".tmp.npy", ref)
    os.replace(spec["reference"][:-len(".npy")] + ".tmp.npy", spec["reference"])
    torch.save(model.state_dict(), spec["state"] + ".tmp")
    os.replace(spec["state"] + ".tmp", spec["state"])
    info["build_s"] = round(time.time() - t0, 1)
    todo = list(spec["exporters"])
    while todo:
        ex = todo.pop(0)
        print(f"exporting with {ex}", file=sys.stderr, flush=True)
        rec = export_hf_one(wrapper, xs, names, hf, ex, spec["files"][ex], ref, spec.get("threads") or 1)
        info["exports"][ex] = rec
        if "error" in rec and ex == "torchscript" and spec.get("fallback") and "dynamo" not in spec["exporters"]:
            todo.append("dynamo")
            rec["fallback"] = "dynamo exporter tried instead"
    if "dynamo" in info["exports"] and "dynamo" not in spec["exporters"]:
        info["exports"]["dynamo"]["fallback_for"] = "torchscript"
    info["total_s"] = round(time.time() - t0, 1)
    print("EXPORTED", json.dumps(info), flush=True)
    return 0


class HfExport:
    """One HF model's export, started in the background at the beginning of the HF part (CPU
    work: several run side by side while the GPU measures something else). wait() gives its
    record: the exporter's, "exported here earlier" (a stamp beside the files), "not_exercised"
    (no transformers for this python) or "error"."""

    def __init__(self, e, a, work, threads):
        self.e, self.info, self.proc, self.t0 = e, None, None, time.time()
        self.wd = os.path.join(work, e["name"])
        os.makedirs(self.wd, exist_ok=True)
        self.feeds = make_inputs(e, a.seed, self.wd)  # every input: PyTorch's forward takes them all
        base = os.path.join(models_dir(work), e["name"])
        exporters = ["torchscript", "dynamo"] if a.hf_exporter == "both" else [a.hf_exporter]
        self.spec = {"hf": e["hf"], "input_names": [n for n, _ in self.feeds], "inputs": [p for _, p in self.feeds],
                     "exporters": exporters, "fallback": a.hf_exporter == "torchscript", "threads": threads,
                     "state": base + ".pt", "reference": base + ".ref.npy",
                     "files": {"torchscript": base + ".onnx", "dynamo": base + ".dynamo.onnx"}}
        self.stamp = base + ".export.json"
        self.key = {"hf": e["hf"], "exporters": exporters, "fallback": self.spec["fallback"],
                    "inputs": entry_inputs(e), "seed": a.seed}
        try:
            done = json.load(open(self.stamp))
            files = [done["info"]["state"], done["info"]["reference"]] + [
                r["file"] for r in done["info"]["exports"].values() if "file" in r]
            if done.get("key") == self.key and all(os.path.exists(f) for f in files):
                self.info = {**done["info"], "source": "exported here earlier"}
                return
        except (OSError, ValueError, KeyError, TypeError):
            pass
        missing = [m for m in ("transformers", "torch") if importlib.util.find_spec(m) is None]
        if missing:
            self.info = {"not_exercised": f"{' and '.join(missing)} not installed for {sys.executable}"}
            return
        spec_file = os.path.join(self.wd, "export_hf.json")
        json.dump(self.spec, open(spec_file, "w"))
        self.log = open(os.path.join(self.wd, "export.log"), "w")
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--export-hf", spec_file],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True, start_new_session=True)
        log(f"{e['name']}: export started in the background ({', '.join(exporters)})")

    def wait(self, deadline):
        if self.info is not None:
            return self.info
        try:
            left = deadline - time.time()  # inf without --budget-s: no limit but the export's own
            out, _ = self.proc.communicate(timeout=None if left == float("inf") else max(left, 0.01))
        except subprocess.TimeoutExpired:
            self.kill()
            self.info = {"error": f"export: timeout after {time.time() - self.t0:.0f} s"}
            return self.info
        done = [line for line in out.splitlines() if line.startswith("EXPORTED ")]
        if self.proc.returncode or not done:
            self.log.flush()
            tail = open(self.log.name, errors="replace").read().strip().splitlines()[-1:] or [
                f"exit {self.proc.returncode}"]
            self.info = {"error": f"export failed: {tail[0][:300]}"}
            return self.info
        info = json.loads(done[-1][len("EXPORTED "):])
        with open(self.stamp, "w") as f:
            json.dump({"key": self.key, "info": info}, f)
        self.info = {**info, "source": "exported here"}
        return self.info

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def partition_summary(ortc, env, model, inputs, timeout):
    """Why a model is split: `ortc partition --json` cut to groups per backend, the refused
    (op, reason) pairs of the CUDA backend counted, and the roots of dynamic shapes."""
    r, why = run_limited([ortc, "partition", model, "--ep", "cuda,cpu", "--json"] + shape_args(inputs),
                         timeout, env=env)
    if r is None:
        return {"error": why}
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        return {"error": (r.stderr or r.stdout).strip()[:300]}
    refused = {}
    for x in rep.get("refused", []):
        if x.get("backend") == "cuda":
            k = f"{x.get('op')}: {x.get('reason')}"
            refused[k] = refused.get(k, 0) + 1
    return {"groups": {b["name"]: b.get("groups") for b in rep.get("backends", [])},
            "refused": sorted(refused.items(), key=lambda kv: -kv[1])[:8],
            "dynamic_roots": [x.get("reason") for x in rep.get("dynamic_roots", [])][:4]}


def one_cuda_graph(o):
    """Whether an ortc row runs as one CUDA graph: one CUDA group, no node left to the CPU, and
    `ortc run --json` reporting one CUDA graph replayed (execution "cuda_graph"); None when it
    did not run."""
    if o.get("p50_ms") is None:
        return None
    b = o.get("backends") or {}
    graphs = [g for g in o.get("graphs") or [] if g.get("backend") == "cuda"]
    return ((b.get("cuda") or {}).get("groups") == 1 and not (b.get("cpu") or {}).get("nodes")
            and len(graphs) == 1 and graphs[0].get("execution") == "cuda_graph")


def hf_ortc(e, rec, job, a, ortc, env, target_arch, wd, quiet):
    """ortc on one exported file: compile with --max-partitions 1 (when that fails because the
    model would be split: the error, then a compile without the limit, its groups and the
    partitioner's reasons), then, once quiet() has returned (no export left running beside the
    timing), `ortc run --bench N --json`. Returns (row's ortc record, outputs)."""
    inputs = [i for i in entry_inputs(e) if i["name"] in rec.get("inputs", [])]
    feeds = [(n, p) for n, p in job.feeds if n in rec.get("inputs", [])]
    d = os.path.join(wd, "cuda")
    o = ortc_compile(ortc, env, rec["file"], e, "cuda,cpu", "fp16", d, target_arch,
                     timeout=step_timeout(a, 600), max_partitions=1, inputs=inputs)
    if "error" in o and "partition" in o["error"]:
        o = {"max_partitions_1": {"error": o["error"], "compile_s": o["compile_s"]}}
        log(f"{e['name']}: split into several groups; compiling without --max-partitions 1")
        o.update(ortc_compile(ortc, env, rec["file"], e, "cuda,cpu", "fp16", d, target_arch,
                              timeout=step_timeout(a, 600), max_partitions=None, inputs=inputs))
        o["partition"] = partition_summary(ortc, env, rec["file"], inputs, step_timeout(a, 120))
    outs = None
    if "error" not in o and not a.dry_run:
        ctx = o.get("ctx") or os.path.join(d, os.path.basename(rec["file"])[:-len(".onnx")] + "_ctx.onnx")
        quiet()
        run, outs = ortc_run(ortc, env, ctx, feeds, os.path.join(d, "out"), a.runs, timeout=step_timeout(a, 300))
        o.update(run)
        o["one_cuda_graph"] = one_cuda_graph(o)
    elif "error" in o and a.dry_run:
        o["note"] = "dry run: not counted as a failure (CUDA compiles need NVRTC)"
    if a.dry_run:  # the CPU build runs it: the file computes what PyTorch computes
        c = ortc_compile(ortc, env, rec["file"], e, "cpu", None, os.path.join(wd, "cpu"), None,
                         timeout=step_timeout(a, 600), inputs=inputs)
        if "error" not in c:
            ctx = os.path.join(wd, "cpu", os.path.basename(rec["file"])[:-len(".onnx")] + "_ctx.onnx")
            run, outs = ortc_run(ortc, env, ctx, feeds, os.path.join(wd, "cpu", "out"), 0,
                                 timeout=step_timeout(a, 300))
            c.update(run)
        o["cpu"] = {k: v for k, v in c.items() if k in ("error", "compile_s")}
    return o, outs


def bench_hf(e, job, a, ortc, env, target_arch, out, result, hf_after, jobs):
    """One HF model: its export (waited for), ortc per exported file (one row each), PyTorch fp16
    eager with attention "sdpa" and "eager", then torch.compile(mode="reduce-overhead") when the
    budget leaves it enough time beside the hf_after HF models still to come (else returned, for
    the end of the run). No host-to-host timing starts while one of the exports (jobs) still
    runs: they would compete for the CPU that issues the work. Returns (failures, deferred torch
    work or None)."""
    import numpy as np
    name, hf = e["name"], e["hf"]
    summary = result["models"].setdefault(name, {})
    summary["hf"] = {"model_class": hf["model_class"], "config": hf["config"]}
    log(f"{name}: waiting for its export")
    info = job.wait(min(a.hard_end - RESERVE_S, job.t0 + a.export_timeout))

    def quiet():
        for j in jobs:
            j.wait(min(a.hard_end - RESERVE_S, j.t0 + a.export_timeout))
    summary["export"] = {k: v for k, v in info.items() if k not in ("state", "reference")}
    if getattr(job, "log", None) and os.path.getsize(job.log.name):
        job.log.flush()
        shutil.copyfile(job.log.name, os.path.join(out, f"export_{name}.log"))
    row0 = {"name": name, "model": name, "kind": "hf", "batch": 1, "precision": "fp16", "shape": e["shape"],
            "exporter": a.hf_exporter, "torch": {}}
    if "not_exercised" in info or "error" in info:
        key = "not_exercised" if "not_exercised" in info else "error"
        result["rows"].append({**row0, "ortc": {key: info[key]}})
        return (0 if key == "not_exercised" or a.dry_run else 1), None
    rows, outs_of, failures = [], {}, 0
    for ex, rec in info["exports"].items():
        row = {**row0, "name": name if ex == "torchscript" else f"{name}/{ex}", "exporter": ex}
        if rec.get("fallback_for"):
            row["exporter_note"] = f"the {rec['fallback_for']} export failed; dynamo exporter instead"
        if "error" in rec:
            row["ortc"] = {"error": f"{ex} export: {rec['error']}"}
        else:
            log(f"{name} ({ex}): ortc --ep cuda,cpu --precision fp16 --max-partitions 1")
            row["ortc"], outs_of[row["name"]] = hf_ortc(e, rec, job, a, ortc, env, target_arch,
                                                        os.path.join(job.wd, ex), quiet)
            row["ortc"].update({k: rec[k] for k in ("export_s", "ort_rel_l2", "ort", "nodes", "opset") if k in rec})
        failures += "error" in row["ortc"] and not a.dry_run
        rows.append(row)
    result["rows"] += rows
    deferred = None
    names = [n for n, _ in job.feeds]
    extra = {"hf": hf, "input_names": names}
    if a.hf_torch_modes and (not a.dry_run or a.torch_device == "cpu"):
        if a.torch_device == "cpu":  # dry run: fp32 on the CPU, the model rebuilt from the saved state
            variants, later = [["fp32", m] for m in a.hf_torch_modes if m in EAGER_MODES], []
        else:
            variants = [["fp16", m] for m in a.hf_torch_modes if m in EAGER_MODES]
            later = [["fp16", m] for m in a.hf_torch_modes if m not in EAGER_MODES]
        compile_end = a.hard_end - RESERVE_S - HF_ESSENTIAL_S * hf_after
        if later and compile_end - time.time() - HF_ESSENTIAL_S / 2 < MIN_COMPILE_S:
            deferred, later = {"entry": e, "job": job, "variants": later, "rows": rows, "extra": extra}, []
        quiet()
        with open(os.path.join(job.wd, "torch.log"), "w") as logf:
            tres, tinfo, ref = run_torch(e, variants + later, a, job.wd, logf, job.feeds, info["state"],
                                         compile_end=compile_end, extra=extra)
        shutil.copyfile(logf.name, os.path.join(out, f"torch_{name}.log"))
        result["host"].update({k: tinfo[k] for k in ("torch", "transformers", "cuda", "cudnn") if k in tinfo})
        for r in rows if not a.dry_run else ():  # dry run: fp32 on the CPU, kept in the summary
            r["torch"] = {m: tres.get((p, m)) for p, m in variants + later}
            if deferred:
                r["torch"].update({m: {"failed": "deferred to the end of the run (budget)"} for _, m in deferred["variants"]})
        torch_ref = np.load(ref) if ref else None
        if a.dry_run:
            summary["torch_cpu"] = {m: tres.get((p, m)) for p, m in variants}
    else:
        torch_ref = None
    export_ref = np.load(info["reference"]) if os.path.exists(info.get("reference", "")) else None
    for r in rows:
        outs = outs_of.get(r["name"])
        if outs is None:
            continue
        ref_used = torch_ref if torch_ref is not None else export_ref
        if ref_used is not None:
            r["ortc"]["rel_l2_vs_torch"] = rel_l2(outs[0], ref_used)
            r["ortc"]["reference"] = ("PyTorch fp32 eager (sdpa) on " + a.torch_device if torch_ref is not None
                                      else "PyTorch fp32 on the CPU (export)")
    if a.dry_run and export_ref is not None:
        errs = [rel_l2(outs_of[r["name"]][0], export_ref) for r in rows if outs_of.get(r["name"]) is not None]
        summary["torch_fp32_vs_cpu"] = max(errs) if errs else None
        summary["cpu_reference"] = {"ok": bool(errs)}
    return failures, deferred


def hf_deferred(d, a, out, result):
    """torch.compile variants deferred by bench_hf, with whatever the budget has left."""
    e, job = d["entry"], d["job"]
    with open(os.path.join(job.wd, "torch_deferred.log"), "w") as logf:
        tres, _, _ = run_torch(e, d["variants"], a, job.wd, logf, job.feeds, job.info["state"],
                               compile_end=a.hard_end - RESERVE_S, extra={**d["extra"], "reference": False})
    shutil.copyfile(logf.name, os.path.join(out, f"torch_{e['name']}_deferred.log"))
    for r in d["rows"]:
        r["torch"].update({m: tres.get((p, m)) for p, m in d["variants"]})


# ------------------------------------------ attention kernel: ortc's fused kernel vs PyTorch SDPA
def attention_inputs(rng, seq, heads, head_dim, pad, wd):
    """q, k, v ([1, heads, seq, head_dim], fp16, standard normal) and an additive padding mask
    ([1, 1, 1, seq]: 0, the last `pad` keys -10000) as .npy in wd: (feeds, fp32 reference output)."""
    import numpy as np
    os.makedirs(wd, exist_ok=True)
    arrays = {n: rng.standard_normal((1, heads, seq, head_dim)).astype(np.float16) for n in "qkv"}
    mask = np.zeros((1, 1, 1, seq), np.float16)
    if pad:
        mask[..., -pad:] = -10000.0
    arrays["mask"] = mask
    feeds = []
    for n, x in arrays.items():
        np.save(os.path.join(wd, f"{n}.npy"), x)
        feeds.append((n, os.path.join(wd, f"{n}.npy")))
    q, k, v, m = (arrays[n].astype(np.float32) for n in ("q", "k", "v", "mask"))
    s = np.matmul(q, k.transpose(0, 1, 3, 2)) * np.float32(head_dim ** -0.5) + m
    s -= s.max(-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(-1, keepdims=True)
    return feeds, np.matmul(p, v)


def cuda_step_runs(trace):
    """Per run, [(step name, kind, device µs)] of the CUDA steps in an `ortc run --profile` Chrome
    trace: the runtime writes each plugin step as a complete event ("ph": "X") of category "Step"
    on the lane named "backend device", with args.kind and args.device_us (runtime/src/exec/
    plugin_node.cpp, profiler.cpp); each run's steps begin with its "input copies" step."""
    lanes = {e.get("tid"): (e.get("args") or {}).get("name") for e in trace
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    lane = next((t for t, n in lanes.items() if n == "backend device"), 2)
    runs = []
    for e in trace:
        if e.get("ph") != "X" or e.get("cat") != "Step" or e.get("tid") != lane:
            continue
        args = e.get("args") or {}
        if e.get("name") == "input copies" or not runs:
            runs.append([])
        runs[-1].append((e.get("name"), args.get("kind"), float(args.get("device_us", e.get("dur", 0)))))
    return runs


def attention_device_us(trace, step_name):
    """(device µs per run of the attention: the steps named step_name or step_name/... (the
    one-kernel FusedAttention, or the GEMMs, softmax and copies of attention on GEMMs), else the
    sum of the run's kernel steps; whether a named step was found) from an `ortc run --profile`
    trace."""
    per_run, found = [], False
    for steps in cuda_step_runs(trace):
        named = [us for n, _, us in steps if n == step_name or n.startswith(step_name + "/")]
        found = found or bool(named)
        per_run.append(sum(named) if named else sum(us for _, kind, us in steps if kind != "copy"))
    return per_run, found


def attention_worker(spec_file):
    """--attention-worker: PyTorch's scaled_dot_product_attention on the same q, k, v and mask,
    timed per call with CUDA events (the GPU kept busy by a sleep kernel while the host issues the
    call, so the events time the device alone), median of N after a warm-up; the default
    dispatch, then each SDPA backend forced. Prints INFO, then START/RESULT per sequence length."""
    import numpy as np
    import torch
    spec = json.load(open(spec_file))
    emit = lambda kind, obj: print(kind, json.dumps(obj), flush=True)
    dev = spec["device"]
    F = torch.nn.functional
    info = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0) if dev == "cuda" else dev}
    emit("INFO", info)
    if not hasattr(F, "scaled_dot_product_attention"):
        for x in spec["seqs"]:
            emit("RESULT", {"seq": x["seq"], "failed": f"not exercised: torch {torch.__version__} has no "
                            "scaled_dot_product_attention"})
        return 0
    dt = torch.float16 if dev == "cuda" else torch.float32  # CPU (dry runs): fp32
    sleep = getattr(torch.cuda, "_sleep", None)

    def times_us(fn):
        for _ in range(spec["warmup"]):
            fn()
        lat = []
        for _ in range(spec["runs"]):
            if dev == "cuda":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                if sleep:
                    sleep(200000)  # about 0.1 ms of GPU time: covers the host's issue of the call
                start.record()
                fn()
                end.record()
                end.synchronize()
                lat.append(start.elapsed_time(end) * 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                lat.append((time.perf_counter() - t0) * 1e6)
        return {"median_us": float(np.median(lat)), "p10_us": float(np.percentile(lat, 10)), "runs": len(lat)}

    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        SDPBackend = sdpa_kernel = None
    for x in spec["seqs"]:
        emit("START", {"seq": x["seq"]})
        res = {"seq": x["seq"]}
        try:
            q, k, v, mask = (torch.from_numpy(np.load(x[n])).to(dev).to(dt) for n in ("q", "k", "v", "mask"))
            call = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            with torch.no_grad():
                np.save(x["out"], call().float().cpu().numpy())
                res.update(times_us(call))
                res["backends"] = {}
                for b in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH") if sdpa_kernel else ():
                    if not hasattr(SDPBackend, b):
                        continue
                    try:
                        with sdpa_kernel(getattr(SDPBackend, b)):
                            res["backends"][b.lower()] = times_us(call)
                    except Exception as e:  # noqa: BLE001 - a backend that refuses the mask
                        res["backends"][b.lower()] = {"failed": (str(e).strip().splitlines() or [""])[0][:160]}
        except Exception as e:  # noqa: BLE001
            res["failed"] = f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:300]}"
        emit("RESULT", res)
    return 0


def bench_attention(e, a, ortc, env, target_arch, work, out, result):
    """The attention table: per sequence length, ortc's fused kernel (an ONNX model of the
    attention alone, compiled for CUDA at fp16; its device time per step from `ortc run --profile`)
    against PyTorch's SDPA (CUDA events), both checked against an fp32 reference."""
    import numpy as np
    wd = os.path.join(work, "attention")
    heads, head_dim = e["heads"], e["head_dim"]
    seqs = [x for x in e["seqs"] if not a.attention_seqs or x["seq"] in a.attention_seqs]
    table = {"heads": heads, "head_dim": head_dim, "batch": 1, "padding": e["padding"], "rows": []}
    result["attention"] = table
    rng = np.random.default_rng(a.seed)
    refs, worker_seqs, failures = {}, [], 0
    for x in seqs:
        seq, sd = x["seq"], os.path.join(wd, f"s{x['seq']}")
        pad = seq * e["pad_num"] // e["pad_den"]
        feeds, refs[seq] = attention_inputs(rng, seq, heads, head_dim, pad, sd)
        row = {"seq": seq, "pad": pad, "flops": 4 * seq * seq * head_dim * heads, "ortc": {}, "torch": {}}
        table["rows"].append(row)
        model = os.path.join(HERE, x["file"])
        inputs = [{"name": n, "shape": list(np.load(p, mmap_mode="r").shape)} for n, p in feeds]
        log(f"attention s={seq}: ortc --ep cuda,cpu --precision fp16")
        o = ortc_compile(ortc, env, model, e, "cuda,cpu", "fp16", os.path.join(sd, "cuda"), target_arch,
                         timeout=step_timeout(a, 300), max_partitions=1, inputs=inputs)
        o["fused_attention"] = (o.get("lowering") or {}).get("fused_attention")
        if "error" not in o and not a.dry_run:
            trace = os.path.join(sd, "trace.json")
            ctx = o.get("ctx") or os.path.join(sd, "cuda", os.path.basename(model)[:-len(".onnx")] + "_ctx.onnx")
            run, outs = ortc_run(ortc, env, ctx, feeds, os.path.join(sd, "out"), a.runs,
                                 extra=["--profile", trace], timeout=step_timeout(a, 180))
            o.update({k: v for k, v in run.items() if k in ("error", "p50_ms", "execution", "load_ms")})
            if outs:
                o["rel_l2"] = rel_l2(outs[0], refs[seq])
            try:
                per_run, found = attention_device_us(json.load(open(trace)), e["softmax_node"])
                steady = per_run[1:] if len(per_run) > 1 else per_run  # the first run warms up
                if steady:
                    o.update(device_us=float(np.median(steady)), device_runs=len(steady), step_found=found)
            except (OSError, ValueError) as err:
                o.setdefault("error", f"profile: {err}")
        elif "error" in o and a.dry_run:
            o["note"] = "dry run: not counted as a failure (CUDA compiles need NVRTC)"
        if a.dry_run:  # the CPU build runs the same file: the model is the attention it claims
            c = ortc_compile(ortc, env, model, e, "cpu", None, os.path.join(sd, "cpu"), None,
                             timeout=step_timeout(a, 120), inputs=inputs)
            if "error" not in c:
                ctx = os.path.join(sd, "cpu", os.path.basename(model)[:-len(".onnx")] + "_ctx.onnx")
                run, outs = ortc_run(ortc, env, ctx, feeds, os.path.join(sd, "cpu", "out"), 0,
                                     timeout=step_timeout(a, 120))
                c.update(run)
                if outs:
                    c["rel_l2"] = rel_l2(outs[0], refs[seq])
            row["cpu_reference"] = {k: v for k, v in c.items() if k in ("error", "rel_l2", "compile_s")}
        failures += "error" in o and not a.dry_run
        row["ortc"] = o
        worker_seqs.append({"seq": seq, **{n: p for n, p in feeds}, "out": os.path.join(sd, "torch_out.npy")})
    if a.torch_modes and (not a.dry_run or a.torch_device == "cpu"):
        spec_file = os.path.join(wd, "attention_spec.json")
        json.dump({"device": a.torch_device, "runs": a.runs, "warmup": min(a.warmup, 10), "seqs": worker_seqs},
                  open(spec_file, "w"))
        log("attention: PyTorch scaled_dot_product_attention")
        with open(os.path.join(wd, "torch.log"), "w") as logf:
            lines, err = run_lines([sys.executable, os.path.abspath(__file__), "--attention-worker", spec_file],
                                   step_timeout(a, 240), logf)
        shutil.copyfile(logf.name, os.path.join(out, "torch_attention.log"))
        got = {d["seq"]: d for kind, d in lines if kind == "RESULT"}
        table["torch_info"] = next((d for kind, d in lines if kind == "INFO"), {})
        for row in table["rows"]:
            t = got.get(row["seq"]) or {"failed": err or "no result"}
            t.pop("seq", None)
            f = next(w["out"] for w in worker_seqs if w["seq"] == row["seq"])
            if "failed" not in t and os.path.exists(f):
                t["rel_l2"] = rel_l2(np.load(f), refs[row["seq"]])
            row["torch"] = t
    return failures


def rel_l2(got, ref):
    import numpy as np
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        return float("inf")
    return float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30))


# ---------------------------------------------------------------- environment of the packed ortc
def unpack(manifest):
    dest = os.path.join(HERE, "payload")
    stamp = os.path.join(dest, ".unpacked")  # holds the sha256 of the payload it came from
    if os.path.exists(stamp) and open(stamp).read() == manifest["payload_sha256"]:
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    with tarfile.open(os.path.join(HERE, manifest["payload"]), "r:xz") as t:
        t.extractall(dest, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    with open(stamp, "w") as f:
        f.write(manifest["payload_sha256"])
    return dest


def pip_nvidia_dirs():
    """site-packages/nvidia/*/lib folders (pip's CUDA libraries), CUDA 13 and cuDNN first."""
    roots = list(getattr(site, "getsitepackages", list)()) + [site.getusersitepackages()]
    roots += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    dirs = []
    for r in roots:
        for d in sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib"))):
            if os.path.realpath(d) not in map(os.path.realpath, dirs):
                dirs.append(d)
    return sorted(dirs, key=lambda d: (not glob.glob(os.path.join(d, "*.so.13*")),
                                       "cudnn" not in d))


def ortc_env(payload, dry_run):
    env = dict(os.environ)
    dirs = [os.path.join(payload, "lib")]
    if not dry_run:  # a dry run proves the payload needs nothing else
        dirs += pip_nvidia_dirs() + [d for d in ["/usr/local/cuda/lib64"] if os.path.isdir(d)]
        nvrtc = [f for d in dirs for f in glob.glob(os.path.join(d, "libnvrtc.so.13"))]
        if nvrtc and "ORTC_NVRTC_LIBRARY" not in env:
            env["ORTC_NVRTC_LIBRARY"] = nvrtc[0]
    env["LD_LIBRARY_PATH"] = ":".join(dirs)
    env["ORTC_BACKEND_PATH"] = os.path.join(payload, "bin")
    return env, dirs


def check_libraries(payload, manifest, env):
    """ldd of the packed binaries: None when every packed library comes from the payload."""
    if not shutil.which("ldd"):
        return "ldd not found: not checked"
    problems = []
    for b in manifest["bin"]:
        out = subprocess.run(["ldd", os.path.join(payload, "bin", b)], env=env, text=True,
                             capture_output=True).stdout
        for name, path in re.findall(r"^\s*(\S+)\s+=>\s+(.*?)\s*(?:\(0x[0-9a-f]+\))?$", out, re.M):
            if path == "not found":
                problems.append(f"{b}: {name} not found")
            elif name in manifest["libs"] and not os.path.realpath(path).startswith(
                    os.path.realpath(payload) + os.sep):
                problems.append(f"{b}: {name} resolved outside the payload ({path})")
    return "; ".join(problems) or None


def gpu_check():
    """(info dict, None) or (None, reason): nvidia-smi first, else torch in a subprocess."""
    if shutil.which("nvidia-smi"):
        r = subprocess.run(["nvidia-smi", "-L"], text=True, capture_output=True)
        gpus = [l for l in r.stdout.splitlines() if l.startswith("GPU")]
        if r.returncode or not gpus:
            return None, "nvidia-smi lists no GPU: " + (r.stderr.strip() or r.stdout.strip())[:300]
        info = {"gpu": gpus[0], "gpus": len(gpus)}
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap,memory.total,"
                            "clocks.max.sm", "--format=csv,noheader"], text=True, capture_output=True)
        fields = [x.strip() for x in r.stdout.splitlines()[0].split(",")] if r.returncode == 0 else []
        info.update(zip(["gpu", "driver", "compute_cap", "memory", "max_sm_clock"], fields))
        return info, None
    probe = ("import torch; ok = torch.cuda.is_available(); print(ok and torch.cuda.get_device_name(0)); "
             "print('%d.%d' % torch.cuda.get_device_capability(0) if ok else '')")
    r = subprocess.run([sys.executable, "-c", probe], text=True, capture_output=True)
    out = r.stdout.split("\n")
    if r.returncode or out[0] in ("False", ""):
        return None, "no nvidia-smi, and torch.cuda.is_available() is false" + (
            f" ({r.stderr.strip().splitlines()[-1]})" if r.stderr.strip() else "")
    return {"gpu": out[0], "compute_cap": out[1]}, None


# ---------------------------------------------------------------------------------- ortc steps
def shape_args(inputs):
    """--input-shape name=AxB... for each input ({name, shape})."""
    args = []
    for i in inputs:
        args += ["--input-shape", f"{i['name']}={'x'.join(str(d) for d in i['shape'])}"]
    return args


def run_limited(args, timeout, **kw):
    """subprocess.run with text output captured and a timeout (None: none); (result, None), or
    (None, "timeout after N s") when it was killed."""
    if timeout is not None and timeout <= 0:
        return None, "skipped: the run's --budget-s was spent"
    try:
        return subprocess.run(args, text=True, capture_output=True, timeout=timeout, **kw), None
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout:.0f} s"


def ortc_compile(ortc, env, model, entry, ep, precision, out_dir, target_arch, timeout=None,
                 max_partitions="entry", inputs=None):
    """`ortc compile` of one model; max_partitions "entry" takes the entry's (transformers: one
    CUDA group, or the compile fails), None none; inputs overrides the entry's input list."""
    args = [ortc, "compile", model, "--ep", ep, "-o", out_dir + "/", "-q", "--json"]
    args += shape_args(inputs if inputs is not None else entry_inputs(entry))
    if ep != "cpu":
        args += ["--precision", precision] + (["--target-arch", target_arch] if target_arch else [])
        limit = entry.get("max_partitions") if max_partitions == "entry" else max_partitions
        if limit:
            args += ["--max-partitions", str(limit)]
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.time()
    r, why = run_limited(args, timeout, env=env)
    res = {"compile_s": round(time.time() - t0, 2)}
    if r is None:
        res["error"] = f"compile: {why}"
        return res
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        rep = {}
    if r.returncode:
        msg = rep.get("error", {}).get("message") or (r.stderr or r.stdout).strip()
        res["error"] = f"compile exit {r.returncode}: {' '.join(msg.split())[:400]}"
        return res
    res["backends"] = {b["name"]: {"nodes": b["nodes"], "groups": b["groups"]}
                       for b in rep.get("backends", [])}
    res["lowering"] = rep.get("lowering")
    res["ctx"] = next((m.get("ctx_model") for m in rep.get("models", []) if m.get("ctx_model")), None)
    return res


def execution_path(run_json):
    """The per-graph "execution" fields of `ortc run --json` ("cuda_graph", "stream"), if any."""
    paths, todo = [], [run_json]
    while todo:  # wherever the report puts them (today: "graphs": [{"backend", "graph", ...}])
        x = todo.pop()
        if isinstance(x, dict) and isinstance(x.get("execution"), str):
            paths.append(x)
        todo += list(x.values()) if isinstance(x, dict) else x if isinstance(x, list) else []
    if not paths:
        return None, None
    text = "+".join(sorted({g["execution"] for g in paths}))
    reasons = "; ".join(f"{g.get('graph', '?')}: {g['reason']}" for g in paths if g.get("reason"))
    return text, reasons or None


def ortc_run(ortc, env, ctx, feeds, out_dir, runs, extra=(), timeout=None):
    args = [ortc, "run", ctx, "--output-dir", out_dir, "--json", *extra]
    for name, path in feeds:
        args += ["--input", f"{name}={path}"]
    if runs:
        args += ["--bench", str(runs)]
    r, why = run_limited(args, timeout, env=env)
    if r is None:
        return {"error": f"run: {why}"}, None
    try:
        j = json.loads(r.stdout)
    except ValueError:
        j = {}
    if r.returncode or not j.get("ok"):
        msg = j.get("error", {}).get("message") or (r.stderr or r.stdout).strip()
        return {"error": f"run exit {r.returncode}: {' '.join(msg.split())[:400]}"}, None
    import numpy as np
    outs = [np.load(os.path.join(out_dir, o["name"].replace("/", "_").replace("\\", "_") + ".npy"))
            for o in j["outputs"]]
    res = {"load_ms": j.get("load_ms"), "first_run_ms": j.get("first_run_ms")}
    if "latency_ms" in j:
        res.update({"p50_ms": j["latency_ms"]["p50"], "p90_ms": j["latency_ms"]["p90"],
                    "runs": j["latency_ms"]["runs"]})
    res["execution"], res["execution_reason"] = execution_path(j)
    if "graphs" in j:
        res["graphs"] = j["graphs"]
    return res, outs


def outputs_error(got, ref):
    """Worst relative L2 error over the float outputs."""
    errs = [rel_l2(g, r) for g, r in zip(got, ref) if g.dtype.kind == "f"]
    return max(errs) if errs else None


# ---------------------------------------------------------------------- PyTorch (worker process)
def torch_worker(spec_file):
    """Runs the variants of one model/batch and prints START/RESULT lines for the parent."""
    import numpy as np
    import torch
    spec = json.load(open(spec_file))
    emit = lambda kind, obj: print(kind, json.dumps(obj), flush=True)
    dev = spec["device"]  # "cuda"; "cpu" only to test this script on a machine without a GPU
    info = {"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "device": torch.cuda.get_device_name(0) if dev == "cuda" else dev}
    hf = spec.get("hf")
    if hf:  # a Hugging Face model: the exported state on a model built from the same config
        import transformers
        info["transformers"] = transformers.__version__
        state = torch.load(spec["weights"], map_location="cpu", weights_only=True)
        attn_bases = {}  # attention implementation: wrapped module on the device

        def hf_base(impl):
            if impl not in attn_bases:
                model, got = build_hf(hf, impl, state)
                if got != impl:
                    raise RuntimeError(f"attn_implementation {impl!r} requested, the model uses {got!r}")
                attn_bases[impl] = hf_wrapper(model, hf, spec["input_names"]).eval().to(dev)
            return attn_bases[impl]
        base = hf_base("sdpa")
    elif spec.get("transformer"):  # the classes of the packed make_transformer_models.py
        base = build_transformer(load_transformer_module(spec["transformer"]["module"]), spec["transformer"])
    else:
        import torchvision
        info["torchvision"] = torchvision.__version__
        base = getattr(torchvision.models, spec["arch"])(weights=None)
    emit("INFO", info)
    torch.backends.cudnn.benchmark = True
    if not hf:
        weights = np.load(spec["weights"])
        base.load_state_dict({k: torch.from_numpy(weights[k]) for k in weights.files})
        base = base.eval().to(dev)
    xs_host = [torch.from_numpy(np.load(f)) for f in spec["inputs"]]
    mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
    dtypes = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    memory_format = torch.channels_last if spec["channels_last"] else torch.contiguous_format
    ref = None
    order = [(v, True) for v in spec["variants"]]  # (variant, reported); strict fp32 eager first:
    fp32_eager = ["fp32", "eager"]                 # its output is the reference of the others
    if spec.get("reference", True):
        order = [(fp32_eager, fp32_eager in spec["variants"])] + [o for o in order if o[0] != fp32_eager]
    for (prec, mode), report in order:
        if report:
            emit("START", {"precision": prec, "mode": mode})
        try:
            tf32 = prec == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
            dt = dtypes[prec]
            src = hf_base("eager") if mode == "eager_attn" else base  # HF: eager attention
            model = src if dt == torch.float32 else copy.deepcopy(src).to(dt)
            fn = model = model.to(memory_format=memory_format)
            if mode not in EAGER_MODES:
                torch._dynamo.reset()
                fn = torch.compile(model, mode=None if mode == "compile" else mode)

            def once():
                if mark and mode == "reduce-overhead":
                    mark()
                xs = [x.to(dev).to(dt).contiguous(memory_format=memory_format) if x.is_floating_point()
                      else x.to(dev) for x in xs_host]  # token ids and masks keep their int64
                outs = fn(*xs)
                outs = [o.float().cpu() for o in (outs if isinstance(outs, (tuple, list)) else [outs])]
                if dev == "cuda":
                    torch.cuda.synchronize()
                return outs[0]  # every output copied back; the first one compared

            with torch.no_grad():  # not inference_mode: some torch.compile versions refuse its tensors
                t0 = time.perf_counter()
                out = once().numpy()
                first = time.perf_counter() - t0
                for _ in range(spec["warmup"] if report else 0):
                    once()
                lat = []
                for _ in range(spec["runs"] if report else 0):
                    t0 = time.perf_counter()
                    once()
                    lat.append((time.perf_counter() - t0) * 1e3)
            if [prec, mode] == fp32_eager:
                ref = out
                np.save(spec["ref_out"], out)
            res = {"first_call_s": round(first, 2), "runs": len(lat)}
            if lat:
                res.update(p50_ms=float(np.median(lat)), p90_ms=float(np.percentile(lat, 90)))
            if ref is not None:
                res["rel_l2"] = rel_l2(out, ref)
        except Exception as e:  # noqa: BLE001 - any failure of a variant is reported, not fatal
            lines = str(e).strip().splitlines() or [""]
            res = {"failed": f"{type(e).__name__}: {lines[0][:300]}"}
        if report:
            emit("RESULT", {"precision": prec, "mode": mode, **res})


def run_torch(entry, variants, a, work, logf, feeds, weights, compile_end=None, extra=None):
    """{(precision, mode): result}, info, reference file; each variant under its own deadline:
    180 s for eager ones, --compile-timeout for compiled ones but never past compile_end (default:
    --time-budget's end), and nothing past --budget-s's end. extra: more fields of the worker's
    spec (HF models: hf, input_names, reference)."""
    results, info = {}, {}
    remaining = [list(v) for v in variants]
    t = entry.get("transformer")
    spec = {"arch": (entry.get("torch") or {}).get("arch"), "weights": weights,
            "transformer": {**t, "module": os.path.join(HERE, t["module"])} if t else None,
            "inputs": [path for _, path in feeds], "ref_out": os.path.join(work, "torch_ref.npy"),
            "runs": a.runs, "warmup": a.warmup, "channels_last": a.torch_channels_last,
            "device": a.torch_device, **(extra or {})}
    compile_end = min(compile_end or a.budget_end, a.budget_end)

    def variant_deadline(mode, now):  # (deadline, what to say when it passes)
        if mode is None or mode in EAGER_MODES:  # None: start-up, or between variants
            end, why = now + 180, "timeout: no result after 180 s"
        else:
            end, why = now + a.compile_timeout, f"timeout after {a.compile_timeout} s (--compile-timeout)"
            if compile_end < end:
                end, why = compile_end, f"timeout after {max(compile_end - now, 0):.0f} s (what the run's budget left it)"
        if a.hard_end < end:
            end, why = a.hard_end, f"timeout after {max(a.hard_end - now, 0):.0f} s (--budget-s spent)"
        return end, why

    while remaining:
        now = time.time()
        if now >= compile_end:  # --time-budget spent: no compile starts any more
            for v in [v for v in remaining if v[1] not in EAGER_MODES]:
                results[tuple(v)] = {"failed": "skipped: no time left in the run's budget"
                                     if a.hard_end < float("inf") or compile_end < a.budget_end
                                     else f"skipped: --time-budget {a.time_budget} s reached"}
                remaining.remove(v)
        if now >= a.hard_end - 1:
            for v in remaining:
                results[tuple(v)] = {"failed": "skipped: --budget-s spent"}
            remaining = []
        if not remaining:
            break
        spec["variants"] = remaining
        spec_file = os.path.join(work, "torch_spec.json")
        json.dump(spec, open(spec_file, "w"))
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--torch-worker", spec_file],
                             stdout=subprocess.PIPE, stderr=logf, start_new_session=True)
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        current, buf, progressed, why = None, b"", False, None
        # seconds to the next line: start-up (import, model, device), then per variant
        deadline, why_now = variant_deadline(None, time.time())
        while True:
            left = deadline - time.time()
            if left <= 0:
                why = why_now
                os.killpg(p.pid, signal.SIGKILL)
                break
            if not sel.select(timeout=min(left, 5)):
                continue
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                kind, _, body = line.decode(errors="replace").partition(" ")
                try:
                    d = json.loads(body) if kind in ("INFO", "START", "RESULT") else None
                except ValueError:
                    d = None  # a stray line of torch's own output
                if d is None:
                    continue
                if kind == "INFO":
                    info = d
                elif kind == "START":
                    current = [d["precision"], d["mode"]]
                    log(f"  torch {entry['name']} {current[0]} {current[1]}")
                    deadline, why_now = variant_deadline(current[1], time.time())
                elif kind == "RESULT":
                    key = [d.pop("precision"), d.pop("mode")]
                    results[tuple(key)] = d
                    if key in remaining:
                        remaining.remove(key)
                    current, progressed = None, True
                    deadline, why_now = variant_deadline(None, time.time())
        rc = p.wait()
        sel.close()
        p.stdout.close()
        if current:  # the variant under way failed (timeout or crash): skip it, restart the rest
            results[tuple(current)] = {"failed": why or f"worker exited with code {rc} (see torch log)"}
            remaining.remove(current)
            if why and why.startswith("skipped"):  # so are the other compiles
                for v in [v for v in remaining if v[1] not in EAGER_MODES]:
                    results[tuple(v)] = {"failed": why}
                    remaining.remove(v)
        elif remaining and not progressed:  # torch failed before any variant (import, model, device)
            logf.flush()
            tail = open(logf.name, errors="replace").read().strip().splitlines()[-1:] or [f"exit {rc}"]
            for v in remaining:
                results[tuple(v)] = {"failed": why or f"worker: {tail[0][:300]}"}
            break
    ref = spec["ref_out"] if spec.get("reference", True) and os.path.exists(spec["ref_out"]) else None
    return results, info, ref


# ------------------------------------------------------------------------------------- report
def fmt_ms(r):
    if not r:
        return "-"
    if "failed" in r:
        return "skipped" if r["failed"].startswith("skipped") else "failed"
    return f"{r['p50_ms']:.3f}" if r.get("p50_ms") is not None else "-"


def ratio(a, b):
    if a and b and a.get("p50_ms") and b.get("p50_ms"):
        return a["p50_ms"] / b["p50_ms"]
    return None


def targets(rows):
    """The issue's targets: (status, text) with status PASS, FAIL or n/a."""
    def p50(model, batch, prec):
        for r in rows:
            if r["model"] == model and r["batch"] == batch and r["precision"] == prec:
                return (r.get("ortc") or {}).get("p50_ms")
        return None

    def check(name, value, limit, unit="ms"):
        if value is None or limit is None:
            return ("n/a", f"{name}: not measured")
        ok = value <= limit
        return ("PASS" if ok else "FAIL", f"{name}: {value:.3f} {unit} (limit {limit:.3f} {unit})")

    out = [check("resnet18 fp16 batch 1 <= 0.5 ms", p50("resnet18", 1, "fp16"), 0.5),
           check("mobilenet_v2 fp16 batch 1 <= 0.6 ms", p50("mobilenet_v2", 1, "fp16"), 0.6),
           check("PP-OCRv4 det 640x640 fp16 <= 2 ms", p50("ppocr_det", 1, "fp16"), 2.0),
           check("bert_base fp16 p50 <= 3 ms host-to-host", p50("bert_base", 1, "fp16"), 3.0),
           check("bert_base fp32 p50 <= 6 ms", p50("bert_base", 1, "fp32"), 6.0)]
    for name, model, batch in sorted({(r["name"], r["model"], r["batch"]) for r in rows if r.get("kind") != "hf"}):
        f32, f16 = p50(model, batch, "fp32"), p50(model, batch, "fp16")
        if f32 is None and f16 is None:
            continue
        out.append(check(f"{name} strict fp32 <= 1.5x fp16", f32, f16 and 1.5 * f16))
        out.append(check(f"{name} fp16 <= fp32", f16, f32))
    return out + hf_targets(rows)


def hf_target_row(rows, model):
    """The row the HF targets read: the TorchScript export's, else the first of the model that ran."""
    mine = [r for r in rows if r.get("kind") == "hf" and r["model"] == model]
    ran = [r for r in mine if (r.get("ortc") or {}).get("p50_ms") is not None]
    return next((r for r in ran if r["name"] == model), ran[0] if ran else (mine[0] if mine else None))


def hf_targets(rows):
    """hf_bert_base: ortc fp16 <= 0.25x PyTorch eager fp16 (sdpa) and <= 1.0x torch.compile
    reduce-overhead, host to host, as one CUDA graph."""
    r = hf_target_row(rows, "hf_bert_base")
    if r is None:
        return []
    o, t = r.get("ortc") or {}, r.get("torch") or {}
    label = f"hf_bert_base fp16 ({r.get('exporter', '?')} export)"

    def check(text, value, limit):
        if value is None:
            return ("n/a", f"{label} {text}: not measured")
        return ("PASS" if value <= limit else "FAIL", f"{label} {text}: {value:.3f}x (limit {limit:.2f}x)")

    out = [check("ortc <= 0.25x PyTorch eager fp16 (attn sdpa)", ratio(o, t.get("eager")), 0.25),
           check("ortc <= 1.0x torch.compile reduce-overhead", ratio(o, t.get("reduce-overhead")), 1.0)]
    one = o.get("one_cuda_graph")
    b = o.get("backends") or {}
    what = (f"{(b.get('cuda') or {}).get('groups', '?')} CUDA group(s), {(b.get('cpu') or {}).get('nodes', 0)} "
            f"CPU node(s), execution {o.get('execution') or '-'}")
    out.append(("n/a" if one is None else "PASS" if one else "FAIL",
                f"{label} runs as one CUDA graph: " + ("not measured" if one is None else what)))
    return out


def render_hf(result, notes):
    """The HF models' table (lines), their notes appended to notes."""
    rows = [r for r in result["rows"] if r.get("kind") == "hf"]
    if not rows:
        return []
    lines = ["", "== Hugging Face models, fp16, [1,128] (ms, host to host; ratios = ortc / PyTorch, "
             "< 1: ortc is faster; sdpa / eager: PyTorch eager with that attn_implementation)",
             f"{'model':<22}{'exporter':<12}{'ortc p50':>9}{'groups':>8}{'sdpa':>9}{'eager':>9}{'red-ovh':>9}"
             f"{'/sdpa':>7}{'/eager':>8}{'/red-ovh':>9}{'rel_l2':>9}{'compile':>9}  exec"]
    for name in dict.fromkeys(r["model"] for r in rows):
        exp = result.get("models", {}).get(name, {}).get("export") or {}
        if exp.get("not_exercised"):
            notes.append(f"{name}: NOT exercised: {exp['not_exercised']}")
        elif exp.get("error"):
            notes.append(f"{name} export: {exp['error']}")
        elif exp:
            parts = [f"{ex} {x['export_s']} s" + (f", ONNX Runtime CPU vs PyTorch rel_l2 {x['ort_rel_l2']:.1e}"
                                                 if x.get("ort_rel_l2") is not None else f" ({x['ort']})" if x.get("ort") else "")
                     for ex, x in (exp.get("exports") or {}).items() if "export_s" in x and "error" not in x]
            notes.append(f"{name} model: {exp.get('source', '?')} with transformers {exp.get('transformers', '?')}, "
                         f"torch {exp.get('torch', '?')}, {exp.get('params', 0) / 1e6:.1f}M parameters, attention "
                         f"{exp.get('attn_implementation', '?')}" + (f"; export {'; '.join(parts)}" if parts else ""))
    for r in rows:
        o, t, name = r.get("ortc") or {}, r.get("torch") or {}, r["name"]
        b = o.get("backends") or {}
        groups = (b.get("cuda") or {}).get("groups")
        gcell = "-" if groups is None else f"{groups}" + ("+cpu" if (b.get("cpu") or {}).get("nodes") else "")
        cell = ("n/exer" if o.get("not_exercised") else "failed" if o.get("error")
                else fmt_ms(o) if "p50_ms" in o else "built")
        err = o.get("rel_l2_vs_torch")
        ratios = (ratio(o, t.get("eager")), ratio(o, t.get("eager_attn")), ratio(o, t.get("reduce-overhead")))
        lines.append(f"{name:<22}{r.get('exporter', '-'):<12}{cell:>9}{gcell:>8}{fmt_ms(t.get('eager')):>9}"
                     f"{fmt_ms(t.get('eager_attn')):>9}{fmt_ms(t.get('reduce-overhead')):>9}"
                     + "".join(f"{(f'{x:.2f}x' if x else '-'):>{w}}" for x, w in zip(ratios, (7, 8, 9)))
                     + f"{(f'{err:.1e}' if err is not None else '-'):>9}"
                     + f"{(str(o['compile_s']) + 's' if o.get('compile_s') is not None else '-'):>9}"
                     + f"  {o.get('execution') or '-'}")
        if o.get("not_exercised"):
            continue
        if r.get("exporter_note"):
            notes.append(f"{name}: {r['exporter_note']}")
        mp = o.get("max_partitions_1")
        if mp:
            notes.append(f"{name} ortc compile --max-partitions 1: {mp['error']}; without it: "
                         + ("failed" if o.get("error") else
                            f"{groups} CUDA group(s), {(b.get('cpu') or {}).get('nodes', 0)} node(s) in "
                            f"{(b.get('cpu') or {}).get('groups', 0)} CPU group(s)"))
            part = o.get("partition") or {}
            if part.get("refused"):
                notes.append(f"{name} refused by CUDA: " + "; ".join(f"{k} (x{n})" for k, n in part["refused"][:5]))
            if part.get("dynamic_roots"):
                notes.append(f"{name} dynamic shapes from: " + "; ".join(part["dynamic_roots"][:2]))
        if o.get("error"):
            notes.append(f"{name} ortc: {o['error']}")
        if o.get("execution_reason"):
            notes.append(f"{name} ortc execution: {o['execution_reason']}")
        if err is not None:
            bound = ERROR_BOUND["fp16"]
            notes.append(f"{name} rel_l2 {err:.1e} against {o.get('reference', 'PyTorch fp32')}"
                         + (f" (above the sanity bound {bound})" if err > bound else ""))
        if o.get("one_cuda_graph") is not None:
            notes.append(f"{name} one CUDA graph: {'yes' if o['one_cuda_graph'] else 'no'}")
        for mode, v in t.items():
            if v and "failed" in v:
                what = v["failed"] if v["failed"].startswith(("skipped", "deferred")) else "failed: " + v["failed"]
                notes.append(f"{name} torch fp16 {mode}: {what}")
    return lines


def render_attention(result, notes):
    """The attention kernel table (lines), its notes appended to notes."""
    t = result.get("attention")
    if not t or not t.get("rows"):
        return []
    lines = ["", f"== Attention kernel: fp16, batch {t['batch']}, {t['heads']} heads, head dim {t['head_dim']}, "
             f"no causal mask, padding mask (the last {t['padding']} of the keys); device time per call, median "
             "(ortc: its fused kernel's step in `ortc run --profile`; PyTorch: CUDA events around SDPA); "
             "4*S*S*64*heads FLOPs",
             f"{'seq':>6}{'ortc us':>10}{'TFLOP/s':>9}{'fused':>7}{'torch us':>10}{'TFLOP/s':>9}"
             f"{'ortc/torch':>11}{'rel_l2 ortc':>12}{'rel_l2 torch':>13}"]

    def tflops(row, us):
        return f"{row['flops'] / (us * 1e-6) / 1e12:.1f}" if us else "-"

    for r in t["rows"]:
        o, th = r.get("ortc") or {}, r.get("torch") or {}
        ou, tu = o.get("device_us"), th.get("median_us")
        errs = [f"{x['rel_l2']:.1e}" if x.get("rel_l2") is not None else "-" for x in (o, th)]
        lines.append(f"{r['seq']:>6}{(f'{ou:.1f}' if ou else 'failed' if o.get('error') else '-'):>10}"
                     f"{tflops(r, ou):>9}{str(o.get('fused_attention', '-')):>7}"
                     f"{(f'{tu:.1f}' if tu else 'failed' if th.get('failed') else '-'):>10}{tflops(r, tu):>9}"
                     f"{(f'{ou / tu:.2f}x' if ou and tu else '-'):>11}{errs[0]:>12}{errs[1]:>13}")
        if o.get("error"):
            notes.append(f"attention s={r['seq']} ortc: {o['error']}")
        elif o.get("fused_attention") not in (None, 1):
            notes.append(f"attention s={r['seq']} ortc: {o.get('fused_attention')} fused attention op(s), not 1")
        if o.get("step_found") is False:
            notes.append(f"attention s={r['seq']} ortc: no step named after the Softmax; all kernel steps summed")
        if th.get("failed"):
            notes.append(f"attention s={r['seq']} torch: {th['failed']}")
        backends = th.get("backends") or {}
        if backends:
            notes.append(f"attention s={r['seq']} torch SDPA backends: " + ", ".join(
                f"{k} {v['median_us']:.1f} us" if "median_us" in v else f"{k} failed ({v.get('failed', '?')[:60]})"
                for k, v in backends.items()))
        cpu = r.get("cpu_reference")
        if cpu:
            notes.append(f"attention s={r['seq']} ortc CPU build: " + (
                f"rel_l2 {cpu['rel_l2']:.1e} against the fp32 reference" if cpu.get("rel_l2") is not None
                else cpu.get("error", "did not run")))
    return lines


def render(result):
    """The tables, failures and targets as text."""
    rows, lines, notes = result["rows"], [], []
    host = result.get("host", {})
    gpu = f"GPU: {host.get('gpu', '?')}  driver {host.get('driver', '?')}  torch {host.get('torch', '-')}"
    ortc = result.get("ortc", {})
    lines.append(("dry run (no GPU)" if host.get("dry_run") else gpu)
                 + f"  {ortc.get('version', 'ortc ?')} {ortc.get('commit', '')[:12]}")
    head = (f"{'model':<18}{'prec':<6}{'ortc p50':>9}{'eager':>9}{'compile':>9}{'red-ovh':>9}"
            f"{'/eager':>8}{'/red-ovh':>9}{'rel_l2':>10}  exec")
    for name in dict.fromkeys(r["name"] for r in rows if r.get("kind") != "hf"):
        m = result.get("models", {}).get(name, {})
        same = m.get("torch_fp32_vs_cpu")
        lines += ["", f"== {name} (ms, host to host; ratios = ortc / PyTorch, < 1: ortc is faster)"
                  + (f"; PyTorch fp32 vs ortc CPU: {same:.1e}" if same is not None else ""), head]
        exp = m.get("export")
        if exp and exp.get("error"):
            notes.append(f"{name} model: {exp['error']}")
        elif exp:
            notes.append(f"{name} model: {exp.get('source', '?')} with torch {exp.get('torch', '?')}"
                         + (f" in {exp['export_s']} s" if exp.get("source") == "exported here" else ""))
        cpu = m.get("cpu_reference", {})
        if cpu and not cpu.get("ok"):
            notes.append(f"{name} ortc --ep cpu reference: {cpu.get('error', 'failed')}")
        elif cpu.get("p50_ms") is not None:
            notes.append(f"{name} ortc --ep cpu reference: ran, p50 {cpu['p50_ms']:.3f} ms")
        for r in [r for r in rows if r["name"] == name]:
            o, t = r.get("ortc") or {}, r.get("torch") or {}
            err = o.get("rel_l2_vs_torch", o.get("rel_l2_vs_cpu"))
            src = "t" if "rel_l2_vs_torch" in o else "c"
            bound = ERROR_BOUND.get(r["precision"])
            mark = "!" if err is not None and bound and err > bound else " "
            re_ = ratio(o, t.get("eager")), ratio(o, t.get("reduce-overhead"))
            ortc_cell = "failed" if o.get("error") else fmt_ms(o) if "p50_ms" in o else "built"
            err_cell = f"{err:.1e}{src}" if err is not None else "-"
            lines.append(f"{name:<18}{r['precision']:<6}{ortc_cell:>9}{fmt_ms(t.get('eager')):>9}"
                         f"{fmt_ms(t.get('compile')):>9}{fmt_ms(t.get('reduce-overhead')):>9}"
                         + "".join(f"{(f'{x:.2f}x' if x else '-'):>{w}}" for x, w in zip(re_, (8, 9)))
                         + f"{err_cell:>10}{mark} {o.get('execution') or '-'}")
            if o.get("error"):
                notes.append(f"{name} {r['precision']} ortc: {o['error']}")
            left = (o.get("backends") or {}).get("cpu", {}).get("nodes")
            if left:
                notes.append(f"{name} {r['precision']} ortc: {left} node(s) left to the CPU")
            if o.get("execution_reason"):
                notes.append(f"{name} {r['precision']} ortc execution: {o['execution_reason']}")
            if o.get("p50_ms") and o.get("p50_stream_ms"):
                diff = o.get("graph_vs_stream_rel_l2")
                notes.append(f"{name} {r['precision']} ortc without CUDA graphs: "
                             f"{o['p50_stream_ms']:.3f} ms p50 ({o['p50_stream_ms'] / o['p50_ms']:.2f}x "
                             f"the graph's), outputs differ by rel_l2 "
                             f"{diff if diff is not None else float('nan'):.1e}")
            issue = m.get("issue") or {}
            if issue.get("torch_eager_ms") and r["precision"] == issue.get("precision"):
                here = (t.get("eager") or {}).get("p50_ms")
                notes.append(f"{name} {r['precision']}: the issue quotes {issue['torch_eager_ms']} ms for PyTorch "
                             f"eager {r['precision']} on {issue.get('gpu', '?')}; here "
                             + (f"{here:.3f} ms" if here else "not measured")
                             + (f"; ortc = {o['p50_ms'] / issue['torch_eager_ms']:.2f}x the issue's figure"
                                if o.get("p50_ms") else ""))
            if o.get("stream_error"):
                notes.append(f"{name} {r['precision']} ortc without CUDA graphs: {o['stream_error']}")
            for mode, v in t.items():
                if v and "failed" in v:
                    what = v["failed"] if v["failed"].startswith("skipped") else "failed: " + v["failed"]
                    notes.append(f"{name} {r['precision']} torch {mode}: {what}")
    if any(r.get("kind") != "hf" for r in rows):
        lines.append("\nrel_l2: ortc output vs PyTorch strict fp32 (t) or vs ortc's CPU build (c); "
                     f"! = above the sanity bound {ERROR_BOUND}")
    lines += render_hf(result, notes) + render_attention(result, notes)
    if notes:
        lines += ["", "Failures and notes:"] + ["  " + n for n in notes]
    lines += ["", "Targets:"] + [f"  {s:<4}  {t}" for s, t in targets(rows)]
    return "\n".join(lines) + "\n"


def save(result, out):
    os.makedirs(out, exist_ok=True)
    result["targets"] = [{"status": s, "check": t} for s, t in targets(result["rows"])]
    with open(os.path.join(out, "results.json.tmp"), "w") as f:
        json.dump(result, f, indent=1)
    os.replace(os.path.join(out, "results.json.tmp"), os.path.join(out, "results.json"))
    with open(os.path.join(out, "results.txt"), "w") as f:
        f.write(render(result))


# --------------------------------------------------------------------------------------- main
def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="about 8 minutes: batch 1, fp32+fp16, torch eager + "
                   "reduce-overhead, 100 runs (options given explicitly still win)")
    p.add_argument("--out", help="results folder (default: $OUT, else results/ beside this script)")
    p.add_argument("--models", help="comma-separated names from the manifest (default: all), e.g. "
                   "resnet18,ppocr_det or resnet18_b16")
    p.add_argument("--batches", help="comma-separated batch sizes (default: all packed)")
    p.add_argument("--precisions", help="comma-separated of fp32,tf32,fp16,bf16 (default fp32,tf32,fp16)")
    p.add_argument("--torch-modes", help="comma-separated of eager,compile,reduce-overhead, or none "
                   "(default: all three)")
    p.add_argument("--runs", type=int, help="timed runs per measurement (default 300)")
    p.add_argument("--warmup", type=int, default=20, help="PyTorch warm-up calls (default 20)")
    p.add_argument("--compile-timeout", type=int, help="seconds per torch.compile variant (default 240)")
    p.add_argument("--time-budget", type=int, help="seconds from the start after which torch.compile "
                   "variants are skipped (ortc and eager still run; default 1500, quick 420)")
    p.add_argument("--target-arch", help="ortc --target-arch (default: the GPU's sm_XY)")
    p.add_argument("--seed", type=int, default=1, help="seed of the input")
    p.add_argument("--torch-channels-last", action="store_true", help="PyTorch in channels_last")
    p.add_argument("--keep-work", help="keep compiled models and outputs in this folder")
    p.add_argument("--strict", action="store_true", help="exit 1 when a target or an ortc step fails")
    p.add_argument("--dry-run", action="store_true", help="no GPU: skip the device check, PyTorch and "
                   "CUDA runs; compile (CPU, and CUDA when NVRTC is found) and run on the CPU with "
                   "LD_LIBRARY_PATH restricted to the payload (proves it is self-contained)")
    p.add_argument("--report", metavar="RESULTS_JSON", help="print a saved results.json and exit")
    p.add_argument("--torch-device", default="cuda", help=argparse.SUPPRESS)  # cpu: tests without a GPU
    p.add_argument("--export-timeout", type=int, default=900, help="seconds for exporting one transformer "
                   "with this machine's torch when it was not packed (default 900)")
    p.add_argument("--budget-s", type=float, help="seconds for the whole run: every step's timeout "
                   "is cut to what is left (a step past it is reported as a timeout, one not started "
                   "as skipped, and the rest goes on); results are written after every model")
    p.add_argument("--hf-exporter", choices=("torchscript", "dynamo", "both"), default="torchscript",
                   help="exporter of the Hugging Face models (hf_*): TorchScript (dynamo=False, opset 17; "
                   "the default: when it fails the dynamo exporter is tried), dynamo (dynamo=True, "
                   "opset 18), or both (one row each)")
    p.add_argument("--hf-torch-modes", default="eager,eager_attn,reduce-overhead",
                   help="PyTorch variants of the HF models, fp16: eager (attn_implementation sdpa), "
                   "eager_attn (attn_implementation eager), reduce-overhead and compile (sdpa); "
                   "or none (default eager,eager_attn,reduce-overhead)")
    p.add_argument("--attention-seqs", help="sequence lengths of the attention table (default: all "
                   "packed, e.g. 128,512,2048)")
    p.add_argument("--torch-worker", help=argparse.SUPPRESS)
    p.add_argument("--export-model", help=argparse.SUPPRESS)
    p.add_argument("--export-hf", help=argparse.SUPPRESS)
    p.add_argument("--attention-worker", help=argparse.SUPPRESS)
    a = p.parse_args()
    q = a.quick
    a.precisions = (a.precisions or ("fp32,fp16" if q else "fp32,tf32,fp16")).split(",")
    modes = a.torch_modes or ("eager,reduce-overhead" if q else ",".join(MODES))
    a.torch_modes = [] if modes == "none" else modes.split(",")
    a.batches = [int(b) for b in (a.batches or ("1" if q else "")).split(",") if b]
    a.runs = a.runs if a.runs is not None else (100 if q else 300)
    a.compile_timeout = a.compile_timeout or (150 if q else 240)
    a.time_budget = a.time_budget or (420 if q else 1500)
    a.budget_end = time.time() + a.time_budget
    a.hard_end = float("inf")
    if a.budget_s is not None:  # everything ends then; torch.compile variants start no later
        a.hard_end = time.time() + a.budget_s
        a.budget_end = min(a.budget_end, a.hard_end - RESERVE_S)
    a.hf_torch_modes = [] if a.hf_torch_modes == "none" else a.hf_torch_modes.split(",")
    a.attention_seqs = [int(x) for x in a.attention_seqs.split(",")] if a.attention_seqs else None
    bad = [x for x in a.precisions if x not in PRECISIONS] + [m for m in a.torch_modes if m not in MODES]
    bad += [m for m in a.hf_torch_modes if m not in HF_MODES]
    if bad:
        p.error(f"unknown precision or torch mode: {bad}")
    return a


def bench_model(e, a, ortc, env, target_arch, work, out, result):
    """One model file: ortc's CPU reference, ortc per precision, PyTorch; rows into result."""
    import numpy as np
    wd = os.path.join(work, e["name"])
    os.makedirs(wd, exist_ok=True)
    summary = {"issue": e["issue"]} if e.get("issue") else {}
    result["models"][e["name"]] = summary
    model = os.path.join(HERE, e["file"])
    weights = os.path.join(HERE, e["torch"]["weights"]) if e.get("torch") else None
    if e.get("transformer"):  # packed, or exported here with this machine's torch
        with open(os.path.join(wd, "export.log"), "w") as logf:
            model, weights, summary["export"] = transformer_files(e, a, work, logf)
        if os.path.getsize(logf.name):
            shutil.copyfile(logf.name, os.path.join(out, f"export_{e['name']}.log"))
        if "error" in summary["export"]:
            err = summary["export"]["error"]
            summary["cpu_reference"] = {"ok": False, "error": err}
            result["rows"] += [{"name": e["name"], "model": e["model"], "batch": e["batch"], "precision": p,
                                "shape": e["shape"], "ortc": {"error": err}, "torch": {}} for p in a.precisions]
            return 1
    stem = os.path.basename(model)[:-len(".onnx")]
    feeds = make_inputs(e, a.seed, wd)
    log(f"{e['name']}: ortc --ep cpu (reference)")
    cpu = ortc_compile(ortc, env, model, e, "cpu", None, os.path.join(wd, "cpu"), None,
                       timeout=step_timeout(a, 900))
    cpu_outs = None
    if "error" not in cpu:
        run, cpu_outs = ortc_run(ortc, env, os.path.join(wd, "cpu", stem + "_ctx.onnx"), feeds,
                                 os.path.join(wd, "cpu", "out"), 5 if a.dry_run else 0,
                                 timeout=step_timeout(a, 600))
        cpu.update(run)
    cpu["ok"] = cpu_outs is not None
    summary["cpu_reference"] = cpu
    failures = 0 if cpu["ok"] else 1
    rows, outs_of = [], {}
    for prec in a.precisions:
        log(f"{e['name']}: ortc --ep cuda,cpu --precision {prec}")
        d = os.path.join(wd, prec)
        o = ortc_compile(ortc, env, model, e, "cuda,cpu", prec, d, target_arch, timeout=step_timeout(a, 900))
        if "error" not in o and not a.dry_run:
            ctx = os.path.join(d, stem + "_ctx.onnx")
            run, outs_of[prec] = ortc_run(ortc, env, ctx, feeds, os.path.join(d, "out"), a.runs,
                                          timeout=step_timeout(a, 600))
            o.update(run)
            # The same bundle with CUDA graphs off: what one graph launch per run saves, and
            # whether the replayed graph computes exactly what the stream computes.
            plain, plain_outs = ortc_run(ortc, env, ctx, feeds, os.path.join(d, "out_stream"),
                                         max(a.runs // 2, 5),
                                         ["--provider-option", "cuda:enable_cuda_graph=0"],
                                         timeout=step_timeout(a, 600))
            if "error" in plain:
                o["stream_error"] = plain["error"]
            else:
                o["p50_stream_ms"] = plain.get("p50_ms")
                if outs_of.get(prec) is not None and plain_outs is not None:
                    o["graph_vs_stream_rel_l2"] = outputs_error(outs_of[prec], plain_outs)
        if outs_of.get(prec) is not None and cpu_outs is not None:
            o["rel_l2_vs_cpu"] = outputs_error(outs_of[prec], cpu_outs)
        if "error" in o and a.dry_run:
            o["note"] = "dry run: not counted as a failure (CUDA compiles need NVRTC)"
        failures += "error" in o and not a.dry_run
        rows.append({"name": e["name"], "model": e["model"], "batch": e["batch"], "precision": prec,
                     "shape": e["shape"], "ortc": o, "torch": {}})
    if weights and a.torch_modes and (not a.dry_run or a.torch_device == "cpu"):
        variants = [(p, m) for m in a.torch_modes for p in a.precisions  # fast ones first
                    if a.torch_device != "cpu" or p in ("fp32", "tf32")]  # CPU kernels lack fp16
        with open(os.path.join(wd, "torch.log"), "w") as logf:
            tres, info, ref = run_torch(e, variants, a, wd, logf, feeds, weights)
        shutil.copyfile(logf.name, os.path.join(out, f"torch_{e['name']}.log"))
        result["host"].update({k: info[k] for k in ("torch", "torchvision", "cuda", "cudnn") if k in info})
        torch_ref = np.load(ref) if ref else None
        if torch_ref is not None and cpu_outs is not None:  # proves both ran the same weights
            summary["torch_fp32_vs_cpu"] = rel_l2(torch_ref, cpu_outs[0])
        for r in rows:
            r["torch"] = {m: tres.get((r["precision"], m)) for m in a.torch_modes}
            if torch_ref is not None and outs_of.get(r["precision"]) is not None:
                r["ortc"]["rel_l2_vs_torch"] = rel_l2(outs_of[r["precision"]][0], torch_ref)
    result["rows"] += rows
    return failures


def main():
    a = parse_args()
    if a.torch_worker:
        return torch_worker(a.torch_worker)
    if a.export_model:
        return export_main(a.export_model)
    if a.export_hf:
        return export_hf_main(a.export_hf)
    if a.attention_worker:
        return attention_worker(a.attention_worker)
    if a.report:
        sys.stdout.write(render(json.load(open(a.report))))
        return 0
    host = {"dry_run": a.dry_run}
    if not a.dry_run:
        info, why = gpu_check()
        if not info:
            print(f"SKIP: no CUDA device: {why}")
            return 77
        host.update(info)
        log(f"GPU: {info}")
    if importlib.util.find_spec("numpy") is None:  # needed below: say so before any work
        print(f"{sys.executable} has no numpy: run with PYTHON=/path/to/python3 {HERE}/run.sh")
        return 2
    manifest = json.load(open(os.path.join(HERE, "manifest.json")))
    out = os.path.abspath(a.out or os.environ.get("OUT") or os.path.join(HERE, "results"))
    payload = unpack(manifest)
    ortc = os.path.join(payload, "bin", "ortc")
    env, lib_dirs = ortc_env(payload, a.dry_run)
    log(f"ortc: {ortc} ({manifest['ortc'].get('version')}, commit {manifest['ortc'].get('commit', '?')[:12]})")
    log(f"LD_LIBRARY_PATH for ortc: {env['LD_LIBRARY_PATH']}")
    r = subprocess.run([ortc, "--version"], env=env, text=True, capture_output=True)
    if r.returncode:  # typically an older glibc / libstdc++ than the build machine's
        print(f"the packed ortc does not start here: {r.stderr.strip()[:500]}\n"
              f"it needs at least the build machine's glibc and libstdc++: {manifest.get('requires')}")
        return 1
    problem = check_libraries(payload, manifest, env)
    if problem:
        log(f"library check: {problem}")
        if a.dry_run or "not found" in problem:
            return 1
    target_arch = a.target_arch
    cap = host.get("compute_cap", "").replace(".", "")
    if not target_arch and cap in ("80", "86", "89", "90"):  # only the GPU's cubin: faster compiles
        target_arch = f"sm_{cap}"
    names = a.models.split(",") if a.models else None
    entries = [e for e in manifest["models"] if (not names or e["model"] in names or e["name"] in names)
               and (not a.batches or e["batch"] in a.batches)]
    entries.sort(key=lambda e: e["batch"])  # batch 1 (the targets) first, should the budget run out
    if not entries:
        print(f"no packed model matches --models/--batches: {[e['name'] for e in manifest['models']]}")
        return 2
    options = {k: v for k, v in vars(a).items() if k not in ("torch_worker", "export_model", "report",
                                                              "budget_end", "hard_end", "export_hf",
                                                              "attention_worker")}
    result = {"schema": "ortc_gpu_bench/1", "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host": host,
              "ortc": manifest["ortc"], "lib_dirs": lib_dirs, "self_contained": problem is None,
              "options": options, "target_arch": target_arch, "models": {}, "rows": []}
    work = a.keep_work or tempfile.mkdtemp(prefix="ortc_gpu_bench.")
    os.makedirs(out, exist_ok=True)
    failures, t0 = 0, time.time()
    hf_entries = [e for e in entries if e.get("kind") == "hf"]
    jobs, deferred = {}, []

    def saved():
        result["elapsed_s"] = round(time.time() - t0)
        save(result, out)  # after every model: a cut-off run keeps what it measured

    try:
        for e in [e for e in entries if e.get("kind") not in ("hf", "attention")]:
            failures += bench_model(e, a, ortc, env, target_arch, work, out, result)
            saved()
            if not a.keep_work:  # compiled bundles of a base-sized transformer: about 1.5 GB
                shutil.rmtree(os.path.join(work, e["name"]), ignore_errors=True)
        for e in hf_entries:  # exports side by side in the background, while the rest measures
            jobs[e["name"]] = HfExport(e, a, work, max(1, (os.cpu_count() or 2) // len(hf_entries)))
        for e in [e for e in entries if e.get("kind") == "attention"]:
            failures += bench_attention(e, a, ortc, env, target_arch, work, out, result)
            saved()
        for i, e in enumerate(hf_entries):
            f, d = bench_hf(e, jobs[e["name"]], a, ortc, env, target_arch, out, result, len(hf_entries) - i - 1,
                            list(jobs.values()))
            failures += f
            deferred += [d] if d else []
            saved()
            if not a.keep_work:  # its bundles (the inputs and the exported files stay)
                for sub in ("torchscript", "dynamo"):
                    shutil.rmtree(os.path.join(jobs[e["name"]].wd, sub), ignore_errors=True)
        for d in deferred:
            log(f"{d['entry']['name']}: deferred torch.compile")
            hf_deferred(d, a, out, result)
            saved()
        result["elapsed_s"] = round(time.time() - t0)
    finally:
        for job in jobs.values():
            job.kill()
        if not a.keep_work:
            shutil.rmtree(work, ignore_errors=True)
    sys.stdout.write(render(result))
    print(f"\nresults: {out}/results.json and results.txt ({result['elapsed_s']} s)")
    failed_targets = any(t["status"] == "FAIL" for t in result["targets"])
    return 1 if a.strict and (failures or failed_targets) else 0


if __name__ == "__main__":
    sys.exit(main())
