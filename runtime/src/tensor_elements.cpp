// Elements of a host tensor read and written as double: see ElementAsDouble in ortc/tensor.h.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "base/element_types.h"
#include "base/half_float.h"
#include "ortc/tensor.h"

namespace ortc {

double ElementAsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat16:
      return exec::HalfToFloat(t.data<uint16_t>()[i]);
    case DataType::kBfloat16:
      return exec::Bf16ToFloat(t.data<uint16_t>()[i]);
    default:
      break;
  }
  double v = 0;
  VisitNumericType(static_cast<int32_t>(t.dtype()), [&](auto z) {
    using T = decltype(z);
    v = static_cast<double>(t.data<T>()[i]);
  });
  return v;
}

void SetElementFromDouble(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DataType::kFloat16:
      t.mutable_data<uint16_t>()[i] = exec::FloatToHalf(static_cast<float>(v));
      return;
    case DataType::kBfloat16:
      t.mutable_data<uint16_t>()[i] = exec::FloatToBf16(static_cast<float>(v));
      return;
    default:
      break;
  }
  VisitNumericType(static_cast<int32_t>(t.dtype()), [&](auto z) {
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

}  // namespace ortc
