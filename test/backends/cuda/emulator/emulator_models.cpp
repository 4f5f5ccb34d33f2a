// The emulator's small test models, built in code with deterministic random weights.
#include "emulator_models.h"

#include "test_data.h"

namespace ortc::test::cuda {
namespace {

int64_t Count(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// Random weights in [-scale, scale), distinct per name through the seed.
void Weight(ModelBuilder& b, const std::string& name, std::vector<int64_t> dims, unsigned seed,
            float scale = 0.5f, float offset = 0.f) {
  auto v = RandomFloats(seed, static_cast<size_t>(Count(dims)));
  for (float& x : v) x = x * scale + offset;
  b.Initializer(name, std::move(dims), std::move(v));
}

}  // namespace

TestModel ConvBlockModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {1, 4, 8, 8}}}};
  auto& b = m.builder;
  b.Input("x", {1, 4, 8, 8});
  Weight(b, "W1", {8, 4, 3, 3}, 11);
  Weight(b, "B1", {8}, 12);
  Weight(b, "bn_scale", {8}, 13, 0.25f, 1.f);
  Weight(b, "bn_bias", {8}, 14);
  Weight(b, "bn_mean", {8}, 15);
  Weight(b, "bn_var", {8}, 16, 0.25f, 1.f);
  Weight(b, "W2", {8, 8, 3, 3}, 17, 0.3f);
  Weight(b, "W3", {8, 1, 3, 3}, 18);
  Weight(b, "B3", {8}, 19);
  Weight(b, "W4", {8, 4, 2, 2}, 20);
  Weight(b, "B4", {4}, 21);
  Weight(b, "W5", {4, 4, 3, 3}, 22);
  const std::vector<int64_t> p1 = {1, 1, 1, 1};
  b.Node("Conv", {"x", "W1", "B1"}, {"c1"}, {Attr("pads", p1)}, "conv1");
  b.Node("BatchNormalization", {"c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"}, {"bn"}, {},
         "bn");
  b.Node("Relu", {"bn"}, {"r1"}, {}, "relu1");
  b.Node("Conv", {"r1", "W2"}, {"c2"}, {Attr("pads", p1)}, "conv2");
  b.Node("Add", {"c2", "r1"}, {"res"}, {}, "residual");
  b.Node("Relu", {"res"}, {"r2"}, {}, "relu2");
  b.Node("Conv", {"r2", "W3", "B3"}, {"dw"},
         {Attr("pads", p1), Attr("group", int64_t{8}), Attr("strides", std::vector<int64_t>{2, 2})},
         "depthwise");
  b.Node("Relu", {"dw"}, {"r3"}, {}, "relu3");
  b.Node("ConvTranspose", {"r3", "W4", "B4"}, {"up"}, {Attr("strides", std::vector<int64_t>{2, 2})},
         "up");
  b.Node("Conv", {"up", "W5"}, {"y"},
         {Attr("pads", std::vector<int64_t>{2, 2, 2, 2}),
          Attr("dilations", std::vector<int64_t>{2, 2})},
         "dilated");
  b.Node("MaxPool", {"y"}, {"mp"},
         {Attr("kernel_shape", std::vector<int64_t>{2, 2}),
          Attr("strides", std::vector<int64_t>{2, 2})},
         "maxpool");
  b.Node("GlobalAveragePool", {"mp"}, {"gap"}, {}, "gap");
  b.Output("y").Output("gap");
  return m;
}

