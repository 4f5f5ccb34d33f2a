// Operand views by index walking (see lowering_views.h): each movement op maps an index of its
// output back to an index of its input; the composition, fitted to offset + strides (+ a head
// group) and checked on every element (or, for large operands, on the corners, the axes and a
// deterministic sample), is the view. The fit is the proof: a chain it does not describe stays
// in the graph as ops of its own.
#include "cuda/compile/lowering_views.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "base/shape_math.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
constexpr size_t kMaxRank = 8;
// Operands up to this many elements are checked at every index; larger ones on a sample.
constexpr int64_t kCheckAll = int64_t{1} << 20;
constexpr int64_t kSamples = int64_t{1} << 18;

enum class Kind { kFlat, kTranspose, kExpand, kSlice, kSplit };

using Index = std::array<int64_t, kMaxRank>;

struct Link {
  Kind kind = Kind::kFlat;
  std::vector<int64_t> in_dims, out_dims;
  std::vector<int64_t> perm;           // kTranspose: out[a] = in[perm[a]]
  std::vector<int64_t> begin, step;    // kSlice: per input axis (identity on others)
  int64_t axis = 0, split_offset = 0;  // kSplit
  int op = -1;
  bool is_split = false;
  float scale = 1.f;
};

// The scalar factor of a Mul or Div by a single-element float constant, and its other input.
std::optional<std::pair<float, int>> ScaleLink(const IrIndex& x, const IrOp& op) {
  if (op.inputs.size() != 2) return std::nullopt;
  if (op.op_type == "Mul") {
    for (int side = 0; side < 2; ++side) {
      if (auto c = x.Scalar(op.inputs[side])) return std::make_pair(*c, op.inputs[1 - side]);
    }
  } else if (op.op_type == "Div") {
    if (auto c = x.Scalar(op.inputs[1]); c && *c != 0.f)
      return std::make_pair(1.f / *c, op.inputs[0]);
  }
  return std::nullopt;
}

