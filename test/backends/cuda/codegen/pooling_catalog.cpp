// Pooling entries of the kernel catalog: MaxPool and AveragePool over 1-D, 2-D and 3-D inputs
// with every window attribute (pads, auto_pad, strides, dilations, ceil_mode, count_include_pad),
// NCHW and channels last (NHWC), mixed input/output layouts included.
#include "catalog.h"

namespace ortc::test::cuda {
namespace {

using onnx::TensorProto;
constexpr int32_t F = TensorProto::FLOAT, H = TensorProto::FLOAT16, BF = TensorProto::BFLOAT16;

CatalogEntry Pool(std::string name, const std::string& type, int version, std::vector<int64_t> in,
                  std::vector<int64_t> out, std::vector<onnx::AttributeProto> attrs) {
  CatalogEntry e;
  e.name = std::move(name);
  e.op = Op(type, version, {T(F, std::move(in))}, {T(F, std::move(out))}, std::move(attrs));
  // AveragePool sums in float on the device and in double on the CPU: a few float ulps of the
  // window sum (at most 27 values of magnitude < 3 here).
  if (type == "AveragePool") e.atol = 1e-5;
  return e;
}

// The same entry with channels-last storage of its input and/or output, renamed.
CatalogEntry Layouts(CatalogEntry e, cg::Layout in, cg::Layout out) {
  e.op.input_layout = in;
  e.op.output_layout = out;
  const auto tag = [](cg::Layout l) { return l == cg::Layout::kNhwc ? "nhwc" : "nchw"; };
  e.name += std::string("_") + tag(in) + "_" + tag(out);
  return e;
}

// Channels-last variants, with several channels so the channel order matters.
void AddChannelsLast(std::vector<CatalogEntry>& c) {
  constexpr auto L = cg::Layout::kNhwc, N = cg::Layout::kNchw;
  auto add = [&c](CatalogEntry e, cg::Layout in, cg::Layout out, bool typed) {
    c.push_back(Layouts(std::move(e), in, out));
    if (!typed) return;
    c.push_back(WithFloatType(c.back(), H));
    c.push_back(WithFloatType(c[c.size() - 2], BF));
  };
  const auto k3 = AttrInts("kernel_shape", {3, 3});
  const auto s2 = AttrInts("strides", {2, 2});
  const auto p1 = AttrInts("pads", {1, 1, 1, 1});
  add(Pool("pool_max_k3s2p1", "MaxPool", 12, {2, 5, 7, 9}, {2, 5, 4, 5}, {k3, s2, p1}), L, L, true);
  add(Pool("pool_max_ceil_dilated", "MaxPool", 12, {1, 6, 9, 8}, {1, 6, 4, 4},
           {k3, s2, p1, AttrInts("dilations", {2, 2}), AttrInt("ceil_mode", 1)}),
      L, L, false);
  add(Pool("pool_max_same_upper", "MaxPool", 12, {1, 4, 7, 8}, {1, 4, 4, 4},
           {k3, s2, AttrString("auto_pad", "SAME_UPPER")}),
      L, L, false);
  add(Pool("pool_max_1d", "MaxPool", 12, {2, 3, 10}, {2, 3, 9}, {AttrInts("kernel_shape", {2})}), L,
      L, false);
  add(Pool("pool_avg_include_pad", "AveragePool", 11, {2, 6, 6, 7}, {2, 6, 6, 7},
           {k3, p1, AttrInt("count_include_pad", 1)}),
      L, L, true);
  add(Pool("pool_avg_exclude_pad", "AveragePool", 11, {2, 6, 6, 7}, {2, 6, 6, 7}, {k3, p1}), L, L,
      true);
  // ceil_mode adds a last window that runs past the end padding (H 8: 5 windows, not 4).
  add(Pool("pool_avg_ceil_include_pad", "AveragePool", 11, {1, 7, 8, 5}, {1, 7, 5, 3},
           {k3, s2, p1, AttrInt("ceil_mode", 1), AttrInt("count_include_pad", 1)}),
      L, L, false);
  add(Pool("pool_avg_ceil_exclude_pad", "AveragePool", 11, {1, 7, 8, 5}, {1, 7, 5, 3},
           {k3, s2, p1, AttrInt("ceil_mode", 1)}),
      L, L, false);
  add(Pool("pool_avg_dilated_v19", "AveragePool", 19, {1, 4, 8, 9}, {1, 4, 6, 7},
           {k3, p1, AttrInts("dilations", {2, 2})}),
      L, L, false);
  add(Pool("pool_avg_3d_pads", "AveragePool", 11, {1, 3, 4, 5, 6}, {1, 3, 2, 3, 4},
           {AttrInts("kernel_shape", {2, 2, 2}), AttrInts("strides", {2, 2, 2}),
            AttrInts("pads", {1, 0, 1, 0, 1, 1})}),
      L, L, false);
  // Mixed: an NHWC producer feeding a program output, and the reverse.
  add(Pool("pool_max_k2s2", "MaxPool", 12, {1, 5, 6, 6}, {1, 5, 3, 3},
           {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})}),
      L, N, true);
  add(Pool("pool_avg_k3s2p1", "AveragePool", 11, {1, 5, 7, 6}, {1, 5, 4, 3}, {k3, s2, p1}), N, L,
      false);
}

}  // namespace

