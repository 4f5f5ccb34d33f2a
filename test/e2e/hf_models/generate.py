"""Writes one variant: builds its graph, saves the .onnx (and with --weights its parameters) and
returns its models.json entry; runs the numpy reference of a written model on .npy inputs."""
import json
import os
import sys

import numpy as np
from onnx import TensorProto

from .configs import SIZES, VARIANTS
from .encoders import bert_dynamo, bert_family, distilbert, vit
from .gpt import gpt2, gpt_neox, phi
from .llama import decoder_dynamo, llama_family
from .references import REFERENCES
from .t5 import t5_encoder
from .writer import Writer

BUILDERS = {"bert": bert_family, "roberta": bert_family, "vit": vit, "gpt2": gpt2,
            "llama": llama_family, "qwen2": llama_family, "distilbert": distilbert, "mistral": decoder_dynamo,
            "gemma": decoder_dynamo, "qwen3": decoder_dynamo, "phi3": decoder_dynamo, "gpt_neox": gpt_neox,
            "phi": phi, "t5": t5_encoder}
DECODERS = ("gpt2", "llama", "qwen2", "mistral", "gemma", "qwen3", "phi3", "gpt_neox", "phi")


def write(name, size, static_shape, out_dir, seed, save_weights=False):
    v = VARIANTS[name]
    c = SIZES[size][v["arch"]]
    g = Writer(v["form"], seed, v.get("opset"))
    if v.get("static"):
        B, S = static_shape
        stem = f"{name}_{B}x{S}"
    else:
        # the axis names users give dynamic_axes / dynamic_shapes
        B, S = ("batch_size", "sequence_length") if v["form"] == "torchscript" else ("batch", "sequence_length")
        stem = name
    if size != "small":
        stem += f"_{size}"
    build = bert_dynamo if (v["arch"], v["form"]) == ("bert", "dynamo") else BUILDERS[v["arch"]]
    build(g, c, v, B, S)  # the graph inputs are read back from the model below
    model = g.model()
    path = os.path.join(out_dir, stem + ".onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    if save_weights:
        np.savez(os.path.join(out_dir, stem + ".weights.npz"), **g.weights)

    def dims(vi):
        return [x.dim_param or x.dim_value for x in vi.type.tensor_type.shape.dim]

    return {
        "name": stem, "variant": name, "file": stem + ".onnx", "arch": v["arch"], "form": v["form"],
        "attention": v["attn"], "static": bool(v.get("static")), "layers": c["layers"], "opset": g.opset,
        "vocab": c.get("vocab"), "decoder": v["arch"] in DECODERS, "config": c,
        "reference": v["arch"] in REFERENCES,
        "inputs": [{"name": x.name, "dtype": {TensorProto.INT64: "int64", TensorProto.FLOAT: "float32"}
                    [x.type.tensor_type.elem_type], "dims": dims(x)} for x in model.graph.input],
        "outputs": [{"name": x.name, "dims": dims(x)} for x in model.graph.output],
    }


def reference(models_dir, name, in_dir, out_dir):
    """The numpy reference of a written model (REFERENCES) on .npy inputs."""
    entry = {m["name"]: m for m in json.load(open(os.path.join(models_dir, "models.json")))}.get(name)
    if entry is None or not entry.get("reference"):
        print(f"no numpy reference for {name}", file=sys.stderr)
        return 2
    stem = entry["file"][:-len(".onnx")]
    with np.load(os.path.join(models_dir, stem + ".weights.npz")) as z:
        weights = {k: z[k].astype(np.float64) for k in z.files}
    feeds = {x["name"]: np.load(os.path.join(in_dir, x["name"] + ".npy")) for x in entry["inputs"]}
    outputs = REFERENCES[entry["arch"]](weights, entry["config"], feeds)
    os.makedirs(out_dir, exist_ok=True)
    for k, arr in outputs.items():
        np.save(os.path.join(out_dir, k + ".npy"), arr.astype(np.float32))
    return 0
