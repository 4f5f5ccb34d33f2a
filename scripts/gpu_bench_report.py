"""GPU benchmark runner: the report, tables per model, the HF and attention tables, the notes and
the targets (PASS/FAIL/n/a) as text, and results.json + results.txt written after every model."""
import json
import os

from gpu_bench_generation import generation_targets, render_generation

ERROR_BOUND = {"fp32": 1e-4, "tf32": 1e-2, "fp16": 2e-2, "bf16": 1e-1}  # sanity, not targets


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
    # Issue 29 (CNNs): resnet18 fp16 <= 0.2 ms, mobilenet_v2 fp16 <= torch.compile reduce-overhead,
    # PP-OCRv4 det fp16 <= 0.7x its fp32.
    def reduce_overhead(model, batch, prec):
        for r in rows:
            if r["model"] == model and r["batch"] == batch and r["precision"] == prec:
                return ((r.get("torch") or {}).get("reduce-overhead") or {}).get("p50_ms")
        return None

    det16, det32 = p50("ppocr_det", 1, "fp16"), p50("ppocr_det", 1, "fp32")
    out += [check("resnet18 fp16 batch 1 <= 0.2 ms (issue 29)", p50("resnet18", 1, "fp16"), 0.2),
            check("mobilenet_v2 fp16 batch 1 <= 1.0x torch.compile reduce-overhead",
                  p50("mobilenet_v2", 1, "fp16"), reduce_overhead("mobilenet_v2", 1, "fp16")),
            check("PP-OCRv4 det fp16 <= 0.7x its fp32", det16, det32 and 0.7 * det32)]
    for name, model, batch in sorted({(r["name"], r["model"], r["batch"]) for r in rows if r.get("kind") != "hf"}):
        f32, f16 = p50(model, batch, "fp32"), p50(model, batch, "fp16")
        if f32 is None and f16 is None:
            continue
        out.append(check(f"{name} strict fp32 <= 1.5x fp16", f32, f16 and 1.5 * f16))
        out.append(check(f"{name} fp16 <= fp32", f16, f32))
    return out + hf_targets(rows)


def load_rows(result):
    """(name, precision, load_ms, first_run_ms, p50_ms) of every ortc row that ran."""
    out = []
    for r in result["rows"]:
        o = r.get("ortc") or {}
        if o.get("load_ms") is not None and o.get("p50_ms") is not None:
            out.append((r["name"], r["precision"], o["load_ms"], o.get("first_run_ms"), o["p50_ms"]))
    return out


LOAD_PARTS = ("device", "staging", "weights", "module", "plans", "warmup", "capture")


def load_parts(o):
    """The CUDA graphs' load parts of an ortc row (describe_graph's load_ms), summed; {} if none."""
    parts = {}
    for g in o.get("graphs") or []:
        for k, v in (g.get("load_ms") or {}).items() if g.get("backend") == "cuda" else ():
            parts[k] = parts.get(k, 0) + v
    return parts


def load_targets(result):
    """Issue 29: each load within 1.2x the measured CUDA context floor, each first run within 1.5x
    its p50."""
    floor = (result.get("host", {}).get("context_floor_ms") or {}).get("total_ms")
    out = []
    for name, prec, load, first, p50 in load_rows(result):
        if floor:
            ok = load <= 1.2 * floor
            out.append(("PASS" if ok else "FAIL", f"{name} {prec} load <= 1.2x the CUDA context floor: "
                        f"{load:.1f} ms vs {floor:.1f} ms ({load / floor:.2f}x)"))
        else:
            out.append(("n/a", f"{name} {prec} load <= 1.2x the CUDA context floor: floor not measured"))
        if first is not None:
            ok = first <= 1.5 * p50
            out.append(("PASS" if ok else "FAIL", f"{name} {prec} first run <= 1.5x p50: "
                        f"{first:.3f} ms vs {p50:.3f} ms ({first / p50:.2f}x)"))
    return out


def tuning_targets(result):
    """Issue 29: a cache made by `ortc tune` changes at least one choice, and never makes a model
    slower (the model compiled with it against the row's p50, both benchmarked alike)."""
    tuned = [(r["name"], r["ortc"]) for r in result["rows"] if (r.get("ortc") or {}).get("tuned")]
    if not tuned:
        return [("n/a", "a tuning cache changes at least one choice: ortc tune not run")]
    changed = sum(t["tuned"].get("changed", 0) for _, t in tuned)
    out = [("PASS" if changed else "FAIL", f"a tuning cache changes at least one choice: {changed} changed "
            f"over {len(tuned)} model(s)")]
    for name, o in tuned:
        t = o["tuned"]
        if t.get("p50_ms") is None or o.get("p50_ms") is None:
            out.append(("n/a", f"{name} fp16 with its tuning cache <= without: {t.get('error', 'not measured')}"))
            continue
        ok = t["p50_ms"] <= o["p50_ms"]
        out.append(("PASS" if ok else "FAIL", f"{name} fp16 with its tuning cache <= without: {t['p50_ms']:.3f} ms "
                    f"vs {o['p50_ms']:.3f} ms ({t['p50_ms'] / o['p50_ms']:.2f}x)"))
    return out


