"""4-bit weights on the CPU are recognised by their values, not by one spelling: MatMuls whose
weights are 4-bit block dequantizations written with standard ops (as a quantizer that does not
use MatMulNBits writes them) must be kept at 4 bits (the compile report's
lowering.int4_matmuls), and a weight that differs from such a dequantization in one value must
stay float. Outputs are compared with ONNX Runtime 1.30 running the same model.

Models (K 256 and N 192 unless said; x with 1 row, the dot-product path, or 6 rows, the GEMM path):
  bytes_zero_points   q one value a byte [N, K], uint8 zero points and scales per 64 values
  many_zero_points    the same at K 512, N 1152, blocks of 32: 18432 zero points, too many for
                      graph-level folding to turn into floats (integer zero points are not read:
                      w / s must be an integer)
  float_zero_points   fractional float zero points (q - 7.5)
  per_column          one scale a column (a block of all K values), symmetric (zero point 8)
  stored_k_by_n       the weight quantized as stored, [K, N] in blocks along K: q [blocks,
                      block, N], scales [blocks, 1, N], no transpose
  one_value_off       bytes_zero_points with one weight moved by 1e-3: must stay float
The QDQ form (opset 21), as 4-bit quantizers write it without MatMulNBits: an INT4 / UINT4
weight [K, N] and DequantizeLinear with block_size along K, then MatMul. ONNX Runtime rewrites
that into its own 4-bit MatMul computing with 8-bit activations (about 0.5% off), so these are
compared with a float64 reference, and with ONNX Runtime loosely:
  qdq_int4            int4 weights and zero points, blocks of 32, 6 rows
  qdq_uint4           uint4 weights, no zero point (0), blocks of 64, one row
  qdq_int4_external   qdq_int4 with its weights in an external data file
  qdq_uint4_ragged    K 40 in blocks of 16 (the last one short): exact, but not kept at 4 bits
                      (MatMulInt4 takes K in groups of 32)
With the emulator given, each QDQ model is also one CUDA group (`ortc partition --ep cuda,cpu
--max-partitions 1`: the unpacking and dequantization fold at compile time) and its CUDA graph
agrees with the CPU runtime in the emulator at fp32 and fp16 (skipped, with a note, without NVRTC).
Usage: cpu_int4.py ORTC_BINARY WORK_DIR [ORTC_CUDA_EMULATE]
Exit 77 (skip) when onnxruntime-node is not installed.
"""
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
from cpu_int8 import ort_outputs, ortc_outputs  # noqa: E402



def dequantized_matmul(path, rng, K, N, rows, block, zero_kind, offset=False, k_major=False):
    """y = x @ W, W [K, N] computed in the graph from 4-bit values: Mul(Sub(Cast(q), z), s) per
    block of `block` values along K, reshaped and transposed (k_major: computed [K, N] as is)."""
    blocks = K // block
    q_shape, s_shape = ([blocks, block, N], [blocks, 1, N]) if k_major else ([N, blocks, block], [N, blocks, 1])
    q = rng.integers(0, 16, q_shape).astype(np.uint8)
    s = rng.uniform(0.005, 0.05, s_shape).astype(np.float32)
    inits = [numpy_helper.from_array(q, "q"), numpy_helper.from_array(s, "s"),
             numpy_helper.from_array(np.array([K, N] if k_major else [N, K], np.int64), "nk")]
    nodes = [helper.make_node("Cast", ["q"], ["qf"], to=TensorProto.FLOAT)]
    if zero_kind == "bytes":
        inits.append(numpy_helper.from_array(rng.integers(0, 16, s_shape).astype(np.uint8), "z"))
        nodes += [helper.make_node("Cast", ["z"], ["zf"], to=TensorProto.FLOAT),
                  helper.make_node("Sub", ["qf", "zf"], ["centered"])]
    elif zero_kind == "float":
        inits.append(numpy_helper.from_array(np.full(s_shape, 7.5, np.float32), "zf"))
        nodes.append(helper.make_node("Sub", ["qf", "zf"], ["centered"]))
    else:
        inits.append(numpy_helper.from_array(np.array(8, np.float32), "eight"))
        nodes.append(helper.make_node("Sub", ["qf", "eight"], ["centered"]))
    nodes += [helper.make_node("Mul", ["centered", "s"], ["w3"]),
              helper.make_node("Reshape", ["w3", "nk"], ["w_nk"])]
    w = "w_nk"
    if offset:
        delta = np.zeros([N, K], np.float32)
        delta[N // 2, K // 3] = 1e-3
        inits.append(numpy_helper.from_array(delta, "delta"))
        nodes.append(helper.make_node("Add", ["w_nk", "delta"], ["w_moved"]))
        w = "w_moved"
    if not k_major:
        nodes.append(helper.make_node("Transpose", [w], ["w_kn"], perm=[1, 0]))
        w = "w_kn"
    nodes.append(helper.make_node("MatMul", ["x", w], ["y"]))
    graph = helper.make_graph(nodes, os.path.basename(path)[:-5],
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows, K])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, rows, N])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def pack_nibbles(values):
    """4-bit values (any integers; their low 4 bits) packed two a byte, low nibble first."""
    flat = (values.reshape(-1) & 0xF).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    return (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8).tobytes()


