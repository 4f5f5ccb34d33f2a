// 4-bit block-quantized MatMul weights into MatMulInt4.
#include "cpu/compile/int4_weights.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>

#include "lowering/constant_cone.h"

namespace ortc::backends::cpu {
namespace {

using lowering::IrOp;
using lowering::IrValue;
using lowering::SubgraphIr;
using lowering::ValueKind;
using T = onnx::TensorProto;

// A weight cone larger than this is not a dequantization (MatMulNBits' is about a dozen ops).
constexpr size_t kMaxConeOps = 64;
// Each try compares a whole weight; a dequantization has one scale and one zero point tensor,
// so a few tries find it, and a hostile graph of many look-alike constants cannot make the
// compile compare the weight thousands of times.
constexpr size_t kMaxScalesTried = 4, kMaxZerosTried = 4;

int64_t Elements(const IrValue& v) {  // -1 past 2^40: no scale or zero point is that large
  int64_t n = 1;
  for (const auto& d : v.info.shape.dims) {
    if (d.value < 0 || (d.value > 0 && n > (int64_t{1} << 40) / d.value)) return -1;
    n *= d.value;
  }
  return n;
}

// The weights that value v is computed from, when it is computed from weights only (through
// plain ops, at most kMaxConeOps of them); empty otherwise.
std::vector<int> ConstantLeaves(const SubgraphIr& ir, int v) {
  std::vector<int> leaves, stack = {v};
  std::set<int> seen;
  size_t ops = 0;
  while (!stack.empty()) {
    const int value = stack.back();
    stack.pop_back();
    if (value < 0 || !seen.insert(value).second) continue;
    const IrValue& val = ir.values[value];
    if (val.kind == ValueKind::kWeight) {
      if (!val.bytes || !val.info.shape.is_static()) return {};
      leaves.push_back(value);
      continue;
    }
    const IrOp* producer = ir.Producer(value);
    if (!producer || !producer->domain.empty() || !producer->subgraphs.empty() ||
        ++ops > kMaxConeOps)
      return {};
    for (int in : producer->inputs) stack.push_back(in);
  }
  return leaves;
}

std::shared_ptr<const std::string> Bytes(const IrValue& v) {
  auto bytes = v.bytes->ReadAll();
  return bytes.ok() ? *bytes : nullptr;
}

float FloatAt(const std::string& bytes, int64_t i) {
  float f;
  std::memcpy(&f, bytes.data() + i * 4, 4);
  return f;
}

// The MatMulInt4 inputs of a candidate under one scaling, when (q - z) * s equals `weight`
// ([K, N] floats) bit for bit everywhere: packed weights (int4_rows.h's layout), scales and
// zero points as floats [N, blocks].
struct Int4Inputs {
  std::string packed, scales, zeros;
};

// One block of one column, `count` weights `stride` floats apart: its 4-bit values and zero
// point, given its scale (and, for fractional zero points, the zero point), when every weight is
// (q - z) * s in float, bit for bit. With integer zero points q - z is an integer d in [-15, 15]
// and (q - z) * s is float(d) * s whatever z was, so z need not be known: any z that puts every
// d + z in [0, 15] gives the same weights.
std::optional<float> MatchBlock(const float* w, int64_t stride, int64_t count, float scale,
                                const float* zero, uint8_t* values) {
  double lowest = 0;
  if (!zero) {  // integer zero points: d = w / s, then z = -min(d), q = d + z
    double highest = 0;
    lowest = 16;
    for (int64_t i = 0; i < count; ++i) {
      const float have = w[i * stride];
      // A scale of 0 gives +0 for d >= 0 and -0 below; NaN and infinities never match.
      const double d =
          scale != 0 ? std::nearbyint(double{have} / scale) : (std::signbit(have) ? -1.0 : 0.0);
      if (!(std::fabs(d) <= 15)) return std::nullopt;
      values[i] = static_cast<uint8_t>(d + 15);  // d + 15 for now, shifted below
      lowest = std::min(lowest, d);
      highest = i == 0 ? d : std::max(highest, d);
    }
    if (highest - lowest > 15) return std::nullopt;
    for (int64_t i = 0; i < count; ++i)
      values[i] = static_cast<uint8_t>(values[i] - 15 - static_cast<int>(lowest));
  } else {
    for (int64_t i = 0; i < count; ++i) {
      const double q = std::nearbyint(double{w[i * stride]} / scale + *zero);
      if (!(q >= 0 && q <= 15)) return std::nullopt;
      values[i] = static_cast<uint8_t>(q);
    }
  }
  const float z = zero ? *zero : static_cast<float>(-lowest);
  for (int64_t i = 0; i < count; ++i) {
    const float want = (static_cast<float>(values[i]) - z) * scale, have = w[i * stride];
    if (std::memcmp(&want, &have, 4) != 0) return std::nullopt;
  }
  return z;
}

std::optional<Int4Inputs> Match(const Int4Candidate& c, const Int4Candidate::Scaling& s,
                                const std::string& weight) {
  const int64_t k = c.k, n = c.n, blocks = k / c.block;
  const auto holds = [](const std::shared_ptr<const std::string>& b, int64_t bytes) {
    return b && static_cast<int64_t>(b->size()) == bytes;
  };
  if (!holds(s.scales, n * blocks * 4) || (s.zeros && !holds(s.zeros, n * blocks * 4)) ||
      static_cast<int64_t>(weight.size()) != k * n * 4)
    return std::nullopt;
  const float* w = reinterpret_cast<const float*>(weight.data());
  Int4Inputs in;
  in.scales.resize(static_cast<size_t>(n * blocks * 4));
  in.zeros.resize(in.scales.size());
  in.packed.assign(static_cast<size_t>(n * k / 2), '\0');
  std::vector<uint8_t> values(static_cast<size_t>(c.block));
  for (int64_t col = 0; col < n; ++col)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t i = col * blocks + b, at = s.block_major ? b * n + col : i;
      const float scale = FloatAt(*s.scales, at);
      const float zero = s.zeros ? FloatAt(*s.zeros, at) : 0.0f;
      const auto z = MatchBlock(w + b * c.block * n + col, n, c.block, scale,
                                s.zeros ? &zero : nullptr, values.data());
      if (!z) return std::nullopt;
      std::memcpy(in.scales.data() + i * 4, &scale, 4);
      std::memcpy(in.zeros.data() + i * 4, &*z, 4);
      for (int64_t r = 0; r < c.block; ++r) {
        // Group g's byte j: value 32g + j low, 32g + 16 + j high.
        const int64_t row = b * c.block + r, g = row / 32, j = row % 32;
        in.packed[col * (k / 2) + g * 16 + j % 16] |=
            static_cast<char>(values[r] << (j < 16 ? 0 : 4));
      }
    }
  return in;
}

// The candidate's float [K, N] weight, computed alone from its cone (FoldConstants has not run:
// it keeps every result in memory and stops at kMaxFoldBytes, where a large model's 4-bit
// weights would stay dequantized at run time, in every run). Weights larger than folding's
// limit for the constants they come from (8x: 4 bits to 32) are not a dequantization.
std::optional<lowering::HostTensor> Weight(const SubgraphIr& ir, int v, const Int4Candidate& c) {
  const int64_t bytes = c.k * c.n * 4;
  if (bytes > lowering::FoldLimit(c.leaf_bytes)) return std::nullopt;
  // Intermediates up to twice the weight: a dequantization computed in double.
  auto w = lowering::EvaluateConstantCone(
      ir, v, {.max_ops = kMaxConeOps, .max_bytes = std::max(lowering::kMaxFoldBytes, 2 * bytes)});
  if (!w || w->dtype != T::FLOAT || static_cast<int64_t>(w->bytes.size()) != bytes)
    return std::nullopt;
  return w;
}

}  // namespace

