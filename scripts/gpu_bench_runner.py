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
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--export-model", spec_file],
                           stdout=subprocess.PIPE, stderr=logf, text=True, timeout=a.export_timeout)
    except subprocess.TimeoutExpired:
        return onnx_path, weights, {"error": f"export: timeout after {a.export_timeout} s"}
    done = [l for l in r.stdout.splitlines() if l.startswith("EXPORTED ")]
    if r.returncode or not done:
        logf.flush()
        tail = open(logf.name, errors="replace").read().strip().splitlines()[-1:] or [f"exit {r.returncode}"]
        return onnx_path, weights, {"error": f"export with this machine's torch failed: {tail[0][:300]}"}
    info = json.loads(done[-1][len("EXPORTED "):])
    with open(stamp, "w") as f:
        json.dump({"transformer": t, "info": info}, f)
    return onnx_path, weights, {**info, "source": "exported here"}


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
def ortc_compile(ortc, env, model, entry, ep, precision, out_dir, target_arch):
    args = [ortc, "compile", model, "--ep", ep, "-o", out_dir + "/", "-q", "--json"]
    for i in entry_inputs(entry):
        args += ["--input-shape", f"{i['name']}={'x'.join(str(d) for d in i['shape'])}"]
    if ep != "cpu":
        args += ["--precision", precision] + (["--target-arch", target_arch] if target_arch else [])
        if entry.get("max_partitions"):  # transformers: one CUDA group, or the compile fails
            args += ["--max-partitions", str(entry["max_partitions"])]
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.time()
    r = subprocess.run(args, env=env, text=True, capture_output=True)
    res = {"compile_s": round(time.time() - t0, 2)}
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


def ortc_run(ortc, env, ctx, feeds, out_dir, runs, extra=()):
    args = [ortc, "run", ctx, "--output-dir", out_dir, "--json", *extra]
    for name, path in feeds:
        args += ["--input", f"{name}={path}"]
    if runs:
        args += ["--bench", str(runs)]
    r = subprocess.run(args, env=env, text=True, capture_output=True)
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
    if spec.get("transformer"):  # the classes of the packed make_transformer_models.py
        base = build_transformer(load_transformer_module(spec["transformer"]["module"]), spec["transformer"])
    else:
        import torchvision
        info["torchvision"] = torchvision.__version__
        base = getattr(torchvision.models, spec["arch"])(weights=None)
    emit("INFO", info)
    torch.backends.cudnn.benchmark = True
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
    order = [(fp32_eager, fp32_eager in spec["variants"])] + [o for o in order if o[0] != fp32_eager]
    for (prec, mode), report in order:
        if report:
            emit("START", {"precision": prec, "mode": mode})
        try:
            tf32 = prec == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
            dt = dtypes[prec]
            model = base if dt == torch.float32 else copy.deepcopy(base).to(dt)
            fn = model = model.to(memory_format=memory_format)
            if mode != "eager":
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


