"""Every command's --json report against schemas/cli_reports.schema.json, the hand-written
contract of schemas/cli_reports.md: each command of `ortc` and `ortc-run` on success and on
failures (a missing file, a flag that does not exist, a wrong input name...), plus what the
schema cannot say (phases adding up to the total, paths as given and resolved, milliseconds with
three decimals in the text output). The validator refuses unknown fields in the stable records,
so a silently renamed field fails here.

Usage: cli_json_schema.py ORTC ORTC_RUN SCHEMA WORK_DIR [STANDIN_DIR CUDA_PLUGIN_DIR]
  STANDIN_DIR holds the stand-in CUDA libraries (test/backends/cuda/standin) and CUDA_PLUGIN_DIR
  the CUDA plugin: with both, `tune` succeeds on the stand-in and its report is checked too.
"""
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from json_schema_subset import validate  # noqa: E402

try:
    import numpy as np
    import onnx  # noqa: F401  (the model generators need it)
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

ORTC, ORTC_RUN, SCHEMA_PATH, WORK = (os.path.abspath(a) for a in sys.argv[1:5])
STANDIN = [os.path.abspath(a) for a in sys.argv[5:7]] if len(sys.argv) >= 7 else None
if STANDIN and not os.path.exists(os.path.join(STANDIN[0], "libcuda.so.1")):
    STANDIN = None  # the build made no stand-in libraries
with open(SCHEMA_PATH) as f:
    SCHEMA = json.load(f)
checked = []


def report(tool, args, definition, ok, exit_code=None, env=None):
    """Runs `tool args --json` in WORK (with env's variables added), checks the exit status and
    validates the one JSON object on stdout against the definition; returns it."""
    cmd = [tool] + args + ["--json"]
    r = subprocess.run(cmd, cwd=WORK, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, **(env or {})))
    what = f"{os.path.basename(tool)} {' '.join(args)}"
    assert r.stdout.strip(), f"{what}: no report on stdout (exit {r.returncode}): {r.stderr}"
    try:
        j = json.loads(r.stdout)
    except json.JSONDecodeError as e:
        raise AssertionError(f"{what}: stdout is not one JSON object ({e}): {r.stdout[:400]}")
    assert j.get("ok") is ok, f"{what}: ok is {j.get('ok')}, expected {ok}: {r.stdout[:600]}"
    if ok:
        assert r.returncode == 0, f"{what}: exit {r.returncode}"
    else:
        assert r.returncode != 0, f"{what}: failed with exit 0"
        if exit_code is not None:
            assert r.returncode == exit_code, f"{what}: exit {r.returncode}, expected {exit_code}"
    problems = validate(SCHEMA, definition, j)
    assert not problems, f"{what}: report breaks {definition}:\n  " + "\n  ".join(problems)
    checked.append((what, definition, ok))
    return j


def text(tool, args):
    r = subprocess.run([tool] + args, cwd=WORK, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(args)}: exit {r.returncode}: {r.stderr}"
    return r.stdout


def check_file(record, must_exist=True):
    """A file record: the path as given (relative stays relative) and its absolute form."""
    assert set(record) >= {"path", "absolute_path"}, record
    assert os.path.isabs(record["absolute_path"]), record
    if not os.path.isabs(record["path"]):
        assert os.path.realpath(os.path.join(WORK, record["path"])) == record["absolute_path"], record
    if must_exist:
        assert os.path.exists(record["absolute_path"]), record


def check_validator():
    """The validator itself catches a renamed, a missing and an unknown field."""
    good = {"schema_version": 3, "ok": True, "model": {"path": "m.onnx", "absolute_path": "/m.onnx"},
            "load_ms": 1.0, "first_run_ms": 2.0, "graphs": [], "inputs": [], "outputs": []}
    assert validate(SCHEMA, "run_report", good) == [], validate(SCHEMA, "run_report", good)
    renamed = dict(good)
    renamed["load_s"] = renamed.pop("load_ms")
    assert validate(SCHEMA, "run_report", renamed), "a renamed field passed"
    missing = dict(good, model={"path": "m.onnx"})
    assert validate(SCHEMA, "run_report", missing), "a file record without absolute_path passed"
    wrong_version = dict(good, schema_version=2)
    assert validate(SCHEMA, "run_report", wrong_version), "schema_version 2 passed"
    failure = {"schema_version": 3, "ok": False}
    assert validate(SCHEMA, "run_report", failure), "a failure without error passed"


