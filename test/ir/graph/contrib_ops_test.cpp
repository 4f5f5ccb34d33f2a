// The load-time rewrite of ONNX Runtime's transformer contrib ops (graph/contrib_ops.h): what it
// writes and computes, that it waits for shapes, and the forms it refuses (node, input, remedy).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>

#include "graph/model.h"
#include "model_builder.h"
#include "ortc/runtime.h"
#include "run_ortc.h"
#include "run_rewritten.h"
#include "test_data.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::RunOrtc;
using ortc::test::TempDir;
using T = onnx::TensorProto;

namespace {

constexpr const char* kMs = "com.microsoft";

Result<std::unique_ptr<graph::Model>> TryLoad(const ModelBuilder& b) {
  const std::string bytes = b.Serialize();
  graph::LoadOptions o;
  o.fold_shapes = true;
  return graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "contrib.onnx", o);
}

std::unique_ptr<graph::Model> Load(const ModelBuilder& b) {
  auto m = TryLoad(b);
  if (!m.ok()) FAIL(m.status().ToString());
  return std::move(m).value();
}

Status LoadError(const ModelBuilder& b) {
  auto m = TryLoad(b);
  REQUIRE_FALSE(m.ok());
  return m.status();
}

ModelBuilder Builder(int64_t opset = 17) {
  ModelBuilder b(opset);
  b.Opset(kMs, 1);
  return b;
}

std::vector<float> Ramp(size_t n, float scale, float offset = 0.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = offset + scale * static_cast<float>((i * 7) % 11) - scale * 5;
  return v;
}

// Attention over x [1, 3, 4] with 2 heads, an identity-like QKV projection and a [1, 3] mask.
ModelBuilder AttentionModel(std::vector<Attr> attrs = {Attr("num_heads", int64_t{2})},
                            bool mask = true) {
  auto b = Builder();
  b.Input("x", {1, 3, 4});
  if (mask) b.Input("mask", {1, 3}, T::INT32);
  b.Initializer("w", {4, 12}, Ramp(48, 0.1f));
  b.Initializer("b", {12}, Ramp(12, 0.05f));
  b.Node("Attention", {"x", "w", "b", mask ? "mask" : ""}, {"y"}, attrs, "attn", kMs);
  b.Output("y");
  return b;
}

Tensor Floats(std::vector<int64_t> shape, const std::vector<float>& v) {
  return Tensor::FromBytes(DataType::kFloat, std::move(shape), v.data(), v.size() * sizeof(float));
}

Tensor Ints32(std::vector<int64_t> shape, const std::vector<int32_t>& v) {
  return Tensor::FromBytes(DataType::kInt32, std::move(shape), v.data(),
                           v.size() * sizeof(int32_t));
}

bool HasContribNode(const graph::Model& m) {
  for (const auto& n : m.graph.nodes)
    if (n.domain == kMs) return true;
  return false;
}

bool HasNode(const graph::Model& m, const std::string& name) {
  for (const auto& n : m.graph.nodes)
    if (n.name == name) return true;
  return false;
}

}  // namespace

TEST_CASE("contrib ops are rewritten into standard ops named after their node", "[contrib]") {
  auto b = Builder();
  b.Input("x", {2, 3, 4}).Input("skip", {2, 3, 4});
  b.Initializer("g", {4}, {1.0f, 1.1f, 0.9f, 1.0f}).Initializer("beta", {4}, {0, 0.1f, 0, -0.1f});
  b.Initializer("bias", {4}, {0.1f, 0.2f, 0.3f, 0.4f});
  b.Node("SkipLayerNormalization", {"x", "skip", "g", "beta"}, {"h", "", "", "sum"},
         {Attr("epsilon", 1e-5f)}, "sln", kMs);
  b.Node("BiasGelu", {"h", "bias"}, {"a"}, {}, "bias_gelu", kMs);
  b.Node("FastGelu", {"a"}, {"f"}, {}, "fast_gelu", kMs);
  b.Node("Gelu", {"f"}, {"y"}, {}, "", kMs);
  b.Output("y").Output("sum");
  auto m = Load(b);
  CHECK_FALSE(HasContribNode(*m));
  REQUIRE(m->expanded_nodes.size() == 4);
  CHECK(m->expanded_nodes[0].name == "sln");
  CHECK(m->expanded_nodes[0].op_type == "SkipLayerNormalization");
  CHECK(m->expanded_nodes[3].op_type == "Gelu");
  // Every new node is "<node>/<part>"; the contrib node's outputs keep their names.
  for (const auto& n : m->graph.nodes) {
    const std::string& prefix = n.name.substr(0, n.name.find('/'));
    CHECK(
        (prefix == "sln" || prefix == "bias_gelu" || prefix == "fast_gelu" || prefix == "Gelu_3"));
  }
  CHECK(HasNode(*m, "sln/layer_norm"));  // opset 17: the standard LayerNormalization
  CHECK(m->graph.FindValue("sum") >= 0);
  CHECK(m->graph.values[m->graph.FindValue("y")].info.shape.ToString() == "[2,3,4]");

  // Deterministic: the same model twice gives the same bytes.
  CHECK(Load(b)->proto.SerializeAsString() == m->proto.SerializeAsString());
}

