// Lowering decisions on small models: library calls with fused epilogues, fused elementwise
// kernels, views as aliases, BatchNorm folding against reference arithmetic, precision casts
// and NHWC convolutions.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "codegen/reference_conversions.h"
#include "cuda/compile/packing.h"
#include "plan_helpers.h"
#include "test_data.h"

using namespace ortc::backends::cuda;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::cuda::PlanAll;
using ortc::test::cuda::StepsWithSource;

namespace {

std::vector<float> WeightFloats(const Plan& plan, int buffer) {
  REQUIRE(buffer >= 0);
  const auto& b = plan.buffers[buffer];
  REQUIRE(b.kind == fb::BufferKind::Weight);
  auto bytes = plan.weights[b.weight_slot].bytes.ReadAll();
  REQUIRE(bytes.ok());
  std::vector<float> out((*bytes)->size() / 4);
  std::memcpy(out.data(), (*bytes)->data(), out.size() * 4);
  return out;
}

std::string WeightBytes(const Plan& plan, int buffer) {
  const auto& b = plan.buffers[buffer];
  REQUIRE(b.kind == fb::BufferKind::Weight);
  auto bytes = plan.weights[b.weight_slot].bytes.ReadAll();
  REQUIRE(bytes.ok());
  return **bytes;
}

ModelBuilder ConvBnRelu(const std::vector<float>& w, const std::vector<float>& bias,
                        const std::vector<float>& scale, const std::vector<float>& shift,
                        const std::vector<float>& mean, const std::vector<float>& var) {
  ModelBuilder b(17, 8);
  b.Input("x", {1, 3, 8, 8});
  b.Initializer("W", {4, 3, 3, 3}, w).Initializer("B", {4}, bias);
  b.Initializer("scale", {4}, scale).Initializer("shift", {4}, shift);
  b.Initializer("mean", {4}, mean).Initializer("var", {4}, var);
  b.Node("Conv", {"x", "W", "B"}, {"c"}, {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})}, "conv");
  b.Node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"n"},
         {Attr("epsilon", 1e-5f)}, "bn");
  b.Node("Relu", {"n"}, {"y"}, {}, "relu");
  b.Output("y");
  return b;
}

}  // namespace

