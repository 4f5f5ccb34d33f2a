#!/usr/bin/env python3
"""ortc's output files under races, signals, file-size limits, full disks and unwritable standard
output, and output names that map to one file name: the failure cases of an independent
reliability probe, repeated so that they stay fixed.

1. Compiles racing into one folder, with -o and with --bundle: different models, another model
   of the same file name, the same model three times (a retried CI job, one with --if-changed).
   Each compile exits 0 or fails with a message; the folder then holds only pairs that
   `ortc check` accepts and that compute one of the sources' outputs.
2. SIGINT, SIGTERM and SIGHUP during a compile, also between its two renames (binary, then ctx
   model) and over an older pair at the same names, leave no temporary file and no half pair.
3. SIGKILL during a compile may leave a temporary file (and, between the renames, where no
   handler runs, the whole binary alone); the next compile (also one with --if-changed that
   finds the outputs up to date) removes the temporary file.
4. SIGINT, SIGTERM and SIGHUP during `run --output-dir` leave no temporary file; SIGKILL leaves
   no partial .npy under a final name.
5. A file-size limit (ulimit -f, SIGXFSZ) is exit 5 with a message, not death by the signal:
   nothing half-written, an older pair at the same names left as it was.
6. A report that cannot be written to standard output (/dev/full, a closed stdout) is exit 5.
7. ENOSPC on a 256 KiB tmpfs (needs root; otherwise skipped, and printed as a skip) at every
   amount of free space around the output sizes: exit 0 with whole files, or 5 with none.
8. Outputs named a/b and a_b, a\\b and a_b_2, x:0 and x_0, with NUL bytes, or too long for a
   file name: distinct files, each holding its own output's values, never one overwriting
   another; the --json report names each output's file.

The signals land at the moment a temporary file appears and, in later rounds, at a seeded random
moment up to when the command ends, so that they also hit the final renames.
Usage: reliability_probe.py ORTC_BINARY WORK_DIR [--trials N] [--case TITLE]...
N rounds of cases 1-4 (default 4: about a minute on two cores; the probe ran 200).
Exit 0 when every check passed, 1 when one failed (a case stops at its first failed check, the
other cases still run). It has no reason to skip as a whole, so it never exits 77.
"""
import argparse
import contextlib
import glob
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import TensorProto, helper, numpy_helper

ORTC = ""  # set by main()
TEMP_MARK = ".ortc-tmp-"  # in every temporary file ortc writes before renaming it
EXIT_IO = 5
ERROR_EXITS = {2, 3, 4, 5, 6, 7, 8}  # the codes `ortc --help` documents for failures
SLOW_SIDE, SLOW_COUNT = 2048, 6  # 6 zero weights of ~16 MiB: a compile of about a second
# From the first temporary file to the end of the slow compile, and of the slow run (two cores).
COMPILE_WINDOW_S, RUN_WINDOW_S = 0.45, 0.35
AT_RENAME = "at the first rename"  # a signal's moment: between a compile's two renames


class CheckFailed(Exception):
    """A check failed; the message says what was expected and what the command did."""


class Skipped(Exception):
    """A case cannot run here; the message says why."""


def require(condition, message):
    if not condition:
        raise CheckFailed(message)


def described(r):
    err, out = (r.stderr or "").strip(), (r.stdout or "").strip()
    return (f"`{shlex.join(map(str, r.args))}` exited {r.returncode}; stderr: {err[-800:]!r}" +
            (f"; stdout: {out[-800:]!r}" if out else ""))


