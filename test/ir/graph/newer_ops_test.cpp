// ai.onnx ops newer than the linked ONNX library (opset 23's Attention, RMSNormalization and
// RotaryEmbedding, opset 24's Swish and TensorScatter), rewritten at load into older ops
// (graph/contrib_ops.h). The expected values are worked out by hand from the ONNX definitions,
// on inputs chosen so that they are (uniform softmax rows, unit rotations).
#include <catch2/catch.hpp>

#include <cmath>

#include "graph/model.h"
#include "model_builder.h"
#include "ortc/runtime.h"
#include "run_rewritten.h"
#include "test_data.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

std::unique_ptr<graph::Model> Load(const ModelBuilder& b) {
  const std::string bytes = b.Serialize();
  auto m = graph::LoadModelFromBuffer(test::BytesOf(bytes), "newer.onnx");
  if (!m.ok()) FAIL(m.status().ToString());
  return std::move(m).value();
}

Status LoadError(const ModelBuilder& b) {
  const std::string bytes = b.Serialize();
  auto m = graph::LoadModelFromBuffer(test::BytesOf(bytes), "newer.onnx");
  REQUIRE_FALSE(m.ok());
  return m.status();
}

// The rewritten model's first output, as floats.
std::vector<float> Run(const graph::Model& m,
                       const std::vector<std::pair<std::string, Tensor>>& feeds) {
  const Tensor y = test::RunRewritten(m, feeds)[0];
  return std::vector<float>(y.data<float>(), y.data<float>() + y.elements());
}

Tensor Floats(std::vector<int64_t> shape, const std::vector<float>& v) {
  return Tensor::FromBytes(DataType::kFloat, std::move(shape), v.data(), v.size() * sizeof(float));
}

Tensor Int64s(std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  return Tensor::FromBytes(DataType::kInt64, std::move(shape), v.data(),
                           v.size() * sizeof(int64_t));
}

Tensor Bools(std::vector<int64_t> shape, const std::vector<uint8_t>& v) {
  return Tensor::FromBytes(DataType::kBool, std::move(shape), v.data(), v.size());
}

bool HasOp(const graph::Model& m, const std::string& op) {
  for (const auto& n : m.graph.nodes)
    if (n.op_type == op) return true;
  return false;
}

void CheckNear(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-6));
}

// V [1, 1, T, 1] = 1, 2, 4, 8, ...: with Q = 0 every visible key scores the same, so each output
// is the mean of the visible keys' V rows, and the rows tell which keys were visible.
std::vector<float> Powers(int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<float>(1 << i));
  return v;
}

}  // namespace

TEST_CASE("opset-23 Attention is rewritten, with causal alignment after a past cache",
          "[newer_ops]") {
  // 2 new query rows after 2 cached keys: query i sees keys j <= i + 2.
  ModelBuilder b(23, 11);
  b.Input("q", {1, 1, 2, 1}).Input("k", {1, 1, 2, 1}).Input("v", {1, 1, 2, 1});
  b.Input("past_k", {1, 1, 2, 1}).Input("past_v", {1, 1, 2, 1});
  b.Node("Attention", {"q", "k", "v", "", "past_k", "past_v"}, {"y", "present_k", "present_v"},
         {Attr("is_causal", int64_t{1})}, "att");
  b.Output("y").Output("present_k").Output("present_v");
  auto m = Load(b);
  CHECK_FALSE(HasOp(*m, "Attention"));
  REQUIRE(m->expanded_nodes.size() == 1);
  CHECK(m->expanded_nodes[0].domain == "ai.onnx");
  CHECK(m->expanded_nodes[0].op_type == "Attention");
  const auto v = Powers(4);  // past rows 1, 2; new rows 4, 8
  auto y = Run(*m, {{"q", Floats({1, 1, 2, 1}, {0, 0})},
                    {"k", Floats({1, 1, 2, 1}, {0, 0})},
                    {"v", Floats({1, 1, 2, 1}, {v[2], v[3]})},
                    {"past_k", Floats({1, 1, 2, 1}, {0, 0})},
                    {"past_v", Floats({1, 1, 2, 1}, {v[0], v[1]})}});
  CheckNear(y, {(1 + 2 + 4) / 3.0f, (1 + 2 + 4 + 8) / 4.0f});
}

