// Pattern selection for CUDA lowering: which IR ops become one library call, one fused
// elementwise kernel, a generated op or a view.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "cuda/compile/codegen/kernel_codegen.h"
#include "cuda/compile/codegen/kernel_text.h"
#include "cuda/compile/lowering.h"
#include "cuda/compile/op_desc.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;

bool IsView(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
         op == "Identity" || op == "Dropout";
}

struct Graph {
  const SubgraphIr& ir;
  std::vector<int> producer;              // per value: op index or -1
  std::vector<std::vector<int>> readers;  // per value: live op indices (each once)
  std::set<int> outputs;

  explicit Graph(const SubgraphIr& g)
      : ir(g), producer(g.values.size(), -1), readers(g.values.size()) {
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const auto& op = g.ops[i];
      if (op.removed) continue;
      for (int v : op.outputs) {
        if (v >= 0) producer[v] = static_cast<int>(i);
      }
      for (int v : op.inputs) {
        if (v >= 0 && (readers[v].empty() || readers[v].back() != static_cast<int>(i)))
          readers[v].push_back(static_cast<int>(i));
      }
    }
    outputs.insert(g.outputs.begin(), g.outputs.end());
  }
  // The one op reading v, when v is not a program output.
  int SoleReader(int v) const {
    if (outputs.count(v) || readers[v].size() != 1) return -1;
    return readers[v][0];
  }
  bool IsWeight(int v) const { return v >= 0 && ir.values[v].kind == ValueKind::kWeight; }
  std::vector<int64_t> Dims(int v) const { return StaticDims(ir.values[v].info); }
};

