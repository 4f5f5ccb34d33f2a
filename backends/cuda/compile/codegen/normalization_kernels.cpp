// Normalization kernels: Softmax/LogSoftmax, LayerNormalization (also AddLayerNormalization,
// LayerNorm of x + skip with the sum as an optional second output), RMSNormalization and
// InstanceNormalization as one block per row with shared-memory tree reductions;
// BatchNormalization (inference) elementwise, NCHW or channels last.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "cuda/compile/codegen/emitters.h"
#include "cuda/compile/codegen/kernel_text.h"

namespace ortc::backends::cuda::codegen {
namespace {

int64_t Product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

// Rows of `dim` elements `inner` apart: row r starts at (r / inner) * dim * inner + r % inner.
struct Rows {
  int64_t count = 0, dim = 0, inner = 1;
};

bool Present(const OpDesc& op, size_t i) {
  return i < op.inputs.size() && op.inputs[i].dtype != 0;
}

std::string PointerDecls(const OpDesc& op) {
  std::ostringstream s;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (!Present(op, i)) continue;
    const std::string t = StorageCType(op.inputs[i].dtype);
    s << "  const " << t << "* __restrict__ in" << i << " = (const " << t << "*)p" << i << ";\n";
  }
  const std::string t = StorageCType(op.outputs[0].dtype);
  s << "  " << t << "* __restrict__ out0 = (" << t << "*)p" << op.inputs.size() << ";\n";
  return s.str();
}

std::string Load(const OpDesc& op, size_t i, const std::string& index) {
  return LoadExpr(op.inputs[i].dtype, "in" + std::to_string(i) + "[" + index + "]");
}

Result<Rows> RowsOf(const OpDesc& op) {
  const auto& d = op.inputs[0].dims;
  const int64_t rank = static_cast<int64_t>(d.size());
  Rows r;
  const std::string& t = op.op_type;
  if (t == "Softmax" || t == "LogSoftmax") {
    const bool legacy = op.since_version < 13;  // before 13: coerced to 2-D at axis
    int64_t axis = IntAttr(op, "axis", legacy ? 1 : -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return InvalidArgument(t + ": axis out of range");
    const auto a = static_cast<size_t>(axis);
    r.dim = legacy ? Product(d, a, d.size()) : d[a];
    r.inner = legacy ? 1 : Product(d, a + 1, d.size());
    r.count = Product(d, 0, a) * r.inner;
  } else if (t == "LayerNormalization" || t == "AddLayerNormalization" || t == "RMSNormalization") {
    int64_t axis = IntAttr(op, "axis", -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return InvalidArgument(t + ": axis out of range");
    r.dim = Product(d, static_cast<size_t>(axis), d.size());
    r.count = Product(d, 0, static_cast<size_t>(axis));
  } else {  // InstanceNormalization: one row per (n, c)
    r.dim = Product(d, 2, d.size());
    r.count = d[0] * d[1];
  }
  return r;
}

KernelSource Launch(const std::string& name, const OpDesc& op, std::string source, uint32_t grid,
                    uint32_t block, bool sync) {
  KernelSource k;
  k.name = name;
  k.source = std::move(source);
  k.num_inputs = static_cast<int>(op.inputs.size());
  k.num_outputs = 1;
  k.grid = {grid, 1, 1};
  k.block = {block, 1, 1};
  k.uses_block_sync = sync;
  return k;
}

// One block per row (grid-stride over rows; every thread of a block runs the same rows, so the
// barriers are uniform).
Result<KernelSource> EmitRowKernel(const std::string& name, const OpDesc& op) {
  auto rows = RowsOf(op);
  if (!rows.ok()) return rows.status();
  const Rows r = rows.value();
  const uint32_t block = RowBlockSize(r.dim);
  const std::string in = "    ";
  const std::string B = std::to_string(block) + "u";
  const std::string x = "in0[base + k * " + IntLiteral(r.inner) + "]";
  std::string xv = LoadExpr(op.inputs[0].dtype, x);
  const int32_t out_t = op.outputs[0].dtype;
  const std::string y = "out0[base + k * " + IntLiteral(r.inner) + "]";
  // AddLayerNormalization: the row is x + skip, computed in fp32 in every pass; the sum is
  // also stored (output 1) when the residual stream reads it.
  const bool skip = op.op_type == "AddLayerNormalization";
  const bool sum_out = skip && op.outputs.size() > 1 && op.outputs[1].dtype != 0;
  const int outputs = sum_out ? 2 : 1;
  if (skip)
    xv = "(" + xv + " + " +
         LoadExpr(op.inputs[1].dtype, "in1[base + k * " + IntLiteral(r.inner) + "]") + ")";
  std::ostringstream s;
  s << "extern \"C\" __global__ void " << name << "("
    << KernelParams(static_cast<int>(op.inputs.size()), outputs) << ") {\n"
    << PointerDecls(op);
  if (sum_out) {
    const std::string st = StorageCType(op.outputs[1].dtype);
    s << "  " << st << "* __restrict__ out1 = (" << st << "*)p" << op.inputs.size() + 1 << ";\n";
  }
  s << "  __shared__ float red[" << block << "];\n"
    << "  for (ortc_i64 row = blockIdx.x; row < " << IntLiteral(r.count)
    << "; row += gridDim.x) {\n"
    << in << "const ortc_i64 base = (row / " << IntLiteral(r.inner) << ") * "
    << IntLiteral(r.dim * r.inner) << " + row % " << IntLiteral(r.inner) << ";\n";
  const std::string loop =
      in + "for (ortc_i64 k = threadIdx.x; k < " + IntLiteral(r.dim) + "; k += " + B + ")";
  const std::string& t = op.op_type;
  if (t == "Softmax" || t == "LogSoftmax") {
    s << in << "float peak = " << FloatLiteral(-INFINITY) << ";\n"
      << loop << " peak = fmaxf(peak, " << xv << ");\n"
      << BlockReduceCode("peak", "fmaxf", block, in) << in << "float sum = 0.f;\n"
      << loop << " sum += expf(" << xv << " - peak);\n"
      << BlockReduceCode("sum", "ortc_add", block, in);
    if (t == "Softmax") {
      s << in << "const float inv = 1.f / sum;\n"
        << loop << " " << y << " = " << StoreExpr(out_t, "expf(" + xv + " - peak) * inv") << ";\n";
    } else {
      s << in << "const float shift = peak + logf(sum);\n"
        << loop << " " << y << " = " << StoreExpr(out_t, xv + " - shift") << ";\n";
    }
  } else if (t == "RMSNormalization") {
    // y = x / sqrt(mean(x^2) + eps) * scale, in fp32 whatever the storage type (the exporters'
    // RMSNorm casts to float32 for exactly this); without a scale input the scale is 1.
    const float eps = FloatAttr(op, "epsilon", 1e-5f);
    s << in << "float sumsq = 0.f;\n"
      << loop << " { const float v = " << xv << "; sumsq += v * v; }\n"
      << BlockReduceCode("sumsq", "ortc_add", block, in) << in
      << "const float rms = 1.f / sqrtf(sumsq / " << FloatLiteral(static_cast<float>(r.dim))
      << " + " << FloatLiteral(eps) << ");\n";
    const std::string scaled = Present(op, 1) ? " * " + Load(op, 1, "k") : "";
    s << loop << " " << y << " = " << StoreExpr(out_t, xv + " * rms" + scaled) << ";\n";
  } else {
    // Two passes (mean, then the mean of squared deviations): no cancellation in E[x^2]-E[x]^2.
    const float eps = FloatAttr(op, "epsilon", 1e-5f);
    const std::string n = FloatLiteral(static_cast<float>(r.dim));
    s << in << "float mean = 0.f;\n";
    if (sum_out) {
      s << loop << " { const float v = " << xv << "; mean += v; out1[base + k * "
        << IntLiteral(r.inner) << "] = " << StoreExpr(op.outputs[1].dtype, "v") << "; }\n";
    } else {
      s << loop << " mean += " << xv << ";\n";
    }
    s << BlockReduceCode("mean", "ortc_add", block, in) << in << "mean = mean / " << n << ";\n"
      << in << "float var = 0.f;\n"
      << loop << " { const float d = " << xv << " - mean; var += d * d; }\n"
      << BlockReduceCode("var", "ortc_add", block, in) << in
      << "const float rstd = 1.f / sqrtf(var / " << n << " + " << FloatLiteral(eps) << ");\n";
    std::string scale, bias;
    if (t == "LayerNormalization" || skip) {
      const size_t at = skip ? 2 : 1;
      scale = Load(op, at, "k");
      bias = Present(op, at + 1) ? Load(op, at + 1, "k") : "0.f";
    } else {
      const std::string c = "row % " + IntLiteral(op.inputs[0].dims[1]);
      scale = Load(op, 1, c);
      bias = Load(op, 2, c);
    }
    s << loop << " " << y << " = "
      << StoreExpr(out_t, "(" + xv + " - mean) * rstd * " + scale + " + " + bias) << ";\n";
  }
  s << "  }\n}\n";
  const auto grid = static_cast<uint32_t>(std::min<int64_t>(std::max<int64_t>(r.count, 1), 65535));
  KernelSource k = Launch(name, op, s.str(), grid, block, true);
  k.num_outputs = outputs;
  return k;
}

// y = (x - mean[c]) * scale[c] / sqrt(var[c] + eps) + bias[c], c = axis 1. NCHW or channels
// last on either side: threads walk the output's storage order and find the channel (and, when
// the layouts differ, the input element) where each layout keeps it.
Result<KernelSource> EmitBatchNorm(const std::string& name, const OpDesc& op) {
  const auto& d = op.inputs[0].dims;
  const int64_t n = Product(d, 0, d.size());
  const int64_t channels = d.size() > 1 ? d[1] : 1;
  const int64_t inner = Product(d, 2, d.size());
  const float eps = FloatAttr(op, "epsilon", 1e-5f);
  const bool in_last = op.input_layout == Layout::kNhwc,
             out_last = op.output_layout == Layout::kNhwc;
  const std::string c = IntLiteral(channels), plane = IntLiteral(inner);
  std::string at = "i";  // the input element of output element i
  if (in_last != out_last) {
    // (image, position, channel) of output element i, then the input's index of the same.
    const std::string image = "(i / (" + c + " * " + plane + "))";
    at = out_last ? "(" + image + " * " + c + " + ch) * " + plane + " + (i / " + c + ") % " + plane
                  : "(" + image + " * " + plane + " + i % " + plane + ") * " + c + " + ch";
  }
  std::ostringstream s;
  s << "extern \"C\" __global__ void " << name << "("
    << KernelParams(static_cast<int>(op.inputs.size()), 1) << ") {\n"
    << PointerDecls(op)
    << "  for (ortc_i64 i = (ortc_i64)blockIdx.x * blockDim.x + threadIdx.x; i < " << IntLiteral(n)
    << "; i += (ortc_i64)gridDim.x * blockDim.x) {\n"
    << "    const ortc_i64 ch = " << (out_last ? "i % " + c : "(i / " + plane + ") % " + c) << ";\n"
    << "    const float k = " << Load(op, 1, "ch") << " / sqrtf(" << Load(op, 4, "ch") << " + "
    << FloatLiteral(eps) << ");\n"
    << "    out0[i] = "
    << StoreExpr(op.outputs[0].dtype,
                 "(" + Load(op, 0, at) + " - " + Load(op, 3, "ch") + ") * k + " + Load(op, 2, "ch"))
    << ";\n"
    << "  }\n}\n";
  return Launch(name, op, s.str(), GridFor(n), kBlockSize, false);
}

}  // namespace

bool IsNormalizationOp(const std::string& t) {
  return t == "Softmax" || t == "LogSoftmax" || t == "LayerNormalization" ||
         t == "AddLayerNormalization" || t == "RMSNormalization" || t == "InstanceNormalization" ||
         t == "BatchNormalization";
}

std::string NormalizationUnsupported(const OpDesc& op) {
  const std::string& t = op.op_type;
  if (!IsNormalizationOp(t)) return "no CUDA kernel generator for " + t;
  if (op.inputs.empty() || op.outputs.empty()) return t + " without inputs or outputs";
  for (size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i].dtype != 0 && !IsFloatType(op.inputs[i].dtype))
      return t + " on " + DtypeName(op.inputs[i].dtype) + " is not supported";
  if (!IsFloatType(op.outputs[0].dtype)) return t + ": output must be a float type";
  for (int64_t v : op.inputs[0].dims)
    if (v < 0) return t + ": dynamic dimension";
  const auto& d = op.inputs[0].dims;
  const int64_t c = d.size() > 1 ? d[1] : 1;
  if (t == "Softmax" || t == "LogSoftmax") {
    if (d.empty()) return t + " on a scalar";
    return "";
  }
  if (t == "LayerNormalization") {
    if (d.empty()) return "LayerNormalization on a scalar";
    for (size_t i = 1; i < op.outputs.size(); ++i)
      if (op.outputs[i].dtype != 0)
        return "LayerNormalization's Mean and InvStdDev outputs are not supported";
    if (!Present(op, 1)) return "LayerNormalization without a scale";
    auto rows = RowsOf(op);
    if (!rows.ok()) return rows.status().message();
    // Scale and bias must cover the normalized shape exactly (no broadcasting of them).
    if (op.inputs[1].elements() != rows.value().dim ||
        (Present(op, 2) && op.inputs[2].elements() != rows.value().dim))
      return "LayerNormalization with scale/bias broadcast over the normalized axes is not "
             "supported";
    return "";
  }
  if (t == "AddLayerNormalization") {  // formed by lowering (lowering_formulas.cpp)
    if (d.empty() || op.inputs.size() < 3 || !Present(op, 1) || !Present(op, 2))
      return "AddLayerNormalization needs x, skip and scale";
    if (op.inputs[1].dims != d) return "AddLayerNormalization: x and skip differ in shape";
    if (op.outputs.size() > 1 && op.outputs[1].dtype != 0 && op.outputs[1].dims != d)
      return "AddLayerNormalization: the sum output must have x's shape";
    auto rows = RowsOf(op);
    if (!rows.ok()) return rows.status().message();
    if (op.inputs[2].elements() != rows.value().dim ||
        (Present(op, 3) && op.inputs[3].elements() != rows.value().dim))
      return "AddLayerNormalization: scale/bias must cover the normalized axes exactly";
    return "";
  }
  if (t == "RMSNormalization") {  // ONNX opset 23's op; formed by lowering (lowering_rmsnorm.cpp)
    if (d.empty()) return "RMSNormalization on a scalar";
    if (IntAttr(op, "stash_type", 1) != 1)
      return "RMSNormalization computing in a type other than float32 (stash_type) is not "
             "supported";
    for (size_t i = 1; i < op.outputs.size(); ++i)
      if (op.outputs[i].dtype != 0) return "RMSNormalization has one output";
    auto rows = RowsOf(op);
    if (!rows.ok()) return rows.status().message();
    // The scale is optional here (absent: 1) and must cover the normalized axes exactly.
    if (Present(op, 1) && op.inputs[1].elements() != rows.value().dim)
      return "RMSNormalization with a scale broadcast over the normalized axes is not supported";
    return "";
  }
  if (t == "InstanceNormalization") {
    if (d.size() < 3 || op.inputs.size() < 3 || !Present(op, 1) || !Present(op, 2))
      return "InstanceNormalization needs [N, C, ...] data, scale and bias";
    if (op.inputs[1].elements() != c || op.inputs[2].elements() != c)
      return "InstanceNormalization scale/bias must have C elements";
    return "";
  }
  // BatchNormalization: inference only.
  if (IntAttr(op, "training_mode", 0) != 0) return "BatchNormalization in training mode";
  for (size_t i = 1; i < op.outputs.size(); ++i)
    if (op.outputs[i].dtype != 0) return "BatchNormalization's running statistics outputs";
  if (op.inputs.size() < 5) return "BatchNormalization needs 5 inputs";
  for (size_t i = 1; i < 5; ++i)
    if (!Present(op, i) || op.inputs[i].elements() != c)
      return "BatchNormalization parameters must have C elements";
  return "";
}

Result<KernelSource> EmitNormalization(const std::string& name, const OpDesc& op) {
  if (std::string why = NormalizationUnsupported(op); !why.empty()) return NotImplemented(why);
  if (op.op_type == "BatchNormalization") return EmitBatchNorm(name, op);
  return EmitRowKernel(name, op);
}

}  // namespace ortc::backends::cuda::codegen