TEST_CASE("the opset decides the forms the rewrite writes", "[contrib]") {
  for (int64_t opset : {11, 13, 18, 20}) {
    auto b = Builder(opset);
    b.Input("x", {2, 3, 4}).Input("skip", {2, 3, 4});
    b.Initializer("g", {4}, {1, 1, 1, 1});
    b.Node("SkipLayerNormalization", {"x", "skip", "g"}, {"h"}, {}, "sln", kMs);
    b.Node("FastGelu", {"h"}, {"y"}, {}, "fg", kMs);
    b.Output("y");
    auto m = Load(b);
    CAPTURE(opset);
    CHECK_FALSE(HasContribNode(*m));
    CHECK(HasNode(*m, "sln/layer_norm") == (opset >= 17));
    CHECK(HasNode(*m, "sln/ln_mean") == (opset < 17));
    CHECK(HasNode(*m, "fg/tanh") == (opset < 20));
    CHECK(HasNode(*m, "fg/gelu") == (opset >= 20));
  }
}

TEST_CASE("Gelu, FastGelu and SkipLayerNormalization compute what ONNX Runtime documents",
          "[contrib]") {
  for (int64_t opset : {13, 17, 20}) {
    CAPTURE(opset);
    auto b = Builder(opset);
    b.Input("x", {1, 2, 3}).Input("skip", {1, 2, 3});
    b.Initializer("g", {3}, {1.0f, 2.0f, 0.5f}).Initializer("beta", {3}, {0.1f, -0.2f, 0.3f});
    b.Initializer("bias", {3}, {0.5f, -0.5f, 0.25f});
    b.Node("Gelu", {"x"}, {"gelu"}, {}, "gelu", kMs);
    b.Node("FastGelu", {"x", "bias"}, {"fast"}, {}, "fast", kMs);
    b.Node("SkipLayerNormalization", {"x", "skip", "g", "beta", "bias"}, {"ln", "", "", "sum"},
           {Attr("epsilon", 1e-5f)}, "sln", kMs);
    b.Output("gelu").Output("fast").Output("ln").Output("sum");
    auto m = Load(b);
    const std::vector<float> x = {-2.0f, -0.5f, 0.0f, 0.3f, 1.0f, 3.0f};
    const std::vector<float> skip = {0.5f, 0.25f, -1.0f, 2.0f, 0.0f, -0.75f};
    const std::vector<float> gamma = {1.0f, 2.0f, 0.5f}, beta = {0.1f, -0.2f, 0.3f},
                             bias = {0.5f, -0.5f, 0.25f};
    auto out =
        test::RunRewritten(*m, {{"x", Floats({1, 2, 3}, x)}, {"skip", Floats({1, 2, 3}, skip)}});
    REQUIRE(out.size() == 4);
    for (size_t i = 0; i < 6; ++i) {
      const double v = x[i];
      CHECK(out[0].data<float>()[i] ==
            Approx(0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))).margin(1e-6));
      const double y = v + bias[i % 3];
      const double fast = 0.5 * y * (1 + std::tanh(0.7978845608 * (y + 0.044715 * y * y * y)));
      CHECK(out[1].data<float>()[i] == Approx(fast).margin(1e-5));
      CHECK(out[3].data<float>()[i] == Approx(x[i] + skip[i] + bias[i % 3]).margin(1e-6));
    }
    for (size_t row = 0; row < 2; ++row) {
      double s[3], mean = 0, var = 0;
      for (size_t c = 0; c < 3; ++c) mean += s[c] = x[row * 3 + c] + skip[row * 3 + c] + bias[c];
      mean /= 3;
      for (double e : s) var += (e - mean) * (e - mean) / 3;
      for (size_t c = 0; c < 3; ++c) {
        const double want = (s[c] - mean) / std::sqrt(var + 1e-5) * gamma[c] + beta[c];
        CHECK(out[2].data<float>()[row * 3 + c] == Approx(want).margin(1e-5));
      }
    }
  }
}