def make_models():
    os.makedirs(WORK, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "make_tiny_cnn.py"),
                    os.path.join(WORK, "tiny.onnx")], check=True)
    subprocess.run([sys.executable, os.path.join(HERE, "make_kv_decoder.py"), os.path.join(WORK, "kv")],
                   check=True, capture_output=True)
    np.save(os.path.join(WORK, "image.npy"), np.zeros((1, 3, 32, 32), np.float32))
    with open(os.path.join(WORK, "junk.bin"), "wb") as f:
        f.write(b"not a context binary at all" * 10)


def check_compile():
    args = ["compile", "tiny.onnx", "--input-shape", "image=1x3x32x32", "-o", "out/"]
    j = report(ORTC, args, "compile_report", True)
    for f in j["files"]:
        check_file(f)
        assert f["path"].startswith("out/"), f  # as written, relative like -o
    for m in j["models"]:
        check_file(m["source"])
        check_file(m["ctx_model"])
    assert [b["backend"] for b in j["backends"]] == ["cpu"], j["backends"]
    phases = j["phases_ms"]
    named = sum(v for k, v in phases.items() if k != "total")
    assert abs(named - phases["total"]) <= 0.05 * phases["total"] + 0.01, phases
    assert j["weights"]["count"] >= j["weights"]["unique_count"] > 0, j["weights"]
    up = report(ORTC, args + ["--if-changed"], "compile_report", True)
    assert up["up_to_date"], up
    report(ORTC, ["compile", "tiny.onnx", "--input-shape", "image=1x3x32x32", "--bundle", "bundle"],
           "compile_report", True)
    report(ORTC, ["compile", "missing.onnx"], "compile_report", False)
    report(ORTC, ["compile", "tiny.onnx", "--no-such-flag"], "compile_report", False, 2)
    report(ORTC, ["compile", "tiny.onnx", "--input-shape", "nosuch=1x3"], "compile_report", False)
    report(ORTC, ["compile"], "compile_report", False, 2)  # the model is required
    out = text(ORTC, ["compile", "tiny.onnx", "--input-shape", "image=1x3x32x32", "-o", "text/"])
    assert re.search(r"time: total \d+\.\d{3} ms \(prepare \d+\.\d{3}", out), out


def check_partition():
    j = report(ORTC, ["partition", "tiny.onnx", "--ep", "cuda,cpu"], "partition_report", True)
    check_file(j["model"])
    assert [b["backend"] for b in j["backends"]] == ["cuda", "cpu"], j["backends"]
    # Without --input-shape CUDA refuses the dynamic batch: refusal records, one per reason.
    cuda = [r for r in j["refusals"] if r["backend"] == "cuda"]
    assert cuda and all(r["node_count"] == len(r["nodes"]) > 0 for r in cuda), j["refusals"]
    report(ORTC, ["partition", "missing.onnx"], "partition_report", False)
    report(ORTC, ["partition", "tiny.onnx", "--ep", "nosuch"], "partition_report", False, 2)
    bad = report(ORTC, ["partition", "tiny.onnx", "--input-shape", "image=1x3"], "partition_report", False)
    check_file(bad["model"], must_exist=True)  # the model is named on failure too


def check_check(tool):
    j = report(tool, ["check", "out/tiny_ctx.onnx"], "check_report", True)
    check_file(j["model"])
    for b in j["backends"]:
        check_file(b["binary"])
        assert b["binary"]["path"].startswith("out/"), b
    report(tool, ["check", "bundle"], "check_report", True)
    report(tool, ["check", "out/tiny_ctx.onnx", "--source", "tiny.onnx"], "check_report", True)
    missing = report(tool, ["check", "missing_ctx.onnx"], "check_report", False)
    assert missing["backends"] == [], missing  # kept on failure: nothing was checked
    report(tool, ["check", "out/tiny_ctx.onnx", "--device", "{not json"], "check_report", False, 2)
    report(tool, ["check", "out/tiny_ctx.onnx", "--no-such-flag"], "check_report", False, 2)


def check_inspect(tool):
    j = report(tool, ["inspect", "out/tiny_ctx.onnx"], "inspect_report", True)
    check_file(j)
    for b in j["binaries"]:
        check_file(b)
        assert b["path"].startswith("out/"), b
    b = report(tool, ["inspect", "out/tiny_cpu.bin"], "inspect_report", True)
    assert b["weights"]["count"] >= b["weights"]["unique_count"] > 0, b["weights"]
    report(tool, ["inspect", "missing.bin"], "inspect_report", False)
    report(tool, ["inspect", "junk.bin"], "inspect_report", False)
    report(tool, ["inspect"], "inspect_report", False, 2)


