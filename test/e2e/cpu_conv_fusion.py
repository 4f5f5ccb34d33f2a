"""The CPU backend's convolution rewrites against ONNX Runtime: a generated model where every
Conv epilogue the compiler fuses appears (residual Add, Relu, LeakyRelu, Clip with constant
bounds, Sigmoid, HardSigmoid, HardSwish, Tanh), chains that keep tensors channels-last between
convolutions, and the places where the layout must change back (a broadcast Add across channels,
a Concat, a convolution result that is also a model output, a 1-D convolution that stays NCHW).

Checks: the compile report's counts of fused epilogues and channels-last convolutions (so a
rewrite that silently stops happening fails), then outputs against ONNX Runtime 1.30 at 1 and
at 2 intra-op threads, to 1e-4.
Usage: cpu_conv_fusion.py ORTC_BINARY WORK_DIR
Exit 77 (skip) when onnxruntime-node is not installed.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import compare_outputs  # noqa: E402

TOLERANCE = 1e-4


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAILED ({r.returncode}): {' '.join(cmd)}\n{r.stdout}")
    return r.stdout


def make_model(path):
    rng = np.random.default_rng(7)
    inits, nodes = [], []

    def weight(name, shape, scale=0.3):
        inits.append(numpy_helper.from_array(rng.normal(0, scale, shape).astype(np.float32), name))
        return name

    def conv(name, x, cin, cout, k=3, stride=1, group=1, bias=True):
        ins = [x, weight(name + "_w", [cout, cin // group, k, k])]
        if bias:
            ins.append(weight(name + "_b", [cout]))
        nodes.append(helper.make_node("Conv", ins, [name], pads=[k // 2] * 4, strides=[stride] * 2,
                                      group=group))
        return name

    def act(op, x, **attrs):
        nodes.append(helper.make_node(op, [x], [x + "_" + op.lower()], **attrs))
        return x + "_" + op.lower()

    c0 = act("Relu", conv("c0", "x", 3, 16, stride=2))                   # Conv + Relu
    # Pooling on a channels-last tensor stays channels-last (global pooling writes [N,C,1,1]).
    nodes += [helper.make_node("MaxPool", [c0], ["mp"], kernel_shape=[3, 3], strides=[2, 2],
                               pads=[1, 1, 1, 1]),
              helper.make_node("AveragePool", ["mp"], ["ap"], kernel_shape=[3, 3], strides=[2, 2],
                               pads=[1, 1, 1, 1], count_include_pad=1, ceil_mode=1),
              helper.make_node("GlobalMaxPool", ["ap"], ["gmp"]),
              # ceil_mode averaging without the padding: oneDNN's pooling (the one above counts
              # padding past what ceil_mode adds, which only the runtime's loops do).
              helper.make_node("AveragePool", ["mp"], ["ap2"], kernel_shape=[3, 3],
                               strides=[2, 2], ceil_mode=1)]
    c1 = conv("c1", c0, 16, 16)
    nodes.append(helper.make_node("Add", [c1, c0], ["res1"]))             # residual Add
    r1 = act("Relu", "res1")
    c2 = act("HardSwish", conv("c2", r1, 16, 16, group=16))               # depthwise + HardSwish
    inits.append(numpy_helper.from_array(np.array(-0.5, np.float32), "lo"))
    inits.append(numpy_helper.from_array(np.array(0.75, np.float32), "hi"))
    c3 = conv("c3", c2, 16, 24, k=1, bias=False)
    nodes.append(helper.make_node("Clip", [c3, "lo", "hi"], ["c3_clip"]))  # Clip, constant bounds
    c4 = act("LeakyRelu", conv("c4", "c3_clip", 24, 24, stride=2), alpha=0.2)
    # A squeeze-and-excitation gate: a computed per-channel Mul keeps the tensor channels-last.
    nodes += [helper.make_node("GlobalAveragePool", [c4], ["se_pool"]),
              helper.make_node("Sigmoid", ["se_pool"], ["se_gate"]),
              helper.make_node("Mul", [c4, "se_gate"], ["se_out"])]
    c5 = act("Sigmoid", conv("c5", "se_out", 24, 24, group=4))
    c6 = act("HardSigmoid", conv("c6", c5, 24, 24), alpha=0.3, beta=0.4)
    c7 = act("Tanh", conv("c7", c6, 24, 24))
    # As PaddleOCR's exporter writes a learnable affine around HardSwish: scalar Mul and Add,
    # x * clip(x + 3, 0, 6) / 6, scalar Mul and Sub.
    for name, value in (("s1", 1.7), ("t1", 0.2), ("three", 3.0), ("zero", 0.0), ("six", 6.0),
                        ("s2", 0.6), ("t2", 0.1)):
        inits.append(numpy_helper.from_array(np.array(value, np.float32), name))
    a = conv("ca", c7, 24, 24)
    nodes += [helper.make_node("Mul", ["s1", a], ["a1"]), helper.make_node("Add", ["a1", "t1"], ["a2"]),
              helper.make_node("Add", ["a2", "three"], ["a3"]),
              helper.make_node("Clip", ["a3", "zero", "six"], ["a4"]),
              helper.make_node("Mul", ["a2", "a4"], ["a5"]), helper.make_node("Div", ["a5", "six"], ["a6"]),
              helper.make_node("Mul", ["a6", "s2"], ["a7"]), helper.make_node("Sub", ["a7", "t2"], ["a8"])]
    c7 = "a8"
    # An Add broadcasting a per-channel constant: must see NCHW.
    weight("chan", [1, 24, 1, 1])
    nodes.append(helper.make_node("Add", [c7, "chan"], ["biased"]))
    c8 = conv("c8", "biased", 24, 8, k=1)
    # Concat on channels of two NHWC results; a Conv result also a model output.
    c9 = conv("c9", c8, 8, 8)
    nodes.append(helper.make_node("Concat", [c8, c9], ["cat"], axis=1))
    nodes.append(helper.make_node("GlobalAveragePool", ["cat"], ["pooled"]))
    # Nearest upsampling by constant scales that keep batch and channels: stays channels-last.
    inits.append(numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "up_scales"))
    nodes.append(helper.make_node("Resize", [c8, "", "up_scales"], ["up"], mode="nearest",
                                  coordinate_transformation_mode="asymmetric",
                                  nearest_mode="floor"))
    # A 1-D convolution (stays NCHW) with a residual.
    weight("k1d_w", [4, 4, 3])
    nodes.append(helper.make_node("Conv", ["seq", "k1d_w"], ["k1d"], pads=[1, 1]))
    nodes.append(helper.make_node("Add", ["k1d", "seq"], ["k1d_res"]))
    r = act("Relu", "k1d_res")
    graph = helper.make_graph(
        nodes, "cpu_conv_fusion",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32]),
         helper.make_tensor_value_info("seq", TensorProto.FLOAT, [2, 4, 10])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, 16, 1, 1]),
         helper.make_tensor_value_info(c9, TensorProto.FLOAT, [1, 8, 8, 8]),
         helper.make_tensor_value_info(r, TensorProto.FLOAT, [2, 4, 10]),
         helper.make_tensor_value_info("gmp", TensorProto.FLOAT, [1, 16, 1, 1]),
         helper.make_tensor_value_info("up", TensorProto.FLOAT, [1, 8, 16, 16]),
         helper.make_tensor_value_info("ap2", TensorProto.FLOAT, [1, 16, 4, 4])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


REWRITES = ("residual_adds_fused", "activations_fused", "affine_steps_fused",
            "channels_last_convolutions", "channels_last_pools", "channels_last_concats",
            "channels_last_resizes", "layout_transposes", "layout_reshapes")


def stats_of(report, keys=REWRITES):
    """Sums the CPU programs' rewrite counts over the compile report."""
    totals = {}

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k in keys and isinstance(v, int):
                    totals[k] = totals.get(k, 0) + v
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(report)
    return totals