TEST_CASE("opset-23 Attention: GQA heads, a boolean mask and fully masked rows", "[newer_ops]") {
  // 2 query heads over 1 key/value head, 3-D inputs; row 1 of the mask hides every key.
  ModelBuilder b(23, 11);
  b.Input("q", {1, 2, 2}).Input("k", {1, 3, 1}).Input("v", {1, 3, 1}).Input("m", {2, 3}, T::BOOL);
  b.Node("Attention", {"q", "k", "v", "m"}, {"y"},
         {Attr("q_num_heads", int64_t{2}), Attr("kv_num_heads", int64_t{1})}, "att");
  b.Output("y");
  auto m = Load(b);
  auto y = Run(*m, {{"q", Floats({1, 2, 2}, {0, 0, 0, 0})},
                    {"k", Floats({1, 3, 1}, {0, 0, 0})},
                    {"v", Floats({1, 3, 1}, Powers(3))},
                    {"m", Bools({2, 3}, {1, 0, 1, 0, 0, 0})}});
  // [B, S, heads * 1]: row 0 sees keys 0 and 2 in both heads; row 1 sees none (zeros, not NaN).
  CheckNear(y, {2.5f, 2.5f, 0.0f, 0.0f});
}

TEST_CASE("opset-24 Attention: nonpad_kv_seqlen hides padding and aligns the causal frontier",
          "[newer_ops]") {
  // An external cache of 5 rows, 3 valid; one query row: it sees keys 0..2.
  ModelBuilder b(24, 12);
  b.Input("q", {1, 1, 1, 1}).Input("k", {1, 1, 5, 1}).Input("v", {1, 1, 5, 1});
  b.Input("n", {1}, T::INT64);
  b.Node("Attention", {"q", "k", "v", "", "", "", "n"}, {"y"}, {Attr("is_causal", int64_t{1})},
         "att");
  b.Output("y");
  auto m = Load(b);
  auto y = Run(*m, {{"q", Floats({1, 1, 1, 1}, {0})},
                    {"k", Floats({1, 1, 5, 1}, {0, 0, 0, 0, 0})},
                    {"v", Floats({1, 1, 5, 1}, Powers(5))},
                    {"n", Int64s({1}, {3})}});
  CheckNear(y, {(1 + 2 + 4) / 3.0f});
}

TEST_CASE("opset-23 RMSNormalization, RotaryEmbedding and opset-24 Swish are rewritten",
          "[newer_ops]") {
  SECTION("RMSNormalization over the last two axes, scaled") {
    ModelBuilder b(23, 11);
    b.Input("x", {1, 2, 2}).Initializer("s", {2, 2}, {1, 2, 3, 4});
    b.Node("RMSNormalization", {"x", "s"}, {"y"},
           {Attr("axis", int64_t{-2}), Attr("epsilon", 0.0f)}, "rms");
    b.Output("y");
    auto m = Load(b);
    CHECK_FALSE(HasOp(*m, "RMSNormalization"));
    // x = 3, -3, 3, -3: the mean square is 9, so x / 3 = +-1 times the scale.
    CheckNear(Run(*m, {{"x", Floats({1, 2, 2}, {3, -3, 3, -3})}}), {1, -2, 3, -4});
  }
  SECTION("RotaryEmbedding of [B, N, S, H] at position ids") {
    ModelBuilder b(23, 11);
    b.Input("x", {1, 1, 2, 2}).Input("p", {1, 2}, T::INT64);
    // Position 0: no rotation; position 1: a quarter turn (cos 0, sin 1).
    b.Initializer("cos", {2, 1}, {1, 0}).Initializer("sin", {2, 1}, {0, 1});
    b.Node("RotaryEmbedding", {"x", "cos", "sin", "p"}, {"y"}, {}, "rot");
    b.Output("y");
    auto m = Load(b);
    CHECK_FALSE(HasOp(*m, "RotaryEmbedding"));
    // (a, b) -> (a cos - b sin, b cos + a sin): (1, 2) stays, (1, 2) at 90 degrees is (-2, 1).
    CheckNear(Run(*m, {{"x", Floats({1, 1, 2, 2}, {1, 2, 1, 2})}, {"p", Int64s({1, 2}, {0, 1})}}),
              {1, 2, -2, 1});
  }
  SECTION("Swish with alpha") {
    ModelBuilder b(24, 12);
    b.Input("x", {2}).Node("Swish", {"x"}, {"y"}, {Attr("alpha", 2.0f)}, "swish").Output("y");
    auto m = Load(b);
    CHECK_FALSE(HasOp(*m, "Swish"));
    CheckNear(Run(*m, {{"x", Floats({2}, {0, 1})}}), {0, 1 / (1 + std::exp(-2.0f))});
  }
}

