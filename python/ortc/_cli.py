"""ortc.compile, ortc.partition and ortc.check: the ortc command, run with --json, as dicts.

The compiler is only reachable as a command (the runtime library holds no compile-side code),
so these functions run it and parse the report it prints (schemas/cli_reports.md).
"""

import json
import os
import shutil
import subprocess

from ._errors import OrtcError
from ._layout import installed_prefix


def find_binary(ortc_binary=None):
    """The ortc command to run: `ortc_binary`, else $ORTC_BINARY, else <prefix>/bin/ortc of an
    installed copy of this package, else `ortc` on PATH."""
    if ortc_binary:
        return os.fspath(ortc_binary)
    if os.environ.get("ORTC_BINARY"):
        return os.environ["ORTC_BINARY"]
    prefix = installed_prefix()
    if prefix is not None:
        candidate = os.path.join(prefix, "bin", "ortc")
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("ortc")
    if found:
        return found
    raise OrtcError("NO_SUCHFILE", "cannot find the ortc command (not installed beside this "
                    "package, not on PATH): set ORTC_BINARY or pass ortc_binary")


def _shape_args(input_shapes):
    """--input-shape arguments from {name: (1, 3, 224, 224)}."""
    args = []
    for name, dims in (input_shapes or {}).items():
        if any(not isinstance(d, int) or isinstance(d, bool) or d < 0 for d in dims):
            raise ValueError("input_shapes[%r] = %r: every dimension must be an int >= 0"
                             % (name, dims))
        args += ["--input-shape", "%s=%s" % (name, "x".join(str(d) for d in dims))]
    return args


def _ep_arg(ep):
    """--ep's value from "cuda,cpu" or ["cuda", "cpu"]."""
    return ep if isinstance(ep, str) else ",".join(ep)


def _run(ortc_binary, command, options, paths):
    """Runs `ortc <command> <options> --json -- <paths>` and returns its parsed report.

    "--" keeps a path that starts with "-" from reading as an option. Raises OrtcError with the
    report's error, the exit code and the report when the command fails.
    """
    binary = find_binary(ortc_binary)
    argv = [binary, command] + list(options) + ["--json", "--"] + [os.fspath(p) for p in paths]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    except OSError as e:
        raise OrtcError("NO_SUCHFILE", "cannot run %s: %s" % (binary, e)) from None
    try:
        report = json.loads(done.stdout)
    except ValueError:
        report = None
    if not isinstance(report, dict):
        # No report: killed by a signal (a negative exit code) or crashed; stderr says what it can.
        detail = done.stderr.strip() or "no output"
        raise OrtcError(None, "`ortc %s` printed no JSON report: %s" % (command, detail),
                        exit_code=done.returncode)
    if done.returncode != 0 or not report.get("ok", False):
        error = report.get("error") or {}
        raise OrtcError(error.get("code"), error.get("message", done.stderr.strip()),
                        exit_code=done.returncode, report=report)
    return report


def compile(models, output=None, ep="cpu", share_weights=False, input_shapes=None,
            precision=None, extra_args=None, ortc_binary=None):
    """Compiles ONNX models with `ortc compile` and returns its JSON report as a dict.

    models: a model path, or several (a weight-sharing group with share_weights=True).
    output: the ctx model's path, or an existing folder; None: <model>_ctx.onnx beside the model.
    ep: backends in priority order, "cuda,cpu" or ["cuda", "cpu"].
    input_shapes: {input name: (dims...)} fixing dynamic input shapes.
    precision: "fp32", "tf32", "fp16" or "bf16"; None: the command's default (fp32).
    extra_args: further options of `ortc compile --help`, e.g. ["--embed-mode", "1"].
    The report's files[] lists what was written; models[].ctx_model is what ortc.Session opens.
    Raises OrtcError (with .exit_code and .report) when the compile fails.
    """
    paths = [models] if isinstance(models, (str, bytes, os.PathLike)) else list(models)
    options = ["--ep", _ep_arg(ep)] + _shape_args(input_shapes)
    if output is not None:
        options += ["--output", os.fspath(output)]
    if share_weights:
        options.append("--share-weights")
    if precision is not None:
        options += ["--precision", precision]
    return _run(ortc_binary, "compile", options + list(extra_args or []), paths)


def partition(model, ep="cpu", input_shapes=None, extra_args=None, ortc_binary=None):
    """How `ortc partition` splits a model across backends: its JSON report as a dict
    (schemas/partition_report.md). Arguments as for compile."""
    options = ["--ep", _ep_arg(ep)] + _shape_args(input_shapes)
    return _run(ortc_binary, "partition", options + list(extra_args or []), [model])


def check(path, device=None, source=None, require_optimal=False, extra_args=None,
          ortc_binary=None):
    """The runtime's version gate on a ctx model or a bundle folder (`ortc check`), without
    running it: the JSON report as a dict, with each backend's verdict.

    device: the target device instead of this machine: a JSON file's path, JSON text, or a dict
        (as `ortc check --print-device` writes it).
    source: the source model, to also check the bundle is not stale.
    require_optimal: fail when a verdict is "prefer recompilation".
    Raises OrtcError (with .exit_code and .report) when the gate refuses or the files are bad.
    """
    options = []
    if device is not None:
        # --device reads a file's path or the JSON itself.
        text = json.dumps(device) if isinstance(device, dict) else os.fspath(device)
        options += ["--device", text]
    if source is not None:
        options += ["--source", os.fspath(source)]
    if require_optimal:
        options.append("--require-optimal")
    return _run(ortc_binary, "check", options + list(extra_args or []), [path])