std::vector<Int4Candidate> FindInt4Candidates(const SubgraphIr& ir) {
  std::vector<Int4Candidate> found;
  for (const auto& op : ir.ops) {
    if (op.removed || op.op_type != "MatMul" || !op.domain.empty() || op.inputs.size() != 2 ||
        op.inputs[0] < 0 || op.inputs[1] < 0 || op.outputs.size() != 1 || op.outputs[0] < 0)
      continue;
    const IrValue& a = ir.values[op.inputs[0]];
    const IrValue& b = ir.values[op.inputs[1]];
    if (a.info.dtype != T::FLOAT || b.info.dtype != T::FLOAT ||
        b.kind != ValueKind::kIntermediate || !b.info.shape.is_static() ||
        b.info.shape.dims.size() != 2)
      continue;
    const int64_t k = b.info.shape.dims[0].value, n = b.info.shape.dims[1].value;
    if (k <= 0 || n <= 0 || k % 32 != 0) continue;
    const std::vector<int> leaves = ConstantLeaves(ir, op.inputs[1]);
    // Scales: a float constant of one value per block and column, for a block size MatMulInt4
    // takes; zero points: floats like the scales, or none.
    size_t scales_tried = 0;
    for (int scale : leaves) {
      const IrValue& sv = ir.values[scale];
      const int64_t count = Elements(sv);
      if (sv.info.dtype != T::FLOAT || count <= 0 || count % n != 0) continue;
      const int64_t blocks = count / n;
      if (k % blocks != 0 || (k / blocks) % 32 != 0) continue;
      // A constant that cannot be read is no candidate: folding would fail on it too.
      auto s_bytes = Bytes(sv);
      if (!s_bytes) continue;
      Int4Candidate c{ir.values[op.outputs[0]].name, k, n, k / blocks, {}, {}};
      for (int leaf : leaves) c.leaf_bytes += static_cast<int64_t>(ir.values[leaf].bytes->size());
      // Fractional zero points need their constant; integer ones do not (MatchBlock).
      std::vector<std::shared_ptr<const std::string>> zeros = {nullptr};
      for (int zero : leaves) {
        const IrValue& zv = ir.values[zero];
        if (zero == scale || zv.info.dtype != T::FLOAT || Elements(zv) != count) continue;
        if (auto z_bytes = Bytes(zv)) zeros.push_back(z_bytes);
        if (zeros.size() > kMaxZerosTried) break;
      }
      for (bool block_major : {false, true})
        for (const auto& z : zeros) c.scalings.push_back({s_bytes, z, block_major});
      found.push_back(std::move(c));
      if (++scales_tried == kMaxScalesTried) break;
    }
  }
  return found;
}