TestModel Relu6BlockModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {1, 4, 8, 8}}}};
  auto& b = m.builder;
  b.Input("x", {1, 4, 8, 8});
  Weight(b, "W1", {8, 4, 1, 1}, 31, 0.8f);
  Weight(b, "B1", {8}, 32, 2.f, 5.f);
  Weight(b, "W2", {8, 1, 3, 3}, 33, 0.8f);
  Weight(b, "W3", {4, 8, 1, 1}, 34);
  Weight(b, "B3", {4}, 35);
  b.Initializer("zero", {}, {0.f}).Initializer("six", {}, {6.f});
  const std::vector<int64_t> p1 = {1, 1, 1, 1};
  // Expand (1x1 + bias, ReLU6), depthwise (no bias, ReLU6), project (1x1 + bias) + residual:
  // the bias (3 to 7) and the depthwise sums put many values beyond 6 and below 0.
  b.Node("Conv", {"x", "W1", "B1"}, {"e"}, {}, "expand");
  b.Node("Clip", {"e", "zero", "six"}, {"e6"}, {}, "relu6_expand");
  b.Node("Conv", {"e6", "W2"}, {"d"}, {Attr("pads", p1), Attr("group", int64_t{8})}, "depthwise");
  b.Node("Clip", {"d", "zero", "six"}, {"d6"}, {}, "relu6_depthwise");
  b.Node("Conv", {"d6", "W3", "B3"}, {"p"}, {}, "project");
  b.Node("Add", {"p", "x"}, {"y"}, {}, "residual");
  b.Output("y");
  return m;
}

TestModel Conv1dModel() {
  TestModel m{ModelBuilder(17, 8), {{"s", {2, 6, 10}}}};
  auto& b = m.builder;
  b.Input("s", {2, 6, 10});
  Weight(b, "Wg", {4, 3, 3}, 31);
  Weight(b, "Bg", {4}, 32);
  b.Node("Conv", {"s", "Wg", "Bg"}, {"g"},
         {Attr("pads", std::vector<int64_t>{1, 1}), Attr("group", int64_t{2})}, "grouped1d");
  b.Node("Relu", {"g"}, {"o"}, {}, "relu");
  b.Output("o");
  return m;
}

TestModel GroupedConvsModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {1, 6, 9, 11}}}};
  auto& b = m.builder;
  b.Input("x", {1, 6, 9, 11});
  Weight(b, "Wd", {6, 1, 3, 3}, 51, 0.8f);
  Weight(b, "Bd", {6}, 52);
  Weight(b, "Wm", {12, 1, 5, 5}, 53, 0.5f);
  Weight(b, "Wg", {6, 4, 3, 3}, 54, 0.4f);
  Weight(b, "Bg", {6}, 55);
  b.Initializer("zero", {}, {0.f}).Initializer("six", {}, {6.f});
  b.Node("Conv", {"x", "Wd", "Bd"}, {"d"},
         {Attr("pads", std::vector<int64_t>{1, 1, 1, 1}), Attr("group", int64_t{6})}, "depthwise");
  b.Node("Add", {"d", "x"}, {"dz"}, {}, "residual");
  b.Node("Relu", {"dz"}, {"r"}, {}, "relu");
  b.Node("Conv", {"r", "Wm"}, {"mm"},
         {Attr("pads", std::vector<int64_t>{2, 2, 2, 2}),
          Attr("strides", std::vector<int64_t>{2, 2}), Attr("group", int64_t{6})},
         "multiplier");
  b.Node("Clip", {"mm", "zero", "six"}, {"m6"}, {}, "relu6");
  b.Node("Conv", {"m6", "Wg", "Bg"}, {"y"},
         {Attr("pads", std::vector<int64_t>{2, 2, 2, 2}),
          Attr("dilations", std::vector<int64_t>{2, 2}), Attr("group", int64_t{3})},
         "grouped");
  b.Output("y");
  return m;
}