def qdq_matmul(path, rng, K, N, rows, block, signed, zero_points, external):
    """y = x @ DequantizeLinear(q, s, z, axis=0, block_size) with q an INT4 / UINT4 [K, N]
    initializer; returns the float64 product of a given x as a function."""
    lo, hi = (-8, 7) if signed else (0, 15)
    blocks = -(-K // block)
    q = rng.integers(lo, hi + 1, [K, N])
    s = rng.uniform(0.005, 0.05, [blocks, N]).astype(np.float32)
    z = rng.integers(lo, hi + 1, [blocks, N]) if zero_points else np.zeros([blocks, N], np.int64)
    four_bit = 22 if signed else 21  # TensorProto INT4 / UINT4 (onnx 1.16; written by number)

    def initializer(name, values):
        t = TensorProto()
        t.name, t.data_type = name, four_bit
        t.dims.extend(values.shape)
        t.raw_data = pack_nibbles(values)
        return t
    inits = [initializer("q", q), numpy_helper.from_array(s, "s")]
    inputs = ["q", "s"]
    if zero_points:
        inits.append(initializer("z", z))
        inputs.append("z")
    nodes = [helper.make_node("DequantizeLinear", inputs, ["w"], axis=0, block_size=block),
             helper.make_node("MatMul", ["x", "w"], ["y"])]
    graph = helper.make_graph(nodes, os.path.basename(path)[:-5],
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows, K])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, rows, N])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    if external:  # the packed bytes in a data file beside the model, as large models keep them
        data = os.path.basename(path) + ".data"
        with open(os.path.join(os.path.dirname(path), data), "wb") as f:
            t = model.graph.initializer[0]
            f.write(t.raw_data)
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", data), ("offset", "0"), ("length", str(f.tell()))):
                entry = t.external_data.add()
                entry.key, entry.value = k, v
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    w = (q - np.repeat(z, block, axis=0)[:K]) * np.repeat(s.astype(np.float64), block, axis=0)[:K]
    return lambda x: x.astype(np.float64) @ w


def check_cuda(ortc, emulator, model, rows, K):
    """One CUDA group, and the emulator's CUDA graph against the CPU runtime at fp32 and fp16;
    False when NVRTC is missing (nothing emulated)."""
    run = lambda args: subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    r = run([ortc, "partition", model, "--ep", "cuda,cpu", "--max-partitions", "1"])
    assert r.returncode == 0, f"{model}: not one CUDA group\n{r.stdout}"
    for precision in ("fp32", "fp16"):
        r = run([emulator, model, f"x=1x{rows}x{K}", "--precision", precision])
        if r.returncode == 77 or "NVRTC (CUDA toolkit runtime compiler) not found" in r.stdout:
            return False
        assert r.returncode == 0, f"{model} emulated at {precision}: {r.stdout}"
        print(f"  {os.path.basename(model)} emulated at {precision}: {r.stdout.strip().splitlines()[-1].strip()}")
    return True


