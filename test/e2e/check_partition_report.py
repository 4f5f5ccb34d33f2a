"""Checks an `ortc partition --json` report against the model as ONNX's Python package reads it.

Independent facts: the node count (ortc lifts Constant nodes into initializers, so it counts
the others), the set of node names, graph inputs and outputs. Structural facts: every node is
placed exactly once or folded (evaluated at compile time), and every group's inputs come from
graph inputs or earlier groups. Folded nodes must be shape computations: ops of the folding
set whose outputs are no graph output, and whose value-carrying inputs are initializers or
outputs of other folded nodes (Shape and Size read only their input's shape). Dynamic values
are values of the model, each explained by roots that are graph inputs or placed nodes, and
every root's count is the number of values naming it.
Usage: check_partition_report.py MODEL.onnx REPORT.json
"""
import json
import sys

import onnx


FOLDABLE = {"Shape", "Size", "Identity", "Add", "Sub", "Mul", "Div", "Cast", "Transpose", "Concat",
            "Gather", "Reshape", "Flatten", "Unsqueeze", "Squeeze", "Slice", "ConstantOfShape",
            "Equal", "Less", "Greater", "Where", "Expand", "Range", "Floor", "Ceil", "Trilu"}


def check_folded(model, folded):
    constants = {t.name for t in model.graph.initializer}
    constants |= {o for n in model.graph.node if n.op_type == "Constant" for o in n.output}
    graph_outputs = {o.name for o in model.graph.output}
    by_name = {n.name: n for n in model.graph.node}
    for n in model.graph.node:  # ONNX stores nodes in topological order
        if n.name not in folded:
            continue
        assert n.op_type in FOLDABLE and n.domain in ("", "ai.onnx"), f"folded {n.op_type} {n.name}"
        assert not set(n.output) & graph_outputs, f"folded {n.name} writes a graph output"
        if n.op_type not in ("Shape", "Size"):
            for i in n.input:
                assert i == "" or i in constants, f"folded {n.name} reads non-constant {i}"
        constants.update(n.output)
    assert folded <= set(by_name), "folded names that are not nodes"


def check_dynamic(model, report, placed):
    values = {i.name for i in model.graph.input} | {o for n in model.graph.node for o in n.output}
    roots = report["dynamic_roots"]
    counts = [0] * len(roots)
    for v in report["dynamic_values"]:
        assert v["name"] in values, f"dynamic value {v['name']} is not a value of the model"
        assert v["roots"] and v["reason"], f"dynamic value {v['name']} has no root"
        for r in v["roots"]:
            counts[r] += 1
    inputs = {i.name for i in model.graph.input}
    for root, count in zip(roots, counts):
        assert root["value_count"] == count, (root, count)
        if root["kind"] == "graph_input":
            assert root["name"] in inputs and root["fix"].startswith("--input-shape "), root
        else:
            assert root["kind"] == "node" and root["name"] in placed, root


def main(model_path, report_path):
    model = onnx.load(model_path)
    report = json.load(open(report_path))
    assert report["ok"] is True, report.get("error")
    nodes = [n for n in model.graph.node if not (n.op_type == "Constant" and n.domain in ("", "ai.onnx"))]
    names = [n.name for n in nodes]
    folded = [f["node"] for f in report["folded"]]
    assert report["node_count"] + len(folded) == len(nodes), (report["node_count"], len(folded), len(nodes))
    placed = [name for g in report["groups"] for name in g["nodes"]]
    assert sorted(placed + folded) == sorted(names), "groups and folding do not cover the nodes exactly once"
    assert report["unplaced"] == []
    assert sum(b["node_count"] for b in report["backends"]) == report["node_count"]
    check_folded(model, set(folded))
    check_dynamic(model, report, set(placed))
    assert any(b["backend"] == "cuda" and b["group_count"] >= 1 for b in report["backends"]), "CUDA took nothing"
    # Execution order: a group reads only graph inputs and outputs of groups listed before it.
    available = {i.name for i in model.graph.input}
    for g in report["groups"]:
        for value in g["inputs"]:
            assert value["name"] in available, f"{g['name']} reads {value['name']} before it exists"
        available.update(v["name"] for v in g["outputs"])
    graph_outputs = {o.name for o in model.graph.output}
    assert graph_outputs <= available, "a graph output is produced by no group"
    summary = ", ".join(f"{b['backend']} {b['group_count']} group(s)/{b['node_count']} node(s)"
                        for b in report["backends"])
    print(f"{model_path.split('/')[-1]}: {len(nodes)} nodes, {len(folded)} folded; {summary}; "
          f"{sum(r['node_count'] for r in report['refusals'])} refusals; {len(report['dynamic_values'])} dynamic values")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