int64_t Elements(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// A constant holding one value per channel of an output of rank `rank`, in the shapes that
// broadcast it that way (numpy rules align trailing dims): for GEMM the last axis ([N], [1,N]);
// for convolutions axis 1, so [C,1,1] or [1,C,1,1] for a 4-D output but not [C] or [C,1],
// which would run along W or H.
bool IsChannelVector(const std::vector<int64_t>& d, int64_t channels, size_t rank, bool last_axis) {
  if (Elements(d) != channels || d.size() > rank) return false;
  if (channels == 1) return true;  // a single value: the same everywhere
  if (last_axis) return !d.empty() && d.back() == channels;
  // d's axis aligned with the output's axis 1; every other dim of d is 1.
  if (d.size() + 1 < rank) return false;
  return d[d.size() + 1 - rank] == channels;
}

// A Clip that clamps to [0, max] with constant bounds (ReLU6 and friends): its max, else
// nothing. Both cuDNN paths take it (clipped ReLU), any other lower bound stays a kernel.
std::optional<float> ReluClipMax(const lowering::SubgraphIr& ir, const IrOp& op) {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (op.since_version < 11) {
    auto d = OpDescFromIr(ir, op);
    if (!d.ok()) return std::nullopt;
    if (const auto* a = codegen::FindAttribute(*d, "min")) lo = a->f();
    if (const auto* a = codegen::FindAttribute(*d, "max")) hi = a->f();
  } else {
    if (op.inputs.size() < 3 || op.inputs[1] < 0 || op.inputs[2] < 0) return std::nullopt;
    auto d = OpDescFromIr(ir, op);
    if (!d.ok()) return std::nullopt;
    const auto min = codegen::ConstantValues(*d, 1), max = codegen::ConstantValues(*d, 2);
    if (!min || !max || min->size() != 1 || max->size() != 1) return std::nullopt;
    lo = static_cast<float>((*min)[0]);
    hi = static_cast<float>((*max)[0]);
  }
  if (lo != 0.f || !(hi > 0.f) || !std::isfinite(hi)) return std::nullopt;
  return hi;
}

// Conv/ConvTranspose (+ per-channel bias Add) (+ residual Add as z) (+ Relu or Clip [0, max]).
void MatchConv(const Graph& g, int i, std::vector<bool>* claimed, Unit* u) {
  const IrOp& conv = g.ir.ops[i];
  u->kind = Unit::kConv;
  u->ops = {i};
  u->out = conv.outputs[0];
  u->bias = conv.inputs.size() > 2 ? conv.inputs[2] : -1;
  const auto ydims = g.Dims(u->out);
  const int64_t channels = ydims.size() > 1 ? ydims[1] : 0;
  const bool transposed = conv.op_type == "ConvTranspose";
  while (true) {
    const int r = g.SoleReader(u->out);
    if (r < 0 || (*claimed)[r]) break;
    const IrOp& op = g.ir.ops[r];
    if (op.op_type == "Add" && op.inputs.size() == 2 && u->activation == fb::Activation::None) {
      const int other = op.inputs[0] == u->out ? op.inputs[1] : op.inputs[0];
      if (other == u->out) break;
      if (u->bias < 0 && g.IsWeight(other) &&
          IsChannelVector(g.Dims(other), channels, ydims.size(), false)) {
        u->bias = other;
      } else if (u->z < 0 && !transposed && !g.IsWeight(other) && g.Dims(other) == ydims &&
                 g.ir.values[other].info.dtype == g.ir.values[u->out].info.dtype) {
        u->z = other;
      } else {
        break;
      }
    } else if (op.op_type == "Relu") {
      u->activation = fb::Activation::Relu;
    } else if (op.op_type == "Clip" && !transposed) {
      const auto max = ReluClipMax(g.ir, op);
      if (!max) break;
      u->activation = fb::Activation::Clip;
      u->clip_min = 0.f;
      u->clip_max = *max;
    } else {
      break;
    }
    u->ops.push_back(r);
    u->out = op.outputs[0];
    if (u->activation != fb::Activation::None) break;
  }
}

// MatMul / Gemm (+ bias Add over the last axis) (+ Relu / Gelu).
void MatchGemm(const Graph& g, int i, std::vector<bool>* claimed, Unit* u) {
  const IrOp& mm = g.ir.ops[i];
  u->kind = Unit::kGemm;
  u->ops = {i};
  u->out = mm.outputs[0];
  const auto ydims = g.Dims(u->out);
  const int64_t n = ydims.empty() ? 0 : ydims.back();
  if (mm.op_type == "Gemm" && mm.inputs.size() > 2 && mm.inputs[2] >= 0 &&
      mm.FloatAttr("beta", 1.0f) == 1.0f && g.IsWeight(mm.inputs[2]) &&
      IsChannelVector(g.Dims(mm.inputs[2]), n, ydims.size(), true)) {
    u->bias = mm.inputs[2];
  }
  // A Reshape that only regroups rows (GPT-2's Conv1D: Gemm on [rows, n], reshaped back) is
  // looked through when an activation follows it.
  int view = -1, before_view = -1;
  while (true) {
    const int r = g.SoleReader(u->out);
    if (r < 0 || (*claimed)[r]) break;
    const IrOp& op = g.ir.ops[r];
    if (op.op_type == "Reshape" && view < 0 && !g.Dims(op.outputs[0]).empty() &&
        g.Dims(op.outputs[0]).back() == n) {
      view = r;
      before_view = u->out;
      u->ops.push_back(r);
      u->out = op.outputs[0];
      continue;
    }
    if (op.op_type == "Add" && op.inputs.size() == 2 && u->bias < 0 && view < 0 &&
        !(mm.op_type == "Gemm" && mm.inputs.size() > 2 && mm.inputs[2] >= 0)) {
      const int other = op.inputs[0] == u->out ? op.inputs[1] : op.inputs[0];
      if (!g.IsWeight(other) || !IsChannelVector(g.Dims(other), n, ydims.size(), true)) break;
      u->bias = other;
    } else if (op.op_type == "Relu") {
      u->activation = fb::Activation::Relu;
    } else if (op.op_type == "Gelu" && op.Attr("approximate") &&
               op.Attr("approximate")->s() == "tanh") {
      // cuBLASLt's GELU epilogue is the tanh approximation: ONNX's exact (erf) Gelu stays a
      // generated kernel.
      u->activation = fb::Activation::Gelu;
    } else {
      break;
    }
    u->ops.push_back(r);
    u->out = op.outputs[0];
    if (u->activation != fb::Activation::None) break;
  }
  if (view >= 0 && u->ops.back() == view) {  // nothing after the Reshape joined: drop it
    u->ops.pop_back();
    u->out = before_view;
  }
  // + residual (cuBLASLt's C with beta 1: D = A B + C + bias), also behind a Reshape that only
  // regroups the rows (GPT-2's Conv1D writes Gemm on [rows, n] and reshapes back). The
  // activation would apply after C, so only without one; Gemm's own C slot must be free.
  if (u->activation != fb::Activation::None ||
      (mm.op_type == "Gemm" && mm.inputs.size() > 2 && mm.inputs[2] >= 0 && u->bias < 0))
    return;
  int at = u->out;
  std::vector<int> residual_view;
  int r = g.SoleReader(at);
  if (r >= 0 && !(*claimed)[r] && g.ir.ops[r].op_type == "Reshape" &&
      !g.ir.ops[r].outputs.empty()) {
    residual_view.push_back(r);
    at = g.ir.ops[r].outputs[0];
    r = g.SoleReader(at);
  }
  if (r < 0 || (*claimed)[r] || g.ir.ops[r].op_type != "Add" || g.ir.ops[r].inputs.size() != 2)
    return;
  const IrOp& add = g.ir.ops[r];
  const int other = add.inputs[0] == at ? add.inputs[1] : add.inputs[0];
  if (other == at || g.IsWeight(other) || g.Dims(other) != g.Dims(add.outputs[0]) ||
      g.Dims(at) != g.Dims(add.outputs[0]) ||
      g.ir.values[other].info.dtype != g.ir.values[u->out].info.dtype)
    return;
  // One GEMM: batched MatMuls need a C per batch, which the call does not describe.
  const auto a = g.Dims(mm.inputs[0]), b = g.Dims(mm.inputs[1]);
  if (mm.op_type == "MatMul" && (b.size() != 2 || a.size() < 2)) return;
  for (int v : residual_view) u->ops.push_back(v);
  u->ops.push_back(r);
  u->z = other;
  u->out = add.outputs[0];
}

}  // namespace

