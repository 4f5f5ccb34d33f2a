// Weight rewrites: BatchNorm folded into Conv and Gemm's B pre-transposed, checked against
// the formulas computed here independently.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "graph/model.h"
#include "lowering/weight_rewrites.h"
#include "model_builder.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;

namespace {

struct Lowered {
  std::unique_ptr<graph::Model> model;  // the IR refers to the model's data
  lowering::SubgraphIr ir;
};

Lowered Lower(ModelBuilder& b, const std::vector<std::string>& ins,
              const std::vector<std::string>& outs) {
  const std::string bytes = b.Serialize();
  auto m = graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "pack");
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  std::vector<int> nodes, in, out;
  for (size_t i = 0; i < g.nodes.size(); ++i) nodes.push_back(static_cast<int>(i));
  for (const auto& n : ins) in.push_back(g.FindValue(n));
  for (const auto& n : outs) out.push_back(g.FindValue(n));
  auto ir = lowering::SubgraphIr::Build(**m, "pack", nodes, in, out);
  REQUIRE(ir.ok());
  return {std::move(m).value(), std::move(ir).value()};
}

std::vector<float> FloatsOf(const lowering::IrValue& v) {
  auto bytes = v.bytes->ReadAll();
  REQUIRE(bytes.ok());
  std::vector<float> f((*bytes)->size() / 4);
  std::memcpy(f.data(), (*bytes)->data(), (*bytes)->size());
  return f;
}

}  // namespace

TEST_CASE("BatchNormalization folds into the Conv before it", "[packing]") {
  ModelBuilder b;
  // 2 output channels, 1 input channel, 1x1 kernel: W = [2, 3], B = [0.5, -1].
  b.Input("x", {1, 1, 4, 4})
      .Initializer("W", {2, 1, 1, 1}, {2, 3})
      .Initializer("B", {2}, {0.5f, -1});
  b.Initializer("scale", {2}, {1, 2})
      .Initializer("shift", {2}, {0, 10})
      .Initializer("mean", {2}, {1, 2});
  b.Initializer("var", {2}, {3, 0.25f});
  b.Node("Conv", {"x", "W", "B"}, {"c"})
      .Node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"y"},
            {Attr("epsilon", 1.0f)});
  b.Output("y");
  auto l = Lower(b, {"x"}, {"y"});
  auto& ir = l.ir;
  auto folded = lowering::FoldBatchNormIntoConv(&ir);
  REQUIRE(folded.ok());
  CHECK(*folded == 1);
  REQUIRE(ir.ops.size() == 1);
  CHECK(ir.ops[0].op_type == "Conv");
  CHECK(ir.values[ir.ops[0].outputs[0]].name == "y");
  // k = scale / sqrt(var + eps): k0 = 1/2, k1 = 2/sqrt(1.25)
  const float k0 = 0.5f, k1 = 2.f / std::sqrt(1.25f);
  const auto w = FloatsOf(ir.values[ir.ops[0].inputs[1]]);
  const auto bias = FloatsOf(ir.values[ir.ops[0].inputs[2]]);
  CHECK(w[0] == Approx(2 * k0));
  CHECK(w[1] == Approx(3 * k1));
  CHECK(bias[0] == Approx((0.5f - 1) * k0 + 0));
  CHECK(bias[1] == Approx((-1 - 2) * k1 + 10));
}

TEST_CASE("a Conv whose output has other readers keeps its BatchNormalization", "[packing]") {
  ModelBuilder b;
  b.Input("x", {1, 1, 2, 2}).Initializer("W", {1, 1, 1, 1}, {2});
  for (const char* n : {"scale", "shift", "mean", "var"}) b.Initializer(n, {1}, {1});
  b.Node("Conv", {"x", "W"}, {"c"})
      .Node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"y"});
  b.Node("Relu", {"c"}, {"r"}).Output("y").Output("r");
  auto l = Lower(b, {"x"}, {"y", "r"});
  CHECK(*lowering::FoldBatchNormIntoConv(&l.ir) == 0);
  CHECK(l.ir.ops.size() == 3);
}

TEST_CASE("Gemm with transB=1 gets B stored transposed", "[packing]") {
  ModelBuilder b;
  // B is N x K = 2 x 3; stored K x N afterwards.
  b.Input("a", {4, 3}).Initializer("B", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.Node("Gemm", {"a", "B"}, {"y"}, {Attr("transB", int64_t{1})}).Output("y");
  auto l = Lower(b, {"a"}, {"y"});
  CHECK(*lowering::PretransposeGemmWeights(&l.ir) == 1);
  const auto& op = l.ir.ops[0];
  CHECK(op.IntAttr("transB", -1) == 0);
  const auto& bt = l.ir.values[op.inputs[1]];
  CHECK(bt.info.shape.ToString() == "[3,2]");
  CHECK(FloatsOf(bt) == std::vector<float>{1, 4, 2, 5, 3, 6});
}
