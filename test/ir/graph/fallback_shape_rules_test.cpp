// ortc's own shape rules where ONNX 1.12's inference stops: the mask and indexing ops the
// exporters write must leave no value dynamic once the inputs are fixed. Expected shapes and
// types follow the ONNX specification, worked out by hand.
#include <catch2/catch.hpp>

#include "graph/model.h"
#include "model_builder.h"

using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

struct Info {
  std::string shape;
  int32_t dtype;
};

Info InfoOf(ModelBuilder& b, const std::string& value, ortc::graph::InputShapes shapes = {}) {
  const std::string bytes = b.Serialize();
  ortc::graph::LoadOptions o;
  o.input_shapes = std::move(shapes);
  auto m = ortc::graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "fallback.onnx", o);
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  const int v = g.FindValue(value);
  REQUIRE(v >= 0);
  return {g.values[v].info.shape.ToString(), g.values[v].info.dtype};
}

}  // namespace

TEST_CASE("GreaterOrEqual, LessOrEqual and And over run-time positions have static bool shapes",
          "[shapes][fallback]") {
  // transformers 5.x: causal = kv_idx <= q_idx, padding = mask[kv_idx]; q and kv broadcast.
  ModelBuilder b(18, 8);
  b.Input("q", {-1, 1}, T::INT64).Input("kv", {1, -1}, T::INT64);
  b.Node("LessOrEqual", {"kv", "q"}, {"causal"})
      .Node("GreaterOrEqual", {"q", "kv"}, {"ge"})
      .Node("And", {"causal", "ge"}, {"both"})
      .Node("Not", {"both"}, {"neg"})
      .Output("neg", T::BOOL);
  const ortc::graph::InputShapes shapes = {{"q", {16, 1}}, {"kv", {1, 24}}};
  for (const char* v : {"causal", "ge", "both", "neg"}) {
    INFO(v);
    const Info i = InfoOf(b, v, shapes);
    CHECK(i.shape == "[16,24]");
    CHECK(i.dtype == T::BOOL);
  }
}

TEST_CASE("IsNaN, IsInf and Where broadcast as the specification says", "[shapes][fallback]") {
  ModelBuilder b(18, 8);
  b.Input("p", {1, 4, -1, -1}).Input("cond", {1, 1, 1, -1}, T::BOOL);
  b.Initializer("zero", {}, {0.f});
  b.Node("IsNaN", {"p"}, {"nan"})
      .Node("IsInf", {"p"}, {"inf"})
      .Node("Where", {"nan", "zero", "p"}, {"guarded"})
      .Node("Where", {"cond", "zero", "guarded"}, {"masked"})
      .Output("masked");
  const ortc::graph::InputShapes shapes = {{"p", {1, 4, 8, 8}}, {"cond", {1, 1, 1, 8}}};
  CHECK(InfoOf(b, "nan", shapes).shape == "[1,4,8,8]");
  CHECK(InfoOf(b, "nan", shapes).dtype == T::BOOL);
  CHECK(InfoOf(b, "inf", shapes).dtype == T::BOOL);
  CHECK(InfoOf(b, "masked", shapes).shape == "[1,4,8,8]");
  CHECK(InfoOf(b, "masked", shapes).dtype == T::FLOAT);
}

TEST_CASE("GatherND and GatherElements take their shapes from the indices", "[shapes][fallback]") {
  ModelBuilder b(18, 8);
  b.Input("data", {2, 5, 7}).Input("idx", {2, 3, 2}, T::INT64).Input("elem", {2, 4, 7}, T::INT64);
  b.Input("idx_b", {2, 3, 1}, T::INT64);
  b.Node("GatherND", {"data", "idx"}, {"nd"})  // [2,3] + [7]
      .Node("GatherND", {"data", "idx_b"}, {"nd_b"},
            {Attr("batch_dims", int64_t{1})})  // [2,3] + [7]
      .Node("GatherElements", {"data", "elem"}, {"el"}, {Attr("axis", int64_t{1})})
      .Output("nd")
      .Output("nd_b")
      .Output("el");
  CHECK(InfoOf(b, "nd").shape == "[2,3,7]");
  CHECK(InfoOf(b, "nd_b").shape == "[2,3,7]");
  CHECK(InfoOf(b, "el").shape == "[2,4,7]");
}

TEST_CASE("Expand takes its target from a Shape chain, Range from constant bounds",
          "[shapes][fallback]") {
  ModelBuilder b(18, 8);
  b.Input("x", {-1, -1}).Input("m", {1, 1, 1, -1}, T::BOOL);
  b.IntInitializer("ones", {1, 1});
  b.Node("Shape", {"x"}, {"s"})
      .Node("Concat", {"ones", "s"}, {"target"}, {Attr("axis", int64_t{0})})
      .Node("Expand", {"m", "target"}, {"e"})
      .Output("e", T::BOOL);
  const Info e = InfoOf(b, "e", {{"x", {6, 6}}, {"m", {1, 1, 1, 6}}});
  CHECK(e.shape == "[1,1,6,6]");
  CHECK(e.dtype == T::BOOL);
}

TEST_CASE("Einsum's output takes each letter's size from the inputs", "[shapes][fallback]") {
  ModelBuilder b(17, 8);
  b.Input("a", {2, 3, 4}).Input("c", {2, 4, 5}).Input("v", {4}).Input("w", {4});
  b.Node("Einsum", {"a", "c"}, {"bmm"}, {Attr("equation", "bij,bjk->bik")})
      .Node("Einsum", {"v", "w"}, {"prod"}, {Attr("equation", "i,i->i")})
      .Node("Einsum", {"a"}, {"implicit"}, {Attr("equation", "kji")})  // letters once, sorted: ijk
      .Output("bmm")
      .Output("prod")
      .Output("implicit");
  CHECK(InfoOf(b, "bmm").shape == "[2,3,5]");
  CHECK(InfoOf(b, "prod").shape == "[4]");
  CHECK(InfoOf(b, "implicit").shape == "[4,3,2]");
}

TEST_CASE("every op ONNX 1.12 leaves without an inference function has a rule", "[shapes][fallback]") {
  // GreaterOrEqual, LessOrEqual and MeanVarianceNormalization are ONNX 1.12's only opset-17
  // schemas with no inference function (functions it expands only for checking).
  ModelBuilder b(17, 8);
  b.Input("x", {-1, 3, 4, 5});
  b.Node("MeanVarianceNormalization", {"x"}, {"y"}).Output("y");
  CHECK(InfoOf(b, "y", {{"x", {2, 3, 4, 5}}}).shape == "[2,3,4,5]");
  CHECK(InfoOf(b, "y", {{"x", {2, 3, 4, 5}}}).dtype == T::FLOAT);
}
