"""The progress line a terminal shows during long work: hashing the source, NVRTC's targets k/n,
writing, and `run`'s warmup and bench runs; and none of it when stderr is not a terminal or with
--json.

stderr is given a pseudo-terminal (the display draws only on a terminal, and not when CI is
set, so CI is removed from the children's environment).
Usage: progress_display.py ORTC WORK_DIR
"""

import os
import pty
import shutil
import subprocess
import sys


def run_on_terminal(cmd):
    """Runs cmd with stderr on a pseudo-terminal; returns (exit code, what it wrote there)."""
    controller, terminal = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=terminal, env=env)
    os.close(terminal)
    seen = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        seen += chunk
    proc.communicate()
    os.close(controller)
    return proc.returncode, seen.decode(errors="replace")


def lines_drawn(text):
    """The progress lines drawn: each starts after a carriage return and an erase-line code."""
    return [part.split("\r")[0].split("\n")[0] for part in text.split("\r\033[K")[1:]]


def expect(condition, what, shown):
    if not condition:
        print("FAIL: %s\n--- terminal ---\n%r" % (what, shown))
        sys.exit(1)
    print("ok: %s" % what)


def main():
    ortc, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = os.path.join(work, "tiny.onnx")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["/usr/bin/python3", os.path.join(here, "../../examples/make_tiny_cnn.py"),
                    model], check=True, capture_output=True)

    rc, text = run_on_terminal([ortc, "compile", model, "--input-shape", "image=1x3x32x32",
                                "-o", os.path.join(work, "cpu/")])
    drawn = lines_drawn(text)
    expect(rc == 0, "compile exits 0", text)
    expect(any(l.startswith("hash tiny.onnx") for l in drawn), "hashing the source is shown", drawn)
    expect(any(l.startswith("write tiny_cpu.bin") for l in drawn), "writing the binary is shown",
           drawn)
    expect(any(l.startswith("load") for l in drawn) and any(l.startswith("emit") for l in drawn),
           "load and emit are shown", drawn)
    expect(text.endswith("\r\033[K"), "the line is erased before the summary (on stdout)", text)

    ctx = os.path.join(work, "cpu", "tiny_ctx.onnx")
    rc, text = run_on_terminal([ortc, "run", ctx, "--warmup", "2", "--bench", "5"])
    drawn = lines_drawn(text)
    expect(rc == 0, "run exits 0", text)
    expect("warmup  2 / 2 runs" in drawn, "warmup runs are counted", drawn)
    expect("bench  5 / 5 runs" in drawn, "bench runs are counted to the last", drawn)
    # The line is erased before the results are printed (stdout is a pipe here, so the erase is
    # the last thing on the terminal).
    expect(text.endswith("\r\033[K"), "the progress line is erased at the end", text)

    rc, text = run_on_terminal([ortc, "run", ctx, "--bench", "5", "--json"])
    expect(rc == 0 and "\033[K" not in text, "no progress with --json", text)
    quiet = subprocess.run([ortc, "run", ctx, "--bench", "5"], capture_output=True, text=True)
    expect(quiet.returncode == 0 and "\033[K" not in quiet.stderr,
           "no progress when stderr is not a terminal", quiet.stderr)

    # NVRTC, where the toolchain is installed: each target architecture as it starts, k/n.
    rc, text = run_on_terminal([ortc, "compile", model, "--input-shape", "image=1x3x32x32",
                                "--ep", "cuda,cpu", "-o", os.path.join(work, "cuda/")])
    drawn = lines_drawn(text)
    if rc != 0 and "NVRTC" in text and "not found" in text.lower():
        print("SKIP part: NVRTC is not installed, so no NVRTC progress to show")
    else:
        expect(rc == 0, "the CUDA compile exits 0", text)
        nvrtc = [l for l in drawn if ": NVRTC " in l]
        expect(len(nvrtc) >= 2 and nvrtc[0].endswith("(1/%d)" % len(nvrtc))
               and nvrtc[-1].endswith("(%d/%d)" % (len(nvrtc), len(nvrtc))),
               "NVRTC's targets are counted 1/n to n/n", nvrtc)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
