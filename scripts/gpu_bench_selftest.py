"""GPU benchmark, build-machine half: `scripts/gpu_bench selftest`, a dry run without a GPU of a
small pack moved elsewhere, a --budget-s run that skips every step, and the report of a fake result."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from gpu_bench_attention import attention_device_us
from gpu_bench_pack import ISSUE, PYTHON, ROOT

GPU_BENCH = os.path.join(ROOT, "scripts", "gpu_bench")  # the command whose `pack` the selftest runs


FAKE_RESULT = {  # rows whose ratios, target marks and notes selftest checks
    "schema": "ortc_gpu_bench/1",
    "crashes": [{"model": "ppocr_det", "error": "KeyError: 'p50_ms'"}],
    "host": {"gpu": "fake", "context_floor_ms": {"dlopen_ms": 10.0, "init_ms": 240.0, "context_ms": 150.0,
                                                 "total_ms": 400.0}},
    "models": {"ppocr_det": {"step_profile": {
                   "fp16": {"steps": [["conv", "cudnn", 30.0], ["pool/runs", "kernel", 5.0], ["pool", "kernel", 1.0]],
                            "total_us": 36.0, "runs": 20},
                   "fp32": {"steps": [["conv", "cudnn", 50.0], ["pool", "kernel", 4.0]], "total_us": 54.0,
                            "runs": 20}}},
               "bert_base": {"issue": ISSUE["bert_base"], "export": {"source": "exported here", "torch": "2.11",
                                                                    "export_s": 20.0}},
               "hf_llama": {"export": {"not_exercised": "transformers not installed for python3"}}},
    "rows": [
        {"name": "resnet18_b1", "model": "resnet18", "batch": 1, "precision": "fp16",
         "ortc": {"p50_ms": 0.4, "rel_l2_vs_torch": 1e-3, "execution": "cuda_graph",
                  "p50_stream_ms": 1.2, "graph_vs_stream_rel_l2": 0.0, "load_ms": 460.0, "first_run_ms": 0.5,
                  "graphs": [{"backend": "cuda", "graph": "g", "load_ms": {
                      "device": 230.0, "staging": 5.0, "weights": 40.0, "module": 3.0, "plans": 100.0,
                      "warmup": 20.0, "capture": 10.0}}, {"backend": "cpu", "graph": "c"}]},
         "torch": {"eager": {"p50_ms": 1.6}, "compile": {"failed": "timeout after 1 s"},
                   "reduce-overhead": {"p50_ms": 0.8}}},
        {"name": "resnet18_b1", "model": "resnet18", "batch": 1, "precision": "fp32",
         "ortc": {"p50_ms": 0.7, "rel_l2_vs_torch": 1e-6, "execution": "stream", "load_ms": 620.0,
                  "first_run_ms": 12.0}, "torch": {}},
        {"name": "mobilenet_v2_b1", "model": "mobilenet_v2", "batch": 1, "precision": "fp16",
         "ortc": {"p50_ms": 0.9, "choices": 17, "tuned": {"changed": 3, "choices": 5, "rule_ms": 1.5,
                                                          "tuned_ms": 1.4, "p50_ms": 0.85}},
         "torch": {"reduce-overhead": {"p50_ms": 0.7}}},
        {"name": "bert_base", "model": "bert_base", "batch": 1, "precision": "fp16",
         "ortc": {"p50_ms": 2.06, "rel_l2_vs_torch": 2e-3, "execution": "cuda_graph"},
         "torch": {"eager": {"p50_ms": 8.24}}},
        {"name": "bert_base", "model": "bert_base", "batch": 1, "precision": "fp32",
         "ortc": {"p50_ms": 6.5, "rel_l2_vs_torch": 1e-6, "execution": "cuda_graph"}, "torch": {}},
        {"name": "hf_bert_base", "model": "hf_bert_base", "kind": "hf", "exporter": "torchscript", "batch": 1,
         "precision": "fp16", "ortc": {"p50_ms": 0.8, "compile_s": 15.5, "rel_l2_vs_torch": 1.5e-3,
                                       "execution": "cuda_graph", "one_cuda_graph": True,
                                       "backends": {"cuda": {"nodes": 470, "groups": 1}, "cpu": {"nodes": 0}}},
         "torch": {"eager": {"p50_ms": 6.4}, "eager_attn": {"p50_ms": 8.0}, "reduce-overhead": {"p50_ms": 0.64}}},
        {"name": "hf_gpt2", "model": "hf_gpt2", "kind": "hf", "exporter": "torchscript", "batch": 1,
         "precision": "fp16", "ortc": {"max_partitions_1": {"error": "compile exit 4: backend cuda would get 3 "
                                                            "partitions, more than --max-partitions 1"},
                                       "compile_s": 20.0, "p50_ms": 5.0, "execution": "cuda_graph+stream",
                                       "backends": {"cuda": {"nodes": 500, "groups": 3},
                                                    "cpu": {"nodes": 4, "groups": 2}},
                                       "partition": {"refused": [["GatherElements: op GatherElements is not "
                                                                  "supported", 2]]}},
         "torch": {"eager": {"p50_ms": 9.0}, "reduce-overhead": {"failed": "timeout after 60 s (--budget-s spent)"}}},
        {"name": "hf_llama", "model": "hf_llama", "kind": "hf", "exporter": "torchscript", "batch": 1,
         "precision": "fp16", "ortc": {"not_exercised": "transformers not installed for python3"},
         "torch": {}}],
    "attention": {"heads": 12, "head_dim": 64, "batch": 1, "padding": "7/32", "rows": [
        {"seq": 2048, "flops": 12884901888, "ortc": {"device_us": 200.0, "fused_attention": 1, "attention_on_gemms": 1,
                                                     "decode_attention": 0, "rel_l2": 2e-4},
         "torch": {"median_us": 100.0, "rel_l2": 3e-4, "backends": {"math": {"median_us": 900.0},
                                                                   "flash_attention": {"failed": "No kernel"}}}},
        {"seq": 4096, "rows": 1, "tag": "1x4096", "flops": 12582912,
         "ortc": {"device_us": 20.0, "fused_attention": 1, "decode_attention_split": 1, "decode_attention": 1,
                  "attention_on_gemms": 0, "rel_l2": 3e-4},
         "torch": {"median_us": 40.0, "rel_l2": 3e-4}}]},
    "generation": [{"name": "llama_generation", "prompts": [128, 512], "new_tokens": 64, "ortc": {
        "compile": {"compile_s": 30.0, "context": 576},
        "128": {"time_to_first_token_ms": 2.0, "decode_ms_per_token": 1.5, "kv_cache": "device"},
        "512": {"time_to_first_token_ms": 4.0, "decode_ms_per_token": 1.6, "kv_cache": "device",
                "load_ms": {"prefill": 500.0, "decode": 20.0}}},
        "torch": {"eager": {"128": {"time_to_first_token_ms": 20.0, "decode_ms_per_token": 10.0},
                            "512": {"time_to_first_token_ms": 25.0, "decode_ms_per_token": 4.0}},
                  "static_compile": {"512": {"time_to_first_token_ms": 9.0, "decode_ms_per_token": 1.0},
                                     "0": {"error": "BackendCompilerFailed: boom"}}}}]}


def check_generation(got):
    """The small generation entry of the dry run: ortc generate ran the GenAI model compiled for
    the CPU at both prompt lengths (fixed-size cache); PyTorch ran or said why not."""
    rec = (got.get("generation") or [{}])[0]
    o = rec.get("ortc") or {}
    for p in rec.get("prompts", []):
        row = o.get(str(p)) or {}
        if row.get("decode_ms_per_token") is None or row.get("kv_cache") != "host" or "error" in row:
            sys.exit(f"selftest: generation prompt {p}: ortc generate did not run: {o}")
    if not rec.get("prompts"):
        sys.exit(f"selftest: no generation record: {got.get('generation')}")
    t = rec.get("torch") or {}
    if not t.get("error") and not any(t.get(m) for m in ("eager", "static_compile")):
        sys.exit(f"selftest: generation: PyTorch neither ran nor said why: {t}")
    return (f"generation: ortc generate at prompts {rec['prompts']} on the CPU build; PyTorch "
            + (t["error"] if t.get("error") else "ran"))


def check_transformers(got, moved):
    """The small transformers of the dry run: exported on "the GPU machine" (bert_small) or packed
    (gpt_small), run by ortc's CPU build, and PyTorch's fp32 module rebuilt from the .npz computes
    what ortc computes from the ONNX file; their CUDA compiles (--max-partitions 1) work wherever
    the tiny CNN's do."""
    models = got["models"]
    cuda_ok = all("error" not in r["ortc"] for r in got["rows"] if r["name"] == "tiny_cnn")
    for name, source in (("bert_small", "exported here"), ("gpt_small", "packed")):
        m = models.get(name, {})
        if not m.get("cpu_reference", {}).get("ok"):
            sys.exit(f"selftest: {name} did not run on ortc's CPU build: {m}")
        if (m.get("export") or {}).get("source") != source:
            sys.exit(f"selftest: {name} should have been {source}: {m.get('export')}")
        err = m.get("torch_fp32_vs_cpu")
        if err is None or err > 1e-4:
            sys.exit(f"selftest: {name}: PyTorch (weights from the .npz) vs ortc CPU rel_l2 {err}")
        bad = [r["ortc"]["error"] for r in got["rows"] if r["name"] == name and "error" in r["ortc"]]
        if cuda_ok and bad:
            sys.exit(f"selftest: {name}: CUDA compile failed where tiny_cnn's worked: {bad[0]}")
    for f in ("bert_small.onnx", "bert_small.npz", "bert_small.export.json", "gpt_small.onnx", "gpt_small.npz"):
        if not os.path.exists(os.path.join(moved, "models", f)):
            sys.exit(f"selftest: models/{f} missing after the dry run")


