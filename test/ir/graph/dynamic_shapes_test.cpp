// Dynamic shapes traced to their roots: unfixed graph-input dims (narrowed by symbol), data-
// dependent outputs, shape inputs that are not compile-time constants, ops without shape rules;
// and how --input-shape and shape folding remove roots.
#include <catch2/catch.hpp>

#include "graph/dynamic_shapes.h"
#include "graph/input_shapes.h"
#include "model_builder.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

std::unique_ptr<graph::Model> Load(ModelBuilder& b, graph::InputShapes shapes = {}) {
  const std::string bytes = b.Serialize();
  graph::LoadOptions o;
  o.input_shapes = std::move(shapes);
  o.fold_shapes = true;
  auto m = graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "dyn.onnx", o);
  REQUIRE(m.ok());
  return std::move(m).value();
}

// Renames the symbolic dims of graph input `input` ("N" from ModelBuilder), in order.
void Symbols(ModelBuilder& b, int input, std::vector<std::string> names) {
  auto* shape = b.proto()
                    .mutable_graph()
                    ->mutable_input(input)
                    ->mutable_type()
                    ->mutable_tensor_type()
                    ->mutable_shape();
  size_t k = 0;
  for (auto& d : *shape->mutable_dim()) {
    if (d.has_dim_param() && k < names.size()) d.set_dim_param(names[k++]);
  }
}

std::vector<std::string> Names(const graph::Model& m, const std::vector<int>& values) {
  std::vector<std::string> out;
  for (int v : values) out.push_back(m.graph.values[v].name);
  return out;
}

std::vector<std::string> DynamicNames(const graph::Model& m, const graph::DynamicShapeReport& r) {
  std::vector<int> ids;
  for (const auto& d : r.values) ids.push_back(d.value);
  return Names(m, ids);
}

// input_ids [batch, sequence] -> Gather(embedding) -> h [batch, sequence, 4]; a mask [batch,
// sequence] -> CumSum - 1 = positions -> Cast; ReduceMean over the sequence -> pooled [batch, 4].
ModelBuilder TextModel() {
  ModelBuilder b(17, 8);
  b.Input("input_ids", {-1, -1}, T::INT64).Input("mask", {-1, -1}, T::INT64);
  Symbols(b, 0, {"batch", "sequence"});
  Symbols(b, 1, {"batch", "sequence"});
  b.Initializer("embedding", {10, 4}, std::vector<float>(40, 0.5f));
  b.IntInitializer("axis", {-1}).IntInitializer("one", {1});
  b.Node("Gather", {"embedding", "input_ids"}, {"h"}, {}, "embed");
  b.Node("CumSum", {"mask", "axis"}, {"c"}, {}, "cumsum")
      .Node("Sub", {"c", "one"}, {"pos"}, {}, "sub");
  b.Node("ReduceMean", {"h"}, {"pooled"},
         {Attr("axes", std::vector<int64_t>{1}), Attr("keepdims", int64_t{0})}, "pool");
  b.Node("Cast", {"pos"}, {"posf"}, {Attr("to", int64_t{T::FLOAT})}, "cast");
  b.Output("pooled").Output("posf");
  return b;
}

}  // namespace

TEST_CASE("dynamic values are traced to the graph inputs' unfixed dims", "[graph][dynamic]") {
  auto b = TextModel();
  auto m = Load(b);
  const auto r = graph::ExplainDynamicShapes(*m);
  CHECK(DynamicNames(*m, r) ==
        std::vector<std::string>{"input_ids", "mask", "h", "c", "pos", "pooled", "posf"});
  REQUIRE(r.roots.size() == 2);
  // mask explains 4 values, input_ids 3 (pooled [batch, 4] has 'batch' of both, but only
  // input_ids reaches it): most values first.
  CHECK(r.roots[0].reason == "dims 'batch', 'sequence' of graph input 'mask'");
  CHECK(r.roots[0].fix == "--input-shape mask=<batch>x<sequence>");
  CHECK(Names(*m, r.roots[0].values) == std::vector<std::string>{"mask", "c", "pos", "posf"});
  CHECK(r.roots[1].kind == graph::DynamicRoot::Kind::kGraphInput);
  CHECK(r.roots[1].name == "input_ids");
  CHECK(Names(*m, r.roots[1].values) == std::vector<std::string>{"input_ids", "h", "pooled"});
  CHECK(graph::RootText(r.roots[1]) ==
        "dims 'batch', 'sequence' of graph input 'input_ids' (fix: --input-shape "
        "input_ids=<batch>x<sequence>)");

  SECTION("--input-shape removes a root; the other one remains") {
    auto fixed = Load(b, {{"input_ids", {1, 8}}});
    const auto f = graph::ExplainDynamicShapes(*fixed);
    CHECK(DynamicNames(*fixed, f) == std::vector<std::string>{"mask", "c", "pos", "posf"});
    REQUIRE(f.roots.size() == 1);
    CHECK(f.roots[0].name == "mask");
  }
  SECTION("with every input fixed nothing is dynamic") {
    auto fixed = Load(b, {{"input_ids", {1, 8}}, {"mask", {1, 8}}});
    const auto f = graph::ExplainDynamicShapes(*fixed);
    CHECK(f.values.empty());
    CHECK(f.roots.empty());
  }
}

