// Common subexpression elimination: a per-layer mask computation with its own copies of the
// same constants is kept once; ops that differ in an attribute or an input, random ops and
// program outputs are not merged.
#include <catch2/catch.hpp>

#include "graph/model.h"
#include "lowering/common_subexpressions.h"
#include "model_builder.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

lowering::SubgraphIr Build(ModelBuilder& b, const std::vector<std::string>& outputs) {
  const std::string bytes = b.Serialize();
  auto m = graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "cse");
  REQUIRE(m.ok());
  static std::unique_ptr<graph::Model> keep;  // the IR borrows from the model
  keep = std::move(m).value();
  const auto& g = keep->graph;
  std::vector<int> nodes(g.nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<int>(i);
  std::vector<int> outs;
  for (const auto& o : outputs) outs.push_back(g.FindValue(o));
  auto ir = lowering::SubgraphIr::Build(*keep, "cse", nodes, g.inputs, outs);
  REQUIRE(ir.ok());
  return std::move(ir).value();
}

int Live(const lowering::SubgraphIr& ir, const std::string& op_type) {
  int n = 0;
  for (const auto& op : ir.ops) n += !op.removed && op.op_type == op_type;
  return n;
}

}  // namespace

TEST_CASE("a mask computed once per layer from equal constants is kept once", "[lowering][cse]") {
  // Two layers, each Where(keep, zero_i, ninf_i) with its own (equal) constants, each added to
  // that layer's scores.
  ModelBuilder b(17);
  b.Input("keep", {1, 4}, T::BOOL).Input("s0", {1, 4}).Input("s1", {1, 4});
  for (const std::string i : {"0", "1"}) {
    b.Initializer("zero" + i, {}, {0.f}).Initializer("ninf" + i, {}, {-3.4e38f});
    b.Node("Where", {"keep", "zero" + i, "ninf" + i}, {"bias" + i});
    b.Node("Add", {"s" + i, "bias" + i}, {"y" + i}).Output("y" + i);
  }
  auto ir = Build(b, {"y0", "y1"});
  CHECK(lowering::EliminateCommonSubexpressions(&ir) == 1);
  CHECK(Live(ir, "Where") == 1);
  CHECK(Live(ir, "Add") == 2);  // different scores: both stay
  // Both Adds now read the one Where's output.
  int where_out = -1;
  for (const auto& op : ir.ops)
    if (op.op_type == "Where") where_out = op.outputs[0];
  for (const auto& op : ir.ops)
    if (op.op_type == "Add") CHECK(op.inputs[1] == where_out);
}

TEST_CASE("ops differing in an attribute, random ops and program outputs are not merged",
          "[lowering][cse]") {
  ModelBuilder b(17);
  b.Input("x", {2, 3});
  b.Node("Softmax", {"x"}, {"a"}, {Attr("axis", int64_t{0})})
      .Node("Softmax", {"x"}, {"b"}, {Attr("axis", int64_t{1})})
      .Node("RandomUniformLike", {"x"}, {"r0"})
      .Node("RandomUniformLike", {"x"}, {"r1"})
      .Node("Relu", {"x"}, {"o0"})
      .Node("Relu", {"x"}, {"o1"});
  for (const char* o : {"a", "b", "r0", "r1", "o0", "o1"}) b.Output(o);
  auto ir = Build(b, {"a", "b", "r0", "r1", "o0", "o1"});
  CHECK(lowering::EliminateCommonSubexpressions(&ir) == 0);
  CHECK(Live(ir, "Softmax") == 2);
  CHECK(Live(ir, "RandomUniformLike") == 2);
  CHECK(Live(ir, "Relu") == 2);  // each is a program output of its own
}

TEST_CASE("a Cast to the type it reads is its input", "[lowering][cse]") {
  ModelBuilder b(17);
  b.Input("m", {1, 4}, T::BOOL).Input("s", {1, 4}).Initializer("zero", {}, {0.f});
  b.Initializer("ninf", {}, {-3.4e38f});
  b.Node("Cast", {"m"}, {"m2"}, {Attr("to", int64_t{T::BOOL})});
  b.Node("Where", {"m2", "zero", "ninf"}, {"bias"}).Node("Add", {"s", "bias"}, {"y"}).Output("y");
  auto ir = Build(b, {"y"});
  CHECK(lowering::EliminateCommonSubexpressions(&ir) == 1);
  CHECK(Live(ir, "Cast") == 0);
  for (const auto& op : ir.ops)
    if (op.op_type == "Where") CHECK(ir.values[op.inputs[0]].name == "m");
}

TEST_CASE("a per-layer position range as long as a long context is kept once", "[lowering][cse]") {
  // Each layer compares its own copy of the key positions 0..8191 (64 KiB of int64, as a decode
  // step over a cache of 8192 rows has) with the query's position: one Less is enough. A third
  // layer's range differs in its last element and must stay its own.
  constexpr int64_t kRows = 8192;
  std::vector<int64_t> range(kRows);
  for (int64_t i = 0; i < kRows; ++i) range[i] = i;
  std::vector<int64_t> other = range;
  other.back() = 0;
  // Program outputs are never merged, so each layer's mask feeds a Not.
  ModelBuilder c(17);
  c.Input("pos", {1, 1}, T::INT64);
  for (const std::string i : {"0", "1", "2"}) {
    c.IntInitializer("keys" + i, i == "2" ? other : range);
    c.Node("Less", {"keys" + i, "pos"}, {"seen" + i}).Node("Not", {"seen" + i}, {"y" + i});
    c.Output("y" + i, T::BOOL);
  }
  auto ir = Build(c, {"y0", "y1", "y2"});
  CHECK(lowering::EliminateCommonSubexpressions(&ir) == 1);
  CHECK(Live(ir, "Less") == 2);
  CHECK(Live(ir, "Not") == 3);
}