def run_torch(entry, variants, a, work, logf, feeds, weights):
    """{(precision, mode): result}, info, reference file; each variant under its own deadline."""
    results, info = {}, {}
    remaining = [list(v) for v in variants]
    t = entry.get("transformer")
    spec = {"arch": (entry.get("torch") or {}).get("arch"), "weights": weights,
            "transformer": {**t, "module": os.path.join(HERE, t["module"])} if t else None,
            "inputs": [path for _, path in feeds], "ref_out": os.path.join(work, "torch_ref.npy"),
            "runs": a.runs, "warmup": a.warmup, "channels_last": a.torch_channels_last,
            "device": a.torch_device}
    while remaining:
        if time.time() >= a.budget_end:  # --time-budget spent: no compile starts any more
            for v in [v for v in remaining if v[1] != "eager"]:
                results[tuple(v)] = {"failed": f"skipped: --time-budget {a.time_budget} s reached"}
                remaining.remove(v)
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
        limit = 180  # seconds to the next line: start-up (import, model, device), then per variant
        deadline = time.time() + limit
        while True:
            left = deadline - time.time()
            if left <= 0:
                why = why or f"timeout: no result after {limit} s"
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
                    limit = a.compile_timeout if current[1] != "eager" else 180
                    deadline = time.time() + limit
                    if current[1] != "eager" and deadline > a.budget_end:  # --time-budget
                        deadline, why = a.budget_end, f"skipped: --time-budget {a.time_budget} s reached"
                elif kind == "RESULT":
                    key = [d.pop("precision"), d.pop("mode")]
                    results[tuple(key)] = d
                    if key in remaining:
                        remaining.remove(key)
                    current, progressed, limit, why = None, True, 180, None
                    deadline = time.time() + limit
        rc = p.wait()
        sel.close()
        p.stdout.close()
        if current:  # the variant under way failed (timeout or crash): skip it, restart the rest
            results[tuple(current)] = {"failed": why or f"worker exited with code {rc} (see torch log)"}
            remaining.remove(current)
            if why and why.startswith("skipped"):  # so are the other compiles
                for v in [v for v in remaining if v[1] != "eager"]:
                    results[tuple(v)] = {"failed": why}
                    remaining.remove(v)
        elif remaining and not progressed:  # torch failed before any variant (import, model, device)
            logf.flush()
            tail = open(logf.name, errors="replace").read().strip().splitlines()[-1:] or [f"exit {rc}"]
            for v in remaining:
                results[tuple(v)] = {"failed": why or f"worker: {tail[0][:300]}"}
            break
    ref = spec["ref_out"] if os.path.exists(spec["ref_out"]) else None
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
    for name, model, batch in sorted({(r["name"], r["model"], r["batch"]) for r in rows}):
        f32, f16 = p50(model, batch, "fp32"), p50(model, batch, "fp16")
        if f32 is None and f16 is None:
            continue
        out.append(check(f"{name} strict fp32 <= 1.5x fp16", f32, f16 and 1.5 * f16))
        out.append(check(f"{name} fp16 <= fp32", f16, f32))
    return out


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
    for name in dict.fromkeys(r["name"] for r in rows):
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
    lines.append("\nrel_l2: ortc output vs PyTorch strict fp32 (t) or vs ortc's CPU build (c); "
                 f"! = above the sanity bound {ERROR_BOUND}")
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
    p.add_argument("--torch-worker", help=argparse.SUPPRESS)
    p.add_argument("--export-model", help=argparse.SUPPRESS)
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
    bad = [x for x in a.precisions if x not in PRECISIONS] + [m for m in a.torch_modes if m not in MODES]
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
    cpu = ortc_compile(ortc, env, model, e, "cpu", None, os.path.join(wd, "cpu"), None)
    cpu_outs = None
    if "error" not in cpu:
        run, cpu_outs = ortc_run(ortc, env, os.path.join(wd, "cpu", stem + "_ctx.onnx"), feeds,
                                 os.path.join(wd, "cpu", "out"), 5 if a.dry_run else 0)
        cpu.update(run)
    cpu["ok"] = cpu_outs is not None
    summary["cpu_reference"] = cpu
    failures = 0 if cpu["ok"] else 1
    rows, outs_of = [], {}
    for prec in a.precisions:
        log(f"{e['name']}: ortc --ep cuda,cpu --precision {prec}")
        d = os.path.join(wd, prec)
        o = ortc_compile(ortc, env, model, e, "cuda,cpu", prec, d, target_arch)
        if "error" not in o and not a.dry_run:
            ctx = os.path.join(d, stem + "_ctx.onnx")
            run, outs_of[prec] = ortc_run(ortc, env, ctx, feeds, os.path.join(d, "out"), a.runs)
            o.update(run)
            # The same bundle with CUDA graphs off: what one graph launch per run saves, and
            # whether the replayed graph computes exactly what the stream computes.
            plain, plain_outs = ortc_run(ortc, env, ctx, feeds, os.path.join(d, "out_stream"),
                                         max(a.runs // 2, 5),
                                         ["--provider-option", "cuda:enable_cuda_graph=0"])
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
                                                              "budget_end")}
    result = {"schema": "ortc_gpu_bench/1", "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host": host,
              "ortc": manifest["ortc"], "lib_dirs": lib_dirs, "self_contained": problem is None,
              "options": options, "target_arch": target_arch, "models": {}, "rows": []}
    work = a.keep_work or tempfile.mkdtemp(prefix="ortc_gpu_bench.")
    os.makedirs(out, exist_ok=True)
    failures, t0 = 0, time.time()
    try:
        for e in entries:
            failures += bench_model(e, a, ortc, env, target_arch, work, out, result)
            result["elapsed_s"] = round(time.time() - t0)
            save(result, out)  # after every model: a cut-off run keeps what it measured
            if not a.keep_work:  # compiled bundles of a base-sized transformer: about 1.5 GB
                shutil.rmtree(os.path.join(work, e["name"]), ignore_errors=True)
    finally:
        if not a.keep_work:
            shutil.rmtree(work, ignore_errors=True)
    sys.stdout.write(render(result))
    print(f"\nresults: {out}/results.json and results.txt ({result['elapsed_s']} s)")
    failed_targets = any(t["status"] == "FAIL" for t in result["targets"])
    return 1 if a.strict and (failures or failed_targets) else 0


if __name__ == "__main__":
    sys.exit(main())
