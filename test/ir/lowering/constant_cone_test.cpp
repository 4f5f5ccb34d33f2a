// EvaluateConstantCone: one value computed from its weights alone, the IR left as it was, and
// refused when it depends on an input or breaks a limit.
#include <catch2/catch.hpp>

#include <cstring>

#include "graph/model.h"
#include "lowering/constant_cone.h"
#include "model_builder.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

// w = Transpose((q - z) * s) as a dequantization writes it, with q, z, s weights, and
// y = x + w (an input): the cone of w is four ops over weights; y's reaches the input.
lowering::SubgraphIr Dequantization() {
  ModelBuilder b(13, 8);
  b.Input("x", {3, 2})
      .Initializer("q", {2, 3}, {1, 2, 3, 4, 5, 6})
      .Initializer("z", {2, 1}, {1, 4})
      .Initializer("s", {2, 1}, {0.5f, 2});
  b.Node("Sub", {"q", "z"}, {"centered"})
      .Node("Mul", {"centered", "s"}, {"scaled"})
      .Node("Transpose", {"scaled"}, {"w"}, {Attr("perm", std::vector<int64_t>{1, 0})})
      .Node("Add", {"x", "w"}, {"y"});
  b.Output("y");
  const std::string bytes = b.Serialize();
  auto m = graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "cone");
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  std::vector<int> nodes(g.nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<int>(i);
  auto ir = lowering::SubgraphIr::Build(**m, "cone", nodes, {g.FindValue("x")}, {g.FindValue("y")});
  REQUIRE(ir.ok());
  return std::move(*ir);
}

int ValueNamed(const lowering::SubgraphIr& ir, const std::string& name) {
  for (size_t i = 0; i < ir.values.size(); ++i)
    if (ir.values[i].name == name) return static_cast<int>(i);
  FAIL("no value " << name);
  return -1;
}

}  // namespace

TEST_CASE("a constant cone is evaluated alone and the IR is left as it was", "[folding]") {
  const lowering::SubgraphIr ir = Dequantization();
  auto w = lowering::EvaluateConstantCone(ir, ValueNamed(ir, "w"), {});
  REQUIRE(w);
  CHECK(w->dims == std::vector<int64_t>{3, 2});
  std::vector<float> values(6);
  REQUIRE(w->bytes.size() == 24);
  std::memcpy(values.data(), w->bytes.data(), 24);
  // (q - z) * s = [[0, 0.5, 1], [0, 2, 4]], transposed.
  CHECK(values == std::vector<float>{0, 0, 0.5f, 2, 1, 4});
  CHECK(ir.ops.size() == 4);
  for (const auto& op : ir.ops) CHECK_FALSE(op.removed);
  CHECK(ir.values[ValueNamed(ir, "w")].kind == lowering::ValueKind::kIntermediate);
}

TEST_CASE("a cone that reads an input or breaks a limit is not evaluated", "[folding]") {
  const lowering::SubgraphIr ir = Dequantization();
  CHECK_FALSE(lowering::EvaluateConstantCone(ir, ValueNamed(ir, "y"), {}));
  // Three ops make w: a limit of two refuses it, three takes it.
  CHECK_FALSE(lowering::EvaluateConstantCone(ir, ValueNamed(ir, "w"), {.max_ops = 2}));
  CHECK(lowering::EvaluateConstantCone(ir, ValueNamed(ir, "w"), {.max_ops = 3}));
  // Every result is 24 bytes: 23 refuses, 24 takes.
  CHECK_FALSE(lowering::EvaluateConstantCone(ir, ValueNamed(ir, "w"), {.max_bytes = 23}));
  CHECK(lowering::EvaluateConstantCone(ir, ValueNamed(ir, "w"), {.max_bytes = 24}));
}
