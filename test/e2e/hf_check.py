"""The Python side of hf_models.sh: inputs for a model at a shape, and the verdicts on ortc's
reports and outputs. Every verdict prints one line and exits 0 (pass) or 1 (fail, the line says
why), so the shell script can report each model and check on its own line.

  hf_check.py inputs MODELS_JSON NAME BxS OUT_DIR   generated model: writes its inputs as .npy and
                                                    prints bash assignments (shape_args, emu_args,
                                                    feeds, ort_feeds)
  hf_check.py fixture-inputs FIXTURE_DIR            the same for a fixture's in_*.npy
  hf_check.py probe-model PATH                      a one-Relu model (is NVRTC there?)
  hf_check.py partition REPORT                      one CUDA group, no CPU group, nothing dynamic
  hf_check.py lowering REPORT                       ortc compile --json succeeded: its lowering counts
  hf_check.py shared-group REPORT                   ortc compile --share-weights --json of N models:
                                                    one context binary per backend, each model one
                                                    CUDA group and no CPU group, every weight once
  hf_check.py compare WANT_DIR WANT_PREFIX GOT_DIR [ROWS]
                                                    every output within 1e-4 relative L2; with ROWS
                                                    (an attention mask .npy, [B, S]) only at the
                                                    positions it keeps (outputs [B, S, ...])
"""
import json
import os
import shlex
import sys

import numpy as np

REL_L2 = 1e-4  # CPU against the reference: fp32 on both sides, summation order only


def fail(msg):
    print(msg)
    sys.exit(1)


def shell_arrays(**arrays):
    for k, v in arrays.items():
        print(f"{k}=({' '.join(shlex.quote(x) for x in v)})")


