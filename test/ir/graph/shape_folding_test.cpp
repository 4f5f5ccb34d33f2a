// Graph-level shape folding at load time: which nodes become initializers, the values they
// get (worked out by hand from the ONNX spec), what must stay a node, and that the folded
// model still compiles and runs on the CPU with the same results.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstring>

#include "graph/model.h"
#include "io/tensor_files.h"
#include "model_builder.h"
#include "run_ortc.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::RunOrtc;
using ortc::test::TempDir;
using T = onnx::TensorProto;

namespace {

std::unique_ptr<graph::Model> Load(ModelBuilder& b, graph::InputShapes shapes = {},
                                   bool fold = true) {
  const std::string bytes = b.Serialize();
  graph::LoadOptions o;
  o.input_shapes = std::move(shapes);
  o.fold_shapes = fold;
  auto m = graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "fold.onnx", o);
  REQUIRE(m.ok());
  return std::move(m).value();
}

std::string ShapeOf(const graph::Model& m, const std::string& value) {
  const int v = m.graph.FindValue(value);
  REQUIRE(v >= 0);
  return m.graph.values[v].info.shape.ToString();
}

std::vector<std::string> NodeNames(const graph::Model& m) {
  std::vector<std::string> names;
  for (const auto& n : m.graph.nodes) names.push_back(n.name);
  return names;
}

std::vector<std::string> FoldedNames(const graph::Model& m) {
  std::vector<std::string> names;
  for (const auto& f : m.folded_nodes) names.push_back(f.name);
  return names;
}

// The int64 values of initializer `name`, or nothing when it is absent.
std::optional<std::vector<int64_t>> Ints(const graph::Model& m, const std::string& name) {
  for (const auto& t : m.proto.graph().initializer()) {
    if (t.name() != name) continue;
    REQUIRE(t.data_type() == T::INT64);
    std::vector<int64_t> v(t.raw_data().size() / 8);
    std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
    return v;
  }
  return std::nullopt;
}

void ScalarInt(ModelBuilder& b, const std::string& name, int64_t v) {
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(T::INT64);
  t->add_int64_data(v);
}

// The exporters' reshape-target chain: y = Reshape(x, [Shape(x)[0], -1]) on x [N,3,4,5].
ModelBuilder FlattenChain() {
  ModelBuilder b(13);
  b.Input("x", {-1, 3, 4, 5});
  ScalarInt(b, "zero", 0);
  b.IntInitializer("axes0", {0}).IntInitializer("minus_one", {-1});
  b.Node("Shape", {"x"}, {"s"}, {}, "shape")
      .Node("Gather", {"s", "zero"}, {"n"}, {Attr("axis", int64_t{0})}, "gather")
      .Node("Unsqueeze", {"n", "axes0"}, {"n1"}, {}, "unsqueeze")
      .Node("Concat", {"n1", "minus_one"}, {"target"}, {Attr("axis", int64_t{0})}, "concat")
      .Node("Reshape", {"x", "target"}, {"y"}, {}, "reshape")
      .Output("y");
  return b;
}

}  // namespace

TEST_CASE("shape folding turns a fixed-shape reshape chain into an initializer", "[folding]") {
  auto b = FlattenChain();
  SECTION("folding is off unless the loader is asked for it") {
    auto m = Load(b, {{"x", {2, 3, 4, 5}}}, false);
    CHECK(m->graph.nodes.size() == 5);
    CHECK(m->folded_nodes.empty());
  }
  SECTION("with folding only the Reshape is left, and its output is static") {
    auto m = Load(b, {{"x", {2, 3, 4, 5}}});
    CHECK(NodeNames(*m) == std::vector<std::string>{"reshape"});
    CHECK(FoldedNames(*m) == std::vector<std::string>{"shape", "gather", "unsqueeze", "concat"});
    CHECK(Ints(*m, "target") == std::vector<int64_t>{2, -1});
    CHECK(ShapeOf(*m, "y") == "[2,60]");  // 3*4*5 = 60
    // The chain's own constants are read by nothing else any more and are dropped.
    CHECK_FALSE(Ints(*m, "axes0"));
    CHECK_FALSE(Ints(*m, "minus_one"));
  }
  SECTION("a symbolic input dim leaves the chain alone") {
    auto m = Load(b);
    CHECK(m->graph.nodes.size() == 5);
    CHECK(m->folded_nodes.empty());
  }
}

