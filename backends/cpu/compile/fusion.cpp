// Conv epilogue fusion: residual Add and activation folded into FusedConv.
#include "cpu/compile/fusion.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace ortc::backends::cpu {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;

// The live op that reads v, when exactly one op reads it (once) and it is not a program output.
IrOp* SoleReader(SubgraphIr* ir, int v) {
  const auto readers = ir->RewritableReaders(v);
  return readers.size() == 1 ? readers[0] : nullptr;
}

// Provably the same shape: every size the same number or the same named symbol.
bool SameShape(const graph::Shape& a, const graph::Shape& b) {
  if (!a.rank_known || !b.rank_known || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    const auto& x = a.dims[i];
    const auto& y = b.dims[i];
    if (x.known() || y.known()) {
      if (x.value != y.value) return false;
    } else if (x.symbol.empty() || x.symbol != y.symbol) {
      return false;
    }
  }
  return true;
}

bool IsFloat(const SubgraphIr& ir, int v) {
  return v >= 0 && ir.values[v].info.dtype == onnx::TensorProto::FLOAT;
}

// A constant float scalar (or one-element tensor) input, for Clip's bounds.
bool ConstScalar(const SubgraphIr& ir, int v, float* out) {
  if (v < 0 || ir.values[v].kind != ValueKind::kWeight || !ir.values[v].bytes || !IsFloat(ir, v))
    return false;
  auto bytes = ir.values[v].bytes->ReadAll();
  if (!bytes.ok() || (*bytes)->size() != sizeof(float)) return false;
  std::memcpy(out, (*bytes)->data(), sizeof(float));
  return true;
}

struct Step {
  std::string name;
  float alpha = 0.f, beta = 0.f;
};

// Whether op is an activation a FusedConv applies; fills the step.
bool AsActivation(const SubgraphIr& ir, const IrOp& op, Step* step) {
  if (!op.domain.empty() || op.outputs.size() != 1) return false;
  const std::string& t = op.op_type;
  *step = Step{t};
  if (t == "Relu" || t == "Sigmoid" || t == "Tanh" || t == "HardSwish")
    return op.inputs.size() == 1;
  if (t == "LeakyRelu") {
    step->alpha = op.FloatAttr("alpha", 0.01f);
    return true;
  }
  if (t == "HardSigmoid") {
    step->alpha = op.FloatAttr("alpha", 0.2f);
    step->beta = op.FloatAttr("beta", 0.5f);
    return true;
  }
  if (t == "Clip") {
    float lo = -INFINITY, hi = INFINITY;
    if (op.since_version < 11) {
      lo = op.FloatAttr("min", lo);
      hi = op.FloatAttr("max", hi);
    } else {
      const bool has_lo = op.inputs.size() > 1 && op.inputs[1] >= 0;
      const bool has_hi = op.inputs.size() > 2 && op.inputs[2] >= 0;
      if ((has_lo && !ConstScalar(ir, op.inputs[1], &lo)) ||
          (has_hi && !ConstScalar(ir, op.inputs[2], &hi)))
        return false;
    }
    step->alpha = lo;
    step->beta = hi;
    return true;
  }
  return false;
}

// A Mul, Add, Sub or Div of value v by a constant scalar, as the step alpha * v + beta.
bool AsLinear(const SubgraphIr& ir, const IrOp& op, int v, Step* step) {
  if (!op.domain.empty() || op.outputs.size() != 1 || op.inputs.size() != 2) return false;
  const bool v_first = op.inputs[0] == v;
  const int other = v_first ? op.inputs[1] : op.inputs[0];
  float k = 0.f;
  if (other == v || !ConstScalar(ir, other, &k) ||
      ir.values[other].info.shape.dims.size() > ir.values[v].info.shape.dims.size())
    return false;  // a scalar of higher rank would change the result's rank
  const std::string& t = op.op_type;
  *step = Step{"Linear", 1.f, 0.f};
  if (t == "Mul") {
    step->alpha = k;
  } else if (t == "Add") {
    step->beta = k;
  } else if (t == "Sub" && v_first) {
    step->beta = -k;
  } else if (t == "Sub") {
    *step = Step{"Linear", -1.f, k};
  } else if (t == "Div" && v_first) {
    step->alpha = 1.f / k;
  } else {
    return false;
  }
  return true;
}