def error_said(r):
    """The failed command said why: on stderr, or with --json in the report's error."""
    if "error" in r.stderr:
        return True
    try:
        return bool(json.loads(r.stdout)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return False


def ortc(*args, stdout=subprocess.PIPE):
    return subprocess.run([ORTC, *map(str, args)], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, errors="replace", timeout=300)


def ortc_ok(*args):
    r = ortc(*args)
    require(r.returncode == 0, described(r))
    return r


@contextlib.contextmanager
def started(command, **kwargs):
    """Popen that never outlives the block: a check failing mid-way kills the child."""
    p = subprocess.Popen(command, **kwargs)
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def passed(folder):
    """A trial that passed leaves nothing behind: 200 rounds of 100 MiB compiles and outputs
    would fill the disk. A failed check raises first, so a failed trial's folder stays."""
    shutil.rmtree(folder, ignore_errors=True)


def temp_files(folder):
    return sorted(n for n in os.listdir(folder) if TEMP_MARK in n) if os.path.isdir(folder) else []


def final_outputs(folder):
    """The files a compile publishes (ctx models, binaries, a bundle's manifest)."""
    if not os.path.isdir(folder):
        return []
    return sorted(n for n in os.listdir(folder) if TEMP_MARK not in n and
                  (n.endswith("_ctx.onnx") or n.endswith(".bin") or n == "manifest.json"))


def file_digests(folder):
    """The contents of the files a compile publishes, by name."""
    return {n: open(os.path.join(folder, n), "rb").read() for n in final_outputs(folder)}


def killed_by(returncode, sig):
    return returncode in (-sig, 128 + sig)


# ---- models ----

def tensor_info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save_model(path, nodes, inputs, outputs, initializers=()):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def save_matmul_relu(path, w):
    """y = Relu(x[1, k] @ w)."""
    return save_model(path, [helper.make_node("MatMul", ["x", "w"], ["h"]),
                             helper.make_node("Relu", ["h"], ["y"])],
                      [tensor_info("x", [1, w.shape[0]])], [tensor_info("y", [1, w.shape[1]])],
                      [numpy_helper.from_array(w, "w")])


def save_small_and_big(path, w, rows):
    """Two outputs, the small one first: `small` = ReduceMean(x) [rows, 1], `big` = x @ w."""
    nodes = [helper.make_node("ReduceMean", ["x"], ["small"], axes=[1]),
             helper.make_node("MatMul", ["x", "w"], ["big"])]
    return save_model(path, nodes, [tensor_info("x", [rows, w.shape[0]])],
                      [tensor_info("small", [rows, 1]), tensor_info("big", [rows, w.shape[1]])],
                      [numpy_helper.from_array(w, "w")])


def save_slow(folder):
    """A chain of MatMuls over ~100 MiB of zero weights in a sparse external file: slow enough to
    be caught mid-write. Distinct shapes keep the all-zero weights from deduplicating."""
    per = SLOW_SIDE * SLOW_SIDE * 4
    with open(os.path.join(folder, "slow.data"), "wb") as f:
        f.truncate(per * SLOW_COUNT)
    nodes, weights, prev = [], [], "x"
    for i in range(SLOW_COUNT):
        rows, cols = SLOW_SIDE - i, SLOW_SIDE - 1 - i
        w = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[rows, cols],
                        data_location=TensorProto.EXTERNAL)
        for key, value in (("location", "slow.data"), ("offset", i * per),
                           ("length", rows * cols * 4)):
            w.external_data.add(key=key, value=str(value))
        weights.append(w)
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"h{i}"]))
        prev = f"h{i}"
    return save_model(os.path.join(folder, "slow.onnx"), nodes, [tensor_info("x", [1, SLOW_SIDE])],
                      [tensor_info(prev, [1, SLOW_SIDE - SLOW_COUNT])], weights)


def save_expand(path, n):
    """Two outputs of n floats each (x broadcast): `run --output-dir` writes for a while."""
    shape = numpy_helper.from_array(np.array([n], np.int64), "n")
    return save_model(path, [helper.make_node("Expand", ["x", "n"], [o]) for o in ("y", "z")],
                      [tensor_info("x", [1])], [tensor_info("y", [n]), tensor_info("z", [n])],
                      [shape])


def save_elementwise(path, outputs):
    """Output `name` = x * factor for each (name, factor): distinct factors, distinct values."""
    nodes = [helper.make_node("Mul", ["x", f"k{i}"], [name]) for i, (name, _) in enumerate(outputs)]
    factors = [numpy_helper.from_array(np.array(f, np.float32), f"k{i}")
               for i, (_, f) in enumerate(outputs)]
    return save_model(path, nodes, [tensor_info("x", [2, 3])],
                      [tensor_info(name, [2, 3]) for name, _ in outputs], factors)


def relu(v):
    return np.maximum(v, 0)


# ---- 1. concurrent compiles ----

