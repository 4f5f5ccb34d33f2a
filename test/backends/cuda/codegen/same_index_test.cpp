// Which inputs of a fused elementwise kernel may share an output's bytes (KernelSource::
// same_index): a fixed-size cache's update (Where(is_past, past, 0) + placed, written at fp32 and
// at fp16) pairs the past and the new rows with the fp32 present only; broadcast inputs, other
// element sizes and channels-last outputs are never paired. The paired kernel run with past and
// present as one buffer gives what it gives with two.
#include <catch2/catch.hpp>

#include <set>
#include <utility>

#include "data_movement_test_util.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

constexpr int32_t B = TensorProto::BOOL, H = TensorProto::FLOAT16;
const std::vector<int64_t> kCache = {1, 2, 8, 4}, kRows = {1, 1, 8, 1};

// inputs: 0 past [1,2,8,4], 1 is_past [1,1,8,1], 2 zero [], 3 placed [1,2,8,4];
// outputs: 0 present (fp32), 1 its fp16 copy (what attention reads).
cg::FusedGroup CacheUpdate() {
  cg::FusedGroup g;
  g.inputs = {T(F, kCache), T(B, kRows), T(F, {}), T(F, kCache)};
  g.ops.push_back(
      {Op("Where", 16, {T(B, kRows), T(F, kCache), T(F, {})}, {T(F, kCache)}), {1, 0, 2}});
  g.ops.push_back({Op("Add", 14, {T(F, kCache), T(F, kCache)}, {T(F, kCache)}), {-1, 3}});
  g.ops.push_back({Op("Cast", 19, {T(F, kCache)}, {T(H, kCache)}, {AttrInt("to", H)}), {-2}});
  g.outputs = {1, 2};
  return g;
}

std::set<std::pair<int, int>> Pairs(const cg::KernelSource& k) {
  return {k.same_index.begin(), k.same_index.end()};
}

}  // namespace

TEST_CASE("a cache update pairs the past and the new rows with the same-sized present",
          "[cuda][fused]") {
  auto k = cg::EmitFused("cache_update", CacheUpdate());
  INFO(k.status().message());
  REQUIRE(k.ok());
  // Not is_past (broadcast over heads and columns), not zero (a scalar), and nothing with the
  // fp16 copy (element i of it is half of element i of past's bytes).
  CHECK(Pairs(*k) == std::set<std::pair<int, int>>{{0, 0}, {3, 0}});

  // Run with past and present as one buffer, as the runtime binds a device-resident cache:
  // the same bytes as with a present of its own.
  const auto past = RandomFloats(5, 64), placed = RandomFloats(6, 64);
  const std::vector<float> is_past = {1, 1, 1, 0, 0, 0, 0, 0};
  std::string rows;
  for (float v : is_past) rows.push_back(v != 0);
  std::string zero = Floats({0}), fresh = Floats(placed);
  auto module = HostModule::Compile({k.value()});
  REQUIRE(module.ok());
  std::string in = Floats(past), present(64 * 4, '\x7f'), half(64 * 2, '\x7f');
  REQUIRE(module.value()
              .Launch(k.value(), {in.data(), rows.data(), zero.data(), fresh.data(), present.data(),
                                  half.data()})
              .ok());
  std::string shared = Floats(past), half2(64 * 2, '\x7f');
  REQUIRE(module.value()
              .Launch(k.value(), {shared.data(), rows.data(), zero.data(), fresh.data(),
                                  shared.data(), half2.data()})
              .ok());
  CHECK(shared == present);
  CHECK(half2 == half);
  // And that is the update: past rows kept, the others replaced.
  const auto got = AsFloats(present);
  for (int h = 0; h < 2; ++h)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 4; ++c) {
        const int i = (h * 8 + r) * 4 + c;
        CHECK(got[i] == (is_past[r] != 0 ? past[i] : 0.f) + placed[i]);
      }
}

TEST_CASE("outputs stored channels-last or not reading an input pair nothing with it",
          "[cuda][fused]") {
  cg::FusedGroup g = CacheUpdate();
  g.output_layouts = {cg::Layout::kNhwc, cg::Layout::kNchw};
  auto nhwc = cg::EmitFused("cache_update_nhwc", g);
  REQUIRE(nhwc.ok());
  CHECK(nhwc->same_index.empty());

  // y = Relu(a), z = Neg(b): a pairs with y only, b with z only.
  const std::vector<int64_t> s = {3, 5};
  cg::FusedGroup two;
  two.inputs = {T(F, s), T(F, s)};
  two.ops.push_back({Op("Relu", 14, {T(F, s)}, {T(F, s)}), {0}});
  two.ops.push_back({Op("Neg", 13, {T(F, s)}, {T(F, s)}), {1}});
  two.outputs = {0, 1};
  auto k = cg::EmitFused("two_outputs", two);
  REQUIRE(k.ok());
  CHECK(Pairs(*k) == std::set<std::pair<int, int>>{{0, 0}, {1, 1}});
}

}  // namespace ortc::test::cuda
