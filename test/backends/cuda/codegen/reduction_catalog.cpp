// Reduction entries of the kernel catalog: every Reduce op with axes as an attribute (older
// opsets) and as a constant input (opset 18, ReduceSum 13), keepdims on and off, all axes,
// negative axes, noop_with_empty_axes, rows longer than a block; and the global pools, NCHW and
// channels last.
#include "catalog.h"

namespace ortc::test::cuda {
namespace {

using onnx::TensorProto;
constexpr int32_t F = TensorProto::FLOAT, I64 = TensorProto::INT64, H = TensorProto::FLOAT16,
                  BF = TensorProto::BFLOAT16;

std::vector<int64_t> ReducedDims(const std::vector<int64_t>& d, std::vector<int64_t> axes,
                                 bool keep) {
  std::vector<bool> r(d.size(), axes.empty());
  for (int64_t a : axes) r[a < 0 ? a + static_cast<int64_t>(d.size()) : a] = true;
  std::vector<int64_t> out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!r[i])
      out.push_back(d[i]);
    else if (keep)
      out.push_back(1);
  }
  return out;
}

void Add(std::vector<CatalogEntry>& v, std::string name, cg::OpDesc op, bool bf16,
         std::pair<float, float> range) {
  CatalogEntry e;
  e.name = "red_" + std::move(name);
  e.op = std::move(op);
  e.ranges = {range};
  // Sums of many float32 terms: the order differs from the CPU's sequential double sum.
  e.rtol = 1e-5;
  e.atol = 1e-5;
  v.push_back(e);
  v.push_back(WithFloatType(e, H));
  if (bf16) v.push_back(WithFloatType(e, BF));
}

// A global pool over channels-last input [N, spatial..., C] (dims logical).
cg::OpDesc ChannelsLast(const std::string& t, std::vector<int64_t> in, cg::Layout out_layout) {
  std::vector<int64_t> out(in.size(), 1);
  out[0] = in[0];
  out[1] = in[1];
  auto op = Op(t, 1, {T(F, std::move(in))}, {T(F, std::move(out))});
  op.input_layout = cg::Layout::kNhwc;
  op.output_layout = out_layout;
  return op;
}

// Axes as an attribute (`version` below the axes-input opset).
cg::OpDesc WithAttr(const std::string& t, int version, std::vector<int64_t> d,
                    std::vector<int64_t> axes, bool keep) {
  std::vector<onnx::AttributeProto> attrs = {AttrInt("keepdims", keep)};
  if (!axes.empty()) attrs.push_back(AttrInts("axes", axes));
  return Op(t, version, {T(F, d)}, {T(F, ReducedDims(d, axes, keep))}, attrs);
}
// Axes as a constant input.
cg::OpDesc WithInput(const std::string& t, int version, std::vector<int64_t> d,
                     std::vector<int64_t> axes, bool keep) {
  auto op = Op(t, version, {T(F, d), T(I64, {static_cast<int64_t>(axes.size())})},
               {T(F, ReducedDims(d, axes, keep))}, {AttrInt("keepdims", keep)});
  SetConstant(op, 1, std::vector<double>(axes.begin(), axes.end()));
  return op;
}

// An integer reduction (axes as an input): exact, so no tolerance; values in [lo, hi].
CatalogEntry Integer(const std::string& t, int32_t dtype, std::vector<int64_t> d,
                     std::vector<int64_t> axes, bool keep, std::pair<float, float> range) {
  CatalogEntry e;
  e.name = "red_" + t + (dtype == I64 ? "_i64" : "_i32") + "_" + std::to_string(d.back());
  e.op = Op(t, 18, {T(dtype, d), T(I64, {static_cast<int64_t>(axes.size())})},
            {T(dtype, ReducedDims(d, axes, keep))}, {AttrInt("keepdims", keep)});
  SetConstant(e.op, 1, std::vector<double>(axes.begin(), axes.end()));
  e.ranges = {range};
  return e;
}

}  // namespace