TestModel MatmulBlockModel() {
  TestModel m{ModelBuilder(20, 9), {{"x", {2, 6, 16}}, {"x2", {4, 16}}}};
  auto& b = m.builder;
  b.Input("x", {2, 6, 16}).Input("x2", {4, 16});
  Weight(b, "W1", {16, 32}, 41, 0.4f);
  Weight(b, "B1", {32}, 42);
  Weight(b, "W2", {32, 16}, 43, 0.3f);
  Weight(b, "ln_scale", {16}, 44, 0.25f, 1.f);
  Weight(b, "ln_bias", {16}, 45);
  Weight(b, "W3", {8, 16}, 46);
  Weight(b, "C3", {8}, 47);
  Weight(b, "W4", {8, 8}, 48);
  Weight(b, "C4", {4, 8}, 49);
  b.IntInitializer("shape4", {2, 6, 4, 4});
  b.IntInitializer("starts", {1}).IntInitializer("ends", {5}).IntInitializer("axes", {2});
  b.Node("MatMul", {"x", "W1"}, {"h0"}, {}, "fc1");
  b.Node("Add", {"h0", "B1"}, {"h1"}, {}, "fc1_bias");
  b.Node("Gelu", {"h1"}, {"h"}, {Attr("approximate", "tanh")}, "gelu");
  b.Node("MatMul", {"h", "W2"}, {"f"}, {}, "fc2");
  b.Node("Add", {"f", "x"}, {"fr"}, {}, "residual");
  b.Node("LayerNormalization", {"fr", "ln_scale", "ln_bias"}, {"ln"}, {Attr("axis", int64_t{-1})},
         "ln");
  b.Node("Transpose", {"ln"}, {"lt"}, {Attr("perm", std::vector<int64_t>{0, 2, 1})}, "lt");
  b.Node("MatMul", {"ln", "lt"}, {"scores"}, {}, "scores");
  b.Node("Softmax", {"scores"}, {"att"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Node("MatMul", {"att", "ln"}, {"ctx"}, {}, "context");
  b.Node("Reshape", {"ctx", "shape4"}, {"ctx4"}, {}, "split_heads");
  b.Node("Transpose", {"ctx4"}, {"heads"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})},
         "heads");
  b.Node("Slice", {"heads", "starts", "ends", "axes"}, {"sl"}, {}, "slice");
  b.Node("Concat", {"sl", "sl"}, {"out1"}, {Attr("axis", int64_t{1})}, "concat");
  b.Node("Gemm", {"x2", "W3", "C3"}, {"g3"}, {Attr("transB", int64_t{1})}, "gemm_tb");
  b.Node("Relu", {"g3"}, {"out2"}, {}, "gemm_relu");
  b.Node("Gemm", {"out2", "W4", "C4"}, {"out3"}, {Attr("alpha", 0.5f), Attr("beta", 2.0f)},
         "gemm_ab");
  b.Output("out1").Output("out3");
  return m;
}

TestModel PoolResizeModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {1, 3, 8, 8}}}};
  auto& b = m.builder;
  b.Input("x", {1, 3, 8, 8});
  b.Initializer("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  Weight(b, "W", {5, 3, 1, 1}, 51);
  b.Node("AveragePool", {"x"}, {"ap"},
         {Attr("kernel_shape", std::vector<int64_t>{3, 3}),
          Attr("pads", std::vector<int64_t>{1, 1, 1, 1})},
         "avgpool");
  b.Node("Resize", {"ap", "", "scales"}, {"rs"}, {Attr("mode", "nearest")}, "resize");
  b.Node(
      "MaxPool", {"rs"}, {"mp"},
      {Attr("kernel_shape", std::vector<int64_t>{3, 3}),
       Attr("strides", std::vector<int64_t>{2, 2}), Attr("pads", std::vector<int64_t>{1, 1, 1, 1})},
      "maxpool");
  b.Node("Conv", {"mp", "W"}, {"c"}, {}, "pointwise");
  b.Node("Sigmoid", {"c"}, {"y"}, {}, "sigmoid");
  b.Output("y");
  return m;
}

TestModel SplitPoolModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {2, 3, 40, 40}}}};
  auto& b = m.builder;
  b.Input("x", {2, 3, 40, 40});
  Weight(b, "W1", {40, 3, 3, 3}, 131);
  Weight(b, "B1", {40}, 132);
  Weight(b, "W2", {8, 40, 1, 1}, 133);
  const std::vector<int64_t> p1 = {1, 1, 1, 1};
  b.Node("Conv", {"x", "W1", "B1"}, {"c1"}, {Attr("pads", p1)}, "conv1");
  b.Node("Relu", {"c1"}, {"r1"}, {}, "relu1");
  b.Node("GlobalAveragePool", {"r1"}, {"gap"}, {}, "gap");
  b.Node("Sigmoid", {"gap"}, {"gate"}, {}, "gate");
  b.Node("Mul", {"r1", "gate"}, {"se"}, {}, "se_mul");
  b.Node("Conv", {"se", "W2"}, {"c2"}, {}, "conv2");
  b.Node("GlobalMaxPool", {"c1"}, {"gmp"}, {}, "gmp");
  b.Output("c2").Output("gmp");
  return m;
}

