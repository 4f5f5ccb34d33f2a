// Recognises transformer formulas exporters write out op by op and replaces each with the one
// op the CUDA backend runs best:
//  - GELU (erf or tanh form, in any operand order) -> Gelu: found by evaluating the elementwise
//    DAG around each Erf/Tanh on sample points, so any algebraically equal arrangement matches;
//    the tanh form then becomes a cuBLASLt epilogue of the GEMM before it.
//  - LayerNorm as ReduceMean, Sub, Pow (or Mul), ReduceMean, Add eps, Sqrt, Div (* gamma
//    + beta) -> LayerNormalization (one row kernel instead of seven steps).
//  - RMSNorm -> RMSNormalization (lowering_rmsnorm.cpp), after the LayerNorm, whose tail it
//    would otherwise match.
//  - LayerNormalization of an Add of two activations -> AddLayerNormalization (one kernel,
//    storing the sum too when the residual stream reads it), unless the Add is a GEMM's
//    residual, which the GEMM's epilogue takes (lowering_patterns.cpp).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "cuda/compile/lowering.h"
#include "cuda/compile/lowering_ir_index.h"
#include "cuda/compile/op_desc.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;

using Index = IrIndex;

// ---- GELU by evaluation ----

bool IsScalarMath(const std::string& t) {
  return t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Pow" || t == "Tanh" ||
         t == "Erf" || t == "Sqrt";
}

// The ops computing `end` from `root` through scalar math whose other operands are scalar
// constants: false when some other value feeds in.
bool ScalarDag(const Index& x, int end, int root, std::set<int>* ops) {
  std::vector<int> stack = {end};
  std::set<int> seen;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    if (v == root || !seen.insert(v).second || x.Scalar(v)) continue;
    const int p = x.producer[v];
    if (p < 0 || !IsScalarMath(x.ir.ops[p].op_type)) return false;
    ops->insert(p);
    for (int in : x.ir.ops[p].inputs) stack.push_back(in);
  }
  return !ops->empty();
}

// Values `end` depends on through scalar math, nearest first: the candidates for its input.
std::vector<int> Ancestors(const Index& x, int end) {
  std::vector<int> order = {end};
  for (size_t i = 0; i < order.size() && order.size() < 64; ++i) {
    const int p = x.producer[order[i]];
    if (p < 0 || !IsScalarMath(x.ir.ops[p].op_type)) continue;
    for (int in : x.ir.ops[p].inputs) {
      if (in >= 0 && !x.Scalar(in) && std::find(order.begin(), order.end(), in) == order.end())
        order.push_back(in);
    }
  }
  order.erase(order.begin());
  return order;
}

std::optional<double> Evaluate(const Index& x, int v, int root, double at,
                               std::map<int, double>* memo, int depth = 0) {
  if (v == root) return at;
  // A formula is a few ops deep; a chain of 100k ops would overflow the stack.
  if (depth > 64) return std::nullopt;
  if (auto it = memo->find(v); it != memo->end()) return it->second;
  if (auto c = x.Scalar(v)) return *c;
  const int p = x.producer[v];
  if (p < 0) return std::nullopt;
  const IrOp& op = x.ir.ops[p];
  std::vector<double> a;
  for (int in : op.inputs) {
    auto r = Evaluate(x, in, root, at, memo, depth + 1);
    if (!r) return std::nullopt;
    a.push_back(*r);
  }
  const std::string& t = op.op_type;
  double r;
  if (t == "Tanh" || t == "Erf" || t == "Sqrt") {
    if (a.size() != 1) return std::nullopt;
    r = t == "Tanh" ? std::tanh(a[0]) : t == "Erf" ? std::erf(a[0]) : std::sqrt(a[0]);
  } else {
    if (a.size() != 2) return std::nullopt;
    r = t == "Add"   ? a[0] + a[1]
        : t == "Sub" ? a[0] - a[1]
        : t == "Mul" ? a[0] * a[1]
        : t == "Div" ? a[0] / a[1]
                     : std::pow(a[0], a[1]);
  }
  (*memo)[v] = r;
  return r;
}

double GeluErf(double v) {
  return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
}
double GeluTanh(double v) {
  return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
}

