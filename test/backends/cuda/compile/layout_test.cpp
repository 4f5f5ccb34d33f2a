// Where tensor-core precisions keep activations NHWC: through pooling (channels-last kernels)
// and global pools' [N, C, 1, 1] results, with transposes only where a reader needs NCHW.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>

#include "plan_helpers.h"
#include "test_data.h"

using namespace ortc::backends::cuda;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::cuda::PlanAll;

namespace {

namespace cg = ortc::backends::cuda::codegen;

const Attr kPads1("pads", std::vector<int64_t>{1, 1, 1, 1});

void Weight(ModelBuilder& b, const std::string& name, std::vector<int64_t> dims, unsigned seed) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  b.Initializer(name, std::move(dims), ortc::test::RandomFloats(seed, n));
}

// conv -> maxpool -> conv -> globalaveragepool -> flatten -> gemm, a classifier's trunk.
ModelBuilder PoolChain() {
  ModelBuilder b(17, 8);
  b.Input("x", {1, 3, 16, 16});
  Weight(b, "W1", {8, 3, 3, 3}, 1);
  Weight(b, "B1", {8}, 2);
  Weight(b, "W2", {16, 8, 3, 3}, 3);
  Weight(b, "Wfc", {10, 16}, 4);
  Weight(b, "Bfc", {10}, 5);
  b.Node("Conv", {"x", "W1", "B1"}, {"c1"}, {kPads1}, "conv1");
  b.Node("Relu", {"c1"}, {"r1"}, {}, "relu1");
  b.Node("MaxPool", {"r1"}, {"mp"},
         {Attr("kernel_shape", std::vector<int64_t>{3, 3}),
          Attr("strides", std::vector<int64_t>{2, 2}), kPads1},
         "maxpool");
  b.Node("Conv", {"mp", "W2"}, {"c2"}, {kPads1}, "conv2");
  b.Node("Relu", {"c2"}, {"r2"}, {}, "relu2");
  b.Node("GlobalAveragePool", {"r2"}, {"gap"}, {}, "gap");
  b.Node("Flatten", {"gap"}, {"f"}, {Attr("axis", int64_t{1})}, "flatten");
  b.Node("Gemm", {"f", "Wfc", "Bfc"}, {"y"}, {Attr("transB", int64_t{1})}, "fc");
  b.Output("y");
  return b;
}

const PlanStep* StepOf(const Plan& plan, const std::string& node) {
  for (const auto& s : plan.steps) {
    for (const auto& src : s.sources)
      if (src == node) return &s;
  }
  FAIL("no step for " << node);
  return nullptr;
}

std::vector<std::string> TransposeSteps(const Plan& plan) {
  std::vector<std::string> names;
  for (const auto& s : plan.steps) {
    if (s.kind == StepKind::kLaunch && s.launch.op && s.launch.op->op_type == "Transpose")
      names.push_back(s.name);
  }
  return names;
}

}  // namespace

TEST_CASE("fp16: conv -> maxpool -> conv -> global pool -> flatten -> gemm stays NHWC",
          "[lowering][layout]") {
  auto p = PlanAll(PoolChain(), Precision::kFp16);
  const Plan& plan = p.graph.plan;
  // The only transpose is the program input's (NCHW by ONNX) into the first convolution; the
  // chain itself has none (before channels-last pooling it had 3: around the MaxPool and
  // before the GlobalAveragePool).
  CHECK(TransposeSteps(plan) == std::vector<std::string>{"x_fp16.to_nhwc"});
  CHECK(p.graph.stats.at("layout_transposes") == 1);
  CHECK(p.graph.stats.at("nhwc_pool_kernels") == 2);
  const PlanStep* conv1 = StepOf(plan, "conv1");
  const PlanStep* pool = StepOf(plan, "maxpool");
  const PlanStep* conv2 = StepOf(plan, "conv2");
  const PlanStep* gap = StepOf(plan, "gap");
  const PlanStep* fc = StepOf(plan, "fc");
  REQUIRE(pool->launch.op);
  CHECK(pool->launch.op->input_layout == cg::Layout::kNhwc);
  CHECK(pool->launch.op->output_layout == cg::Layout::kNhwc);
  CHECK(pool->launch.inputs[0] == conv1->conv.y);
  CHECK(plan.buffers[pool->launch.outputs[0]].layout == fb::TensorLayout::NHWC);
  CHECK(conv2->conv.x == pool->launch.outputs[0]);
  REQUIRE(gap->launch.op);
  CHECK(gap->launch.op->input_layout == cg::Layout::kNhwc);
  CHECK(gap->launch.inputs[0] == conv2->conv.y);
  // [1, 16, 1, 1]: the same bytes in both layouts, so the result is the value's own NCHW buffer
  // and Flatten is a view of it.
  const int g = gap->launch.outputs[0];
  CHECK(plan.buffers[g].layout == fb::TensorLayout::NCHW);
  CHECK(plan.buffers[g].name == "gap");
  CHECK(plan.buffers[fc->gemm.a].alias_of == g);
}