TestModel NhwcPoolModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {2, 4, 10, 10}}}};
  auto& b = m.builder;
  b.Input("x", {2, 4, 10, 10});
  Weight(b, "W1", {8, 4, 3, 3}, 101);
  Weight(b, "B1", {8}, 102);
  Weight(b, "W2", {8, 8, 3, 3}, 103, 0.3f);
  Weight(b, "W3", {16, 8, 1, 1}, 104);
  Weight(b, "B3", {16}, 105);
  Weight(b, "Wse", {4, 16, 1, 1}, 106);
  Weight(b, "Wfc", {5, 16}, 107);
  Weight(b, "Bfc", {5}, 108);
  const std::vector<int64_t> k3 = {3, 3}, s2 = {2, 2}, p1 = {1, 1, 1, 1};
  b.Node("Conv", {"x", "W1", "B1"}, {"c1"}, {Attr("pads", p1)}, "conv1");
  b.Node("Relu", {"c1"}, {"r1"}, {}, "relu1");
  // ceil_mode: 10 rows padded to 12 give 6 windows of 3 with stride 2 (5 without it).
  b.Node("MaxPool", {"r1"}, {"mp"},
         {Attr("kernel_shape", k3), Attr("strides", s2), Attr("pads", p1),
          Attr("ceil_mode", int64_t{1})},
         "maxpool");
  b.Node("Conv", {"mp", "W2"}, {"c2"}, {Attr("pads", p1)}, "conv2");
  b.Node("Add", {"c2", "mp"}, {"res"}, {}, "residual");
  b.Node("Relu", {"res"}, {"r2"}, {}, "relu2");
  b.Node("AveragePool", {"r2"}, {"ap"}, {Attr("kernel_shape", k3), Attr("pads", p1)},
         "avgpool_exclude");
  b.Node("MaxPool", {"ap"}, {"mpd"},
         {Attr("kernel_shape", std::vector<int64_t>{2, 2}),
          Attr("dilations", std::vector<int64_t>{2, 2})},
         "maxpool_dilated");
  b.Node("Conv", {"mpd", "W3", "B3"}, {"c3"}, {}, "pointwise");
  b.Node("GlobalAveragePool", {"c3"}, {"gap"}, {}, "gap");
  b.Node("Flatten", {"gap"}, {"f"}, {Attr("axis", int64_t{1})}, "flatten");
  b.Node("Gemm", {"f", "Wfc", "Bfc"}, {"logits"}, {Attr("transB", int64_t{1})}, "fc");
  b.Node("Conv", {"gap", "Wse"}, {"se"}, {}, "squeeze");
  b.Node("GlobalMaxPool", {"c3"}, {"gmp"}, {}, "gmp");
  b.Node("AveragePool", {"c3"}, {"api"},
         {Attr("kernel_shape", k3), Attr("strides", s2), Attr("pads", p1),
          Attr("count_include_pad", int64_t{1})},
         "avgpool_include");
  b.Output("logits").Output("se").Output("gmp").Output("api");
  return m;
}

TestModel ConvAddBroadcastModel(std::vector<int64_t> addend_dims) {
  TestModel m{ModelBuilder(17, 8), {{"x", {1, 8, 8, 8}}}};
  auto& b = m.builder;
  b.Input("x", {1, 8, 8, 8});
  Weight(b, "W", {8, 8, 1, 1}, 61);
  Weight(b, "V", std::move(addend_dims), 62, 4.f);
  b.Node("Conv", {"x", "W"}, {"c"}, {}, "conv");
  b.Node("Add", {"c", "V"}, {"y"}, {}, "add");
  b.Output("y");
  return m;
}

