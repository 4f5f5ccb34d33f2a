// Pooling entries of the kernel catalog: MaxPool and AveragePool over 1-D, 2-D and 3-D inputs
// with every window attribute (pads, auto_pad, strides, dilations, ceil_mode, count_include_pad).
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
  return c;
}

}  // namespace ortc::test::cuda
