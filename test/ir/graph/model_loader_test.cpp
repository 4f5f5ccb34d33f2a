// Loader: good models from files and buffers, every kind of bad input, external data.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "graph/model.h"
#include "model_builder.h"
#include "test_data.h"

using ortc::StatusCode;
using ortc::graph::LoadModelFromBuffer;
using ortc::graph::LoadModelFromFile;
using ortc::test::Attr;
using ortc::test::BytesOf;
using ortc::test::ModelBuilder;
using ortc::test::TempDir;
namespace fs = std::filesystem;

namespace {

ModelBuilder SmallModel() {
  ModelBuilder b;
  b.Input("x", {1, 4}).Initializer("w", {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  b.Node("MatMul", {"x", "w"}, {"m"}, {}, "matmul").Node("Relu", {"m"}, {"y"}, {}, "relu");
  b.Output("y");
  return b;
}

// Writes `size` bytes as a sparse file (no disk blocks used for the zeros).
void SparseFile(const fs::path& path, int64_t size) {
  { std::ofstream(path, std::ios::binary); }
  fs::resize_file(path, static_cast<uintmax_t>(size));
}

}  // namespace

TEST_CASE("a small model loads from a file with shapes inferred", "[loader]") {
  TempDir dir;
  SmallModel().Save(dir / "m.onnx");
  auto m = LoadModelFromFile(dir / "m.onnx");
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[0].op_type == "MatMul");
  CHECK(g.nodes[0].since_version == 13);
  const auto& y = g.values[g.FindValue("y")];
  CHECK(y.info.shape.ToString() == "[1,2]");
  CHECK(y.is_graph_output);
  CHECK(g.initializers.size() == 1);
  CHECK(g.TotalInitializerBytes() == 32);
}

TEST_CASE("a model loads from a memory buffer like from a file", "[loader]") {
  const std::string bytes = SmallModel().Serialize();
  auto m = LoadModelFromBuffer(BytesOf(bytes), "<buffer>");
  REQUIRE(m.ok());
  CHECK((*m)->display_name == "<buffer>");
  CHECK((*m)->graph.nodes.size() == 2);
  CHECK((*m)->graph.values[(*m)->graph.FindValue("y")].info.shape.ToString() == "[1,2]");
}

TEST_CASE("nodes stored out of topological order are sorted", "[loader]") {
  ModelBuilder b;
  b.Input("x", {2});
  b.Node("Neg", {"b"}, {"y"}, {}, "last").Node("Relu", {"a"}, {"b"}, {}, "middle");
  b.Node("Abs", {"x"}, {"a"}, {}, "first").Output("y");
  auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "unsorted");
  REQUIRE(m.ok());
  const auto& nodes = (*m)->graph.nodes;
  REQUIRE(nodes.size() == 3);
  CHECK(nodes[0].name == "first");
  CHECK(nodes[1].name == "middle");
  CHECK(nodes[2].name == "last");
  // The proto is re-ordered too, so what is written later is valid ONNX.
  CHECK((*m)->proto.graph().node(0).name() == "first");
}

TEST_CASE("files that are not ONNX get a clear error naming the file", "[loader]") {
  TempDir dir;
  SECTION("text") {
    ortc::test::WriteFile(dir / "notes.onnx", "this is not a model at all\n");
  }
  SECTION("empty") {
    ortc::test::WriteFile(dir / "notes.onnx", "");
  }
  SECTION("random bytes") {
    std::string junk;
    for (int i = 0; i < 4096; ++i) junk.push_back(static_cast<char>((i * 7919) % 251));
    ortc::test::WriteFile(dir / "notes.onnx", junk);
  }
  auto m = LoadModelFromFile(dir / "notes.onnx");
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == StatusCode::kInvalidGraph);
  CHECK_THAT(m.status().message(),
             Catch::Contains("notes.onnx") && Catch::Contains("not an ONNX model"));
}