std::vector<CatalogEntry> ReductionCatalog() {
  std::vector<CatalogEntry> v;
  const std::vector<int64_t> d = {2, 3, 4};
  for (const char* type : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                           "ReduceL2", "ReduceSumSquare"}) {
    const std::string t = type;
    const int attr_version = t == "ReduceSum" ? 11 : 13;
    const std::pair<float, float> range =
        t == "ReduceProd" ? std::pair<float, float>{0.7f, 1.3f} : std::pair<float, float>{-3, 3};
    const bool main = t == "ReduceMean" || t == "ReduceSum" || t == "ReduceMax";
    Add(v, t + "_axis1_keep", WithAttr(t, attr_version, d, {1}, true), main, range);
    Add(v, t + "_axes02", WithAttr(t, attr_version, d, {0, 2}, false), false, range);
    Add(v, t + "_all", WithAttr(t, attr_version, d, {}, false), false, range);
    Add(v, t + "_input_neg", WithInput(t, 18, d, {-1}, true), main, range);
    Add(v, t + "_long", WithInput(t, 18, {3, 600}, {1}, false), false, range);
  }
  Add(v, "ReduceSum13_input", WithInput("ReduceSum", 13, d, {0, 1}, false), false, {-3, 3});
  // Integer forms: an attention mask's row sum (GenAI's seqlens_k) over a row longer than a
  // block, and max/min/prod; int32 and int64.
  v.push_back(Integer("ReduceSum", I64, {2, 700}, {1}, true, {0, 1}));
  v.push_back(Integer("ReduceSum", TensorProto::INT32, {3, 4}, {-1}, false, {-20, 20}));
  v.push_back(Integer("ReduceMax", I64, {3, 5}, {1}, false, {-20, 20}));
  v.push_back(Integer("ReduceMin", TensorProto::INT32, {3, 5}, {0}, true, {-20, 20}));
  v.push_back(Integer("ReduceProd", I64, {2, 6}, {1}, false, {-3, 3}));
  {
    auto op = Op("ReduceMean", 18, {T(F, d)}, {T(F, d)}, {AttrInt("noop_with_empty_axes", 1)});
    Add(v, "ReduceMean_noop", op, false, {-3, 3});
  }
  Add(v, "GlobalAveragePool",
      Op("GlobalAveragePool", 1, {T(F, {2, 3, 5, 5})}, {T(F, {2, 3, 1, 1})}), true, {-3, 3});
  Add(v, "GlobalMaxPool", Op("GlobalMaxPool", 1, {T(F, {2, 3, 7})}, {T(F, {2, 3, 1})}), true,
      {-3, 3});
  // Channels last: 37 channels are two runs of 32 lanes, the second partial; 600 positions are
  // more than a block's rows; one position needs no tree; the output is [N, C, 1...] either way.
  constexpr auto L = cg::Layout::kNhwc, N = cg::Layout::kNchw;
  Add(v, "GlobalAveragePool_nhwc", ChannelsLast("GlobalAveragePool", {2, 37, 5, 5}, L), true,
      {-3, 3});
  Add(v, "GlobalAveragePool_nhwc_long", ChannelsLast("GlobalAveragePool", {1, 3, 20, 30}, N), false,
      {-3, 3});
  Add(v, "GlobalAveragePool_nhwc_1x1", ChannelsLast("GlobalAveragePool", {2, 8, 1, 1}, L), false,
      {-3, 3});
  Add(v, "GlobalMaxPool_nhwc", ChannelsLast("GlobalMaxPool", {2, 40, 6, 7}, N), true, {-3, 3});
  Add(v, "GlobalMaxPool_nhwc_1d", ChannelsLast("GlobalMaxPool", {2, 3, 7}, L), false, {-3, 3});
  return v;
}

}  // namespace ortc::test::cuda