TestModel ConvTransposeModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {1, 4, 4, 4}}}};
  auto& b = m.builder;
  b.Input("x", {1, 4, 4, 4});
  Weight(b, "W1", {4, 2, 3, 3}, 71);
  Weight(b, "B1", {4}, 72);
  Weight(b, "W2", {4, 3, 2, 2}, 73);
  b.Node(
      "ConvTranspose", {"x", "W1", "B1"}, {"t1"},
      {Attr("pads", std::vector<int64_t>{1, 1, 1, 1}), Attr("strides", std::vector<int64_t>{2, 2}),
       Attr("output_padding", std::vector<int64_t>{1, 1}), Attr("group", int64_t{2})},
      "up_grouped");
  b.Node("ConvTranspose", {"t1", "W2"}, {"y"}, {Attr("dilations", std::vector<int64_t>{2, 2})},
         "up_dilated");
  b.Output("y");
  return m;
}

TestModel GemmBetaModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {3, 8}}}};
  auto& b = m.builder;
  b.Input("x", {3, 8});
  Weight(b, "W", {8, 4}, 81);
  Weight(b, "C", {4}, 82);
  b.Node("Relu", {"x"}, {"r"}, {}, "relu_in");
  b.Node("Gemm", {"r", "W", "C"}, {"g"}, {Attr("beta", 0.5f)}, "gemm_beta");
  b.Node("Relu", {"g"}, {"y"}, {}, "relu_out");
  b.Output("y");
  return m;
}

