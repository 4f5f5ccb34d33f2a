// CPU lowering pass for 4-bit weights (ONNX Runtime's MatMulNBits, as GenAI's int4 models and
// weight-only quantizers write them): a MatMul whose weight is a 4-bit block dequantization of
// constants becomes MatMulInt4 (backends/cpu/runtime/kernels/int4_matmul.cpp), which keeps the
// weight at half a byte a value, plus a float scale and zero point a block, instead of four bytes,
// in the binary and in memory, and reads it so in every run: a decode step, bound by reading its
// weights, reads a fifth of the bytes with blocks of 32, a seventh with blocks of 128.
//
// Matched by what the weight is, not by how the graph spells the dequantization (nor by how much
// of it graph-level folding already did): a MatMul's constant weight cone is searched for a
// constant that can be a per-block scale s (a float per column and block of 32k values along K)
// and, for fractional zero points, one that can be the zero points; then the weight is computed
// from its cone (alone, before the group's folding, whatever its size), and each float value
// must be (q - z) * s in float, bit for bit, for a q in
// [0, 15] (with integer zero points, in whatever form the model stores them, w / s is then an
// integer q - z, and a block's 4-bit values are those differences shifted into [0, 15]). Only an
// exact match everywhere is replaced, so the program computes with the same weights as before; a
// weight that differs anywhere stays float.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lowering/subgraph_ir.h"

namespace ortc::backends::cpu {

// A MatMul whose folded weight may be a 4-bit block dequantization of these constants.
struct Int4Candidate {
  std::string matmul;  // the op's output value (the new weights are named after it)
  int64_t k = 0, n = 0, block = 0;
  // (scales, zero points) pairs to try: float scales, and float zero points or none (integer
  // zero points, whatever their form, need none: see int4_weights.cpp's MatchBlock), both of
  // N * blocks values, column-major ([N, blocks], MatMulNBits) or block-major ([blocks, N], a
  // weight [K, N] quantized along K as it is stored).
  struct Scaling {
    std::shared_ptr<const std::string> scales, zeros;
    bool block_major = false;
  };
  std::vector<Scaling> scalings;
  int64_t leaf_bytes = 0;  // the bytes of the constants the weight is computed from
};

// Before constant folding: the candidates among the float MatMuls of `ir`.
std::vector<Int4Candidate> FindInt4Candidates(const lowering::SubgraphIr& ir);

// Before constant folding: replaces each candidate whose weight, computed from its constants
// one weight at a time (whatever its size), equals its dequantization by MatMulInt4, and drops
// the dequantizations nothing else reads. Returns the count.
Result<int> UseInt4Weights(lowering::SubgraphIr* ir, const std::vector<Int4Candidate>& candidates);

}  // namespace ortc::backends::cpu
