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
# The entry point: the command line, the run's order (CNNs and transformers, then the attention
# table while the HF exports run in the background, then the HF models, then deferred compiles)
# and one packed model's measurement. `scripts/gpu_bench pack` copies this file as gpu_bench.py and
# the gpu_bench_*.py modules it imports beside it; each worker process is this file run again.
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

# The modules beside this file: found from any working folder (even with PYTHONSAFEPATH set), and
# no __pycache__ left in the packed folder, which may be read-only or copied on.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import gpu_bench_common  # noqa: E402
from gpu_bench_attention import attention_worker, bench_attention  # noqa: E402
from gpu_bench_generation import bench_generation, generation_worker  # noqa: E402
from gpu_bench_common import HERE, RESERVE_S, log, make_inputs, rel_l2, step_timeout  # noqa: E402
from gpu_bench_hf import bench_hf, hf_deferred  # noqa: E402
from gpu_bench_hf_export import HfExport, export_hf_main  # noqa: E402
from gpu_bench_ortc import (check_libraries, context_floor, gpu_check, ortc_compile,  # noqa: E402
                            ortc_env, ortc_run, ortc_tune, outputs_error, step_profile, unpack)
from gpu_bench_report import render, save  # noqa: E402
from gpu_bench_torch import run_torch, torch_worker  # noqa: E402
from gpu_bench_torchvision import export_worker, torchvision_files  # noqa: E402
from gpu_bench_transformers import export_main, transformer_files  # noqa: E402

gpu_bench_common.RUNNER = os.path.abspath(__file__)  # what worker processes run
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
MODES = ("eager", "compile", "reduce-overhead")
HF_MODES = ("eager", "eager_attn", "reduce-overhead", "compile")


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
    p.add_argument("--hf-dynamo-opset", type=int, choices=(18, 20, 23, 24),
                   help="opset of the dynamo exporter (default 18, its own); from 23 on it writes SDPA "
                   "as ONNX's Attention op, which ortc rewrites at load and fuses back")
    p.add_argument("--hf-torch-modes", default="eager,eager_attn,reduce-overhead",
                   help="PyTorch variants of the HF models, fp16: eager (attn_implementation sdpa), "
                   "eager_attn (attn_implementation eager), reduce-overhead and compile (sdpa); "
                   "or none (default eager,eager_attn,reduce-overhead)")
    p.add_argument("--attention-seqs", help="sequence lengths of the attention table (default: all "
                   "packed, e.g. 128,512,2048)")
    p.add_argument("--torch-worker", help=argparse.SUPPRESS)
    p.add_argument("--export-model", help=argparse.SUPPRESS)
    p.add_argument("--export-torchvision", help=argparse.SUPPRESS)
    p.add_argument("--export-hf", help=argparse.SUPPRESS)
    p.add_argument("--attention-worker", help=argparse.SUPPRESS)
    p.add_argument("--generation-worker", help=argparse.SUPPRESS)
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


def tuned_row(e, a, ortc, env, model, stem, feeds, d, target_arch):
    """Issue 29's tuning cache on this GPU: `ortc tune`, then the model compiled with the cache and
    benchmarked like the row ({changed, choices, rule_ms, tuned_ms, p50_ms} or {error})."""
    cache = os.path.join(d, "tuning.json")
    log(f"{e['name']}: ortc tune --precision fp16")
    t = ortc_tune(ortc, env, model, e, "fp16", cache, 20, timeout=step_timeout(a, 600))
    if "error" in t:
        return t
    td = d + "_tuned"
    c = ortc_compile(ortc, env, model, e, "cuda,cpu", "fp16", td, target_arch, timeout=step_timeout(a, 900),
                     extra=("--tuning-cache", cache))
    if "error" in c:
        return dict(t, error=c["error"])
    run, _ = ortc_run(ortc, env, os.path.join(td, stem + "_ctx.onnx"), feeds, os.path.join(td, "out"), a.runs,
                      timeout=step_timeout(a, 600))
    t.update({k: run[k] for k in ("p50_ms", "error") if k in run})
    if c.get("warnings"):
        t["warnings"] = c["warnings"]
    return t