std::optional<std::vector<float>> ConstFloats(const SubgraphIr& ir, int v) {
  if (v < 0 || ir.values[v].kind != ValueKind::kWeight || !ir.values[v].bytes || !IsFloat(ir, v))
    return std::nullopt;
  auto bytes = ir.values[v].bytes->ReadAll();
  if (!bytes.ok()) return std::nullopt;
  std::vector<float> f((*bytes)->size() / sizeof(float));
  std::memcpy(f.data(), (*bytes)->data(), f.size() * sizeof(float));
  return f;
}

std::shared_ptr<const std::string> BytesOf(const std::vector<float>& f) {
  return std::make_shared<const std::string>(reinterpret_cast<const char*>(f.data()),
                                             f.size() * sizeof(float));
}

// alpha * conv(x, W, b) + beta == conv(x, alpha W, alpha b + beta): folds an affine step
// straight after the convolution into its constant weights: one post-op fewer, and chains with
// two linear post-ops (linear, HardSwish, linear) gave wrong results with oneDNN 2.6 when checked
// against ONNX Runtime. Returns false when W or b is not constant.
bool FoldLinearIntoWeights(SubgraphIr* ir, IrOp* conv, const Step& step) {
  const auto w = ConstFloats(*ir, conv->inputs[1]);
  const bool has_bias = conv->inputs.size() > 2 && conv->inputs[2] >= 0;
  const auto b = has_bias ? ConstFloats(*ir, conv->inputs[2]) : std::optional<std::vector<float>>();
  const auto& w_shape = ir->values[conv->inputs[1]].info.shape;
  if (!w || (has_bias && !b) || !w_shape.is_static() || w_shape.dims.empty()) return false;
  const int64_t out_channels = w_shape.dims[0].value;
  // A bias of another length (ONNX's Conv inference does not check it) was read past its end.
  if (out_channels <= 0 || w->size() % static_cast<size_t>(out_channels) != 0 ||
      (has_bias && b->size() != static_cast<size_t>(out_channels)))
    return false;
  std::vector<float> scaled = *w, bias(static_cast<size_t>(out_channels), 0.f);
  for (float& v : scaled) v *= step.alpha;
  for (int64_t m = 0; m < out_channels; ++m)
    bias[m] = (has_bias ? (*b)[m] : 0.f) * step.alpha + step.beta;
  graph::TensorInfo w_info = ir->values[conv->inputs[1]].info, b_info;
  b_info.dtype = onnx::TensorProto::FLOAT;
  b_info.shape.rank_known = true;
  b_info.shape.dims = {graph::Dim{out_channels, ""}};
  const std::string base = ir->values[conv->inputs[1]].name;
  const int new_w = ir->AddWeight(base + ".affine_folded", w_info, BytesOf(scaled));
  const int new_b = ir->AddWeight(base + ".affine_bias", b_info, BytesOf(bias));
  conv->inputs.resize(std::max<size_t>(conv->inputs.size(), 3), -1);
  conv->inputs[1] = new_w;
  conv->inputs[2] = new_b;
  return true;
}

// x * clip(x + 3, 0, 6) / 6, as exporters write HardSwish: the ops from the Add to the Div, or
// empty. Every intermediate must be read only inside the pattern.
std::vector<IrOp*> DecomposedHardSwish(SubgraphIr* ir, int x) {
  auto readers = ir->RewritableReaders(x);
  if (readers.size() != 2) return {};
  Step add_step;
  for (int order = 0; order < 2; ++order) {
    IrOp* add = readers[order];
    IrOp* mul = readers[1 - order];
    if (add->op_type != "Add" || !AsLinear(*ir, *add, x, &add_step) || add_step.beta != 3.f)
      continue;
    IrOp* clip = SoleReader(ir, add->outputs[0]);
    Step clip_step;
    if (!clip || clip->op_type != "Clip" || clip->inputs[0] != add->outputs[0] ||
        !AsActivation(*ir, *clip, &clip_step) || clip_step.alpha != 0.f || clip_step.beta != 6.f)
      continue;
    if (mul->op_type != "Mul" || !mul->domain.empty() || mul->inputs.size() != 2 ||
        SoleReader(ir, clip->outputs[0]) != mul ||
        !((mul->inputs[0] == x && mul->inputs[1] == clip->outputs[0]) ||
          (mul->inputs[1] == x && mul->inputs[0] == clip->outputs[0])))
      continue;
    IrOp* div = SoleReader(ir, mul->outputs[0]);
    Step div_step;
    if (!div || div->op_type != "Div" || !AsLinear(*ir, *div, mul->outputs[0], &div_step) ||
        div_step.alpha != 1.f / 6.f)
      continue;
    return {add, clip, mul, div};
  }
  return {};
}

}  // namespace

