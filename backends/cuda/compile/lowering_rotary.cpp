// Recognises rotary position embeddings in a lowering IR by what they compute and replaces each
// with one RotaryEmbedding op (codegen/rotary_kernels.cpp) that reads x through a strided view.
//
// Llama-family code writes q * cos + rotate_half(q) * sin with rotate_half(x) =
// Concat(-x[..., D/2:], x[..., :D/2]); GPT-NeoX and Phi rotate only the first rotary_dim columns
// and Concat the rest back unchanged. Exporters spell this in several ways (operand orders, a
// Sub, the Neg before or after a Mul, a Split instead of two Slices), so no node sequence is
// matched. Instead, around each candidate output, the largest subgraph of Add/Sub/Mul/Neg/
// Slice/Split/Concat ops read only inside it is taken; x is a value it slices, of the output's
// shape; the ops depending on x are the candidate; their other inputs must be two tables (cos
// and sin, broadcast over x) and scalar constants. Since every op of that kind works row by row
// along the last axis, the candidate is one function of a row of x, cos and sin: it is
// evaluated on random rows and must equal the rotation, with either table as cos, on every one.
// A table holds one entry per rotated column (Llama-family code: the angles repeated for both
// halves) or one per rotated pair (ONNX Runtime's and GenAI's cos_cache/sin_cache, applied to
// each half as (a cos - b sin, b cos + a sin)): both widths are tried.
// A sign on the wrong half, slices that are not the halves or a Concat in the other order
// compute something else and stay as they are.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "base/shape_math.h"
#include "cuda/compile/codegen/kernel_codegen.h"
#include "cuda/compile/lowering.h"
#include "cuda/compile/lowering_ir_index.h"
#include "cuda/compile/lowering_views.h"
#include "cuda/compile/op_desc.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;
using Row = std::vector<double>;

// A rotary embedding is about ten ops; the bound keeps the search small around unrelated Adds.
constexpr size_t kMaxRegion = 24;
constexpr int kTrials = 4;

bool IsFloat(int32_t t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16 ||
         t == onnx::TensorProto::BFLOAT16;
}

bool RegionOp(const std::string& t) {
  return t == "Add" || t == "Sub" || t == "Mul" || t == "Neg" || t == "Slice" || t == "Split" ||
         t == "Concat";
}

// The inputs an op computes on (Slice's starts/ends/axes/steps and Split's sizes are
// parameters).
std::vector<int> DataInputs(const IrOp& op) {
  if (op.op_type == "Slice" || op.op_type == "Split")
    return op.inputs.empty() ? std::vector<int>{} : std::vector<int>{op.inputs[0]};
  return op.inputs;
}

// The live readers of every value, each op once per value.
struct Readers {
  std::vector<std::vector<int>> of;
  explicit Readers(const SubgraphIr& ir) : of(ir.values.size()) {
    for (size_t i = 0; i < ir.ops.size(); ++i) {
      if (ir.ops[i].removed) continue;
      for (int v : ir.ops[i].inputs) {
        if (v >= 0 && (of[v].empty() || of[v].back() != static_cast<int>(i)))
          of[v].push_back(static_cast<int>(i));
      }
    }
  }
};

