"""Checks an `ortc partition --json` report against the model as ONNX's Python package reads it.

Independent facts: the node count (ortc lifts Constant nodes into initializers, so it counts
the others), the set of node names, graph inputs and outputs. Structural facts: every node is
placed exactly once, and every group's inputs come from graph inputs or earlier groups.
Usage: check_partition_report.py MODEL.onnx REPORT.json
"""
import json
import sys

import onnx


def main(model_path, report_path):
    model = onnx.load(model_path)
    report = json.load(open(report_path))
    assert report["ok"] is True, report.get("error")
    nodes = [n for n in model.graph.node if not (n.op_type == "Constant" and n.domain in ("", "ai.onnx"))]
    names = [n.name for n in nodes]
    assert report["node_count"] == len(nodes), (report["node_count"], len(nodes))
    placed = [name for g in report["groups"] for name in g["nodes"]]
    assert sorted(placed) == sorted(names), "groups do not cover the nodes exactly once"
    assert report["unplaced"] == []
    assert sum(b["nodes"] for b in report["backends"]) == len(nodes)
    assert any(b["name"] == "cuda" and b["groups"] >= 1 for b in report["backends"]), "CUDA took nothing"
    # Execution order: a group reads only graph inputs and outputs of groups listed before it.
    available = {i.name for i in model.graph.input}
    for g in report["groups"]:
        for value in g["inputs"]:
            assert value["name"] in available, f"{g['name']} reads {value['name']} before it exists"
        available.update(v["name"] for v in g["outputs"])
    graph_outputs = {o.name for o in model.graph.output}
    assert graph_outputs <= available, "a graph output is produced by no group"
    summary = ", ".join(f"{b['name']} {b['groups']} group(s)/{b['nodes']} node(s)" for b in report["backends"])
    print(f"{model_path.split('/')[-1]}: {len(nodes)} nodes; {summary}; "
          f"{len(report['refused'])} refusals")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
