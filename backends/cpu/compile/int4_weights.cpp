// 4-bit block-quantized MatMul weights into MatMulInt4.
#include "cpu/compile/int4_weights.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <set>

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
    const IrOp* producer = nullptr;
    for (const auto& op : ir.ops) {
      if (op.removed) continue;
      for (int o : op.outputs) producer = o == value ? &op : producer;
      if (producer) break;
    }
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

uint8_t Nibble(const std::string& bytes, int64_t i) {  // low nibble first
  return (static_cast<uint8_t>(bytes[i / 2]) >> (4 * (i & 1))) & 15;
}

// The MatMulInt4 inputs of a candidate under one scaling, when (q - z) * s equals `weight`
// ([K, N] floats) bit for bit everywhere: packed weights (int4_rows.h's layout), scales and
// zero points as floats [N, blocks].
struct Int4Inputs {
  std::string packed, scales, zeros;
};

std::optional<Int4Inputs> Match(const Int4Candidate& c, const Int4Candidate::Scaling& s,
                                const std::string& weight) {
  const int64_t k = c.k, n = c.n, blocks = k / c.block, packed_zero_row = (blocks + 1) / 2;
  const auto holds = [](const std::shared_ptr<const std::string>& b, int64_t bytes) {
    return b && static_cast<int64_t>(b->size()) == bytes;
  };
  if (!holds(s.scales, n * blocks * 4) ||
      (s.zeros && !holds(s.zeros, s.packed_zeros ? n * packed_zero_row : n * blocks * 4)))
    return std::nullopt;
  Int4Inputs in;
  in.scales.resize(static_cast<size_t>(n * blocks * 4));
  in.zeros.resize(in.scales.size());
  for (int64_t col = 0; col < n; ++col)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t i = col * blocks + b;
      const float scale = FloatAt(*s.scales, i);
      const float zero = !s.zeros ? 8.0f
                         : s.packed_zeros
                             ? static_cast<float>(Nibble(*s.zeros, col * packed_zero_row * 2 + b))
                             : FloatAt(*s.zeros, i);
      std::memcpy(in.scales.data() + i * 4, &scale, 4);
      std::memcpy(in.zeros.data() + i * 4, &zero, 4);
    }
  in.packed.assign(static_cast<size_t>(n * k / 2), '\0');
  for (int64_t col = 0; col < n; ++col) {
    const float* scales = reinterpret_cast<const float*>(in.scales.data()) + col * blocks;
    const float* zeros = reinterpret_cast<const float*>(in.zeros.data()) + col * blocks;
    for (int64_t row = 0; row < k; ++row) {
      const float scale = scales[row / c.block], zero = zeros[row / c.block];
      const float have = FloatAt(weight, row * n + col);
      // The 4-bit value this weight would be, then the weight it gives, compared bit for bit.
      const double guess =
          scale != 0 ? std::nearbyint(double{have} / scale + zero) : std::nearbyint(double{zero});
      if (!(guess >= 0 && guess <= 15)) return std::nullopt;  // NaN too
      const auto value = static_cast<uint8_t>(guess);
      const float want = (static_cast<float>(value) - zero) * scale;
      if (std::memcmp(&want, &have, 4) != 0) return std::nullopt;
      // Group g's byte j: value 32g + j low, 32g + 16 + j high.
      const int64_t g = row / 32, j = row % 32;
      in.packed[col * (k / 2) + g * 16 + j % 16] |= static_cast<char>(value << (j < 16 ? 0 : 4));
    }
  }
  return in;
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
    // takes. Zero points: none (8), uint8 two a byte, or floats like the scales.
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
      Int4Candidate c{ir.values[op.outputs[0]].name, k, n, k / blocks, {{s_bytes, nullptr, false}}};
      for (int zero : leaves) {
        if (c.scalings.size() > kMaxZerosTried) break;
        const IrValue& zv = ir.values[zero];
        const bool packed = zv.info.dtype == T::UINT8 && Elements(zv) == n * ((blocks + 1) / 2);
        const bool floats = zv.info.dtype == T::FLOAT && Elements(zv) == count && zero != scale;
        if (auto z_bytes = packed || floats ? Bytes(zv) : nullptr)
          c.scalings.push_back({s_bytes, z_bytes, packed});
      }
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
    const IrValue& w = ir->values[op->inputs[1]];
    if (w.kind != ValueKind::kWeight || !w.bytes || w.info.dtype != T::FLOAT ||
        w.bytes->size() != c.k * c.n * 4)
      continue;  // not folded (past the folding limit) or not the float [K, N] it was
    const auto weight = Bytes(w);
    if (!weight) continue;
    std::optional<Int4Inputs> in;
    for (const auto& s : c.scalings) {
      in = Match(c, s, *weight);
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
    ir->Compact();
    ir->SortTopologically();
  }
  return replaced;
}

}  // namespace ortc::backends::cpu