TEST_CASE("opset-24 TensorScatter writes the update at each batch's index, linear or circular",
          "[newer_ops]") {
  for (const bool circular : {false, true}) {
    ModelBuilder b(24, 12);
    b.Input("cache", {2, 4, 1}).Input("update", {2, 2, 1}).Input("at", {2}, T::INT64);
    std::vector<Attr> attrs = {Attr("axis", int64_t{1})};
    if (circular) attrs.push_back(Attr("mode", std::string("circular")));
    b.Node("TensorScatter", {"cache", "update", "at"}, {"y"}, attrs, "scatter").Output("y");
    auto m = Load(b);
    CHECK_FALSE(HasOp(*m, "TensorScatter"));
    auto y = Run(*m, {{"cache", Floats({2, 4, 1}, {0, 0, 0, 0, 0, 0, 0, 0})},
                      {"update", Floats({2, 2, 1}, {5, 6, 7, 8})},
                      {"at", Int64s({2}, {1, circular ? 3 : 2})}});
    // Batch 0 at row 1: rows 1, 2. Batch 1 at row 2 (rows 2, 3) or, circular, at row 3 (3, 0).
    if (circular) {
      CheckNear(y, {0, 5, 6, 0, 8, 0, 0, 7});
    } else {
      CheckNear(y, {0, 5, 6, 0, 0, 0, 7, 8});
    }
  }
}

TEST_CASE("newer ops' forms that cannot be rewritten fail naming the node and what is wrong",
          "[newer_ops]") {
  SECTION("3-D Attention without head counts") {
    ModelBuilder b(23, 11);
    b.Input("q", {1, 2, 4}).Node("Attention", {"q", "q", "q"}, {"y"}, {}, "att").Output("y");
    CHECK_THAT(LoadError(b).message(), Catch::Contains("node 'att' (ai.onnx.Attention)") &&
                                           Catch::Contains("q_num_heads and kv_num_heads"));
  }
  SECTION("Attention with Q, K and V of different ranks") {
    ModelBuilder b(23, 11);
    b.Input("q", {1, 2, 3, 4}).Input("k", {1, 3, 8}).Input("v", {1, 3, 8});
    b.Node("Attention", {"q", "k", "v"}, {"y"}, {}, "att").Output("y");
    CHECK_THAT(LoadError(b).message(),
               Catch::Contains("'att'") && Catch::Contains("ranks 4, 3 and 3"));
  }
  SECTION("TensorScatter along the batch") {
    ModelBuilder b(24, 12);
    b.Input("c", {2, 3}).Input("u", {1, 3});
    b.Node("TensorScatter", {"c", "u"}, {"y"}, {Attr("axis", int64_t{0})}, "ts").Output("y");
    CHECK_THAT(LoadError(b).message(), Catch::Contains("'ts'") && Catch::Contains("axis"));
  }
  SECTION("RotaryEmbedding caches that do not fit the head") {
    ModelBuilder b(23, 11);
    b.Input("x", {1, 1, 2, 4}).Input("p", {1, 2}, T::INT64);
    b.Initializer("cos", {2, 1}, {1, 0}).Initializer("sin", {2, 1}, {0, 1});
    b.Node("RotaryEmbedding", {"x", "cos", "sin", "p"}, {"y"}, {}, "rot").Output("y");
    CHECK_THAT(LoadError(b).message(), Catch::Contains("'rot'") && Catch::Contains("head size 4"));
  }
}