def check_run(tool):
    j = report(tool, ["run", "out/tiny_ctx.onnx", "--bench", "3", "--output-dir", "run_out"],
               "run_report", True)
    check_file(j["model"])
    assert [(i["name"], i["source"], i["shape"]) for i in j["inputs"]] == [("image", "random", [1, 3, 32, 32])]
    for o in j["outputs"]:
        check_file(o["file"])
    report(tool, ["run", "out/tiny_ctx.onnx", "--input", "image=image.npy"], "run_report", True)
    report(tool, ["run", "missing_ctx.onnx"], "run_report", False)
    report(tool, ["run", "out/tiny_ctx.onnx", "--input", "nosuch=image.npy"], "run_report", False)
    report(tool, ["run", "out/tiny_ctx.onnx", "--bench", "-1"], "run_report", False, 2)
    out = text(tool, ["run", "out/tiny_ctx.onnx", "--bench", "3"])
    for name in ("load", "first run", "p50", "p90", "p99"):
        assert re.search(rf"{name} \d+\.\d{{3}} ms", out), f"'{name}' not in ms with 3 decimals: {out}"


def check_generate(tool):
    prefill, decode = "kv/kv_prefill.onnx", "kv/kv_decode.onnx"
    j = report(tool, ["generate", prefill, decode, "--prompt-ids", "1,2,3", "--max-new-tokens", "4"],
               "generate_report", True)
    check_file(j["prefill_model"])
    report(tool, ["generate", "missing.onnx", decode, "--prompt-ids", "1"], "generate_report", False)
    report(tool, ["generate", prefill, decode, "--prompt-ids", "x"], "generate_report", False, 2)
    report(tool, ["generate", prefill], "generate_report", False, 2)


def check_verify():
    j = report(ORTC, ["verify", "tiny.onnx", "--input-shape", "image=1x3x32x32"], "verify_report", True)
    check_file(j["model"])
    assert [i["name"] for i in j["inputs"]] == ["image"], j["inputs"]
    report(ORTC, ["verify", "tiny.onnx", "--input-shape", "image=1x3x32x32", "--input",
                  "image=image.npy"], "verify_report", True)
    report(ORTC, ["verify", "missing.onnx"], "verify_report", False)
    report(ORTC, ["verify", "tiny.onnx", "--input-shape", "image=1x3x32x32", "--input",
                  "nosuch=image.npy"], "verify_report", False)
    report(ORTC, ["verify", "tiny.onnx", "--rtol"], "verify_report", False, 2)


def save_depthwise_model(path):
    """x[1,8,16,16] -> depthwise 3x3 Conv -> y: a grouped convolution, which tune measures."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.full((8, 1, 3, 3), 0.1, np.float32), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=8, pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "dw", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [1, 8, 16, 16])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [1, 8, 16, 16])], [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def check_tune():
    # Success needs CUDA: the stand-in libraries when given; failures need nothing.
    if STANDIN:
        save_depthwise_model(os.path.join(WORK, "dw.onnx"))
        env = {"LD_LIBRARY_PATH": STANDIN[0], "ORTC_BACKEND_PATH": STANDIN[1],
               "ORTC_STANDIN_WORK_US": "cuLaunchKernel=5,cudnn=20"}
        j = report(ORTC, ["tune", "dw.onnx", "-o", "tuned.json", "--runs", "2", "--warmup", "1"],
                   "tune_report", True, env=env)
        check_file(j["cache"])
        assert j["choices"], j
    else:
        print("SKIP part: no stand-in CUDA libraries given, so no tune success report")
    report(ORTC, ["tune", "missing.onnx", "-o", "t.json"], "tune_report", False)
    report(ORTC, ["tune", "tiny.onnx"], "tune_report", False, 2)  # -o is required


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    check_validator()
    make_models()
    check_compile()
    check_partition()
    check_verify()
    check_tune()
    for tool in (ORTC, ORTC_RUN):
        check_check(tool)
        check_inspect(tool)
        check_run(tool)
        check_generate(tool)
    # A command that does not exist, and no command at all, still answer with a report.
    report(ORTC, ["nosuch"], "run_report", False, 2)
    report(ORTC_RUN, ["compile", "tiny.onnx"], "compile_report", False, 2)
    print(f"{len(checked)} reports valid against {os.path.basename(SCHEMA_PATH)}:")
    for what, definition, ok in checked:
        print(f"  {'ok  ' if ok else 'fail'} {definition:16} {what}")


if __name__ == "__main__":
    main()
