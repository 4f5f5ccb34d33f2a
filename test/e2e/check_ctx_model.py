"""Checks an EPContext model as ONNX itself sees it: the full checker (with shape inference),
every EPContext node's attribute types as ONNX Runtime's EPContext schema declares them, and
no initializer pointing at a data file outside the ctx model's folder.
Usage: check_ctx_model.py CTX.onnx
"""
import os
import sys

import onnx
from onnx import AttributeProto

INT_ATTRS = {"main_context", "embed_mode", "max_size"}
STRING_ATTRS = {"ep_cache_context", "ep_sdk_version", "onnx_model_filename", "hardware_architecture",
                "partition_name", "source", "notes"}


def main(path):
    model = onnx.load(path, load_external_data=False)
    onnx.checker.check_model(path, full_check=True)
    assert any(o.domain == "com.microsoft" and o.version >= 1 for o in model.opset_import), "no com.microsoft import"
    ep_nodes = [n for n in model.graph.node if n.op_type == "EPContext"]
    assert ep_nodes, "no EPContext node"
    for n in ep_nodes:
        assert n.domain == "com.microsoft", n.domain
        for a in n.attribute:
            assert a.name in INT_ATTRS | STRING_ATTRS, f"unknown attribute {a.name}"
            want = AttributeProto.INT if a.name in INT_ATTRS else AttributeProto.STRING
            assert a.type == want, f"{n.name}.{a.name} has type {a.type}"
    folder = os.path.dirname(os.path.abspath(path))
    for t in model.graph.initializer:
        for kv in t.external_data:
            if kv.key == "location":
                target = os.path.realpath(os.path.join(folder, kv.value))
                assert target.startswith(folder + os.sep), f"{t.name} points outside: {kv.value}"
    print(f"{os.path.basename(path)}: onnx full check ok, {len(ep_nodes)} EPContext node(s)")


if __name__ == "__main__":
    main(sys.argv[1])
