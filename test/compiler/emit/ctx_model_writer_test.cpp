// EPContext model construction: which nodes stay, where their initializers go, and that the
// ctx model never refers to the source model's data files.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>

#include "emit/ctx_model_writer.h"
#include "graph/model.h"
#include "model_builder.h"
#include "registry.h"

using namespace ortc;
using ortc::test::ModelBuilder;
using ortc::test::TempDir;

namespace {

// x -> Add(k_ext) -> Hardmax -> Einsum(k_cpu) -> Mul(k_emb): CUDA takes Add and Mul, the CPU
// Hardmax and Einsum.
// k_ext lives in an external data file; k_emb is embedded.
std::unique_ptr<graph::Model> MixedModel(const TempDir& dir) {
  std::vector<float> ext = {1, 2, 3, 4};
  ortc::test::WriteFile(
      dir / "src.data",
      std::string(8, 'z') + std::string(reinterpret_cast<const char*>(ext.data()), 16));
  ModelBuilder b;
  b.Input("x", {4})
      .ExternalInitializer("k_ext", {4}, "src.data", 8)
      .Initializer("k_emb", {4}, {5, 6, 7, 8});
  b.Initializer("k_cpu", {4}, {9, 9, 9, 9});
  b.Node("Add", {"x", "k_ext"}, {"a"}, {}, "add").Node("Hardmax", {"a"}, {"h"}, {}, "hardmax");
  // Einsum: an op the CUDA backend refuses, reading an initializer of its own.
  b.Node("Einsum", {"h", "k_cpu"}, {"s"}, {ortc::test::Attr("equation", "i,i->i")}, "einsum")
      .Node("Mul", {"s", "k_emb"}, {"y"}, {}, "mul");
  b.Output("y");
  b.Save(dir / "src.onnx");
  auto m = graph::LoadModelFromFile(dir / "src.onnx");
  REQUIRE(m.ok());
  return std::move(m).value();
}

}  // namespace

TEST_CASE("uncompiled groups keep their nodes and get self-contained initializers", "[emit]") {
  TempDir dir;
  auto model = MixedModel(dir);
  // CPU only, nothing compiled: every node and initializer stays.
  auto p = partition::PartitionGraph(model->graph, {backends::FindBackend("cpu")});
  std::vector<std::optional<format::EpContextNode>> none(p.groups.size());

  SECTION("embedded: external bytes are copied in, no reference to src.data remains") {
    auto ctx = emit::BuildCtxModel({model.get(), &p, none, ""});
    REQUIRE(ctx.ok());
    const auto& g = ctx->proto.graph();
    CHECK(g.node_size() == 4);
    REQUIRE(g.initializer_size() == 3);
    for (const auto& t : g.initializer()) {
      CHECK(t.data_location() != onnx::TensorProto::EXTERNAL);
      CHECK(t.external_data_size() == 0);
      if (t.name() == "k_ext") {
        std::vector<float> v(4);
        REQUIRE(t.raw_data().size() == 16);
        std::memcpy(v.data(), t.raw_data().data(), 16);
        CHECK(v == std::vector<float>{1, 2, 3, 4});
      }
    }
    CHECK(ctx->external_chunks.empty());
  }
  SECTION("external file: every initializer moves there, 64-byte aligned") {
    auto ctx = emit::BuildCtxModel({model.get(), &p, none, "weights.data"});
    REQUIRE(ctx.ok());
    const auto& g = ctx->proto.graph();
    REQUIRE(g.initializer_size() == 3);
    REQUIRE(ctx->external_chunks.size() == 3);
    for (const auto& t : g.initializer()) {
      CHECK(t.data_location() == onnx::TensorProto::EXTERNAL);
      CHECK(t.raw_data().empty());
      std::map<std::string, std::string> kv;
      for (const auto& e : t.external_data()) kv[e.key()] = e.value();
      CHECK(kv["location"] == "weights.data");
      CHECK(std::stoll(kv["offset"]) % 64 == 0);
      CHECK(kv["length"] == "16");
    }
    CHECK(ctx->external_bytes == 64 * 2 + 16);
  }
}

TEST_CASE("a compiled group becomes one EPContext node and takes its initializers with it",
          "[emit]") {
  TempDir dir;
  auto model = MixedModel(dir);
  auto p = partition::PartitionGraph(model->graph,
                                     {backends::FindBackend("cuda"), backends::FindBackend("cpu")});
  REQUIRE(p.groups.size() == 3);  // cuda_0 {add}, cpu_0 {hardmax, einsum}, cuda_1 {mul}
  std::vector<std::optional<format::EpContextNode>> ep(p.groups.size());
  for (size_t i = 0; i < p.groups.size(); ++i) {
    if (p.groups[i].backend->name() != "cuda") continue;
    format::EpContextNode n;
    n.name = n.partition_name = p.groups[i].name();
    for (int v : p.groups[i].inputs) n.inputs.push_back(model->graph.values[v].name);
    for (int v : p.groups[i].outputs) n.outputs.push_back(model->graph.values[v].name);
    n.ep_cache_context = "src_cuda.bin";
    n.source = "ortc.cuda";
    ep[i] = n;
  }
  auto ctx = emit::BuildCtxModel({model.get(), &p, ep, ""});
  REQUIRE(ctx.ok());
  const auto& g = ctx->proto.graph();
  std::vector<std::string> ops;
  for (const auto& n : g.node()) ops.push_back(n.op_type());
  CHECK(ops == std::vector<std::string>{"EPContext", "Hardmax", "Einsum", "EPContext"});
  REQUIRE(g.initializer_size() == 1);
  CHECK(g.initializer(0).name() == "k_cpu");  // k_ext and k_emb live in the CUDA binary
  bool ms = false;
  for (const auto& op : ctx->proto.opset_import()) ms |= op.domain() == "com.microsoft";
  CHECK(ms);
  // The source declares no intermediate types: the values between nodes get the inferred ones
  // (an EPContext output has no type of its own), the graph output keeps its declaration.
  std::map<std::string, const onnx::ValueInfoProto*> typed;
  for (const auto& vi : g.value_info()) typed[vi.name()] = &vi;
  for (const std::string name : {"a", "h", "s"}) {
    REQUIRE(typed.count(name));
    CHECK(typed[name]->type().tensor_type().elem_type() == onnx::TensorProto::FLOAT);
    REQUIRE(typed[name]->type().tensor_type().shape().dim_size() == 1);
    CHECK(typed[name]->type().tensor_type().shape().dim(0).dim_value() == 4);
  }
  CHECK(typed.count("y") == 0);
}
