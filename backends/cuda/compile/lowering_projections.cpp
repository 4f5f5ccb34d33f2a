// Merges sibling projections: MatMuls that read the same activation with constant [K, N_i]
// weights (each + a constant [N_i] bias, or none of them) become one MatMul with the weights
// concatenated along N, one bias Add and a Split. BERT's query/key/value projections are then
// one GEMM instead of three, and the attention fusion reads the Split's outputs as views.
#include <onnx/onnx_pb.h>

#include <map>

#include "base/element_types.h"
#include "cuda/compile/lowering.h"
#include "cuda/compile/lowering_ir_index.h"
#include "graph/graph.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
using lowering::IrValue;
using lowering::SubgraphIr;
using lowering::ValueKind;

struct Projection {
  int matmul = -1, add = -1;  // op indices (add: -1 without a bias)
  int weight = -1, bias = -1, out = -1;
  int64_t n = 0;
};

// The bias Add reading a MatMul's output alone, with a constant [n] operand; -1 when none.
int BiasAdd(const SubgraphIr& ir, const IrIndex& x, int mm_out, int64_t n, int* bias) {
  if (!x.Internal(mm_out) || ir.UseCount(mm_out) != 1) return -1;
  for (size_t i = 0; i < ir.ops.size(); ++i) {
    const IrOp& op = ir.ops[i];
    if (op.removed || op.op_type != "Add" || op.inputs.size() != 2) continue;
    if (op.inputs[0] != mm_out && op.inputs[1] != mm_out) continue;
    const int other = op.inputs[0] == mm_out ? op.inputs[1] : op.inputs[0];
    if (ir.values[other].kind != ValueKind::kWeight || x.Dims(other) != std::vector<int64_t>{n})
      return -1;
    *bias = other;
    return static_cast<int>(i);
  }
  return -1;
}

// Row-major [k, n_i] matrices (or [n_i] vectors with k = 1) side by side: [k, sum n_i].
Result<std::string> Concatenate(const SubgraphIr& ir, const std::vector<int>& values, int64_t k,
                                const std::vector<int64_t>& widths, int64_t element) {
  std::vector<std::string> parts;
  for (int v : values) {
    auto bytes = ir.values[v].bytes->ReadAll();
    if (!bytes.ok()) return bytes.status();
    parts.push_back(**bytes);
  }
  std::string out;
  for (int64_t r = 0; r < k; ++r) {
    for (size_t i = 0; i < parts.size(); ++i) {
      const auto row = static_cast<size_t>(widths[i] * element);
      out.append(parts[i], static_cast<size_t>(r) * row, row);
    }
  }
  return out;
}

// Merges one group of projections of activation `a`; false when the bytes cannot be read.
Result<bool> Merge(SubgraphIr* ir, int a, const std::vector<Projection>& group) {
  const IrIndex x(*ir);
  const auto a_dims = x.Dims(a);
  const int64_t k = a_dims.back();
  const int32_t dtype = ir->values[group[0].weight].info.dtype;
  const int64_t element = ElementBits(dtype) / 8;
  std::vector<int64_t> widths;
  std::vector<int> weights, biases;
  int64_t total = 0;
  for (const auto& p : group) {
    widths.push_back(p.n);
    weights.push_back(p.weight);
    if (p.bias >= 0) biases.push_back(p.bias);
    total += p.n;
  }
  auto w = Concatenate(*ir, weights, k, widths, element);
  if (!w.ok()) return w.status();
  const std::string base = ir->ops[group[0].matmul].name + "/merged";
  graph::TensorInfo w_info;
  w_info.dtype = dtype;
  w_info.shape.rank_known = true;
  w_info.shape.dims = {graph::Dim{k, ""}, graph::Dim{total, ""}};
  const int w_value =
      ir->AddWeight(base + ".weight", w_info, std::make_shared<const std::string>(std::move(*w)));
  std::vector<int64_t> out_dims = a_dims;
  out_dims.back() = total;
  std::vector<IrOp> ops;
  IrOp mm;
  mm.name = base;
  mm.op_type = "MatMul";
  mm.since_version = 13;
  mm.inputs = {a, w_value};
  int joined = NewValue(ir, base + "_output", dtype, out_dims);
  mm.outputs = {joined};
  ops.push_back(mm);
  if (!biases.empty()) {
    auto b = Concatenate(*ir, biases, 1, widths, element);
    if (!b.ok()) return b.status();
    graph::TensorInfo b_info;
    b_info.dtype = dtype;
    b_info.shape.rank_known = true;
    b_info.shape.dims = {graph::Dim{total, ""}};
    const int b_value =
        ir->AddWeight(base + ".bias", b_info, std::make_shared<const std::string>(std::move(*b)));
    IrOp add;
    add.name = base + "/bias";
    add.op_type = "Add";
    add.since_version = 14;
    add.inputs = {joined, b_value};
    joined = NewValue(ir, base + "_biased", dtype, out_dims);
    add.outputs = {joined};
    ops.push_back(add);
  }
  const int sizes = ir->AddInt64s(base + ".split", widths);
  IrOp split;
  split.name = base + "/split";
  split.op_type = "Split";
  split.since_version = 13;
  split.inputs = {joined, sizes};
  split.SetIntAttr("axis", static_cast<int64_t>(a_dims.size()) - 1);
  for (const auto& p : group) split.outputs.push_back(p.out);
  ops.push_back(split);
  for (const auto& p : group) {
    ir->ops[p.matmul].removed = true;
    if (p.add >= 0) ir->ops[p.add].removed = true;
  }
  for (auto& op : ops) ir->ops.push_back(std::move(op));
  return true;
}

}  // namespace

Result<int> MergeSiblingProjections(SubgraphIr* ir) {
  int merged = 0;
  for (int a = 0; a < static_cast<int>(ir->values.size()); ++a) {
    if (ir->values[a].kind == ValueKind::kWeight) continue;
    const IrIndex x(*ir);
    const auto a_dims = x.Dims(a);
    if (a_dims.size() < 2) continue;
    std::map<bool, std::vector<Projection>> by_bias;  // with bias / without
    for (size_t i = 0; i < ir->ops.size(); ++i) {
      const IrOp& op = ir->ops[i];
      if (op.removed || op.op_type != "MatMul" || op.inputs.size() != 2 || op.inputs[0] != a)
        continue;
      const int w = op.inputs[1];
      const auto w_dims = x.Dims(w);
      if (ir->values[w].kind != ValueKind::kWeight || !ir->values[w].bytes || w_dims.size() != 2 ||
          w_dims[0] != a_dims.back() || ir->values[w].info.dtype != ir->values[a].info.dtype)
        continue;
      Projection p;
      p.matmul = static_cast<int>(i);
      p.weight = w;
      p.n = w_dims[1];
      p.add = BiasAdd(*ir, x, op.outputs[0], p.n, &p.bias);
      p.out = p.add >= 0 ? ir->ops[p.add].outputs[0] : op.outputs[0];
      by_bias[p.add >= 0].push_back(p);
    }
    for (const auto& [with_bias, group] : by_bias) {
      if (group.size() < 2) continue;
      auto done = Merge(ir, a, group);
      if (!done.ok()) return done.status();
      merged += *done ? 1 : 0;
      break;  // the index changed: look at this activation again next round
    }
  }
  if (merged > 0) {
    ir->SortTopologically();
    ir->Compact();
  }
  return merged;
}

}  // namespace ortc::backends::cuda
