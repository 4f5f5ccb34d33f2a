// QDQ convolutions into QLinearConv.
#include "cpu/compile/quantized_fusion.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <optional>

namespace ortc::backends::cpu {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;

bool IsConst(const SubgraphIr& ir, int v) {
  return v >= 0 && ir.values[v].kind == ValueKind::kWeight && ir.values[v].bytes;
}

// A constant's elements as doubles (float, int8, uint8, int32 only).
std::optional<std::vector<double>> Values(const SubgraphIr& ir, int v) {
  if (!IsConst(ir, v)) return std::nullopt;
  auto bytes = ir.values[v].bytes->ReadAll();
  if (!bytes.ok()) return std::nullopt;
  const std::string& b = **bytes;
  std::vector<double> out;
  switch (ir.values[v].info.dtype) {
    case onnx::TensorProto::FLOAT:
      for (size_t i = 0; i + 4 <= b.size(); i += 4) {
        float f;
        std::memcpy(&f, b.data() + i, 4);
        out.push_back(f);
      }
      return out;
    case onnx::TensorProto::INT8:
      for (char c : b) out.push_back(static_cast<int8_t>(c));
      return out;
    case onnx::TensorProto::UINT8:
      for (char c : b) out.push_back(static_cast<uint8_t>(c));
      return out;
    case onnx::TensorProto::INT32:
      for (size_t i = 0; i + 4 <= b.size(); i += 4) {
        int32_t x;
        std::memcpy(&x, b.data() + i, 4);
        out.push_back(x);
      }
      return out;
    default:
      return std::nullopt;
  }
}

// DequantizeLinear(q, scale[, zero]) with constant scale and zero point.
struct Dequantize {
  IrOp* op = nullptr;
  int quantized = -1, scale = -1, zero = -1;  // value ids (zero may be -1)
  std::vector<double> scales, zeros;
};

std::optional<Dequantize> AsDequantize(SubgraphIr* ir, int v) {
  IrOp* op = ir->Producer(v);
  if (!op || op->op_type != "DequantizeLinear" || !op->domain.empty() || op->inputs.size() < 2)
    return std::nullopt;
  Dequantize d;
  d.op = op;
  d.quantized = op->inputs[0];
  d.scale = op->inputs[1];
  d.zero = op->inputs.size() > 2 ? op->inputs[2] : -1;
  auto scales = Values(*ir, d.scale);
  if (!scales || scales->empty()) return std::nullopt;
  d.scales = *scales;
  if (d.zero >= 0) {
    auto zeros = Values(*ir, d.zero);
    if (!zeros || zeros->size() != d.scales.size()) return std::nullopt;
    d.zeros = *zeros;
  } else {
    d.zeros.assign(d.scales.size(), 0);
  }
  return d;
}

}  // namespace