TEST_CASE("shape folding evaluates the covered ops as the ONNX spec says", "[folding]") {
  ModelBuilder b(15);  // Shape with start/end is opset 15
  b.Input("x", {2, 3, 4});
  b.IntInitializer("two", {2}).IntInitializer("zero1", {0}).IntInitializer("one1", {1});
  b.Initializer("quarter", {1}, {0.25f});
  auto* lim = b.proto().mutable_graph()->add_initializer();  // scalar 0-d Range bounds
  lim->set_name("five");
  lim->set_data_type(T::INT64);
  lim->add_int64_data(5);
  ScalarInt(b, "start", 1);
  ScalarInt(b, "step", 2);
  b.Node("Shape", {"x"}, {"mid"}, {Attr("start", int64_t{1}), Attr("end", int64_t{-1})}, "shape")
      .Node("Size", {"x"}, {"size"}, {}, "size")         // 24
      .Node("Mul", {"mid", "two"}, {"mid2"}, {}, "mul")  // [6]
      .Node("Cast", {"mid2"}, {"midf"}, {Attr("to", int64_t{T::FLOAT})}, "cast")
      .Node("Mul", {"midf", "quarter"}, {"halff"}, {}, "mulf")  // [1.5]
      .Node("Floor", {"halff"}, {"fl"}, {}, "floor")            // [1]
      .Node("Ceil", {"halff"}, {"ce"}, {}, "ceil")              // [2]
      .Node("Cast", {"fl"}, {"fli"}, {Attr("to", int64_t{T::INT64})}, "cast_fl")
      .Node("Cast", {"ce"}, {"cei"}, {Attr("to", int64_t{T::INT64})}, "cast_ce")
      .Node("Unsqueeze", {"size", "zero1"}, {"size1"}, {}, "unsqueeze")
      .Node("Concat", {"fli", "cei", "size1"}, {"v"}, {Attr("axis", int64_t{0})}, "concat")
      .Node("Equal", {"v", "one1"}, {"is_one"}, {}, "equal")         // [T,F,F]
      .Node("Where", {"is_one", "zero1", "v"}, {"w"}, {}, "where")   // [0,2,24]
      .Node("Range", {"start", "five", "step"}, {"r"}, {}, "range")  // [1,3]
      .Node("Expand", {"one1", "two"}, {"e"}, {}, "expand")          // [1,1]
      .Node("Sub", {"w", "one1"}, {"d"}, {}, "sub")                  // [-1,1,23]
      .Node("Slice", {"d", "one1", "two"}, {"ds"}, {}, "slice")      // [1]
      .Node("Div", {"w", "two"}, {"dv"}, {}, "div");                 // [0,1,12]
  // Non-foldable consumers keep the results alive without making them graph outputs.
  for (const char* v : {"w", "r", "e", "ds", "dv", "mid"}) {
    b.Node("Neg", {v}, {std::string("neg_") + v}, {}, std::string("neg_") + v)
        .Output(std::string("neg_") + v, T::INT64);
  }
  auto m = Load(b);
  CHECK(m->graph.nodes.size() == 6);  // the six Neg nodes
  CHECK(Ints(*m, "w") == std::vector<int64_t>{0, 2, 24});
  CHECK(Ints(*m, "r") == std::vector<int64_t>{1, 3});
  CHECK(Ints(*m, "e") == std::vector<int64_t>{1, 1});
  CHECK(Ints(*m, "ds") == std::vector<int64_t>{1});
  CHECK(Ints(*m, "dv") == std::vector<int64_t>{0, 1, 12});
  CHECK(Ints(*m, "mid") == std::vector<int64_t>{3});
  CHECK_FALSE(Ints(*m, "size"));  // intermediate values nobody reads are not kept
}

