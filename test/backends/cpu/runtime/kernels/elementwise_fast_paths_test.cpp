// The CPU kernels' fast paths for what exporter graphs run over every activation, attention
// score or mask (Where over 4-byte values, Pow by a constant, IsNaN, Not, typed comparisons,
// And/Or/Xor, Casts, Split), each against its definition computed here element by element, with
// broadcasting on every side.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "cpu_op.h"
#include "ortc/runtime.h"

using namespace ortc;
using ortc::test::HostTensor;
using ortc::test::RunOp;

namespace {

Tensor Bools(std::vector<int64_t> shape, const std::vector<int>& v) {
  Tensor t = Tensor::Allocate(DataType::kBool, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<bool>()[i] = v[i] != 0;
  return t;
}

}  // namespace

TEST_CASE("Where over 4-byte values broadcasts condition and both sides", "[kernels]") {
  // cond [2, 1, 3], x a scalar, y [1, 4, 3] -> [2, 4, 3]; cond [2, 4, 1] broadcast along the
  // last axis (each row a copy of x's row or a fill of y), int32 values; no broadcast; a value
  // for y.
  const Tensor cond = Bools({2, 1, 3}, {1, 0, 1, 0, 0, 1});
  const Tensor x = HostTensor<float>(DataType::kFloat, {}, {-7.5f});
  std::vector<float> yv(12);
  for (int i = 0; i < 12; ++i) yv[i] = static_cast<float>(i) * 0.5f;
  const Tensor y = HostTensor<float>(DataType::kFloat, {1, 4, 3}, yv);
  auto out = RunOp("Where", 16, {&cond, &x, &y});
  REQUIRE(out[0].shape() == std::vector<int64_t>{2, 4, 3});
  for (int b = 0; b < 2; ++b)
    for (int r = 0; r < 4; ++r)
      for (int k = 0; k < 3; ++k) {
        const bool pick = cond.data<bool>()[b * 3 + k];
        CHECK(out[0].data<float>()[(b * 4 + r) * 3 + k] == (pick ? -7.5f : yv[r * 3 + k]));
      }

  const Tensor cond_rows = Bools({2, 4, 1}, {1, 0, 0, 1, 1, 1, 0, 0});
  const std::vector<int32_t> iv = {1, 2, 3, 4, 5, 6};
  const Tensor xi = HostTensor<int32_t>(DataType::kInt32, {2, 1, 3}, iv);
  const Tensor yi = HostTensor<int32_t>(DataType::kInt32, {1}, {-1});
  auto outi = RunOp("Where", 16, {&cond_rows, &xi, &yi});
  REQUIRE(outi[0].shape() == std::vector<int64_t>{2, 4, 3});
  for (int b = 0; b < 2; ++b)
    for (int r = 0; r < 4; ++r)
      for (int k = 0; k < 3; ++k)
        CHECK(outi[0].data<int32_t>()[(b * 4 + r) * 3 + k] ==
              (cond_rows.data<bool>()[b * 4 + r] ? iv[b * 3 + k] : -1));

  // No broadcast at all: every operand read with unit strides.
  const Tensor cond_full = Bools({2, 3}, {1, 0, 0, 1, 1, 0});
  const Tensor xf = HostTensor<float>(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor yf = HostTensor<float>(DataType::kFloat, {2, 3}, {-1, -2, -3, -4, -5, -6});
  auto outf = RunOp("Where", 16, {&cond_full, &xf, &yf});
  const std::vector<float> want = {1, -2, -3, 4, 5, -6};
  REQUIRE(outf[0].shape() == std::vector<int64_t>{2, 3});
  for (int i = 0; i < 6; ++i) CHECK(outf[0].data<float>()[i] == want[i]);

  // Scores masked with one value (a causal mask's Where(visible, scores, lowest)).
  const Tensor lowest = HostTensor<float>(DataType::kFloat, {}, {-9.0f});
  auto outm = RunOp("Where", 16, {&cond_full, &xf, &lowest});
  const std::vector<float> masked = {1, -9, -9, 4, 5, -9};
  for (int i = 0; i < 6; ++i) CHECK(outm[0].data<float>()[i] == masked[i]);
}

TEST_CASE("Pow by a constant exponent of any type", "[kernels]") {
  const std::vector<float> xv = {-2.0f, -0.5f, 0.0f, 1.5f, 3.0f, 10.0f};
  const Tensor x = HostTensor<float>(DataType::kFloat, {2, 3}, xv);
  const Tensor three = HostTensor<int64_t>(DataType::kInt64, {}, {3});
  const Tensor two = HostTensor<float>(DataType::kFloat, {1}, {2.0f});
  const Tensor half = HostTensor<double>(DataType::kDouble, {}, {0.5});
  auto cube = RunOp("Pow", 15, {&x, &three});
  auto square = RunOp("Pow", 15, {&x, &two});
  auto root = RunOp("Pow", 15, {&x, &half});
  REQUIRE(cube[0].shape() == x.shape());
  REQUIRE(square[0].shape() == x.shape());
  for (size_t i = 0; i < xv.size(); ++i) {
    CHECK(cube[0].data<float>()[i] ==
          Approx(std::pow(static_cast<double>(xv[i]), 3)).epsilon(1e-6));
    CHECK(square[0].data<float>()[i] == xv[i] * xv[i]);
    const double r = std::pow(static_cast<double>(xv[i]), 0.5);
    if (std::isnan(r))
      CHECK(std::isnan(root[0].data<float>()[i]));
    else
      CHECK(root[0].data<float>()[i] == Approx(r).epsilon(1e-6));
  }
  // An exponent of higher rank than the base broadcasts the output up to its rank.
  const Tensor row = HostTensor<float>(DataType::kFloat, {3}, {1.0f, 2.0f, 3.0f});
  const Tensor two_2d = HostTensor<float>(DataType::kFloat, {1, 1}, {2.0f});
  auto up = RunOp("Pow", 15, {&row, &two_2d});
  CHECK(up[0].shape() == std::vector<int64_t>{1, 3});
  CHECK(up[0].data<float>()[2] == 9.0f);
}

TEST_CASE("IsNaN over floats and Not over bools", "[kernels]") {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x =
      HostTensor<float>(DataType::kFloat, {5}, {0.0f, std::nanf(""), inf, -inf, -std::nanf("")});
  auto nan = RunOp("IsNaN", 20, {&x});
  const std::vector<bool> want = {false, true, false, false, true};
  for (size_t i = 0; i < want.size(); ++i) CHECK(nan[0].data<bool>()[i] == want[i]);
  const Tensor b = Bools({2, 2}, {1, 0, 0, 1});
  auto n = RunOp("Not", 1, {&b});
  CHECK(n[0].data<bool>()[0] == false);
  CHECK(n[0].data<bool>()[1] == true);
  CHECK(n[0].data<bool>()[3] == false);
}

TEST_CASE("comparisons of one type broadcast into bool as their definitions", "[kernels]") {
  // The causal mask's form: kv index [1, 1, 1, 4] <= query index [1, 1, 3, 1], as int64; then
  // float against a broadcast row, NaN comparing false; then int32 equal to a scalar.
  const Tensor kv = HostTensor<int64_t>(DataType::kInt64, {1, 1, 1, 4}, {0, 1, 2, 3});
  const Tensor q = HostTensor<int64_t>(DataType::kInt64, {1, 1, 3, 1}, {0, 2, 3});
  auto causal = RunOp("LessOrEqual", 16, {&kv, &q});
  REQUIRE(causal[0].shape() == std::vector<int64_t>{1, 1, 3, 4});
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 4; ++k)
      CHECK(causal[0].data<bool>()[r * 4 + k] == (k <= std::vector<int>{0, 2, 3}[r]));

  const Tensor x =
      HostTensor<float>(DataType::kFloat, {2, 3}, {1.0f, std::nanf(""), -2.0f, 4.0f, 0.5f, 3.0f});
  const Tensor row = HostTensor<float>(DataType::kFloat, {3}, {1.0f, 0.0f, 3.0f});
  const std::vector<bool> greater = {false, false, false, true, true, false};
  const std::vector<bool> equal = {true, false, false, false, false, true};
  auto g = RunOp("Greater", 13, {&x, &row});
  auto e = RunOp("Equal", 13, {&x, &row});
  auto ge = RunOp("GreaterOrEqual", 16, {&x, &row});
  auto l = RunOp("Less", 13, {&x, &row});
  for (size_t i = 0; i < greater.size(); ++i) {
    CHECK(g[0].data<bool>()[i] == greater[i]);
    CHECK(e[0].data<bool>()[i] == equal[i]);
    CHECK(ge[0].data<bool>()[i] == (greater[i] || equal[i]));
    CHECK(l[0].data<bool>()[i] == (i != 1 && !greater[i] && !equal[i]));
  }

  const Tensor ints = HostTensor<int32_t>(DataType::kInt32, {4}, {3, -3, 3, 0});
  const Tensor three = HostTensor<int32_t>(DataType::kInt32, {}, {3});
  auto eq = RunOp("Equal", 13, {&ints, &three});
  CHECK(eq[0].data<bool>()[0]);
  CHECK_FALSE(eq[0].data<bool>()[1]);
  CHECK(eq[0].data<bool>()[2]);
  CHECK_FALSE(eq[0].data<bool>()[3]);
}

TEST_CASE("And, Or and Xor of bools broadcast", "[kernels]") {
  const Tensor a = Bools({2, 1}, {1, 0});
  const Tensor b = Bools({1, 3}, {1, 0, 1});
  auto both = RunOp("And", 7, {&a, &b});
  auto either = RunOp("Or", 7, {&a, &b});
  auto one = RunOp("Xor", 7, {&a, &b});
  REQUIRE(both[0].shape() == std::vector<int64_t>{2, 3});
  const int av[2] = {1, 0}, bv[3] = {1, 0, 1};
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 3; ++k) {
      CHECK(both[0].data<bool>()[r * 3 + k] == (av[r] && bv[k]));
      CHECK(either[0].data<bool>()[r * 3 + k] == (av[r] || bv[k]));
      CHECK(one[0].data<bool>()[r * 3 + k] == (av[r] != bv[k]));
    }
}