std::vector<CatalogEntry> PoolingCatalog() {
  std::vector<CatalogEntry> c;
  auto add_typed = [&c] {
    c.push_back(WithFloatType(c.back(), H));
    c.push_back(WithFloatType(c[c.size() - 2], BF));
  };
  // MaxPool.
  c.push_back(Pool("pool_max_2d_k3s2p1", "MaxPool", 12, {2, 3, 7, 9}, {2, 3, 4, 5},
                   {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
                    AttrInts("pads", {1, 1, 1, 1})}));
  add_typed();
  c.push_back(
      Pool("pool_max_1d", "MaxPool", 12, {2, 3, 10}, {2, 3, 9}, {AttrInts("kernel_shape", {2})}));
  c.push_back(Pool("pool_max_3d", "MaxPool", 12, {1, 2, 5, 6, 4}, {1, 2, 2, 3, 2},
                   {AttrInts("kernel_shape", {2, 2, 2}), AttrInts("strides", {2, 2, 2})}));
  c.push_back(Pool("pool_max_dilated", "MaxPool", 12, {1, 2, 9, 9}, {1, 2, 5, 5},
                   {AttrInts("kernel_shape", {3, 3}), AttrInts("dilations", {2, 2})}));
  c.push_back(Pool(
      "pool_max_ceil", "MaxPool", 12, {1, 1, 8, 8}, {1, 1, 4, 4},
      {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}), AttrInt("ceil_mode", 1)}));
  c.push_back(Pool("pool_max_same_upper", "MaxPool", 12, {1, 2, 7, 8}, {1, 2, 4, 4},
                   {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
                    AttrString("auto_pad", "SAME_UPPER")}));
  c.push_back(Pool("pool_max_same_lower", "MaxPool", 12, {1, 1, 5, 5}, {1, 1, 5, 5},
                   {AttrInts("kernel_shape", {2, 2}), AttrString("auto_pad", "SAME_LOWER")}));
  c.push_back(Pool("pool_max_valid", "MaxPool", 12, {1, 3, 6, 7}, {1, 3, 2, 3},
                   {AttrInts("kernel_shape", {3, 2}), AttrInts("strides", {2, 2}),
                    AttrString("auto_pad", "VALID"), AttrInts("pads", {1, 1, 1, 1})}));
  c.push_back(Pool("pool_max_asym_pads", "MaxPool", 8, {2, 1, 5, 6}, {2, 1, 7, 5},
                   {AttrInts("kernel_shape", {2, 3}), AttrInts("pads", {2, 1, 1, 0})}));
  // AveragePool.
  c.push_back(Pool("pool_avg_exclude_pad", "AveragePool", 11, {2, 2, 6, 7}, {2, 2, 6, 7},
                   {AttrInts("kernel_shape", {3, 3}), AttrInts("pads", {1, 1, 1, 1})}));
  add_typed();
  c.push_back(Pool("pool_avg_include_pad", "AveragePool", 11, {2, 2, 6, 7}, {2, 2, 6, 7},
                   {AttrInts("kernel_shape", {3, 3}), AttrInts("pads", {1, 1, 1, 1}),
                    AttrInt("count_include_pad", 1)}));
  add_typed();
  c.push_back(Pool(
      "pool_avg_ceil_include_pad", "AveragePool", 11, {1, 1, 6, 6}, {1, 1, 4, 4},
      {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
       AttrInts("pads", {1, 1, 1, 1}), AttrInt("ceil_mode", 1), AttrInt("count_include_pad", 1)}));
  c.push_back(Pool(
      "pool_avg_ceil_exclude_pad", "AveragePool", 11, {1, 2, 7, 5}, {1, 2, 3, 2},
      {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {3, 3}), AttrInt("ceil_mode", 1)}));
  c.push_back(Pool(
      "pool_avg_1d_valid", "AveragePool", 11, {1, 3, 11}, {1, 3, 3},
      {AttrInts("kernel_shape", {4}), AttrInts("strides", {3}), AttrString("auto_pad", "VALID")}));
  c.push_back(Pool("pool_avg_3d_pads", "AveragePool", 11, {1, 1, 4, 5, 6}, {1, 1, 2, 3, 4},
                   {AttrInts("kernel_shape", {2, 2, 2}), AttrInts("strides", {2, 2, 2}),
                    AttrInts("pads", {1, 0, 1, 0, 1, 1})}));
  c.push_back(Pool("pool_avg_same_upper_include", "AveragePool", 11, {1, 2, 5, 6}, {1, 2, 3, 3},
                   {AttrInts("kernel_shape", {3, 2}), AttrInts("strides", {2, 2}),
                    AttrString("auto_pad", "SAME_UPPER"), AttrInt("count_include_pad", 1)}));
  c.push_back(Pool("pool_avg_dilated_v19", "AveragePool", 19, {1, 2, 8, 9}, {1, 2, 6, 7},
                   {AttrInts("kernel_shape", {3, 3}), AttrInts("dilations", {2, 2}),
                    AttrInts("pads", {1, 1, 1, 1})}));
  AddChannelsLast(c);
  return c;
}

}  // namespace ortc::test::cuda