def race(commands):
    """Starts every command at once; returns (command, exit code, stderr) of each."""
    with contextlib.ExitStack() as stack:
        procs = [stack.enter_context(started(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                             text=True, errors="replace")) for c in commands]
        errs = [p.communicate(timeout=300)[1] for p in procs]
        return [(c, p.returncode, e) for c, p, e in zip(commands, procs, errs)]


def check_race(out, results, expected, x_npy, bundle):
    """expected: ctx model name -> the outputs of the sources compiled to it in this race."""
    for command, rc, err in results:
        require(rc == 0 or (rc in ERROR_EXITS and "error" in err),
                f"`{shlex.join(command)}` exited {rc} (racing into {out}) without a clear "
                f"error; stderr: {err[-800:]!r}")
    require(not temp_files(out), f"temporary files left in {out}: {temp_files(out)}")
    published = {os.path.basename(c[2])[:-5] + "_ctx.onnx" for c, rc, _ in results if rc == 0}
    present = {os.path.basename(p) for p in glob.glob(os.path.join(out, "*_ctx.onnx"))}
    require(published <= present <= set(expected),
            f"{out} holds {sorted(present)}; the compiles that exited 0 wrote {sorted(published)}")
    if bundle:
        ortc_ok("check", out)
    for name in sorted(present):
        ctx = os.path.join(out, name)
        ortc_ok("check", ctx)
        got = fresh_dir(out + "-y")
        ortc_ok("run", ctx, "--input", f"x={x_npy}", "--output-dir", got)
        y = np.load(os.path.join(got, "y.npy"))
        require(any(np.allclose(y, e, rtol=1e-4, atol=1e-4) for e in expected[name]),
                f"{ctx} computes none of its sources' outputs: a ctx model and a binary of "
                "different compiles")
    return len(present)


def case_concurrent_compiles(work, trials):
    models = fresh_dir(os.path.join(work, "concurrent-models"))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 64)).astype(np.float32)
    x_npy = os.path.join(models, "x.npy")
    np.save(x_npy, x)
    outputs = {}
    # other/a.onnx has a.onnx's output names and other weights: their pairs could mix.
    for rel in ("a.onnx", "b.onnx", "other/a.onnx"):
        w = rng.standard_normal((64, 64)).astype(np.float32)
        outputs[save_matmul_relu(os.path.join(models, rel), w)] = relu(x @ w)
    a, b, other_a = outputs
    scenarios = {"different models": [[a], [b], [other_a]],
                 "one model thrice": [[a], [a], [a, "--if-changed"]]}
    compiles = failed = checked = 0
    for trial in range(trials):
        for scenario, jobs in scenarios.items():
            for bundle in (False, True):
                out = os.path.join(work, "concurrent", f"{trial}-{scenario.replace(' ', '-')}"
                                                       f"{'-bundle' if bundle else ''}")
                target = ["--bundle", out] if bundle else ["-o", out + "/"]
                commands = [[ORTC, "compile", j[0], *target, "-q", *j[1:]] for j in jobs]
                expected = {}
                for j in jobs:
                    name = os.path.basename(j[0])[:-5] + "_ctx.onnx"
                    expected.setdefault(name, []).append(outputs[j[0]])
                os.makedirs(os.path.dirname(out), exist_ok=True)
                results = race(commands)
                checked += check_race(out, results, expected, x_npy, bundle)
                passed(out)
                compiles += len(results)
                failed += sum(rc != 0 for _, rc, _ in results)
    return (f"{compiles} compiles in {trials} x 4 races ({failed} failed with a message), "
            f"{checked} ctx models checked and run")


# ---- 2-4. signals ----

def wait_for(p, command, condition, what):
    deadline = time.monotonic() + 20
    while not condition():
        require(p.poll() is None, f"`{shlex.join(command)}` ended (exit {p.returncode}) "
                f"before {what}: nothing was interrupted")
        require(time.monotonic() < deadline, f"`{shlex.join(command)}`: no {what} within 20 s")
        time.sleep(0.001)