def main(ortc, work):
    if not os.path.isdir(os.path.join(ROOT, "test", "reference", "node_modules", "onnxruntime-node")):
        print("SKIP: onnxruntime-node is not installed (run scripts/setup.sh)", file=sys.stderr)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = os.path.join(work, "fusion.onnx")
    make_model(model)
    rng = np.random.default_rng(3)
    feeds = {"x": rng.uniform(-1, 1, [1, 3, 32, 32]).astype(np.float32),
             "seq": rng.uniform(-1, 1, [2, 4, 10]).astype(np.float32)}
    args = []
    for k, v in feeds.items():
        np.save(os.path.join(work, k + ".npy"), v)
        args += [f"{k}={os.path.join(work, k + '.npy')}"]
    out = os.path.join(work, "bundle")
    os.makedirs(out)
    report = json.loads(run([ortc, "compile", model, "--ep", "cpu", "-o", out + "/", "--json"]))
    stats = stats_of(report)
    print("compile stats:", stats)
    # Activations: c0..c7 (8), the decomposed HardSwish after ca, and the 1-D one's Relu; scalar
    # steps: Mul, Add before the HardSwish and Mul, Sub after it; residuals: c1 and the 1-D one.
    # The 2-D convolutions (c0..c9 and ca) run channels-last.
    assert stats.get("activations_fused") == 10, stats
    assert stats.get("affine_steps_fused") == 4, stats
    assert stats.get("residual_adds_fused") == 2, stats
    assert stats.get("channels_last_convolutions") == 11, stats
    # MaxPool, two AveragePools, GlobalMaxPool, the SE gate's and the final GlobalAveragePool
    # (the Concat before it runs on NHWC's last axis); the Resize too.
    assert stats.get("channels_last_pools") == 6, stats
    assert stats.get("channels_last_concats") == 1, stats
    assert stats.get("channels_last_resizes") == 1, stats
    # The SE gate through a Reshape; the constant per-channel bias re-declared without one.
    assert stats.get("layout_reshapes") == 1, stats
    # Layout changes: out to the model outputs c9, up and ap2 (the first convolution reads the
    # NCHW image itself).
    assert stats.get("layout_transposes") == 3, stats
    want = os.path.join(work, "ort")
    run(["node", os.path.join(ROOT, "test", "reference", "ort_run.js"), model, want] + args)
    worst = 0.0
    for threads in ("1", "2"):
        got = os.path.join(work, "ortc_t" + threads)
        run([ortc, "run", os.path.join(out, "fusion_ctx.onnx"), "--output-dir", got,
             "--threads", threads] + [a for f in args for a in ("--input", f)])
        worst = max(worst, compare_outputs.main(f"fusion, {threads} thread(s)", want, got,
                                                TOLERANCE, TOLERANCE))
    print(f"cpu conv fusion: matches ONNX Runtime at 1 and 2 threads (worst {worst:.3g})")
    check_bf16(ortc, work, model, args, want)
    check_packed(ortc, work, model, args, want)
    check_conv_algorithm(ortc, work, model, args, want, os.path.join(out, "fusion_ctx.onnx"))
    return 0