TEST_CASE("conv + batchnorm + relu lowers to one ConvCall with Relu and the BN folded",
          "[lowering]") {
  const auto w = ortc::test::RandomFloats(1, 108);
  const std::vector<float> bias = {0.1f, -0.2f, 0.3f, 0.0f}, scale = {1.5f, 0.5f, -1.0f, 2.0f},
                           shift = {0.0f, 1.0f, -1.0f, 0.25f}, mean = {0.2f, -0.1f, 0.0f, 1.0f},
                           var = {1.0f, 0.25f, 4.0f, 0.5f};
  auto p = PlanAll(ConvBnRelu(w, bias, scale, shift, mean, var));
  const Plan& plan = p.graph.plan;
  REQUIRE(plan.steps.size() == 1);
  const auto& s = plan.steps[0];
  REQUIRE(s.kind == StepKind::kConv);
  CHECK(s.conv.activation == fb::Activation::Relu);
  CHECK(StepsWithSource(plan, "bn") == 0);
  CHECK(s.sources == std::vector<std::string>{"conv", "relu"});
  CHECK(s.conv.pads == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(s.conv.x_dims == std::vector<int64_t>{1, 3, 8, 8});
  CHECK(s.conv.y_dims == std::vector<int64_t>{1, 4, 8, 8});
  CHECK(plan.buffers[s.conv.x].kind == fb::BufferKind::Input);
  CHECK(plan.buffers[s.conv.y].kind == fb::BufferKind::Output);
  CHECK(p.graph.stats.at("batchnorms_folded") == 1);

  // Folded weights against the BN formula evaluated in double.
  const auto fw = WeightFloats(plan, s.conv.w);
  const auto fb_ = WeightFloats(plan, s.conv.bias);
  REQUIRE(fw.size() == 108);
  REQUIRE(fb_.size() == 4);
  for (int k = 0; k < 4; ++k) {
    const double f = scale[k] / std::sqrt(static_cast<double>(var[k]) + 1e-5);
    for (int i = 0; i < 27; ++i) CHECK(fw[k * 27 + i] == Approx(w[k * 27 + i] * f).epsilon(1e-6));
    CHECK(fb_[k] == Approx((bias[k] - mean[k]) * f + shift[k]).epsilon(1e-6).margin(1e-7));
  }
}

TEST_CASE("a residual Add becomes the conv's z input", "[lowering]") {
  ModelBuilder b(17, 8);
  b.Input("x", {1, 4, 6, 6}).Input("r", {1, 4, 6, 6});
  b.Initializer("W", {4, 4, 1, 1}, std::vector<float>(16, 0.25f));
  b.Node("Conv", {"x", "W"}, {"c"}, {}, "conv").Node("Add", {"c", "r"}, {"a"}, {}, "add");
  b.Node("Relu", {"a"}, {"y"}, {}, "relu").Output("y");
  auto p = PlanAll(b);
  const Plan& plan = p.graph.plan;
  REQUIRE(plan.steps.size() == 1);
  const auto& c = plan.steps[0].conv;
  CHECK(plan.steps[0].kind == StepKind::kConv);
  REQUIRE(c.z >= 0);
  CHECK(plan.buffers[c.z].name == "r");
  CHECK(c.alpha2 == 1.0f);
  CHECK(c.bias == -1);
  CHECK(c.activation == fb::Activation::Relu);
}

TEST_CASE("conv + bias + Clip [0, 6] (ReLU6) lowers to one ConvCall with a Clip activation",
          "[lowering]") {
  for (int64_t opset : {6, 13}) {
    for (float lo : {0.f, -1.f}) {
      INFO("opset " << opset << ", lower bound " << lo);
      ModelBuilder b(opset, 8);
      b.Input("x", {1, 3, 6, 6});
      b.Initializer("W", {4, 3, 3, 3}, std::vector<float>(108, 0.1f));
      b.Initializer("B", {4}, {0.1f, 0.2f, 0.3f, 0.4f});
      b.Node("Conv", {"x", "W", "B"}, {"c"}, {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})},
             "conv");
      if (opset < 11) {
        b.Node("Clip", {"c"}, {"y"}, {Attr("min", lo), Attr("max", 6.f)}, "relu6");
      } else {
        b.Initializer("lo", {}, {lo}).Initializer("hi", {}, {6.f});
        b.Node("Clip", {"c", "lo", "hi"}, {"y"}, {}, "relu6");
      }
      b.Output("y");
      auto p = PlanAll(b);
      const Plan& plan = p.graph.plan;
      if (lo == 0.f) {
        // The clamp runs in the convolution's epilogue: no kernel, one library call.
        REQUIRE(plan.steps.size() == 1);
        CHECK(plan.steps[0].conv.activation == fb::Activation::Clip);
        CHECK(plan.steps[0].conv.clip_min == 0.f);
        CHECK(plan.steps[0].conv.clip_max == 6.f);
        CHECK(plan.steps[0].sources == std::vector<std::string>{"conv", "relu6"});
      } else {
        // Another lower bound is not a clipped ReLU: the Clip stays a kernel.
        REQUIRE(plan.steps.size() == 2);
        CHECK(plan.steps[0].conv.activation == fb::Activation::None);
        CHECK(plan.steps[1].kind == StepKind::kLaunch);
      }
    }
  }
}