def main(ortc, work, emulator=None):
    if not os.path.isdir(os.path.join(ROOT, "test", "reference", "node_modules", "onnxruntime-node")):
        print("SKIP: onnxruntime-node is not installed (run scripts/setup.sh)", file=sys.stderr)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(4)
    # (name, K, N, rows, block, zero points, one value off, stored [K, N], MatMuls kept at 4 bits)
    cases = (("bytes_zero_points", 256, 192, 6, 64, "bytes", False, False, 1),
             ("many_zero_points", 512, 1152, 1, 32, "bytes", False, False, 1),
             ("float_zero_points", 256, 192, 1, 64, "float", False, False, 1),
             ("per_column", 256, 192, 1, 256, "none", False, False, 1),
             ("stored_k_by_n", 256, 192, 6, 32, "float", False, True, 1),
             ("one_value_off", 256, 192, 6, 64, "bytes", True, False, 0))
    for name, K, N, rows, block, zero_kind, offset, k_major, want_int4 in cases:
        model = os.path.join(work, name + ".onnx")
        dequantized_matmul(model, rng, K, N, rows, block, zero_kind, offset, k_major)
        x = os.path.join(work, name + "_x.npy")
        np.save(x, rng.normal(0, 1, [1, rows, K]).astype(np.float32))
        report, got = ortc_outputs(ortc, work, model, {"x": x})
        kept = report["lowering"]["int4_matmuls"]
        assert kept == want_int4, f"{name}: {kept} MatMul(s) kept at 4 bits, expected {want_int4}"
        want = ort_outputs(work, model, {"x": x})["y"]
        err = float(np.max(np.abs(got["y"] - want)))
        assert err <= 1e-5 * max(1.0, float(np.max(np.abs(want)))), f"{name}: max abs error {err}"
        print(f"{name}: {kept} MatMul(s) kept at 4 bits; outputs vs ONNX Runtime max abs error {err:.3g}")

    # (name, K, N, rows, block, signed, zero points, external data, MatMuls kept at 4 bits)
    qdq_cases = (("qdq_int4", 256, 192, 6, 32, True, True, False, 1),
                 ("qdq_uint4", 256, 192, 1, 64, False, False, False, 1),
                 ("qdq_int4_external", 256, 192, 6, 32, True, True, True, 1),
                 ("qdq_uint4_ragged", 40, 24, 6, 16, False, True, False, 0))
    for name, K, N, rows, block, signed, zero_points, external, want_int4 in qdq_cases:
        model = os.path.join(work, name + ".onnx")
        reference = qdq_matmul(model, rng, K, N, rows, block, signed, zero_points, external)
        x_values = rng.normal(0, 1, [1, rows, K]).astype(np.float32)
        x = os.path.join(work, name + "_x.npy")
        np.save(x, x_values)
        report, got = ortc_outputs(ortc, work, model, {"x": x})
        kept = report["lowering"]["int4_matmuls"]
        assert kept == want_int4, f"{name}: {kept} MatMul(s) kept at 4 bits, expected {want_int4}"
        want = reference(x_values)
        err = float(np.max(np.abs(got["y"] - want)))
        assert err <= 1e-5 * max(1.0, float(np.max(np.abs(want)))), f"{name}: max abs error {err}"
        ort = ort_outputs(work, model, {"x": x})["y"]
        ort_l2 = float(np.linalg.norm(ort - want) / np.linalg.norm(want))
        assert ort_l2 < 2e-2, f"{name}: ONNX Runtime is {ort_l2:.3g} (relative L2) from the reference"
        print(f"{name}: {kept} MatMul(s) kept at 4 bits; outputs vs float64 max abs error {err:.3g} "
              f"(ONNX Runtime's 8-bit-activation product: relative L2 {ort_l2:.2g})")
        if emulator and not check_cuda(ortc, emulator, model, rows, K):
            print("note: NVRTC is not available: the CUDA emulation is skipped")
            emulator = None
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:4]))
