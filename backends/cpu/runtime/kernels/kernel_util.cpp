// Kernel helper implementations.
#include "cpu/runtime/kernels/kernel_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ortc::exec {

bool IsFloatType(DataType t) {
  return IsFloatElementType(static_cast<int32_t>(t));
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

double RowSum(const float* x, int64_t n) {
  double part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) part[k] += x[i + k];
  double sum = 0;
  for (; i < n; ++i) sum += x[i];
  for (double p : part) sum += p;
  return sum;
}

void CopyElement(const Tensor& src, int64_t src_i, Tensor& dst, int64_t dst_i) {
  if (src.dtype() == DataType::kString) {
    dst.mutable_strings()[dst_i] = src.strings()[src_i];
    return;
  }
  const size_t es = ElementSize(src.dtype());
  std::memcpy(static_cast<char*>(dst.mutable_raw()) + dst_i * es,
              static_cast<const char*>(src.raw()) + src_i * es, es);
}

}  // namespace ortc::exec
