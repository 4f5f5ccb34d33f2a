// Recognises scaled dot-product attention in a lowering IR, as exporters write it, and replaces
// it with one FusedAttention op (codegen/attention_kernels.cpp):
//   MatMul(Q, K^T) -> [Div | Mul by a scalar] -> [Add mask | Where(cond, ., fill)] -> Softmax
//   (last axis) -> MatMul(., V)
// Transposes, Reshapes, Splits and Slices that only feed Q, K or V (head splitting, K^T, a fused
// QKV projection's slices) are absorbed as strided views, and a Transpose after the output
// (head merging) as a permutation: the kernel reads and writes through strides.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>

#include "cuda/lowering.h"
#include "cuda/lowering_ir_index.h"
#include "cuda/op_desc.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;

using Index = IrIndex;

std::vector<int64_t> Identity(size_t rank) {
  std::vector<int64_t> p(rank);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

std::vector<int64_t> TransposePerm(const IrOp& t, size_t rank) {
  const auto* a = t.Attr("perm");
  if (!a || a->ints_size() == 0) {
    std::vector<int64_t> p(rank);
    for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(rank - 1 - i);
    return p;
  }
  return {a->ints().begin(), a->ints().end()};
}

// A strided view of a source value: what a chain of Transpose, Reshape, Split and Slice ops
// makes of it, without copying.
struct View {
  std::vector<int64_t> dims, strides;
  int64_t offset = 0;
};

View Contiguous(const std::vector<int64_t>& dims) {
  View v{dims, std::vector<int64_t>(dims.size(), 1), 0};
  for (size_t i = dims.size(); i-- > 1;) v.strides[i - 1] = v.strides[i] * dims[i];
  return v;
}

// Reshape of a strided view: each group of old axes that merges or splits into new axes must
// be contiguous within itself. False when it is not (the view would need a copy).
bool Reshape(View* v, const std::vector<int64_t>& to) {
  std::vector<int64_t> strides(to.size(), 0);
  size_t i = 0, j = 0;
  while (i < v->dims.size() && j < to.size()) {
    size_t ii = i, jj = j;
    int64_t pi = v->dims[i], pj = to[j];
    while (pi != pj) {
      if (pi < pj) {
        if (++ii >= v->dims.size()) return false;
        pi *= v->dims[ii];
      } else {
        if (++jj >= to.size()) return false;
        pj *= to[jj];
      }
    }
    int64_t inner = -1;  // the stride the next inner non-unit axis must have
    for (size_t a = ii + 1; a-- > i;) {
      if (v->dims[a] == 1) continue;
      if (inner >= 0 && v->strides[a] != inner) return false;
      inner = v->strides[a] * v->dims[a];
    }
    int64_t stride = 0;  // the innermost non-unit old axis's stride
    for (size_t a = ii + 1; a-- > i;) {
      if (v->dims[a] != 1) {
        stride = v->strides[a];
        break;
      }
    }
    for (size_t b = jj + 1; b-- > j;) {
      strides[b] = stride;
      stride *= to[b];
    }
    i = ii + 1;
    j = jj + 1;
  }
  for (; i < v->dims.size(); ++i) {
    if (v->dims[i] != 1) return false;
  }
  for (; j < to.size(); ++j) {
    if (to[j] != 1) return false;
  }
  v->dims = to;
  v->strides = strides;
  return true;
}

std::optional<std::vector<int64_t>> IntConstant(const Index& x, int v) {
  if (v < 0 || x.ir.values[v].kind != ValueKind::kWeight || !x.ir.values[v].bytes)
    return std::nullopt;
  auto bytes = x.ir.values[v].bytes->ReadAll();
  if (!bytes.ok()) return std::nullopt;
  const std::string& b = **bytes;
  std::vector<int64_t> out;
  if (x.ir.values[v].info.dtype == onnx::TensorProto::INT64) {
    out.resize(b.size() / 8);
    std::memcpy(out.data(), b.data(), out.size() * 8);
  } else if (x.ir.values[v].info.dtype == onnx::TensorProto::INT32) {
    for (size_t i = 0; i + 4 <= b.size(); i += 4) {
      int32_t e;
      std::memcpy(&e, b.data() + i, 4);
      out.push_back(e);
    }
  } else {
    return std::nullopt;
  }
  return out;
}

// Applies one op of the chain to the view of its input; false when it cannot be a view.
bool Apply(const Index& x, const IrOp& op, int output, View* v) {
  const int64_t rank = static_cast<int64_t>(v->dims.size());
  if (op.op_type == "Transpose") {
    const auto p = TransposePerm(op, v->dims.size());
    if (static_cast<int64_t>(p.size()) != rank) return false;
    View t = *v;
    for (int64_t a = 0; a < rank; ++a) {
      if (p[a] < 0 || p[a] >= rank) return false;
      t.dims[a] = v->dims[p[a]];
      t.strides[a] = v->strides[p[a]];
    }
    *v = t;
    return true;
  }
  if (op.op_type == "Reshape") return Reshape(v, x.Dims(op.outputs[0]));
  int64_t axis = 0, start = 0, size = 0;
  if (op.op_type == "Split") {
    axis = op.IntAttr("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return false;
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      if (op.outputs[o] < 0) return false;
      const int64_t n = x.Dims(op.outputs[o])[axis];
      if (op.outputs[o] == output) {
        size = n;
        break;
      }
      start += n;
    }
  } else if (op.op_type == "Slice") {  // one axis, step 1, constant bounds
    const auto starts = op.inputs.size() > 1 ? IntConstant(x, op.inputs[1]) : std::nullopt;
    const auto ends = op.inputs.size() > 2 ? IntConstant(x, op.inputs[2]) : std::nullopt;
    auto axes = op.inputs.size() > 3 && op.inputs[3] >= 0 ? IntConstant(x, op.inputs[3])
                                                          : std::vector<int64_t>{0};
    const auto steps = op.inputs.size() > 4 && op.inputs[4] >= 0 ? IntConstant(x, op.inputs[4])
                                                                 : std::vector<int64_t>{1};
    if (!starts || !ends || !axes || !steps || starts->size() != 1 || axes->size() != 1 ||
        (*steps)[0] != 1)
      return false;
    axis = (*axes)[0] < 0 ? (*axes)[0] + rank : (*axes)[0];
    if (axis < 0 || axis >= rank) return false;
    const int64_t dim = v->dims[axis];
    start = (*starts)[0] < 0 ? (*starts)[0] + dim : (*starts)[0];
    start = std::clamp<int64_t>(start, 0, dim);
    size = x.Dims(op.outputs[0])[axis];
  } else {
    return false;
  }
  if (start + size > v->dims[axis]) return false;
  v->offset += start * v->strides[axis];
  v->dims[axis] = size;
  return true;
}

// The view through which an operand reads the source of the Transpose / Reshape / Split /
// Slice chain feeding it (each link read only by the next). Links the view cannot express stay
// in the graph: the source is then the value below them. Absorbed links go to `absorbed`
// (Splits to `splits`: removable only once every output of theirs is absorbed).
int TraceView(const Index& x, int operand, View* view, std::vector<int>* absorbed,
              std::vector<int>* splits) {
  std::vector<std::pair<int, int>> chain;  // (op, the value it produced on the way)
  int v = operand;
  for (int depth = 0; depth < 8; ++depth) {
    const int p = x.producer[v];
    if (p < 0 || !x.Internal(v) || x.ir.UseCount(v) != 1) break;
    const std::string& t = x.ir.ops[p].op_type;
    if (t != "Transpose" && t != "Reshape" && t != "Split" && t != "Slice") break;
    chain.push_back({p, v});
    v = x.ir.ops[p].inputs[0];
    if (t == "Split") break;  // its input is shared by the other outputs' chains
  }
  int source = v;
  View at = Contiguous(x.Dims(source));
  std::vector<int> taken;
  for (size_t c = chain.size(); c-- > 0;) {
    const auto [p, produced] = chain[c];
    View next = at;
    if (Apply(x, x.ir.ops[p], produced, &next)) {
      at = next;
      taken.push_back(p);
    } else {  // restart below this link: it stays a step of its own
      source = produced;
      at = Contiguous(x.Dims(source));
      taken.clear();
    }
  }
  for (int p : taken) (x.ir.ops[p].op_type == "Split" ? splits : absorbed)->push_back(p);
  *view = at;
  return source;
}

bool Broadcasts(const std::vector<int64_t>& mask, const std::vector<int64_t>& scores) {
  if (mask.size() > scores.size()) return false;
  const size_t pad = scores.size() - mask.size();
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] != 1 && mask[i] != scores[pad + i]) return false;
  }
  return true;
}

