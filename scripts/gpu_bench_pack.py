"""GPU benchmark, build-machine half: `scripts/gpu_bench pack`: the payload (ortc, its plugin and
libraries), the models and their manifest entries, and the runner's files, into OUT_DIR."""
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from gpu_bench_torchvision import TORCH_MODELS, export_torchvision, torchvision_entries
from gpu_bench_transformers import export_transformer, load_transformer_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The runner: packed as gpu_bench.py, with the gpu_bench_*.py modules it imports beside it.
RUNNER = os.path.join(ROOT, "scripts", "gpu_bench_runner.py")
# Libraries every Linux machine has (glibc, the C++ runtime) or that must come from the GPU
# machine (driver, CUDA libraries, which the plugin dlopens anyway): never packed.
SYSTEM_LIB = re.compile(r"^(linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libdl\.so|"
                        r"libpthread|librt\.so|libcuda|libnvidia|libcudnn|libcublas|libnvrtc|libcudart)")
OCR = {  # name: (file in fetch_test_models.sh's ocr folder, input, shape)
    "ppocr_det": ("ch_PP-OCRv4_det_infer.onnx", "x", [1, 3, 640, 640]),
    "ppocr_rec": ("ch_PP-OCRv4_rec_infer.onnx", "x", [1, 3, 48, 320]),
    "ppocr_cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", "x", [1, 3, 48, 192]),
}
TORCHVISION = ("resnet18", "mobilenet_v2")
TRANSFORMERS = {  # name: (class of test/e2e/make_transformer_models.py, its SIZES key); *_small: dry runs
    "bert_base": ("bert", "base"), "gpt_base": ("gpt", "base"),
    "bert_small": ("bert", "small"), "gpt_small": ("gpt", "small"),
}
TRANSFORMER_MODULE = os.path.join(ROOT, "test", "e2e", "make_transformer_models.py")
SEQUENCE, PADDING = 128, 28  # [1,128] inputs; BERT's attention mask has its last 28 positions 0
ISSUE = {"bert_base": {"precision": "fp16", "torch_eager_ms": 10.3, "gpu": "an H100"}}  # quoted figure
# Hugging Face models, built on the GPU machine by its transformers from these config values (random
# init, no download): name: (architecture, config). *_small: dry runs (selftest).
HF = {
    "hf_bert_base": ("bert", dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                  intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2)),
    "hf_gpt2": ("gpt2", dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12)),
    "hf_llama": ("llama", dict(vocab_size=32000, hidden_size=768, intermediate_size=2048, num_hidden_layers=12,
                               num_attention_heads=12, num_key_value_heads=4, max_position_embeddings=2048)),
    "hf_bert_small": ("bert", dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                   intermediate_size=256, max_position_embeddings=256, type_vocab_size=2)),
    "hf_gpt2_small": ("gpt2", dict(vocab_size=1000, n_positions=256, n_embd=64, n_layer=2, n_head=4)),
    "hf_llama_small": ("llama", dict(vocab_size=1000, hidden_size=64, intermediate_size=176, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)),
}
HF_ARCH = {  # architecture: model class, config class, auto class, compared output, causal LM, inputs
    "bert": ("BertModel", "BertConfig", "AutoModel", "last_hidden_state", False, ("input_ids", "attention_mask")),
    # GPT-2 gets the mask too: without one, transformers 5.x looks for packed sequences with
    # torch.diff, which the TorchScript exporter cannot export at opset 17 (aten::diff)
    "gpt2": ("GPT2LMHeadModel", "GPT2Config", "AutoModelForCausalLM", "logits", True,
             ("input_ids", "attention_mask")),
    "llama": ("LlamaForCausalLM", "LlamaConfig", "AutoModelForCausalLM", "logits", True,
              ("input_ids", "attention_mask")),
}
# The attention table: Q, K, V [1, 12, S, 64], an additive padding mask [1, 1, 1, S] whose last 7/32
# of the keys are masked (28 of 128, as BERT's inputs here), no causal mask.
ATTENTION = {"heads": 12, "head_dim": 64, "pad_num": 7, "pad_den": 32, "softmax_node": "attention_softmax"}
DEFAULT_MODELS = ("resnet18,mobilenet_v2,ppocr_det,ppocr_rec,ppocr_cls,bert_base,gpt_base,"
                  "hf_bert_base,hf_gpt2,hf_llama,attention,llama_generation")
PYTHON = "/usr/bin/python3"


