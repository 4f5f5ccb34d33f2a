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
  // No transpose: the input's cast writes NHWC for the first convolution, and the chain keeps
  // NHWC (before channels-last pooling it had 3: around the MaxPool and before the
  // GlobalAveragePool; before the fused input cast, 1 more).
  CHECK(TransposeSteps(plan).empty());
  CHECK(p.graph.stats.at("layout_transposes") == 0);
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

TEST_CASE("fp16: a resnet-like trunk has no transpose", "[lowering][layout]") {
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
  // Before channels-last pooling: 4 (input; MaxPool in and out; GlobalAveragePool in); before
  // the input cast wrote NHWC: 1 (the input's).
  CHECK(TransposeSteps(p.graph.plan).empty());
  CHECK(p.graph.stats.at("nhwc_pool_kernels") == 2);
}

TEST_CASE("fp16: a pool read in NCHW reads its NHWC input and writes NCHW itself",
          "[lowering][layout]") {
  // Before, c was transposed for the pool. Now the kernel reads c as NHWC and writes its result
  // NCHW for the Softmax: no transpose at all.
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
  CHECK(TransposeSteps(plan).empty());
}

TEST_CASE("fp16: a pool between an NCHW op and a convolution writes NHWC itself",
          "[lowering][layout]") {
  // Softmax has NCHW kernels only; the MaxPool after it writes NHWC for the convolution, where a
  // transpose used to sit.
  ModelBuilder b(17, 8);
  b.Input("x", {1, 4, 8, 8});
  Weight(b, "W", {6, 4, 1, 1}, 23);
  b.Node("Softmax", {"x"}, {"sm"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Node("MaxPool", {"sm"}, {"mp"},
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
  // The convolution's NHWC result is read by the output's cast, which writes NCHW: no
  // transpose (before the fused output cast: y_fp16.to_nchw).
  CHECK(TransposeSteps(plan).empty());
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
  CHECK(TransposeSteps(plan) == std::vector<std::string>{"c.to_nchw"});
}

namespace {

// conv -> HardSwish -> squeeze-and-excitation (global pool, 1x1 convolutions, HardSigmoid,
// x * s) -> conv, then a per-channel scale and shift by [C, 1, 1] / [1, C, 1, 1] constants
// (Mul, Add, Sub, Div), the shapes exporters give folded normalizations.
ModelBuilder SeBlock() {
  ModelBuilder b(17, 8);
  b.Input("x", {1, 3, 12, 12});
  Weight(b, "W1", {8, 3, 3, 3}, 31);
  Weight(b, "Wsq", {4, 8, 1, 1}, 32);
  Weight(b, "Wex", {8, 4, 1, 1}, 33);
  Weight(b, "W2", {8, 8, 1, 1}, 34);
  Weight(b, "scale", {8, 1, 1}, 35);
  Weight(b, "shift", {1, 8, 1, 1}, 36);
  Weight(b, "W3", {8, 8, 3, 3}, 37);
  b.Node("Conv", {"x", "W1"}, {"c1"}, {kPads1}, "conv1");
  b.Node("HardSwish", {"c1"}, {"h"}, {}, "hswish");
  b.Node("GlobalAveragePool", {"h"}, {"gap"}, {}, "gap");
  b.Node("Conv", {"gap", "Wsq"}, {"sq"}, {}, "squeeze");
  b.Node("Relu", {"sq"}, {"sqr"}, {}, "squeeze_relu");
  b.Node("Conv", {"sqr", "Wex"}, {"ex"}, {}, "excite");
  b.Node("HardSigmoid", {"ex"}, {"s"}, {}, "gate");
  b.Node("Mul", {"h", "s"}, {"se"}, {}, "se_mul");
  b.Node("Conv", {"se", "W2"}, {"c2"}, {}, "conv2");
  b.Node("Mul", {"c2", "scale"}, {"m"}, {}, "scale");
  b.Node("Add", {"m", "shift"}, {"a"}, {}, "shift");
  b.Node("Conv", {"a", "W3"}, {"y"}, {kPads1}, "conv3");
  b.Output("y");
  return b;
}

}  // namespace

TEST_CASE("fp16: a squeeze-and-excitation block and a channel scale stay NHWC",
          "[lowering][layout]") {
  auto p = PlanAll(SeBlock(), Precision::kFp16);
  const Plan& plan = p.graph.plan;
  // Before: 6 (the input; h to NCHW for x * s and the product back; c2 to NCHW for the scale
  // and shift, and back for conv3; the result back to NCHW for the output's cast).
  CHECK(TransposeSteps(plan).empty());
  CHECK(p.graph.stats.at("layout_transposes") == 0);
  const PlanStep* mul = StepOf(plan, "se_mul");
  REQUIRE(mul->launch.fused);
  const auto& g = *mul->launch.fused;
  // h read NHWC as the HardSwish group wrote it, s [1, 8, 1, 1] as its one buffer.
  CHECK(g.input_layouts == std::vector<cg::Layout>{cg::Layout::kNhwc, cg::Layout::kNchw});
  CHECK(g.output_layouts == std::vector<cg::Layout>{cg::Layout::kNhwc});
  CHECK(mul->launch.inputs[0] == StepOf(plan, "hswish")->launch.outputs[0]);
  CHECK(plan.buffers[mul->launch.inputs[0]].layout == fb::TensorLayout::NHWC);
  CHECK(StepOf(plan, "conv2")->conv.x == mul->launch.outputs[0]);
  const PlanStep* shift = StepOf(plan, "shift");
  REQUIRE(shift == StepOf(plan, "scale"));  // Mul and Add: one group
  CHECK(shift->launch.fused->output_layouts == std::vector<cg::Layout>{cg::Layout::kNhwc});
  CHECK(StepOf(plan, "conv3")->conv.x == shift->launch.outputs[0]);
  // The gate's dims stay logical: the kernel gets strides from the layouts.
  CHECK(g.inputs[0].dims == std::vector<int64_t>{1, 8, 12, 12});
}

TEST_CASE("fp32 and tf32: the SE block has no transpose but the tf32 input's",
          "[lowering][layout]") {
  auto fp32 = PlanAll(SeBlock(), Precision::kFp32);
  CHECK(TransposeSteps(fp32.graph.plan).empty());
  for (const auto& s : fp32.graph.plan.steps) {
    if (!s.launch.fused) continue;
    for (auto l : s.launch.fused->input_layouts) CHECK(l == cg::Layout::kNchw);
    for (auto l : s.launch.fused->output_layouts) CHECK(l == cg::Layout::kNchw);
  }
  // tf32 keeps fp32 storage: no cast to fuse the input's layout change into, and the program
  // output of conv3 is transposed by the step after it (before: 6, as at fp16).
  auto tf32 = PlanAll(SeBlock(), Precision::kTf32);
  CHECK(TransposeSteps(tf32.graph.plan) == std::vector<std::string>{"x.to_nhwc", "y.to_nchw"});
}

namespace {

// An FPN neck: two strides, the coarse map upsampled (nearest) and added to the fine one,
// both upsampled to the finest (nearest, bilinear) and concatenated on channels for the head.
ModelBuilder Fpn() {
  ModelBuilder b(17, 8);
  b.Input("x", {1, 3, 16, 16});
  b.Initializer("up2", {4}, {1.f, 1.f, 2.f, 2.f});
  Weight(b, "W1", {8, 3, 3, 3}, 41);
  Weight(b, "W2", {8, 8, 3, 3}, 42);
  Weight(b, "W3", {8, 8, 3, 3}, 43);
  Weight(b, "Wp", {6, 8, 3, 3}, 44);
  Weight(b, "Wh", {2, 14, 1, 1}, 45);
  const Attr s2("strides", std::vector<int64_t>{2, 2});
  b.Node("Conv", {"x", "W1"}, {"f1"}, {kPads1, s2}, "conv_f1");                     // 8x8
  b.Node("Conv", {"f1", "W2"}, {"f2"}, {kPads1, s2}, "conv_f2");                    // 4x4
  b.Node("Resize", {"f2", "", "up2"}, {"u2"}, {Attr("mode", "nearest")}, "up_f2");  // 8x8
  b.Node("Add", {"f1", "u2"}, {"m1"}, {}, "merge");
  b.Node("Conv", {"m1", "W3"}, {"p1"}, {kPads1}, "smooth");
  b.Node("Resize", {"p1", "", "up2"}, {"u1"}, {Attr("mode", "linear")}, "up_p1");  // 16x16
  b.Node("Conv", {"u1", "Wp"}, {"q"}, {kPads1}, "conv_q");
  b.Node("Resize", {"f1", "", "up2"}, {"u0"}, {Attr("mode", "nearest")}, "up_f1");  // 16x16
  b.Node("Concat", {"q", "u0"}, {"cat"}, {Attr("axis", int64_t{1})}, "concat");
  b.Node("Conv", {"cat", "Wh"}, {"y"}, {}, "head");
  b.Output("y");
  return b;
}

}  // namespace

TEST_CASE("fp16: an FPN's Resize and Concat keep NHWC", "[lowering][layout]") {
  auto p = PlanAll(Fpn(), Precision::kFp16);
  const Plan& plan = p.graph.plan;
  // Before: 9 (the input and the output; f1, f2, p1 and q to NCHW for the resizes and the
  // concatenation; m1, u1 and the concatenation back to NHWC).
  CHECK(TransposeSteps(plan).empty());
  CHECK(p.graph.stats.at("nhwc_op_kernels") == 4);
  for (const char* node : {"up_f2", "up_p1", "up_f1", "concat"}) {
    INFO(node);
    const PlanStep* s = StepOf(plan, node);
    REQUIRE(s->launch.op);
    CHECK(s->launch.op->input_layout == cg::Layout::kNhwc);
    CHECK(s->launch.op->output_layout == cg::Layout::kNhwc);
  }
  const PlanStep* cat = StepOf(plan, "concat");
  CHECK(cat->launch.inputs[0] == StepOf(plan, "conv_q")->conv.y);
  CHECK(cat->launch.inputs[1] == StepOf(plan, "up_f1")->launch.outputs[0]);
  CHECK(StepOf(plan, "head")->conv.x == cat->launch.outputs[0]);
}

TEST_CASE("fp32: the FPN is NCHW with no transpose", "[lowering][layout]") {
  auto p = PlanAll(Fpn(), Precision::kFp32);
  CHECK(TransposeSteps(p.graph.plan).empty());
  CHECK(p.graph.stats.at("nhwc_op_kernels") == 0);
}

TEST_CASE("fp16: a Concat of an NHWC and an NCHW input transposes one, not two",
          "[lowering][layout]") {
  // q is a convolution's (NHWC), sm a Softmax's (NCHW only), and a convolution reads the
  // result. NCHW concatenation used to cost q.to_nchw and cat.to_nhwc (4 with the input's and
  // the output's); now sm alone moves.
  ModelBuilder b(17, 8);
  b.Input("x", {1, 4, 6, 6});
  Weight(b, "W", {4, 4, 3, 3}, 46);
  Weight(b, "Wh", {3, 8, 1, 1}, 47);
  b.Node("Conv", {"x", "W"}, {"q"}, {kPads1}, "conv");
  b.Node("Softmax", {"x"}, {"sm"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Node("Concat", {"q", "sm"}, {"cat"}, {Attr("axis", int64_t{1})}, "concat");
  b.Node("Conv", {"cat", "Wh"}, {"y"}, {}, "head");
  b.Output("y");
  auto p = PlanAll(b, Precision::kFp16);
  CHECK(TransposeSteps(p.graph.plan) == std::vector<std::string>{"sm.to_nhwc"});
}

TEST_CASE("fp16: Pad between convolutions stays NHWC", "[lowering][layout]") {
  ModelBuilder b(17, 8);
  b.Input("x", {1, 4, 8, 8});
  b.IntInitializer("pads", {0, 0, 1, 2, 0, 0, 2, 1});
  Weight(b, "W1", {6, 4, 3, 3}, 48);
  Weight(b, "W2", {5, 6, 3, 3}, 49);
  b.Node("Conv", {"x", "W1"}, {"c"}, {kPads1}, "conv1");
  b.Node("Relu", {"c"}, {"r"}, {}, "relu");
  b.Node("Pad", {"r", "pads"}, {"pd"}, {Attr("mode", "reflect")}, "pad");
  b.Node("Conv", {"pd", "W2"}, {"y"}, {}, "conv2");
  b.Output("y");
  for (Precision precision : {Precision::kFp16, Precision::kBf16}) {
    auto p = PlanAll(b, precision);
    const Plan& plan = p.graph.plan;
    // Before: 4 (the input and the output; r to NCHW for the Pad and its result back).
    CHECK(TransposeSteps(plan).empty());
    const PlanStep* pad = StepOf(plan, "pad");
    REQUIRE(pad->launch.op);
    CHECK(pad->launch.op->input_layout == cg::Layout::kNhwc);
    CHECK(pad->launch.op->output_layout == cg::Layout::kNhwc);
    CHECK(StepOf(plan, "conv2")->conv.x == pad->launch.outputs[0]);
  }
  CHECK(TransposeSteps(PlanAll(b, Precision::kFp32).graph.plan).empty());
}

TEST_CASE("fp16: the program input's cast writes the layouts its readers need",
          "[lowering][layout]") {
  // x feeds a convolution (NHWC) and a Softmax (NCHW): the cast writes both, where it used to
  // write NCHW and a transpose made the NHWC copy (and another moved c back for its cast).
  ModelBuilder b(17, 8);
  b.Input("x", {2, 3, 6, 6});
  Weight(b, "W", {4, 3, 3, 3}, 50);
  b.Node("Conv", {"x", "W"}, {"c"}, {kPads1}, "conv");
  b.Node("Softmax", {"x"}, {"sm"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Output("c").Output("sm");
  auto p = PlanAll(b, Precision::kFp16);
  const Plan& plan = p.graph.plan;
  CHECK(TransposeSteps(plan).empty());
  const PlanStep* cast = StepOf(plan, "cast_in_x");
  REQUIRE(cast->launch.fused);
  CHECK(cast->launch.fused->input_layouts == std::vector<cg::Layout>{cg::Layout::kNchw});
  // Threads walk the input's order (NCHW first): its loads are contiguous, the NHWC stores not.
  CHECK(cast->launch.fused->output_layouts ==
        std::vector<cg::Layout>{cg::Layout::kNchw, cg::Layout::kNhwc});
  CHECK(StepOf(plan, "conv")->conv.x == cast->launch.outputs[1]);
  CHECK(plan.buffers[cast->launch.outputs[1]].layout == fb::TensorLayout::NHWC);
  CHECK(StepOf(plan, "softmax")->launch.inputs[0] == cast->launch.outputs[0]);
  // The output's cast reads the convolution's NHWC result and writes the NCHW program output.
  const PlanStep* out = StepOf(plan, "cast_out_c");
  CHECK(out->launch.fused->input_layouts == std::vector<cg::Layout>{cg::Layout::kNhwc});
  CHECK(out->launch.fused->output_layouts == std::vector<cg::Layout>{cg::Layout::kNchw});
  CHECK(plan.buffers[out->launch.outputs[0]].kind == fb::BufferKind::Output);
}

TEST_CASE("fp16: a group whose reader needs NCHW writes NCHW itself", "[lowering][layout]") {
  // A view of NHWC data needs NCHW: the Sigmoid group reads the convolution's NHWC result and
  // writes NCHW for the Reshape (before: r was written NHWC and transposed).
  ModelBuilder b(17, 8);
  b.Input("x", {1, 3, 6, 6});
  Weight(b, "W", {4, 3, 3, 3}, 51);
  b.IntInitializer("shape", {1, 4, 36});
  b.Node("Conv", {"x", "W"}, {"c"}, {kPads1}, "conv");
  b.Node("Sigmoid", {"c"}, {"r"}, {}, "sigmoid");
  b.Node("Reshape", {"r", "shape"}, {"v"}, {}, "flatten");
  b.Node("Softmax", {"v"}, {"y"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Output("y");
  auto p = PlanAll(b, Precision::kFp16);
  CHECK(TransposeSteps(p.graph.plan).empty());
  const PlanStep* sigmoid = StepOf(p.graph.plan, "sigmoid");
  REQUIRE(sigmoid->launch.fused);
  CHECK(sigmoid->launch.fused->input_layouts == std::vector<cg::Layout>{cg::Layout::kNhwc});
  CHECK(sigmoid->launch.fused->output_layouts == std::vector<cg::Layout>{cg::Layout::kNchw});
}
