// CompareTensors for the conformance suites: NaN matches NaN, infinities must be equal.
#include "tensor_compare.h"

#include <algorithm>
#include <cmath>

#include "cpu/runtime/kernels/kernel_util.h"

namespace ortc::test {

std::string CompareTensors(const Tensor& got, const Tensor& want, const Tolerance& tol,
                           double* worst) {
  if (got.dtype() != want.dtype())
    return "dtype " + DataTypeName(got.dtype()) + " != expected " + DataTypeName(want.dtype());
  if (got.shape() != want.shape()) {
    std::string g, w;
    for (auto d : got.shape()) g += std::to_string(d) + ",";
    for (auto d : want.shape()) w += std::to_string(d) + ",";
    return "shape [" + g + "] != expected [" + w + "]";
  }
  if (got.dtype() == DataType::kString)
    return got.strings() == want.strings() ? "" : "strings differ";
  const bool fp = exec::IsFloatType(got.dtype());
  for (int64_t i = 0; i < got.elements(); ++i) {
    const double g = ElementAsDouble(got, i), w = ElementAsDouble(want, i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (fp && std::isinf(w) && g == w) continue;
    if (fp && worst)
      *worst = std::max(*worst, std::fabs(g - w) / (tol.atol + tol.rtol * std::fabs(w)));
    if (fp ? !(std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w)) : g != w) {
      return "element " + std::to_string(i) + ": " + std::to_string(g) + " != expected " +
             std::to_string(w);
    }
  }
  return "";
}

}  // namespace ortc::test
