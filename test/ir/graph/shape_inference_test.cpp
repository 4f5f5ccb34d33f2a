// Shape inference across opsets: ops whose inputs or attributes changed after opset 17 must
// get their newer semantics, not the opset-17 schema's. Expected shapes follow the ONNX spec.
#include <catch2/catch.hpp>

#include "graph/model.h"
#include "model_builder.h"

using ortc::test::Attr;
using ortc::test::ModelBuilder;

namespace {

std::string ShapeOf(ModelBuilder& b, const std::string& value) {
  const std::string bytes = b.Serialize();
  auto m = ortc::graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "shapes.onnx");
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  return g.values[g.FindValue(value)].info.shape.ToString();
}

}  // namespace

TEST_CASE("ReduceMean at opset 18 takes axes from its second input", "[shapes]") {
  ModelBuilder b(18, 8);
  b.Input("x", {2, 3, 4}).IntInitializer("axes", {1});
  b.Node("ReduceMean", {"x", "axes"}, {"keep"})
      .Node("ReduceMean", {"x", "axes"}, {"drop"}, {Attr("keepdims", int64_t{0})});
  b.Node("ReduceMax", {"x"}, {"all"});  // no axes: reduce everything
  b.Output("keep").Output("drop").Output("all");
  CHECK(ShapeOf(b, "keep") == "[2,1,4]");
  CHECK(ShapeOf(b, "drop") == "[2,4]");
  CHECK(ShapeOf(b, "all") == "[1,1,1]");
}

TEST_CASE("ReduceMean at opset 17 still reads the axes attribute", "[shapes]") {
  ModelBuilder b(17, 8);
  b.Input("x", {2, 3, 4});
  b.Node("ReduceMean", {"x"}, {"y"}, {Attr("axes", std::vector<int64_t>{-1})}).Output("y");
  CHECK(ShapeOf(b, "y") == "[2,3,1]");
}

TEST_CASE("Split at opset 18 with num_outputs gives a smaller last chunk", "[shapes]") {
  ModelBuilder b(18, 8);
  b.Input("x", {7, 2});
  b.Node("Split", {"x"}, {"a", "b", "c"}, {Attr("num_outputs", int64_t{3})})
      .Output("a")
      .Output("c");
  CHECK(ShapeOf(b, "a") == "[3,2]");
  CHECK(ShapeOf(b, "b") == "[3,2]");
  CHECK(ShapeOf(b, "c") == "[1,2]");
}

TEST_CASE("Pad at opset 18 applies pads to the listed axes only", "[shapes]") {
  ModelBuilder b(18, 8);
  b.Input("x", {1, 3, 5, 5}).IntInitializer("pads", {1, 2, 3, 4}).IntInitializer("axes", {2, 3});
  b.Node("Pad", {"x", "pads", "", "axes"}, {"y"}).Output("y");
  CHECK(ShapeOf(b, "y") == "[1,3,9,11]");
}

TEST_CASE("Resize at opset 18 with axes and sizes", "[shapes]") {
  ModelBuilder b(18, 8);
  b.Input("x", {1, 3, 10, 20}).IntInitializer("sizes", {5, 40});
  b.Node("Resize", {"x", "", "", "sizes"}, {"y"}, {Attr("axes", std::vector<int64_t>{2, 3})})
      .Output("y");
  CHECK(ShapeOf(b, "y") == "[1,3,5,40]");
}

TEST_CASE("Resize at opset 18 keeps the aspect ratio when asked", "[shapes]") {
  ModelBuilder b(18, 8);
  b.Input("x", {1, 1, 3, 5}).IntInitializer("sizes", {6, 6});
  b.Node(
       "Resize", {"x", "", "", "sizes"}, {"y"},
       {Attr("axes", std::vector<int64_t>{2, 3}), Attr("keep_aspect_ratio_policy", "not_smaller")})
      .Output("y");
  // One scale for both axes: max(6/3, 6/5) = 2, so 3x5 becomes 6x10 (ONNX's own test case).
  CHECK(ShapeOf(b, "y") == "[1,1,6,10]");
}

TEST_CASE("AveragePool at opset 19 honours dilations", "[shapes]") {
  ModelBuilder b(19, 9);
  b.Input("x", {1, 1, 10, 10});
  b.Node("AveragePool", {"x"}, {"y"},
         {Attr("kernel_shape", std::vector<int64_t>{3, 3}),
          Attr("dilations", std::vector<int64_t>{2, 2})})
      .Output("y");
  // effective kernel 2*(3-1)+1 = 5: (10 - 5) / 1 + 1 = 6
  CHECK(ShapeOf(b, "y") == "[1,1,6,6]");
}

TEST_CASE("shape values flow through Shape, Cast and Concat into Reshape", "[shapes]") {
  ModelBuilder b(13, 8);
  b.Input("x", {2, 3, 4}).IntInitializer("minus1", {-1});
  b.Node("Shape", {"x"}, {"s"}).Node("Cast", {"s"}, {"s32"}, {Attr("to", int64_t{6})});
  b.Node("Cast", {"s32"}, {"s64"}, {Attr("to", int64_t{7})});
  b.Node("Reshape", {"x", "s64"}, {"y"}).Output("y");
  CHECK(ShapeOf(b, "y") == "[2,3,4]");
}

TEST_CASE("an uninferable op keeps the rank from a computed target shape", "[shapes]") {
  ModelBuilder b(13, 8);
  b.Input("x", {2, 3, 4}).Input("t", {2}, onnx::TensorProto::INT64);
  b.Node("Reshape", {"x", "t"}, {"y"}).Output("y");
  CHECK(ShapeOf(b, "y") == "[?,?]");
}
