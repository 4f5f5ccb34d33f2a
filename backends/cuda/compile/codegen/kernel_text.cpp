// Text helpers shared by the kernel emitters (see kernel_text.h).
#include "cuda/compile/codegen/kernel_text.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "base/half_float.h"

namespace ortc::backends::cuda::codegen {

using onnx::TensorProto;

bool IsStorageType(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::FLOAT16 || t == TensorProto::BFLOAT16 ||
         t == TensorProto::INT32 || t == TensorProto::INT64 || t == TensorProto::BOOL ||
         t == TensorProto::INT8 || t == TensorProto::UINT8;
}
bool IsFloatType(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::FLOAT16 || t == TensorProto::BFLOAT16;
}

std::string StorageCType(int32_t t) {
  switch (t) {
    case TensorProto::FLOAT:
      return "float";
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return "ortc_u16";
    case TensorProto::INT32:
      return "ortc_i32";
    case TensorProto::INT64:
      return "ortc_i64";
    case TensorProto::INT8:
      return "ortc_i8";
    default:
      return "ortc_u8";  // UINT8, BOOL
  }
}

std::string ComputeCType(int32_t t) {
  if (IsFloatType(t)) return "float";
  if (t == TensorProto::BOOL) return "bool";
  // 8-bit integers compute in int32, as C++ promotes them anyway.
  if (t == TensorProto::INT8 || t == TensorProto::UINT8) return "ortc_i32";
  return StorageCType(t);
}

std::string LoadExpr(int32_t t, const std::string& e) {
  switch (t) {
    case TensorProto::FLOAT16:
      return "ortc_h2f(" + e + ")";
    case TensorProto::BFLOAT16:
      return "ortc_bf2f(" + e + ")";
    case TensorProto::BOOL:
      return "(" + e + " != 0)";
    default:
      return e;
  }
}

std::string StoreExpr(int32_t t, const std::string& v) {
  switch (t) {
    case TensorProto::FLOAT16:
      return "ortc_f2h(" + v + ")";
    case TensorProto::BFLOAT16:
      return "ortc_f2bf(" + v + ")";
    case TensorProto::BOOL:
      return "(ortc_u8)((" + v + ") ? 1 : 0)";
    case TensorProto::FLOAT:
      return "(float)(" + v + ")";
    default:
      return "(" + StorageCType(t) + ")(" + v + ")";
  }
}

std::string FloatLiteral(float v) {
  if (!std::isfinite(v)) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    char b[40];
    std::snprintf(b, sizeof b, "ortc_from_bits(0x%08xu)", u);
    return b;
  }
  char b[64];
  std::snprintf(b, sizeof b, "%af", static_cast<double>(v));
  return std::string("(") + b + ")";
}

std::string IntLiteral(int64_t v) {
  // The most negative value has no literal of its own.
  if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
  return "(" + std::to_string(v) + "LL)";
}