// Which GELU `end` computes from `root` ("none" or "tanh"), judged on sample points. The
// tolerance allows for the rounding of the formula's constants in the model's float type
// (fp16 rounds 1/sqrt(2) by 1e-4); within it the closer of the two forms wins (they differ by
// at most 4.7e-4).
std::optional<std::string> GeluKind(const Index& x, int end, int root) {
  const int32_t t = x.ir.values[root].info.dtype;
  const double rel = t == onnx::TensorProto::FLOAT16    ? 1e-3
                     : t == onnx::TensorProto::BFLOAT16 ? 8e-3
                                                        : 1e-5;
  double erf_worst = 0, tanh_worst = 0;  // deviation in units of the tolerance
  for (int i = -40; i <= 40; ++i) {
    const double at = i * 0.15;
    std::map<int, double> memo;
    auto r = Evaluate(x, end, root, at, &memo);
    if (!r) return std::nullopt;
    const double tol = rel * (1 + std::fabs(at));
    erf_worst = std::max(erf_worst, std::fabs(*r - GeluErf(at)) / tol);
    tanh_worst = std::max(tanh_worst, std::fabs(*r - GeluTanh(at)) / tol);
  }
  if (std::min(erf_worst, tanh_worst) > 1) return std::nullopt;
  return erf_worst <= tanh_worst ? "none" : "tanh";
}

int RecogniseGelu(SubgraphIr* ir) {
  int found = 0;
  for (size_t t = 0; t < ir->ops.size(); ++t) {
    if (ir->ops[t].removed || (ir->ops[t].op_type != "Erf" && ir->ops[t].op_type != "Tanh"))
      continue;
    const Index x(*ir);
    // Candidate ends: the Erf/Tanh's sole-reader chain, a few ops forward.
    int v = ir->ops[t].outputs[0];
    for (int step = 0; step < 4; ++step) {
      int reader = -1, readers = 0;
      for (size_t i = 0; i < ir->ops.size(); ++i) {
        if (ir->ops[i].removed) continue;
        for (int in : ir->ops[i].inputs) {
          if (in == v) {
            reader = static_cast<int>(i);
            ++readers;
            break;
          }
        }
      }
      if (readers != 1 || !x.Internal(v) || !IsScalarMath(ir->ops[reader].op_type)) break;
      v = ir->ops[reader].outputs[0];
      std::set<int> ops;
      int root = -1;
      for (int candidate : Ancestors(x, v)) {
        ops.clear();
        if (ScalarDag(x, v, candidate, &ops) && ops.count(static_cast<int>(t))) {
          root = candidate;
          break;
        }
      }
      if (root < 0 || x.Dims(root) != x.Dims(v)) continue;
      // Every value inside the DAG is read only by the DAG's own ops.
      bool closed = true;
      for (int o : ops) {
        const int out = ir->ops[o].outputs[0];
        if (out == v) continue;
        if (!x.Internal(out)) closed = false;
        for (size_t i = 0; i < ir->ops.size() && closed; ++i) {
          if (ir->ops[i].removed || ops.count(static_cast<int>(i))) continue;
          for (int in : ir->ops[i].inputs) closed = closed && in != out;
        }
      }
      if (!closed) continue;
      const auto kind = GeluKind(x, v, root);
      if (!kind) continue;
      IrOp gelu;
      gelu.name = ir->ops[t].name + "/gelu";
      gelu.op_type = "Gelu";
      gelu.since_version = 20;
      gelu.inputs = {root};
      gelu.outputs = {v};
      gelu.SetStringAttr("approximate", *kind);
      int last = 0;
      for (int o : ops) last = std::max(last, o);
      for (int o : ops) ir->ops[o].removed = true;
      ir->ops[last] = std::move(gelu);
      ++found;
      break;
    }
  }
  return found;
}

// ---- LayerNorm decomposition ----

// A ReduceMean over the last axis only, keeping dims: its input, else -1.
int MeanOverLastAxis(const Index& x, int v) {
  const int p = x.producer[v];
  if (p < 0 || x.ir.ops[p].op_type != "ReduceMean") return -1;
  const IrOp& op = x.ir.ops[p];
  if (op.IntAttr("keepdims", 1) != 1) return -1;
  std::vector<int64_t> axes;
  if (const auto* a = op.Attr("axes")) axes.assign(a->ints().begin(), a->ints().end());
  if (op.inputs.size() > 1 && op.inputs[1] >= 0) {  // opset 18: axes as an input
    auto bytes = x.ir.values[op.inputs[1]].bytes;
    if (x.ir.values[op.inputs[1]].kind != ValueKind::kWeight || !bytes) return -1;
    auto all = bytes->ReadAll();
    if (!all.ok() || (*all)->size() != 8) return -1;
    int64_t axis;
    std::memcpy(&axis, (*all)->data(), 8);
    axes = {axis};
  }
  const int64_t rank = static_cast<int64_t>(x.Dims(op.inputs[0]).size());
  if (axes.size() != 1 || (axes[0] != -1 && axes[0] != rank - 1)) return -1;
  return op.inputs[0];
}

const IrOp* Producer(const Index& x, int v, const std::string& type) {
  const int p = v >= 0 ? x.producer[v] : -1;
  return p >= 0 && x.ir.ops[p].op_type == type ? &x.ir.ops[p] : nullptr;
}