TEST_CASE("a missing model file is NO_SUCHFILE", "[loader]") {
  auto m = LoadModelFromFile("/nonexistent/model.onnx");
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == StatusCode::kNoSuchFile);
  CHECK_THAT(m.status().message(), Catch::Contains("/nonexistent/model.onnx"));
}

TEST_CASE("a graph with a cycle is refused", "[loader]") {
  ModelBuilder b;
  b.Input("x", {2});
  b.Node("Add", {"x", "c"}, {"a"}, {}, "n1").Node("Relu", {"a"}, {"b"}, {}, "n2");
  b.Node("Neg", {"b"}, {"c"}, {}, "n3").Output("b");
  auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "cyclic.onnx");
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == StatusCode::kInvalidGraph);
  CHECK_THAT(m.status().message(),
             Catch::Contains("cyclic.onnx") && Catch::Contains("cycle") && Catch::Contains("'n1'"));
}

TEST_CASE("a dangling input is refused, naming node and value", "[loader]") {
  ModelBuilder b;
  b.Input("x", {2}).Node("Add", {"x", "ghost"}, {"y"}, {}, "adder").Output("y");
  auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "dangling.onnx");
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(m.status().message(), Catch::Contains("'adder'") && Catch::Contains("'ghost'"));
}

TEST_CASE("a value written twice is refused", "[loader]") {
  ModelBuilder b;
  b.Input("x", {2})
      .Node("Relu", {"x"}, {"y"}, {}, "a")
      .Node("Neg", {"x"}, {"y"}, {}, "b")
      .Output("y");
  auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "ssa.onnx");
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(m.status().message(), Catch::Contains("'b'") && Catch::Contains("already defines"));
}

TEST_CASE("an undefined graph output is refused", "[loader]") {
  ModelBuilder b;
  b.Input("x", {2}).Node("Relu", {"x"}, {"y"}).Output("nothing");
  auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "out.onnx");
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(m.status().message(), Catch::Contains("'nothing'"));
}

TEST_CASE("IR and opset limits: accepted up to IR 12 / opset 24, refused beyond", "[loader]") {
  SECTION("IR 12, opset 24 loads") {
    ModelBuilder b(24, 12);
    b.Input("x", {2, 3}).Node("Relu", {"x"}, {"y"}).Output("y");
    auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "new.onnx");
    REQUIRE(m.ok());
    CHECK((*m)->graph.values[(*m)->graph.FindValue("y")].info.shape.ToString() == "[2,3]");
  }
  SECTION("IR 13 is refused") {
    ModelBuilder b(24, 13);
    b.Input("x", {2}).Node("Relu", {"x"}, {"y"}).Output("y");
    auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "ir13.onnx");
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("IR version 13"));
  }
  SECTION("opset 25 is refused") {
    ModelBuilder b(25, 12);
    b.Input("x", {2}).Node("Relu", {"x"}, {"y"}).Output("y");
    auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "op25.onnx");
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("opset 25"));
  }
}

TEST_CASE("ops of opsets 22 to 24 resolve to their newest version and keep their shape rules",
          "[loader]") {
  // Conv-22 (bfloat16 added), Reshape-23 and -24 (new element types): the opset-17 schemas
  // still infer them.
  ModelBuilder b(24, 12);
  b.Input("x", {1, 2, 4, 4})
      .Initializer("w", {3, 2, 3, 3}, std::vector<float>(54, 0.5f))
      .IntInitializer("s", {1, -1})
      .Node("Conv", {"x", "w"}, {"c"}, {}, "conv")
      .Node("Reshape", {"c", "s"}, {"y"}, {}, "reshape")
      .Output("y");
  auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "op24.onnx");
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  CHECK(g.nodes[0].since_version == 22);
  CHECK(g.nodes[1].since_version == 24);
  CHECK(g.values[g.FindValue("y")].info.shape.ToString() == "[1,12]");
  // Attention exists from opset 23 on (and is expanded at load), not before.
  ModelBuilder old(22, 10);
  old.Input("q", {1, 2, 3, 4}).Node("Attention", {"q", "q", "q"}, {"y"}, {}, "att").Output("y");
  auto refused = LoadModelFromBuffer(BytesOf(old.Serialize()), "att22.onnx");
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(),
             Catch::Contains("Attention") && Catch::Contains("opset 22"));
}