def sh(args, **kw):
    return subprocess.run(args, check=True, text=True, capture_output=True, **kw).stdout.strip()


def onnx_inputs(path):
    """[(name, dims)] of the model's non-initializer inputs."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    return [(i.name, [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim])
            for i in m.graph.input if i.name not in inits]


def runner_files():
    """[(source, name in OUT_DIR)] of the runner: gpu_bench_runner.py as gpu_bench.py, then every
    scripts/gpu_bench_*.py module it imports, directly or through another (read from the sources:
    a module added to the runner is packed without a list to keep up)."""
    files, todo = [(RUNNER, "gpu_bench.py")], [RUNNER]
    while todo:
        for node in ast.walk(ast.parse(open(todo.pop()).read())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            for n in names:
                path = os.path.join(ROOT, "scripts", n + ".py")
                if n.startswith("gpu_bench_") and os.path.isfile(path) and path not in [f for f, _ in files]:
                    files.append((path, n + ".py"))
                    todo.append(path)
    return files


def needed_libs(files):
    """{soname: resolved path} of the non-system libraries the files load (ldd is transitive)."""
    libs = {}
    for f in files:
        for line in sh(["ldd", f]).splitlines():
            m = re.match(r"\s*(\S+)\s+=>\s+(\S+)", line)
            if not m or SYSTEM_LIB.match(m.group(1)):
                continue
            if m.group(2) == "not":
                sys.exit(f"{f}: {m.group(1)} not found by ldd")
            libs[m.group(1)] = m.group(2)
    return libs


def glibc_needs(files):
    """Highest GLIBC_ and GLIBCXX_ symbol versions the files ask for (objdump, when present)."""
    found = {"glibc": [], "glibcxx": []}
    if not shutil.which("objdump"):
        return {}
    for f in files:
        text = subprocess.run(["objdump", "-T", f], text=True, capture_output=True).stdout
        found["glibc"] += re.findall(r"\bGLIBC_([0-9.]+)", text)
        found["glibcxx"] += re.findall(r"\bGLIBCXX_([0-9.]+)", text)
    key = lambda v: [int(x) for x in v.split(".")]
    return {k: max(v, key=key) for k, v in found.items() if v}


def binaries(build):
    bins = [os.path.join(build, "tools", n) for n in ("ortc", "libortc_backend_cuda.so")]
    for b in bins:
        if not os.path.isfile(b):
            sys.exit(f"{b} is missing: build first (bash scripts/build.sh, or pass --build DIR)")
    return bins


def pack_payload(bins, out, xz_level):
    libs = needed_libs(bins)
    stage = tempfile.mkdtemp(dir=out)
    os.makedirs(os.path.join(stage, "bin"))
    os.makedirs(os.path.join(stage, "lib"))
    for b in bins:
        shutil.copy2(b, os.path.join(stage, "bin"))
    for name, path in libs.items():
        shutil.copyfile(path, os.path.join(stage, "lib", name))  # follows links: a real file
    tar = os.path.join(out, "payload.tar.xz")
    with open(tar, "wb") as f:
        t = subprocess.Popen(["tar", "-C", stage, "-cf", "-", "bin", "lib"], stdout=subprocess.PIPE)
        subprocess.run(["xz", "-T0", f"-{xz_level}"], stdin=t.stdout, stdout=f, check=True)
        if t.wait():
            sys.exit("tar failed")
    needs = glibc_needs(bins + [os.path.join(stage, "lib", n) for n in libs])
    shutil.rmtree(stage)
    version = sh([bins[0], "--version"])
    git = {}
    try:
        git["commit"] = sh(["git", "-C", ROOT, "rev-parse", "HEAD"])
        git["dirty"] = subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "HEAD", "--"]).returncode != 0
    except (subprocess.CalledProcessError, FileNotFoundError):
        pass
    ortc = {"version": version, "sha256": hashlib.sha256(open(bins[0], "rb").read()).hexdigest(),
            "built": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(os.path.getmtime(bins[0]))), **git}
    return {"payload": "payload.tar.xz", "payload_sha256": hashlib.sha256(open(tar, "rb").read()).hexdigest(),
            "bin": [os.path.basename(b) for b in bins], "libs": sorted(libs), "requires": needs, "ortc": ortc}


def transformer_entry(name, packed, out, module_sha):
    """The manifest entry of a transformer; with packed, its ONNX file and weights exported here."""
    kind, size = TRANSFORMERS[name]
    vocab = load_transformer_module(TRANSFORMER_MODULE).SIZES[size]["vocab"]
    inputs = [{"name": "input_ids", "shape": [1, SEQUENCE], "dtype": "int64", "fill": "ids", "high": vocab}]
    if kind == "bert":
        inputs.append({"name": "attention_mask", "shape": [1, SEQUENCE], "dtype": "int64", "fill": "mask",
                       "padding": PADDING})
    e = {"name": name, "model": name, "batch": 1, "file": f"models/{name}.onnx", "inputs": inputs,
         "shape": [1, SEQUENCE], "max_partitions": 1,
         "outputs": ["last_hidden_state", "pooler_output"] if kind == "bert" else ["logits"],
         "transformer": {"module": os.path.basename(TRANSFORMER_MODULE), "module_sha256": module_sha,
                         "kind": kind, "size": size, "seed": 0, "opset": 17,
                         "weights": f"models/{name}.npz", "packed": packed}}
    if name in ISSUE:
        e["issue"] = ISSUE[name]
    stale = [os.path.join(out, "models", name + ext) for ext in (".onnx", ".npz", ".export.json")]
    for f in stale:  # a previous pack's files: exported again below, or on the GPU machine
        if os.path.exists(f):
            os.remove(f)
    if packed:
        info = export_transformer(e, TRANSFORMER_MODULE, os.path.join(out, e["file"]),
                                  os.path.join(out, e["transformer"]["weights"]))
        e["transformer"]["exported_with"] = info
    return e


def hf_entry(name):
    """The manifest entry of a Hugging Face model: its config and classes; run.sh builds, exports
    (TorchScript by default) and times it on the GPU machine with that machine's transformers."""
    arch, config = HF[name]
    model_class, config_class, auto_class, output, causal, input_names = HF_ARCH[arch]
    inputs = [{"name": "input_ids", "shape": [1, SEQUENCE], "dtype": "int64", "fill": "ids",
               "high": config["vocab_size"]}]
    if "attention_mask" in input_names:  # the last 28 positions padded, for every model alike
        inputs.append({"name": "attention_mask", "shape": [1, SEQUENCE], "dtype": "int64", "fill": "mask",
                       "padding": PADDING})
    return {"name": name, "model": name, "kind": "hf", "batch": 1, "shape": [1, SEQUENCE], "inputs": inputs,
            "outputs": [output],
            "hf": {"arch": arch, "model_class": model_class, "config_class": config_class, "auto_class": auto_class,
                   "output": output, "causal": causal, "config": config, "seed": 0, "opset": 17, "dynamo_opset": 18}}