int Other(const IrOp& op, int v) {
  return op.inputs[0] == v ? op.inputs[1] : op.inputs[0];
}

int RecogniseLayerNorm(SubgraphIr* ir) {
  int found = 0;
  for (size_t i = 0; i < ir->ops.size(); ++i) {
    const Index x(*ir);
    const IrOp& div = ir->ops[i];
    if (div.removed || div.op_type != "Div" || div.inputs.size() != 2) continue;
    // n = d / sqrt(mean(d^2) + eps), d = x - mean(x)
    const int d = div.inputs[0];
    const IrOp* sqrt = Producer(x, div.inputs[1], "Sqrt");
    const IrOp* sub = Producer(x, d, "Sub");
    if (!sqrt || !sub) continue;
    const int src = sub->inputs[0];
    if (MeanOverLastAxis(x, sub->inputs[1]) != src) continue;
    const IrOp* add_eps = Producer(x, sqrt->inputs[0], "Add");
    if (!add_eps || add_eps->inputs.size() != 2) continue;
    const auto eps0 = x.Scalar(add_eps->inputs[0]), eps1 = x.Scalar(add_eps->inputs[1]);
    if (!eps0 && !eps1) continue;
    const float eps = eps1 ? *eps1 : *eps0;
    const int var = eps1 ? add_eps->inputs[0] : add_eps->inputs[1];
    const int sq = MeanOverLastAxis(x, var);
    if (sq < 0) continue;
    const IrOp* pow = Producer(x, sq, "Pow");
    const IrOp* mul = Producer(x, sq, "Mul");
    const bool squares = (pow && pow->inputs[0] == d && x.Scalar(pow->inputs[1]) == 2.f) ||
                         (mul && mul->inputs[0] == d && mul->inputs[1] == d);
    if (!squares) continue;
    const auto dims = x.Dims(src);
    if (dims.empty()) continue;
    const int64_t c = dims.back();
    // Optional affine: * gamma (+ beta), each a [C] constant.
    std::vector<int> ops = {x.producer[sub->inputs[1]],
                            x.producer[d],
                            x.producer[sq],
                            x.producer[var],
                            x.producer[sqrt->inputs[0]],
                            x.producer[div.inputs[1]],
                            static_cast<int>(i)};
    int out = div.outputs[0], gamma = -1, beta = -1;
    auto sole_reader = [&](int v) {
      int r = -1;
      if (!x.Internal(v) || ir->UseCount(v) != 1) return -1;
      for (size_t k = 0; k < ir->ops.size(); ++k) {
        if (ir->ops[k].removed) continue;
        for (int in : ir->ops[k].inputs) {
          if (in == v) r = static_cast<int>(k);
        }
      }
      return r;
    };
    auto vector_c = [&](int v) {
      auto f = x.Floats(v);
      const auto vd = x.Dims(v);
      return f && static_cast<int64_t>(f->size()) == c && !vd.empty() && vd.back() == c;
    };
    if (int r = sole_reader(out);
        r >= 0 && ir->ops[r].op_type == "Mul" && vector_c(Other(ir->ops[r], out))) {
      gamma = Other(ir->ops[r], out);
      ops.push_back(r);
      out = ir->ops[r].outputs[0];
      if (int r2 = sole_reader(out);
          r2 >= 0 && ir->ops[r2].op_type == "Add" && vector_c(Other(ir->ops[r2], out))) {
        beta = Other(ir->ops[r2], out);
        ops.push_back(r2);
        out = ir->ops[r2].outputs[0];
      }
    }
    // Every inner value is read only inside the pattern: d by Pow/Mul and Div, the rest once.
    if (ir->UseCount(d) != 2 || !x.Internal(d)) continue;
    bool inner_ok = true;
    for (int v : {sub->inputs[1], sq, var, sqrt->inputs[0], div.inputs[1]})
      inner_ok = inner_ok && x.Internal(v) && ir->UseCount(v) == 1;
    if (out != div.outputs[0]) inner_ok = inner_ok && x.Internal(div.outputs[0]);
    if (!inner_ok || x.Dims(out) != dims) continue;
    if (gamma < 0 && c > (int64_t{1} << 24)) continue;  // a vector of ones that long: no
    if (gamma < 0) {
      graph::TensorInfo info;
      info.dtype = onnx::TensorProto::FLOAT;
      info.shape.rank_known = true;
      info.shape.dims = {graph::Dim{c, ""}};
      const std::vector<float> ones(static_cast<size_t>(c), 1.f);
      gamma = ir->AddWeight(div.name + "/gamma", info,
                            std::make_shared<const std::string>(
                                reinterpret_cast<const char*>(ones.data()), ones.size() * 4));
    }
    IrOp ln;
    ln.name = div.name + "/layernorm";
    ln.op_type = "LayerNormalization";
    ln.since_version = 17;
    ln.inputs = {src, gamma, beta};
    ln.outputs = {out};
    ln.SetIntAttr("axis", -1);
    ln.SetFloatAttr("epsilon", eps);
    int last = 0;
    for (int o : ops) last = std::max(last, o);
    for (int o : ops) ir->ops[o].removed = true;
    ir->ops[last] = std::move(ln);
    ++found;
  }
  return found;
}