TEST_CASE("fp32: the same chain is NCHW everywhere, with no transpose", "[lowering][layout]") {
  auto p = PlanAll(PoolChain(), Precision::kFp32);
  const Plan& plan = p.graph.plan;
  CHECK(TransposeSteps(plan).empty());
  CHECK(p.graph.stats.at("layout_transposes") == 0);
  CHECK(p.graph.stats.at("nhwc_pool_kernels") == 0);
  for (const char* node : {"maxpool", "gap"}) {
    const PlanStep* s = StepOf(plan, node);
    REQUIRE(s->launch.op);
    CHECK(s->launch.op->input_layout == cg::Layout::kNchw);
    CHECK(s->launch.op->output_layout == cg::Layout::kNchw);
  }
}

TEST_CASE("fp16: a resnet-like trunk has one transpose, at the input", "[lowering][layout]") {
  // Stem conv + maxpool, two residual blocks (the second downsampling with a 1x1 projection),
  // global average pool, classifier: the shape of resnet18 at small scale.
  ModelBuilder b(17, 8);
  b.Input("x", {1, 3, 32, 32});
  Weight(b, "Ws", {8, 3, 7, 7}, 10);
  b.Node(
      "Conv", {"x", "Ws"}, {"s"},
      {Attr("pads", std::vector<int64_t>{3, 3, 3, 3}), Attr("strides", std::vector<int64_t>{2, 2})},
      "stem");
  b.Node("Relu", {"s"}, {"sr"}, {}, "stem_relu");
  b.Node("MaxPool", {"sr"}, {"p"},
         {Attr("kernel_shape", std::vector<int64_t>{3, 3}),
          Attr("strides", std::vector<int64_t>{2, 2}), kPads1},
         "pool");
  // Block 1: identity shortcut.
  Weight(b, "Wa", {8, 8, 3, 3}, 11);
  Weight(b, "Wb", {8, 8, 3, 3}, 12);
  b.Node("Conv", {"p", "Wa"}, {"a"}, {kPads1}, "b1_conv1");
  b.Node("Relu", {"a"}, {"ar"}, {}, "b1_relu1");
  b.Node("Conv", {"ar", "Wb"}, {"bb"}, {kPads1}, "b1_conv2");
  b.Node("Add", {"bb", "p"}, {"sum1"}, {}, "b1_add");
  b.Node("Relu", {"sum1"}, {"o1"}, {}, "b1_relu2");
  // Block 2: stride 2, projection shortcut.
  Weight(b, "Wc", {16, 8, 3, 3}, 13);
  Weight(b, "Wd", {16, 16, 3, 3}, 14);
  Weight(b, "Wp", {16, 8, 1, 1}, 15);
  b.Node("Conv", {"o1", "Wc"}, {"c"}, {kPads1, Attr("strides", std::vector<int64_t>{2, 2})},
         "b2_conv1");
  b.Node("Relu", {"c"}, {"cr"}, {}, "b2_relu1");
  b.Node("Conv", {"cr", "Wd"}, {"d"}, {kPads1}, "b2_conv2");
  b.Node("Conv", {"o1", "Wp"}, {"proj"}, {Attr("strides", std::vector<int64_t>{2, 2})}, "b2_proj");
  b.Node("Add", {"d", "proj"}, {"sum2"}, {}, "b2_add");
  b.Node("Relu", {"sum2"}, {"o2"}, {}, "b2_relu2");
  Weight(b, "Wfc", {10, 16}, 16);
  b.Node("GlobalAveragePool", {"o2"}, {"gap"}, {}, "gap");
  b.Node("Flatten", {"gap"}, {"f"}, {Attr("axis", int64_t{1})}, "flatten");
  b.Node("Gemm", {"f", "Wfc"}, {"y"}, {Attr("transB", int64_t{1})}, "fc");
  b.Output("y");
  auto p = PlanAll(b, Precision::kFp16);
  // Before channels-last pooling: 4 (input; MaxPool in and out; GlobalAveragePool in).
  CHECK(TransposeSteps(p.graph.plan) == std::vector<std::string>{"x_fp16.to_nhwc"});
  CHECK(p.graph.stats.at("nhwc_pool_kernels") == 2);
}