Result<FusionCounts> FuseConvEpilogues(SubgraphIr* ir) {
  FusionCounts counts;
  bool moved = false, changed = false;
  for (size_t k = 0; k < ir->ops.size(); ++k) {
    IrOp* conv = &ir->ops[k];
    if (conv->removed || conv->op_type != "Conv" || !conv->domain.empty() ||
        conv->outputs.size() != 1 || conv->inputs.size() < 2 || !IsFloat(*ir, conv->outputs[0]) ||
        !IsFloat(*ir, conv->inputs[0]))
      continue;
    const graph::Shape out_shape = ir->values[conv->outputs[0]].info.shape;  // a copy: values grow
    const size_t rank = out_shape.dims.size();
    if (!out_shape.rank_known || rank < 3 || rank > 5) continue;
    const int conv_out = conv->outputs[0];
    int result = conv_out;
    int residual = -1;
    std::vector<Step> steps;
    IrOp* reader = SoleReader(ir, result);
    // A residual Add first: the other operand has the result's exact static shape.
    if (reader && reader->op_type == "Add" && reader->domain.empty() &&
        reader->inputs.size() == 2 && reader->outputs.size() == 1) {
      const int other = reader->inputs[0] == result ? reader->inputs[1] : reader->inputs[0];
      if (other >= 0 && other != result && IsFloat(*ir, other) &&
          SameShape(ir->values[other].info.shape, out_shape)) {
        residual = other;
        reader->removed = true;
        result = reader->outputs[0];
        ++counts.residual_adds;
      }
    }
    // Then any chain of activations and scalar affine steps.
    for (;;) {
      Step step;
      auto hswish = DecomposedHardSwish(ir, result);
      if (!hswish.empty()) {
        for (IrOp* op : hswish) op->removed = true;
        result = hswish.back()->outputs[0];
        steps.push_back({"HardSwish"});
        ++counts.activations;
        continue;
      }
      reader = SoleReader(ir, result);
      if (!reader) break;
      if (AsActivation(*ir, *reader, &step) && reader->inputs[0] == result) {
        ++counts.activations;
      } else if (AsLinear(*ir, *reader, result, &step)) {
        ++counts.affine_steps;
      } else {
        break;
      }
      if (step.name == "Linear" && steps.empty() && residual < 0) {
        // Straight after the convolution: into its weights.
        if (!FoldLinearIntoWeights(ir, conv, step)) break;
      } else if (step.name == "Linear" && !steps.empty() && steps.back().name == "Linear") {
        // Consecutive affine steps merge into one.
        steps.back().beta = steps.back().beta * step.alpha + step.beta;
        steps.back().alpha *= step.alpha;
      } else if (step.name == "Linear" &&
                 std::any_of(steps.begin(), steps.end(),
                             [](const Step& s) { return s.name == "Linear"; })) {
        break;  // a second linear post-op (see FoldLinearIntoWeights)
      } else {
        steps.push_back(step);
      }
      reader->removed = true;
      result = reader->outputs[0];
    }
    if (result == conv_out) continue;
    changed = true;
    conv = &ir->ops[k];
    conv->op_type = "FusedConv";
    conv->outputs[0] = result;
    if (residual >= 0) {
      conv->inputs.resize(4, -1);
      conv->inputs[3] = residual;
      moved = true;  // the residual may be produced after the convolution
    }
    if (!steps.empty()) {
      std::vector<std::string> names;
      std::vector<float> params;
      for (const Step& st : steps) {
        names.push_back(st.name);
        params.push_back(st.alpha);
        params.push_back(st.beta);
      }
      conv->SetStringsAttr("activations", names);
      conv->SetFloatsAttr("activation_params", params);
    }
  }
  // Drop the fused ops first: the sort must not see their outputs as still produced by them.
  if (changed) ir->Compact();
  if (moved) ir->SortTopologically();
  return counts;
}

}  // namespace ortc::backends::cpu