def bench_model(e, a, ortc, env, target_arch, work, out, result):
    """One model file: ortc's CPU reference, ortc per precision, PyTorch; rows into result."""
    import numpy as np
    wd = os.path.join(work, e["name"])
    os.makedirs(wd, exist_ok=True)
    summary = {"issue": e["issue"]} if e.get("issue") else {}
    result["models"][e["name"]] = summary
    model = os.path.join(HERE, e["file"])
    weights = os.path.join(HERE, e["torch"]["weights"]) if e.get("torch") else None
    if e.get("transformer") or e.get("torch"):  # packed, or exported here with this machine's torch
        with open(os.path.join(wd, "export.log"), "w") as logf:
            files = transformer_files if e.get("transformer") else torchvision_files
            model, weights, summary["export"] = files(e, a, work, logf)
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
            if outs_of.get(prec) is not None and plain_outs is not None:  # every precision
                o["graph_vs_stream_rel_l2"] = outputs_error(outs_of[prec], plain_outs)
            if prec == "fp16" and o.get("choices"):
                o["tuned"] = tuned_row(e, a, ortc, env, model, stem, feeds, d, target_arch)
        if outs_of.get(prec) is not None and cpu_outs is not None:
            o["rel_l2_vs_cpu"] = outputs_error(outs_of[prec], cpu_outs)
        if "error" in o and a.dry_run:
            o["note"] = "dry run: not counted as a failure (CUDA compiles need NVRTC)"
        failures += "error" in o and not a.dry_run
        rows.append({"name": e["name"], "model": e["model"], "batch": e["batch"], "precision": prec,
                     "shape": e["shape"], "ortc": o, "torch": {}})
    # Where each precision's device time goes, step by step: why fp16 is slower than fp32, when
    # it is (issue 29), is read from these without another GPU session.
    profiled = [p for p in ("fp32", "fp16") if p in a.precisions and not any(
        "error" in r["ortc"] for r in rows if r["precision"] == p)]
    if not a.dry_run and len(profiled) == 2:
        summary["step_profile"] = {}
        for prec in profiled:
            log(f"{e['name']}: ortc run --profile --precision {prec}")
            summary["step_profile"][prec] = step_profile(
                ortc, env, os.path.join(wd, prec, stem + "_ctx.onnx"), feeds,
                os.path.join(wd, prec, "profile"), 20, timeout=step_timeout(a, 120))
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
    if a.export_torchvision:
        return export_worker(a.export_torchvision)
    if a.export_hf:
        return export_hf_main(a.export_hf)
    if a.attention_worker:
        return attention_worker(a.attention_worker)
    if a.generation_worker:
        return generation_worker(a.generation_worker)
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
    if not a.dry_run:
        host["context_floor_ms"] = context_floor(env)
        log(f"CUDA context floor: {host['context_floor_ms']}")
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
    options = {k: v for k, v in vars(a).items() if k not in ("torch_worker", "export_model", "export_torchvision",
                                                              "report", "budget_end", "hard_end", "export_hf",
                                                              "attention_worker", "generation_worker")}
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

    def guarded(name, failed, step, *args):
        """step(*args); an exception in one model's step (a GPU-only path the dry run never takes)
        is recorded, failed is returned in its place, and the run goes on to the next model."""
        try:
            return step(*args)
        except Exception as ex:  # noqa: BLE001: reported, not hidden
            log(f"{name}: {type(ex).__name__}: {ex}\n{traceback.format_exc()}")
            result.setdefault("crashes", []).append({"model": name, "error": f"{type(ex).__name__}: {ex}"[:500]})
            return failed

    try:
        for e in [e for e in entries if e.get("kind") not in ("hf", "attention", "generation")]:
            failures += guarded(e["name"], 1, bench_model, e, a, ortc, env, target_arch, work, out, result)
            saved()
            if not a.keep_work:  # compiled bundles of a base-sized transformer: about 1.5 GB
                shutil.rmtree(os.path.join(work, e["name"]), ignore_errors=True)
        for e in hf_entries:  # exports side by side in the background, while the rest measures
            jobs[e["name"]] = HfExport(e, a, work, max(1, (os.cpu_count() or 2) // len(hf_entries)))
        for e in [e for e in entries if e.get("kind") == "attention"]:
            failures += guarded(e["name"], 1, bench_attention, e, a, ortc, env, target_arch, work, out, result)
            saved()
        for e in [e for e in entries if e.get("kind") == "generation"]:
            failures += guarded(e["name"], 1, bench_generation, e, a, ortc, env, target_arch, work, out, result)
            saved()
            if not a.keep_work:  # the base model and its bundles: about 1 GB
                shutil.rmtree(os.path.join(work, e["name"]), ignore_errors=True)
        for i, e in enumerate(hf_entries):
            f, d = guarded(e["name"], (1, None), bench_hf, e, jobs[e["name"]], a, ortc, env, target_arch,
                           out, result, len(hf_entries) - i - 1, list(jobs.values()))
            failures += f
            deferred += [d] if d else []
            saved()
            if not a.keep_work:  # its bundles (the inputs and the exported files stay)
                for sub in ("torchscript", "dynamo"):
                    shutil.rmtree(os.path.join(jobs[e["name"]].wd, sub), ignore_errors=True)
        for d in deferred:
            log(f"{d['entry']['name']}: deferred torch.compile")
            guarded(d["entry"]["name"], None, hf_deferred, d, a, out, result)
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
