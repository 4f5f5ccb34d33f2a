// --last-token-logits: the last position's slice moves up past the ops that compute each row
// from that row alone, the output becomes [..., 1, N] holding the last row of what it held, and
// a missing output or a rank-1 one is refused with the reason.
#include <catch2/catch.hpp>

#include <cmath>

#include "graph/model.h"
#include "model_builder.h"
#include "run_rewritten.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;

namespace {

constexpr int64_t kRows = 4, kHidden = 3, kVocab = 5;

// h = x * gamma; logits = h @ w + bias: every op row by row. With `h_is_output` h is a graph
// output too, so the slice cannot move above it.
ModelBuilder Head(bool h_is_output) {
  ModelBuilder b;
  b.Input("x", {1, kRows, kHidden})
      .Initializer("gamma", {kHidden}, {1.f, 2.f, -1.f})
      .Initializer("w", {kHidden, kVocab},
                   {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, -0.1f, -0.2f, -0.3f, -0.4f, -0.5f, 1.f, 0.f, -1.f,
                    0.5f, 0.25f})
      .Initializer("bias", {kVocab}, {0.f, 1.f, 2.f, 3.f, 4.f});
  b.Node("Mul", {"x", "gamma"}, {"h"})
      .Node("MatMul", {"h", "w"}, {"mm"})
      .Node("Add", {"mm", "bias"}, {"logits"});
  if (h_is_output) b.Output("h");
  b.Output("logits");
  return b;
}

Result<std::unique_ptr<graph::Model>> Load(ModelBuilder& b, bool last_position = true) {
  const std::string bytes = b.Serialize();
  graph::LoadOptions o;
  o.fold_shapes = true;
  if (last_position) o.last_position_outputs = {"logits"};
  return graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "head.onnx", o);
}

Tensor Floats(std::vector<int64_t> shape, const std::vector<float>& v) {
  return Tensor::FromBytes(DataType::kFloat, std::move(shape), v.data(), v.size() * sizeof(float));
}

std::vector<float> Values(const Tensor& t) {
  const float* p = t.data<float>();
  return {p, p + t.elements()};
}

// The op that reads value `name` (the one reader there must be).
const graph::Node& ReaderOf(const graph::Model& m, const std::string& name) {
  const auto& v = m.graph.values[m.graph.FindValue(name)];
  REQUIRE(v.consumers.size() == 1);
  return m.graph.nodes[v.consumers[0]];
}

const std::vector<float> kX = {1, 2, 3, -1, 0, 1, 0.5f, 0.5f, 0.5f, 2, -2, 1};

// The last row of logits from the model as written, run without the option.
std::vector<float> LastRowOfFull(bool h_is_output) {
  auto b = Head(h_is_output);
  auto full = Load(b, false);
  REQUIRE(full.ok());
  auto out = test::RunRewritten(**full, {{"x", Floats({1, kRows, kHidden}, kX)}});
  const auto logits = Values(out.back());
  REQUIRE(logits.size() == kRows * kVocab);
  return {logits.end() - kVocab, logits.end()};
}

}  // namespace

TEST_CASE("the last position's slice moves above the LM head and the ops before it",
          "[last_position]") {
  auto b = Head(false);
  auto m = Load(b);
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  CHECK(g.values[g.FindValue("logits")].info.shape.ToString() == "[1,1,5]");
  // Slice(x) feeds the Mul: nothing computes rows that are thrown away.
  const auto& first = ReaderOf(**m, "x");
  CHECK(first.op_type == "Slice");
  CHECK(g.values[g.FindValue("mm")].info.shape.ToString() == "[1,1,5]");
  auto out = test::RunRewritten(**m, {{"x", Floats({1, kRows, kHidden}, kX)}});
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == std::vector<int64_t>{1, 1, kVocab});
  CHECK(Values(out[0]) == LastRowOfFull(false));
}

TEST_CASE("a value something else reads keeps every row, the slice takes its edge to the chain",
          "[last_position]") {
  auto b = Head(true);
  auto m = Load(b);
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  // h is an output with every row; the MatMul reads its last row through the Slice.
  CHECK(g.values[g.FindValue("h")].info.shape.ToString() == "[1,4,3]");
  const auto& matmul = ReaderOf(**m, "mm");
  CHECK(matmul.op_type == "Add");
  CHECK(g.values[g.FindValue("mm")].info.shape.ToString() == "[1,1,5]");
  const auto& h = g.values[g.FindValue("h")];
  REQUIRE(h.consumers.size() == 1);  // the graph output is no node
  CHECK(g.nodes[h.consumers[0]].op_type == "Slice");
  auto out = test::RunRewritten(**m, {{"x", Floats({1, kRows, kHidden}, kX)}});
  REQUIRE(out.size() == 2);
  CHECK(out[0].shape() == std::vector<int64_t>{1, kRows, kHidden});
  CHECK(Values(out[1]) == LastRowOfFull(true));
}

TEST_CASE("an output computed across rows is sliced where it is produced", "[last_position]") {
  // Softmax over the rows (axis 1) mixes them: the slice goes after it.
  ModelBuilder b;
  b.Input("x", {1, kRows, kHidden});
  b.Node("Softmax", {"x"}, {"logits"}, {Attr("axis", int64_t{1})});
  b.Output("logits");
  auto m = Load(b);
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  CHECK(g.nodes.back().op_type == "Slice");
  CHECK(g.values[g.FindValue("logits")].info.shape.ToString() == "[1,1,3]");
  auto out = test::RunRewritten(**m, {{"x", Floats({1, kRows, kHidden}, kX)}});
  const auto y = Values(out[0]);
  REQUIRE(y.size() == kHidden);
  for (int64_t c = 0; c < kHidden; ++c) {  // the last row of a softmax down each column
    double sum = 0;
    for (int64_t r = 0; r < kRows; ++r) sum += std::exp(double{kX[r * kHidden + c]});
    CHECK(y[c] == Approx(std::exp(double{kX[(kRows - 1) * kHidden + c]}) / sum).epsilon(1e-6));
  }
}

TEST_CASE("last-position logits are refused without such an output, naming the outputs",
          "[last_position]") {
  ModelBuilder b;
  b.Input("x", {1, kRows, kHidden});
  b.Node("Relu", {"x"}, {"scores"});
  b.Output("scores");
  auto m = Load(b);
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(m.status().message(),
             Catch::Contains("no output named 'logits'") && Catch::Contains("scores"));
  ModelBuilder read_inside;  // logits also feeds a node: slicing it would change that node
  read_inside.Input("x", {1, kRows, kHidden});
  read_inside.Node("Relu", {"x"}, {"logits"}).Node("Neg", {"logits"}, {"negated"});
  read_inside.Output("logits").Output("negated");
  auto inside = Load(read_inside);
  REQUIRE_FALSE(inside.ok());
  CHECK_THAT(inside.status().message(), Catch::Contains("is also read by node"));
  ModelBuilder flat;
  flat.Input("x", {kHidden});
  flat.Node("Relu", {"x"}, {"logits"});
  flat.Output("logits");
  auto f = Load(flat);
  REQUIRE_FALSE(f.ok());
  CHECK_THAT(f.status().message(), Catch::Contains("positions and values"));
}
