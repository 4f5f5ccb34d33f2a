// Transformer patterns in CUDA lowering: attention recognised (the one-kernel FusedAttention
// launch with the head transposes absorbed, or by default GEMMs around one softmax kernel), GELU
// recognised in any arrangement (and not when a constant is off), the LayerNorm decomposition
// recognised, Add + LayerNorm fused.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cuda/compile/codegen/kernel_text.h"
#include "plan_helpers.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

namespace cg = backends::cuda::codegen;
using backends::cuda::Plan;
using backends::cuda::StepKind;

int Launches(const Plan& plan, const std::string& op_type) {
  int n = 0;
  for (const auto& s : plan.steps)
    n += s.kind == StepKind::kLaunch && s.launch.op && s.launch.op->op_type == op_type;
  return n;
}

const backends::cuda::PlanStep* FirstLaunch(const Plan& plan, const std::string& op_type) {
  for (const auto& s : plan.steps)
    if (s.kind == StepKind::kLaunch && s.launch.op && s.launch.op->op_type == op_type) return &s;
  return nullptr;
}

// x [1, 8, 16] -> per-head q, k, v ([1, 2, 8, 8] via Reshape + Transpose), scores scaled by
// Div, a [1, 1, 1, 8] additive mask, Softmax, MatMul with v, heads merged back.
ModelBuilder Attention(bool mask, const std::string& scale_op) {
  ModelBuilder b(17);
  b.Input("x", {1, 8, 16});
  if (mask) b.Input("mask", {1, 1, 1, 8});
  b.IntInitializer("split", {1, 8, 2, 8});
  b.IntInitializer("merge", {1, 8, 16});
  b.Initializer("scale", {}, {scale_op == "Div" ? std::sqrt(8.f) : 1 / std::sqrt(8.f)});
  for (const char* t : {"q", "k", "v"}) {
    const std::string n = t;
    b.Initializer("W" + n, {16, 16}, RandomFloats(n[0], 256));
    b.Node("MatMul", {"x", "W" + n}, {n + "_proj"});
    b.Node("Reshape", {n + "_proj", "split"}, {n + "_heads"});
  }
  b.Node("Transpose", {"q_heads"}, {"q"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
  b.Node("Transpose", {"k_heads"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 2, 3, 1})});
  b.Node("Transpose", {"v_heads"}, {"v"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
  b.Node("MatMul", {"q", "kt"}, {"qk"}, {}, "qk");
  b.Node(scale_op, {"qk", "scale"}, {"scaled"});
  std::string scores = "scaled";
  if (mask) {
    b.Node("Add", {"scaled", "mask"}, {"masked"});
    scores = "masked";
  }
  b.Node("Softmax", {scores}, {"probs"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Node("MatMul", {"probs", "v"}, {"ctx"});
  b.Node("Transpose", {"ctx"}, {"ctx_t"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
  b.Node("Reshape", {"ctx_t", "merge"}, {"y"}).Output("y");
  return b;
}

constexpr auto kFused = backends::cuda::CudaOptions::Attention::kFused;
constexpr auto kFp32 = backends::cuda::Precision::kFp32;

TEST_CASE("attention with head transposes lowers to one FusedAttention launch", "[lowering]") {
  for (const std::string scale_op : {"Div", "Mul"}) {
    INFO(scale_op);
    auto p = PlanAll(Attention(true, scale_op), kFp32, kFused);
    const Plan& plan = p.graph.plan;
    CHECK(p.graph.stats.at("fused_attention") == 1);
    REQUIRE(Launches(plan, "FusedAttention") == 1);
    CHECK(Launches(plan, "Softmax") == 0);
    CHECK(Launches(plan, "Transpose") == 0);  // every head transpose absorbed
    const auto* s = FirstLaunch(plan, "FusedAttention");
    const auto& op = *s->launch.op;
    CHECK(std::fabs(cg::FloatAttr(op, "scale", 0) - 1 / std::sqrt(8.f)) < 1e-7);
    // The three projections merge into one [1, 8, 48] GEMM output; q and k are views of it
    // ([1, 2, 8, 8]: head h of row s at s * 48 + offset + h * 8), K^T's transpose undone.
    CHECK(op.inputs[0].dims == std::vector<int64_t>{1, 8, 48});
    CHECK(cg::IntsAttr(op, "q_shape") == std::vector<int64_t>{1, 2, 8, 8});
    CHECK(cg::IntsAttr(op, "q_strides") == std::vector<int64_t>{0, 8, 48, 1});
    CHECK(cg::IntsAttr(op, "k_strides") == std::vector<int64_t>{0, 8, 48, 1});
    CHECK(cg::IntAttr(op, "q_offset", -1) == 0);
    CHECK(cg::IntAttr(op, "k_offset", -1) == 16);
    CHECK(cg::IntAttr(op, "v_offset", -1) == 32);
    CHECK(cg::IntsAttr(op, "out_perm") == std::vector<int64_t>{0, 2, 1, 3});
    CHECK(Launches(plan, "Reshape") == 0);
    CHECK(op.inputs[3].dims == std::vector<int64_t>{1, 1, 1, 8});  // the mask
    CHECK(op.inputs[4].dtype == 0);                                // no Where condition
    // One merged projection GEMM; the score and context MatMuls are inside the kernel.
    int gemms = 0;
    for (const auto& st : plan.steps) gemms += st.kind == StepKind::kGemm;
    CHECK(gemms == 1);
    CHECK(p.graph.stats.at("projections_merged") == 1);
  }
}

TEST_CASE("attention reads a fused QKV projection's Split outputs as offset views", "[lowering]") {
  // GPT-2's form: one [16, 48] projection, Split into q, k, v, each Reshape + Transpose.
  ModelBuilder b(17);
  b.Input("x", {1, 8, 16});
  b.Initializer("Wqkv", {16, 48}, RandomFloats(9, 768));
  b.IntInitializer("sizes", {16, 16, 16});
  b.IntInitializer("split", {1, 8, 2, 8});
  b.IntInitializer("merge", {1, 8, 16});
  b.Initializer("scale", {}, {std::sqrt(8.f)});
  b.Node("MatMul", {"x", "Wqkv"}, {"qkv"});
  b.Node("Split", {"qkv", "sizes"}, {"q_proj", "k_proj", "v_proj"}, {Attr("axis", int64_t{2})});
  for (const std::string n : {"q", "k", "v"})
    b.Node("Reshape", {n + "_proj", "split"}, {n + "_heads"});
  b.Node("Transpose", {"q_heads"}, {"q"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
  b.Node("Transpose", {"k_heads"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 2, 3, 1})});
  b.Node("Transpose", {"v_heads"}, {"v"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
  // A transpose only a (folded) Shape read: dead once folding is done.
  b.Node("Transpose", {"k_heads"}, {"k_unused"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
  b.Node("MatMul", {"q", "kt"}, {"qk"}).Node("Div", {"qk", "scale"}, {"scaled"});
  b.Node("Softmax", {"scaled"}, {"probs"}, {Attr("axis", int64_t{-1})});
  b.Node("MatMul", {"probs", "v"}, {"ctx"});
  b.Node("Transpose", {"ctx"}, {"ctx_t"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
  b.Node("Reshape", {"ctx_t", "merge"}, {"y"}).Output("y");
  auto p = PlanAll(b, kFp32, kFused);
  const Plan& plan = p.graph.plan;
  CHECK(p.graph.stats.at("dead_ops_removed") == 1);
  REQUIRE(Launches(plan, "FusedAttention") == 1);
  CHECK(Launches(plan, "Split") == 0);
  CHECK(Launches(plan, "Transpose") == 0);
  const auto& op = *FirstLaunch(plan, "FusedAttention")->launch.op;
  for (int i = 0; i < 3; ++i) {
    const std::string n(1, "qkv"[i]);
    CHECK(op.inputs[i].dims == std::vector<int64_t>{1, 8, 48});  // the projection itself
    CHECK(cg::IntAttr(op, n + "_offset", -1) == 16 * i);
    CHECK(cg::IntsAttr(op, n + "_strides") == std::vector<int64_t>{0, 8, 48, 1});
  }
  // The projection GEMM, the attention, and the copy a view that is a program output gets.
  REQUIRE(plan.steps.size() == 3);
  CHECK(plan.steps[2].kind == StepKind::kCopy);
}

TEST_CASE("projections of one activation merge into one GEMM with concatenated weights",
          "[lowering]") {
  // Three [4, n_i] projections (+ bias) of x, read by three outputs: one GemmCall over
  // [4, 2 + 3 + 1] with the weights side by side row by row, the biases end to end, then a Split.
  ModelBuilder b(17);
  b.Input("x", {5, 4});
  const std::vector<int64_t> widths = {2, 3, 1};
  std::vector<std::vector<float>> w(3), bias(3);
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    for (int64_t e = 0; e < 4 * widths[i]; ++e) w[i].push_back(100.f * i + e);
    for (int64_t e = 0; e < widths[i]; ++e) bias[i].push_back(-10.f * i - e);
    b.Initializer("W" + n, {4, widths[i]}, w[i]).Initializer("b" + n, {widths[i]}, bias[i]);
    b.Node("MatMul", {"x", "W" + n}, {"m" + n}).Node("Add", {"m" + n, "b" + n}, {"y" + n});
    b.Output("y" + n);
  }
  auto p = PlanAll(b);
  const Plan& plan = p.graph.plan;
  CHECK(p.graph.stats.at("projections_merged") == 1);
  int gemms = 0;
  const backends::cuda::PlanStep* gemm = nullptr;
  for (const auto& st : plan.steps) {
    if (st.kind != StepKind::kGemm) continue;
    ++gemms;
    gemm = &st;
  }
  REQUIRE(gemms == 1);
  CHECK(gemm->gemm.n == 6);
  CHECK(gemm->gemm.k == 4);
  CHECK(gemm->gemm.bias >= 0);
  std::vector<float> want_w, want_b;
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < 3; ++i)
      for (int64_t e = 0; e < widths[i]; ++e) want_w.push_back(w[i][r * widths[i] + e]);
  for (int i = 0; i < 3; ++i) want_b.insert(want_b.end(), bias[i].begin(), bias[i].end());
  auto floats = [&](int buffer) {
    auto bytes = plan.weights[plan.buffers[buffer].weight_slot].bytes.ReadAll();
    REQUIRE(bytes.ok());
    std::vector<float> out((*bytes)->size() / 4);
    std::memcpy(out.data(), (*bytes)->data(), out.size() * 4);
    return out;
  };
  CHECK(floats(gemm->gemm.b) == want_w);
  CHECK(floats(gemm->gemm.bias) == want_b);
  CHECK(Launches(plan, "Split") == 1);
}

TEST_CASE("attention whose scores are also an output stays unfused", "[lowering]") {
  auto b = Attention(false, "Div");
  b.Output("probs");
  auto p = PlanAll(b);
  CHECK(p.graph.stats.at("fused_attention") == 0);
  CHECK(Launches(p.graph.plan, "Softmax") == 1);
}

// 0.5 * x * (1 + erf(x / sqrt(2))) and the tanh form, written in different operand orders.
ModelBuilder GeluFormula(const std::string& form) {
  ModelBuilder b(17);
  b.Input("x", {4, 8});
  b.Initializer("half", {}, {0.5f});
  b.Initializer("one", {}, {1.f});
  if (form == "erf" || form == "erf_off") {
    b.Initializer("sqrt2", {}, {form == "erf" ? 1.4142135f : 1.5f});
    b.Node("Div", {"x", "sqrt2"}, {"d"}).Node("Erf", {"d"}, {"e"});
    b.Node("Add", {"e", "one"}, {"p"}).Node("Mul", {"x", "p"}, {"m"});
    b.Node("Mul", {"m", "half"}, {"y"});
  } else {  // tanh, torch's order: 0.5 * x * (1 + tanh(c * (x + 0.044715 * x^3)))
    if (form == "tanh_int_exponent") {  // the dynamo exporter's x^3: an int64 3
      auto* t = b.proto().mutable_graph()->add_initializer();
      t->set_name("three");
      t->set_data_type(onnx::TensorProto::INT64);
      t->add_int64_data(3);
    } else {
      b.Initializer("three", {}, {3.f});
    }
    b.Initializer("a", {}, {0.044715f});
    b.Initializer("c", {}, {0.7978845608f});
    b.Node("Mul", {"half", "x"}, {"hx"});
    b.Node("Pow", {"x", "three"}, {"x3"}).Node("Mul", {"a", "x3"}, {"ax3"});
    b.Node("Add", {"x", "ax3"}, {"inner"}).Node("Mul", {"c", "inner"}, {"arg"});
    b.Node("Tanh", {"arg"}, {"t"}).Node("Add", {"one", "t"}, {"p"});
    b.Node("Mul", {"hx", "p"}, {"y"});
  }
  b.Output("y");
  return b;
}

// The erf GELU of a model exported in half precision: input and constants float16.
ModelBuilder HalfGelu() {
  ModelBuilder b(17);
  b.Input("x", {4, 8}, onnx::TensorProto::FLOAT16);
  auto half = [&](const std::string& name, float v) {
    auto* t = b.proto().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT16);
    const uint16_t h = exec::FloatToHalf(v);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(&h), 2));
  };
  half("half", 0.5f);
  half("one", 1.f);
  half("sqrt2", 1.4142135f);
  b.Node("Div", {"x", "sqrt2"}, {"d"}).Node("Erf", {"d"}, {"e"});
  b.Node("Add", {"e", "one"}, {"p"}).Node("Mul", {"x", "p"}, {"m"});
  b.Node("Mul", {"m", "half"}, {"y"});
  b.Output("y", onnx::TensorProto::FLOAT16);
  return b;
}

TEST_CASE("GELU formulas are recognised by what they compute", "[lowering]") {
  // float16 constants (1/sqrt(2) off by 1e-4) still read as the erf form.
  auto half = PlanAll(HalfGelu());
  CHECK(half.graph.stats.at("gelu_recognised") == 1);
  auto erf = PlanAll(GeluFormula("erf"));
  CHECK(erf.graph.stats.at("gelu_recognised") == 1);
  auto tanh = PlanAll(GeluFormula("tanh"));
  CHECK(tanh.graph.stats.at("gelu_recognised") == 1);
  auto tanh_int = PlanAll(GeluFormula("tanh_int_exponent"));
  CHECK(tanh_int.graph.stats.at("gelu_recognised") == 1);
  // x / 1.5 inside erf is not GELU: left as written.
  auto off = PlanAll(GeluFormula("erf_off"));
  CHECK(off.graph.stats.at("gelu_recognised") == 0);
}

TEST_CASE("the LayerNorm decomposition becomes one LayerNormalization", "[lowering]") {
  ModelBuilder b(17);
  b.Input("x", {3, 16});
  b.Initializer("two", {}, {2.f});
  b.Initializer("eps", {}, {1e-12f});
  b.Initializer("gamma", {16}, RandomFloats(5, 16));
  b.Initializer("beta", {16}, RandomFloats(6, 16));
  const Attr axes("axes", std::vector<int64_t>{-1});
  b.Node("ReduceMean", {"x"}, {"u"}, {axes}).Node("Sub", {"x", "u"}, {"d"});
  b.Node("Pow", {"d", "two"}, {"d2"}).Node("ReduceMean", {"d2"}, {"var"}, {axes});
  b.Node("Add", {"var", "eps"}, {"ve"}).Node("Sqrt", {"ve"}, {"sd"});
  b.Node("Div", {"d", "sd"}, {"n"}).Node("Mul", {"n", "gamma"}, {"g"});
  b.Node("Add", {"g", "beta"}, {"y"}).Output("y");
  auto p = PlanAll(b);
  CHECK(p.graph.stats.at("layernorm_recognised") == 1);
  REQUIRE(p.graph.plan.steps.size() == 1);
  const auto* s = FirstLaunch(p.graph.plan, "LayerNormalization");
  REQUIRE(s);
  CHECK(cg::FloatAttr(*s->launch.op, "epsilon", 0) == 1e-12f);
}

TEST_CASE("LayerNormalization of an Add of activations is one AddLayerNormalization",
          "[lowering]") {
  ModelBuilder b(17);
  b.Input("a", {2, 4, 8});
  b.Input("c", {2, 4, 8});
  b.Initializer("gamma", {8}, RandomFloats(5, 8));
  b.Node("Relu", {"a"}, {"ra"}).Node("Relu", {"c"}, {"rc"});
  b.Node("Add", {"ra", "rc"}, {"sum"});
  b.Node("LayerNormalization", {"sum", "gamma"}, {"y"}, {Attr("axis", int64_t{-1})});
  b.Node("Sigmoid", {"sum"}, {"z"});  // the residual stream reads the sum too
  b.Output("y").Output("z");
  auto p = PlanAll(b);
  CHECK(p.graph.stats.at("add_layernorm_fused") == 1);
  const auto* s = FirstLaunch(p.graph.plan, "AddLayerNormalization");
  REQUIRE(s);
  CHECK(s->launch.outputs.size() == 2);  // y and the stored sum
}

}  // namespace
}  // namespace ortc::test::cuda