Result<std::vector<Unit>> SelectUnits(const SubgraphIr& ir) {
  Graph g(ir);
  const int n = static_cast<int>(ir.ops.size());
  std::vector<bool> claimed(n, false);
  std::vector<Unit> units;
  // Library calls.
  for (int i = 0; i < n; ++i) {
    const IrOp& op = ir.ops[i];
    if (op.removed || claimed[i]) continue;
    Unit u;
    if ((op.op_type == "Conv" || op.op_type == "ConvTranspose") && op.inputs.size() >= 2 &&
        g.IsWeight(op.inputs[1])) {
      MatchConv(g, i, &claimed, &u);
    } else if (op.op_type == "MatMul" || op.op_type == "Gemm") {
      MatchGemm(g, i, &claimed, &u);
    } else if (op.op_type == "StridedMatMul") {  // attention's GEMMs: nothing to fuse into them
      u.kind = Unit::kGemm;
      u.ops = {i};
      u.out = op.outputs[0];
    } else {
      continue;
    }
    for (int k : u.ops) claimed[k] = true;
    units.push_back(std::move(u));
  }
  // Elementwise DAGs: an op joins the group of an operand's producer when its output has the
  // group's shape and all its other operands existed before the group's first op (so the group
  // runs as one kernel at its last op without reordering around other steps).
  std::vector<int> group_of(n, -1);
  std::vector<Unit> fused;
  std::vector<std::vector<int>> readers(ir.values.size());  // live ops reading each value
  for (int k = 0; k < n; ++k)
    if (!ir.ops[k].removed)
      for (int v : ir.ops[k].inputs)
        if (v >= 0) readers[v].push_back(k);
  for (int i = 0; i < n; ++i) {
    const IrOp& op = ir.ops[i];
    if (op.removed || claimed[i] || !codegen::IsElementwise(op.op_type) || op.outputs.size() != 1)
      continue;
    const auto dims = g.Dims(op.outputs[0]);
    int join = -1;
    for (int v : op.inputs) {
      const int p = v >= 0 ? g.producer[v] : -1;
      if (p < 0 || group_of[p] < 0) continue;
      const Unit& cand = fused[group_of[p]];
      if (g.Dims(ir.ops[cand.ops[0]].outputs[0]) != dims) continue;
      bool ok = true;
      for (int w : op.inputs) {
        const int q = w >= 0 ? g.producer[w] : -1;
        if (q >= 0 && group_of[q] != group_of[p] && q > cand.ops[0]) ok = false;
      }
      if (ok) {
        join = group_of[p];
        break;
      }
    }
    if (join < 0) {
      join = static_cast<int>(fused.size());
      fused.push_back(Unit{Unit::kFused, {}, -1, -1, fb::Activation::None, -1});
    }
    fused[join].ops.push_back(i);
    group_of[i] = join;
    claimed[i] = true;
    // An op reading two groups of its shape (a DAG with two roots: Where(keep, past, 0) +
    // one_hot * row) merges them: the union runs as one kernel here, at its last op. That needs
    // no op outside the union before this one to read a value of the union (directly or through
    // others: the first such reader would be caught), else that op would wait for the kernel
    // its own result feeds.
    for (int v : op.inputs) {
      const int p = v >= 0 ? g.producer[v] : -1;
      const int other = p >= 0 ? group_of[p] : -1;
      if (other < 0 || other == join || fused[other].ops.empty() ||
          g.Dims(ir.ops[fused[other].ops[0]].outputs[0]) != dims)
        continue;
      bool ok = true;
      for (int grp : {join, other})
        for (int k : fused[grp].ops)
          for (int o : ir.ops[k].outputs)
            for (int r : o >= 0 ? readers[o] : std::vector<int>{})
              if (r < i && group_of[r] != join && group_of[r] != other) ok = false;
      if (!ok) continue;
      for (int k : fused[other].ops) group_of[k] = join;
      fused[join].ops.insert(fused[join].ops.end(), fused[other].ops.begin(),
                             fused[other].ops.end());
      std::sort(fused[join].ops.begin(), fused[join].ops.end());
      fused[other].ops.clear();
    }
  }
  for (auto& f : fused)
    if (!f.ops.empty()) units.push_back(std::move(f));
  for (int i = 0; i < n; ++i) {
    const IrOp& op = ir.ops[i];
    if (op.removed || claimed[i]) continue;
    Unit u;
    u.ops = {i};
    if (IsView(op.op_type)) {
      u.kind = Unit::kView;
    } else if (codegen::HasKernel(op.op_type)) {
      u.kind = Unit::kOp;
    } else {
      return NotImplemented("CUDA lowering has no kernel for " + op.op_type + " (node " + op.name +
                            ")");
    }
    units.push_back(std::move(u));
  }
  // Execution order: units topologically sorted, ties by their first op (deterministic).
  std::vector<int> unit_of(n, -1);
  for (size_t u = 0; u < units.size(); ++u) {
    for (int k : units[u].ops) unit_of[k] = static_cast<int>(u);
  }
  std::vector<std::set<int>> deps(units.size());
  std::vector<std::vector<int>> users(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    for (int k : units[u].ops) {
      for (int v : ir.ops[k].inputs) {
        const int p = v >= 0 ? g.producer[v] : -1;
        if (p >= 0 && unit_of[p] >= 0 && unit_of[p] != static_cast<int>(u) &&
            deps[u].insert(unit_of[p]).second) {
          users[unit_of[p]].push_back(static_cast<int>(u));
        }
      }
    }
  }
  std::set<std::pair<int, int>> ready;  // (first op, unit)
  std::vector<size_t> waiting(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    waiting[u] = deps[u].size();
    if (waiting[u] == 0) ready.insert({units[u].ops[0], static_cast<int>(u)});
  }
  std::vector<Unit> ordered;
  while (!ready.empty()) {
    const int u = ready.begin()->second;
    ready.erase(ready.begin());
    ordered.push_back(units[u]);
    for (int w : users[u]) {
      if (--waiting[w] == 0) ready.insert({units[w].ops[0], w});
    }
  }
  if (ordered.size() != units.size())
    return Status(StatusCode::kEpFail,
                  "CUDA lowering formed a cycle between fused steps of " + ir.name);
  units = std::move(ordered);
  return units;
}

}  // namespace ortc::backends::cuda
