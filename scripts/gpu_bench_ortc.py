"""GPU benchmark runner: the packed ortc, unpacked and given its libraries, the GPU check, and the
`ortc compile` / `ortc run --json` steps with their timeouts and what their reports say."""
import glob
import json
import os
import re
import shutil
import site
import subprocess
import sys
import tarfile
import time

from gpu_bench_common import HERE, entry_inputs, rel_l2


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


# What any CUDA program pays before its own work: loading libcuda, cuInit and creating the primary
# context. ortc's load time is reported against it (a load cannot be cheaper than this).
CONTEXT_FLOOR = r"""
import ctypes, json, time
t0 = time.perf_counter()
cuda = ctypes.CDLL("libcuda.so.1")
t1 = time.perf_counter()
if cuda.cuInit(0) != 0:
    raise SystemExit("cuInit failed")
t2 = time.perf_counter()
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
if cuda.cuDeviceGet(ctypes.byref(dev), 0) != 0 or cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) != 0:
    raise SystemExit("no primary context")
t3 = time.perf_counter()
print(json.dumps({"dlopen_ms": (t1 - t0) * 1e3, "init_ms": (t2 - t1) * 1e3,
                  "context_ms": (t3 - t2) * 1e3, "total_ms": (t3 - t0) * 1e3}))
"""


def context_floor(env, repeats=3):
    """The CUDA context floor of this machine: median over fresh processes of libcuda's load,
    cuInit and the primary context's creation ({dlopen_ms, init_ms, context_ms, total_ms})."""
    runs = []
    for _ in range(repeats):
        try:
            r = subprocess.run([sys.executable, "-c", CONTEXT_FLOOR], env=env, text=True,
                               capture_output=True, timeout=120)
        except subprocess.TimeoutExpired:
            return {"error": "timeout after 120 s"}
        if r.returncode:
            return {"error": (r.stderr.strip() or r.stdout.strip())[-300:]}
        runs.append(json.loads(r.stdout))
    runs.sort(key=lambda x: x["total_ms"])
    return dict(runs[len(runs) // 2], runs=len(runs))


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
                 max_partitions="entry", inputs=None, extra=()):
    """`ortc compile` of one model; max_partitions "entry" takes the entry's (transformers: one
    CUDA group, or the compile fails), None none; inputs overrides the entry's input list."""
    args = [ortc, "compile", model, "--ep", ep, "-o", out_dir + "/", "-q", "--json", *extra]
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
    res["backends"] = {b["backend"]: {"nodes": b["node_count"], "groups": b["group_count"]}
                       for b in rep.get("backends", [])}
    res["lowering"] = rep.get("lowering")
    res["choices"] = len(rep.get("choices", []))  # tunable steps (`ortc tune` measures them)
    if rep.get("warnings"):
        res["warnings"] = rep["warnings"]
    res["ctx"] = next((m["ctx_model"]["path"] for m in rep.get("models", []) if m.get("ctx_model")), None)
    return res


def ortc_tune(ortc, env, model, entry, precision, cache, runs, timeout=None):
    """`ortc tune` of one model on this GPU into `cache`: {changed, choices, rule_ms, tuned_ms} or
    {error}."""
    args = [ortc, "tune", model, "-o", cache, "--precision", precision, "--json", "--runs", str(runs)]
    args += shape_args(entry_inputs(entry))
    t0 = time.time()
    r, why = run_limited(args, timeout, env=env)
    if r is None:
        return {"error": f"tune: {why}"}
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        rep = {}
    if r.returncode or not rep.get("ok"):
        msg = rep.get("error", {}).get("message") or (r.stderr or r.stdout).strip()
        return {"error": f"tune exit {r.returncode}: {' '.join(msg.split())[:400]}"}
    return {"changed": rep["changed"], "choices": len(rep["choices"]), "rule_ms": rep["rule_ms"],
            "tuned_ms": rep["tuned_ms"], "tune_s": round(time.time() - t0, 1)}


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


def step_profile(ortc, env, ctx, feeds, out_dir, runs, timeout):
    """Where a bundle's device time goes: `ortc run --profile` over `runs` runs, per CUDA step its
    median device µs, in program order ({"steps": [[name, kind, µs]], "total_us"} or {"error"})."""
    import statistics
    trace = os.path.join(out_dir, "trace.json")
    os.makedirs(out_dir, exist_ok=True)
    res, _ = ortc_run(ortc, env, ctx, feeds, out_dir, runs, ["--profile", trace], timeout=timeout)
    if "error" in res:
        return res
    try:
        t = json.load(open(trace))
        per_run = cuda_step_runs(t.get("traceEvents", []) if isinstance(t, dict) else t)
    except (OSError, ValueError) as ex:
        return {"error": f"profile trace: {ex}"}
    per_run = per_run[1:] if len(per_run) > 1 else per_run  # the first (untimed) run apart
    if not per_run:
        return {"error": "the profile holds no CUDA step"}
    steps = [[name, kind, statistics.median(r[i][2] for r in per_run if i < len(r))]
             for i, (name, kind, _) in enumerate(per_run[0])]
    return {"steps": steps, "total_us": sum(s[2] for s in steps), "runs": len(per_run)}


def outputs_error(got, ref):
    """Worst relative L2 error over the float outputs."""
    errs = [rel_l2(g, r) for g, r in zip(got, ref) if g.dtype.kind == "f"]
    return max(errs) if errs else None
