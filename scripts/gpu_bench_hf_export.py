"""GPU benchmark runner: the Hugging Face models (hf_*) built from their packed config, exported in
background processes (HfExport, the --export-hf worker) and wrapped for PyTorch's timings."""
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

from gpu_bench_common import entry_inputs, log, make_inputs, models_dir, rel_l2, worker_command


# A manifest entry's "hf" record (hf_entry of gpu_bench_pack.py): model_class (BertModel,
# GPT2LMHeadModel, LlamaForCausalLM), config_class and its values, auto_class (AutoModel,
# AutoModelForCausalLM), output (last_hidden_state or logits), causal (use_cache=False in every
# call), seed, opset (TorchScript) and dynamo_opset. Nothing is downloaded: the model is built from
# the config.
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
        # --hf-dynamo-opset: the dynamo exporter's opset (from 23 it writes SDPA as the Attention op)
        opset = getattr(a, "hf_dynamo_opset", None) or e["hf"]["dynamo_opset"]
        hf = {**e["hf"], "dynamo_opset": opset}
        dynamo_file = base + (".dynamo.onnx" if opset == 18 else f".dynamo{opset}.onnx")
        self.spec = {"hf": hf, "input_names": [n for n, _ in self.feeds], "inputs": [p for _, p in self.feeds],
                     "exporters": exporters, "fallback": a.hf_exporter == "torchscript", "threads": threads,
                     "state": base + ".pt", "reference": base + ".ref.npy",
                     "files": {"torchscript": base + ".onnx", "dynamo": dynamo_file}}
        self.stamp = base + ".export.json"
        self.key = {"hf": hf, "exporters": exporters, "fallback": self.spec["fallback"],
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
        self.proc = subprocess.Popen(worker_command("--export-hf", spec_file),
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