TEST_CASE("fp16: a pool read in NCHW reads its NHWC input and writes NCHW itself",
          "[lowering][layout]") {
  // Before, c was transposed for the pool. Now the kernel reads c as NHWC and writes its result
  // NCHW for the Softmax: no transpose at all besides the input's.
  ModelBuilder b(17, 8);
  b.Input("x", {1, 4, 8, 8});
  Weight(b, "W", {4, 4, 3, 3}, 22);
  b.Node("Conv", {"x", "W"}, {"c"}, {kPads1}, "conv");
  b.Node("AveragePool", {"c"}, {"ap"},
         {Attr("kernel_shape", std::vector<int64_t>{2, 2}),
          Attr("strides", std::vector<int64_t>{2, 2})},
         "avgpool");
  b.Node("Softmax", {"ap"}, {"y"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Output("y");
  auto p = PlanAll(b, Precision::kFp16);
  const Plan& plan = p.graph.plan;
  const PlanStep* pool = StepOf(plan, "avgpool");
  REQUIRE(pool->launch.op);
  CHECK(pool->launch.op->input_layout == cg::Layout::kNhwc);
  CHECK(pool->launch.op->output_layout == cg::Layout::kNchw);
  CHECK(plan.buffers[pool->launch.outputs[0]].layout == fb::TensorLayout::NCHW);
  CHECK(TransposeSteps(plan) == std::vector<std::string>{"x_fp16.to_nhwc"});
}

TEST_CASE("fp16: a pool between an NCHW op and a convolution writes NHWC itself",
          "[lowering][layout]") {
  // Resize has NCHW kernels only; the MaxPool after it writes NHWC for the convolution, where a
  // transpose used to sit.
  ModelBuilder b(17, 8);
  b.Input("x", {1, 4, 8, 8});
  b.Initializer("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  Weight(b, "W", {6, 4, 1, 1}, 23);
  b.Node("Resize", {"x", "", "scales"}, {"rs"}, {Attr("mode", "nearest")}, "resize");
  b.Node("MaxPool", {"rs"}, {"mp"},
         {Attr("kernel_shape", std::vector<int64_t>{3, 3}),
          Attr("strides", std::vector<int64_t>{2, 2}), kPads1},
         "maxpool");
  b.Node("Conv", {"mp", "W"}, {"y"}, {}, "pointwise");
  b.Output("y");
  auto p = PlanAll(b, Precision::kFp16);
  const Plan& plan = p.graph.plan;
  const PlanStep* pool = StepOf(plan, "maxpool");
  REQUIRE(pool->launch.op);
  CHECK(pool->launch.op->input_layout == cg::Layout::kNchw);
  CHECK(pool->launch.op->output_layout == cg::Layout::kNhwc);
  CHECK(StepOf(plan, "pointwise")->conv.x == pool->launch.outputs[0]);
  // Only the convolution's result is transposed back, for the program output.
  CHECK(TransposeSteps(plan) == std::vector<std::string>{"y_fp16.to_nchw"});
}

TEST_CASE("fp16: a pool whose input another reader needs in NCHW adds no transpose",
          "[lowering][layout]") {
  // c is read by a Softmax (NCHW) and the MaxPool, whose result a Softmax reads too. Before: one
  // transpose of c served both. Now the pool reads c as NHWC and writes NCHW; the Softmax of c
  // still gets c transposed: the same count.
  ModelBuilder b(17, 8);
  b.Input("x", {1, 4, 8, 8});
  Weight(b, "W", {4, 4, 3, 3}, 21);
  b.Node("Conv", {"x", "W"}, {"c"}, {kPads1}, "conv");
  // The pool is lowered first, before c has an NCHW copy.
  b.Node("MaxPool", {"c"}, {"mp"},
         {Attr("kernel_shape", std::vector<int64_t>{2, 2}),
          Attr("strides", std::vector<int64_t>{2, 2})},
         "maxpool");
  b.Node("Softmax", {"c"}, {"s1"}, {Attr("axis", int64_t{-1})}, "softmax_c");
  b.Node("Softmax", {"mp"}, {"s2"}, {Attr("axis", int64_t{-1})}, "softmax_mp");
  b.Output("s1").Output("s2");
  auto p = PlanAll(b, Precision::kFp16);
  const Plan& plan = p.graph.plan;
  const PlanStep* pool = StepOf(plan, "maxpool");
  REQUIRE(pool->launch.op);
  CHECK(pool < StepOf(plan, "softmax_c"));
  CHECK(pool->launch.op->output_layout == cg::Layout::kNchw);
  CHECK(TransposeSteps(plan) == std::vector<std::string>{"x_fp16.to_nhwc", "c.to_nchw"});
}