TEST_CASE("a value depends only on the inputs whose symbols it has", "[graph][dynamic]") {
  // a [batch, 1, 4] + b [1, sequence, 4] -> [batch, sequence, 4]; the mean over the sequence is
  // [batch, 4]: 'a' alone explains it.
  ModelBuilder b(17, 8);
  b.Input("a", {-1, 1, 4}).Input("b", {1, -1, 4});
  Symbols(b, 0, {"batch"});
  Symbols(b, 1, {"sequence"});
  b.Node("Add", {"a", "b"}, {"s"}, {}, "add");
  b.Node("ReduceMean", {"s"}, {"m"},
         {Attr("axes", std::vector<int64_t>{1}), Attr("keepdims", int64_t{0})}, "mean");
  b.Output("m");
  auto m = Load(b);
  const auto r = graph::ExplainDynamicShapes(*m);
  REQUIRE(r.values.size() == 4);
  CHECK(Names(*m, {r.values[2].value}) == std::vector<std::string>{"s"});
  CHECK(r.values[2].roots.size() == 2);
  CHECK(r.values[3].roots.size() == 1);
  CHECK(r.roots[r.values[3].roots[0]].name == "a");
}

TEST_CASE("nodes whose output shape cannot be computed are roots", "[graph][dynamic]") {
  SECTION("data-dependent output size") {
    ModelBuilder b(17, 8);
    b.Input("x", {4});
    b.Node("NonZero", {"x"}, {"nz"}, {}, "nz").Node("Transpose", {"nz"}, {"t"}, {}, "tr");
    b.Node("Cast", {"t"}, {"y"}, {Attr("to", int64_t{T::FLOAT})}, "cast");
    b.Output("y");
    auto m = Load(b);
    const auto r = graph::ExplainDynamicShapes(*m);
    CHECK(DynamicNames(*m, r) == std::vector<std::string>{"nz", "t", "y"});
    REQUIRE(r.roots.size() == 1);
    CHECK(r.roots[0].kind == graph::DynamicRoot::Kind::kNode);
    CHECK(r.roots[0].op_type == "NonZero");
    CHECK(r.roots[0].reason == "output of NonZero node 'nz': data-dependent output size (NonZero)");
    CHECK(r.roots[0].fix.empty());
    CHECK(r.roots[0].values.size() == 3);
  }
  SECTION("a shape input that is a graph input") {
    ModelBuilder b(17, 8);
    b.Input("x", {2, 3}).Input("shape", {2}, T::INT64);
    b.Node("Reshape", {"x", "shape"}, {"y"}, {}, "reshape").Output("y");
    auto m = Load(b);
    const auto r = graph::ExplainDynamicShapes(*m);
    REQUIRE(r.roots.size() == 1);
    CHECK(r.roots[0].reason ==
          "output of Reshape node 'reshape': input 'shape' is not a compile-time constant (it is "
          "a graph input)");
  }
  SECTION("a shape input computed from a graph input's values") {
    ModelBuilder b(17, 8);
    b.Input("x", {6}).Input("n", {1}, T::INT64);
    b.IntInitializer("minus_one", {-1});
    b.Node("Concat", {"n", "minus_one"}, {"shape"}, {Attr("axis", int64_t{0})}, "concat");
    b.Node("Reshape", {"x", "shape"}, {"y"}, {}, "reshape").Node("Relu", {"y"}, {"z"}, {}, "relu");
    b.Output("z");
    auto m = Load(b);
    const auto r = graph::ExplainDynamicShapes(*m);
    CHECK(DynamicNames(*m, r) == std::vector<std::string>{"y", "z"});
    REQUIRE(r.roots.size() == 1);
    CHECK(r.roots[0].reason ==
          "output of Reshape node 'reshape': input 'shape' is not a compile-time constant "
          "(computed from graph input 'n' at run time)");
  }
  SECTION("a shape input computed from a dynamic shape points at the graph input") {
    ModelBuilder b(17, 8);
    b.Input("x", {-1, 4}).Input("y", {8});
    b.IntInitializer("zero", {0}).IntInitializer("minus_one", {-1});
    b.Node("Shape", {"x"}, {"s"}, {}, "shape");
    b.Node("Gather", {"s", "zero"}, {"n"}, {Attr("axis", int64_t{0})}, "first");
    b.Node("Concat", {"n", "minus_one"}, {"target"}, {Attr("axis", int64_t{0})}, "concat");
    b.Node("Reshape", {"y", "target"}, {"z"}, {}, "reshape").Output("z");
    auto m = Load(b);
    const auto r = graph::ExplainDynamicShapes(*m);
    REQUIRE(r.roots.size() == 1);
    CHECK(r.roots[0].name == "x");
    CHECK(Names(*m, r.roots[0].values) == std::vector<std::string>{"x", "z"});
    // Fixing x folds the chain: nothing is dynamic.
    CHECK(graph::ExplainDynamicShapes(*Load(b, {{"x", {2, 4}}})).values.empty());
  }
  SECTION("an If is a root unless a dynamic outer value explains its output") {
    // Both branches return the outer value (then) or a constant (else). Shapes of If outputs
    // come from the model's declaration: [N] when `declared`, else none (rank unknown).
    auto branch = [](const std::string& name, bool constant) {
      ModelBuilder s(17, 8);
      if (constant) s.IntInitializer("k", {1, 2, 3});
      s.Node("Identity", {constant ? "k" : "outer"}, {name + "_out"}, {}, name + "_id");
      s.Output(name + "_out", T::INT64);
      return s.proto().graph();
    };
    for (bool declared : {false, true}) {
      ModelBuilder b(17, 8);
      b.Input("cond", {1}, T::BOOL).Input("outer", {declared ? -1 : 3}, T::INT64);
      b.Node("If", {"cond"}, {"y"},
             {Attr("then_branch", branch("then", false)),
              Attr("else_branch", branch("else", !declared))},
             "if");
      b.Output("y", T::INT64);
      if (declared) {
        b.proto()
            .mutable_graph()
            ->mutable_output(0)
            ->mutable_type()
            ->mutable_tensor_type()
            ->mutable_shape()
            ->add_dim()
            ->set_dim_param("N");
      }
      auto m = Load(b);
      const auto r = graph::ExplainDynamicShapes(*m);
      INFO(declared);
      REQUIRE(r.roots.size() == 1);
      if (declared) {
        CHECK(r.roots[0].name == "outer");
        CHECK(Names(*m, r.roots[0].values) == std::vector<std::string>{"outer", "y"});
      } else {
        CHECK(r.roots[0].reason ==
              "output of If node 'if': output shape depends on the branch taken at run time (If)");
      }
    }
  }
  SECTION("an op without a shape rule") {
    ModelBuilder b(17, 8);
    b.Opset("example.custom", 1);
    b.Input("x", {2, 3});
    b.Node("Mystery", {"x"}, {"y"}, {}, "mystery", "example.custom");
    b.Node("Relu", {"y"}, {"z"}, {}, "relu").Output("z");
    auto m = Load(b);
    const auto r = graph::ExplainDynamicShapes(*m);
    CHECK(DynamicNames(*m, r) == std::vector<std::string>{"y", "z"});
    REQUIRE(r.roots.size() == 1);
    CHECK(r.roots[0].op_type == "example.custom.Mystery");
    CHECK_THAT(r.roots[0].reason,
               Catch::StartsWith("output of example.custom.Mystery node 'mystery': no shape "
                                 "inference for op example.custom.Mystery"));
  }
}

