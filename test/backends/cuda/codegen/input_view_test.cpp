// Elementwise groups reading an input in place through a strided view (codegen::InputView):
// SwiGLU's silu(gate) * up over the two halves of one merged projection, against a reference
// written here, and views that do not fit the input's dims are refused.
#include <cmath>

#include "data_movement_test_util.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

cg::OpDesc Elementwise(const std::string& type, std::vector<cg::TensorDesc> in,
                       std::vector<int64_t> out_dims) {
  cg::OpDesc op;
  op.op_type = type;
  op.since_version = 14;
  op.inputs = std::move(in);
  op.outputs = {T(F, std::move(out_dims))};
  op.constants.resize(op.inputs.size());
  return op;
}

}  // namespace

TEST_CASE("a fused group reads both halves of a merged projection in place", "[cuda][fused]") {
  // merged [2, 3, 2 * 5]: gate = merged[..., :5], up = merged[..., 5:]; y = gate * sigmoid(gate)
  // * up, as a Split of the merged GEMM output would feed it.
  const int64_t rows = 6, f = 5;
  const auto merged = RandomFloats(3, rows * 2 * f);
  const std::vector<int64_t> half = {2, 3, f};
  cg::FusedGroup g;
  g.inputs = {T(F, half), T(F, half)};
  g.input_views = {cg::InputView{0, {3 * 2 * f, 2 * f, 1}}, cg::InputView{f, {3 * 2 * f, 2 * f, 1}}};
  g.ops.push_back({Elementwise("Sigmoid", {T(F, half)}, half), {0}});
  g.ops.push_back({Elementwise("Mul", {T(F, half), T(F, half)}, half), {0, -1}});
  g.ops.push_back({Elementwise("Mul", {T(F, half), T(F, half)}, half), {-2, 1}});
  g.outputs = {2};
  auto k = cg::EmitFused("swiglu_view", g);
  INFO(k.status().message());
  REQUIRE(k.ok());
  auto module = HostModule::Compile({k.value()});
  REQUIRE(module.ok());
  std::string in = Floats(merged), out(static_cast<size_t>(rows * f) * 4, '\x7f');
  // Both group inputs are the one merged buffer.
  REQUIRE(module.value().Launch(k.value(), {in.data(), in.data(), out.data()}).ok());
  const auto got = AsFloats(out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < f; ++j) {
      const double gate = merged[r * 2 * f + j], up = merged[r * 2 * f + f + j];
      const double want = gate / (1 + std::exp(-gate)) * up;
      CHECK(std::fabs(got[r * f + j] - want) < 1e-6);
    }
}

TEST_CASE("a view that does not describe the input's dims is refused", "[cuda][fused]") {
  const std::vector<int64_t> dims = {4, 5};
  cg::FusedGroup g;
  g.inputs = {T(F, dims)};
  g.input_views = {cg::InputView{0, {10}}};  // one stride for two dims
  g.ops.push_back({Elementwise("Relu", {T(F, dims)}, dims), {0}});
  g.outputs = {0};
  CHECK_FALSE(cg::EmitFused("bad_view", g).ok());
}

}  // namespace ortc::test::cuda
