// Packing bit for bit: fp16 against the compiler's _Float16 conversion, bf16 against a
// distance-based reference, KCRS -> KRSC against plain index loops.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "codegen/reference_conversions.h"
#include "cpu/runtime/kernels/kernel_util.h"
#include "cuda/compile/packing.h"

using namespace ortc::backends::cuda;
using ortc::test::cuda::BitsFloat;
using ortc::test::cuda::RefFloatToBf16;
using ortc::test::cuda::RefFloatToHalf;

namespace {

// Edge values plus random bit patterns spread over every exponent (subnormals, halfway cases).
std::vector<float> Samples() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          65504.0f,
                          65519.996f,
                          65520.0f,
                          1e9f,
                          -1e9f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::max(),
                          5.9604645e-8f,
                          2.9802322e-8f,
                          2.9802326e-8f,
                          6.1035156e-5f,
                          6.097555e-5f};
  // Exact ties for fp16 (the 13 dropped bits are 1000...0) and for bf16 (16 bits).
  for (uint32_t e = 100; e < 150; ++e) {
    v.push_back(BitsFloat((e << 23) | 0x1000u));
    v.push_back(BitsFloat((e << 23) | 0x3000u));
    v.push_back(BitsFloat((e << 23) | 0x8000u));
    v.push_back(BitsFloat((e << 23) | 0x18000u));
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t bits = rng();
    const float f = BitsFloat(bits);
    if (!std::isnan(f)) v.push_back(f);
  }
  return v;
}

}  // namespace

TEST_CASE("fp16 conversion matches _Float16 rounding bit for bit", "[packing]") {
  for (float f : Samples()) {
    INFO("value " << f);
    REQUIRE(ortc::exec::FloatToHalf(f) == RefFloatToHalf(f));
  }
  const uint16_t nan = ortc::exec::FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7c00) == 0x7c00);
  CHECK((nan & 0x3ff) != 0);
}

TEST_CASE("bf16 conversion matches the distance-based reference bit for bit", "[packing]") {
  for (float f : Samples()) {
    INFO("value " << f);
    REQUIRE(ortc::exec::FloatToBf16(f) == RefFloatToBf16(f));
  }
  const uint16_t nan = ortc::exec::FloatToBf16(-std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7f80) == 0x7f80);
  CHECK((nan & 0x7f) != 0);
}

TEST_CASE("ConvertFloatBytes converts every element", "[packing]") {
  const std::vector<float> values = {1.0f, -2.5f, 3.14159f, 1e-6f, 60000.0f};
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  const std::string half = ConvertFloatBytes(bytes, onnx::TensorProto::FLOAT16);
  const std::string bf = ConvertFloatBytes(bytes, onnx::TensorProto::BFLOAT16);
  REQUIRE(half.size() == values.size() * 2);
  REQUIRE(bf.size() == values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t h, b;
    std::memcpy(&h, half.data() + 2 * i, 2);
    std::memcpy(&b, bf.data() + 2 * i, 2);
    CHECK(h == RefFloatToHalf(values[i]));
    CHECK(b == RefFloatToBf16(values[i]));
  }
  CHECK(ConvertFloatBytes(bytes, onnx::TensorProto::FLOAT) == bytes);
}

TEST_CASE("ConvertFloatBytes saturates finite values beyond the type's range", "[packing]") {
  // float32's lowest value is how exporters write "minus infinity" masks: it must stay finite,
  // or (1 - mask) * lowest turns into 0 * -inf = NaN on the device.
  const float lowest = -3.4028234663852886e38f;
  const std::vector<float> values = {70000.0f, lowest, INFINITY, -INFINITY};
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  const std::string half = ConvertFloatBytes(bytes, onnx::TensorProto::FLOAT16);
  const std::string bf = ConvertFloatBytes(bytes, onnx::TensorProto::BFLOAT16);
  auto at = [](const std::string& s, size_t i) {
    uint16_t v;
    std::memcpy(&v, s.data() + 2 * i, 2);
    return v;
  };
  CHECK(at(half, 0) == 0x7BFF);  // 65504
  CHECK(at(half, 1) == 0xFBFF);  // -65504
  CHECK(at(half, 2) == 0x7C00);  // infinities stay infinite
  CHECK(at(half, 3) == 0xFC00);
  CHECK(at(bf, 0) == RefFloatToBf16(70000.0f));
  CHECK(at(bf, 1) == 0xFF7F);  // bfloat16's lowest finite value
  CHECK(at(bf, 2) == 0x7F80);
  CHECK(at(bf, 3) == 0xFF80);
}

TEST_CASE("KCRS filters repack to KRSC like the index loops say", "[packing]") {
  const int64_t K = 3, C = 5, R = 2, S = 4;
  std::vector<uint16_t> in(K * C * R * S);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(1000 + i);
  std::string bytes(in.size() * 2, '\0');
  std::memcpy(bytes.data(), in.data(), bytes.size());
  const std::string packed = PackFilterKcrsToKrsc(bytes, {K, C, R, S}, 2);
  REQUIRE(packed.size() == bytes.size());
  std::vector<uint16_t> out(in.size());
  std::memcpy(out.data(), packed.data(), packed.size());
  for (int64_t k = 0; k < K; ++k)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t c = 0; c < C; ++c)
          REQUIRE(out[((k * R + r) * S + s) * C + c] == in[((k * C + c) * R + r) * S + s]);

  // 1-D filters [K, C, S] and 4-byte elements follow the same rule.
  std::vector<float> f(K * C * S);
  for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i);
  std::string fb(f.size() * 4, '\0');
  std::memcpy(fb.data(), f.data(), fb.size());
  const std::string p1 = PackFilterKcrsToKrsc(fb, {K, C, S}, 4);
  std::vector<float> o(f.size());
  std::memcpy(o.data(), p1.data(), p1.size());
  for (int64_t k = 0; k < K; ++k)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t c = 0; c < C; ++c) REQUIRE(o[(k * S + s) * C + c] == f[(k * C + c) * S + s]);
}

TEST_CASE("KCRS filters repack to CRSK (filters innermost) like the index loops say", "[packing]") {
  const int64_t K = 6, C = 2, R = 3, S = 2;
  std::vector<uint16_t> in(K * C * R * S);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(7 + 3 * i);
  std::string bytes(in.size() * 2, '\0');
  std::memcpy(bytes.data(), in.data(), bytes.size());
  const std::string packed = PackFilterKcrsToCrsk(bytes, {K, C, R, S}, 2);
  REQUIRE(packed.size() == bytes.size());
  std::vector<uint16_t> out(in.size());
  std::memcpy(out.data(), packed.data(), packed.size());
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t s = 0; s < S; ++s)
          REQUIRE(out[((c * R + r) * S + s) * K + k] == in[((k * C + c) * R + r) * S + s]);
  // Bytes of the wrong size are returned as they are (the caller's dims are checked elsewhere).
  CHECK(PackFilterKcrsToCrsk(bytes.substr(2), {K, C, R, S}, 2) == bytes.substr(2));
}