TEST_CASE("Attention computes masked multi-head attention as ONNX Runtime's kernel does",
          "[contrib]") {
  const bool causal = GENERATE(false, true);
  // Weights and bias given at run time without shapes: the head size is unknown at load, so the
  // expansion is forced, with equal Q/K/V parts and the scale computed from the run-time shape.
  const bool shapeless_weights = GENERATE(false, true);
  CAPTURE(causal, shapeless_weights);
  std::vector<Attr> attrs = {Attr("num_heads", int64_t{2})};
  if (causal) attrs.push_back(Attr("unidirectional", int64_t{1}));
  auto b = AttentionModel(attrs);
  const std::vector<float> x = Ramp(12, 0.3f, 0.1f), w = Ramp(48, 0.1f), bias = Ramp(12, 0.05f);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", Floats({1, 3, 4}, x)}};
  if (shapeless_weights) {
    auto* g = b.proto().mutable_graph();
    g->mutable_initializer()->Clear();  // "w" and "b"
    for (const char* name : {"w", "b"}) {
      b.Input(name, {});
      g->mutable_input(g->input_size() - 1)->mutable_type()->mutable_tensor_type()->clear_shape();
    }
    feeds.emplace_back("w", Floats({4, 12}, w));
    feeds.emplace_back("b", Floats({12}, bias));
  }
  auto m = Load(b);
  CHECK(HasNode(*m, "attn/sqrt_head") == shapeless_weights);
  const std::vector<int32_t> mask = {1, 0, 1};
  feeds.emplace_back("mask", Ints32({1, 3}, mask));
  auto out = test::RunRewritten(*m, feeds);
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].shape() == std::vector<int64_t>{1, 3, 4});
  // qkv[s][j] = x[s] . w[:, j] + b[j]; head h uses columns h*2..h*2+1 of each of Q, K, V.
  double qkv[3][12];
  for (int s = 0; s < 3; ++s)
    for (int j = 0; j < 12; ++j) {
      qkv[s][j] = bias[j];
      for (int i = 0; i < 4; ++i) qkv[s][j] += x[s * 4 + i] * w[i * 12 + j];
    }
  for (int h = 0; h < 2; ++h)
    for (int s = 0; s < 3; ++s) {
      double score[3], sum = 0, top = -1e30;
      for (int t = 0; t < 3; ++t) {
        score[t] = (qkv[s][h * 2] * qkv[t][4 + h * 2] + qkv[s][h * 2 + 1] * qkv[t][4 + h * 2 + 1]) /
                   std::sqrt(2.0);
        if (mask[t] == 0) score[t] += -10000.0;
        if (causal && t > s) score[t] += -10000.0;
        top = std::max(top, score[t]);
      }
      for (double& e : score) sum += e = std::exp(e - top);
      for (int d = 0; d < 2; ++d) {
        double want = 0;
        for (int t = 0; t < 3; ++t) want += score[t] / sum * qkv[t][8 + h * 2 + d];
        CHECK(out[0].data<float>()[s * 4 + h * 2 + d] == Approx(want).margin(1e-5));
      }
    }
}

TEST_CASE("EmbedLayerNormalization's mask_index counts the ones of each mask row", "[contrib]") {
  auto b = Builder();
  b.Input("ids", {2, 3}, T::INT32).Input("mask", {2, 3}, T::INT32);
  b.Initializer("word", {5, 2}, Ramp(10, 0.3f)).Initializer("pos", {4, 2}, Ramp(8, 0.2f));
  b.Initializer("g", {2}, {1, 1}).Initializer("beta", {2}, {0, 0});
  b.Node("EmbedLayerNormalization", {"ids", "", "word", "pos", "", "g", "beta", "mask"},
         {"y", "mask_index", "sum"}, {}, "eln", kMs);
  b.Output("y").Output("mask_index", T::INT32).Output("sum");
  auto m = Load(b);
  auto out = test::RunRewritten(*m, {{"ids", Ints32({2, 3}, {0, 4, 2, 1, 1, 3})},
                                     {"mask", Ints32({2, 3}, {1, 0, 1, 1, 1, 2})}});
  REQUIRE(out[1].shape() == std::vector<int64_t>{2});
  CHECK(out[1].data<int32_t>()[0] == 2);  // a hole does not end the count
  CHECK(out[1].data<int32_t>()[1] == 2);  // only ones count
  const auto word = Ramp(10, 0.3f), pos = Ramp(8, 0.2f);
  CHECK(out[2].data<float>()[2] == Approx(word[4 * 2] + pos[1 * 2]));  // ids[0][1] = 4, position 1
}