HF_SMALL = ("hf_bert_small", "hf_gpt2_small", "hf_llama_small")


def check_hf(got):
    """The small HF models of the dry run. With transformers installed for PYTHON: exported here,
    run by ortc's CPU build, and PyTorch's model rebuilt from the saved state computes what ortc
    computes from the ONNX file. Without it they must say they were not exercised, and never
    count as run. Returns the line that says which."""
    rows = {r["name"]: r for r in got["rows"] if r.get("kind") == "hf"}
    if set(rows) < set(HF_SMALL):
        sys.exit(f"selftest: HF rows {sorted(rows)}, expected {HF_SMALL}")
    skipped = [n for n in HF_SMALL if rows[n]["ortc"].get("not_exercised")]
    if skipped:
        if len(skipped) != len(HF_SMALL) or any("p50_ms" in rows[n]["ortc"] for n in HF_SMALL):
            sys.exit(f"selftest: HF models partly exercised: {[rows[n]['ortc'] for n in HF_SMALL]}")
        return (f"HF models NOT exercised here ({rows[skipped[0]]['ortc']['not_exercised']}): their export, "
                "ortc and PyTorch steps run only where transformers is installed")
    for n in HF_SMALL:
        m = got["models"].get(n, {})
        err = m.get("torch_fp32_vs_cpu")
        if not m.get("cpu_reference", {}).get("ok") or err is None or err > 1e-4:
            sys.exit(f"selftest: {n}: ortc's CPU build vs PyTorch fp32 rel_l2 {err}: {m}")
        torch_cpu = m.get("torch_cpu") or {}
        if not all(v and "p50_ms" in v for v in torch_cpu.values()) or not torch_cpu:
            sys.exit(f"selftest: {n}: PyTorch from the saved state did not run: {torch_cpu}")
    return "HF models exercised here (transformers installed): export, ortc CPU and PyTorch agree"