// ---- Add + LayerNormalization ----

// Whether v comes from a GEMM through a bias Add or a Reshape, with nothing else reading the
// way: such an Add becomes the GEMM's residual (C), which beats fusing it into the LayerNorm.
bool FromGemmAlone(const Index& x, int v) {
  for (int depth = 0; depth < 3; ++depth) {
    const int p = x.producer[v];
    if (p < 0 || x.ir.UseCount(v) != 1 || !x.Internal(v)) return false;
    const IrOp& op = x.ir.ops[p];
    if (op.op_type == "MatMul" || op.op_type == "Gemm") return true;
    if (op.op_type == "Reshape") {
      v = op.inputs[0];
    } else if (op.op_type == "Add" && op.inputs.size() == 2 &&
               (x.ir.values[op.inputs[0]].kind == ValueKind::kWeight ||
                x.ir.values[op.inputs[1]].kind == ValueKind::kWeight)) {
      v = x.ir.values[op.inputs[0]].kind == ValueKind::kWeight ? op.inputs[1] : op.inputs[0];
    } else {
      return false;
    }
  }
  return false;
}

// LayerNormalization(a + b) over the last axis, a and b activations of one shape: one
// AddLayerNormalization kernel that also stores a + b when something else reads it.
int FuseAddLayerNorm(SubgraphIr* ir) {
  int found = 0;
  for (size_t i = 0; i < ir->ops.size(); ++i) {
    IrOp& ln = ir->ops[i];
    if (ln.removed || ln.op_type != "LayerNormalization" || ln.inputs.size() < 2) continue;
    bool extra_outputs = false;
    for (size_t o = 1; o < ln.outputs.size(); ++o)
      extra_outputs = extra_outputs || (ln.outputs[o] >= 0 && ir->UseCount(ln.outputs[o]) > 0);
    if (extra_outputs) continue;
    const Index x(*ir);
    const int sum = ln.inputs[0];
    const int p = x.producer[sum];
    if (p < 0 || ir->ops[p].op_type != "Add" || ir->ops[p].inputs.size() != 2) continue;
    const IrOp& add = ir->ops[p];
    const int a = add.inputs[0], b = add.inputs[1];
    const auto dims = x.Dims(sum);
    int64_t axis = ln.IntAttr("axis", -1);
    if (axis < 0) axis += static_cast<int64_t>(dims.size());
    if (axis != static_cast<int64_t>(dims.size()) - 1) continue;
    bool ok = a != b && x.Dims(a) == dims && x.Dims(b) == dims;
    for (int v : {a, b}) {
      ok = ok && ir->values[v].kind != ValueKind::kWeight &&
           ir->values[v].info.dtype == ir->values[sum].info.dtype && !FromGemmAlone(x, v);
    }
    if (!ok) continue;
    IrOp fused;
    fused.name = ln.name;
    fused.op_type = "AddLayerNormalization";
    fused.domain = "ortc";
    fused.since_version = 1;
    fused.inputs = {a, b, ln.inputs[1], ln.inputs.size() > 2 ? ln.inputs[2] : -1};
    const bool keep_sum = !x.Internal(sum) || ir->UseCount(sum) > 1;
    fused.outputs = {ln.outputs[0], keep_sum ? sum : -1};
    fused.attributes = ln.attributes;
    ln.removed = true;
    ir->ops[p] = std::move(fused);  // at the Add's place: readers of the sum come after it
    ++found;
  }
  return found;
}

}  // namespace

FormulaStats RecogniseFormulas(SubgraphIr* ir) {
  FormulaStats s;
  s.gelu = RecogniseGelu(ir);
  s.layer_norm = RecogniseLayerNorm(ir);
  // After the LayerNorm: its tail d / sqrt(mean(d^2) + eps) is an RMSNorm of d = x - mean(x).
  s.rms_norm = RecogniseRmsNorm(ir);
  s.add_layer_norm = FuseAddLayerNorm(ir);
  if (s.gelu + s.layer_norm + s.rms_norm + s.add_layer_norm > 0) ir->Compact();
  return s;
}

}  // namespace ortc::backends::cuda