Result<int> UseInt4Weights(SubgraphIr* ir, const std::vector<Int4Candidate>& candidates) {
  int replaced = 0;
  for (const auto& c : candidates) {
    IrOp* op = nullptr;  // by its output, the one name a value has (op names may repeat or be "")
    for (auto& o : ir->ops)
      if (!o.removed && o.op_type == "MatMul" && o.outputs.size() == 1 && o.outputs[0] >= 0 &&
          ir->values[o.outputs[0]].name == c.matmul)
        op = &o;
    if (!op) continue;
    const auto weight = Weight(*ir, op->inputs[1], c);
    if (!weight) continue;
    std::optional<Int4Inputs> in;
    for (const auto& s : c.scalings) {
      in = Match(c, s, weight->bytes);
      if (in) break;
    }
    if (!in) continue;
    const int64_t blocks = c.k / c.block;
    const int a = op->inputs[0], y = op->outputs[0];
    const int packed = ir->AddConstant(c.matmul + ".int4_weights", T::UINT8, {c.n, c.k / 2},
                                       std::move(in->packed));
    const int scales =
        ir->AddConstant(c.matmul + ".int4_scales", T::FLOAT, {c.n, blocks}, std::move(in->scales));
    const int zeros =
        ir->AddConstant(c.matmul + ".int4_zeros", T::FLOAT, {c.n, blocks}, std::move(in->zeros));
    IrOp q;
    q.name = op->name;
    q.op_type = "MatMulInt4";
    q.since_version = 1;
    q.inputs = {a, packed, scales, zeros};
    q.outputs = {y};
    q.SetIntAttr("block_size", c.block);
    op->removed = true;  // AddConstant grew the values, not the ops: op is still valid
    ir->ops.push_back(std::move(q));
    ++replaced;
  }
  if (replaced > 0) {
    ir->RemoveDeadOps();  // the dequantizations now read by nothing
    ir->Compact();
    ir->SortTopologically();
  }
  return replaced;
}

}  // namespace ortc::backends::cpu