def check_attention(got, cuda_ok):
    """The attention models of the dry run, a prefill of 128 and a decode step against 600 keys:
    what ortc's CPU build computes is the attention (against numpy's fp32), the CUDA compile fuses
    it into one kernel wherever CUDA compiles work (the decode step's split over its keys: 12 heads
    leave the GPU idle, 600 keys make two runs), and PyTorch's SDPA ran or says why not."""
    rows = (got.get("attention") or {}).get("rows") or []
    if [r.get("tag") for r in rows] != ["128x128", "1x600"]:
        sys.exit(f"selftest: attention rows {rows}")
    said = []
    for r, split in zip(rows, (0, 1)):
        err = (r.get("cpu_reference") or {}).get("rel_l2")
        if err is None or err > 5e-3:
            sys.exit(f"selftest: attention {r['tag']}: ortc CPU vs the fp32 reference rel_l2 {err}: "
                     f"{r.get('cpu_reference')}")
        if cuda_ok and (r["ortc"].get("fused_attention") != 1 or r["ortc"].get("decode_attention_split") != split):
            sys.exit(f"selftest: attention {r['tag']}: the CUDA compile did not fuse it into one kernel "
                     f"({'split' if split else 'not split'} over the keys): {r['ortc']}")
        t = r.get("torch") or {}
        if "median_us" not in t and not t.get("failed", "").startswith("not exercised"):
            sys.exit(f"selftest: attention {r['tag']}: PyTorch neither ran nor said why: {t}")
        said.append("%s: ortc CPU rel_l2 %.1e%s; PyTorch SDPA %s" % (
            r["tag"], err, ", CUDA compile fused" if cuda_ok else "",
            "ran on the CPU" if "median_us" in t else t["failed"]))
    return "attention " + "; ".join(said)