def interrupt(command, folder, sig, delay):
    """Runs command and sends it sig `delay` seconds after a temporary file appears in folder,
    or, when delay is AT_RENAME, as soon as the first one is renamed to its final name. Returns
    (exit code, stderr)."""
    with started(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                 errors="replace") as p:
        wait_for(p, command, lambda: temp_files(folder), "a temporary file appeared")
        if delay == AT_RENAME:
            first = temp_files(folder)[0]
            wait_for(p, command, lambda: first not in temp_files(folder), f"{first} was renamed")
        else:
            time.sleep(delay)
        p.send_signal(sig)
        err = p.communicate(timeout=120)[1]
        return p.returncode, err


def delays(trials, seed, longest):
    """The first signal at once (surely mid-write), later ones at seeded random moments up to
    `longest` seconds later: about when the command renames its files and ends."""
    rng = random.Random(int(seed))
    return [0.0] + [rng.uniform(0, longest) for _ in range(trials - 1)]


def slow_compile(slow, out, *extra):
    return [ORTC, "compile", slow, "-o", out + "/", "-q", *extra]


def interrupt_compile(slow, out, sig, delay):
    """Compiles the slow model into out and sends it sig at `delay` (see interrupt). Then out must
    hold no temporary file and no half pair: what it holds, the pair that was there or the new
    one, must check. SIGKILL, which no handler sees, may leave a temporary file, and, landing
    between the two renames, the binary alone. Returns True when the signal stopped the compile
    before it published."""
    before = file_digests(out)
    command = slow_compile(slow, out)
    rc, err = interrupt(command, out, sig, delay)
    when = delay if delay == AT_RENAME else f"{delay:.3f} s after its first temporary file appeared"
    what = (f"`{shlex.join(command)}` sent {sig.name} {when} exited {rc}" +
            (" (an older pair was there)" if before else ""))
    require(rc == 0 or killed_by(rc, sig),
            f"{what}: neither finished nor stopped by the signal; stderr: {err[-800:]!r}")
    if sig != signal.SIGKILL or rc == 0:
        require(not temp_files(out), f"{what} and left {temp_files(out)}")
    finals = final_outputs(out)
    allowed = [[], ["slow_cpu.bin", "slow_ctx.onnx"]] + [["slow_cpu.bin"]] * (sig == signal.SIGKILL)
    require(finals in allowed, f"{what} and left a half pair: {finals}")
    require(rc != 0 or finals, f"{what} but published nothing")
    if finals:
        r = ortc("check", os.path.join(out, "slow_ctx.onnx"))
        require(r.returncode == 0, f"{what}; then {described(r)}")
    return rc != 0 and file_digests(out) == before


def slow_model(work):
    """The slow model, written by the first case that needs it."""
    folder = os.path.join(work, "slow-model")
    path = os.path.join(folder, "slow.onnx")
    return path if os.path.exists(path) else save_slow(fresh_dir(folder))


def older_pair(work):
    """The compiled pair of another, small model also called slow.onnx."""
    folder = fresh_dir(os.path.join(work, "older-slow"))
    model = save_matmul_relu(os.path.join(folder, "slow.onnx"), np.eye(4, dtype=np.float32))
    ortc_ok("compile", model, "-q")
    return [os.path.join(folder, n) for n in ("slow_ctx.onnx", "slow_cpu.bin")]


def case_compile_signals(work, trials):
    slow, older = slow_model(work), older_pair(work)
    counts = []
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        caught = 0
        # Two at the moment the binary is published and the ctx model not yet, then the others.
        moments = [AT_RENAME, AT_RENAME] + delays(trials, sig, COMPILE_WINDOW_S)
        for trial, delay in enumerate(moments):
            out = fresh_dir(os.path.join(work, "signals", f"{sig.name}-{trial}"))
            if trial % 2:  # every other compile replaces an older pair at the same names
                for path in older:
                    shutil.copy(path, out)
            caught += interrupt_compile(slow, out, sig, delay)
            passed(out)
        counts.append(f"{sig.name} {caught}/{len(moments)}")
    return ("stopped before publishing (the others finished first): " + ", ".join(counts) +
            "; half of them over an older pair")


def check_next_compile_cleans(slow, out, left, *extra):
    """The compile after a killed one removes the temporary files the killed one left."""
    r = ortc_ok("compile", slow, "-o", out + "/", "--json", *extra)
    report = json.loads(r.stdout)
    removed = {os.path.basename(p["path"]) for p in report["removed_temp_files"]}
    require(set(left) <= removed and not temp_files(out),
            f"{described(r)}\nafter a SIGKILL: left {left}, reported removed {sorted(removed)}, "
            f"still there {temp_files(out)}")
    ortc_ok("check", os.path.join(out, "slow_ctx.onnx"))
    return report.get("up_to_date", False)