TEST_CASE("matmul + bias add + tanh gelu lowers to one GemmCall with a Gelu epilogue",
          "[lowering]") {
  ModelBuilder b(20, 9);
  b.Input("x", {2, 5, 8});
  b.Initializer("W", {8, 6}, ortc::test::RandomFloats(2, 48));
  b.Initializer("bias", {6}, {1, 2, 3, 4, 5, 6});
  b.Node("MatMul", {"x", "W"}, {"m"}, {}, "mm").Node("Add", {"m", "bias"}, {"a"}, {}, "add");
  b.Node("Gelu", {"a"}, {"y"}, {Attr("approximate", std::string("tanh"))}, "gelu").Output("y");
  auto p = PlanAll(b);
  const Plan& plan = p.graph.plan;
  REQUIRE(plan.steps.size() == 1);
  const auto& s = plan.steps[0];
  REQUIRE(s.kind == StepKind::kGemm);
  CHECK(s.gemm.epilogue == fb::Activation::Gelu);
  // [2, 5, 8] @ [8, 6]: one weight matrix, so one GEMM over all 10 rows rather than a batch.
  CHECK(s.gemm.m == 10);
  CHECK(s.gemm.n == 6);
  CHECK(s.gemm.k == 8);
  CHECK(s.gemm.batch == 1);
  CHECK(s.gemm.stride_b == 0);
  REQUIRE(s.gemm.bias >= 0);
  CHECK(WeightFloats(plan, s.gemm.bias) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(s.sources == std::vector<std::string>{"mm", "add", "gelu"});
}

TEST_CASE("matmul + bias + residual add lowers to one GemmCall with the residual as C",
          "[lowering]") {
  ModelBuilder b(20, 9);
  b.Input("x", {1, 4, 8});
  b.Input("h", {1, 4, 6});
  b.Initializer("W", {8, 6}, ortc::test::RandomFloats(2, 48));
  b.Initializer("bias", {6}, {1, 2, 3, 4, 5, 6});
  b.Node("MatMul", {"x", "W"}, {"m"}, {}, "mm").Node("Add", {"m", "bias"}, {"a"}, {}, "add");
  b.Node("Add", {"h", "a"}, {"y"}, {}, "residual").Output("y");
  auto p = PlanAll(b);
  const Plan& plan = p.graph.plan;
  REQUIRE(plan.steps.size() == 1);
  const auto& s = plan.steps[0];
  REQUIRE(s.kind == StepKind::kGemm);
  CHECK(s.gemm.m == 4);
  REQUIRE(s.gemm.c >= 0);
  CHECK(plan.buffers[s.gemm.c].name == "h");
  CHECK(s.gemm.beta == 1.0f);
  CHECK(s.gemm.bias >= 0);
  CHECK(s.gemm.epilogue == fb::Activation::None);
  CHECK(s.sources == std::vector<std::string>{"mm", "add", "residual"});
}

TEST_CASE("a residual after an activation stays a kernel: the epilogue adds C first",
          "[lowering]") {
  ModelBuilder b(20, 9);
  b.Input("x", {4, 8});
  b.Input("h", {4, 6});
  b.Initializer("W", {8, 6}, ortc::test::RandomFloats(2, 48));
  b.Node("MatMul", {"x", "W"}, {"m"}, {}, "mm").Node("Relu", {"m"}, {"r"}, {}, "relu");
  b.Node("Add", {"h", "r"}, {"y"}, {}, "residual").Output("y");
  auto p = PlanAll(b);
  const Plan& plan = p.graph.plan;
  REQUIRE(plan.steps.size() == 2);
  CHECK(plan.steps[0].kind == StepKind::kGemm);
  CHECK(plan.steps[0].gemm.c < 0);
  CHECK(plan.steps[1].kind == StepKind::kLaunch);
}

TEST_CASE("Gemm with transB and a [N] C lowers with C as the bias", "[lowering]") {
  ModelBuilder b(17, 8);
  b.Input("x", {3, 4});
  b.Initializer("W", {5, 4}, ortc::test::RandomFloats(3, 20));
  b.Initializer("C", {5}, {1, 1, 1, 1, 1});
  b.Node("Gemm", {"x", "W", "C"}, {"g"}, {Attr("transB", int64_t{1}), Attr("alpha", 0.5f)}, "gemm");
  b.Node("Relu", {"g"}, {"y"}, {}, "relu").Output("y");
  auto p = PlanAll(b);
  const Plan& plan = p.graph.plan;
  REQUIRE(plan.steps.size() == 1);
  const auto& g = plan.steps[0].gemm;
  CHECK(g.trans_b);
  CHECK_FALSE(g.trans_a);
  CHECK(g.alpha == 0.5f);
  CHECK(g.m == 3);
  CHECK(g.n == 5);
  CHECK(g.k == 4);
  CHECK(g.bias >= 0);
  CHECK(g.c == -1);
  CHECK(g.epilogue == fb::Activation::Relu);
}

TEST_CASE("add -> mul -> sigmoid becomes one fused kernel", "[lowering]") {
  ModelBuilder b(17, 8);
  b.Input("x", {2, 3, 4}).Input("z", {2, 3, 4});
  b.Initializer("two", {1}, {2.0f});
  b.Node("Add", {"x", "z"}, {"a"}, {}, "add").Node("Mul", {"a", "two"}, {"m"}, {}, "mul");
  b.Node("Sigmoid", {"m"}, {"y"}, {}, "sig").Output("y");
  auto p = PlanAll(b);
  const Plan& plan = p.graph.plan;
  REQUIRE(plan.steps.size() == 1);
  const auto& s = plan.steps[0];
  REQUIRE(s.kind == StepKind::kLaunch);
  REQUIRE(s.launch.fused);
  CHECK(s.launch.fused->ops.size() == 3);
  CHECK(s.launch.fused->outputs == std::vector<int>{2});
  CHECK(s.launch.outputs.size() == 1);
  CHECK(plan.buffers[s.launch.outputs[0]].kind == fb::BufferKind::Output);
  CHECK(plan.kernels.size() == 1);
  CHECK(p.graph.kernels.size() == 1);
  CHECK(plan.arena_bytes == 0);  // nothing in between is materialized
}

TEST_CASE("an intermediate read outside its fused group becomes a group output", "[lowering]") {
  ModelBuilder b(17, 8);
  b.Input("x", {1, 4, 5, 5});
  b.Initializer("W", {4, 4, 1, 1}, std::vector<float>(16, 0.5f));
  b.Node("Sigmoid", {"x"}, {"s"}, {}, "sig").Node("Neg", {"s"}, {"n"}, {}, "neg");
  b.Node("Conv", {"s", "W"}, {"c"}, {}, "conv").Node("Add", {"c", "n"}, {"y"}, {}, "add");
  b.Output("y");
  auto p = PlanAll(b);
  const Plan& plan = p.graph.plan;
  // sigmoid+neg fused (s read by the conv: an output), conv with the Add's n as residual z.
  REQUIRE(plan.steps.size() == 2);
  REQUIRE(plan.steps[0].kind == StepKind::kLaunch);
  CHECK(plan.steps[0].launch.fused->ops.size() == 2);
  CHECK(plan.steps[0].launch.outputs.size() == 2);
  REQUIRE(plan.steps[1].kind == StepKind::kConv);
  CHECK(plan.steps[1].conv.z >= 0);
}

TEST_CASE("reshape is an alias, and a reshape producing a graph output is a copy", "[lowering]") {
  ModelBuilder b(17, 8);
  b.Input("x", {2, 6});
  b.IntInitializer("shape", {3, 4}).IntInitializer("flat", {12});
  b.Node("Relu", {"x"}, {"r"}, {}, "relu").Node("Reshape", {"r", "shape"}, {"v"}, {}, "reshape");
  b.Node("Sigmoid", {"v"}, {"s"}, {}, "sig");
  b.Node("Reshape", {"s", "flat"}, {"y"}, {}, "to_output").Output("y");
  auto p = PlanAll(b);
  const Plan& plan = p.graph.plan;
  int aliases = 0;
  for (const auto& buf : plan.buffers) {
    if (buf.kind != fb::BufferKind::Alias) continue;
    aliases++;
    CHECK(buf.name == "v");
    REQUIRE(buf.alias_of >= 0);
    CHECK(plan.buffers[buf.alias_of].name == "r");
    CHECK(buf.dims == std::vector<int64_t>{3, 4});
  }
  CHECK(aliases == 1);
  REQUIRE(plan.steps.size() == 3);
  CHECK(plan.steps[2].kind == StepKind::kCopy);
  CHECK(plan.buffers[plan.steps[2].copy.dst].kind == fb::BufferKind::Output);
  CHECK(plan.steps[2].copy.bytes == 48);
  CHECK(StepsWithSource(plan, "reshape") == 0);  // no step: the view costs nothing
}

TEST_CASE("fp16 converts weights, keeps the model's types at the boundary, packs KRSC",
          "[lowering][precision]") {
  const auto w = ortc::test::RandomFloats(4, 4 * 3 * 3 * 3);
  const auto w2 = ortc::test::RandomFloats(5, 4 * 4 * 3 * 3);
  ModelBuilder b(17, 8);
  b.Input("x", {1, 3, 8, 8});
  b.Initializer("W", {4, 3, 3, 3}, w).Initializer("W2", {4, 4, 3, 3}, w2);
  b.Initializer("B", {4}, {0.5f, 0.25f, -1.0f, 3.0f});
  const Attr pads("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.Node("Conv", {"x", "W", "B"}, {"c"}, {pads}, "conv1").Node("Relu", {"c"}, {"r"}, {}, "relu");
  b.Node("Conv", {"r", "W2"}, {"y"}, {pads}, "conv2").Output("y");
  auto p = PlanAll(b, Precision::kFp16);
  const Plan& plan = p.graph.plan;
  CHECK(plan.precision == fb::Precision::FP16);
  CHECK(plan.conv_layout == fb::TensorLayout::NHWC);
  // The program's interface keeps float32.
  CHECK(plan.buffers[plan.inputs[0]].dtype == onnx::TensorProto::FLOAT);
  CHECK(plan.buffers[plan.outputs[0]].dtype == onnx::TensorProto::FLOAT);
  CHECK(p.graph.inputs[0].dtype == onnx::TensorProto::FLOAT);
  std::vector<const PlanStep*> convs;
  for (const auto& s : plan.steps) {
    if (s.kind == StepKind::kConv) convs.push_back(&s);
  }
  REQUIRE(convs.size() == 2);
  // conv1 -> conv2 directly in NHWC: no transpose between them.
  CHECK(convs[1]->conv.x == convs[0]->conv.y);
  for (const auto* c : convs) {
    CHECK(c->conv.layout == fb::TensorLayout::NHWC);
    CHECK(c->conv.compute_dtype == onnx::TensorProto::FLOAT);
    CHECK(plan.buffers[c->conv.x].dtype == onnx::TensorProto::FLOAT16);
    CHECK(plan.buffers[c->conv.x].layout == fb::TensorLayout::NHWC);
  }
  // Filter bytes: fp16 by _Float16, then KRSC by index loops.
  const std::string packed = WeightBytes(plan, convs[0]->conv.w);
  REQUIRE(packed.size() == w.size() * 2);
  for (int k = 0; k < 4; ++k)
    for (int c = 0; c < 3; ++c)
      for (int rs = 0; rs < 9; ++rs) {
        uint16_t got;
        std::memcpy(&got, packed.data() + 2 * ((k * 9 + rs) * 3 + c), 2);
        REQUIRE(got == ortc::test::cuda::RefFloatToHalf(w[(k * 3 + c) * 9 + rs]));
      }
  const std::string bias = WeightBytes(plan, convs[0]->conv.bias);
  uint16_t b3;
  std::memcpy(&b3, bias.data() + 6, 2);
  CHECK(b3 == ortc::test::cuda::RefFloatToHalf(3.0f));
  // Casts at both ends, each changing the layout as it converts: the input's writes NHWC for
  // conv1, the output's reads conv2's NHWC result and writes NCHW.
  int casts = 0;
  for (const auto& s : plan.steps) {
    for (const auto& src : s.sources) casts += src.rfind("cast_", 0) == 0;
  }
  CHECK(casts == 2);
  CHECK(p.graph.stats.at("layout_transposes") == 0);  // 2 before the casts changed layouts
}

TEST_CASE("exact (erf) gelu after a matmul stays a generated kernel", "[lowering]") {
  // cuBLASLt's GELU epilogue computes the tanh approximation, which differs from erf-GELU by
  // up to about 1e-3: fusing it would change the model's results.
  ModelBuilder b(20, 9);
  b.Input("x", {2, 5, 8});
  b.Initializer("W", {8, 6}, ortc::test::RandomFloats(3, 48));
  b.Node("MatMul", {"x", "W"}, {"m"}, {}, "mm");
  b.Node("Gelu", {"m"}, {"y"}, {}, "gelu").Output("y");
  auto p = PlanAll(b);
  const Plan& plan = p.graph.plan;
  REQUIRE(plan.steps.size() == 2);
  CHECK(plan.steps[0].kind == StepKind::kGemm);
  CHECK(plan.steps[0].gemm.epilogue == fb::Activation::None);
  CHECK(plan.steps[1].kind == StepKind::kLaunch);
  CHECK(plan.steps[1].sources == std::vector<std::string>{"gelu"});
}