def check_trace_parser():
    """The runner's reading of `ortc run --profile` traces, on a trace written the way the runtime
    writes one (two runs of input copies, the fused kernel, output copies)."""
    lanes = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": t, "args": {"name": n}}
             for t, n in enumerate(("run", "backend host (issue)", "backend device"))]
    events = []
    for run, us in enumerate((90.0, 70.0)):
        for name, kind, d in (("input copies", "copy", 5.0), ("attention_softmax", "kernel", us),
                              ("output copies", "copy", 3.0)):
            for tid in (1, 2):
                events.append({"ph": "X", "name": name, "cat": "Step", "ts": run * 1000.0, "dur": d, "pid": 1,
                               "tid": tid, "args": {"graph": "g", "kind": kind, "device_us": str(d)}})
    per_run, found = attention_device_us(lanes + events, "attention_softmax")
    if per_run != [90.0, 70.0] or not found:
        sys.exit(f"selftest: trace parser read {per_run}, found {found}; expected [90.0, 70.0], True")


def check_text_image():
    """The OCR models' input: printed lines of dark glyphs on a light page, the detector's image
    normalized with ImageNet's statistics, the recognizer's to [-1, 1]; the same seed, the same
    image."""
    import numpy as np
    from gpu_bench_common import render_text_image, text_image_input
    page = render_text_image(640, 640, np.random.default_rng(3))
    ink = float((page < 128).mean())
    rows_with_ink = int(((page < 128).sum(axis=1) > 0).sum())
    if not 0.02 < ink < 0.2 or rows_with_ink < 100:
        sys.exit(f"selftest: the text image has {ink:.3f} ink over {rows_with_ink} rows")
    line = render_text_image(48, 320, np.random.default_rng(3))
    if not ((line < 128).sum(axis=0) > 0).sum() > 100:
        sys.exit("selftest: the single-line text image has almost no text")
    det = text_image_input([1, 3, 640, 640], "imagenet", np.random.default_rng(3))
    rec = text_image_input([1, 3, 48, 320], "half", np.random.default_rng(3))
    if det.shape != (1, 3, 640, 640) or det.dtype != np.float32 or not (det.min() < -1.5 and det.max() > 1.5):
        sys.exit(f"selftest: the detector's input is not ImageNet-normalized: {det.min()}..{det.max()}")
    if rec.min() < -1.0001 or rec.max() > 1.0001 or not np.array_equal(
            rec, text_image_input([1, 3, 48, 320], "half", np.random.default_rng(3))):
        sys.exit("selftest: the recognizer's input is not in [-1, 1] or not reproducible")
    return f"OCR text images: {ink:.1%} ink over {rows_with_ink} rows of the detector's page"


