// Kernel helper implementations.
#include "kernels/kernel_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ortc::exec {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u)
    return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf (incl. rounding)
  if (abs < 0x38800000u) {                         // subnormal or zero in half
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t e = abs >> 23;
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 113 - e + 13
    uint32_t half = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs >> 13) - ((127 - 15) << 10));
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;
  return static_cast<uint16_t>(sign | half);
}

bool IsFloatType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 ||
         t == DataType::kBfloat16;
}

double ReadAsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat16:
      return HalfToFloat(t.data<uint16_t>()[i]);
    case DataType::kBfloat16:
      return Bf16ToFloat(t.data<uint16_t>()[i]);
    default:
      break;
  }
  double v = 0;
  DispatchNumeric(t.dtype(), [&](auto z) {
    using T = decltype(z);
    v = static_cast<double>(t.data<T>()[i]);
  });
  return v;
}

void WriteFromDouble(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DataType::kFloat16:
      t.mutable_data<uint16_t>()[i] = FloatToHalf(static_cast<float>(v));
      return;
    case DataType::kBfloat16:
      t.mutable_data<uint16_t>()[i] = FloatToBf16(static_cast<float>(v));
      return;
    default:
      break;
  }
  DispatchNumeric(t.dtype(), [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // A NaN or out-of-range double (an integer Mod or Div by zero computes through double)
      // converted to an integer is undefined behaviour. NaN becomes 0; the rest goes through
      // int64 (saturated), then wraps modulo 2^bits into narrower types, as uint8 arithmetic
      // such as 1 - 2 = 255 expects.
      T out;
      if (std::isnan(v)) {
        out = T{0};
      } else if (std::is_same_v<T, uint64_t> && v >= 0x1p63) {
        out = v >= 0x1p64 ? std::numeric_limits<T>::max() : static_cast<T>(v);
      } else {
        const int64_t w = v <= -0x1p63  ? std::numeric_limits<int64_t>::min()
                          : v >= 0x1p63 ? std::numeric_limits<int64_t>::max()
                                        : static_cast<int64_t>(v);
        out = static_cast<T>(w);
      }
      t.mutable_data<T>()[i] = out;
    } else {
      t.mutable_data<T>()[i] = static_cast<T>(v);
    }
  });
}

bool IsIntegerType(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kUint64:
      return true;
    default:
      return false;
  }
}

uint64_t ReadBits(const Tensor& t, int64_t i) {
  uint64_t v = 0;
  DispatchNumeric(t.dtype(), [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_integral_v<T>) v = static_cast<uint64_t>(t.data<T>()[i]);
  });
  return v;
}

void WriteBits(Tensor& t, int64_t i, uint64_t v) {
  DispatchNumeric(t.dtype(), [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_integral_v<T>) t.mutable_data<T>()[i] = static_cast<T>(v);
  });
}

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

int64_t Product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, v.size()); ++i) p *= v[i];
  return p;
}

std::optional<std::vector<int64_t>> BroadcastShape(
    const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      const size_t d = rank - s.size() + i;
      if (s[i] == out[d] || s[i] == 1) continue;
      if (out[d] != 1) return std::nullopt;
      out[d] = s[i];
    }
  }
  return out;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  const auto in_strides = Strides(in);
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t d = out.size() - in.size() + i;
    strides[d] = in[i] == 1 ? 0 : in_strides[i];
  }
  return strides;
}

bool NormaliseAxis(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

SliceAxis ResolveSliceAxis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  const int64_t longest = std::max<int64_t>(dim, 1);
  SliceAxis r;
  r.step = std::clamp<int64_t>(step, -longest, longest);
  // Clamped before adding dim, so that bounds near the int64 limits cannot overflow.
  start = std::clamp<int64_t>(start, -dim - 1, dim + 1);
  end = std::clamp<int64_t>(end, -dim - 1, dim + 1);
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (r.step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.count = end > start ? (end - start - 1) / r.step + 1 : 0;
  } else {
    // [0, dim - 1] as the specification says (ONNX Runtime agrees; numpy would give nothing
    // for a start before the beginning); an empty axis gives nothing.
    start = std::clamp<int64_t>(start, std::min<int64_t>(0, dim - 1), dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    r.count = start > end ? (start - end - 1) / -r.step + 1 : 0;
  }
  r.begin = r.count > 0 ? start : 0;
  return r;
}

std::optional<int64_t> FirstIntOf(const Tensor* t) {
  auto v = IntsOf(t);
  if (!v || v->empty()) return std::nullopt;
  return v->front();
}

std::optional<std::vector<int64_t>> IntsOf(const Tensor* t) {
  if (!t) return std::nullopt;
  std::vector<int64_t> v(static_cast<size_t>(t->elements()));
  if (t->dtype() == DataType::kInt64) {
    if (!v.empty()) std::memcpy(v.data(), t->raw(), v.size() * 8);  // empty: both may be null
  } else if (t->dtype() == DataType::kInt32) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t->data<int32_t>()[i];
  } else {
    return std::nullopt;
  }
  return v;
}

void KernelContext::MissingInput(size_t i) const {
  throw MalformedNode(
      "input " + std::to_string(i) + " is required but the node has " +
      (i < inputs_.size() ? "it omitted" : std::to_string(inputs_.size()) + " inputs"));
}

void KernelContext::MissingOutput(size_t i) const {
  throw MalformedNode("output " + std::to_string(i) + " is written but the node has " +
                      std::to_string(outputs_->size()) + " outputs");
}

void KernelContext::CheckSize(size_t i, DataType dtype, const std::vector<int64_t>& shape) const {
  if (max_output_bytes_ == 0) return;
  // In long double: a hostile shape's product may not fit 64 bits.
  long double bytes = static_cast<long double>(std::max<size_t>(ElementSize(dtype), 1));
  for (int64_t d : shape) bytes *= static_cast<long double>(d < 0 ? 0 : d);
  if (bytes <= static_cast<long double>(max_output_bytes_)) return;
  char need[32];
  std::snprintf(need, sizeof need, "%.3Lg", bytes);
  throw TensorTooLarge("output " + std::to_string(i) + " would need " + need +
                       " bytes, more than the " + std::to_string(max_output_bytes_) +
                       " one tensor may have (SessionOptions::max_tensor_bytes)");
}

}  // namespace ortc::exec
