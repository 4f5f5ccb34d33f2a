// Attention lowered onto strided GEMMs, executed on the host and compared with the CPU runtime:
// heads read in place from a fused projection, GQA's grouped query rows with batch 2 and the
// heads merged after, a query read transposed (copied) and K^T handed over as it is.
#include <catch2/catch.hpp>

#include "model_builder.h"
#include "model_runner.h"
#include "test_data.h"

using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::TempDir;
using namespace ortc::test::cuda;

namespace {

void Check(const ModelBuilder& b, std::map<std::string, std::vector<int64_t>> shapes,
           int min_strided_gemms) {
  for (const char* precision : {"fp32", "fp16", "bf16"}) {
    TempDir dir;
    b.Save(dir / "m.onnx");
    CheckOptions o = CheckOptions::ForPrecision(precision);
    o.input_shapes = shapes;
    auto r = CheckCompiledModel(dir / "m.onnx", dir / "out", o);
    INFO(precision);
    if (r.ok() && !r->skipped.empty()) {
      WARN("SKIP: " << r->skipped);
      return;
    }
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    INFO(Describe(*r));
    CHECK(r->cpu_nodes == 0);
    CHECK(r->beyond == 0);
    CHECK(r->intermediates_beyond == 0);
    int gemms = 0;
    for (const auto& g : r->graphs) gemms += g.counts.gemms;
    CHECK(gemms >= min_strided_gemms);
  }
}

}  // namespace

TEST_CASE("attention GEMMs read heads in place from a fused QKV projection", "[emulator]") {
  // x [2, 8, 16] -> one [16, 48] projection -> Split -> heads [2, 2, 8, 8]; a padding mask.
  ModelBuilder b(17);
  b.Input("x", {2, 8, 16}).Input("mask", {2, 1, 1, 8});
  b.Initializer("w", {16, 48}, ortc::test::RandomFloats(4, 16 * 48));
  b.IntInitializer("sizes", {16, 16, 16}).IntInitializer("heads", {2, 8, 2, 8});
  b.IntInitializer("merge", {2, 8, 16});
  b.Initializer("scale", {}, {0.35f});
  const std::vector<int64_t> perm = {0, 2, 1, 3};
  b.Node("MatMul", {"x", "w"}, {"qkv"});
  b.Node("Split", {"qkv", "sizes"}, {"q0", "k0", "v0"}, {Attr("axis", int64_t{2})});
  for (const std::string n : {"q", "k", "v"}) b.Node("Reshape", {n + "0", "heads"}, {n + "1"});
  b.Node("Transpose", {"q1"}, {"q"}, {Attr("perm", perm)});
  b.Node("Transpose", {"k1"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 2, 3, 1})});
  b.Node("Transpose", {"v1"}, {"v"}, {Attr("perm", perm)});
  b.Node("MatMul", {"q", "kt"}, {"s"}).Node("Mul", {"s", "scale"}, {"ss"});
  b.Node("Add", {"ss", "mask"}, {"sm"});
  b.Node("Softmax", {"sm"}, {"p"}, {Attr("axis", int64_t{-1})});
  b.Node("MatMul", {"p", "v"}, {"o"});
  b.Node("Transpose", {"o"}, {"ot"}, {Attr("perm", perm)});
  b.Node("Reshape", {"ot", "merge"}, {"y"}).Output("y");
  Check(b, {{"x", {2, 8, 16}}, {"mask", {2, 1, 1, 8}}}, 3);
}

TEST_CASE("GQA attention on GEMMs: grouped query rows, batch 2, heads merged", "[emulator]") {
  const int64_t B = 2, H = 4, G = 2, S = 8, D = 8;
  ModelBuilder b(17);
  b.Input("q", {B, H, S, D}).Input("k", {B, H / G, S, D}).Input("v", {B, H / G, S, D});
  b.IntInitializer("ax2", {2}).IntInitializer("rep", {B, H / G, G, S, D});
  b.IntInitializer("h4", {B, H, S, D}).Initializer("scale", {}, {0.35f});
  for (const std::string n : {"k", "v"}) {
    b.Node("Unsqueeze", {n, "ax2"}, {n + "5"}).Node("Expand", {n + "5", "rep"}, {n + "e"});
    b.Node("Reshape", {n + "e", "h4"}, {n + "r"});
  }
  b.Node("Transpose", {"kr"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
  b.Node("MatMul", {"q", "kt"}, {"s"}).Node("Mul", {"s", "scale"}, {"ss"});
  b.Node("Softmax", {"ss"}, {"p"}, {Attr("axis", int64_t{-1})});
  b.Node("MatMul", {"p", "vr"}, {"o"});
  b.Node("Transpose", {"o"}, {"y"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})}).Output("y");
  Check(b, {{"q", {B, H, S, D}}, {"k", {B, H / G, S, D}}, {"v", {B, H / G, S, D}}}, 2);
}

TEST_CASE("attention with a transposed query (copied) and K^T given row-major", "[emulator]") {
  ModelBuilder b(17);
  b.Input("q_t", {1, 2, 8, 8}).Input("kt", {1, 2, 8, 8}).Input("v", {1, 2, 8, 8});
  b.Node("Transpose", {"q_t"}, {"q"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
  b.Node("MatMul", {"q", "kt"}, {"s"});
  b.Node("Softmax", {"s"}, {"p"}, {Attr("axis", int64_t{-1})});
  b.Node("MatMul", {"p", "v"}, {"y"}).Output("y");
  Check(b, {{"q_t", {1, 2, 8, 8}}, {"kt", {1, 2, 8, 8}}, {"v", {1, 2, 8, 8}}}, 2);
}

TEST_CASE("views read through a shared head Transpose and Split, which still runs for another reader",
          "[emulator]") {
  // GPT-NeoX's layout: x @ W -> [1, 8, heads, 3 * d] -> Transpose -> Split into q, k, v. V is
  // also read by a Relu (a program output), so the Split and the Transpose under it must stay
  // for it while the attention reads q, k and v through them.
  ModelBuilder b(18);
  b.Input("x", {1, 8, 16});
  b.Initializer("w", {16, 48}, ortc::test::RandomFloats(8, 16 * 48));
  b.IntInitializer("heads", {1, 8, 2, 24}).IntInitializer("merge", {1, 8, 16});
  b.Initializer("scale", {}, {0.35f});
  b.Node("MatMul", {"x", "w"}, {"qkv"}).Node("Reshape", {"qkv", "heads"}, {"h"});
  b.Node("Transpose", {"h"}, {"t"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
  b.Node("Split", {"t"}, {"q", "k", "v"}, {Attr("axis", int64_t{3}), Attr("num_outputs", int64_t{3})});
  b.Node("Transpose", {"k"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
  b.Node("MatMul", {"q", "kt"}, {"s"}).Node("Mul", {"s", "scale"}, {"ss"});
  b.Node("Softmax", {"ss"}, {"p"}, {Attr("axis", int64_t{-1})});
  b.Node("MatMul", {"p", "v"}, {"o"});
  b.Node("Transpose", {"o"}, {"ot"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
  b.Node("Reshape", {"ot", "merge"}, {"y"}).Output("y");
  b.Node("Relu", {"v"}, {"v_relu"}).Output("v_relu");
  Check(b, {{"x", {1, 8, 16}}}, 3);
}