const onnx::AttributeProto* FindAttribute(const OpDesc& op, const std::string& name) {
  for (const auto& a : op.attributes)
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t IntAttr(const OpDesc& op, const std::string& name, int64_t fallback) {
  const auto* a = FindAttribute(op, name);
  return a ? a->i() : fallback;
}
float FloatAttr(const OpDesc& op, const std::string& name, float fallback) {
  const auto* a = FindAttribute(op, name);
  return a ? a->f() : fallback;
}
std::string StringAttr(const OpDesc& op, const std::string& name, const std::string& fallback) {
  const auto* a = FindAttribute(op, name);
  return a ? a->s() : fallback;
}
std::vector<int64_t> IntsAttr(const OpDesc& op, const std::string& name) {
  const auto* a = FindAttribute(op, name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}

std::optional<std::vector<double>> ConstantValues(const OpDesc& op, size_t i) {
  if (i >= op.constants.size() || !op.constants[i] || i >= op.inputs.size()) return std::nullopt;
  const std::string& b = *op.constants[i];
  const int32_t t = op.inputs[i].dtype;
  std::vector<double> v;
  auto read = [&](size_t at, auto tag) {
    decltype(tag) x;
    std::memcpy(&x, b.data() + at, sizeof x);
    return x;
  };
  switch (t) {
    case TensorProto::FLOAT:
      for (size_t k = 0; k + 4 <= b.size(); k += 4) v.push_back(read(k, float{}));
      break;
    case TensorProto::FLOAT16:
      for (size_t k = 0; k + 2 <= b.size(); k += 2)
        v.push_back(exec::HalfToFloat(read(k, uint16_t{})));
      break;
    case TensorProto::BFLOAT16:
      for (size_t k = 0; k + 2 <= b.size(); k += 2)
        v.push_back(exec::Bf16ToFloat(read(k, uint16_t{})));
      break;
    case TensorProto::INT32:
      for (size_t k = 0; k + 4 <= b.size(); k += 4) v.push_back(read(k, int32_t{}));
      break;
    case TensorProto::INT64:
      for (size_t k = 0; k + 8 <= b.size(); k += 8)
        v.push_back(static_cast<double>(read(k, int64_t{})));
      break;
    case TensorProto::BOOL:
      for (char c : b) v.push_back(c != 0);
      break;
    case TensorProto::INT8:
      for (char c : b) v.push_back(static_cast<signed char>(c));
      break;
    case TensorProto::UINT8:
      for (char c : b) v.push_back(static_cast<unsigned char>(c));
      break;
    default:
      return std::nullopt;
  }
  return v;
}

std::string KernelParams(int num_inputs, int num_outputs) {
  std::string s;
  for (int i = 0; i < num_inputs + num_outputs; ++i) {
    if (i) s += ", ";
    s += (i < num_inputs ? "const void* p" : "void* p") + std::to_string(i);
  }
  return s;
}

uint32_t GridFor(int64_t n) {
  constexpr int64_t kMaxGrid = 4096;
  const int64_t blocks = (n + kBlockSize - 1) / kBlockSize;
  return static_cast<uint32_t>(std::max<int64_t>(1, std::min(blocks, kMaxGrid)));
}

uint32_t RowBlockSize(int64_t row) {
  uint32_t b = 32;
  while (b < kBlockSize && b < row) b *= 2;
  return b;
}

std::string BlockReduceCode(const std::string& var, const std::string& combine, uint32_t block,
                            const std::string& in) {
  std::string s;
  s += in + "red[threadIdx.x] = " + var + ";\n";
  s += in + "__syncthreads();\n";
  s += in + "for (unsigned s = " + std::to_string(block / 2) + "u; s > 0; s >>= 1) {\n";
  s += in + "  if (threadIdx.x < s) red[threadIdx.x] = " + combine +
       "(red[threadIdx.x], red[threadIdx.x + s]);\n";
  s += in + "  __syncthreads();\n";
  s += in + "}\n";
  s += in + var + " = red[0];\n";
  // Nobody may overwrite red[0] before every thread has read it.
  s += in + "__syncthreads();\n";
  return s;
}

std::string DtypeName(int32_t t) {
  if (!onnx::TensorProto::DataType_IsValid(t)) return "type " + std::to_string(t);
  return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(t));
}

std::vector<size_t> StorageOrder(size_t rank, Layout layout) {
  std::vector<size_t> order;
  const bool last = layout == Layout::kNhwc && rank >= 3;
  for (size_t a = 0; a < rank; ++a) {
    if (!(last && a == 1)) order.push_back(a);
  }
  if (last) order.push_back(1);
  return order;
}

std::vector<int64_t> StorageStrides(const std::vector<int64_t>& dims, Layout layout) {
  const auto order = StorageOrder(dims.size(), layout);
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t s = 1;
  for (size_t j = order.size(); j-- > 0;) {
    strides[order[j]] = s;
    s *= dims[order[j]];
  }
  return strides;
}

}  // namespace ortc::backends::cuda::codegen