// A Slice as (begin, step) on its input's last axis; nullopt unless every other axis is taken
// whole and the parameters are constants.
std::optional<std::pair<int64_t, int64_t>> LastAxisSlice(const IrIndex& x, const IrOp& op) {
  const auto in = x.Dims(op.inputs[0]), out = x.Dims(op.outputs[0]);
  const auto rank = static_cast<int64_t>(in.size());
  if (rank == 0 || out.size() != in.size()) return std::nullopt;
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  auto attr = [&](const char* n) -> std::optional<std::vector<int64_t>> {
    const auto* a = op.Attr(n);
    if (!a) return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  };
  if (op.since_version < 10) {
    starts = attr("starts"), ends = attr("ends"), axes = attr("axes");
  } else {
    auto input = [&](size_t i) { return i < op.inputs.size() ? op.inputs[i] : -1; };
    starts = IntConstant(x.ir, input(1)), ends = IntConstant(x.ir, input(2));
    if (input(3) >= 0) axes = IntConstant(x.ir, input(3));
    if (input(4) >= 0) steps = IntConstant(x.ir, input(4));
  }
  if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
  if (!axes || axes->empty()) {
    axes = std::vector<int64_t>();
    for (size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (!steps || steps->empty()) steps = std::vector<int64_t>(starts->size(), 1);
  if (axes->size() != starts->size() || steps->size() != starts->size()) return std::nullopt;
  std::pair<int64_t, int64_t> last{0, 1};
  for (size_t i = 0; i < axes->size(); ++i) {
    int64_t a = (*axes)[i];
    if (!exec::NormaliseAxis(a, rank) || (*steps)[i] == 0) return std::nullopt;
    const auto r = exec::ResolveSliceAxis(in[a], (*starts)[i], (*ends)[i], (*steps)[i]);
    if (r.count != out[a]) return std::nullopt;
    if (a == rank - 1) {
      last = {r.begin, r.step};
    } else if (r.begin != 0 || r.step != 1 || r.count != in[a]) {
      return std::nullopt;  // a slice along another axis: not row by row
    }
  }
  return last;
}

bool OnLastAxis(const IrOp& op, size_t rank) {
  int64_t axis = op.IntAttr("axis", op.op_type == "Split" ? 0 : -1);
  return exec::NormaliseAxis(axis, static_cast<int64_t>(rank)) &&
         axis == static_cast<int64_t>(rank) - 1;
}

// The candidate: the ops computing the output from x, the tables and the scalars they read.
struct Candidate {
  int x = -1;
  std::vector<int> ops;  // ascending: an order in which each op's inputs exist
  std::vector<int> tables;
  std::map<int, double> scalars;
};

// Every value the ops compute, as one row along the last axis, from rows of x and the tables
// (nullopt where an op does something a row cannot describe).
std::optional<Row> Evaluate(const IrIndex& x, const Candidate& c, const std::map<int, Row>& leaves,
                            int result) {
  std::map<int, Row> rows = leaves;
  for (const auto& [v, s] : c.scalars) rows[v] = Row{s};
  for (int i : c.ops) {
    const IrOp& op = x.ir.ops[i];
    std::vector<const Row*> in;
    for (int v : DataInputs(op)) {
      auto it = rows.find(v);
      if (it == rows.end()) return std::nullopt;
      in.push_back(&it->second);
    }
    const std::string& t = op.op_type;
    if (t == "Split") {
      size_t at = 0;
      for (int o : op.outputs) {
        if (o < 0) return std::nullopt;
        const auto n = static_cast<size_t>(x.Dims(o).back());
        if (at + n > in[0]->size()) return std::nullopt;
        rows[o] = Row(in[0]->begin() + static_cast<std::ptrdiff_t>(at),
                      in[0]->begin() + static_cast<std::ptrdiff_t>(at + n));
        at += n;
      }
      if (at != in[0]->size()) return std::nullopt;
      continue;
    }
    const auto n = static_cast<size_t>(x.Dims(op.outputs[0]).back());
    Row out;
    if (t == "Neg") {
      if (in.size() != 1 || in[0]->size() != n) return std::nullopt;
      for (double v : *in[0]) out.push_back(-v);
    } else if (t == "Add" || t == "Sub" || t == "Mul") {
      if (in.size() != 2) return std::nullopt;
      for (const Row* r : in) {
        if (r->size() != n && r->size() != 1) return std::nullopt;
      }
      for (size_t k = 0; k < n; ++k) {
        const double a = (*in[0])[in[0]->size() == 1 ? 0 : k];
        const double b = (*in[1])[in[1]->size() == 1 ? 0 : k];
        out.push_back(t == "Add" ? a + b : t == "Sub" ? a - b : a * b);
      }
    } else if (t == "Slice") {
      const auto s = LastAxisSlice(x, op);
      if (!s) return std::nullopt;
      for (size_t k = 0; k < n; ++k) {
        const int64_t at = s->first + static_cast<int64_t>(k) * s->second;
        if (at < 0 || at >= static_cast<int64_t>(in[0]->size())) return std::nullopt;
        out.push_back((*in[0])[at]);
      }
    } else if (t == "Concat") {
      for (const Row* r : in) out.insert(out.end(), r->begin(), r->end());
    } else {
      return std::nullopt;
    }
    if (out.size() != n) return std::nullopt;
    rows[op.outputs[0]] = std::move(out);
  }
  auto it = rows.find(result);
  if (it == rows.end()) return std::nullopt;
  return it->second;
}

// Whether the candidate computes the rotation of its first `rotary` columns with `cos` and `sin`
// (each a table of c.tables, `width` entries: rotary, or rotary / 2 shared by both halves) and
// passes the other columns through, on every random row.
bool ComputesRotary(const IrIndex& x, const Candidate& c, int result, int cos, int sin,
                    int64_t rotary, int64_t width) {
  const auto d = static_cast<size_t>(x.Dims(c.x).back());
  const auto r = static_cast<size_t>(rotary), half = r / 2, w = static_cast<size_t>(width);
  auto column = [&](size_t k) { return w == r || k < half ? k : k - half; };
  std::mt19937 rng(0x5eed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto random = [&](size_t n) {
    Row v(n);
    for (double& e : v) e = u(rng);
    return v;
  };
  for (int trial = 0; trial < kTrials; ++trial) {
    std::map<int, Row> leaves = {{c.x, random(d)}, {cos, random(w)}, {sin, random(w)}};
    const auto got = Evaluate(x, c, leaves, result);
    if (!got || got->size() != d) return false;
    const Row& q = leaves[c.x];
    const Row& co = leaves[cos];
    const Row& si = leaves[sin];
    for (size_t k = 0; k < d; ++k) {
      double want = q[k];
      if (k < half) want = q[k] * co[column(k)] - q[k + half] * si[column(k)];
      if (k >= half && k < r) want = q[k] * co[column(k)] + q[k - half] * si[column(k)];
      if (!(std::fabs((*got)[k] - want) <= 1e-9 * (1 + std::fabs(want)))) return false;
    }
  }
  return true;
}

struct Match {
  Candidate c;
  int cos = -1, sin = -1;
  int64_t rotary = 0;
};

// The largest set of region ops, starting at `root`, whose outputs are read only inside it.
std::vector<int> GrowRegion(const IrIndex& x, const Readers& readers, int root) {
  std::vector<int> region = {root};
  std::set<int> in_region = {root};
  for (bool grew = true; grew && region.size() < kMaxRegion;) {
    grew = false;
    for (size_t k = 0; k < region.size() && region.size() < kMaxRegion; ++k) {
      for (int v : DataInputs(x.ir.ops[region[k]])) {
        const int p = v >= 0 ? x.producer[v] : -1;
        if (p < 0 || in_region.count(p) || !RegionOp(x.ir.ops[p].op_type)) continue;
        bool inside = true;
        for (int o : x.ir.ops[p].outputs) {
          if (o < 0) continue;
          if (!x.Internal(o) || readers.of[o].empty()) inside = false;
          for (int r : readers.of[o]) inside = inside && in_region.count(r) > 0;
        }
        if (!inside) continue;
        region.push_back(p);
        in_region.insert(p);
        grew = true;
      }
    }
  }
  return region;
}

// The region's ops that depend on `xv`, with their leaves classified; nullopt when the shapes
// are not those of a row-by-row function of x.
std::optional<Candidate> CandidateFor(const IrIndex& x, const std::vector<int>& region, int xv) {
  const auto xd = x.Dims(xv);
  const size_t rank = xd.size();
  std::set<int> depends = {xv};
  std::set<int> chosen;
  for (bool grew = true; grew;) {
    grew = false;
    for (int i : region) {
      if (chosen.count(i)) continue;
      const auto in = DataInputs(x.ir.ops[i]);
      if (std::none_of(in.begin(), in.end(), [&](int v) { return depends.count(v) > 0; })) continue;
      chosen.insert(i);
      for (int o : x.ir.ops[i].outputs) depends.insert(o);
      grew = true;
    }
  }
  Candidate c;
  c.x = xv;
  c.ops.assign(chosen.begin(), chosen.end());
  std::set<int> tables;
  for (int i : c.ops) {
    const IrOp& op = x.ir.ops[i];
    for (int o : op.outputs) {
      if (o < 0) return std::nullopt;
      const auto od = x.Dims(o);
      // Every value computed from x keeps x's leading axes: the ops work on rows.
      if (od.size() != rank || !std::equal(od.begin(), od.end() - 1, xd.begin()) ||
          !IsFloat(x.ir.values[o].info.dtype))
        return std::nullopt;
    }
    if ((op.op_type == "Concat" || op.op_type == "Split") && !OnLastAxis(op, rank))
      return std::nullopt;
    if (op.op_type == "Slice" && !LastAxisSlice(x, op)) return std::nullopt;
    for (int v : DataInputs(op)) {
      if (v < 0) return std::nullopt;
      if (depends.count(v)) continue;
      if (auto s = x.Scalar(v)) {
        c.scalars[v] = *s;
        continue;
      }
      const auto td = x.Dims(v);
      if (td.empty() || td.size() > rank || !IsFloat(x.ir.values[v].info.dtype))
        return std::nullopt;
      // A table broadcasts over x's leading axes (right-aligned).
      for (size_t a = 0; a + 1 < td.size(); ++a) {
        const int64_t want = xd[rank - td.size() + a];
        if (td[a] != 1 && td[a] != want) return std::nullopt;
      }
      tables.insert(v);
    }
  }
  c.tables.assign(tables.begin(), tables.end());
  return c;
}

std::optional<Match> MatchAt(const IrIndex& x, const Readers& readers, int root) {
  const IrOp& r = x.ir.ops[root];
  if (r.outputs.size() != 1 || r.outputs[0] < 0) return std::nullopt;
  const int result = r.outputs[0];
  const auto out_dims = x.Dims(result);
  if (out_dims.empty() || out_dims.size() > 4 || !IsFloat(x.ir.values[result].info.dtype))
    return std::nullopt;
  const auto region = GrowRegion(x, readers, root);
  // x: a value the region slices (or splits), of the output's shape.
  std::vector<int> xs;
  for (int i : region) {
    const IrOp& op = x.ir.ops[i];
    if (op.op_type != "Slice" && op.op_type != "Split") continue;
    const int v = op.inputs.empty() ? -1 : op.inputs[0];
    if (v >= 0 && x.Dims(v) == out_dims && x.ir.values[v].kind != ValueKind::kWeight &&
        std::find(xs.begin(), xs.end(), v) == xs.end())
      xs.push_back(v);
  }
  for (int xv : xs) {
    auto c = CandidateFor(x, region, xv);
    if (!c || c->tables.size() != 2 ||
        std::find(c->ops.begin(), c->ops.end(), root) == c->ops.end())
      continue;
    const int64_t width = x.Dims(c->tables[0]).back();
    if (x.Dims(c->tables[1]).back() != width) continue;
    for (const int64_t rotary : {width, 2 * width}) {
      if (rotary < 2 || rotary % 2 != 0 || rotary > out_dims.back()) continue;
      for (int k = 0; k < 2; ++k) {
        const int cos = c->tables[k], sin = c->tables[1 - k];
        if (ComputesRotary(x, *c, result, cos, sin, rotary, width))
          return Match{*c, cos, sin, rotary};
      }
    }
  }
  return std::nullopt;
}

// A Split goes once nothing reads its outputs any more (its readers became views).
void DropUnreadSplit(SubgraphIr* ir, int split) {
  const IrIndex x(*ir);
  for (int o : ir->ops[split].outputs) {
    if (o >= 0 && (!x.Internal(o) || ir->UseCount(o) > 0)) return;
  }
  ir->ops[split].removed = true;
}

// Replaces the match by one RotaryEmbedding op reading x through a view; false (the IR as it
// was) when no view or kernel fits.
bool Rewrite(SubgraphIr* ir, int root, const Match& m) {
  IrOp op;
  op.name = ir->ops[root].name;
  op.op_type = "RotaryEmbedding";
  op.domain = "ortc";
  op.since_version = 1;
  op.inputs = {m.c.x, m.cos, m.sin};
  op.outputs = {ir->ops[root].outputs[0]};
  op.SetIntAttr("rotary_dim", m.rotary);
  // The new op takes the last matched op's place: x and the tables exist before it, and every
  // reader of the result comes after it.
  const int last = *std::max_element(m.c.ops.begin(), m.c.ops.end());
  const IrOp saved = ir->ops[last];
  for (int i : m.c.ops) ir->ops[i].removed = true;
  ir->ops[last] = op;
  auto restore = [&] {
    ir->ops[last] = saved;
    for (int i : m.c.ops) ir->ops[i].removed = false;
    return false;
  };
  // With the matched ops gone, the new op is x's only reader when the matched ops were, and the
  // movement ops before x (head transposes, a fused projection's Split) become its view.
  const IrIndex x(*ir);
  const OperandView view = TraceOperandView(x, m.c.x, false);
  if (view.source < 0) return restore();
  IrOp& placed = ir->ops[last];
  placed.inputs[0] = view.source;
  placed.SetIntsAttr("x_shape", {view.dims.begin(), view.dims.end()});
  placed.SetIntsAttr("x_strides", {view.strides.begin(), view.strides.end()});
  placed.SetIntAttr("x_offset", view.offset);
  placed.SetIntAttr("x_head_group", view.head_group);
  auto desc = OpDescFromIr(*ir, placed);
  if (!desc.ok() || !codegen::Unsupported(*desc).empty()) return restore();
  for (int i : view.absorbed) ir->ops[i].removed = true;
  for (int s : view.splits) DropUnreadSplit(ir, s);
  return true;
}

}  // namespace

int FuseRotaryEmbeddings(SubgraphIr* ir) {
  int fused = 0;
  auto x = std::make_unique<IrIndex>(*ir);
  auto readers = std::make_unique<Readers>(*ir);
  // Last op first: a partial rotary's Concat is met before the Add inside it.
  for (size_t i = ir->ops.size(); i-- > 0;) {
    const IrOp& op = ir->ops[i];
    if (op.removed || (op.op_type != "Add" && op.op_type != "Sub" && op.op_type != "Concat"))
      continue;
    const auto m = MatchAt(*x, *readers, static_cast<int>(i));
    if (!m || !Rewrite(ir, static_cast<int>(i), *m)) continue;
    ++fused;
    x = std::make_unique<IrIndex>(*ir);
    readers = std::make_unique<Readers>(*ir);
  }
  if (fused > 0) ir->Compact();
  return fused;
}

}  // namespace ortc::backends::cuda
