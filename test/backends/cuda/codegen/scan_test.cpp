// CumSum kernels beyond the shared semantics test: position ids from a left-padded attention
// mask and the block kernel's chunks, computed by hand, and the reasons given for refusals.
#include "data_movement_test_util.h"

namespace ortc::test::cuda {
namespace {

constexpr int32_t I32 = TensorProto::INT32, I64 = TensorProto::INT64;

template <typename V>
std::string Bytes(const std::vector<V>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(V)};
}
template <typename V>
std::vector<V> As(const std::string& b) {
  std::vector<V> v(b.size() / sizeof(V));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

cg::OpDesc CumSum(int32_t dtype, std::vector<int64_t> dims, int64_t axis, bool exclusive,
                  bool reverse) {
  auto op = Op("CumSum", 14, {T(dtype, dims), T(I64, {})}, {T(dtype, dims)},
               {AttrInt("exclusive", exclusive), AttrInt("reverse", reverse)});
  SetConstant(op, 1, {static_cast<double>(axis)});
  return op;
}

TEST_CASE("CumSum by hand: mask positions, exclusive reverse, block chunks", "[cuda][scan]") {
  // attention_mask.cumsum(-1) of a left-padded mask (the position ids before the "- 1").
  const auto ids = RunKernel(CumSum(I64, {1, 8}, -1, false, false), "hand_cumsum_mask",
                             {Bytes<int64_t>({0, 0, 1, 1, 1, 1, 1, 1}), Bytes<int64_t>({-1})});
  CHECK(As<int64_t>(ids[0]) == std::vector<int64_t>{0, 0, 1, 2, 3, 4, 5, 6});
  const auto rev = RunKernel(CumSum(F, {4}, 0, true, true), "hand_cumsum_excl_rev",
                             {Floats({1, 2, 3, 4}), Bytes<int64_t>({0})});
  CHECK(AsFloats(rev[0]) == std::vector<float>{9, 7, 4, 0});
  // 70 positions: one block, 128 threads with one position each (58 with none).
  const auto ones = RunKernel(CumSum(I32, {1, 70}, 1, true, true), "hand_cumsum_block",
                              {Bytes(std::vector<int32_t>(70, 1)), Bytes<int64_t>({1})});
  std::vector<int32_t> want(70);
  for (int i = 0; i < 70; ++i) want[i] = 69 - i;
  CHECK(As<int32_t>(ones[0]) == want);
  // 1000 positions along axis 0 of [1000, 2]: chunks of 4 over 256 threads, two lines.
  std::vector<float> x(2000);
  for (int i = 0; i < 2000; ++i) x[i] = static_cast<float>(i % 2 ? 2 : 1);
  const auto col = AsFloats(RunKernel(CumSum(F, {1000, 2}, 0, false, false), "hand_cumsum_cols",
                                      {Floats(x), Bytes<int64_t>({0})})[0]);
  REQUIRE(col.size() == 2000);
  CHECK(col[0] == 1);
  CHECK(col[1] == 2);
  CHECK(col[2 * 499] == 500);
  CHECK(col[2 * 999 + 1] == 2000);
}

TEST_CASE("CumSum refusals name their reason", "[cuda][scan]") {
  CHECK(cg::HasKernel("CumSum"));
  CHECK(cg::Unsupported(CumSum(F, {2, 3}, -2, false, false)) == "");
  // The axis is an input: a value known only at run time is refused.
  auto runtime_axis = Op("CumSum", 14, {T(F, {2, 3}), T(I64, {})}, {T(F, {2, 3})});
  CHECK_THAT(cg::Unsupported(runtime_axis), Catch::Contains("axis computed at run time"));
  CHECK(!cg::EmitOp("cumsum_runtime_axis", runtime_axis).ok());
  CHECK_THAT(cg::Unsupported(CumSum(F, {2, 3}, 2, false, false)), Catch::Contains("out of range"));
  CHECK_THAT(cg::Unsupported(CumSum(TensorProto::DOUBLE, {2, 3}, 0, false, false)),
             Catch::Contains("DOUBLE"));
  auto two_axes = Op("CumSum", 14, {T(F, {2, 3}), T(I64, {2})}, {T(F, {2, 3})});
  SetConstant(two_axes, 1, {0, 1});
  CHECK_THAT(cg::Unsupported(two_axes), Catch::Contains("0-D or one-element"));
  auto nhwc = CumSum(F, {1, 2, 2, 2}, 1, false, false);
  nhwc.input_layout = cg::Layout::kNhwc;
  CHECK_THAT(cg::Unsupported(nhwc), Catch::Contains("channels-last"));
}

}  // namespace
}  // namespace ortc::test::cuda
