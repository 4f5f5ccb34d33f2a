// Folding through the CPU kernels (graph/kernel_eval.h): ops host_eval does not implement itself
// fold when their inputs are constants (the mask chains of transformers 5.x), with the values
// the ONNX specification gives (worked out by hand below); random and quantization ops do not.
#include <catch2/catch.hpp>

#include <cstring>

#include "graph/kernel_eval.h"
#include "graph/model.h"
#include "model_builder.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

std::unique_ptr<graph::Model> Load(ModelBuilder& b) {
  const std::string bytes = b.Serialize();
  graph::LoadOptions o;
  o.fold_shapes = true;
  auto m = graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "kfold.onnx", o);
  REQUIRE(m.ok());
  return std::move(m).value();
}

const onnx::TensorProto* Find(const graph::Model& m, const std::string& name) {
  for (const auto& t : m.proto.graph().initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

template <typename V>
std::vector<V> Values(const graph::Model& m, const std::string& name) {
  const auto* t = Find(m, name);
  REQUIRE(t);
  std::vector<V> v;
  for (size_t i = 0; i + sizeof(V) <= t->raw_data().size(); i += sizeof(V)) {
    V e;
    std::memcpy(&e, t->raw_data().data() + i, sizeof(V));
    v.push_back(e);
  }
  return v;
}

void Consume(ModelBuilder& b, const std::string& v, int32_t dtype) {
  // A graph-input-dependent reader keeps the folded value alive as an initializer.
  b.Node("Identity", {v}, {"out_" + v}, {}, "keep_" + v).Output("out_" + v, dtype);
}

}  // namespace

TEST_CASE("a transformers 5.x mask chain over constant positions folds to its bool values",
          "[folding][kernels]") {
  // q = [[0],[1],[2]], kv = [[0,1,2]]: causal(q, kv) = kv <= q, and kv >= 1 (a sliding start).
  ModelBuilder b(18, 8);
  b.Input("x", {1});
  b.IntInitializer("kv", {0, 1, 2}).IntInitializer("one", {1}).IntInitializer("qshape", {3, 1});
  b.Node("Reshape", {"kv", "qshape"}, {"q"}, {}, "q")
      .Node("LessOrEqual", {"kv", "q"}, {"causal"}, {}, "le")
      .Node("GreaterOrEqual", {"kv", "one"}, {"started"}, {}, "ge")
      .Node("And", {"causal", "started"}, {"mask"}, {}, "and")
      .Node("Not", {"mask"}, {"blocked"}, {}, "not");
  Consume(b, "blocked", T::BOOL);
  auto m = Load(b);
  REQUIRE(m->graph.nodes.size() == 1);  // only the Identity reading it remains
  // mask[q][kv] = kv <= q && kv >= 1: row 0 none, row 1 {1}, row 2 {1, 2}; blocked = !mask.
  CHECK(Values<bool>(*m, "blocked") ==
        std::vector<bool>{true, true, true, true, false, true, true, false, false});
}

TEST_CASE("indexing, scan and predicate ops fold through the CPU kernels", "[folding][kernels]") {
  ModelBuilder b(18, 8);
  b.Input("x", {1});
  b.Initializer("data", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.IntInitializer("idx", {2, 0, 1, 1, 2, 0}).IntInitializer("shape23", {2, 3});
  b.IntInitializer("nd", {1, 2, 0, 0}).IntInitializer("shape22", {2, 2});
  b.IntInitializer("axis1", {1});
  b.Initializer("denom", {3}, {0, 1, 2});
  b.Node("Reshape", {"idx", "shape23"}, {"idx23"}, {}, "r1")
      .Node("GatherElements", {"data", "idx23"}, {"ge"}, {Attr("axis", int64_t{1})}, "gather_el")
      .Node("Reshape", {"nd", "shape22"}, {"nd22"}, {}, "r2")
      .Node("GatherND", {"data", "nd22"}, {"gnd"}, {}, "gather_nd")
      .Node("CumSum", {"data", "axis1"}, {"cs"}, {}, "cumsum")
      .Node("Div", {"denom", "denom"}, {"q"}, {}, "div")  // [nan, 1, 1]
      .Node("IsNaN", {"q"}, {"nan"}, {}, "isnan");
  Consume(b, "ge", T::FLOAT);
  Consume(b, "gnd", T::FLOAT);
  Consume(b, "cs", T::FLOAT);
  Consume(b, "nan", T::BOOL);
  auto m = Load(b);
  CHECK(m->graph.nodes.size() == 4);  // the four Identity readers
  // GatherElements axis 1: row 0 takes [3,1,2], row 1 takes [5,6,4].
  CHECK(Values<float>(*m, "ge") == std::vector<float>{3, 1, 2, 5, 6, 4});
  // GatherND: data[1][2] = 6, data[0][0] = 1.
  CHECK(Values<float>(*m, "gnd") == std::vector<float>{6, 1});
  CHECK(Values<float>(*m, "cs") == std::vector<float>{1, 3, 6, 4, 9, 15});
  CHECK(Values<bool>(*m, "nan") == std::vector<bool>{true, false, false});
}

TEST_CASE("random draws and quantized weights are never folded", "[folding][kernels]") {
  CHECK_FALSE(graph::KernelFoldable("RandomUniform"));
  CHECK_FALSE(graph::KernelFoldable("RandomNormalLike"));
  CHECK_FALSE(graph::KernelFoldable("Bernoulli"));
  CHECK_FALSE(graph::KernelFoldable("DequantizeLinear"));
  CHECK_FALSE(graph::KernelFoldable("If"));
  CHECK(graph::KernelFoldable("GatherND"));
  CHECK(graph::KernelFoldable("GreaterOrEqual"));
  ModelBuilder b(18, 8);
  b.Input("x", {1});
  b.IntInitializer("shape", {4});
  b.Node("RandomUniformLike", {"x"}, {"r"}, {}, "random")
      .Node("ConstantOfShape", {"shape"}, {"zeros"}, {}, "fill")
      .Node("RandomNormalLike", {"zeros"}, {"noise"}, {}, "noise");
  Consume(b, "noise", T::FLOAT);
  b.Output("r");
  auto m = Load(b);
  // ConstantOfShape folds; the random op reading it stays a node.
  bool noise_node = false;
  for (const auto& n : m->graph.nodes) noise_node = noise_node || n.name == "noise";
  CHECK(noise_node);
}

TEST_CASE("every output of a multi-output op is folded", "[folding][kernels]") {
  ModelBuilder b(18, 8);
  b.Input("x", {1});
  b.Initializer("v", {4}, {4, 1, 3, 2});
  b.IntInitializer("k", {2});
  b.Node("TopK", {"v", "k"}, {"top", "where"}, {}, "topk");
  Consume(b, "top", T::FLOAT);
  Consume(b, "where", T::INT64);
  auto m = Load(b);
  CHECK(m->graph.nodes.size() == 2);
  CHECK(Values<float>(*m, "top") == std::vector<float>{4, 3});
  CHECK(Values<int64_t>(*m, "where") == std::vector<int64_t>{0, 2});
}
