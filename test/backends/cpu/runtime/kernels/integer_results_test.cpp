// Integer results of kernels that compute through double: a NaN or out-of-range value (Mod with
// fmod=1 by zero) converted to an integer was undefined behaviour (UBSan reported it when the
// fuzz target ran ONNX's test_mod_int64_fmod on zeros; x86 gave INT64_MIN). NaN now gives 0 and
// large values saturate, while narrow unsigned arithmetic still wraps as ONNX expects. Also run
// under UBSan by scripts/sanitize address. QuantizeLinear had the same conversion for NaN
// quotients.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "model_builder.h"
#include "ortc/runtime.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

// Runs op(a, b) over two 1-D inputs of element type dtype (tensor type code onnx_type).
template <typename E>
std::vector<E> RunBinary(const std::string& op, int32_t onnx_type, DataType dtype,
                         const std::vector<E>& a, const std::vector<E>& b,
                         std::vector<Attr> attrs = {}) {
  const int64_t n = static_cast<int64_t>(a.size());
  ModelBuilder m;
  m.Input("a", {n}, onnx_type).Input("b", {n}, onnx_type);
  m.Node(op, {"a", "b"}, {"y"}, std::move(attrs)).Output("y", onnx_type);
  const std::string bytes = m.Serialize();
  auto session =
      Session::CreateFromBuffer({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  REQUIRE(session.ok());
  auto out = (*session)->Run({{"a", Tensor::FromBytes(dtype, {n}, a.data(), n * sizeof(E))},
                              {"b", Tensor::FromBytes(dtype, {n}, b.data(), n * sizeof(E))}});
  REQUIRE(out.ok());
  const E* y = (*out)[0].template data<E>();
  return std::vector<E>(y, y + n);
}

}  // namespace

TEST_CASE("integer fmod by zero gives 0, not an undefined conversion of NaN", "[integer_results]") {
  const std::vector<int64_t> y = RunBinary<int64_t>(
      "Mod", T::INT64, DataType::kInt64, {0, 7, -7, 9}, {0, 0, 0, 4}, {Attr("fmod", int64_t{1})});
  CHECK(y == std::vector<int64_t>{0, 0, 0, 1});
  const std::vector<int32_t> y32 = RunBinary<int32_t>("Mod", T::INT32, DataType::kInt32, {5, -5},
                                                      {0, 3}, {Attr("fmod", int64_t{1})});
  CHECK(y32 == std::vector<int32_t>{0, -2});
}

TEST_CASE("narrow unsigned arithmetic still wraps", "[integer_results]") {
  const std::vector<uint8_t> y =
      RunBinary<uint8_t>("Sub", T::UINT8, DataType::kUint8, {1, 0, 200}, {2, 1, 100});
  CHECK(y == std::vector<uint8_t>{255, 255, 100});
}

TEST_CASE("QuantizeLinear maps a NaN quotient to the zero point, not an undefined conversion",
          "[integer_results]") {
  // 0 / 0 is what DynamicQuantizeLinear's expanded form computes on an all-zero input.
  for (const float scale : {0.f, 1.f}) {
    ModelBuilder m;
    m.Input("x", {3}).Initializer("scale", {}, {scale});
    m.Node("QuantizeLinear", {"x", "scale"}, {"y"}).Output("y", T::UINT8);
    const std::string bytes = m.Serialize();
    auto session =
        Session::CreateFromBuffer({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
    REQUIRE(session.ok());
    const float x[3] = {0.f, std::numeric_limits<float>::quiet_NaN(), 3.f};
    auto out = (*session)->Run({{"x", Tensor::FromBytes(DataType::kFloat, {3}, x, sizeof x)}});
    REQUIRE(out.ok());
    const uint8_t* y = (*out)[0].data<uint8_t>();
    INFO("scale " << scale);
    CHECK(y[0] == 0);
    CHECK(y[1] == 0);
    CHECK(y[2] == (scale == 0.f ? 255 : 3));  // 3 / 0 is +inf: saturates
  }
}

TEST_CASE("int64 Add, Sub and Mul wrap instead of overflowing", "[integer_results]") {
  // fuzz_model (UBSan): an int64 Add overflowed, which is undefined behaviour in C++.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  CHECK(RunBinary<int64_t>("Add", T::INT64, DataType::kInt64, {kMax, 5}, {1, -7}) ==
        std::vector<int64_t>{kMin, -2});
  CHECK(RunBinary<int64_t>("Sub", T::INT64, DataType::kInt64, {kMin, 5}, {1, 7}) ==
        std::vector<int64_t>{kMax, -2});
  CHECK(RunBinary<int64_t>("Mul", T::INT64, DataType::kInt64, {kMax, -3}, {2, 4}) ==
        std::vector<int64_t>{-2, -12});
}
