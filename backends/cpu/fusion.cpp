// Conv epilogue fusion: residual Add and activation folded into FusedConv.
#include "cpu/fusion.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>

namespace ortc::backends::cpu {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;

// The live op that reads v, when exactly one op reads it (once) and it is not a program output.
IrOp* SoleReader(SubgraphIr* ir, int v) {
  for (int o : ir->outputs)
    if (o == v) return nullptr;
  IrOp* reader = nullptr;
  for (auto& op : ir->ops) {
    if (op.removed) continue;
    for (int i : op.inputs) {
      if (i != v) continue;
      if (reader) return nullptr;
      reader = &op;
    }
  }
  return reader;
}

bool SameStaticShape(const graph::Shape& a, const graph::Shape& b) {
  if (!a.is_static() || !b.is_static() || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i)
    if (a.dims[i].value != b.dims[i].value) return false;
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

// Whether op is an activation a FusedConv applies; fills its name and parameters.
bool AsActivation(const SubgraphIr& ir, const IrOp& op, std::string* name,
                  std::vector<float>* params) {
  if (!op.domain.empty() || op.outputs.size() != 1) return false;
  const std::string& t = op.op_type;
  params->clear();
  if (t == "Relu" || t == "Sigmoid" || t == "Tanh" || t == "HardSwish") {
    *name = t;
    return true;
  }
  if (t == "LeakyRelu") {
    *name = t;
    params->push_back(op.FloatAttr("alpha", 0.01f));
    return true;
  }
  if (t == "HardSigmoid") {
    *name = t;
    params->push_back(op.FloatAttr("alpha", 0.2f));
    params->push_back(op.FloatAttr("beta", 0.5f));
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
    *name = t;
    *params = {lo, hi};
    return true;
  }
  return false;
}

void SetFloats(IrOp* op, const std::string& n, const std::vector<float>& v) {
  onnx::AttributeProto a;
  a.set_name(n);
  a.set_type(onnx::AttributeProto::FLOATS);
  for (float f : v) a.add_floats(f);
  op->attributes.push_back(std::move(a));
}

}  // namespace

Result<FusionCounts> FuseConvEpilogues(SubgraphIr* ir) {
  FusionCounts counts;
  bool moved = false;
  for (size_t k = 0; k < ir->ops.size(); ++k) {
    IrOp* conv = &ir->ops[k];
    if (conv->removed || conv->op_type != "Conv" || !conv->domain.empty() ||
        conv->outputs.size() != 1 || conv->inputs.size() < 2 || !IsFloat(*ir, conv->outputs[0]) ||
        !IsFloat(*ir, conv->inputs[0]))
      continue;
    const auto& out_shape = ir->values[conv->outputs[0]].info.shape;
    const size_t rank = out_shape.dims.size();
    if (!out_shape.rank_known || rank < 3 || rank > 5) continue;
    int result = conv->outputs[0];
    int residual = -1;
    std::string act;
    std::vector<float> params;
    IrOp* reader = SoleReader(ir, result);
    // A residual Add: the other operand has the result's exact static shape (no broadcast).
    if (reader && reader->op_type == "Add" && reader->domain.empty() &&
        reader->inputs.size() == 2 && reader->outputs.size() == 1) {
      const int other = reader->inputs[0] == result ? reader->inputs[1] : reader->inputs[0];
      if (other >= 0 && other != result && IsFloat(*ir, other) &&
          SameStaticShape(ir->values[other].info.shape, out_shape)) {
        residual = other;
        reader->removed = true;
        result = reader->outputs[0];
        ++counts.residual_adds;
        reader = SoleReader(ir, result);
      }
    }
    if (reader && AsActivation(*ir, *reader, &act, &params)) {
      reader->removed = true;
      result = reader->outputs[0];
      ++counts.activations;
    }
    if (result == conv->outputs[0]) continue;
    conv = &ir->ops[k];
    conv->op_type = "FusedConv";
    conv->outputs[0] = result;
    if (residual >= 0) {
      conv->inputs.resize(4, -1);
      conv->inputs[3] = residual;
      moved = true;  // the residual may be produced after the convolution
    }
    if (!act.empty()) {
      conv->SetStringAttr("activation", act);
      if (!params.empty()) SetFloats(conv, "activation_params", params);
    }
  }
  // Drop the fused ops first: the sort must not see their outputs as still produced by them.
  if (counts.residual_adds + counts.activations > 0) ir->Compact();
  if (moved) ir->SortTopologically();
  return counts;
}

}  // namespace ortc::backends::cpu