def write_attention_model(path, seq, rows=None):
    """Scaled dot-product attention alone, as exporters write it: Transpose(K), MatMul(Q, K^T),
    Mul by 1/sqrt(64), Add of the mask, Softmax (last axis), MatMul with V; fp16 inputs
    q [1, 12, rows, 64], k, v [1, 12, seq, 64] and mask [1, 1, 1, seq], output [1, 12, rows, 64]
    (rows = seq: a prefill; 1: a decode step against a cache of seq keys). The scale is stored as
    raw bytes, as exporters store it."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    heads, dim = ATTENTION["heads"], ATTENTION["head_dim"]
    rows = seq if rows is None else rows
    qkv, q_out = [1, heads, seq, dim], [1, heads, rows, dim]
    nodes = [helper.make_node("Transpose", ["k"], ["k_t"], name="attention_k_t", perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "k_t"], ["scores"], name="attention_qk"),
             helper.make_node("Mul", ["scores", "scale"], ["scaled"], name="attention_scale"),
             helper.make_node("Add", ["scaled", "mask"], ["masked"], name="attention_mask"),
             helper.make_node("Softmax", ["masked"], ["probs"], name=ATTENTION["softmax_node"], axis=-1),
             helper.make_node("MatMul", ["probs", "v"], ["out"], name="attention_pv")]
    scale = helper.make_tensor("scale", TensorProto.FLOAT16, [], np.array([dim ** -0.5], np.float16).tobytes(),
                               raw=True)
    graph = helper.make_graph(
        nodes, f"attention_s{seq}",
        [helper.make_tensor_value_info("q", TensorProto.FLOAT16, q_out)]
        + [helper.make_tensor_value_info(n, TensorProto.FLOAT16, qkv) for n in ("k", "v")]
        + [helper.make_tensor_value_info("mask", TensorProto.FLOAT16, [1, 1, 1, seq])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT16, q_out)], [scale])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="gpu_bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def attention_entry(out, seqs, decode_keys=()):
    """The attention table's entry and its ONNX files in out/models: one per sequence length (a
    prefill, seq query rows) and one per decode cache length (one query row against that many keys:
    ortc's decode kernel, split over the keys)."""
    files = []
    for seq in seqs:
        rel = f"models/attention_s{seq}.onnx"
        write_attention_model(os.path.join(out, rel), seq)
        files.append({"seq": seq, "rows": seq, "file": rel})
    for keys in decode_keys:
        rel = f"models/attention_d{keys}.onnx"
        write_attention_model(os.path.join(out, rel), keys, rows=1)
        files.append({"seq": keys, "rows": 1, "file": rel})
    return {"name": "attention", "model": "attention", "kind": "attention", "batch": 1, "seqs": files,
            "padding": f"{ATTENTION['pad_num']}/{ATTENTION['pad_den']}", **ATTENTION}


# LLM generation (gpu_bench_generation.py): make_kv_decoder.py's GenAI-form Llama at `config` on the
# ortc side, transformers' LlamaForCausalLM of `hf_config` (the same architecture and sizes) on
# PyTorch's; prompts of these lengths, then `new_tokens` greedy tokens.
KV_GENERATOR = os.path.join(ROOT, "test", "e2e", "make_kv_decoder.py")
GENERATION = {
    "llama_generation": dict(config="base", prompts=[128, 512], new_tokens=64, hf_config=dict(
        vocab_size=32000, hidden_size=768, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=12,
        num_key_value_heads=4, head_dim=64, max_position_embeddings=2048, rms_norm_eps=1e-6, rope_theta=10000.0,
        tie_word_embeddings=False)),
    "llama_generation_small": dict(config="test", prompts=[8, 16], new_tokens=8, hf_config=dict(
        vocab_size=97, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, max_position_embeddings=256, rms_norm_eps=1e-6, rope_theta=10000.0,
        tie_word_embeddings=False)),
}


def generation_entry(name):
    return {"name": name, "model": name, "kind": "generation", "batch": 1, **GENERATION[name]}


def cmd_pack(a):
    out = os.path.abspath(a.out_dir)
    names = [m for m in a.models.split(",") if m]
    known = set(TORCHVISION) | set(OCR) | set(TRANSFORMERS) | set(HF) | set(GENERATION) | {"tiny_cnn", "attention"}
    unknown = set(names) - known
    if unknown:
        sys.exit(f"unknown model(s) {sorted(unknown)}: known are {','.join(sorted(known))}")
    packed = {m for m in names if m in TRANSFORMERS} if a.pack_transformers == "all" else \
        {m for m in (a.pack_transformers or "").split(",") if m}
    if packed - set(TRANSFORMERS) or packed - set(names):
        sys.exit(f"--pack-transformers {a.pack_transformers}: name transformers of --models "
                 f"({','.join(m for m in names if m in TRANSFORMERS) or 'none'})")
    bins = binaries(os.path.abspath(a.build))
    models_dir = os.path.join(out, "models")
    os.makedirs(models_dir, exist_ok=True)
    t0 = time.time()
    manifest = {"schema": "ortc_gpu_bench_pack/1", "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    manifest.update(pack_payload(bins, out, a.xz))
    entries, exporter = [], {}
    batches = [int(b) for b in a.batches.split(",")]
    for arch in [m for m in names if m in TORCHVISION]:  # the generator's randomise_bn goes along
        shutil.copyfile(os.path.join(ROOT, "test", "e2e", TORCH_MODELS), os.path.join(out, TORCH_MODELS))
        entries += torchvision_entries(arch, batches, a.pack_torchvision)
        for f in [os.path.join(out, e["file"]) for e in entries[-len(batches):]] + \
                [os.path.join(models_dir, arch + ".npz")]:
            if os.path.exists(f):  # a previous pack's files: exported again below, or on the GPU machine
                os.remove(f)
        if a.pack_torchvision:
            print(f"exporting {arch} with {PYTHON} (torch here)", flush=True)
            exporter = export_torchvision(arch, batches, lambda b: os.path.join(models_dir, f"{arch}_b{b}.onnx"),
                                          os.path.join(models_dir, arch + ".npz"))
    if any(m in OCR for m in names):
        cache = os.path.abspath(a.cache)
        rc = subprocess.run([os.path.join(ROOT, "scripts", "fetch_test_models.sh"), cache],
                            stdout=subprocess.DEVNULL).returncode
        if rc:
            sys.exit(rc)  # 77 (npm unreachable) passes through as a skip
        for m in [m for m in names if m in OCR]:
            f, inp, shape = OCR[m]
            shutil.copyfile(os.path.join(cache, "ocr", f), os.path.join(models_dir, f))
            # A rendered text image, not noise: det's probability map then means something
            # (issue 29 measures its fp16 error on it).
            entries.append({"name": m, "model": m, "batch": shape[0], "file": f"models/{f}",
                            "input": inp, "shape": shape,
                            "inputs": [{"name": inp, "shape": shape, "dtype": "float32", "fill": "text_image",
                                        "norm": "imagenet" if m == "ppocr_det" else "half"}]})
    transformers = [m for m in names if m in TRANSFORMERS]
    if transformers:  # the classes the runner rebuilds the PyTorch module from, and exports with
        shutil.copyfile(TRANSFORMER_MODULE, os.path.join(out, os.path.basename(TRANSFORMER_MODULE)))
        module_sha = hashlib.sha256(open(TRANSFORMER_MODULE, "rb").read()).hexdigest()
    for m in transformers:
        if m in packed:
            print(f"exporting {m} with {PYTHON} (torch here)", flush=True)
        entries.append(transformer_entry(m, m in packed, out, module_sha))
    for m in [m for m in names if m in HF]:
        entries.append(hf_entry(m))
    if "attention" in names:
        entries.append(attention_entry(out, [int(s) for s in a.attention_seqs.split(",")],
                                       [int(s) for s in a.attention_decode.split(",") if s]))
    for m in [m for m in names if m in GENERATION]:  # the model is written on the GPU machine
        shutil.copyfile(KV_GENERATOR, os.path.join(out, os.path.basename(KV_GENERATOR)))
        entries.append(generation_entry(m))
    if "tiny_cnn" in names:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "examples", "make_tiny_cnn.py"),
                        os.path.join(models_dir, "tiny_cnn.onnx")], check=True, stdout=subprocess.DEVNULL)
        entries.append({"name": "tiny_cnn", "model": "tiny_cnn", "batch": 1, "file": "models/tiny_cnn.onnx",
                        "input": "image", "shape": [1, 3, 32, 32]})
    for e in entries:  # the input names the runner passes to --input-shape, from the files themselves
        if e.get("transformer") and not e["transformer"]["packed"] or \
                e.get("torch") and not e["torch"]["packed"] or e.get("kind") in ("hf", "attention",
                                                                                          "generation"):
            continue  # exported on the GPU machine, which checks them there; attention: written above
        got = onnx_inputs(os.path.join(out, e["file"]))
        want = [(i["name"], len(i["shape"])) for i in e.get("inputs") or
                [{"name": e["input"], "shape": e["shape"]}]]
        if [(n, len(d)) for n, d in got] != want:
            sys.exit(f"{e['file']}: inputs are {got}, expected (name, rank) {want}")
    manifest["models"] = entries
    manifest["exporter"] = exporter
    for src, name in runner_files():  # run.sh runs gpu_bench.py; it imports the modules beside it
        shutil.copyfile(src, os.path.join(out, name))
    with open(os.path.join(out, "run.sh"), "w") as f:
        f.write('#!/bin/sh\n# Runs the ortc-vs-PyTorch GPU benchmark of this folder (--help for options).\n'
                'exec "${PYTHON:-python3}" "$(dirname "$0")/gpu_bench.py" "$@"\n')
    os.chmod(os.path.join(out, "run.sh"), 0o755)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(out) for n in ns)
    later = [m for m in transformers if m not in packed] + \
        [e["name"] for e in entries if e.get("torch") and not e["torch"]["packed"]]
    hf = [m for m in names if m in HF]
    print(f"packed {len(entries) - len(later) - len(hf)} model file(s), {len(manifest['libs'])} libraries into "
          f"{out} ({size / 2**20:.0f} MiB, {time.time() - t0:.0f} s); on the GPU machine: {a.out_dir}/run.sh"
          + (f"\n{','.join(later)}: exported by run.sh on the GPU machine with its torch "
             "(--pack-transformers or --pack-torchvision export them here instead)" if later else "")
          + (f"\n{','.join(hf)}: built and exported by run.sh on the GPU machine with its transformers"
             if hf else ""))