TEST_CASE("an expansion waits for the shapes the nodes before it give", "[contrib]") {
  // MultiHeadAttention's key comes out of a SkipLayerNormalization on a [B, heads, T, head]
  // tensor: its rank is known only once that node is rewritten and shapes inferred again, and
  // it decides between splitting the key into heads or not.
  auto b = Builder();
  b.Input("q", {1, 3, 4}).Input("k4", {1, 2, 3, 2}).Input("v4", {1, 2, 3, 2});
  b.Initializer("g", {2}, {1, 1});
  b.Node("SkipLayerNormalization", {"k4", "k4", "g"}, {"k_norm"}, {}, "sln", kMs);
  b.Node("Identity", {"k_norm"}, {"k"}, {}, "id");
  b.Node("MultiHeadAttention", {"q", "k", "v4"}, {"y"}, {Attr("num_heads", int64_t{2})}, "mha",
         kMs);
  b.Output("y");
  auto m = Load(b);
  CHECK_FALSE(HasContribNode(*m));
  CHECK(HasNode(*m, "mha/k_bnhs"));
  CHECK_FALSE(HasNode(*m, "mha/k_heads"));  // a 3-D key would have been split into heads
  REQUIRE(m->expanded_nodes.size() == 2);
  CHECK(m->expanded_nodes[1].name == "mha");
}

TEST_CASE("EmbedLayerNormalization feeding Attention leaves no 1-D integer op", "[contrib]") {
  auto b = Builder();
  b.Input("ids", {2, 3}, T::INT32).Input("mask", {2, 3}, T::INT32);
  b.Initializer("word", {5, 4}, Ramp(20, 0.3f)).Initializer("pos", {4, 4}, Ramp(16, 0.2f));
  b.Initializer("g", {4}, {1, 1, 1, 1}).Initializer("beta", {4}, {0, 0, 0, 0});
  b.Initializer("w", {4, 12}, Ramp(48, 0.1f));
  b.Node("EmbedLayerNormalization", {"ids", "", "word", "pos", "", "g", "beta", "mask"},
         {"h", "mask_index"}, {}, "eln", kMs);
  b.Node("Attention", {"h", "w", "", "mask_index"}, {"y"}, {Attr("num_heads", int64_t{2})}, "attn",
         kMs);
  b.Output("y");
  auto m = Load(b);
  // The int32 mask_index is gone: Attention compares positions with the float count.
  CHECK(m->graph.FindValue("mask_index") < 0);
  bool compared = false;
  for (const auto& n : m->graph.nodes) {
    if (n.name != "attn/mask_keep") continue;
    compared = m->graph.values[n.inputs[1]].name == "eln/mask_count";
  }
  CHECK(compared);
}

