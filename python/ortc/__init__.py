"""Python bindings of ortc, the ONNX ahead-of-time compiler: compile models with the ortc
command, run the compiled models with the ortc runtime on numpy arrays.

    import numpy as np
    import ortc

    report = ortc.compile("model.onnx", output="out/")      # `ortc compile --json`, as a dict
    with ortc.Session(report["models"][0]["ctx_model"]["path"]) as session:
        print(session.inputs, session.outputs)               # names, numpy dtypes, shapes
        y = session.run({"x": np.ones((1, 4), np.float32)})  # {output name: ndarray}

Session loads the runtime's C API (ortc_c.h) with ctypes: no compiled extension, so one copy
serves every Python 3 version. compile(), partition() and check() run the `ortc` command with
--json and return its report (schemas/cli_reports.md). Failures raise OrtcError, whose .code is
the OrtcCode name ("INVALID_ARGUMENT", ...); the command's also carry .exit_code and .report.

Where things are found:
  runtime library: $ORTC_LIBRARY (a path; nothing else is tried when it is set), else
      libortc_runtime.so.0 in the lib folder this package is installed under (`cmake --install`
      puts the package in <prefix>/<libdir>/python3/site-packages/ortc), else the system loader
      (LD_LIBRARY_PATH, ldconfig). It is loaded on the first Session, so compile() works without.
  ortc command: the ortc_binary argument, else $ORTC_BINARY, else <prefix>/bin/ortc of that
      install, else `ortc` on PATH.
"""

from ._cli import check, compile, partition
from ._errors import OrtcError
from ._library import library as _load_library
from ._session import Session, TensorInfo

__all__ = ["OrtcError", "Session", "TensorInfo", "check", "compile", "partition",
           "runtime_version"]


def runtime_version():
    """The loaded runtime library's versions: {"runtime": "0.2.0", "c_api": 2, "format": "1.0"}."""
    lib = _load_library()
    return {"runtime": lib.ortc_version().decode(), "c_api": lib.ortc_api_version(),
            "format": lib.ortc_format_version().decode()}
