"""GPU benchmark runner: the transformers of test/e2e/make_transformer_models.py (bert_*, gpt_*),
built and exported with this machine's torch unless packed, and the --export-model worker."""
import importlib.util
import json
import os
import time

from gpu_bench_common import HERE, entry_inputs, export_folder, export_once


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
    d = export_folder(work)
    onnx_path = os.path.join(d, os.path.basename(e["file"]))
    weights = os.path.join(d, os.path.basename(t["weights"]))
    return export_once(e["name"], "transformer", t, (onnx_path, weights), "--export-model",
                       {"entry": e, "module": os.path.join(HERE, t["module"]), "onnx": onnx_path,
                        "weights": weights}, a, work, logf, f"torch (once; kept in {d})")