def convolution_kernels(ortc, ctx, args, got):
    """oneDNN's names for the convolution kernels one 1-thread run of ctx executes."""
    env = dict(os.environ, DNNL_VERBOSE="1")
    r = subprocess.run([ortc, "run", ctx, "--output-dir", got, "--threads", "1"] +
                       [a for f in args for a in ("--input", f)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, r.stdout
    return [line.split(",")[4] for line in r.stdout.splitlines()
            if line.startswith("onednn_verbose,exec,cpu,convolution,")]


def check_conv_algorithm(ortc, work, model, args, want, default_ctx):
    """The runtime runs 3x3 stride-1 convolutions with 16+ channels on Winograd at one thread
    where oneDNN has a kernel for them: on AVX-512, c1 here (c6, c7 and ca have 24 channels, which
    oneDNN 2.x's Winograd kernels do not take, so they stay direct). cpu:conv_algorithm=direct
    rules it out at compile time. Both match ONNX Runtime."""
    with open("/proc/cpuinfo") as f:
        avx512 = "avx512f" in f.read()
    kernels = convolution_kernels(ortc, default_ctx, args, os.path.join(work, "ortc_auto"))
    winograd = [k for k in kernels if "wino" in k]
    assert (len(winograd) >= 1) == avx512, kernels
    out = os.path.join(work, "direct")
    os.makedirs(out)
    report = json.loads(run([ortc, "compile", model, "--ep", "cpu", "--provider-option",
                             "cpu:conv_algorithm=direct", "-o", out + "/", "--json"]))
    marked = stats_of(report, ("conv_algorithm_marked",)).get("conv_algorithm_marked")
    assert marked == 12, report
    got = os.path.join(work, "ortc_direct")
    kernels = convolution_kernels(ortc, os.path.join(out, "fusion_ctx.onnx"), args, got)
    assert kernels and not any("wino" in k for k in kernels), kernels
    compare_outputs.main("conv_algorithm=direct", want, got, TOLERANCE, TOLERANCE)
    print(f"conv algorithm: {len(winograd)} Winograd convolutions by default, none with direct")


def check_packed(ortc, work, model, args, want):
    """--target-isa: weights packed at compile time, read in place at run time; on a CPU whose
    oneDNN picks another layout (forced here with DNNL_MAX_CPU_ISA) they are repacked from the
    stored layout, and the version check says to prefer recompilation."""
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    out = os.path.join(work, "packed")
    os.makedirs(out)
    report = json.loads(run([ortc, "compile", model, "--ep", "cpu", "--target-isa", "native",
                             "-o", out + "/", "--json"]))
    packed = stats_of(report, ("packed_convolutions",)).get("packed_convolutions", 0)
    # Every convolution here has static shapes and explicit pads; those whose primitive reads a
    # blocked layout are packed (which ones depends on the CPU: some read plain weights).
    assert 0 < packed <= 12, report
    print(f"--target-isa native: {packed} of 12 convolutions packed")
    ctx = os.path.join(out, "fusion_ctx.onnx")
    args_flat = [a for f in args for a in ("--input", f)]
    got = os.path.join(work, "ortc_packed")
    run([ortc, "run", ctx, "--output-dir", got] + args_flat)
    compare_outputs.main("packed weights", want, got, TOLERANCE, TOLERANCE)
    if "avx512f" in flags:
        env = dict(os.environ, DNNL_MAX_CPU_ISA="AVX2")
        got = os.path.join(work, "ortc_repacked")
        r = subprocess.run([ortc, "run", ctx, "--output-dir", got] + args_flat, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert r.returncode == 0, r.stdout
        compare_outputs.main("packed weights repacked for AVX2", want, got, TOLERANCE, TOLERANCE)
        device = os.path.join(work, "avx2_device.json")
        with open(device, "w") as f:
            json.dump({"cpu": {"arch": "x86_64", "little_endian": True,
                               "isa": ["sse4.2", "avx2", "fma", "avx2_fma"]}}, f)
        verdict = run([ortc, "check", ctx, "--device", device])
        assert "prefer recompilation" in verdict and "repacked" in verdict, verdict
        print("packed bundle on an AVX2 CPU:", verdict.strip().splitlines()[-1].strip())
    if "amx_tile" not in flags:
        # Packing needs the ISA on the compiling machine: a clear refusal, nothing written.
        refused = os.path.join(work, "amx")
        os.makedirs(refused)
        r = subprocess.run([ortc, "compile", model, "--ep", "cpu", "--target-isa",
                            "avx512_core_amx", "-o", refused + "/"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert r.returncode != 0 and "avx512_core_amx" in r.stdout, r.stdout
        assert os.listdir(refused) == [], os.listdir(refused)
        print("--target-isa avx512_core_amx refused here:", r.stdout.strip().splitlines()[-1])


def check_bf16(ortc, work, model, args, want):
    """--precision bf16: every float convolution computes on bf16; the binary names the ISA it
    needs, and the version gate refuses it on a CPU without AVX512-BF16."""
    out = os.path.join(work, "bf16")
    os.makedirs(out)
    report = json.loads(run([ortc, "compile", model, "--ep", "cpu", "--precision", "bf16",
                             "-o", out + "/", "--json"]))
    assert stats_of(report, ("bf16_convolutions",)).get("bf16_convolutions") == 12, report
    ctx = os.path.join(out, "fusion_ctx.onnx")
    without = os.path.join(work, "no_bf16.json")
    with open(without, "w") as f:
        json.dump({"cpu": {"arch": "x86_64", "little_endian": True,
                           "isa": ["sse4.2", "avx2", "fma", "avx512f"]}}, f)
    r = subprocess.run([ortc, "check", ctx, "--device", without], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    assert r.returncode != 0 and "avx512_bf16" in r.stdout, r.stdout
    print("bf16 bundle refused on a CPU without AVX512-BF16:", r.stdout.strip().splitlines()[-1])
    with open("/proc/cpuinfo") as f:
        if "avx512_bf16" not in f.read():
            print("note: this CPU has no AVX512-BF16; the bf16 bundle was not run")
            return
    got = os.path.join(work, "ortc_bf16")
    run([ortc, "run", ctx, "--output-dir", got] + [a for f in args for a in ("--input", f)])
    # bf16 keeps 8 bits of mantissa: errors relative to the output's scale, not 1e-4.
    for name in sorted(os.listdir(want)):
        a, b = np.load(os.path.join(got, name)), np.load(os.path.join(want, name))
        scale = float(np.max(np.abs(b)))
        err = float(np.max(np.abs(a - b)))
        assert err <= 0.05 * scale, f"bf16 {name}: max abs error {err} vs scale {scale}"
        print(f"bf16 {name[:-4]}: max abs error {err:.3g} (max |value| {scale:.3g})")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
