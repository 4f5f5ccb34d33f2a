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
Usage: cpu_int4.py ORTC_BINARY WORK_DIR
Exit 77 (skip) when onnxruntime-node is not installed.
"""
import os
import shutil
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


def main(ortc, work):
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
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