TestModel DecodeRowModel() {
  TestModel m{ModelBuilder(18, 8), {{"x", {1, 1, 8}}}};
  auto& b = m.builder;
  b.Input("x", {1, 1, 8});
  Weight(b, "W", {8, 24}, 97);
  b.IntInitializer("parts", {8, 8, 8}).IntInitializer("last", {-1});
  b.IntInitializer("no_rows", {0, 0, 0, 0, 0, 0});
  b.Node("MatMul", {"x", "W"}, {"qkv"}, {}, "merged");
  b.Node("Split", {"qkv", "parts"}, {"q", "k", "v"}, {Attr("axis", int64_t{-1})}, "split");
  b.Node("Softmax", {"q"}, {"p"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Node("Transpose", {"k"}, {"kt"}, {Attr("perm", std::vector<int64_t>{1, 0, 2})}, "unit_t");
  b.Node("ReduceSum", {"kt", "last"}, {"ks"}, {}, "sum");
  b.Node("Pad", {"v", "no_rows"}, {"vp"}, {}, "zero_pad");
  b.Node("Relu", {"vp"}, {"vr"}, {}, "relu");
  b.Output("p").Output("ks").Output("vr");
  return m;
}

TestModel CacheAppendModel() {
  TestModel m{ModelBuilder(18, 8),
              {{"x", {1, 1, 16}},
               {"q", {1, 4, 1, 8}},
               {"past_key", {1, 2, 7, 8}},
               {"past_value", {1, 2, 7, 8}}}};
  auto& b = m.builder;
  b.Input("x", {1, 1, 16}).Input("q", {1, 4, 1, 8});
  b.Input("past_key", {1, 2, 7, 8}).Input("past_value", {1, 2, 7, 8});
  b.IntInitializer("row", {1, 1, 2, 8}).IntInitializer("ax2", {2}).IntInitializer("last", {-1});
  b.IntInitializer("rep", {1, 2, 2, 8, 8}).IntInitializer("heads4", {1, 4, 8, 8});
  b.Initializer("scale", {}, {0.35355339f});
  for (const char* t : {"key", "value"}) {
    const std::string n = t;
    Weight(b, "w_" + n, {16, 16}, n == "key" ? 81 : 82, 0.25f);
    b.Node("MatMul", {"x", "w_" + n}, {n + "_proj"});
    b.Node("Reshape", {n + "_proj", "row"}, {n + "_row"});
    b.Node("Transpose", {n + "_row"}, {n + "_new"},
           {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
    b.Node("Concat", {"past_" + n, n + "_new"}, {n + "_cat"}, {Attr("axis", int64_t{2})},
           n + "_append");
    b.Node("Identity", {n + "_cat"}, {"present_" + n}).Output("present_" + n);
    b.Node("Unsqueeze", {n + "_cat", "ax2"}, {n + "5"}).Node("Expand", {n + "5", "rep"}, {n + "e"});
    b.Node("Reshape", {n + "e", "heads4"}, {n + "r"});
  }
  b.Node("Transpose", {"keyr"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
  b.Node("MatMul", {"q", "kt"}, {"qk"}).Node("Mul", {"qk", "scale"}, {"scores"});
  b.Node("Softmax", {"scores"}, {"p"}, {Attr("axis", int64_t{-1})});
  b.Node("MatMul", {"p", "valuer"}, {"y"}).Output("y");
  b.Node("ReduceSum", {"key_cat", "last"}, {"key_sum"}).Output("key_sum");
  return m;
}

TestModel HeadModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {2, 3, 6, 6}}, {"q", {3, 4, 5}}}};
  auto& b = m.builder;
  b.Input("x", {2, 3, 6, 6}).Input("q", {3, 4, 5});
  Weight(b, "W", {4, 3, 3, 3}, 91);
  Weight(b, "B", {4}, 92);
  Weight(b, "Wfc", {5, 36}, 93, 0.2f);
  Weight(b, "Bfc", {5}, 94);
  Weight(b, "Wm", {2, 4}, 95);
  b.Node(
      "Conv", {"x", "W", "B"}, {"c"},
      {Attr("strides", std::vector<int64_t>{2, 2}), Attr("pads", std::vector<int64_t>{1, 1, 1, 1})},
      "conv");
  b.Node("Relu", {"c"}, {"r"}, {}, "relu");
  b.Node("Flatten", {"r"}, {"f"}, {Attr("axis", int64_t{1})}, "flatten");
  b.Node("Gemm", {"f", "Wfc", "Bfc"}, {"logits"}, {Attr("transB", int64_t{1})}, "fc");
  b.Node("MatMul", {"Wm", "q"}, {"mq"}, {}, "left_weight");
  b.Output("c").Output("logits").Output("mq");
  return m;
}

}  // namespace ortc::test::cuda

namespace ortc::test::cuda {

TestModel SeBlockModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {2, 3, 9, 8}}}};
  auto& b = m.builder;
  b.Input("x", {2, 3, 9, 8});
  Weight(b, "W1", {8, 3, 3, 3}, 111);
  Weight(b, "B1", {8}, 112);
  Weight(b, "Wsq", {4, 8, 1, 1}, 113);
  Weight(b, "Bsq", {4}, 114);
  Weight(b, "Wex", {8, 4, 1, 1}, 115);
  Weight(b, "Bex", {8}, 116);
  Weight(b, "W2", {8, 8, 1, 1}, 117);
  Weight(b, "scale", {8, 1, 1}, 118, 0.5f, 1.f);
  Weight(b, "shift", {1, 8, 1, 1}, 119);
  Weight(b, "mean", {8, 1, 1}, 120);
  Weight(b, "div", {1, 8, 1, 1}, 121, 0.25f, 1.f);
  Weight(b, "slope", {8}, 122, 0.2f);
  Weight(b, "along_w", {8}, 123);
  Weight(b, "W3", {6, 8, 3, 3}, 124, 0.3f);
  const std::vector<int64_t> p1 = {1, 1, 1, 1};
  b.Node("Conv", {"x", "W1", "B1"}, {"c1"}, {Attr("pads", p1)}, "conv1");
  b.Node("HardSwish", {"c1"}, {"h"}, {}, "hswish");
  b.Node("GlobalAveragePool", {"h"}, {"gap"}, {}, "gap");
  b.Node("Conv", {"gap", "Wsq", "Bsq"}, {"sq"}, {}, "squeeze");
  b.Node("Relu", {"sq"}, {"sqr"}, {}, "squeeze_relu");
  b.Node("Conv", {"sqr", "Wex", "Bex"}, {"ex"}, {}, "excite");
  b.Node("HardSigmoid", {"ex"}, {"s"}, {}, "gate");
  b.Node("Mul", {"h", "s"}, {"xs"}, {}, "se_mul");
  b.Node("Add", {"h", "xs"}, {"se"}, {}, "se_residual");
  b.Node("Conv", {"se", "W2"}, {"c2"}, {}, "conv2");
  b.Node("Mul", {"c2", "scale"}, {"t1"}, {}, "scale");
  b.Node("Add", {"t1", "shift"}, {"t2"}, {}, "shift");
  b.Node("Sub", {"t2", "mean"}, {"t3"}, {}, "center");
  b.Node("Div", {"t3", "div"}, {"t4"}, {}, "normalize");
  b.Node("PRelu", {"t4", "slope"}, {"t5"}, {}, "prelu");
  // [8] aligns with W (8), not with the channels: a broadcast along W on NHWC data.
  b.Node("Add", {"t5", "along_w"}, {"t6"}, {}, "add_along_w");
  b.Node("Conv", {"t6", "W3"}, {"y"}, {Attr("pads", p1)}, "conv3");
  b.Output("y").Output("s");
  return m;
}