// Tries to fuse the attention ending in Softmax op `s`; true when it did.
bool FuseAt(SubgraphIr* ir, int s) {
  const Index x(*ir);
  const IrOp& softmax = ir->ops[s];
  if (softmax.inputs.empty() || softmax.outputs.size() != 1) return false;
  const int probs = softmax.outputs[0];
  const auto score_dims = x.Dims(softmax.inputs[0]);
  const size_t rank = score_dims.size();
  if (rank < 3 || rank > 4) return false;
  int64_t axis = softmax.IntAttr("axis", softmax.since_version < 13 ? 1 : -1);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis != static_cast<int64_t>(rank) - 1) return false;
  // Softmax -> MatMul(probs, V), the only reader.
  if (ir->values[probs].kind == ValueKind::kOutput || ir->UseCount(probs) != 1) return false;
  int pv = -1;
  for (size_t i = 0; i < ir->ops.size(); ++i) {
    const IrOp& op = ir->ops[i];
    if (!op.removed && op.op_type == "MatMul" && op.inputs.size() == 2 && op.inputs[0] == probs)
      pv = static_cast<int>(i);
  }
  if (pv < 0) return false;
  std::vector<int> fused = {s, pv};
  // Backwards from the Softmax: mask, scale, Q K^T.
  int v = softmax.inputs[0];
  int mask = -1, cond = -1;
  float fill = 0.f, scale = 1.f;
  bool keep_if_true = true;
  if (const IrOp* add = x.SoleProducer(v, "Add"); add && add->inputs.size() == 2) {
    for (int side = 0; side < 2; ++side) {
      const int p = x.producer[add->inputs[side]];
      if (p < 0) continue;
      const std::string& t = ir->ops[p].op_type;
      if (t == "MatMul" || t == "Div" || t == "Mul") {
        mask = add->inputs[1 - side];
        v = add->inputs[side];
        fused.push_back(x.OpIndex(add));
        break;
      }
    }
    if (mask < 0) return false;
  } else if (const IrOp* where = x.SoleProducer(v, "Where"); where && where->inputs.size() == 3) {
    const auto a = x.Scalar(where->inputs[1]), b = x.Scalar(where->inputs[2]);
    if (b && !a) {
      v = where->inputs[1];
      fill = *b;
    } else if (a && !b) {
      v = where->inputs[2];
      fill = *a;
      keep_if_true = false;
    } else {
      return false;
    }
    cond = where->inputs[0];
    fused.push_back(x.OpIndex(where));
  }
  if (const IrOp* div = x.SoleProducer(v, "Div"); div && div->inputs.size() == 2) {
    const auto c = x.Scalar(div->inputs[1]);
    if (!c || *c == 0.f) return false;
    scale = 1.f / *c;
    v = div->inputs[0];
    fused.push_back(x.OpIndex(div));
  } else if (const IrOp* mul = x.SoleProducer(v, "Mul"); mul && mul->inputs.size() == 2) {
    const auto c0 = x.Scalar(mul->inputs[0]), c1 = x.Scalar(mul->inputs[1]);
    if (!c0 && !c1) return false;
    scale = c1 ? *c1 : *c0;
    v = c1 ? mul->inputs[0] : mul->inputs[1];
    fused.push_back(x.OpIndex(mul));
  }
  const IrOp* qk = x.SoleProducer(v, "MatMul");
  if (!qk || qk->inputs.size() != 2) return false;
  fused.push_back(x.OpIndex(qk));
  const auto& pv_op = ir->ops[pv];
  const int out = pv_op.outputs[0];
  for (int t : {qk->inputs[0], qk->inputs[1], pv_op.inputs[1], out}) {
    if (x.Dims(t).size() != rank) return false;  // batch broadcasting stays unfused
  }
  for (int m : {mask, cond}) {
    if (m >= 0 && !Broadcasts(x.Dims(m), score_dims)) return false;
  }
  if (cond >= 0 && ir->values[cond].info.dtype != onnx::TensorProto::BOOL) return false;
  // Q, K (from K^T: the last two axes swapped) and V as views of what feeds them.
  View views[3];
  std::vector<int> splits;
  const int q = TraceView(x, qk->inputs[0], &views[0], &fused, &splits);
  const int k = TraceView(x, qk->inputs[1], &views[1], &fused, &splits);
  const int vv = TraceView(x, pv_op.inputs[1], &views[2], &fused, &splits);
  std::swap(views[1].dims[rank - 1], views[1].dims[rank - 2]);
  std::swap(views[1].strides[rank - 1], views[1].strides[rank - 2]);
  // The head-merging Transpose after the output, when it is the only reader.
  std::vector<int64_t> out_perm = Identity(rank);
  int result = out;
  if (ir->values[out].kind != ValueKind::kOutput && ir->UseCount(out) == 1) {
    for (size_t i = 0; i < ir->ops.size(); ++i) {
      const IrOp& t = ir->ops[i];
      if (t.removed || t.op_type != "Transpose" || t.inputs.empty() || t.inputs[0] != out) continue;
      out_perm = TransposePerm(t, rank);
      result = t.outputs[0];
      fused.push_back(static_cast<int>(i));
    }
  }
  IrOp op;
  op.name = softmax.name;
  op.op_type = "FusedAttention";
  op.domain = "ortc";
  op.since_version = 1;
  op.inputs = {q, k, vv, mask, cond};
  op.outputs = {result};
  op.SetFloatAttr("scale", scale);
  op.SetFloatAttr("fill", fill);
  for (int i = 0; i < 3; ++i) {
    std::vector<int64_t> dims(4 - rank, 1), strides(4 - rank, 0);
    dims.insert(dims.end(), views[i].dims.begin(), views[i].dims.end());
    strides.insert(strides.end(), views[i].strides.begin(), views[i].strides.end());
    const std::string name(1, "qkv"[i]);
    op.SetIntsAttr(name + "_shape", dims);
    op.SetIntsAttr(name + "_strides", strides);
    op.SetIntAttr(name + "_offset", views[i].offset);
  }
  op.SetIntsAttr("out_perm", out_perm);
  op.SetIntAttr("keep_if_true", keep_if_true ? 1 : 0);
  // Shape check through the generator's own rules before committing to the rewrite.
  ir->ops.push_back(op);
  auto desc = OpDescFromIr(*ir, ir->ops.back());
  const bool ok = desc.ok() && codegen::Unsupported(*desc).empty();
  ir->ops.pop_back();
  if (!ok) return false;
  // The new op takes the place of the last fused op (the output's producer), so every reader
  // of the result still comes after it.
  // A Split goes once this fusion reads every output of it.
  for (int sp : splits) {
    const IrOp& split = ir->ops[sp];
    const auto all = static_cast<size_t>(std::count(splits.begin(), splits.end(), sp));
    if (all == split.outputs.size() && std::find(fused.begin(), fused.end(), sp) == fused.end())
      fused.push_back(sp);
  }
  int last = 0;
  for (int f : fused) last = std::max(last, f);
  for (int f : fused) ir->ops[f].removed = true;
  ir->ops[last] = std::move(op);
  return true;
}

}  // namespace

int FuseAttention(SubgraphIr* ir) {
  int fused = 0;
  for (size_t i = 0; i < ir->ops.size(); ++i) {
    const IrOp& op = ir->ops[i];
    if (op.removed || op.op_type != "Softmax") continue;
    if (FuseAt(ir, static_cast<int>(i))) ++fused;
  }
  if (fused > 0) ir->Compact();
  return fused;
}

}  // namespace ortc::backends::cuda