TEST_CASE("an op that does not exist at the model's opset is named with the opset", "[loader]") {
  ModelBuilder b(19, 9);  // Gelu appeared in opset 20
  b.Input("x", {2}).Node("Gelu", {"x"}, {"y"}, {}, "g").Output("y");
  auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "gelu19.onnx");
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(m.status().message(), Catch::Contains("Gelu") && Catch::Contains("opset 19"));
  ModelBuilder ok(20, 9);
  ok.Input("x", {2, 5}).Node("Gelu", {"x"}, {"y"}, {}, "g").Output("y");
  auto m2 = LoadModelFromBuffer(BytesOf(ok.Serialize()), "gelu20.onnx");
  REQUIRE(m2.ok());
  CHECK((*m2)->graph.nodes[0].since_version == 20);
  CHECK((*m2)->graph.values[(*m2)->graph.FindValue("y")].info.shape.ToString() == "[2,5]");
}

TEST_CASE("Constant nodes become initializers", "[loader]") {
  ModelBuilder b;
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(2);
  t.add_float_data(1.f);
  t.add_float_data(2.f);
  onnx::AttributeProto a;
  b.Input("x", {2}).Node("Constant", {}, {"k"}, {}, "const");
  auto* attr = b.proto().mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  *attr->mutable_t() = t;
  b.Node("Add", {"x", "k"}, {"y"}).Output("y");
  auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "const.onnx");
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  REQUIRE(g.nodes.size() == 1);
  CHECK(g.nodes[0].op_type == "Add");
  REQUIRE(g.initializers.size() == 1);
  CHECK(g.initializers[0].name == "k");
  CHECK(g.initializers[0].byte_size == 8);
}

TEST_CASE("a subgraph's outer-scope reads order the If node after their producer", "[loader]") {
  // The If reads `outer` only inside its branches; it is stored before the node producing it.
  ModelBuilder then_b, else_b;
  then_b.Node("Identity", {"outer"}, {"t"}).Output("t");
  else_b.Node("Neg", {"outer"}, {"e"}).Output("e");
  ModelBuilder b;
  b.Input("cond", {}, onnx::TensorProto::BOOL).Input("x", {2});
  b.Node("If", {"cond"}, {"y"},
         {Attr("then_branch", then_b.proto().graph()), Attr("else_branch", else_b.proto().graph())},
         "if");
  b.Node("Relu", {"x"}, {"outer"}, {}, "producer").Output("y");
  auto m = LoadModelFromBuffer(BytesOf(b.Serialize()), "if.onnx");
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  CHECK(g.nodes[0].name == "producer");
  CHECK(g.nodes[1].name == "if");
  REQUIRE(g.nodes[1].implicit_inputs.size() == 1);
  CHECK(g.values[g.nodes[1].implicit_inputs[0]].name == "outer");
  CHECK(g.nodes[1].has_subgraphs);
}

