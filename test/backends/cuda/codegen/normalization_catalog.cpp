// Normalization entries of the kernel catalog: Softmax/LogSoftmax on every axis kind (last,
// middle with a stride, opset < 13 coerced 2-D, rows longer than a block), LayerNormalization
// (axis, epsilon, with and without bias), RMSNormalization (with and without scale; its
// semantics are checked against a float64 reference in rmsnorm_test.cpp, the CPU runtime has no
// such op), InstanceNormalization and BatchNormalization.
#include "catalog.h"

namespace ortc::test::cuda {
namespace {

using onnx::TensorProto;
constexpr int32_t F = TensorProto::FLOAT, H = TensorProto::FLOAT16, BF = TensorProto::BFLOAT16;

void Add(std::vector<CatalogEntry>& v, std::string name, cg::OpDesc op, bool bf16,
         std::vector<std::pair<float, float>> ranges = {}) {
  CatalogEntry e;
  e.name = "norm_" + std::move(name);
  e.op = std::move(op);
  e.ranges = std::move(ranges);
  v.push_back(e);
  v.push_back(WithFloatType(e, H));
  if (bf16) v.push_back(WithFloatType(e, BF));
}

cg::OpDesc Same(const std::string& type, int version, std::vector<int64_t> dims,
                std::vector<onnx::AttributeProto> attrs = {}) {
  return Op(type, version, {T(F, dims)}, {T(F, dims)}, std::move(attrs));
}

}  // namespace

std::vector<CatalogEntry> NormalizationCatalog() {
  std::vector<CatalogEntry> v;
  for (const char* type : {"Softmax", "LogSoftmax"}) {
    const std::string t = type;
    Add(v, t + "_last", Same(t, 13, {3, 7}), true, {{-5, 5}});
    Add(v, t + "_long_row", Same(t, 13, {2, 300}), false, {{-5, 5}});
    Add(v, t + "_mid_axis", Same(t, 13, {2, 5, 3}, {AttrInt("axis", 1)}), true, {{-5, 5}});
    Add(v, t + "_axis_neg3", Same(t, 13, {4, 2, 3}, {AttrInt("axis", -3)}), false, {{-5, 5}});
    Add(v, t + "_v11_coerced", Same(t, 11, {2, 3, 4}, {AttrInt("axis", 1)}), false, {{-5, 5}});
    Add(v, t + "_v1_default", Same(t, 1, {3, 2, 5}), false, {{-5, 5}});
  }
  Add(v, "LayerNorm_last",
      Op("LayerNormalization", 17, {T(F, {2, 3, 16}), T(F, {16}), T(F, {16})}, {T(F, {2, 3, 16})}),
      true);
  Add(v, "LayerNorm_axis1_eps",
      Op("LayerNormalization", 17, {T(F, {2, 3, 4}), T(F, {3, 4}), T(F, {3, 4})}, {T(F, {2, 3, 4})},
         {AttrInt("axis", 1), AttrFloat("epsilon", 1e-3f)}),
      false);
  Add(v, "LayerNorm_no_bias",
      Op("LayerNormalization", 17, {T(F, {5, 300}), T(F, {300})}, {T(F, {5, 300})}), false);
  for (bool scale : {true, false}) {
    CatalogEntry e;
    e.name = scale ? "norm_RMSNorm_scale" : "norm_RMSNorm_no_scale";
    e.op = Op("RMSNormalization", 23, {T(F, {3, 300}), scale ? T(F, {300}) : cg::TensorDesc{}},
              {T(F, {3, 300})}, {AttrFloat("epsilon", 1e-6f)});
    e.no_cpu_reference = "no RMSNormalization in the CPU runtime (see rmsnorm_test.cpp)";
    v.push_back(e);
    v.push_back(WithFloatType(e, H));
    v.push_back(WithFloatType(e, BF));
  }
  Add(v, "InstanceNorm_2d",
      Op("InstanceNormalization", 6, {T(F, {2, 3, 5, 5}), T(F, {3}), T(F, {3})},
         {T(F, {2, 3, 5, 5})}),
      true);
  Add(v, "InstanceNorm_1d_eps",
      Op("InstanceNormalization", 6, {T(F, {1, 4, 7}), T(F, {4}), T(F, {4})}, {T(F, {1, 4, 7})},
         {AttrFloat("epsilon", 1e-2f)}),
      false);
  const std::pair<float, float> any = {-3, 3}, var = {0.5f, 2.f};
  Add(v, "BatchNorm_4d",
      Op("BatchNormalization", 15, {T(F, {2, 3, 4, 4}), T(F, {3}), T(F, {3}), T(F, {3}), T(F, {3})},
         {T(F, {2, 3, 4, 4})}),
      true, {any, any, any, any, var});
  Add(v, "BatchNorm_2d_eps",
      Op("BatchNormalization", 9, {T(F, {3, 5}), T(F, {5}), T(F, {5}), T(F, {5}), T(F, {5})},
         {T(F, {3, 5})}, {AttrFloat("epsilon", 1e-3f)}),
      false, {any, any, any, any, var});
  return v;
}

}  // namespace ortc::test::cuda