TEST_CASE("a Slice whose end comes from an input's shape is blamed on that input",
          "[graph][dynamic]") {
  // BERT's position ids: a [1, 16] buffer sliced to the sequence length, Shape(input_ids)[1].
  // Shape inference cannot give the Slice a rank, but the input explains it: no node root.
  ModelBuilder b(17, 8);
  b.Input("input_ids", {-1, -1}, T::INT64);
  Symbols(b, 0, {"batch", "sequence"});
  b.IntInitializer("positions", std::vector<int64_t>(16, 0));
  b.IntInitializer("zero", {0}).IntInitializer("one", {1});
  b.Node("Shape", {"input_ids"}, {"shape"}).Node("Gather", {"shape", "one"}, {"len"});
  b.Node("Slice", {"positions", "zero", "len", "zero"}, {"pos"}).Output("pos", T::INT64);
  auto m = Load(b);
  const auto r = graph::ExplainDynamicShapes(*m);
  REQUIRE(r.roots.size() == 1);
  CHECK(r.roots[0].kind == graph::DynamicRoot::Kind::kGraphInput);
  CHECK(r.roots[0].name == "input_ids");
  CHECK(Names(*m, r.roots[0].values) == std::vector<std::string>{"input_ids", "pos"});
}

TEST_CASE("input shape overrides: one, or a comma-separated list", "[graph][dynamic]") {
  graph::InputShapes shapes;
  REQUIRE(graph::ParseInputShape("input_ids=1x128,attention_mask=1x128", &shapes).ok());
  CHECK(shapes == graph::InputShapes{{"input_ids", {1, 128}}, {"attention_mask", {1, 128}}});
  graph::InputShapes odd;  // a comma inside a name stays part of it
  REQUIRE(graph::ParseInputShape("a,b=2x3", &odd).ok());
  CHECK(odd == graph::InputShapes{{"a,b", {2, 3}}});
  graph::InputShapes twice;
  const Status s = graph::ParseInputShape("x=1x2,x=1x3", &twice);
  CHECK_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("names input 'x' twice"));
  CHECK_FALSE(graph::ParseInputShape("x=1x2,y=0x3", &twice).ok());
}
