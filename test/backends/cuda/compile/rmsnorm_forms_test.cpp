// RMSNorm as exporters write it, recognised by what it computes and run as one RMSNormalization
// launch: the dynamo exporter's Pow/ReduceMean/Add/Sqrt/Reciprocal/Mul/Mul, Mul(x, x) and
// Div(1, sqrt) with the operands the other way round, x / sqrt, Pow(v, -0.5) with an integer
// square's exponent, Hugging Face's float32 round trip on an fp16 model; and near misses that
// must stay as written (exponent 3, a mean over another or two axes, eps not a positive
// constant, an intermediate read elsewhere, x * sqrt).
#include <catch2/catch.hpp>

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
using T = onnx::TensorProto;

int Launches(const Plan& plan, const std::string& op_type) {
  int n = 0;
  for (const auto& s : plan.steps)
    n += s.kind == StepKind::kLaunch && s.launch.op && s.launch.op->op_type == op_type;
  return n;
}

const cg::OpDesc* RmsNorm(const Plan& plan) {
  for (const auto& s : plan.steps)
    if (s.kind == StepKind::kLaunch && s.launch.op && s.launch.op->op_type == "RMSNormalization")
      return &*s.launch.op;
  return nullptr;
}

// A float16 initializer (ModelBuilder's are float32).
void HalfInitializer(ModelBuilder& b, const std::string& name, const std::vector<float>& v) {
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(T::FLOAT16);
  t->add_dims(static_cast<int64_t>(v.size()));
  std::string raw(v.size() * 2, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    const uint16_t h = exec::FloatToHalf(v[i]);
    std::memcpy(&raw[2 * i], &h, 2);
  }
  t->set_raw_data(raw);
}

// The pieces of one RMSNorm over x [2, 5, 16]; each form below picks its spelling.
struct Form {
  int64_t opset = 18;
  std::string square = "Pow";        // "Pow", "PowInt", "Mul", "Pow3"
  std::vector<int64_t> axes = {-1};  // of the ReduceMean
  bool eps_first = false;            // Add(eps, mean)
  bool eps_input = false;            // eps a graph input instead of a constant
  float eps = 1e-6f;
  std::string inverse = "Reciprocal";  // "Reciprocal", "Div1", "Pow", "Div", "Sqrt"
  bool x_first = true;                 // Mul(x, r) or Mul(r, x)
  std::string weight = "left";         // "left", "right", "none"
  bool mean_output = false;            // the mean is also a graph output
};

ModelBuilder Build(const Form& f) {
  ModelBuilder b(f.opset);
  b.Input("x", {2, 5, 16});
  b.Initializer("two", {}, {2.f}).Initializer("three", {}, {3.f}).Initializer("one", {}, {1.f});
  b.Initializer("minus_half", {}, {-0.5f});
  b.IntInitializer("two_i", {2});
  b.Initializer("w", {16}, RandomFloats(4, 16));
  if (f.eps_input) {
    b.Input("eps", {1});
  } else {
    b.Initializer("eps", {}, {f.eps});
  }
  if (f.square == "Mul") {
    b.Node("Mul", {"x", "x"}, {"sq"});
  } else {
    b.Node("Pow",
           {"x", f.square == "PowInt" ? "two_i"
                 : f.square == "Pow3" ? "three"
                                      : "two"},
           {"sq"});
  }
  if (f.opset >= 18) {
    b.IntInitializer("axes", f.axes);
    b.Node("ReduceMean", {"sq", "axes"}, {"mean"}, {Attr("keepdims", int64_t{1})}, "mean");
  } else {
    b.Node("ReduceMean", {"sq"}, {"mean"}, {Attr("axes", f.axes), Attr("keepdims", int64_t{1})},
           "mean");
  }
  b.Node("Add",
         f.eps_first ? std::vector<std::string>{"eps", "mean"}
                     : std::vector<std::string>{"mean", "eps"},
         {"v"});
  std::string n = "n";
  auto mul_x = [&](const std::string& r) {
    b.Node("Mul", f.x_first ? std::vector<std::string>{"x", r} : std::vector<std::string>{r, "x"},
           {n});
  };
  if (f.inverse == "Reciprocal") {
    b.Node("Sqrt", {"v"}, {"s"}).Node("Reciprocal", {"s"}, {"r"});
    mul_x("r");
  } else if (f.inverse == "Div1") {
    b.Node("Sqrt", {"v"}, {"s"}).Node("Div", {"one", "s"}, {"r"});
    mul_x("r");
  } else if (f.inverse == "Pow") {
    b.Node("Pow", {"v", "minus_half"}, {"r"});
    mul_x("r");
  } else if (f.inverse == "Div") {
    b.Node("Sqrt", {"v"}, {"s"}).Node("Div", {"x", "s"}, {n});
  } else {  // "Sqrt": x * sqrt(v), not a normalization
    b.Node("Sqrt", {"v"}, {"s"});
    mul_x("s");
  }
  if (f.weight == "none") {
    b.Node("Identity", {n}, {"y"});
  } else {
    b.Node("Mul",
           f.weight == "left" ? std::vector<std::string>{"w", n} : std::vector<std::string>{n, "w"},
           {"y"});
  }
  b.Node("Relu", {"y"}, {"out"}).Output("out");  // a reader after the norm
  if (f.mean_output) b.Output("mean");
  return b;
}