TEST_CASE("shape folding computes a causal mask with Trilu", "[folding]") {
  ModelBuilder b(17);
  b.Input("x", {3, 3}).Initializer("m", {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  b.IntInitializer("one", {1});
  auto* k = b.proto().mutable_graph()->add_initializer();  // Trilu's k is a 0-d scalar
  k->set_name("k1");
  k->set_data_type(T::INT64);
  k->add_int64_data(1);
  b.Node("Trilu", {"m", "k1"}, {"up"}, {}, "upper")
      .Node("Trilu", {"m"}, {"low"}, {Attr("upper", int64_t{0})}, "lower")
      .Node("Add", {"x", "up"}, {"y1"}, {}, "add1")
      .Node("Add", {"x", "low"}, {"y2"}, {}, "add2")
      .Output("y1")
      .Output("y2");
  auto m = Load(b);
  CHECK(NodeNames(*m) == std::vector<std::string>{"add1", "add2"});
  auto floats = [&](const std::string& name) {
    for (const auto& t : m->proto.graph().initializer()) {
      if (t.name() != name) continue;
      std::vector<float> v(t.raw_data().size() / 4);
      std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
      return v;
    }
    return std::vector<float>{};
  };
  CHECK(floats("up") == std::vector<float>{0, 2, 3, 0, 0, 6, 0, 0, 0});   // j - i >= 1
  CHECK(floats("low") == std::vector<float>{1, 0, 0, 4, 5, 0, 7, 8, 9});  // j - i <= 0
}

TEST_CASE("an Identity of a weight is folded by reading the weight, not by copying it",
          "[folding]") {
  ModelBuilder b(17);  // exporters write a shared weight once and reach it through Identity
  b.Input("x", {2}).Initializer("w", {2}, {1, 2});
  b.Node("Identity", {"w"}, {"w2"}, {}, "identity")
      .Node("Identity", {"w2"}, {"w3"}, {}, "identity2")
      .Node("Add", {"x", "w"}, {"y1"}, {}, "add1")
      .Node("Add", {"x", "w3"}, {"y2"}, {}, "add2")
      .Output("y1")
      .Output("y2");
  auto m = Load(b);
  CHECK(NodeNames(*m) == std::vector<std::string>{"add1", "add2"});
  REQUIRE(m->proto.graph().initializer_size() == 1);
  CHECK(m->proto.graph().initializer(0).name() == "w");
  CHECK(m->proto.graph().node(1).input(1) == "w");
}

TEST_CASE("shape folding leaves graph outputs, overridable and large values as nodes",
          "[folding]") {
  SECTION("a Shape whose output is a graph output stays a node") {
    ModelBuilder b;
    b.Input("x", {2, 3}).Node("Shape", {"x"}, {"s"}, {}, "shape").Output("s", T::INT64);
    auto m = Load(b);
    CHECK(NodeNames(*m) == std::vector<std::string>{"shape"});
  }
  SECTION("an initializer also listed as a graph input may be fed, so it is not constant") {
    ModelBuilder b(13, 3);
    b.Input("x", {2, 6}).IntInitializer("target", {3, 4}).Input("target", {2}, T::INT64);
    b.Node("Identity", {"target"}, {"t2"}, {}, "identity")
        .Node("Reshape", {"x", "t2"}, {"y"}, {}, "reshape")
        .Output("y");
    auto m = Load(b);
    CHECK(m->graph.nodes.size() == 2);
  }
  SECTION("a result over 64 KiB stays a node") {
    ModelBuilder b;
    b.Input("x", {1}).IntInitializer("big", {20000});  // 20000 floats = 80000 bytes
    b.Node("ConstantOfShape", {"big"}, {"c"}, {}, "fill")
        .Node("Add", {"c", "x"}, {"y"}, {}, "add")
        .Output("y");
    auto m = Load(b);
    CHECK(m->graph.nodes.size() == 2);
  }
}

TEST_CASE("shape folding repeats until shapes settle", "[folding]") {
  // Shape(z) can fold only once z's shape is static, and that needs target1 (a Concat of
  // constants) folded first and shapes inferred again.
  ModelBuilder b(13);
  b.Input("x", {-1, 6});
  b.IntInitializer("minus_one", {-1}).IntInitializer("three", {3});
  b.Node("Shape", {"x"}, {"s"}, {}, "shape_x")
      .Node("Slice", {"s", "minus_one", "three"}, {"last"}, {}, "slice")  // [6]
      .Node("Concat", {"minus_one", "last"}, {"target3"}, {Attr("axis", int64_t{0})}, "concat3")
      .Node("Concat", {"minus_one", "three"}, {"target1"}, {Attr("axis", int64_t{0})}, "concat1")
      .Node("Reshape", {"x", "target1"}, {"z"}, {}, "reshape1")
      .Node("Shape", {"z"}, {"sz"}, {}, "shape_z")
      .Node("Reshape", {"z", "sz"}, {"y"}, {}, "reshape2")
      .Node("Reshape", {"x", "target3"}, {"same"}, {}, "reshape3")
      .Output("y")
      .Output("same");
  auto m = Load(b, {{"x", {4, 6}}});
  CHECK(NodeNames(*m) == std::vector<std::string>{"reshape1", "reshape2", "reshape3"});
  CHECK(Ints(*m, "target1") == std::vector<int64_t>{-1, 3});
  CHECK(Ints(*m, "sz") == std::vector<int64_t>{8, 3});  // 4*6 elements as [-1,3]
  CHECK(Ints(*m, "target3") == std::vector<int64_t>{-1, 6});
  CHECK(ShapeOf(*m, "y") == "[8,3]");
  CHECK(ShapeOf(*m, "same") == "[4,6]");
}

TEST_CASE("shape folding is deterministic", "[folding]") {
  auto b = FlattenChain();
  auto m1 = Load(b, {{"x", {2, 3, 4, 5}}});
  auto m2 = Load(b, {{"x", {2, 3, 4, 5}}});
  CHECK(m1->proto.SerializeAsString() == m2->proto.SerializeAsString());
}

TEST_CASE("a folded model compiles and runs on the CPU with the same result", "[folding][cli]") {
  TempDir dir;
  FlattenChain().Save(dir / "m.onnx");
  auto part = RunOrtc("partition " + (dir / "m.onnx").string() +
                      " --ep cuda,cpu --input-shape x=2x3x4x5 --json");
  REQUIRE(part.exit_code == 0);
  auto j = nlohmann::json::parse(part.out);
  CHECK(j["node_count"] == 1);
  CHECK(j["folded"].size() == 4);
  CHECK(j["refusals"].empty());  // the Reshape now has static shapes, so CUDA takes it
  REQUIRE(RunOrtc("compile " + (dir / "m.onnx").string() + " --ep cpu --input-shape x=2x3x4x5 -q")
              .exit_code == 0);
  std::vector<float> xs(120);
  for (int i = 0; i < 120; ++i) xs[i] = static_cast<float>(i) * 0.5f - 7;
  REQUIRE(
      io::WriteNpy(dir / "x.npy", Tensor::FromBytes(DataType::kFloat, {2, 3, 4, 5}, xs.data(), 480))
          .ok());
  auto r =
      RunOrtc("run " + (dir / "m_ctx.onnx").string() + " --input x=" + (dir / "x.npy").string() +
              " --output-dir " + (dir / "out").string());
  REQUIRE(r.exit_code == 0);
  auto y = io::ReadNpy(dir / "out" / "y.npy");
  REQUIRE(y.ok());
  CHECK(y->shape() == std::vector<int64_t>{2, 60});
  for (int i = 0; i < 120; ++i) CHECK(y->data<float>()[i] == xs[i]);
}

TEST_CASE("CastLike becomes Cast to its target's type, and folds when its input is constant",
          "[fold]") {
  // torchlib's forms: CastLike(constant, x) matches a scalar to x's type (SDPA's scale, a causal
  // mask); CastLike(y, x) of a computed y.
  ModelBuilder b(18, 10);
  b.Input("x", {2}, T::FLOAT16).Input("i", {2}, T::INT64);
  b.Initializer("one", {}, {1.0f});
  b.Node("CastLike", {"one", "x"}, {"one_half"}, {}, "like_const");
  b.Node("Add", {"x", "one_half"}, {"y"}, {}, "add");
  b.Node("CastLike", {"i", "x"}, {"i_half"}, {}, "like_computed");
  b.Node("Mul", {"y", "i_half"}, {"z"}, {}, "mul").Output("z", T::FLOAT16);
  auto m = Load(b);
  for (const auto& n : m->graph.nodes) CHECK(n.op_type != "CastLike");
  // The constant's CastLike is now an fp16 initializer; the other a Cast to fp16.
  CHECK(FoldedNames(*m) == std::vector<std::string>{"like_const"});
  const auto& g = m->graph;
  CHECK(g.values[g.FindValue("one_half")].initializer >= 0);
  CHECK(g.values[g.FindValue("one_half")].info.dtype == T::FLOAT16);
  bool cast = false;
  for (const auto& n : g.nodes) {
    if (n.name != "like_computed") continue;
    cast = n.op_type == "Cast" && n.inputs.size() == 1;
    for (const auto& a : n.proto->attribute())
      if (a.name() == "to") cast = cast && a.i() == T::FLOAT16;
  }
  CHECK(cast);
  CHECK(g.values[g.FindValue("z")].info.dtype == T::FLOAT16);
}
