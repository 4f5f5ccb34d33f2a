"""GPU benchmark runner: PyTorch's side, timed in worker processes (--torch-worker) that the parent
keeps to per-variant deadlines, so a torch.compile that fails or hangs costs only its own row."""
import copy
import json
import os
import selectors
import signal
import subprocess
import time

from gpu_bench_common import EAGER_MODES, HERE, log, rel_l2, worker_command
from gpu_bench_hf_export import build_hf, hf_wrapper
from gpu_bench_transformers import build_transformer, load_transformer_module


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
        p = subprocess.Popen(worker_command("--torch-worker", spec_file),
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