void Recognised(const Form& f, bool with_weight) {
  auto p = PlanAll(Build(f));
  const Plan& plan = p.graph.plan;
  CHECK(p.graph.stats.at("rmsnorm_recognised") == 1);
  REQUIRE(Launches(plan, "RMSNormalization") == 1);
  CHECK(Launches(plan, "ReduceMean") == 0);
  // The norm and the Relu: nothing of the decomposition is left.
  CHECK(plan.steps.size() == 2);
  const auto* op = RmsNorm(plan);
  CHECK(cg::FloatAttr(*op, "epsilon", 0) == f.eps);
  CHECK(cg::IntAttr(*op, "axis", 0) == -1);
  CHECK(op->inputs[0].dims == std::vector<int64_t>{2, 5, 16});
  if (with_weight) {
    CHECK(op->inputs[1].dims == std::vector<int64_t>{16});
  } else {
    CHECK(op->inputs[1].dtype == 0);  // no scale: the kernel multiplies by nothing
  }
}

void LeftAlone(const Form& f) {
  auto p = PlanAll(Build(f));
  CHECK(p.graph.stats.at("rmsnorm_recognised") == 0);
  CHECK(Launches(p.graph.plan, "RMSNormalization") == 0);
  CHECK(Launches(p.graph.plan, "ReduceMean") == 1);
}

}  // namespace

TEST_CASE("the exporters' RMSNorm spellings become one RMSNormalization", "[lowering][rmsnorm]") {
  SECTION("dynamo: Pow, ReduceMean with an axes input, Sqrt, Reciprocal, weight * (x * r)") {
    Recognised(Form{}, true);
  }
  SECTION("opset 17 axes attribute, Mul(x, x), Add(eps, mean), Div(1, sqrt), r * x, n * w") {
    Form f;
    f.opset = 17, f.square = "Mul", f.eps_first = true, f.inverse = "Div1", f.x_first = false;
    f.weight = "right", f.eps = 1e-5f;
    Recognised(f, true);
  }
  SECTION("x / sqrt(v) without a weight: the scale input is absent") {
    Form f;
    f.inverse = "Div", f.weight = "none";
    Recognised(f, false);
  }
  SECTION("Pow(v, -0.5) and an integer exponent 2") {
    Form f;
    f.inverse = "Pow", f.square = "PowInt", f.axes = {2};
    Recognised(f, true);
  }
}

TEST_CASE("near misses of RMSNorm stay as written", "[lowering][rmsnorm]") {
  Form cube;
  cube.square = "Pow3";
  LeftAlone(cube);
  Form middle;  // mean over axis 1 of [2, 5, 16]
  middle.axes = {1};
  LeftAlone(middle);
  Form two_axes;
  two_axes.axes = {-2, -1};
  LeftAlone(two_axes);
  Form input_eps;  // eps from a graph input: not known to be a positive constant
  input_eps.eps_input = true;
  LeftAlone(input_eps);
  Form zero_eps;
  zero_eps.eps = 0.f;
  LeftAlone(zero_eps);
  Form times_sqrt;  // x * sqrt(v): the power of v must be -1/2
  times_sqrt.inverse = "Sqrt";
  LeftAlone(times_sqrt);
  Form shared_mean;  // the mean is a program output: it must stay materialized
  shared_mean.mean_output = true;
  LeftAlone(shared_mean);
}