TEST_CASE("opset-23 DequantizeLinear's output_dtype names the output type", "[newer_ops]") {
  ModelBuilder b(23, 11);
  b.Input("x", {3}, T::INT8).Initializer("s", {}, {0.5f});
  b.Node("DequantizeLinear", {"x", "s"}, {"y"}, {Attr("output_dtype", int64_t{T::DOUBLE})}, "dq");
  b.Output("y", T::DOUBLE);
  auto m = Load(b);
  const auto& g = m->graph;
  CHECK(g.values[g.FindValue("y")].info.dtype == T::DOUBLE);
  const std::string bytes = m->proto.SerializeAsString();
  auto s = Session::CreateFromBuffer(test::BytesOf(bytes));
  REQUIRE(s.ok());
  const std::vector<int8_t> x = {-4, 0, 7};
  auto out = (*s)->Run({{"x", Tensor::FromBytes(DataType::kInt8, {3}, x.data(), x.size())}});
  REQUIRE(out.ok());
  REQUIRE((*out)[0].dtype() == DataType::kDouble);
  const double* y = (*out)[0].data<double>();
  CHECK(y[0] == -2.0);
  CHECK(y[1] == 0.0);
  CHECK(y[2] == 3.5);
}

TEST_CASE("opset-23 Attention whose head counts and sizes are only known at run time",
          "[newer_ops]") {
  // Every dim symbolic, as exporters' dynamic axes and run-time Reshapes leave them at load:
  // the expansion reads the group (2 query heads over 1) and 1/sqrt(head size) at run time.
  ModelBuilder b(23, 11);
  b.Input("q", {-1, -1, -1, -1}).Input("k", {-1, -1, -1, -1}).Input("v", {-1, -1, -1, -1});
  b.Node("Attention", {"q", "k", "v"}, {"y"}, {}, "att").Output("y");
  auto m = Load(b);
  CHECK_FALSE(HasOp(*m, "Attention"));
  // q = 1s (D = 4): key 0 (1s) scores 4 / sqrt(4) = 2, key 1 (0s) scores 0, so each output is
  // V row 0's weight e^2 / (e^2 + 1) times 1 plus row 1's times 0.
  const std::vector<float> ones(8, 1.0f);
  auto y = Run(*m, {{"q", Floats({1, 2, 1, 4}, ones)},
                    {"k", Floats({1, 1, 2, 4}, {1, 1, 1, 1, 0, 0, 0, 0})},
                    {"v", Floats({1, 1, 2, 4}, {1, 1, 1, 1, 0, 0, 0, 0})}});
  const float w = std::exp(2.0f) / (std::exp(2.0f) + 1.0f);
  CheckNear(y, std::vector<float>(8, w));
}

TEST_CASE("opset-24 Attention pads a mask shorter than the keys with masked positions",
          "[newer_ops]") {
  // 3 keys, a boolean mask of 2: key 1 is hidden by the mask, key 2 by the padding.
  ModelBuilder b(24, 12);
  b.Input("q", {1, 1, 1, 1}).Input("k", {1, 1, 3, 1}).Input("v", {1, 1, 3, 1});
  b.Input("m", {1, 2}, T::BOOL);
  b.Node("Attention", {"q", "k", "v", "m"}, {"y"}, {}, "att").Output("y");
  auto m = Load(b);
  auto y = Run(*m, {{"q", Floats({1, 1, 1, 1}, {0})},
                    {"k", Floats({1, 1, 3, 1}, {0, 0, 0})},
                    {"v", Floats({1, 1, 3, 1}, Powers(3))},
                    {"m", Bools({1, 2}, {1, 0})}});
  CheckNear(y, {1.0f});
}
