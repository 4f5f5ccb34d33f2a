// Helpers shared by the data-movement and pooling emitters (see movement_util.h): attributes,
// constant inputs, storage types and the index arithmetic text of gather-style kernels.
#include "cuda/compile/codegen/movement_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/element_types.h"
#include "base/half_float.h"
#include "base/shape_math.h"

namespace ortc::backends::cuda::codegen::movement {

std::vector<float> AttrFloats(const OpDesc& op, const std::string& name) {
  const auto* a = FindAttribute(op, name);
  if (!a) return {};
  return {a->floats().begin(), a->floats().end()};
}

bool HasInput(const OpDesc& op, size_t i) {
  return i < op.inputs.size() && op.inputs[i].dtype != 0;
}

namespace {

template <typename T>
T ReadLe(const std::string& bytes, size_t k) {
  T v;
  std::memcpy(&v, bytes.data() + k * sizeof(T), sizeof(T));
  return v;
}

const std::string* ConstantBytes(const OpDesc& op, size_t i) {
  if (i >= op.constants.size() || !op.constants[i]) return nullptr;
  return &*op.constants[i];
}

}  // namespace

Result<std::vector<int64_t>> ConstInts(const OpDesc& op, size_t i, const std::string& what) {
  const std::string* bytes = ConstantBytes(op, i);
  if (!HasInput(op, i) || !bytes) {
    return NotImplemented(op.op_type + ": " + what + " (input " + std::to_string(i) +
                          ") is not a compile-time constant");
  }
  const int32_t dt = op.inputs[i].dtype;
  const size_t es = dt == onnx::TensorProto::INT64 ? 8 : dt == onnx::TensorProto::INT32 ? 4 : 0;
  if (es == 0) return InvalidArgument(op.op_type + ": " + what + " must be int32 or int64");
  const auto n = static_cast<size_t>(op.inputs[i].elements());
  if (bytes->size() != n * es) {
    return InvalidArgument(op.op_type + ": " + what + " holds " + std::to_string(bytes->size()) +
                           " bytes for " + std::to_string(n) + " elements");
  }
  std::vector<int64_t> v(n);
  for (size_t k = 0; k < n; ++k)
    v[k] = es == 8 ? ReadLe<int64_t>(*bytes, k) : ReadLe<int32_t>(*bytes, k);
  return v;
}

Result<std::vector<double>> ConstFloats(const OpDesc& op, size_t i, const std::string& what) {
  const std::string* bytes = ConstantBytes(op, i);
  if (!HasInput(op, i) || !bytes) {
    return NotImplemented(op.op_type + ": " + what + " (input " + std::to_string(i) +
                          ") is not a compile-time constant");
  }
  const int32_t dt = op.inputs[i].dtype;
  const size_t es = HeldElementBytes(dt);
  const auto n = static_cast<size_t>(op.inputs[i].elements());
  if (!IsFloatType(dt) && dt != onnx::TensorProto::DOUBLE)
    return InvalidArgument(op.op_type + ": " + what + " must be a float tensor");
  if (bytes->size() != n * es) {
    return InvalidArgument(op.op_type + ": " + what + " holds " + std::to_string(bytes->size()) +
                           " bytes for " + std::to_string(n) + " elements");
  }
  std::vector<double> v(n);
  for (size_t k = 0; k < n; ++k) {
    if (dt == onnx::TensorProto::DOUBLE) {
      v[k] = ReadLe<double>(*bytes, k);
    } else if (dt == onnx::TensorProto::FLOAT) {
      v[k] = ReadLe<float>(*bytes, k);
    } else {
      const uint16_t h = ReadLe<uint16_t>(*bytes, k);
      uint32_t u;
      if (dt == onnx::TensorProto::BFLOAT16) {
        u = static_cast<uint32_t>(h) << 16;
      } else {  // binary16, exact in float
        const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
        const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
        if (exp == 0) {
          const double s = std::ldexp(static_cast<double>(mant), -24);
          v[k] = sign ? -s : s;
          continue;
        }
        u = sign |
            (exp == 0x1fu ? 0x7f800000u | (mant << 13) : ((exp + 112u) << 23) | (mant << 13));
      }
      float f;
      std::memcpy(&f, &u, 4);
      v[k] = f;
    }
  }
  return v;
}

std::string BitsType(int32_t dtype) {
  switch (HeldElementBytes(dtype)) {
    case 1:
      return "ortc_u8";
    case 2:
      return "ortc_u16";
    case 4:
      return "ortc_u32";
    case 8:
      return "ortc_u64";
    default:
      return "";
  }
}

std::string FloatStorageType(int32_t dtype) {
  return dtype == onnx::TensorProto::FLOAT ? "float" : "ortc_u16";
}

std::string BitsLiteral(int32_t dtype, double value) {
  uint64_t bits = 0;
  switch (dtype) {
    case onnx::TensorProto::FLOAT: {
      const auto f = static_cast<float>(value);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      bits = u;
      break;
    }
    case onnx::TensorProto::DOUBLE:
      std::memcpy(&bits, &value, 8);
      break;
    case onnx::TensorProto::FLOAT16:
      bits = exec::FloatToHalf(static_cast<float>(value));
      break;
    case onnx::TensorProto::BFLOAT16: {
      bits = exec::FloatToBf16(static_cast<float>(value));
      break;
    }
    case onnx::TensorProto::BOOL:
      bits = value != 0 ? 1 : 0;
      break;
    default: {  // integers: truncation toward zero, two's complement bits
      const auto v = static_cast<int64_t>(value);
      std::memcpy(&bits, &v, 8);
      const size_t es = HeldElementBytes(dtype);
      if (es < 8) bits &= (uint64_t{1} << (8 * es)) - 1;
    }
  }
  return BitsOf(dtype, bits);
}

bool NormaliseAxis(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

std::string Var(const std::string& prefix, size_t n) {
  return std::string(prefix).append(std::to_string(n));
}

std::string BitsOf(int32_t dtype, uint64_t bits) {
  std::string s = "(";
  s += BitsType(dtype);
  s += ")";
  s += std::to_string(bits);
  return s + "ull";
}

std::string Lit(int64_t v) {
  return "(I)" + std::to_string(v) + "LL";
}

std::string CheckOutputDims(const OpDesc& op, size_t k, const std::vector<int64_t>& dims) {
  if (k >= op.outputs.size()) return op.op_type + ": missing output " + std::to_string(k);
  if (op.outputs[k].dims != dims) {
    return op.op_type + ": output " + std::to_string(k) + " is declared " +
           DimsText(op.outputs[k].dims) + " but the attributes give " + DimsText(dims);
  }
  return "";
}

// The grid-stride loop adds up to a whole grid (256 x 65535 threads) to an index below the
// total before comparing: that sum must fit too, or a 32-bit index wraps negative.
std::string IndexType(int64_t largest) {
  constexpr int64_t kGridStride = int64_t{256} * 65535;
  return largest + kGridStride < (int64_t{1} << 31) - 1 ? "int" : "long long";
}

KernelSource Finish(const KernelText& k, int64_t largest_index) {
  KernelSource ks;
  ks.name = k.name;
  ks.num_inputs = static_cast<int>(k.input_types.size());
  ks.num_outputs = static_cast<int>(k.output_types.size());
  // Parameters are untyped pointers (as the launch passes them); typed views come first.
  std::string params, views;
  auto add = [&](const std::string& type, bool in, size_t idx) {
    if (!params.empty()) params += ", ";
    const std::string p = Var(in ? "in" : "out", idx);
    params += std::string(in ? "const void* " : "void* ") + p + "_";
    if (type.empty()) {
      views += "  (void)" + p + "_;\n";
    } else {
      views += std::string("  ") + (in ? "const " : "") + type + "* __restrict__ " + p + " = (" +
               (in ? "const " : "") + type + "*)" + p + "_;\n  (void)" + p + ";\n";
    }
  };
  for (size_t i = 0; i < k.input_types.size(); ++i) add(k.input_types[i], true, i);
  for (size_t i = 0; i < k.output_types.size(); ++i) add(k.output_types[i], false, i);
  const std::string I = IndexType(std::max(largest_index, k.total));
  std::string& s = ks.source;
  s += "// " + k.name + "\n" + k.globals;
  s += "extern \"C\" __global__ void " + k.name + "(" + params + ") {\n";
  s += views;
  s += "  typedef " + I + " I;\n";
  s += "  for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < (I)" +
       std::to_string(k.total) + "LL; i += (I)blockDim.x * (I)gridDim.x) {\n";
  s += k.body;
  s += "  }\n}\n";
  constexpr int64_t kBlock = 256, kMaxGrid = 65535;
  ks.block = {static_cast<uint32_t>(kBlock), 1, 1};
  const int64_t blocks = std::clamp<int64_t>((k.total + kBlock - 1) / kBlock, 1, kMaxGrid);
  ks.grid = {static_cast<uint32_t>(blocks), 1, 1};
  return ks;
}

std::string Decompose(const std::string& index, const std::vector<int64_t>& dims,
                      const std::string& prefix, const std::string& type) {
  std::string s = "    " + type + " " + prefix + "r = " + index + ";\n";
  for (size_t d = dims.size(); d-- > 0;) {
    const std::string c = prefix + std::to_string(d);
    if (dims[d] == 1) {
      s += "    const " + type + " " + c + " = 0;\n";
    } else if (d == 0) {
      s += "    const " + type + " " + c + " = " + prefix + "r;\n";
    } else {
      s += "    const " + type + " " + c + " = " + prefix + "r % " + Lit(dims[d]) + "; " + prefix +
           "r /= " + Lit(dims[d]) + ";\n";
    }
  }
  s += "    (void)" + prefix + "r;";
  for (size_t d = 0; d < dims.size(); ++d) s += " (void)" + Var(prefix, d) + ";";
  s += "\n";
  return s;
}

std::string DecomposeStored(const std::string& index, const std::vector<int64_t>& dims,
                            Layout layout, const std::string& prefix, const std::string& type) {
  const auto order = StorageOrder(dims.size(), layout);
  bool identity = true;
  for (size_t j = 0; j < order.size(); ++j) identity = identity && order[j] == j;
  if (identity) return Decompose(index, dims, prefix, type);
  std::vector<int64_t> stored;
  for (size_t a : order) stored.push_back(dims[a]);
  std::string s = Decompose(index, stored, prefix + "s", type);
  for (size_t j = 0; j < order.size(); ++j)
    s += "    const " + type + " " + Var(prefix, order[j]) + " = " + Var(prefix + "s", j) + ";\n";
  s += "   ";
  for (size_t d = 0; d < dims.size(); ++d) s += " (void)" + Var(prefix, d) + ";";
  return s + "\n";
}

void Simplify(AffineMap& m) {
  if (m.modulo.empty()) m.modulo.assign(m.dims.size(), 0);
  AffineMap out;
  out.base = m.base;
  for (size_t d = 0; d < m.dims.size(); ++d) {
    if (m.dims[d] == 1) continue;
    const int64_t mod = m.modulo[d] >= m.dims[d] ? 0 : m.modulo[d];  // c < dim <= mod: no-op
    if (!out.dims.empty() && mod == 0 && out.modulo.back() == 0 &&
        out.strides.back() == m.strides[d] * m.dims[d]) {
      out.dims.back() *= m.dims[d];
      out.strides.back() = m.strides[d];
      continue;
    }
    out.dims.push_back(m.dims[d]);
    out.strides.push_back(m.strides[d]);
    out.modulo.push_back(mod);
  }
  m = std::move(out);
}

std::string AffineSource(const AffineMap& m, const std::string& type) {
  std::string s = Decompose("i", m.dims, "c", type);
  s += "    const " + type + " src = " + Lit(m.base);
  for (size_t d = 0; d < m.dims.size(); ++d) {
    if (m.strides[d] == 0) continue;
    std::string c = Var("c", d);
    if (m.modulo[d] != 0) c = "(" + c + " % " + Lit(m.modulo[d]) + ")";
    s += " + " + c + " * " + Lit(m.strides[d]);
  }
  return s + ";\n";
}

}  // namespace ortc::backends::cuda::codegen::movement
