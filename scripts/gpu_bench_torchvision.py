"""GPU benchmark: the torchvision CNNs (resnet18, mobilenet_v2) with seeded random weights, exported
here by `pack --pack-torchvision` or, by default, by run.sh on the GPU machine with its own torch
(their .onnx and .npz files are about 90 MB, more than some copies to a GPU machine allow); the
--export-torchvision worker."""
import inspect
import json
import os
import time

from gpu_bench_common import HERE, export_folder, export_once

OPSET, SEED = 17, 0
TORCH_MODELS = "make_torch_models.py"  # packed with the torchvision models


def load_torch_models_module():
    """test/e2e/make_torch_models.py (randomise_bn: BatchNorm statistics drawn at random, or
    mobilenet_v2's outputs are ~1e-9 and prove nothing): packed beside the runner, else found in
    the source tree this file is in."""
    import importlib.util
    path = os.path.join(HERE, TORCH_MODELS)
    if not os.path.exists(path):
        path = os.path.join(HERE, "..", "test", "e2e", TORCH_MODELS)
    spec = importlib.util.spec_from_file_location("make_torch_models", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def export_torchvision(arch, batches, onnx_path_of, weights_path):
    """torchvision's arch with seeded random weights: one ONNX file per batch (TorchScript exporter,
    opset 17, input `input`, output `output`) at onnx_path_of(batch), its state_dict as weights_path
    (.npz), each written atomically. Returns what was used."""
    import numpy as np
    import torch
    import torchvision
    t0 = time.time()
    torch.manual_seed(SEED)
    model = load_torch_models_module().randomise_bn(getattr(torchvision.models, arch)(weights=None)).eval()
    tmp_npz = weights_path[:-len(".npz")] + ".tmp.npz"
    np.savez(tmp_npz, **{k: v.numpy() for k, v in model.state_dict().items()})
    # TorchScript's form on every torch: from 2.9 on, export defaults to the dynamo exporter
    legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    for b in batches:
        path = onnx_path_of(b)
        with torch.no_grad():
            torch.onnx.export(model, torch.randn(b, 3, 224, 224), path + ".tmp", opset_version=OPSET,
                              input_names=["input"], output_names=["output"], **legacy)
        os.replace(path + ".tmp", path)
    os.replace(tmp_npz, weights_path)
    return {"torch": torch.__version__, "torchvision": torchvision.__version__,
            "export_s": round(time.time() - t0, 1)}


def torchvision_entries(arch, batches, packed):
    """Manifest entries of arch, one per batch; "export" says where the files come from."""
    return [{"name": f"{arch}_b{b}", "model": arch, "batch": b, "file": f"models/{arch}_b{b}.onnx",
             "input": "input", "shape": [b, 3, 224, 224],
             "torch": {"arch": arch, "weights": f"models/{arch}.npz", "seed": SEED, "opset": OPSET,
                       "packed": packed}} for b in batches]


def export_worker(spec_file):
    """--export-torchvision: the export in its own process (the runner itself never imports torch)."""
    s = json.load(open(spec_file))
    info = export_torchvision(s["arch"], [s["batch"]], lambda b: s["onnx"], s["weights"])
    print("EXPORTED", json.dumps(info), flush=True)
    return 0


def torchvision_files(e, a, work, logf):
    """(onnx path, weights path, info) of a torchvision entry: the packed files, else the ones a
    previous run exported here, else exported now; info has "error" when that failed."""
    t = e["torch"]
    if t.get("packed", True):  # packs without the key had the files inside
        return os.path.join(HERE, e["file"]), os.path.join(HERE, t["weights"]), {"source": "packed"}
    d = export_folder(work)
    onnx_path = os.path.join(d, os.path.basename(e["file"]))
    weights = os.path.join(d, f"{e['name']}.npz")  # per entry: another batch's export never races it
    return export_once(e["name"], "torch", t, (onnx_path, weights), "--export-torchvision",
                       {"arch": t["arch"], "batch": e["batch"], "onnx": onnx_path, "weights": weights},
                       a, work, logf, "torch and torchvision")