def case_compile_sigkill(work, trials):
    slow = slow_model(work)
    cleaned = up_to_date = 0
    for trial, delay in enumerate(delays(trials, signal.SIGKILL, COMPILE_WINDOW_S)):
        out = fresh_dir(os.path.join(work, "sigkill", str(trial)))
        # Into an empty folder, then the next plain compile.
        interrupt_compile(slow, out, signal.SIGKILL, delay)
        left = temp_files(out)
        check_next_compile_cleans(slow, out, left)
        cleaned += len(left)
        # Over a current pair, then --if-changed, which finds it current and still cleans up.
        interrupt_compile(slow, out, signal.SIGKILL, delay)
        left = temp_files(out)
        up_to_date += check_next_compile_cleans(slow, out, left, "--if-changed")
        cleaned += len(left)
        passed(out)
    return (f"{2 * trials} compiles killed, {cleaned} temporary files left and removed by the "
            f"next compile ({up_to_date}/{trials} --if-changed found the outputs up to date)")


def check_tensor_files(folder, shapes, temps_allowed=False):
    """Every output under a final name in folder is whole (.npy: its header's shape and all its
    data; .pb: a whole TensorProto); `shapes` maps the file names that may be there to shapes."""
    if not os.path.isdir(folder):  # the command failed before making it
        return
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if TEMP_MARK in name:
            require(temps_allowed, f"temporary file left: {path}")
            continue
        require(name in shapes, f"unexpected file {path}")
        try:
            if name.endswith(".pb"):
                tensor = TensorProto()
                tensor.ParseFromString(open(path, "rb").read())
                shape = numpy_helper.to_array(tensor).shape
            else:  # a memmap past the end of a truncated file fails
                shape = np.load(path, mmap_mode="r").shape
        except (ValueError, DecodeError) as e:
            raise CheckFailed(f"{path} is not a whole tensor file: {e}")
        require(shape == shapes[name], f"{path} has shape {shape}, expected {shapes[name]}")


def case_run_signals(work, trials):
    n = 16 << 20  # two 64 MiB outputs: written over about 0.3 s
    model = save_expand(os.path.join(work, "run-signals", "expand.onnx"), n)
    shapes = {"y.npy": (n,), "z.npy": (n,)}
    counts = []
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL):
        caught = 0
        for trial, delay in enumerate(delays(trials, sig, RUN_WINDOW_S)):
            out = fresh_dir(os.path.join(work, "run-signals", f"{sig.name}-{trial}"))
            command = [ORTC, "run", model, "--output-dir", out]
            rc, err = interrupt(command, out, sig, delay)
            require(rc == 0 or killed_by(rc, sig),
                    f"`{shlex.join(command)}` sent {sig.name} exited {rc}; stderr: {err[-800:]!r}")
            if sig != signal.SIGKILL or rc == 0:
                require(not temp_files(out),
                        f"`{shlex.join(command)}` sent {sig.name} {delay:.3f} s after its first "
                        f"temporary file appeared (exit {rc}) left {temp_files(out)} in {out}")
            check_tensor_files(out, shapes, temps_allowed=sig == signal.SIGKILL)
            require(rc != 0 or sorted(os.listdir(out)) == sorted(shapes),
                    f"`{shlex.join(command)}` exited 0 and wrote {sorted(os.listdir(out))}")
            caught += rc != 0
            passed(out)
        counts.append(f"{sig.name} {caught}/{trials} stopped mid-way")
    return "run --output-dir interrupted: " + ", ".join(counts)


# ---- 5. file-size limit ----

