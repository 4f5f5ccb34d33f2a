// Elementwise ops of exporters' graphs worked out by hand: integer Mod and Div at zero and at
// the limits, IsInf's attributes, BitShift past the width, float-to-int Cast of NaN, infinities
// and values beyond int32, SDPA's Where(IsNaN(x), 0, x) as one fused kernel; and the reasons
// given for the dtype combinations that are refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "data_movement_test_util.h"

namespace ortc::test::cuda {
namespace {

constexpr int32_t I32 = TensorProto::INT32, I64 = TensorProto::INT64, B = TensorProto::BOOL,
                  U8 = TensorProto::UINT8, I8 = TensorProto::INT8;
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}
template <typename T>
std::vector<T> As(const std::string& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

std::vector<int32_t> Mod32(int fmod, const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const auto n = static_cast<int64_t>(a.size());
  const cg::OpDesc op =
      Op("Mod", 13, {T(I32, {n}), T(I32, {n})}, {T(I32, {n})}, {AttrInt("fmod", fmod)});
  return As<int32_t>(RunKernel(op, "hand_mod" + std::to_string(fmod), {Bytes(a), Bytes(b)})[0]);
}

TEST_CASE("Integer Mod and Div, by hand", "[cuda][elementwise]") {
  const std::vector<int32_t> a = {-7, 7, -7, 7, 5, kMin32, kMin32, 0};
  const std::vector<int32_t> b = {3, -3, -3, 3, 0, -1, 3, -4};
  // fmod = 0: the remainder has the divisor's sign; fmod = 1: the dividend's. x mod 0 and
  // MIN mod -1 are 0. -2^31 = -715827883 * 3 + 1.
  CHECK(Mod32(0, a, b) == std::vector<int32_t>{2, -2, -1, 1, 0, 0, 1, 0});
  CHECK(Mod32(1, a, b) == std::vector<int32_t>{-1, 1, -1, 1, 0, 0, -2, 0});
  // Div truncates; x / 0 is 0 and MIN / -1 wraps to MIN (no trap on the host either).
  const cg::OpDesc div = Op("Div", 14, {T(I32, {8}), T(I32, {8})}, {T(I32, {8})});
  CHECK(As<int32_t>(RunKernel(div, "hand_div", {Bytes(a), Bytes(b)})[0]) ==
        std::vector<int32_t>{-2, -2, 2, 2, 0, kMin32, -715827882, 0});
}

TEST_CASE("Float Mod, IsInf attributes and BitShift, by hand", "[cuda][elementwise]") {
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  {
    const cg::OpDesc op = Op("Mod", 13, {T(F, {4}), T(F, {4})}, {T(F, {4})});
    // fmod = 0 on floats: -5.5 mod 2 = 0.5, 5.5 mod -2 = -0.5, x mod 0 = 0.
    const auto out =
        RunKernel(op, "hand_fmod0", {Floats({-5.5f, 5.5f, 3, 4.5f}), Floats({2, -2, 0, 1.5f})});
    CHECK(AsFloats(out[0]) == std::vector<float>{0.5f, -0.5f, 0, 0});
  }
  const std::string x = Floats({inf, -inf, nan, 1, -1e38f});
  auto is_inf = [&](int pos, int neg) {
    const cg::OpDesc op = Op("IsInf", 20, {T(F, {5})}, {T(B, {5})},
                             {AttrInt("detect_positive", pos), AttrInt("detect_negative", neg)});
    const auto out = RunKernel(op, "hand_isinf" + std::to_string(pos) + std::to_string(neg), {x});
    return As<uint8_t>(out[0]);
  };
  CHECK(is_inf(1, 1) == std::vector<uint8_t>{1, 1, 0, 0, 0});
  CHECK(is_inf(1, 0) == std::vector<uint8_t>{1, 0, 0, 0, 0});
  CHECK(is_inf(0, 1) == std::vector<uint8_t>{0, 1, 0, 0, 0});
  CHECK(is_inf(0, 0) == std::vector<uint8_t>{0, 0, 0, 0, 0});
  {
    const cg::OpDesc left = Op("BitShift", 11, {T(U8, {4}), T(U8, {4})}, {T(U8, {4})},
                               {AttrString("direction", "LEFT")});
    const cg::OpDesc right = Op("BitShift", 11, {T(U8, {4}), T(U8, {4})}, {T(U8, {4})},
                                {AttrString("direction", "RIGHT")});
    const std::string v = Bytes<uint8_t>({0x81, 3, 255, 16}), k = Bytes<uint8_t>({1, 7, 8, 200});
    CHECK(As<uint8_t>(RunKernel(left, "hand_shl", {v, k})[0]) ==
          std::vector<uint8_t>{0x02, 0x80, 0, 0});
    CHECK(As<uint8_t>(RunKernel(right, "hand_shr", {v, k})[0]) ==
          std::vector<uint8_t>{0x40, 0, 0, 0});
  }
}

TEST_CASE("Float to integer Cast goes through int64 as the CPU converts", "[cuda][elementwise]") {
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  const std::string x = Floats({nan, inf, -inf, 3e9f, -2.75f, 1e20f});
  const cg::OpDesc to32 = Op("Cast", 19, {T(F, {6})}, {T(I32, {6})}, {AttrInt("to", I32)});
  // NaN -> 0; inf -> INT64_MAX, whose low 32 bits are -1; -inf -> INT64_MIN, low bits 0;
  // 3e9 -> 3000000000 - 2^32; 1e20 saturates like inf.
  CHECK(As<int32_t>(RunKernel(to32, "hand_cast_i32", {x})[0]) ==
        std::vector<int32_t>{0, -1, 0, -1294967296, -2, -1});
  const cg::OpDesc to64 = Op("Cast", 19, {T(F, {6})}, {T(I64, {6})}, {AttrInt("to", I64)});
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(),
                    kMin = std::numeric_limits<int64_t>::min();
  CHECK(As<int64_t>(RunKernel(to64, "hand_cast_i64", {x})[0]) ==
        std::vector<int64_t>{0, kMax, kMin, 3000000000, -2, kMax});
}

TEST_CASE("Where(IsNaN(x), 0, x) is one fused kernel, by hand", "[cuda][elementwise]") {
  const std::vector<int64_t> s = {2, 3};
  cg::FusedGroup g;
  g.inputs = {T(F, s), T(F, {})};
  g.ops.push_back({Op("IsNaN", 20, {T(F, s)}, {T(B, s)}), {0}});
  g.ops.push_back({Op("Where", 16, {T(B, s), T(F, {}), T(F, s)}, {T(F, s)}), {-1, 1, 0}});
  g.outputs = {1};
  auto k = cg::EmitFused("hand_where_isnan", g);
  REQUIRE(k.ok());
  auto module = HostModule::Compile({k.value()});
  REQUIRE(module.ok());
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  std::string x = Floats({nan, 1, -inf, -nan, 0.25f, -3}), zero = Floats({0});
  std::string out(6 * 4, '\x7f');
  REQUIRE(module.value().Launch(k.value(), {x.data(), zero.data(), out.data()}).ok());
  CHECK(AsFloats(out) == std::vector<float>{0, 1, -inf, 0, 0.25f, -3});
}

std::string Why(const cg::OpDesc& op) {
  return cg::Unsupported(op);
}

TEST_CASE("Exporters' elementwise ops are claimed, with reasons for what is refused",
          "[cuda][elementwise]") {
  for (const char* op : {"IsNaN", "IsInf", "Xor", "Mod", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
                         "BitwiseNot", "BitShift"}) {
    INFO(op);
    CHECK(cg::HasKernel(op));
    CHECK(cg::IsElementwise(op));
  }
  const std::vector<int64_t> s = {2, 3};
  CHECK(Why(Op("IsNaN", 20, {T(TensorProto::BFLOAT16, s)}, {T(B, s)})) == "");
  CHECK_THAT(Why(Op("IsNaN", 20, {T(I32, s)}, {T(B, s)})),
             Catch::Contains("IsNaN on INT32 is not supported (float inputs only)"));
  CHECK_THAT(Why(Op("IsInf", 20, {T(F, s)}, {T(F, s)})),
             Catch::Contains("output type FLOAT instead of BOOL"));
  CHECK_THAT(Why(Op("Xor", 7, {T(I32, s), T(I32, s)}, {T(B, s)})), Catch::Contains("bool inputs"));
  CHECK_THAT(Why(Op("Mod", 13, {T(B, s), T(B, s)}, {T(B, s)})), Catch::Contains("Mod on BOOL"));
  CHECK_THAT(Why(Op("Mod", 13, {T(I8, s), T(I8, s)}, {T(I8, s)})), Catch::Contains("Mod on INT8"));
  CHECK_THAT(Why(Op("Mod", 13, {T(I32, s), T(I64, s)}, {T(I32, s)})), Catch::Contains("mixed"));
  CHECK(Why(Op("BitwiseXor", 18, {T(I8, s), T(I8, s)}, {T(I8, s)})) == "");
  CHECK_THAT(Why(Op("BitwiseAnd", 18, {T(F, s), T(F, s)}, {T(F, s)})),
             Catch::Contains("integer inputs only"));
  CHECK_THAT(Why(Op("BitwiseNot", 18, {T(B, s)}, {T(B, s)})),
             Catch::Contains("integer inputs only"));
  CHECK_THAT(Why(Op("BitShift", 11, {T(I32, s), T(I32, s)}, {T(I32, s)},
                    {AttrString("direction", "LEFT")})),
             Catch::Contains("unsigned integers only"));
  CHECK_THAT(Why(Op("BitShift", 11, {T(U8, s), T(U8, s)}, {T(U8, s)})),
             Catch::Contains("direction LEFT or RIGHT"));
  CHECK_THAT(Why(Op("BitShift", 11, {T(TensorProto::UINT32, s), T(TensorProto::UINT32, s)},
                    {T(TensorProto::UINT32, s)}, {AttrString("direction", "LEFT")})),
             Catch::Contains("UINT32"));
  CHECK_THAT(Why(Op("Where", 16, {T(B, s), T(I32, s), T(I64, s)}, {T(I64, s)})),
             Catch::Contains("branches of different element types"));
  CHECK(Why(Op("Where", 16, {T(B, s), T(B, s), T(B, s)}, {T(B, s)})) == "");
  CHECK(Why(Op("Equal", 19, {T(B, s), T(B, s)}, {T(B, s)})) == "");
  CHECK_THAT(Why(Op("Less", 13, {T(I64, s), T(I64, s)}, {T(I64, s)})),
             Catch::Contains("instead of BOOL"));
  CHECK_THAT(Why(Op("Add", 14, {T(I64, s), T(I64, s)}, {T(I32, s)})),
             Catch::Contains("differs from the inputs'"));
}

}  // namespace
}  // namespace ortc::test::cuda
