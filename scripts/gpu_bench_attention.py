"""GPU benchmark runner: the attention kernel table, ortc's fused kernel (device time per step from
`ortc run --profile`) against PyTorch's SDPA (CUDA events, the --attention-worker), per sequence."""
import json
import os
import shutil
import time

from gpu_bench_common import HERE, log, rel_l2, run_lines, step_timeout, worker_command
from gpu_bench_ortc import cuda_step_runs, ortc_compile, ortc_run


def attention_inputs(rng, seq, heads, head_dim, pad, wd, rows=None):
    """q ([1, heads, rows, head_dim]), k, v ([1, heads, seq, head_dim]), fp16, standard normal, and
    an additive padding mask ([1, 1, 1, seq]: 0, the last `pad` keys -10000) as .npy in wd:
    (feeds, fp32 reference output). rows defaults to seq."""
    import numpy as np
    os.makedirs(wd, exist_ok=True)
    rows = seq if rows is None else rows
    arrays = {n: rng.standard_normal((1, heads, rows if n == "q" else seq, head_dim)).astype(np.float16)
              for n in "qkv"}
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
            emit("RESULT", {"seq": x["seq"], "tag": x["tag"], "failed": f"not exercised: torch "
                            f"{torch.__version__} has no scaled_dot_product_attention"})
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
        emit("START", {"seq": x["seq"], "tag": x["tag"]})
        res = {"seq": x["seq"], "tag": x["tag"]}
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
    """The attention table: per sequence length (a prefill) and per decode cache length (one query
    row), ortc's fused kernel (an ONNX model of the attention alone, compiled for CUDA at fp16; its
    device time per step from `ortc run --profile`) against PyTorch's SDPA (CUDA events), both
    checked against an fp32 reference. Rows are told apart by their tag, "<rows>x<keys>"."""
    import numpy as np
    wd = os.path.join(work, "attention")
    heads, head_dim = e["heads"], e["head_dim"]
    # --attention-seqs picks prefill rows; decode rows are chosen when packing (--attention-decode).
    seqs = [x for x in e["seqs"] if not a.attention_seqs or x.get("rows", x["seq"]) != x["seq"]
            or x["seq"] in a.attention_seqs]
    table = {"heads": heads, "head_dim": head_dim, "batch": 1, "padding": e["padding"], "rows": []}
    result["attention"] = table
    rng = np.random.default_rng(a.seed)
    refs, worker_seqs, failures = {}, [], 0
    for x in seqs:
        seq, rows = x["seq"], x.get("rows", x["seq"])
        tag = f"{rows}x{seq}"
        sd = os.path.join(wd, f"s{seq}" if rows == seq else f"d{seq}")
        pad = seq * e["pad_num"] // e["pad_den"]
        feeds, refs[tag] = attention_inputs(rng, seq, heads, head_dim, pad, sd, rows)
        row = {"seq": seq, "rows": rows, "tag": tag, "pad": pad, "flops": 4 * rows * seq * head_dim * heads,
               "ortc": {}, "torch": {}}
        table["rows"].append(row)
        model = os.path.join(HERE, x["file"])
        inputs = [{"name": n, "shape": list(np.load(p, mmap_mode="r").shape)} for n, p in feeds]
        log(f"attention s={seq}: ortc --ep cuda,cpu --precision fp16")
        o = ortc_compile(ortc, env, model, e, "cuda,cpu", "fp16", os.path.join(sd, "cuda"), target_arch,
                         timeout=step_timeout(a, 300), max_partitions=1, inputs=inputs)
        o["fused_attention"] = (o.get("lowering") or {}).get("fused_attention")
        o["decode_attention_split"] = (o.get("lowering") or {}).get("decode_attention_split")
        o["attention_on_gemms"] = (o.get("lowering") or {}).get("attention_on_gemms")
        o["decode_attention"] = (o.get("lowering") or {}).get("decode_attention")
        if "error" not in o and not a.dry_run:
            trace = os.path.join(sd, "trace.json")
            ctx = o.get("ctx") or os.path.join(sd, "cuda", os.path.basename(model)[:-len(".onnx")] + "_ctx.onnx")
            run, outs = ortc_run(ortc, env, ctx, feeds, os.path.join(sd, "out"), a.runs,
                                 extra=["--profile", trace], timeout=step_timeout(a, 180))
            o.update({k: v for k, v in run.items() if k in ("error", "p50_ms", "execution", "load_ms")})
            if outs:
                o["rel_l2"] = rel_l2(outs[0], refs[tag])
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
                    c["rel_l2"] = rel_l2(outs[0], refs[tag])
            row["cpu_reference"] = {k: v for k, v in c.items() if k in ("error", "rel_l2", "compile_s")}
        failures += "error" in o and not a.dry_run
        row["ortc"] = o
        worker_seqs.append({"seq": seq, "tag": tag, **{n: p for n, p in feeds},
                            "out": os.path.join(sd, "torch_out.npy")})
    if a.torch_modes and (not a.dry_run or a.torch_device == "cpu"):
        spec_file = os.path.join(wd, "attention_spec.json")
        json.dump({"device": a.torch_device, "runs": a.runs, "warmup": min(a.warmup, 10), "seqs": worker_seqs},
                  open(spec_file, "w"))
        log("attention: PyTorch scaled_dot_product_attention")
        with open(os.path.join(wd, "torch.log"), "w") as logf:
            lines, err = run_lines(worker_command("--attention-worker", spec_file),
                                   step_timeout(a, 240), logf)
        shutil.copyfile(logf.name, os.path.join(out, "torch_attention.log"))
        got = {d.get("tag"): d for kind, d in lines if kind == "RESULT"}
        table["torch_info"] = next((d for kind, d in lines if kind == "INFO"), {})
        for row in table["rows"]:
            t = got.get(row["tag"]) or {"failed": err or "no result"}
            t.pop("seq", None)
            t.pop("tag", None)
            f = next(w["out"] for w in worker_seqs if w["tag"] == row["tag"])
            if "failed" not in t and os.path.exists(f):
                t["rel_l2"] = rel_l2(np.load(f), refs[row["tag"]])
            row["torch"] = t
    return failures
