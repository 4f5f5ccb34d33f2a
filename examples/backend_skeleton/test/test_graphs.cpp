// Builders for the test graphs: the QDQ Conv unit and the QDQ MatMul unit, their weights inline
// or in an external data file.
#include "test_graphs.h"

#include <fstream>
#include <utility>

#include "test_support.h"

namespace npu_test {

void BuildConv(ConvGraph& t, const ConvOptions& o) {
  GraphBuilder& g = t.g;
  const ConvSpec& s = t.spec;
  t.x = RandomVector<int8_t>(static_cast<size_t>(s.n * s.c * s.h * s.w), -100, 100);
  t.w = RandomVector<int8_t>(static_cast<size_t>(s.m * s.c * s.kh * s.kw), -127, 127);
  t.b = RandomVector<int32_t>(static_cast<size_t>(s.m), -3000, 3000);
  std::vector<int64_t> x_dims{s.n, s.c, s.h, s.w};
  if (o.dynamic_x) x_dims[2] = -1;
  t.x_q = g.Value("x", kInt8, x_dims, true);
  const int x_f = g.Value("x_f", kFloat, x_dims);
  int w_q;
  if (o.external_weight) {
    std::ofstream(o.file, std::ios::binary) << std::string(16, 'p') << Bytes(t.w);
    w_q = g.External("w", kInt8, {s.m, s.c, s.kh, s.kw}, o.file, 16, t.w.size());
  } else {
    w_q = g.Constant("w", kInt8, {s.m, s.c, s.kh, s.kw}, Bytes(t.w));
  }
  const int w_f = g.Value("w_f", kFloat, {s.m, s.c, s.kh, s.kw});
  const int b_q = g.Constant("b", kInt32, {s.m}, Bytes(t.b));
  const int b_f = g.Value("b_f", kFloat, {s.m});
  const int y_f = g.Value("y_f", kFloat, {s.n, s.m, s.oh(), s.ow()});
  t.y_q = g.Value("y", kInt8, {s.n, s.m, s.oh(), s.ow()});
  g.MarkOutput(t.y_q);
  const int sx = g.Scale("x_scale", static_cast<float>(t.qx.scale));
  const int zx = g.ZeroPoint("x_zero", kInt8, t.qx.zero);
  const int sw = o.per_channel_w
                     ? g.Constant("w_scale", kFloat, {3}, Bytes<float>({t.sw, t.sw, t.sw}))
                     : g.Scale("w_scale", t.sw);
  const int zw = g.ZeroPoint("w_zero", kInt8, 0);
  const int sb = g.Scale("b_scale", t.sb);
  const int sy = g.Scale("y_scale", static_cast<float>(t.qy.scale));
  const int zy = g.ZeroPoint("y_zero", kInt8, t.qy.zero);
  std::vector<Attr> attrs = o.attrs;
  if (attrs.empty())
    attrs = {Ints("pads", {1, 1, 1, 1}), Ints("strides", {1, 1}), Ints("kernel_shape", {3, 3}),
             Int("group", 1)};
  t.unit = {g.Node("DequantizeLinear", {t.x_q, sx, zx}, {x_f}),
            g.Node("DequantizeLinear", {w_q, sw, zw}, {w_f}),
            g.Node("DequantizeLinear", {b_q, sb}, {b_f}),
            g.Node("Conv", {x_f, w_f, b_f}, {y_f}, attrs),
            g.Node("QuantizeLinear", {y_f, sy, zy}, {t.y_q})};
  if (o.relu_beside) {
    const int r_in = g.Value("r_in", kFloat, {4}, true);
    const int r_out = g.Value("r_out", kFloat, {4});
    g.MarkOutput(r_out);
    t.relu = g.Node("Relu", {r_in}, {r_out});
  }
  if (o.relu_on_x) {
    const int r_out = g.Value("x_relu", kFloat, x_dims);
    g.MarkOutput(r_out);
    t.relu = g.Node("Relu", {x_f}, {r_out});
  }
}

MatMulUnit AddMatMul(GraphBuilder& g, const std::string& tag, int a_q, Quant qa,
                     std::vector<int64_t> a_dims, int64_t cols, std::vector<int8_t> b, float sb,
                     Quant qy, bool y_zero_point, const std::string& external_file) {
  MatMulUnit u{std::move(b), sb, qa, qy, a_q, -1, {}};
  const int64_t k = a_dims.back();
  std::vector<int64_t> y_dims = a_dims;
  y_dims.back() = cols;
  const int a_f = g.Value(tag + "a_f", kFloat, a_dims);
  int b_q, s_b;
  if (!external_file.empty()) {
    // Weight and its scale in an external data file, as large models store them.
    std::ofstream(external_file, std::ios::binary) << Bytes(u.b) << Bytes<float>({sb});
    b_q = g.External(tag + "b", kInt8, {k, cols}, external_file, 0, u.b.size());
    s_b = g.External(tag + "b_scale", kFloat, {1}, external_file, u.b.size(), 4);
  } else {
    b_q = g.Constant(tag + "b", kInt8, {k, cols}, Bytes(u.b));
    s_b = g.Scale(tag + "b_scale", sb);
  }
  const int b_f = g.Value(tag + "b_f", kFloat, {k, cols});
  const int y_f = g.Value(tag + "y_f", kFloat, y_dims);
  u.y_q = g.Value(tag + "y", qy.is_signed ? kInt8 : kUint8, y_dims);
  const int s_a = g.Scale(tag + "a_scale", static_cast<float>(qa.scale));
  const int z_a = g.ZeroPoint(tag + "a_zero", qa.is_signed ? kInt8 : kUint8, qa.zero);
  const int s_y = g.Scale(tag + "y_scale", static_cast<float>(qy.scale));
  std::vector<int32_t> q_inputs{y_f, s_y};
  if (y_zero_point) q_inputs.push_back(g.ZeroPoint(tag + "y_zero", kInt8, qy.zero));
  u.nodes = {g.Node("DequantizeLinear", {a_q, s_a, z_a}, {a_f}),
             g.Node("DequantizeLinear", {b_q, s_b}, {b_f}), g.Node("MatMul", {a_f, b_f}, {y_f}),
             g.Node("QuantizeLinear", q_inputs, {u.y_q})};
  return u;
}

}  // namespace npu_test