TEST_CASE("external data resolves relative to the model and is checked", "[loader][external]") {
  TempDir dir;
  auto model_with = [&](const std::string& location, int64_t offset, int64_t length = -1) {
    ModelBuilder b;
    b.Input("x", {1, 4}).ExternalInitializer("w", {4, 2}, location, offset, length);
    b.Node("MatMul", {"x", "w"}, {"y"}).Output("y");
    b.Save(dir / "m.onnx");
    return LoadModelFromFile(dir / "m.onnx");
  };
  ortc::test::WriteFile(dir / "weights.bin", std::string(64, '\0'));

  SECTION("good data at an offset") {
    auto m = model_with("weights.bin", 32);
    REQUIRE(m.ok());
    const auto& init = (*m)->graph.initializers[0];
    REQUIRE(init.external);
    CHECK(init.external->offset == 32);
    CHECK(init.byte_size == 32);
  }
  SECTION("subfolders are fine") {
    fs::create_directories(dir / "data");
    ortc::test::WriteFile(dir / "data" / "w.bin", std::string(32, '\0'));
    CHECK(model_with("data/w.bin", 0).ok());
  }
  SECTION("missing file") {
    auto m = model_with("absent.bin", 0);
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().code() == StatusCode::kNoSuchFile);
    CHECK_THAT(m.status().message(), Catch::Contains("absent.bin") && Catch::Contains("'w'"));
  }
  SECTION("truncated file") {
    auto m = model_with("weights.bin", 48);
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("truncated") && Catch::Contains("m.onnx"));
  }
  SECTION("declared length disagrees with the shape") {
    auto m = model_with("weights.bin", 0, 16);
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("declares 16 bytes"));
  }
  SECTION("absolute path") {
    auto m = model_with((dir / "weights.bin").string(), 0);
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("absolute"));
  }
  SECTION("path leaving the folder") {
    auto m = model_with("../weights.bin", 0);
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("leaves the model's folder"));
  }
  SECTION("symbolic link leaving the folder") {
    TempDir elsewhere;
    ortc::test::WriteFile(elsewhere / "secret.bin", std::string(64, '\0'));
    fs::create_symlink(elsewhere / "secret.bin", dir / "link.bin");
    auto m = model_with("link.bin", 0);
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("outside the model's folder"));
  }
  SECTION("malformed offset") {
    ModelBuilder b;
    b.Input("x", {1, 4}).ExternalInitializer("w", {4, 2}, "weights.bin", 0);
    b.proto().mutable_graph()->mutable_initializer(0)->mutable_external_data(1)->set_value("12abc");
    b.Node("MatMul", {"x", "w"}, {"y"}).Output("y");
    b.Save(dir / "m.onnx");
    auto m = LoadModelFromFile(dir / "m.onnx");
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("12abc"));
  }
}

TEST_CASE("external data from a buffer needs the data folder", "[loader][external]") {
  TempDir dir;
  ortc::test::WriteFile(dir / "weights.bin", std::string(32, '\0'));
  ModelBuilder b;
  b.Input("x", {1, 4}).ExternalInitializer("w", {4, 2}, "weights.bin", 0);
  b.Node("MatMul", {"x", "w"}, {"y"}).Output("y");
  const std::string bytes = b.Serialize();
  auto without = LoadModelFromBuffer(BytesOf(bytes), "<buffer>");
  REQUIRE_FALSE(without.ok());
  CHECK(without.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(without.status().message(), Catch::Contains("folder"));
  ortc::graph::LoadOptions options;
  options.external_data_dir = dir.path();
  auto with = LoadModelFromBuffer(BytesOf(bytes), "<buffer>", options);
  REQUIRE(with.ok());
  CHECK(with.value()->graph.initializers[0].external->file ==
        fs::weakly_canonical(dir / "weights.bin"));
}

TEST_CASE("a model with more than 2 GB of external weights loads", "[loader][external][large]") {
  TempDir dir;
  // Two float tensors of 300 Mi elements each: 2.34 GiB in one sparse file.
  const int64_t elements = 300LL * 1024 * 1024;
  const int64_t bytes = elements * 4;
  SparseFile(dir / "big.bin", 2 * bytes);
  ModelBuilder b;
  b.Input("x", {elements});
  b.ExternalInitializer("w1", {elements}, "big.bin", 0)
      .ExternalInitializer("w2", {elements}, "big.bin", bytes);
  b.Node("Add", {"x", "w1"}, {"a"}).Node("Mul", {"a", "w2"}, {"y"}).Output("y");
  b.Save(dir / "big.onnx");
  CHECK(fs::file_size(dir / "big.onnx") < 4096);
  auto m = LoadModelFromFile(dir / "big.onnx");
  REQUIRE(m.ok());
  CHECK((*m)->graph.TotalInitializerBytes() == 2 * bytes);
  CHECK((*m)->graph.TotalInitializerBytes() > (int64_t{1} << 31));
  CHECK((*m)->graph.initializers[1].external->offset == bytes);
}