def render_load(result):
    """Load and first-run times against the context floor and the p50."""
    rows = load_rows(result)
    if not rows:
        return []
    floor = result.get("host", {}).get("context_floor_ms") or {}
    head = ("CUDA context floor: " + (f"{floor['total_ms']:.1f} ms (libcuda {floor['dlopen_ms']:.1f}, cuInit "
                                      f"{floor['init_ms']:.1f}, primary context {floor['context_ms']:.1f})"
                                      if floor.get("total_ms") else floor.get("error", "not measured")))
    lines = ["", "== load and first run (ms; load / floor, first run / p50; the CUDA load's parts: "
             + ", ".join(LOAD_PARTS) + ")", head,
             f"{'model':<18}{'prec':<6}{'load':>9}{'/floor':>8}{'first':>9}{'p50':>9}{'/p50':>7}  parts"]
    parts_of = {(r["name"], r["precision"]): load_parts(r.get("ortc") or {}) for r in result["rows"]}
    for name, prec, load, first, p50 in rows:
        lf = f"{load / floor['total_ms']:.2f}x" if floor.get("total_ms") else "-"
        fp = f"{first / p50:.2f}x" if first is not None else "-"
        parts = parts_of.get((name, prec)) or {}
        lines.append(f"{name:<18}{prec:<6}{load:>9.1f}{lf:>8}{(f'{first:.3f}' if first is not None else '-'):>9}"
                     f"{p50:>9.3f}{fp:>7}  " + (" ".join(f"{parts.get(k, 0):.1f}" for k in LOAD_PARTS)
                                               if parts else "-"))
    return lines


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


def render_step_profiles(result, notes, top=10):
    """Per model profiled at fp32 and fp16: its largest fp16 steps beside fp32's step of the same
    name (device µs, medians over the profiled runs), and both totals."""
    lines = []
    for name, m in result.get("models", {}).items():
        prof = m.get("step_profile") or {}
        bad = [f"{p}: {v['error']}" for p, v in prof.items() if "error" in v]
        if bad:
            notes.append(f"{name} step profile: " + "; ".join(bad))
            continue
        if set(prof) != {"fp32", "fp16"}:
            continue
        fp32 = {s[0]: s[2] for s in prof["fp32"]["steps"]}
        lines += ["", f"== where the device time goes: {name} (µs per step, median of "
                  f"{prof['fp16']['runs']} profiled runs; the {top} largest at fp16, fp32's step of the same name)",
                  f"fp16 total {prof['fp16']['total_us']:.1f} us ({len(prof['fp16']['steps'])} steps), "
                  f"fp32 total {prof['fp32']['total_us']:.1f} us ({len(prof['fp32']['steps'])} steps)",
                  f"{'step':<44}{'kind':<9}{'fp16 us':>10}{'fp32 us':>10}"]
        for step, kind, us in sorted(prof["fp16"]["steps"], key=lambda s: -s[2])[:top]:
            other = fp32.get(step)
            lines.append(f"{step[:43]:<44}{kind or '-':<9}{us:>10.1f}"
                         + (f"{other:>10.1f}" if other is not None else f"{'-':>10}"))
    return lines


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


def attention_path(o):
    """How ortc ran a row's attention, from its lowering counts."""
    if o.get("decode_attention"):
        return "decode"
    if o.get("attention_on_gemms"):
        return "gemm"
    return "fused" if o.get("fused_attention") == 1 else "-"