def limited(kib, *args):
    """ortc under `ulimit -f`. subprocess restores SIGXFSZ (which Python ignores) to its default
    in the child, so a write past the limit kills the process unless ortc itself ignores it."""
    return subprocess.run(["bash", "-c", f'ulimit -f {kib}; exec "$0" "$@"', ORTC, *map(str, args)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace", timeout=300)


def require_io_error(r):
    require(not killed_by(r.returncode, signal.SIGXFSZ),
            f"killed by SIGXFSZ instead of reporting an I/O error: {described(r)}")
    require(r.returncode == EXIT_IO and "error" in r.stderr, f"expected exit 5: {described(r)}")


def require_nothing_published(folder, r):
    left = temp_files(folder) + final_outputs(folder)
    require(not left, f"{described(r)}\nleft in {folder}: {left}")


def case_file_size_limit(work):
    kib = 20
    models = fresh_dir(os.path.join(work, "fsize-models"))
    w = np.full((128, 128), 0.5, np.float32)  # 64 KiB of weights, a 32 KiB output
    big = save_small_and_big(os.path.join(models, "big.onnx"), w, rows=64)
    checks = 0
    for fmt in ("npy", "pb"):
        out = fresh_dir(os.path.join(work, "fsize", f"run-{fmt}"))
        r = limited(kib, "run", big, "--output-dir", out, "--output-format", fmt)
        require_io_error(r)
        require(f"big.{fmt}" not in os.listdir(out), f"{described(r)}\nbig.{fmt} written anyway")
        check_tensor_files(out, {f"small.{fmt}": (64, 1)})
        checks += 1
    for target in ("-o", "--bundle"):
        out = os.path.join(work, "fsize", f"compile{target}")
        r = limited(kib, "compile", big, target, out + ("/" if target == "-o" else ""), "-q")
        require_io_error(r)
        require_nothing_published(out, r)
        checks += 1
    # An older pair at the names the failed compile would have replaced stays as it was.
    out = fresh_dir(os.path.join(work, "fsize", "older"))
    older = save_small_and_big(os.path.join(models, "older", "big.onnx"), w[:8, :8], rows=2)
    ortc_ok("compile", older, "-o", out + "/", "-q")
    before = file_digests(out)
    r = limited(kib, "compile", big, "-o", out + "/", "-q")
    require_io_error(r)
    require(file_digests(out) == before and not temp_files(out),
            f"{described(r)}\nthe older pair in {out} changed: {sorted(os.listdir(out))}")
    ortc_ok("check", os.path.join(out, "big_ctx.onnx"))
    return f"{checks + 1} writes past ulimit -f {kib}: exit 5, nothing half-written"


# ---- 6. standard output ----

def case_stdout(work):
    models = fresh_dir(os.path.join(work, "stdout"))
    model = save_matmul_relu(os.path.join(models, "m.onnx"), np.eye(64, dtype=np.float32))
    ortc_ok("compile", model, "-q")
    ctx = os.path.join(models, "m_ctx.onnx")
    commands = [["compile", model, "-o", os.path.join(models, "out") + "/", "--json"],
                ["run", ctx, "--json"], ["inspect", ctx, "--json"], ["partition", model, "--json"],
                ["check", ctx, "--json"], ["--help"]]
    ways = []
    if os.path.exists("/dev/full"):
        ways.append("/dev/full")
    else:
        print("  SKIP stdout on /dev/full: /dev/full does not exist")
    ways.append("closed")
    for way in ways:
        for args in commands:
            if way == "closed":
                r = subprocess.run(["bash", "-c", 'exec "$0" "$@" >&-', ORTC, *args],
                                   stderr=subprocess.PIPE, text=True, timeout=300)
            else:
                with open("/dev/full", "w") as full:
                    r = ortc(*args, stdout=full)
            require(r.returncode == EXIT_IO and "standard output" in r.stderr,
                    f"stdout {way}: {described(r)}")
    return f"{len(ways) * len(commands)} commands with stdout {' or '.join(ways)}: exit 5"


# ---- 7. ENOSPC ----

@contextlib.contextmanager
def small_tmpfs(folder, kib):
    """The folder, with a tmpfs of `kib` KiB mounted on it for the block; Skipped if it cannot."""
    os.makedirs(folder)
    if os.geteuid() != 0:
        raise Skipped("mounting a small tmpfs needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", folder],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise Skipped(f"mount -t tmpfs failed: {r.stdout.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", folder], check=True)


def leave_free(fs_root, pages):
    """Empties the tmpfs, then, unless pages is None, fills it to leave `pages` 4 KiB free."""
    for name in os.listdir(fs_root):
        path = os.path.join(fs_root, name)
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    if pages is not None:
        st = os.statvfs(fs_root)
        with open(os.path.join(fs_root, "filler"), "wb") as f:  # bytes: tmpfs stores holes free
            f.write(b"\0" * (st.f_bavail * st.f_frsize - pages * 4096))


def compile_with_free_space(root, pages, model, outcomes):
    out = os.path.join(root, "out")
    leave_free(root, pages)
    r = ortc("compile", model, "-o", out + "/", "-q")
    require(r.returncode in outcomes, f"{pages} pages free: {described(r)}")
    if r.returncode == 0:
        require(not temp_files(out), f"{described(r)}\nleft {temp_files(out)}")
        ortc_ok("check", os.path.join(out, os.path.basename(model)[:-5] + "_ctx.onnx"))
    else:
        require("error" in r.stderr, described(r))
        require_nothing_published(out, r)
    outcomes[r.returncode] += 1


def run_with_free_space(root, pages, model, shapes, outcomes):
    out = os.path.join(root, "out")
    leave_free(root, pages)
    r = ortc("run", model, "--output-dir", out)
    require(r.returncode in outcomes and (r.returncode == 0 or "error" in r.stderr),
            f"{pages} pages free: {described(r)}")
    check_tensor_files(out, shapes)
    require(r.returncode != 0 or sorted(os.listdir(out)) == sorted(shapes),
            f"{described(r)}\nwrote {sorted(os.listdir(out))}")
    outcomes[r.returncode] += 1


def case_enospc(work):
    models = fresh_dir(os.path.join(work, "enospc-models"))
    # big: 256 KiB of weights, a 512 KiB output: never fits. medium: 64 KiB and 64 KiB.
    big = save_small_and_big(os.path.join(models, "big.onnx"),
                             np.full((256, 256), 0.5, np.float32), rows=512)
    medium = save_small_and_big(os.path.join(models, "medium.onnx"),
                                np.full((256, 64), 0.5, np.float32), rows=256)
    with small_tmpfs(os.path.join(work, "enospc"), 256) as root:
        outcomes = {0: 0, EXIT_IO: 0}
        compile_with_free_space(root, None, big, outcomes)
        run_with_free_space(root, None, big, {"small.npy": (512, 1), "big.npy": (512, 256)},
                            outcomes)
        require(outcomes[EXIT_IO] == 2, f"big.onnx's outputs fit in 256 KiB? {outcomes}")
        # Every amount of free space from none to more than medium's outputs need.
        for pages in range(0, 26):
            compile_with_free_space(root, pages, medium, outcomes)
            run_with_free_space(root, pages, medium, {"small.npy": (256, 1), "big.npy": (256, 64)},
                                outcomes)
        require(outcomes[0], f"medium.onnx's outputs never fit: {outcomes}")
    return (f"{sum(outcomes.values())} compiles and runs on a full 256 KiB tmpfs: "
            f"{outcomes[0]} fit, {outcomes[EXIT_IO]} exit 5 with nothing half-written")


# ---- 8. output names ----

NAME_SETS = {
    # a/b, a\b and a_b share the file name a_b; the suffix a_b gets must not take a_b_2's file.
    "collide": [("a/b", 1), ("a_b", 2), ("a\\b", 3), ("a_b_2", 4), ("x:0", 5), ("x_0", 6)],
    # Cut at the NUL, n\0ul would be n; with the NUL as '_', it is n_ul.
    "nul": [("n\0ul", 1), ("n_ul", 2), ("n", 3), ("n\0", 4)],
    # Longer than a file name may be, equal in their first 255 bytes.
    "long": [("o" * 300 + "1", 1), ("o" * 300 + "2", 2)],
}
ALLOWED_EXITS = {"collide": {0}, "nul": {0, 2, 3, 5}, "long": {0, 5}}


def files_by_values(out, outputs, x):
    """Maps each output to the one file holding its values; every file holds one output."""
    arrays = {f: np.load(os.path.join(out, f)) for f in os.listdir(out)}
    require(len(arrays) == len(outputs),
            f"{len(outputs)} outputs written as {len(arrays)} files: {sorted(arrays)}")
    mapping = {}
    for name, factor in outputs:
        holders = [f for f, a in arrays.items() if a.shape == x.shape and
                   np.array_equal(a, x * np.float32(factor))]
        require(len(holders) == 1, f"output {name!r}: its values are in {holders} of "
                f"{sorted(arrays)}: one output's file overwritten by another's?")
        mapping[name] = holders[0]
    return mapping


def report_names_files(report, mapping):
    """The --json report must say which file holds which output (the file names are not the
    output names): `file` per output, a file record (schemas/cli_reports.md)."""
    for entry in report["outputs"]:
        named = (entry.get("file") or {}).get("path")
        require(named is not None,
                f"the --json report of `run --output-dir` does not name output {entry['name']!r}'s"
                f" file (by its values it is {mapping[entry['name']]}); entry: {entry}")
        require(os.path.basename(named) == mapping[entry["name"]],
                f"the report says output {entry['name']!r} is in {named}, its values are in "
                f"{mapping[entry['name']]}")


def case_output_names(work):
    folder = fresh_dir(os.path.join(work, "names"))
    x = (np.arange(6, dtype=np.float32).reshape(2, 3) + 0.25)
    x_npy = os.path.join(folder, "x.npy")
    np.save(x_npy, x)
    reports, results = [], []
    for label, outputs in NAME_SETS.items():
        model = save_elementwise(os.path.join(folder, f"{label}.onnx"), outputs)
        out = os.path.join(folder, f"{label}-out")
        r = ortc("run", model, "--input", f"x={x_npy}", "--output-dir", out, "--json")
        require(r.returncode in ALLOWED_EXITS[label] and (r.returncode == 0 or error_said(r)),
                f"{label} output names: {described(r)}")
        if r.returncode == 0:
            reports.append((json.loads(r.stdout), files_by_values(out, outputs, x)))
        else:
            require(not temp_files(out), f"{described(r)}\nleft {temp_files(out)}")
        results.append(f"{label}: exit {r.returncode}")
    # Last, so that the values above are checked even while the report lacks the file names.
    for report, mapping in reports:
        report_names_files(report, mapping)
    return "output names " + ", ".join(results) + ", each in its own file, named by the report"


# ---- main ----

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ortc")
    parser.add_argument("work")
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--case", action="append", default=[], metavar="TITLE",
                        help="run only this case (its title as printed, e.g. 'run signals'); "
                             "repeatable")
    args = parser.parse_args()
    if args.trials < 1:
        parser.error("--trials must be at least 1")
    global ORTC
    ORTC = os.path.abspath(args.ortc)
    work = os.path.abspath(args.work)
    if os.path.ismount(os.path.join(work, "enospc")):  # left by a run that was killed
        subprocess.run(["umount", os.path.join(work, "enospc")], check=True)
    fresh_dir(work)
    cases = [("concurrent compiles", lambda: case_concurrent_compiles(work, args.trials)),
             ("compile signals", lambda: case_compile_signals(work, args.trials)),
             ("compile SIGKILL", lambda: case_compile_sigkill(work, args.trials)),
             ("run signals", lambda: case_run_signals(work, args.trials)),
             ("file-size limit", lambda: case_file_size_limit(work)),
             ("standard output", lambda: case_stdout(work)),
             ("ENOSPC", lambda: case_enospc(work)),
             ("output names", lambda: case_output_names(work))]
    unknown = set(args.case) - {title for title, _ in cases}
    if unknown:
        parser.error(f"no case {sorted(unknown)}; the cases: {[t for t, _ in cases]}")
    cases = [(t, c) for t, c in cases if not args.case or t in args.case]
    failed, skipped = [], []
    for title, case in cases:
        start = time.monotonic()
        try:
            summary = case()
        except CheckFailed as e:
            failed.append(title)
            print(f"FAIL {title}: {e}", flush=True)
            continue
        except Skipped as e:
            skipped.append(title)
            print(f"SKIP {title}: {e}", flush=True)
            continue
        print(f"ok   {title}: {summary} ({time.monotonic() - start:.1f} s)", flush=True)
    passed = len(cases) - len(failed) - len(skipped)
    print(f"{passed} cases passed, {len(skipped)} skipped, {len(failed)} failed" +
          (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