TestModel FpnModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {1, 3, 16, 12}}}};
  auto& b = m.builder;
  b.Input("x", {1, 3, 16, 12});
  b.Initializer("up2", {4}, {1.f, 1.f, 2.f, 2.f});
  b.IntInitializer("full", {1, 4, 16, 12});
  Weight(b, "W1", {6, 3, 3, 3}, 131);
  Weight(b, "W2", {6, 6, 3, 3}, 132, 0.3f);
  Weight(b, "W3", {6, 6, 3, 3}, 133, 0.3f);
  Weight(b, "Wa", {4, 6, 1, 1}, 134);
  Weight(b, "Wb", {4, 6, 1, 1}, 135);
  Weight(b, "Wc", {4, 6, 1, 1}, 136);
  Weight(b, "Wd", {4, 3, 3, 3}, 137);
  Weight(b, "Wh", {2, 16, 3, 3}, 138, 0.2f);
  Weight(b, "Wt", {3, 4, 1, 1}, 139);
  const std::vector<int64_t> p1 = {1, 1, 1, 1}, s2 = {2, 2};
  b.Node("Conv", {"x", "W1"}, {"f1"}, {Attr("pads", p1), Attr("strides", s2)}, "conv_f1");  // 8x6
  b.Node("Relu", {"f1"}, {"r1"}, {}, "relu_f1");
  b.Node("Conv", {"r1", "W2"}, {"f2"}, {Attr("pads", p1), Attr("strides", s2)}, "conv_f2");  // 4x3
  b.Node("Resize", {"f2", "", "up2"}, {"u2"},
         {Attr("mode", "nearest"), Attr("coordinate_transformation_mode", "asymmetric"),
          Attr("nearest_mode", "floor")},
         "up_f2");
  b.Node("Add", {"r1", "u2"}, {"m1"}, {}, "merge");
  b.Node("Conv", {"m1", "W3"}, {"p1"}, {Attr("pads", p1)}, "smooth");
  // Each map to 4 channels at full size, bilinear by sizes or nearest by scales.
  b.Node("Conv", {"f2", "Wa"}, {"a"}, {}, "lat_a");
  b.Node("Resize", {"a", "", "", "full"}, {"ua"},
         {Attr("mode", "linear"), Attr("coordinate_transformation_mode", "half_pixel")}, "up_a");
  b.Node("Conv", {"p1", "Wb"}, {"bb"}, {}, "lat_b");
  b.Node("Resize", {"bb", "", "up2"}, {"ub"}, {Attr("mode", "nearest")}, "up_b");
  b.Node("Conv", {"m1", "Wc"}, {"cc"}, {}, "lat_c");
  b.Node("Resize", {"cc", "", "", "full"}, {"uc"},
         {Attr("mode", "linear"), Attr("coordinate_transformation_mode", "align_corners")}, "up_c");
  b.Node("Conv", {"x", "Wd"}, {"d"}, {Attr("pads", p1)}, "lat_d");
  b.Node("Concat", {"ua", "ub", "uc", "d"}, {"cat"}, {Attr("axis", int64_t{1})}, "concat");
  b.Node("Conv", {"cat", "Wh"}, {"head"}, {Attr("pads", p1)}, "head");
  b.Node("Sigmoid", {"head"}, {"y"}, {}, "prob");
  // Concat on H of two NHWC maps, read by a convolution: a second axis.
  b.Node("Concat", {"ua", "ub"}, {"tall"}, {Attr("axis", int64_t{2})}, "concat_h");
  b.Node("Conv", {"tall", "Wt"}, {"y2"}, {}, "tall_conv");
  b.Output("y").Output("y2");
  return m;
}