def render_attention(result, notes):
    """The attention kernel table (lines), its notes appended to notes."""
    t = result.get("attention")
    if not t or not t.get("rows"):
        return []
    lines = ["", f"== Attention kernel: fp16, batch {t['batch']}, {t['heads']} heads, head dim {t['head_dim']}, "
             f"no causal mask, padding mask (the last {t['padding']} of the keys); device time per call, median "
             "(ortc: its attention's steps in `ortc run --profile`; PyTorch: CUDA events around SDPA); "
             "4*rows*keys*64*heads FLOPs; rows x keys: S x S a prefill, 1 x N a decode step against a "
             "cache of N keys; path: how ortc ran it (gemm: two cuBLASLt GEMMs on tensor cores and one "
             "softmax kernel; fused: its one-kernel attention; decode: its decode kernel, split 1 when "
             "its keys are split into runs on blocks of their own)",
             f"{'rows x keys':>12}{'ortc us':>10}{'TFLOP/s':>9}{'path':>7}{'split':>6}{'torch us':>10}"
             f"{'TFLOP/s':>9}{'ortc/torch':>11}{'rel_l2 ortc':>12}{'rel_l2 torch':>13}"]

    def tflops(row, us):
        return f"{row['flops'] / (us * 1e-6) / 1e12:.1f}" if us else "-"

    for r in t["rows"]:
        o, th = r.get("ortc") or {}, r.get("torch") or {}
        ou, tu = o.get("device_us"), th.get("median_us")
        errs = [f"{x['rel_l2']:.1e}" if x.get("rel_l2") is not None else "-" for x in (o, th)]
        label = r.get("tag") or f"{r['seq']}x{r['seq']}"
        split = o.get("decode_attention_split")
        lines.append(f"{label:>12}{(f'{ou:.1f}' if ou else 'failed' if o.get('error') else '-'):>10}"
                     f"{tflops(r, ou):>9}{attention_path(o):>7}"
                     f"{('-' if split is None else str(split)):>6}"
                     f"{(f'{tu:.1f}' if tu else 'failed' if th.get('failed') else '-'):>10}{tflops(r, tu):>9}"
                     f"{(f'{ou / tu:.2f}x' if ou and tu else '-'):>11}{errs[0]:>12}{errs[1]:>13}")
        if o.get("error"):
            notes.append(f"attention {label} ortc: {o['error']}")
        elif o.get("fused_attention") not in (None, 1):
            notes.append(f"attention {label} ortc: {o.get('fused_attention')} fused attention op(s), not 1")
        if o.get("step_found") is False:
            notes.append(f"attention {label} ortc: no step named after the Softmax; all kernel steps summed")
        if th.get("failed"):
            notes.append(f"attention {label} torch: {th['failed']}")
        backends = th.get("backends") or {}
        if backends:
            notes.append(f"attention {label} torch SDPA backends: " + ", ".join(
                f"{k} {v['median_us']:.1f} us" if "median_us" in v else f"{k} failed ({v.get('failed', '?')[:60]})"
                for k, v in backends.items()))
        cpu = r.get("cpu_reference")
        if cpu:
            notes.append(f"attention {label} ortc CPU build: " + (
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
                             f"the graph's), " + (f"outputs differ by rel_l2 {diff:.1e}" if diff is not None
                                                  else "outputs not compared"))
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
    lines += (render_hf(result, notes) + render_attention(result, notes) + render_generation(result, notes)
              + render_load(result) + render_step_profiles(result, notes))
    for r in rows:
        t = (r.get("ortc") or {}).get("tuned")
        if t:
            notes.append(f"{r['name']} {r['precision']} ortc tune: " + (
                t["error"] if "error" in t and t.get("p50_ms") is None else
                f"{t['changed']} of {t['choices']} choice(s) changed; whole run under the profiler: rules "
                f"{t['rule_ms']:.3f} ms, tuned {t['tuned_ms']:.3f} ms; benchmarked with the cache: "
                + (f"{t['p50_ms']:.3f} ms p50" if t.get("p50_ms") is not None else "not measured")))
    notes += [f"{c['model']}: the runner's step crashed (see the log): {c['error']}" for c in result.get("crashes", [])]
    if notes:
        lines += ["", "Failures and notes:"] + ["  " + n for n in notes]
    lines += ["", "Targets:"] + [f"  {s:<4}  {t}" for s, t in
                                 targets(rows) + generation_targets(result) + load_targets(result)
                                 + tuning_targets(result)]
    return "\n".join(lines) + "\n"


def save(result, out):
    os.makedirs(out, exist_ok=True)
    result["targets"] = [{"status": s, "check": t}
                         for s, t in targets(result["rows"]) + generation_targets(result) + load_targets(result)
                         + tuning_targets(result)]
    with open(os.path.join(out, "results.json.tmp"), "w") as f:
        json.dump(result, f, indent=1)
    os.replace(os.path.join(out, "results.json.tmp"), os.path.join(out, "results.json"))
    with open(os.path.join(out, "results.txt"), "w") as f:
        f.write(render(result))