TEST_CASE("Hugging Face's LlamaRMSNorm on fp16: the float32 round trip is absorbed",
          "[lowering][rmsnorm]") {
  // weight * (x.float() * rsqrt(mean(x.float()^2) + eps)).half(), as the dynamo exporter writes
  // it for a model in float16.
  ModelBuilder b(18);
  b.Input("x", {2, 5, 16}, T::FLOAT16);
  b.Initializer("two", {}, {2.f}).Initializer("eps", {}, {1e-6f});
  b.IntInitializer("axes", {-1});
  HalfInitializer(b, "w", RandomFloats(4, 16));
  b.Node("Cast", {"x"}, {"xf"}, {Attr("to", int64_t{T::FLOAT})});
  b.Node("Pow", {"xf", "two"}, {"sq"});
  b.Node("ReduceMean", {"sq", "axes"}, {"mean"}, {Attr("keepdims", int64_t{1})});
  b.Node("Add", {"mean", "eps"}, {"v"}).Node("Sqrt", {"v"}, {"s"});
  b.Node("Reciprocal", {"s"}, {"r"}).Node("Mul", {"xf", "r"}, {"n"});
  b.Node("Cast", {"n"}, {"nh"}, {Attr("to", int64_t{T::FLOAT16})});
  b.Node("Mul", {"w", "nh"}, {"y"}).Output("y", T::FLOAT16);
  auto p = PlanAll(b);
  const Plan& plan = p.graph.plan;
  CHECK(p.graph.stats.at("rmsnorm_recognised") == 1);
  REQUIRE(plan.steps.size() == 1);
  const auto* op = RmsNorm(plan);
  REQUIRE(op);
  CHECK(op->inputs[0].dtype == T::FLOAT16);  // x itself, not its float32 copy
  CHECK(op->inputs[1].dtype == T::FLOAT16);
  CHECK(op->outputs[0].dtype == T::FLOAT16);
}

TEST_CASE("the LayerNorm decomposition stays a LayerNormalization, not an RMSNorm of x - mean",
          "[lowering][rmsnorm]") {
  ModelBuilder b(17);
  b.Input("x", {3, 16});
  b.Initializer("two", {}, {2.f}).Initializer("eps", {}, {1e-5f});
  const Attr axes("axes", std::vector<int64_t>{-1});
  b.Node("ReduceMean", {"x"}, {"u"}, {axes}).Node("Sub", {"x", "u"}, {"d"});
  b.Node("Pow", {"d", "two"}, {"d2"}).Node("ReduceMean", {"d2"}, {"var"}, {axes});
  b.Node("Add", {"var", "eps"}, {"ve"}).Node("Sqrt", {"ve"}, {"sd"});
  b.Node("Div", {"d", "sd"}, {"y"}).Output("y");
  auto p = PlanAll(b);
  CHECK(p.graph.stats.at("layernorm_recognised") == 1);
  CHECK(p.graph.stats.at("rmsnorm_recognised") == 0);
  CHECK(Launches(p.graph.plan, "LayerNormalization") == 1);
}

TEST_CASE("the llama fixture's five RMSNorms are one launch each", "[lowering][rmsnorm]") {
  // Two decoder layers (two norms each) and the final norm, fp16 as `ortc compile --precision
  // fp16` plans it.
  const auto path =
      std::string(ORTC_SOURCE_DIR) + "/test/fixtures/transformers/llama_dynamo_sdpa/model.onnx";
  auto m = graph::LoadModelFromFile(path);
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  backends::Subgraph sg{"g", {}, g.inputs, g.outputs};
  for (size_t i = 0; i < g.nodes.size(); ++i) sg.nodes.push_back(static_cast<int>(i));
  auto options = backends::cuda::ParseCudaOptions({});
  REQUIRE(options.ok());
  options->precision = backends::cuda::Precision::kFp16;
  auto planned = backends::cuda::PlanCudaSubgraph(**m, sg, *options);
  INFO(planned.status().ToString());
  REQUIRE(planned.ok());
  CHECK(planned->stats.at("rmsnorm_recognised") == 5);
  CHECK(Launches(planned->plan, "RMSNormalization") == 5);
  CHECK(Launches(planned->plan, "ReduceMean") == 0);
  for (const auto& s : planned->plan.steps)
    for (const auto& src : s.sources) {
      CHECK(src.find("rsqrt") == std::string::npos);
      CHECK(src.find("pow") == std::string::npos);
    }
}

}  // namespace ortc::test::cuda
