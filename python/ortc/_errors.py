"""The one exception the package raises for failures of the runtime or the compiler."""

# OrtcCode of ortc_c.h, by value: the C API hands back numbers, the CLI's JSON reports names.
CODE_NAMES = {
    0: "OK",
    1: "INVALID_ARGUMENT",
    2: "NO_SUCHFILE",
    3: "INVALID_GRAPH",
    4: "NOT_IMPLEMENTED",
    5: "EP_FAIL",
    6: "MODEL_REQUIRES_COMPILATION",
    7: "IO_ERROR",
    8: "OUT_OF_MEMORY",
}


def code_name(code):
    """The OrtcCode name of a C status code, or "CODE_<n>" for a value this package predates."""
    return CODE_NAMES.get(code, "CODE_%d" % code)


class OrtcError(RuntimeError):
    """A failure reported by the ortc runtime or the ortc command.

    code: the OrtcCode name ("INVALID_ARGUMENT", "NO_SUCHFILE", ...); None for a failure that
        has none: the command ended without a JSON report (killed by a signal, for one), or the
        runtime gave an output the bindings cannot read.
    message: the runtime's or the command's message.
    exit_code: the ortc command's exit status (`ortc --help` lists them; negative: killed by that
        signal); None for runtime errors.
    report: the command's parsed JSON report, fields computed before the failure included; None
        for runtime errors.
    """

    def __init__(self, code, message, exit_code=None, report=None):
        self.code = code
        self.message = message
        self.exit_code = exit_code
        self.report = report
        text = "%s: %s" % (code, message) if code else message
        if exit_code is not None:
            text += " (ortc exit code %d)" % exit_code
        super().__init__(text)