// The link an op makes from its input (the value on the path) to `produced`; nullopt when the op
// is no movement op or its parameters are not constants.
std::optional<Link> MakeLink(const IrIndex& x, int op_index, int produced, bool allow_scale,
                             int* input) {
  const IrOp& op = x.ir.ops[op_index];
  Link l;
  l.op = op_index;
  l.out_dims = x.Dims(produced);
  const std::string& t = op.op_type;
  if (allow_scale && (t == "Mul" || t == "Div")) {
    auto s = ScaleLink(x, op);
    if (!s) return std::nullopt;
    l.scale = s->first;
    *input = s->second;
    l.in_dims = x.Dims(*input);
    if (l.in_dims != l.out_dims) return std::nullopt;  // a broadcasting Mul is no scale
    return l;
  }
  if (op.inputs.empty() || op.inputs[0] < 0) return std::nullopt;
  *input = op.inputs[0];
  l.in_dims = x.Dims(*input);
  const auto rank = static_cast<int64_t>(l.in_dims.size());
  if (l.in_dims.size() > kMaxRank || l.out_dims.size() > kMaxRank) return std::nullopt;
  if (t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze" || t == "Identity")
    return l;
  if (t == "Transpose") {
    l.kind = Kind::kTranspose;
    l.perm = op.IntsAttr("perm");
    if (l.perm.empty()) {
      for (int64_t a = rank; a-- > 0;) l.perm.push_back(a);
    }
    if (static_cast<int64_t>(l.perm.size()) != rank) return std::nullopt;
    for (int64_t p : l.perm) {
      if (p < 0 || p >= rank) return std::nullopt;
    }
    return l;
  }
  if (t == "Expand") {
    l.kind = Kind::kExpand;
    if (l.in_dims.size() > l.out_dims.size()) return std::nullopt;
    return l;
  }
  if (t == "Slice") {
    l.kind = Kind::kSlice;
    std::optional<std::vector<int64_t>> starts, ends, axes, steps;
    if (op.since_version < 10) {
      starts = op.IntsAttr("starts"), ends = op.IntsAttr("ends"), axes = op.IntsAttr("axes");
    } else {
      auto in = [&](size_t i) { return i < op.inputs.size() ? op.inputs[i] : -1; };
      starts = IntConstant(x.ir, in(1)), ends = IntConstant(x.ir, in(2));
      if (in(3) >= 0) axes = IntConstant(x.ir, in(3));
      if (in(4) >= 0) steps = IntConstant(x.ir, in(4));
    }
    if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
    if (!axes || axes->empty()) {
      axes = std::vector<int64_t>();
      for (size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
    }
    if (!steps || steps->empty()) steps = std::vector<int64_t>(starts->size(), 1);
    if (axes->size() != starts->size() || steps->size() != starts->size()) return std::nullopt;
    l.begin.assign(l.in_dims.size(), 0);
    l.step.assign(l.in_dims.size(), 1);
    for (size_t i = 0; i < axes->size(); ++i) {
      int64_t a = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
      if (a < 0 || a >= rank || (*steps)[i] == 0) return std::nullopt;
      const auto r = exec::ResolveSliceAxis(l.in_dims[a], (*starts)[i], (*ends)[i], (*steps)[i]);
      if (r.count != l.out_dims[a]) return std::nullopt;
      l.begin[a] = r.begin;
      l.step[a] = r.step;
    }
    return l;
  }
  if (t == "Split") {
    l.kind = Kind::kSplit;
    l.is_split = true;
    l.axis = op.IntAttr("axis", 0);
    if (l.axis < 0) l.axis += rank;
    if (l.axis < 0 || l.axis >= rank) return std::nullopt;
    for (int o : op.outputs) {
      if (o < 0) return std::nullopt;
      if (o == produced) return l;
      l.split_offset += x.Dims(o)[l.axis];
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// Maps an index of the link's output to one of its input.
void BackStep(const Link& l, Index* idx) {
  const size_t in_rank = l.in_dims.size(), out_rank = l.out_dims.size();
  Index in{};
  switch (l.kind) {
    case Kind::kFlat: {
      int64_t flat = 0;
      for (size_t a = 0; a < out_rank; ++a) flat = flat * l.out_dims[a] + (*idx)[a];
      for (size_t a = in_rank; a-- > 0;) {
        in[a] = flat % l.in_dims[a];
        flat /= l.in_dims[a];
      }
      break;
    }
    case Kind::kTranspose:
      for (size_t a = 0; a < out_rank; ++a) in[l.perm[a]] = (*idx)[a];
      break;
    case Kind::kExpand: {
      const size_t pad = out_rank - in_rank;
      for (size_t a = 0; a < in_rank; ++a) in[a] = l.in_dims[a] == 1 ? 0 : (*idx)[a + pad];
      break;
    }
    case Kind::kSlice:
      for (size_t a = 0; a < in_rank; ++a) in[a] = l.begin[a] + (*idx)[a] * l.step[a];
      break;
    case Kind::kSplit:
      in = *idx;
      in[l.axis] += l.split_offset;
      break;
  }
  *idx = in;
}

struct Walker {
  std::vector<Link> links;  // operand side first
  std::array<int64_t, 4> dims{};
  size_t operand_rank = 0;
  std::vector<int64_t> source_dims;

  int64_t Address(const std::array<int64_t, 4>& i4) const {
    Index idx{};
    for (size_t a = 0; a < operand_rank; ++a) idx[a] = i4[4 - operand_rank + a];
    for (const Link& l : links) BackStep(l, &idx);
    int64_t flat = 0;
    for (size_t a = 0; a < source_dims.size(); ++a) flat = flat * source_dims[a] + idx[a];
    return flat;
  }
};

int64_t Predicted(const OperandView& v, const std::array<int64_t, 4>& i) {
  return v.offset + i[0] * v.strides[0] + (i[1] / v.head_group) * v.strides[1] +
         i[2] * v.strides[2] + i[3] * v.strides[3];
}

// Fits offset, strides and head group to the walker, then checks the fit.
bool Fit(const Walker& w, OperandView* v) {
  v->dims = w.dims;
  const std::array<int64_t, 4> zero{};
  v->offset = w.Address(zero);
  for (int a = 0; a < 4; ++a) {
    v->strides[a] = 0;
    if (w.dims[a] < 2) continue;
    auto e = zero;
    e[a] = 1;
    v->strides[a] = w.Address(e) - v->offset;
  }
  v->head_group = 1;
  if (w.dims[1] > 1 && v->strides[1] == 0) {  // repeated heads: find the group size
    int64_t g = 1;
    auto e = zero;
    for (; g < w.dims[1]; ++g) {
      e[1] = g;
      if (w.Address(e) != v->offset) break;
    }
    if (w.dims[1] % g != 0) return false;
    v->head_group = g;
    v->strides[1] = g < w.dims[1] ? w.Address(e) - v->offset : 0;
  }
  for (int64_t s : v->strides) {
    if (s < 0) return false;
  }
  int64_t total = 1;
  for (int64_t d : w.dims) total *= d;
  auto check = [&](const std::array<int64_t, 4>& i) { return w.Address(i) == Predicted(*v, i); };
  auto unravel = [&](int64_t flat) {
    std::array<int64_t, 4> i{};
    for (int a = 4; a-- > 0;) {
      i[a] = flat % w.dims[a];
      flat /= w.dims[a];
    }
    return i;
  };
  if (total <= kCheckAll) {
    for (int64_t f = 0; f < total; ++f) {
      if (!check(unravel(f))) return false;
    }
    return true;
  }
  // Every index along each axis with the others at 0 or at their last value, then a sample.
  for (int a = 0; a < 4; ++a) {
    for (int corner = 0; corner < 16; ++corner) {
      std::array<int64_t, 4> i{};
      for (int b = 0; b < 4; ++b) i[b] = (corner >> b & 1) ? w.dims[b] - 1 : 0;
      for (int64_t k = 0; k < w.dims[a]; ++k) {
        i[a] = k;
        if (!check(i)) return false;
      }
    }
  }
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int64_t n = 0; n < kSamples; ++n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    if (!check(unravel(static_cast<int64_t>((state >> 11) % static_cast<uint64_t>(total)))))
      return false;
  }
  return true;
}

}  // namespace

OperandView TraceOperandView(const IrIndex& x, int operand, bool allow_scale) {
  // The chain, operand side first. A link may be absorbed (removed by the caller) while every
  // value from the operand down to its output is internal and read only by the chain; past a
  // value something else reads too (a head Transpose sliced three ways, a Split's input), the
  // links are read through but stay for their other readers (dead-op removal drops them once
  // every reader has read through them).
  std::vector<Link> chain;
  std::vector<int> inputs;  // the value each link reads
  std::vector<bool> owned;  // whether the link may be absorbed
  bool shared = false;
  int v = operand;
  for (int depth = 0; depth < 16; ++depth) {
    const int p = x.producer[v];
    if (p < 0) break;
    shared = shared || !x.Internal(v) || x.ir.UseCount(v) != 1;
    int input = -1;
    auto link = MakeLink(x, p, v, allow_scale, &input);
    if (!link || input < 0) break;
    owned.push_back(!shared && !link->is_split);
    // A Split's other outputs still need its input: nothing below it may be absorbed.
    shared = shared || link->is_split;
    chain.push_back(std::move(*link));
    inputs.push_back(input);
    v = input;
  }
  const auto operand_dims = x.Dims(operand);
  for (size_t k = chain.size() + 1; k-- > 0;) {
    Walker w;
    w.links.assign(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(k));
    w.operand_rank = operand_dims.size();
    if (w.operand_rank > 4) break;
    for (size_t a = 0; a < 4; ++a)
      w.dims[a] = a < 4 - w.operand_rank ? 1 : operand_dims[a - (4 - w.operand_rank)];
    const int source = k == 0 ? operand : inputs[k - 1];
    w.source_dims = x.Dims(source);
    OperandView view;
    if (!Fit(w, &view)) continue;
    view.source = source;
    for (size_t i = 0; i < k; ++i) {
      view.scale *= chain[i].scale;
      if (chain[i].is_split) {
        view.splits.push_back(chain[i].op);
      } else if (owned[i]) {
        view.absorbed.push_back(chain[i].op);
      }
    }
    return view;
  }
  // Not even the operand itself as a contiguous tensor (rank above 4): the caller refuses.
  OperandView none;
  none.source = -1;
  return none;
}

}  // namespace ortc::backends::cuda
