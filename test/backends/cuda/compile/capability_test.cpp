// The CUDA capability: static shapes only, library ops with their limits, views, and ops the
// kernel generator covers, each refusal with its reason.
#include <catch2/catch.hpp>

#include "cuda/compile/capability.h"
#include "graph/model.h"
#include "model_builder.h"

using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::TempDir;

namespace {

// Reason per node name ("" when taken).
std::map<std::string, std::string> Decide(const ModelBuilder& b) {
  TempDir dir;
  b.Save(dir / "m.onnx");
  auto m = ortc::graph::LoadModelFromFile(dir / "m.onnx");
  REQUIRE(m.ok());
  std::map<std::string, std::string> out;
  for (const auto& n : (*m)->graph.nodes) {
    const auto s = ortc::backends::cuda::CudaSupports((*m)->graph, n);
    out[n.name] = s.supported ? "" : s.reason;
  }
  return out;
}

}  // namespace

TEST_CASE("CUDA takes static library ops, views and generated ops", "[capability]") {
  ModelBuilder b(17, 8);
  b.Input("x", {1, 3, 8, 8});
  b.Initializer("W", {4, 3, 3, 3}, std::vector<float>(108, 0.1f));
  b.IntInitializer("shape", {1, 256});
  b.Node("Conv", {"x", "W"}, {"c"}, {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})}, "conv");
  b.Node("Relu", {"c"}, {"r"}, {}, "relu").Node("Reshape", {"r", "shape"}, {"f"}, {}, "reshape");
  b.Node("Hardmax", {"f"}, {"y"}, {}, "hardmax").Output("y");
  const auto d = Decide(b);
  CHECK(d.at("conv").empty());
  CHECK(d.at("relu").empty());
  CHECK(d.at("reshape").empty());
  CHECK(d.at("hardmax") == "op Hardmax is not supported");
}

TEST_CASE("CUDA refusals name their reason", "[capability]") {
  ModelBuilder b(17, 8);
  b.Input("x", {-1, 3, 8, 8}).Input("s", {1, 3, 8, 8}).Input("Wd", {4, 3, 3, 3});
  b.Initializer("W", {4, 3, 3, 3}, std::vector<float>(108, 0.1f));
  b.Node("Relu", {"x"}, {"r"}, {}, "dynamic");
  b.Node("Conv", {"s", "W"}, {"a"}, {Attr("pads", std::vector<int64_t>{0, 0, 1, 1})}, "asym");
  b.Node("Conv", {"s", "Wd"}, {"w"}, {}, "runtime_filter");
  b.Output("r").Output("a").Output("w");
  const auto d = Decide(b);
  CHECK(d.at("dynamic") ==
        "dynamic shape (dim 'N'): CUDA kernels are specialized to static shapes; fix it with "
        "--input-shape");
  CHECK(d.at("asym") == "Conv with asymmetric pads is not lowered (cuDNN takes symmetric pads)");
  CHECK(d.at("runtime_filter") == "Conv with a non-constant filter is not lowered");
}

TEST_CASE("CUDA leaves empty, huge and 64-bit-attribute nodes to the CPU", "[capability]") {
  // An empty MatMul operand divided the GEMM setup by 0 (SIGFPE in compile); shapes past the
  // runtime's bound overflowed the generators' stride products; pads or kernels beyond 32 bits
  // overflowed the window arithmetic and were written as truncated int literals.
  ModelBuilder b(17, 8);
  b.Input("a", {0, 4}).Initializer("B", {4, 3}, std::vector<float>(12, 1.f));
  b.Input("big", {int64_t{1} << 32, int64_t{1} << 32}).Input("x", {1, 1, 8});
  b.Node("MatMul", {"a", "B"}, {"m"}, {}, "empty");
  b.Node("Relu", {"big"}, {"r"}, {}, "huge");
  b.Node("MaxPool", {"x"}, {"p"},
         {Attr("kernel_shape", std::vector<int64_t>{1}),
          Attr("pads", std::vector<int64_t>{int64_t{1} << 33, 0})},
         "wide_pads");
  b.Output("m").Output("r").Output("p");
  const auto d = Decide(b);
  CHECK(d.at("empty") == "tensor a is empty: empty tensors run on the CPU");
  CHECK(d.at("huge") == "tensor big has more than 2^40 elements");
  CHECK(d.at("wide_pads") == "attribute pads has a value beyond 32 bits");
}
