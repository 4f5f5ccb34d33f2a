"""GPU benchmark runner: one Hugging Face model measured once its export is there: ortc (compile
with --max-partitions 1, else the partitioner's reasons; run), then PyTorch fp16 eager and compiled."""
import json
import os
import shutil
import time

from gpu_bench_common import EAGER_MODES, RESERVE_S, entry_inputs, log, rel_l2, step_timeout
from gpu_bench_ortc import ortc_compile, ortc_run, run_limited, shape_args
from gpu_bench_torch import run_torch

HF_ESSENTIAL_S = 75   # seconds one HF model's ortc steps and eager timings are expected to take:
                      # kept free for each HF model still to come before a torch.compile starts
MIN_COMPILE_S = 40    # a torch.compile given less than this is deferred to the end of the run


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
    for x in rep.get("refusals", []):
        if x.get("backend") == "cuda":
            k = f"{'/'.join(x.get('ops', []))}: {x.get('reason')}"
            refused[k] = refused.get(k, 0) + x.get("node_count", 0)
    return {"groups": {b["backend"]: b.get("group_count") for b in rep.get("backends", [])},
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
