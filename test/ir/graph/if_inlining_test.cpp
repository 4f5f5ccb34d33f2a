// --input-value and compile-time If resolution: a scalar input fixed at compile time folds into
// the If's condition, the taken branch replaces the If (its names kept apart from the main
// graph's), and bad --input-value uses fail with messages that say what to do.
#include <catch2/catch.hpp>

#include "graph/model.h"
#include "model_builder.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

// sr (int64 scalar) picks then = x * 2 (a branch initializer), else = x + bias (main scope).
ModelBuilder RateModel() {
  ModelBuilder then_b, else_b;
  then_b.Initializer("two", {1}, {2.f});
  then_b.Node("Mul", {"x", "two"}, {"doubled"}).Output("doubled");
  else_b.Node("Add", {"x", "bias"}, {"shifted"}).Output("shifted");
  ModelBuilder b;
  b.Input("x", {1, 4}).Input("sr", {}, T::INT64);
  b.Initializer("bias", {1}, {0.5f}).IntInitializer("rate", {16000});
  b.Node("Equal", {"sr", "rate"}, {"is16k"});
  b.Node("If", {"is16k"}, {"y"},
         {Attr("then_branch", then_b.proto().graph()), Attr("else_branch", else_b.proto().graph())},
         "pick_rate");
  b.Output("y");
  return b;
}

Result<std::unique_ptr<graph::Model>> Load(ModelBuilder& b, graph::InputValues values) {
  const std::string bytes = b.Serialize();
  graph::LoadOptions o;
  o.input_values = std::move(values);
  o.fold_shapes = true;
  return graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "rate.onnx", o);
}

std::vector<std::string> Ops(const graph::Model& m) {
  std::vector<std::string> ops;
  for (const auto& n : m.graph.nodes) ops.push_back(n.op_type);
  return ops;
}

}  // namespace

TEST_CASE("without --input-value the If stays", "[if_inlining]") {
  auto b = RateModel();
  auto m = Load(b, {});
  REQUIRE(m.ok());
  CHECK(Ops(**m) == std::vector<std::string>{"Equal", "If"});
  CHECK((*m)->fixed_inputs.empty());
}

TEST_CASE("an input fixed with --input-value resolves the If to the taken branch",
          "[if_inlining]") {
  auto b = RateModel();
  SECTION("then branch") {
    auto m = Load(b, {{"sr", "16000"}});
    REQUIRE(m.ok());
    CHECK(Ops(**m) == std::vector<std::string>{"Mul"});
    const auto& g = (*m)->graph;
    const auto& mul = g.nodes[0];
    // The branch's initializer is renamed away from the main graph's names; its output takes
    // the If's output name.
    CHECK(g.values[mul.inputs[1]].name == "pick_rate/two");
    CHECK(g.values[mul.inputs[1]].initializer >= 0);
    CHECK(g.values[mul.outputs[0]].name == "y");
    REQUIRE((*m)->fixed_inputs.size() == 1);
    CHECK((*m)->fixed_inputs[0].value == "int64:16000");
    CHECK((*m)->fixed_inputs[0].position == 1);
    // sr is no longer a graph input of the compiled view.
    for (int v : g.inputs) CHECK(g.values[v].name != "sr");
  }
  SECTION("else branch") {
    auto m = Load(b, {{"sr", "8000"}});
    REQUIRE(m.ok());
    CHECK(Ops(**m) == std::vector<std::string>{"Add"});
    CHECK((*m)->graph.values[(*m)->graph.nodes[0].inputs[1]].name == "bias");
  }
}

TEST_CASE("a branch output that is an outer value becomes an Identity", "[if_inlining]") {
  ModelBuilder then_b, else_b;
  then_b.Output("x");
  else_b.Node("Neg", {"x"}, {"negated"}).Output("negated");
  ModelBuilder b;
  b.Input("x", {2}).Input("flag", {}, T::BOOL);
  b.Node(
      "If", {"flag"}, {"y"},
      {Attr("then_branch", then_b.proto().graph()), Attr("else_branch", else_b.proto().graph())});
  b.Output("y");
  auto m = Load(b, {{"flag", "true"}});
  REQUIRE(m.ok());
  REQUIRE(Ops(**m) == std::vector<std::string>{"Identity"});
  const auto& g = (*m)->graph;
  CHECK(g.values[g.nodes[0].inputs[0]].name == "x");
  CHECK(g.values[g.nodes[0].outputs[0]].name == "y");
}

TEST_CASE("bad --input-value uses are refused with what to do", "[if_inlining]") {
  auto b = RateModel();
  SECTION("unknown input: the message lists the inputs") {
    auto m = Load(b, {{"rate_hz", "16000"}});
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("'rate_hz'") && Catch::Contains("x, sr"));
  }
  SECTION("a value that is not of the input's type") {
    auto m = Load(b, {{"sr", "16k"}});
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("not a int64 value"));
  }
  SECTION("an input with more than one element") {
    auto m = Load(b, {{"x", "1.5"}});
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("scalar inputs only"));
  }
  SECTION("the command-line text") {
    graph::InputValues v;
    CHECK_FALSE(graph::ParseInputValue("sr", &v).ok());
    CHECK_FALSE(graph::ParseInputValue("=5", &v).ok());
    REQUIRE(graph::ParseInputValue("sr=16000,gain=0.5", &v).ok());
    CHECK(v.at("sr") == "16000");
    CHECK(v.at("gain") == "0.5");
    CHECK_FALSE(graph::ParseInputValue("sr=8000", &v).ok());  // given twice
  }
}

TEST_CASE("an If on a shape is resolved once --input-shape fixes it", "[if_inlining]") {
  // batch == 1 picks Identity, anything else Neg; the batch is symbolic until --input-shape.
  ModelBuilder then_b, else_b;
  then_b.Node("Identity", {"x"}, {"same"}).Output("same");
  else_b.Node("Neg", {"x"}, {"negated"}).Output("negated");
  ModelBuilder b;
  b.Input("x", {-1, 4});
  b.IntInitializer("zero", {0}).IntInitializer("one", {1});
  b.Node("Shape", {"x"}, {"shape"}).Node("Gather", {"shape", "zero"}, {"batch"});
  b.Node("Equal", {"batch", "one"}, {"single"});
  b.Node(
      "If", {"single"}, {"y"},
      {Attr("then_branch", then_b.proto().graph()), Attr("else_branch", else_b.proto().graph())});
  b.Output("y");
  const std::string bytes = b.Serialize();
  auto load = [&](graph::InputShapes shapes) {
    graph::LoadOptions o;
    o.input_shapes = std::move(shapes);
    o.fold_shapes = true;
    auto m = graph::LoadModelFromBuffer(
        {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "batch.onnx", o);
    REQUIRE(m.ok());
    return Ops(**m);
  };
  CHECK(load({}) == std::vector<std::string>{"Shape", "Gather", "Equal", "If"});
  CHECK(load({{"x", {1, 4}}}) == std::vector<std::string>{"Identity"});
  CHECK(load({{"x", {3, 4}}}) == std::vector<std::string>{"Neg"});
}