def model_inputs(models_json, name, shape, out_dir):
    """Token ids within the vocabulary; padded attention masks (row 0 padded at the end, row 1 of
    a decoder at the front, as left-padded generation batches are), positions as Hugging Face
    derives them from the mask; pixels normal. Seeded by the model's name: reruns see the same."""
    entry = {m["name"]: m for m in json.load(open(models_json))}[name]
    b, s = (int(x) for x in (shape.lower() + "x0").split("x")[:2])  # "B" alone: no sequence axis
    rng = np.random.default_rng(sum(map(ord, name)) * 1000 + b * 100 + s)
    os.makedirs(out_dir, exist_ok=True)
    mask = np.ones((b, s), np.int64)
    mask[0, s - max(1, s // 5):] = 0
    if b > 1 and entry["decoder"]:
        mask[1, : s // 4] = 0
    shape_args, emu_shapes, emu_opts, feeds, ort_feeds = [], [], [], [], []
    for inp in entry["inputs"]:
        n = inp["name"]
        dims = [b if d in ("batch", "batch_size") else s if d == "sequence_length" else d for d in inp["dims"]]
        if n == "input_ids":
            data = rng.integers(0, entry["vocab"], dims).astype(np.int64)
            emu_opts += ["--int-range", f"input_ids=0:{entry['vocab'] - 1}"]
        elif n == "attention_mask":
            data = mask
            # A decoder row whose first keys are padded has query rows with no key left: the
            # graph defines them (SDPA's NaN guard gives 0, an additive lowest gives a uniform
            # average), but not stably across storage precisions (float32 lowest saturates to
            # -inf at fp16 and the uniform row becomes the guarded 0). The emulator's random
            # masks therefore keep every key for decoders; encoders get random holes.
            if entry["decoder"]:
                emu_opts += ["--int-range", "attention_mask=1:1"]
        elif n == "position_ids":
            data = np.clip(np.cumsum(mask, axis=1) - 1, 0, None).astype(np.int64)
            emu_opts += ["--int-range", f"position_ids=0:{s - 1}"]
        else:
            data = rng.standard_normal(dims).astype(np.float32)
        path = os.path.join(out_dir, f"{n}.npy")
        np.save(path, data)
        if not entry["static"] and any(isinstance(d, str) for d in inp["dims"]):
            shape_args += ["--input-shape", f"{n}={'x'.join(map(str, dims))}"]
        emu_shapes.append(f"{n}={'x'.join(map(str, dims))}")
        feeds += ["--input", f"{n}={path}"]
        ort_feeds.append(f"{n}={path}")
    shell_arrays(shape_args=shape_args, emu_args=emu_shapes + emu_opts, feeds=feeds, ort_feeds=ort_feeds)


def fixture_inputs(fixture_dir):
    """A fixture's own inputs; its shapes are static (the exporter wrote them), so no
    --input-shape. Token ids for the emulator stay within the embedding table."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(os.path.join(fixture_dir, "model.onnx"))
    inits = {i.name: i for i in m.graph.initializer}
    vocab = None
    for n in m.graph.node:
        if n.op_type == "Gather" and len(n.input) == 2 and n.input[1] == "input_ids" and n.input[0] in inits:
            vocab = numpy_helper.to_array(inits[n.input[0]]).shape[0]
    emu_args, feeds, ort_feeds, opts = [], [], [], []
    # a causal mask: GatherND (dynamo's padding index) or LessOrEqual (the causal function)
    decoder = any(n.op_type in ("GatherND", "LessOrEqual") for n in m.graph.node)
    for inp in m.graph.input:
        path = os.path.join(fixture_dir, f"in_{inp.name}.npy")
        arr = np.load(path)
        emu_args.append(f"{inp.name}={'x'.join(map(str, arr.shape))}")
        feeds += ["--input", f"{inp.name}={path}"]
        ort_feeds.append(f"{inp.name}={path}")
        if inp.name == "input_ids" and vocab:
            opts += ["--int-range", f"input_ids=0:{vocab - 1}"]
        elif inp.name == "attention_mask" and decoder:
            opts += ["--int-range", "attention_mask=1:1"]  # see model_inputs
        elif inp.name == "position_ids":
            opts += ["--int-range", f"position_ids=0:{max(arr.max(), arr.shape[-1] - 1)}"]
    shell_arrays(shape_args=[], emu_args=emu_args + opts, feeds=feeds, ort_feeds=ort_feeds)


def probe_model(path):
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "probe", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def read_report(report_path):
    try:
        return json.load(open(report_path))
    except (OSError, ValueError) as e:
        fail(f"no JSON report ({e})")


def read_successful_report(report_path):
    """The report of an ortc command that must have succeeded (its error is the verdict)."""
    r = read_report(report_path)
    if not r.get("ok", False):
        err = r.get("error", {})
        fail(f"error {err.get('code')}: {err.get('message')}")
    return r


def partition(report_path):
    r = read_report(report_path)
    groups = {}
    for g in r.get("groups", []):
        groups[g["backend"]] = groups.get(g["backend"], 0) + 1
    problems = []
    if groups.get("cuda", 0) != 1 or set(groups) != {"cuda"}:
        problems.append("groups " + ", ".join(f"{k} {v}" for k, v in sorted(groups.items())))
    if r.get("dynamic_values"):
        roots = "; ".join(f"{x.get('op') or x['kind']} {x['name']}: {x['reason']}" for x in r["dynamic_roots"][:3])
        problems.append(f"{len(r['dynamic_values'])} dynamic values (roots: {roots})")
    if not r.get("ok", False) and "error" in r:
        problems.append(f"error {r['error']['code']}: {r['error']['message']}")
    if problems:
        refused = {}
        for x in r.get("refusals", []):
            if x["backend"] == "cuda" and "unknown rank" not in x["reason"] and "dynamic shape" not in x["reason"]:
                refused.setdefault(f"{'/'.join(x['ops'])}: {x['reason']}", []).extend(x["nodes"])
        first = "; ".join(f"{k} (x{len(v)}, e.g. {v[0]})" for k, v in list(refused.items())[:4])
        fail(" | ".join(problems) + (f" | CUDA refused: {first}" if first else ""))
    cuda = [g for g in r["groups"] if g["backend"] == "cuda"][0]
    print(f"1 CUDA group of {cuda['node_count']} nodes, {len(r.get('folded', []))} folded")


def lowering(report_path):
    r = read_successful_report(report_path)
    low = r.get("lowering", {})
    keys = ["fused_attention", "gelu_recognised", "layernorm_recognised", "rmsnorm_recognised", "rotary_fused",
            "projections_merged", "add_layernorm_fused", "residual_adds_fused"]
    stats = ", ".join(f"{k} {low.get(k, 0)}" for k in keys)
    print(f"{low.get('steps', 0)} steps ({low.get('gemm_calls', 0)} GEMMs, {low.get('kernels', 0)} kernels); {stats}")


def shared_group(report_path):
    r = read_successful_report(report_path)
    models = r["models"]
    backends = {b["backend"]: b for b in r["backends"]}
    bins = [f for f in r["files"] if f["kind"] == "context_binary"]
    ctx = [f for f in r["files"] if f["kind"] == "ctx_model"]
    problems = []
    if len(bins) != 1:
        problems.append(f"{len(bins)} context binaries, not 1")
    if len(ctx) != len(models):
        problems.append(f"{len(ctx)} ctx models for {len(models)} models")
    if backends.get("cuda", {}).get("group_count") != len(models):
        problems.append(f"{backends.get('cuda', {}).get('group_count')} CUDA groups for {len(models)} models")
    if backends.get("cpu", {}).get("group_count", 0) != 0:
        problems.append(f"{backends['cpu']['group_count']} CPU groups")
    w = r["weights"]
    if w["unique_bytes"] != sum(m["weights"]["new_unique_bytes"] for m in models):
        problems.append("the models' new unique bytes do not add up to the stored weights")
    # Every weight the later models share with the first is stored once: what they add is what
    # only they have (the decode graph's few constants of its own).
    later_new = sum(m["weights"]["new_unique_bytes"] for m in models[1:])
    if later_new > 0.01 * sum(m["weights"]["bytes"] for m in models[1:]):
        problems.append(f"the later models add {later_new} bytes of weights")
    if problems:
        fail("; ".join(problems))
    print(f"{len(models)} ctx models, one CUDA binary of {bins[0]['bytes']} bytes, weights "
          f"{w['count']} tensors stored as {w['unique_count']} ({w['saved_bytes']} bytes saved)")


def compare(want_dir, prefix, got_dir, rows_path=None):
    rows = np.load(rows_path).astype(bool) if rows_path else None
    names = sorted(f[len(prefix):] for f in os.listdir(want_dir) if f.startswith(prefix) and f.endswith(".npy"))
    if not names:
        fail(f"no reference outputs in {want_dir}")
    parts, bad = [], []
    for n in names:
        want = np.load(os.path.join(want_dir, prefix + n)).astype(np.float64)
        path = os.path.join(got_dir, n)
        if not os.path.exists(path):
            bad.append(f"{n[:-4]} missing")
            continue
        got = np.load(path).astype(np.float64)
        if got.shape != want.shape:
            bad.append(f"{n[:-4]} shape {list(got.shape)} != {list(want.shape)}")
            continue
        if rows is not None:
            want, got = want[rows], got[rows]
        finite = np.isfinite(got).all()
        denom = np.linalg.norm(want)
        rel = float(np.linalg.norm(got - want) / denom) if denom > 0 else float(np.linalg.norm(got))
        parts.append(f"{n[:-4]} {rel:.2g}")
        if not finite or not rel <= REL_L2:
            bad.append(f"{n[:-4]} relative L2 {rel:.3g}" + ("" if finite else " (non-finite values)"))
    if bad:
        fail("; ".join(bad) + f" (limit {REL_L2:g})")
    print("relative L2: " + ", ".join(parts))


def main(argv):
    cmd = argv[1]
    if cmd == "inputs":
        model_inputs(*argv[2:6])
    elif cmd == "fixture-inputs":
        fixture_inputs(argv[2])
    elif cmd == "probe-model":
        probe_model(argv[2])
    elif cmd == "partition":
        partition(argv[2])
    elif cmd == "lowering":
        lowering(argv[2])
    elif cmd == "shared-group":
        shared_group(argv[2])
    elif cmd == "compare":
        compare(*argv[2:6])
    else:
        fail(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