Result<int> FuseQdqConvolutions(SubgraphIr* ir) {
  int fused = 0;
  const size_t count = ir->ops.size();
  for (size_t k = 0; k < count; ++k) {
    IrOp* conv = &ir->ops[k];
    if (conv->removed || conv->op_type != "Conv" || !conv->domain.empty() ||
        conv->inputs.size() < 2 || conv->outputs.size() != 1)
      continue;
    const auto x = AsDequantize(ir, conv->inputs[0]);
    const auto w = AsDequantize(ir, conv->inputs[1]);
    if (!x || !w || x->scales.size() != 1) continue;
    const int32_t x_type = ir->values[x->quantized].info.dtype;
    if (x_type != onnx::TensorProto::UINT8 && x_type != onnx::TensorProto::INT8) continue;
    // Weights: constant int8, zero point 0, one scale or one per output channel (axis 0).
    if (!IsConst(*ir, w->quantized) ||
        ir->values[w->quantized].info.dtype != onnx::TensorProto::INT8)
      continue;
    const auto& w_shape = ir->values[w->quantized].info.shape;
    if (!w_shape.is_static() || w_shape.dims.size() < 3) continue;
    const int64_t M = w_shape.dims[0].value;
    if (w->scales.size() != 1 &&
        (static_cast<int64_t>(w->scales.size()) != M || w->op->IntAttr("axis", 1) != 0))
      continue;
    bool zero_w = true;
    for (double z : w->zeros) zero_w = zero_w && z == 0;
    if (!zero_w) continue;
    // The result: a QuantizeLinear with scalar constants, perhaps after a Relu its zero point
    // makes redundant (the lowest value of the type: negatives saturate there anyway).
    std::vector<IrOp*> readers = ir->RewritableReaders(conv->outputs[0]);
    if (readers.size() != 1) continue;
    IrOp* relu = nullptr;
    IrOp* quant = readers[0];
    if (quant->op_type == "Relu" && quant->domain.empty()) {
      relu = quant;
      readers = ir->RewritableReaders(relu->outputs[0]);
      if (readers.size() != 1) continue;
      quant = readers[0];
    }
    if (quant->op_type != "QuantizeLinear" || !quant->domain.empty() || quant->inputs.size() < 2 ||
        quant->outputs.size() != 1)
      continue;
    const auto y_scale = Values(*ir, quant->inputs[1]);
    const bool has_y_zero = quant->inputs.size() > 2 && quant->inputs[2] >= 0;
    const auto y_zero = has_y_zero ? Values(*ir, quant->inputs[2]) : std::vector<double>{0};
    if (!y_scale || y_scale->size() != 1 || !y_zero || y_zero->size() != 1) continue;
    const int32_t y_type = has_y_zero ? ir->values[quant->inputs[2]].info.dtype
                                      : static_cast<int32_t>(onnx::TensorProto::UINT8);
    if (y_type != onnx::TensorProto::UINT8 && y_type != onnx::TensorProto::INT8) continue;
    if (relu && (*y_zero)[0] != (y_type == onnx::TensorProto::UINT8 ? 0 : -128)) continue;
    // Bias: int32 quantized with x_scale * w_scale (as QDQ tools write it), or a float constant
    // quantized so; ONNX Runtime's QDQ fusion does the same.
    int bias = -1;
    if (conv->inputs.size() > 2 && conv->inputs[2] >= 0) {
      std::vector<double> bf;
      if (auto bq = AsDequantize(ir, conv->inputs[2]);
          bq && IsConst(*ir, bq->quantized) &&
          ir->values[bq->quantized].info.dtype == onnx::TensorProto::INT32) {
        auto q = Values(*ir, bq->quantized);
        if (!q) continue;
        // One scale and zero point, or one per value: others were read past their ends.
        auto fits_values = [&](size_t n) { return n == 1 || n == q->size(); };
        if (!fits_values(bq->scales.size()) || !fits_values(bq->zeros.size())) continue;
        for (size_t m = 0; m < q->size(); ++m)
          bf.push_back(((*q)[m] - bq->zeros[bq->zeros.size() == 1 ? 0 : m]) *
                       bq->scales[bq->scales.size() == 1 ? 0 : m]);
      } else if (auto f = Values(*ir, conv->inputs[2]);
                 f && ir->values[conv->inputs[2]].info.dtype == onnx::TensorProto::FLOAT) {
        bf = *f;
      } else {
        continue;
      }
      if (static_cast<int64_t>(bf.size()) != M) continue;
      std::vector<int32_t> bq(static_cast<size_t>(M));
      bool fits = true;
      for (int64_t m = 0; m < M; ++m) {
        const double s =
            x->scales[0] * w->scales[w->scales.size() == 1 ? 0 : static_cast<size_t>(m)];
        const double q = s > 0 ? std::nearbyint(bf[m] / s) : 0;
        fits = fits && s > 0 && std::fabs(q) < 2147483647.0;  // false for NaN too
        if (!fits) break;                                     // converting q would be undefined
        bq[m] = static_cast<int32_t>(q);
      }
      if (!fits) continue;
      bias = ir->AddConstant(ir->values[conv->inputs[1]].name + ".qbias", onnx::TensorProto::INT32,
                             {M},
                             std::string(reinterpret_cast<const char*>(bq.data()), bq.size() * 4));
    }
    conv = &ir->ops[k];  // AddConstant grew values only; ops are unchanged
    IrOp q;
    q.name = conv->name;
    q.op_type = "QLinearConv";
    q.since_version = 10;
    std::vector<int> w_zero_input = {w->zero};
    if (w->zero < 0) {
      // QLinearConv requires w_zero_point: an int8 zero.
      w_zero_input[0] = ir->AddConstant(ir->values[w->quantized].name + ".zero",
                                        onnx::TensorProto::INT8, {}, std::string(1, '\0'));
      conv = &ir->ops[k];
    }
    int y_zero_input = has_y_zero ? quant->inputs[2] : -1;
    if (!has_y_zero) {
      // QuantizeLinear without a zero point writes uint8; QLinearConv takes its output type
      // from the zero point, so it gets an explicit uint8 zero.
      y_zero_input = ir->AddConstant(ir->values[quant->outputs[0]].name + ".zero",
                                     onnx::TensorProto::UINT8, {}, std::string(1, '\0'));
      conv = &ir->ops[k];
    }
    q.inputs = {x->quantized, x->scale,        x->zero,          w->quantized,
                w->scale,     w_zero_input[0], quant->inputs[1], y_zero_input};
    if (bias >= 0) q.inputs.push_back(bias);
    q.outputs = {quant->outputs[0]};
    for (const auto& a : conv->attributes) q.attributes.push_back(a);
    quant->removed = true;
    if (relu) relu->removed = true;
    conv->removed = true;
    ir->ops.push_back(std::move(q));
    ++fused;
  }
  if (fused > 0) {
    ir->RemoveDeadOps();  // the DequantizeLinear ops nothing else reads
    ir->Compact();
    ir->SortTopologically();
  }
  return fused;
}

}  // namespace ortc::backends::cpu