def cmd_selftest(a):
    tmp = tempfile.mkdtemp(prefix="gpu_bench_selftest.")
    try:
        first, moved = os.path.join(tmp, "packed"), os.path.join(tmp, "elsewhere", "bench")
        # bert_small left to run.sh to export (the default for transformers), gpt_small packed.
        subprocess.run([PYTHON, GPU_BENCH, "pack", first, "--build", a.build, "--models",
                        "tiny_cnn,bert_small,gpt_small,attention,llama_generation_small," + ",".join(HF_SMALL),
                        "--pack-transformers", "gpt_small", "--attention-seqs", "128", "--attention-decode", "600",
                        "--xz", "1"], check=True)
        os.makedirs(os.path.dirname(moved))
        os.rename(first, moved)  # nothing may depend on where it was packed
        res = os.path.join(tmp, "results")
        env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "ORTC_BACKEND_PATH", "OUT")}
        env["PYTHON"] = PYTHON  # run.sh's python: it needs numpy (and torch for the transformers)
        # PyTorch eager on the CPU (fp32: the reference), one CUDA arch: fast compiles.
        subprocess.run([os.path.join(moved, "run.sh"), "--dry-run", "--out", res, "--torch-device", "cpu",
                        "--torch-modes", "eager", "--runs", "3", "--warmup", "1", "--target-arch", "sm_90"],
                       check=True, env=env)
        got = json.load(open(os.path.join(res, "results.json")))
        cpu = got["models"].get("tiny_cnn", {}).get("cpu_reference", {})
        if not cpu.get("ok") or not got.get("self_contained"):
            sys.exit(f"selftest: dry run did not compile and run on the CPU from the payload: {got}")
        check_transformers(got, moved)
        cuda_ok = all("error" not in r["ortc"] for r in got["rows"] if r["name"] == "tiny_cnn")
        said = [check_hf(got), check_attention(got, cuda_ok), check_generation(got), check_text_image()]
        check_trace_parser()
        # --budget-s: a budget smaller than the reserve for writing results skips every step, and
        # the run still ends at once with its results written
        res2 = os.path.join(tmp, "results_budget")
        t0 = time.time()
        subprocess.run([os.path.join(moved, "run.sh"), "--dry-run", "--out", res2, "--torch-device", "cpu",
                        "--models", "attention,hf_bert_small,bert_small", "--budget-s", "3", "--runs", "3",
                        "--target-arch", "sm_90"], check=True, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        short = json.load(open(os.path.join(res2, "results.json")))
        att = short["attention"]["rows"][0]["ortc"].get("error", "")
        bert = [r["ortc"].get("error", "") for r in short["rows"] if r["name"] == "bert_small"]
        if "skipped" not in att or not bert or not all("skipped" in x for x in bert) or time.time() - t0 > 30:
            sys.exit(f"selftest: --budget-s 3 did not skip the steps ({att!r}, {bert}) or took "
                     f"{time.time() - t0:.0f} s")
        fake = os.path.join(tmp, "fake.json")
        json.dump(FAKE_RESULT, open(fake, "w"))
        text = subprocess.run([os.path.join(moved, "run.sh"), "--report", fake], check=True, text=True,
                              capture_output=True, env=env).stdout
        print(text)
        for want in ("0.25x", "0.50x", "failed: timeout", "PASS  resnet18 fp16 batch 1",
                     "FAIL  resnet18_b1 strict fp32", "without CUDA graphs: 1.200 ms p50 (3.00x",
                     "PASS  bert_base fp16 p50 <= 3 ms host-to-host: 2.060 ms",
                     "FAIL  bert_base fp32 p50 <= 6 ms: 6.500 ms", "0.25x", "quotes 10.3 ms for PyTorch eager fp16",
                     "ortc = 0.20x the issue's figure", "bert_base model: exported here with torch 2.11 in 20.0 s",
                     # HF models: ratios to eager (sdpa and eager attention) and reduce-overhead, targets
                     "0.12x   0.10x    1.25x", "PASS  hf_bert_base fp16 (torchscript export) ortc <= 0.25x "
                     "PyTorch eager fp16 (attn sdpa): 0.125x", "FAIL  hf_bert_base fp16 (torchscript export) "
                     "ortc <= 1.0x torch.compile reduce-overhead: 1.250x", "PASS  hf_bert_base fp16 (torchscript "
                     "export) runs as one CUDA graph: 1 CUDA group(s), 0 CPU node(s)",
                     "hf_gpt2 ortc compile --max-partitions 1: compile exit 4", "without it: 3 CUDA group(s), 4 "
                     "node(s) in 2 CPU group(s)", "refused by CUDA: GatherElements", "hf_llama: NOT exercised",
                     "hf_gpt2 torch fp16 reduce-overhead: failed: timeout after 60 s",
                     # the attention table: device times, TFLOP/s, ratio, SDPA backends
                     "   2048x2048     200.0     64.4   gemm     -     100.0    128.8      2.00x", "math 900.0 us",
                     "      1x4096      20.0      0.6 decode     1      40.0      0.3      0.50x",
                     "flash_attention failed",
                     # generation: the table, ratios of decode ms/token, both targets, a failure
                     "512          4.000   1.600     25.000   4.000       9.000   1.000   0.40x   1.60x  device",
                     "PASS  llama_generation decode ms/token at prompt 512 <= 0.5x PyTorch eager: 1.600 ms vs "
                     "4.000 ms (0.40x)", "FAIL  llama_generation decode ms/token at prompt 512 <= 1.0x PyTorch "
                     "static_compile: 1.600 ms vs 1.000 ms (1.60x)",
                     "llama_generation PyTorch static_compile: BackendCompilerFailed: boom",
                     # load and first run against the measured context floor and the p50
                     "CUDA context floor: 400.0 ms (libcuda 10.0, cuInit 240.0, primary context 150.0)",
                     "resnet18_b1       fp16      460.0   1.15x    0.500    0.400  1.25x  "
                     "230.0 5.0 40.0 3.0 100.0 20.0 10.0",
                     "PASS  llama_generation: the decode session (second of the weight-sharing group) loads in "
                     "<= 0.1x the first: 20.0 ms vs 500.0 ms (0.040x)",
                     "ppocr_det: the runner's step crashed (see the log): KeyError: 'p50_ms'",
                     # where the device time goes: fp16's largest steps beside fp32's of the same name
                     "fp16 total 36.0 us (3 steps), fp32 total 54.0 us (2 steps)",
                     "conv                                        cudnn          30.0      50.0",
                     "pool/runs                                   kernel          5.0         -",
                     "PASS  resnet18_b1 fp16 load <= 1.2x the CUDA context floor: 460.0 ms vs 400.0 ms (1.15x)",
                     "FAIL  resnet18_b1 fp32 load <= 1.2x the CUDA context floor: 620.0 ms vs 400.0 ms (1.55x)",
                     "PASS  resnet18_b1 fp16 first run <= 1.5x p50: 0.500 ms vs 0.400 ms (1.25x)",
                     "FAIL  resnet18 fp16 batch 1 <= 0.2 ms (issue 29): 0.400 ms",
                     # the tuning cache: changed choices, the model with it against without
                     "FAIL  mobilenet_v2 fp16 batch 1 <= 1.0x torch.compile reduce-overhead: 0.900 ms",
                     "PASS  a tuning cache changes at least one choice: 3 changed over 1 model(s)",
                     "PASS  mobilenet_v2_b1 fp16 with its tuning cache <= without: 0.850 ms vs 0.900 ms (0.94x)",
                     "mobilenet_v2_b1 fp16 ortc tune: 3 of 5 choice(s) changed",
                     "FAIL  resnet18_b1 fp32 first run <= 1.5x p50: 12.000 ms vs 0.700 ms (17.14x)"):
            if want not in text:
                sys.exit(f"selftest: '{want}' missing from the report of the fake result")
        for line in said:
            print("gpu_bench selftest: " + line)
        print("gpu_bench selftest: passed")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

