// Bit-level float conversions and filter re-layout for the CUDA backend's weights.
#include "cuda/compile/packing.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>

#include "base/half_float.h"

namespace ortc::backends::cuda {

std::string ConvertFloatBytes(const std::string& fp32_bytes, int32_t dtype) {
  if (dtype == onnx::TensorProto::FLOAT) return fp32_bytes;
  const size_t n = fp32_bytes.size() / 4;
  std::string out(n * 2, '\0');
  // Finite values beyond the type's range saturate to its largest finite value rather than
  // become infinities: exporters write "minus infinity" masks as float32's lowest value, and
  // (1 - mask) * -inf is NaN where (1 - mask) * -65504 is the intended 0 (the fp16 converters
  // of the ONNX tooling clamp the same way).
  const float largest = dtype == onnx::TensorProto::BFLOAT16 ? 3.38953139e38f : 65504.f;
  for (size_t i = 0; i < n; ++i) {
    float f;
    std::memcpy(&f, fp32_bytes.data() + 4 * i, 4);
    if (std::isfinite(f) && std::fabs(f) > largest) f = f > 0 ? largest : -largest;
    const uint16_t h =
        dtype == onnx::TensorProto::BFLOAT16 ? exec::FloatToBf16(f) : exec::FloatToHalf(f);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

std::string PackFilterKcrsToKrsc(const std::string& bytes, const std::vector<int64_t>& dims,
                                 int element_bytes) {
  if (dims.size() < 2) return bytes;
  const int64_t k = dims[0], c = dims[1];
  int64_t spatial = 1;
  for (size_t i = 2; i < dims.size(); ++i) spatial *= dims[i];
  std::string out(bytes.size(), '\0');
  if (static_cast<int64_t>(bytes.size()) != k * c * spatial * element_bytes) return bytes;
  for (int64_t ki = 0; ki < k; ++ki) {
    for (int64_t ci = 0; ci < c; ++ci) {
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t from = (ki * c + ci) * spatial + s;
        const int64_t to = (ki * spatial + s) * c + ci;
        std::memcpy(out.data() + to * element_bytes, bytes.data() + from * element_bytes,
                    static_cast<size_t>(element_bytes));
      }
    }
  }
  return out;
}

std::string PackFilterKcrsToCrsk(const std::string& bytes, const std::vector<int64_t>& dims,
                                 int element_bytes) {
  if (dims.size() < 2) return bytes;
  const int64_t k = dims[0];
  int64_t rest = 1;  // C * spatial
  for (size_t i = 1; i < dims.size(); ++i) rest *= dims[i];
  if (static_cast<int64_t>(bytes.size()) != k * rest * element_bytes) return bytes;
  std::string out(bytes.size(), '\0');
  for (int64_t ki = 0; ki < k; ++ki) {
    for (int64_t r = 0; r < rest; ++r) {
      std::memcpy(out.data() + (r * k + ki) * element_bytes,
                  bytes.data() + (ki * rest + r) * element_bytes,
                  static_cast<size_t>(element_bytes));
    }
  }
  return out;
}

}  // namespace ortc::backends::cuda