TestModel PadConvModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {2, 4, 7, 9}}}};
  auto& b = m.builder;
  b.Input("x", {2, 4, 7, 9});
  b.IntInitializer("pads_reflect", {0, 0, 1, 2, 0, 0, 2, 1});
  b.IntInitializer("pads_const", {0, 0, 1, 1, 0, 0, 1, 1});
  b.IntInitializer("pads_edge", {0, 0, 0, 1, 0, 0, 1, 0});
  b.IntInitializer("pads_channels", {0, 1, 0, 0, 0, 2, 0, 0});
  b.Initializer("value", {}, {0.75f});
  Weight(b, "W1", {6, 4, 3, 3}, 141);
  Weight(b, "W2", {6, 6, 3, 3}, 142, 0.3f);
  Weight(b, "W3", {5, 6, 3, 3}, 143, 0.3f);
  Weight(b, "W4", {4, 8, 1, 1}, 144);
  b.Node("Conv", {"x", "W1"}, {"c1"}, {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})}, "conv1");
  b.Node("Relu", {"c1"}, {"r1"}, {}, "relu1");
  b.Node("Pad", {"r1", "pads_reflect"}, {"p1"}, {Attr("mode", "reflect")}, "pad_reflect");
  b.Node("Conv", {"p1", "W2"}, {"c2"}, {}, "conv2");  // 8x10
  b.Node("Pad", {"c2", "pads_const", "value"}, {"p2"}, {Attr("mode", "constant")}, "pad_const");
  b.Node("Conv", {"p2", "W3"}, {"c3"}, {}, "conv3");  // 8x10
  b.Node("Pad", {"c3", "pads_edge"}, {"p3"}, {Attr("mode", "edge")}, "pad_edge");
  b.Node("MaxPool", {"p3"}, {"mp"},
         {Attr("kernel_shape", std::vector<int64_t>{2, 2}),
          Attr("strides", std::vector<int64_t>{2, 2})},
         "pool");
  b.Node("Pad", {"c3", "pads_channels"}, {"pc"}, {Attr("mode", "constant")}, "pad_channels");
  b.Node("Conv", {"pc", "W4"}, {"y"}, {}, "conv4");
  b.Output("y").Output("mp").Output("p2");
  return m;
}

TestModel InputLayoutsModel() {
  TestModel m{ModelBuilder(17, 8), {{"x", {2, 3, 6, 5}}, {"g", {1, 1, 6, 6}}}};
  auto& b = m.builder;
  b.Input("x", {2, 3, 6, 5}).Input("g", {1, 1, 6, 6});
  Weight(b, "W", {4, 3, 3, 3}, 151);
  Weight(b, "B", {4}, 152);
  Weight(b, "Wg", {3, 1, 3, 3}, 153);
  const std::vector<int64_t> p1 = {1, 1, 1, 1};
  b.Node("Conv", {"x", "W", "B"}, {"c"}, {Attr("pads", p1)}, "conv");
  b.Node("Relu", {"c"}, {"r"}, {}, "relu");
  b.Node("Softmax", {"x"}, {"sm"}, {Attr("axis", int64_t{-1})}, "softmax");
  // One graph reads x three ways: the Concat joins the convolution's and the Softmax's results.
  b.Node("Concat", {"r", "sm"}, {"cat"}, {Attr("axis", int64_t{1})}, "concat");
  b.Node("Transpose", {"x"}, {"xt"}, {Attr("perm", std::vector<int64_t>{0, 2, 3, 1})},
         "transpose_x");
  // r exists NHWC (at tensor-core precisions): this Transpose reads it so.
  b.Node("Transpose", {"r"}, {"rt"}, {Attr("perm", std::vector<int64_t>{0, 3, 1, 2})},
         "transpose_r");
  b.Node("Conv", {"g", "Wg"}, {"gc"}, {Attr("pads", p1)}, "gray_conv");
  b.Output("c").Output("cat").Output("xt").Output("rt").Output("gc");
  return m;
}

}  // namespace ortc::test::cuda
