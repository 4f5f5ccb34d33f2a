// Slice's per-axis bounds (ResolveSliceAxis), shared by the runtime kernel, the compiler's
// constant folding and the CUDA code generator. The fuzz target found a Slice whose starts and
// ends differed in length read past them (UBSan); the old count formulas also overflowed for
// steps near the int64 limits, and the compiler's copy took one element of an empty axis for a
// negative step.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "cpu/runtime/kernels/kernel_util.h"
#include "model_builder.h"
#include "ortc/runtime.h"

using ortc::exec::ResolveSliceAxis;
using ortc::exec::SliceAxis;

namespace {

// The specification's steps one by one, on values small enough not to overflow, then the
// indices taken by walking from the clamped start to the clamped end.
std::vector<int64_t> SpecIndices(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  std::vector<int64_t> taken;
  if (step > 0) {
    start = std::max<int64_t>(0, std::min(start, dim));
    end = std::max<int64_t>(0, std::min(end, dim));
    for (int64_t i = start; i < end; i += step) taken.push_back(i);
  } else {
    if (dim == 0) return taken;
    start = std::max<int64_t>(0, std::min(start, dim - 1));
    end = std::max<int64_t>(-1, std::min(end, dim - 1));
    for (int64_t i = start; i > end; i += step) taken.push_back(i);
  }
  return taken;
}

std::vector<int64_t> Indices(const SliceAxis& r) {
  std::vector<int64_t> taken;
  for (int64_t k = 0; k < r.count; ++k) taken.push_back(r.begin + k * r.step);
  return taken;
}

}  // namespace

TEST_CASE("Slice bounds follow the specification on every small case", "[kernels][slice]") {
  int cases = 0;
  for (int64_t dim = 0; dim <= 6; ++dim) {
    for (int64_t start = -9; start <= 9; ++start) {
      for (int64_t end = -9; end <= 9; ++end) {
        for (int64_t step : {-8, -3, -2, -1, 1, 2, 3, 8}) {
          INFO("dim " << dim << " start " << start << " end " << end << " step " << step);
          REQUIRE(Indices(ResolveSliceAxis(dim, start, end, step)) ==
                  SpecIndices(dim, start, end, step));
          ++cases;
        }
      }
    }
  }
  CHECK(cases == 7 * 19 * 19 * 8);
}

TEST_CASE("Slice bounds at the int64 limits take what the specification says", "[kernels][slice]") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  // Everything forward, everything backward: the idioms the specification recommends.
  CHECK(Indices(ResolveSliceAxis(5, 0, kMax, 1)) == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(Indices(ResolveSliceAxis(5, -1, kMin, -1)) == std::vector<int64_t>{4, 3, 2, 1, 0});
  // Steps this long overflowed e - s + step - 1 and -step: they take the first element.
  CHECK(Indices(ResolveSliceAxis(5, 1, kMax, kMax)) == std::vector<int64_t>{1});
  CHECK(Indices(ResolveSliceAxis(5, kMax, kMin, kMin)) == std::vector<int64_t>{4});
  CHECK(Indices(ResolveSliceAxis(5, kMin, kMax, kMin)).empty());
  CHECK(Indices(ResolveSliceAxis(0, kMin, kMax, kMin)).empty());
  CHECK(Indices(ResolveSliceAxis(0, 0, kMax, 1)).empty());
}

TEST_CASE("Slice refuses starts, ends, axes and steps of different lengths", "[kernels][slice]") {
  using ortc::test::ModelBuilder;
  ModelBuilder m;
  m.Input("x", {4, 3}).IntInitializer("starts", {0, 0}).IntInitializer("ends", {2});
  m.Node("Slice", {"x", "starts", "ends"}, {"y"}).Output("y");
  const std::string bytes = m.Serialize();
  auto session = ortc::Session::CreateFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  REQUIRE(session.ok());
  std::vector<float> x(12, 1.f);
  auto out = (*session)->Run(
      {{"x", ortc::Tensor::FromBytes(ortc::DataType::kFloat, {4, 3}, x.data(), 48)}});
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(out.status().message(),
             Catch::Contains("starts, ends, axes and steps must have the same length"));
}
