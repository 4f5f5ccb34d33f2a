"""The Python bindings (python/ortc) end to end on a small generated model.

Compiles it with ortc.compile, runs the ctx model with ortc.Session and checks the outputs
bit for bit against `ortc run` on the same inputs and within 1e-5 against numpy; then the errors
(an unknown input, a missing model), ortc.partition, ortc.check and the session's lifecycle.

Usage: test_bindings.py ORTC_BINARY RUNTIME_LIBRARY, with python/ on PYTHONPATH.
Exit 0: passed, 1: failed, 77: numpy or onnx missing (skipped).
"""

import json
import os
import subprocess
import sys
import tempfile
import traceback

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print("SKIP: %s" % e)
    sys.exit(77)

import ortc

W = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5.5) / 4
B = np.array([0.25, -0.5, 0.125], dtype=np.float32)
SCALE = np.array(3, dtype=np.int64)


def make_model(path):
    """x[2,4] float -> MatMul W -> Add B -> Relu -> y, with two more outputs for other dtypes:
    positive = the pre-Relu sum > 0 (bool), and scaled = ids[n] * 3 (int64, a dynamic dim)."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["product"]),
        helper.make_node("Add", ["product", "b"], ["sum"]),
        helper.make_node("Relu", ["sum"], ["y"]),
        helper.make_node("Greater", ["sum", "zero"], ["positive"]),
        helper.make_node("Mul", ["ids", "scale"], ["scaled"]),
    ]
    graph = helper.make_graph(
        nodes, "bindings",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("positive", TensorProto.BOOL, [2, 3]),
         helper.make_tensor_value_info("scaled", TensorProto.INT64, ["n"])],
        [numpy_helper.from_array(W, "w"), numpy_helper.from_array(B, "b"),
         numpy_helper.from_array(np.array(0, np.float32), "zero"),
         numpy_helper.from_array(SCALE, "scale")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def passed(what):
    print("ok: %s" % what)


def expect_error(call, code, exit_code=None):
    """Runs `call`, which must raise OrtcError with `code` (and `exit_code`); returns it."""
    try:
        call()
    except ortc.OrtcError as e:
        assert e.code == code, "expected %s, got %r" % (code, e)
        assert e.exit_code == exit_code, "expected exit code %s, got %r" % (exit_code, e)
        return e
    raise AssertionError("expected OrtcError %s, nothing was raised" % code)


def check_outputs_against_cli(ortc_binary, ctx, feeds, outputs, work):
    """The session's outputs equal `ortc run`'s on the same inputs, bit for bit."""
    args = [ortc_binary, "run", ctx, "--threads", "1", "--output-dir", os.path.join(work, "cli")]
    for name, value in feeds.items():
        np.save(os.path.join(work, name + ".npy"), value)
        args += ["--input", "%s=%s" % (name, os.path.join(work, name + ".npy"))]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    for name, got in outputs.items():
        expected = np.load(os.path.join(work, "cli", name + ".npy"))
        assert got.dtype == expected.dtype and got.shape == expected.shape, \
            "%s: %s%s from the session, %s%s from ortc run" % (
                name, got.dtype, got.shape, expected.dtype, expected.shape)
        assert got.tobytes() == expected.tobytes(), \
            "%s differs from ortc run:\n%s\n%s" % (name, got, expected)
    passed("outputs equal ortc run's bit for bit (%s)" % ", ".join(outputs))


def check_outputs_against_numpy(feeds, outputs):
    """The session's outputs match numpy's computation of the model."""
    total = feeds["x"] @ W + B
    error = np.abs(outputs["y"] - np.maximum(total, 0)).max()
    assert error <= 1e-5, "y is %g from numpy's" % error
    assert np.array_equal(outputs["positive"], total > 0), outputs["positive"]
    assert np.array_equal(outputs["scaled"], feeds["ids"] * SCALE), outputs["scaled"]
    passed("outputs match numpy (y within %g)" % error)


def check_session(ctx, ortc_binary, work):
    device = json.loads(subprocess.run([ortc_binary, "check", "--print-device"], check=True,
                                       capture_output=True, text=True).stdout)
    with ortc.Session(ctx, device_json=device, threads=1) as session:
        described = [(i.name, i.dtype, i.shape) for i in session.inputs + session.outputs]
        assert described == [
            ("x", np.float32, (2, 4)), ("ids", np.int64, (None,)), ("y", np.float32, (2, 3)),
            ("positive", np.bool_, (2, 3)), ("scaled", np.int64, (None,))], described
        passed("inputs and outputs: %s" % (session.inputs + session.outputs))

        # No element of the pre-Relu sum lies within 0.01 of 0: `positive` is no rounding race.
        feeds = {"x": np.array([[1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, 2.0]], np.float32),
                 "ids": np.array([1, -4, 7, 1 << 40], np.int64)}
        outputs = session.run(feeds)
        assert list(outputs) == ["y", "positive", "scaled"], list(outputs)
        passed("run returns every output in model order")
        check_outputs_against_cli(ortc_binary, ctx, feeds, outputs, work)
        check_outputs_against_numpy(feeds, outputs)

        only = session.run({"x": feeds["x"], "ids": [2, 3]}, output_names=["scaled"])
        assert list(only) == ["scaled"] and only["scaled"].tolist() == [6, 9], only
        passed("output_names computes the outputs named; a list input takes the input's dtype")

        e = expect_error(lambda: session.run({"x": feeds["x"], "idz": feeds["ids"]}),
                         "INVALID_ARGUMENT")
        passed("an unknown input name raises OrtcError INVALID_ARGUMENT (%s)" % e.message)
        e = expect_error(lambda: session.run({"x": feeds["x"].astype(np.float64),
                                              "ids": feeds["ids"]}), "INVALID_ARGUMENT")
        passed("a wrong dtype raises OrtcError INVALID_ARGUMENT (%s)" % e.message)

    try:
        session.run(feeds)
    except ValueError:
        session.close()
        passed("a closed session refuses to run; close() twice is harmless")
    else:
        raise AssertionError("a closed session ran")

    expect_error(lambda: ortc.Session(ctx, device_json="{not json"), "INVALID_ARGUMENT")
    passed("a malformed device_json raises OrtcError INVALID_ARGUMENT")
    expect_error(lambda: ortc.Session(os.path.join(work, "absent_ctx.onnx")), "NO_SUCHFILE")
    passed("a missing ctx model raises OrtcError NO_SUCHFILE")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    ortc_binary, library = sys.argv[1], sys.argv[2]
    # The ones given, not whatever the environment or an install would find.
    os.environ["ORTC_BINARY"] = ortc_binary
    os.environ["ORTC_LIBRARY"] = library
    print("ortc package: %s" % os.path.dirname(ortc.__file__))
    # runtime_version() loads the library: before that, the package sets ortc's OpenMP spin
    # count, unless the user set one or libgomp already runs in the process.
    user_set = "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ
    with open("/proc/self/maps") as maps:
        gomp_loaded = "libgomp" in maps.read()
    print("runtime: %s" % ortc.runtime_version())
    if not user_set and not gomp_loaded:
        assert os.environ.get("GOMP_SPINCOUNT") == "1000", os.environ.get("GOMP_SPINCOUNT")
        passed("the library was loaded with GOMP_SPINCOUNT=1000")

    with tempfile.TemporaryDirectory(prefix="ortc-bindings-") as work:
        model = os.path.join(work, "model.onnx")
        make_model(model)

        out = os.path.join(work, "out")
        os.mkdir(out)  # an existing folder: the ctx model and binary go in as model_*
        report = ortc.compile(model, output=out)
        ctx = report["models"][0]["ctx_model"]["path"]
        kinds = sorted(f["kind"] for f in report["files"])
        assert report["ok"] and os.path.exists(ctx) and kinds == ["context_binary", "ctx_model"], \
            report
        passed("compile wrote %s" % ", ".join(os.path.basename(f["path"]) for f in report["files"]))

        check_session(ctx, ortc_binary, work)

        report = ortc.partition(model, input_shapes={"ids": (4,)})
        groups = [(g["backend"], g["node_count"]) for g in report["groups"]]
        assert report["ok"] and sum(n for _, n in groups) == 5, report
        passed("partition reports groups %s" % groups)

        report = ortc.check(ctx)
        verdicts = [(b["backend"], b["verdict"]) for b in report["backends"]]
        assert report["ok"] and verdicts == [("cpu", "optimal")], report
        passed("check on the ctx model: %s" % verdicts)

        e = expect_error(lambda: ortc.compile(os.path.join(work, "absent.onnx")), "NO_SUCHFILE", 5)
        assert e.report and e.report["ok"] is False, e.report
        passed("compile of a missing model raises OrtcError NO_SUCHFILE, exit code 5")
    print("PASS")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # any failure, with its traceback, is the test's failure
        traceback.print_exc()
        print("FAIL")
        sys.exit(1)