TEST_CASE("unsupported contrib forms fail with the node, the input or attribute, and a remedy",
          "[contrib]") {
  SECTION("Attention with a KV cache") {
    auto b = Builder();
    b.Input("x", {1, 3, 4}).Input("past", {2, 1, 2, 5, 2});
    b.Initializer("w", {4, 12}, Ramp(48, 0.1f));
    b.Node("Attention", {"x", "w", "", "", "past"}, {"y", "present"},
           {Attr("num_heads", int64_t{2})}, "attn_past", kMs);
    b.Output("y");
    const Status s = LoadError(b);
    CHECK(s.code() == StatusCode::kNotImplemented);
    CHECK_THAT(s.message(), Catch::Contains("node 'attn_past' (com.microsoft.Attention)") &&
                                Catch::Contains("'past'") &&
                                Catch::Contains("without past/present"));
  }
  SECTION("Attention attributes") {
    const Status rotary =
        LoadError(AttentionModel({Attr("num_heads", int64_t{2}), Attr("do_rotary", int64_t{1})}));
    CHECK(rotary.code() == StatusCode::kNotImplemented);
    CHECK_THAT(rotary.message(), Catch::Contains("do_rotary=1") && Catch::Contains("'attn'"));
    const Status shared = LoadError(AttentionModel(
        {Attr("num_heads", int64_t{2}), Attr("past_present_share_buffer", int64_t{1})}));
    CHECK_THAT(shared.message(), Catch::Contains("past_present_share_buffer=1"));
    const Status heads = LoadError(AttentionModel({}));
    CHECK(heads.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(heads.message(), Catch::Contains("num_heads"));
    const Status sizes = LoadError(AttentionModel(
        {Attr("num_heads", int64_t{2}), Attr("qkv_hidden_sizes", std::vector<int64_t>{4, 4})}));
    CHECK(sizes.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(sizes.message(), Catch::Contains("qkv_hidden_sizes must have 3 values"));
    const Status odd = LoadError(AttentionModel(
        {Attr("num_heads", int64_t{3}), Attr("qkv_hidden_sizes", std::vector<int64_t>{4, 4, 4})}));
    CHECK_THAT(odd.message(), Catch::Contains("not a positive multiple of num_heads 3"));
  }
  SECTION("masks") {
    auto b = Builder();
    b.Input("x", {2, 3, 4}).Input("mask", {4}, T::INT32);  // [2 * batch]: left padding
    b.Initializer("w", {4, 12}, Ramp(48, 0.1f));
    b.Node("Attention", {"x", "w", "", "mask"}, {"y"}, {Attr("num_heads", int64_t{2})}, "attn",
           kMs);
    b.Output("y");
    const Status left = LoadError(b);
    CHECK(left.code() == StatusCode::kNotImplemented);
    CHECK_THAT(left.message(), Catch::Contains("[2 * batch]") && Catch::Contains("2-D"));

    auto u = AttentionModel();
    u.proto()
        .mutable_graph()
        ->mutable_input(1)
        ->mutable_type()
        ->mutable_tensor_type()
        ->clear_shape();
    const Status unknown = LoadError(u);
    CHECK_THAT(unknown.message(),
               Catch::Contains("rank of input 'mask'") && Catch::Contains("--input-shape"));
  }
  SECTION("MultiHeadAttention forms") {
    auto packed = Builder();
    packed.Input("qkv", {1, 3, 2, 3, 2});
    packed.Node("MultiHeadAttention", {"qkv"}, {"y"}, {Attr("num_heads", int64_t{2})}, "mha", kMs);
    packed.Output("y");
    const Status p = LoadError(packed);
    CHECK(p.code() == StatusCode::kNotImplemented);
    CHECK_THAT(p.message(), Catch::Contains("'mha' (com.microsoft.MultiHeadAttention)") &&
                                Catch::Contains("packed QKV") &&
                                Catch::Contains("separate inputs"));

    auto past = Builder();
    past.Input("q", {1, 3, 4}).Input("k", {1, 3, 4}).Input("v", {1, 3, 4});
    past.Input("pk", {1, 2, 5, 2}).Input("pv", {1, 2, 5, 2});
    past.Node("MultiHeadAttention", {"q", "k", "v", "", "", "", "pk", "pv"},
              {"y", "present_key", "present_value"}, {Attr("num_heads", int64_t{2})}, "mha", kMs);
    past.Output("y");
    CHECK_THAT(LoadError(past).message(), Catch::Contains("'past_key' / 'past_value'"));

    auto qk = Builder();
    qk.Input("q", {1, 3, 4}).Input("k", {1, 3, 4}).Input("v", {1, 3, 4});
    qk.Node("MultiHeadAttention", {"q", "k", "v"}, {"y", "", "", "qk"},
            {Attr("num_heads", int64_t{2})}, "mha", kMs);
    qk.Output("y").Output("qk");
    CHECK_THAT(LoadError(qk).message(), Catch::Contains("output 'qk'"));
  }
  SECTION("old opsets") {
    auto b = Builder(10);
    b.Input("x", {2, 3});
    b.Node("Gelu", {"x"}, {"y"}, {}, "gelu", kMs);
    b.Output("y");
    const Status s = LoadError(b);
    CHECK(s.code() == StatusCode::kNotImplemented);
    CHECK_THAT(s.message(), Catch::Contains("opset >= 11") && Catch::Contains("opset 10"));
  }
}

TEST_CASE("ortc reports the expanded contrib nodes and refuses unsupported ones with exit 4",
          "[contrib][cli]") {
  TempDir dir;
  AttentionModel().Save(dir / "attn.onnx");
  auto text = RunOrtc("partition " + (dir / "attn.onnx").string() + " --ep cpu");
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out,
             Catch::Contains("contrib ops: 1 com.microsoft node(s) expanded into standard ops: "
                             "Attention"));
  auto json = RunOrtc("partition " + (dir / "attn.onnx").string() + " --ep cpu --json");
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  REQUIRE(j["expanded"].size() == 1);
  CHECK(j["expanded"][0]["node"] == "attn");
  CHECK(j["expanded"][0]["op"] == "com.microsoft::Attention");
  CHECK(j["unplaced"].empty());

  AttentionModel({Attr("num_heads", int64_t{2}), Attr("do_rotary", int64_t{1})})
      .Save(dir / "rotary.onnx");
  auto refused = RunOrtc("compile " + (dir / "rotary.onnx").string() + " --ep cpu -q", true);
  CHECK(refused.exit_code == 4);
  CHECK_THAT(refused.out, Catch::Contains("do_rotary=1"));
}
