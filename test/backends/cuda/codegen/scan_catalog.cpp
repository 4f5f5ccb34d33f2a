// Scan entries of the kernel catalog: CumSum at opsets 11 and 14 with exclusive and reverse,
// positive and negative axes (0-D and 1-D, int32 and int64), both kernels (a thread per line,
// a block per line with partial chunks), float32/fp16/bf16, int32 and an int64 attention mask.
#include "catalog.h"

namespace ortc::test::cuda {
namespace {

using onnx::TensorProto;
constexpr int32_t F = TensorProto::FLOAT, I32 = TensorProto::INT32, I64 = TensorProto::INT64,
                  H = TensorProto::FLOAT16, BF = TensorProto::BFLOAT16;

// CumSum of a `dtype` tensor `dims` along `axis`, given as a 0-D (or, with `vector`, 1-D)
// constant of type `axis_type`.
cg::OpDesc CumSum(int version, int32_t dtype, std::vector<int64_t> dims, int64_t axis,
                  bool exclusive, bool reverse, int32_t axis_type = I64, bool vector = false) {
  std::vector<onnx::AttributeProto> attrs;
  if (exclusive) attrs.push_back(AttrInt("exclusive", 1));
  if (reverse) attrs.push_back(AttrInt("reverse", 1));
  auto op =
      Op("CumSum", version,
         {T(dtype, dims), T(axis_type, vector ? std::vector<int64_t>{1} : std::vector<int64_t>{})},
         {T(dtype, dims)}, attrs);
  SetConstant(op, 1, {static_cast<double>(axis)});
  return op;
}

void Add(std::vector<CatalogEntry>& v, std::string name, cg::OpDesc op,
         std::pair<float, float> range, bool half_types) {
  CatalogEntry e;
  e.name = "scan_" + std::move(name);
  e.op = std::move(op);
  e.ranges = {range};
  if (e.op.inputs[0].dtype == F) {
    // Running sums in float32, chunked in the block kernel: the order differs from the CPU's
    // sequential double sum, and sums that cancel near zero need an absolute floor.
    e.rtol = 1e-5;
    e.atol = 1e-4;
  }
  v.push_back(e);
  if (half_types) {
    v.push_back(WithFloatType(e, H));
    v.push_back(WithFloatType(e, BF));
  }
}

}  // namespace

std::vector<CatalogEntry> ScanCatalog() {
  std::vector<CatalogEntry> v;
  const std::pair<float, float> r{-3, 3};
  // Thread per line (short lines): axis 0 of a 3-D tensor, every attribute combination.
  Add(v, "axis0", CumSum(14, F, {5, 4, 3}, 0, false, false), r, true);
  Add(v, "axis0_exclusive", CumSum(14, F, {5, 4, 3}, 0, true, false, I32), r, false);
  Add(v, "axis0_reverse", CumSum(11, F, {5, 4, 3}, 0, false, true), r, false);
  Add(v, "axis0_exclusive_reverse", CumSum(14, F, {5, 4, 3}, 0, true, true, I64, true), r, true);
  // Block per line: 40 positions (one per thread), 600 (chunks of 3), a middle axis.
  Add(v, "last_neg", CumSum(14, F, {3, 40}, -1, false, false), r, true);
  Add(v, "long_reverse", CumSum(11, F, {2, 600}, 1, false, true), r, true);
  Add(v, "mid_exclusive_reverse", CumSum(14, F, {4, 37, 3}, -2, true, true, I32, true), r, true);
  // Thread per line with long lines: 4096 adjacent lines of a middle axis.
  Add(v, "many_lines", CumSum(14, F, {1, 40, 4096}, 1, false, false), r, false);
  // Integers: an attention mask's position ids (int64 [1, 8], axis -1), long int64 and int32.
  Add(v, "mask_i64", CumSum(14, I64, {1, 8}, -1, false, false), {0, 1}, false);
  Add(v, "mask_i64_exclusive", CumSum(14, I64, {2, 8}, -1, true, false, I64, true), {0, 1}, false);
  Add(v, "long_i64_exclusive_reverse", CumSum(14, I64, {2, 1000}, 1, true, true), r, false);
  Add(v, "i32", CumSum(11, I32, {3, 50}, 1, false, false, I32), {-20, 20}, false);
  Add(v, "i32_axis0_reverse", CumSum(14, I32, {6, 5}, 0, false, true), {-20, 20}, false);
  return v;
}

}  // namespace ortc::test::cuda