namespace {
Tensor CastOf(const Tensor& x, DataType to) {
  return RunOp("Cast", 19, {&x}, {{"to", static_cast<int64_t>(to)}})[0];
}
}  // namespace

TEST_CASE("Casts between bool, integers and floats keep C++'s conversions", "[kernels]") {
  const Tensor mask = HostTensor<int64_t>(DataType::kInt64, {4}, {1, 0, -5, 1LL << 40});
  const Tensor as_float = CastOf(mask, DataType::kFloat);
  CHECK(as_float.data<float>()[2] == -5.0f);
  CHECK(as_float.data<float>()[3] == 1099511627776.0f);
  const Tensor as_bool = CastOf(mask, DataType::kBool);
  CHECK(as_bool.data<bool>()[0]);
  CHECK_FALSE(as_bool.data<bool>()[1]);
  CHECK(as_bool.data<bool>()[2]);
  const Tensor back = CastOf(as_bool, DataType::kInt32);
  CHECK(back.data<int32_t>()[1] == 0);
  CHECK(back.data<int32_t>()[3] == 1);
  const Tensor halfway = HostTensor<double>(DataType::kDouble, {2}, {0.1, std::nan("")});
  const Tensor narrowed = CastOf(halfway, DataType::kFloat);
  CHECK(narrowed.data<float>()[0] == 0.1f);
  CHECK(std::isnan(narrowed.data<float>()[1]));
  CHECK(CastOf(halfway, DataType::kBool).data<bool>()[1]);  // NaN is not zero
}

TEST_CASE("Split copies each piece's rows", "[kernels]") {
  std::vector<float> xv(2 * 6 * 3);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
  const Tensor x = HostTensor<float>(DataType::kFloat, {2, 6, 3}, xv);
  const Tensor sizes = HostTensor<int64_t>(DataType::kInt64, {3}, {1, 3, 2});
  const auto r = RunOp("Split", 13, {&x, &sizes}, {{"axis", 1}}, 3);
  const int64_t starts[3] = {0, 1, 4}, lens[3] = {1, 3, 2};
  for (int p = 0; p < 3; ++p) {
    REQUIRE(r[p].shape() == std::vector<int64_t>{2, lens[p], 3});
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t j = 0; j < lens[p]; ++j)
        for (int64_t k = 0; k < 3; ++k)
          CHECK(r[p].data<float>()[(b * lens[p] + j) * 3 + k] ==
                xv[(b * 6 + starts[p] + j) * 3 + k]);
  }
}
