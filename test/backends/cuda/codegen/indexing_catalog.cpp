// Indexing entries of the kernel catalog: GatherND (batch_dims 0 and 1, every tuple length),
// GatherElements (every axis), ScatterND and ScatterElements (every reduction, duplicate
// indices), Trilu (both triangles, k constant, absent or read at run time), with negative
// indices, int32 and int64 indices, and float32/fp16/bf16/int32/int64/bool data. Indices are
// given values (every one valid: the CPU kernels refuse the others; out-of-range ones are
// checked by hand in indexing_test.cpp).
#include "catalog.h"

namespace ortc::test::cuda {
namespace {

using onnx::TensorProto;
constexpr int32_t F = TensorProto::FLOAT, H = TensorProto::FLOAT16, BF = TensorProto::BFLOAT16,
                  I32 = TensorProto::INT32, I64 = TensorProto::INT64, B = TensorProto::BOOL;

CatalogEntry E(std::string name, cg::OpDesc op, std::vector<std::vector<double>> values = {}) {
  CatalogEntry e;
  e.name = "ix_" + std::move(name);
  e.op = std::move(op);
  e.values = std::move(values);
  return e;
}

// `count` indices, index j of every group of dims.size() within [-dims[j], dims[j] - 1] (both
// signs of every position), from a fixed linear congruential sequence.
std::vector<double> Indices(int64_t count, const std::vector<int64_t>& dims, uint32_t seed) {
  std::vector<double> v;
  for (int64_t n = 0; n < count; ++n)
    for (int64_t d : dims) {
      seed = seed * 1664525u + 1013904223u;
      v.push_back(static_cast<double>(static_cast<int64_t>((seed >> 8) % (2 * d)) - d));
    }
  return v;
}

// The entry in float16 and bfloat16 too.
void AddAllFloats(std::vector<CatalogEntry>& c, const CatalogEntry& e) {
  c.push_back(e);
  c.push_back(WithFloatType(e, H));
  c.push_back(WithFloatType(e, BF));
}

void AddGatherND(std::vector<CatalogEntry>& c) {
  auto gnd = [](std::string name, int32_t dt, std::vector<int64_t> data, int32_t it,
                std::vector<int64_t> ind, std::vector<int64_t> out, int64_t batch_dims) {
    const int64_t k = ind.back();
    int64_t tuples = 1;
    for (size_t d = 0; d + 1 < ind.size(); ++d) tuples *= ind[d];
    std::vector<int64_t> dims(data.begin() + batch_dims, data.begin() + batch_dims + k);
    std::vector<onnx::AttributeProto> attrs;
    if (batch_dims != 0) attrs.push_back(AttrInt("batch_dims", batch_dims));
    return E(std::move(name), Op("GatherND", 13, {T(dt, data), T(it, ind)}, {T(dt, out)}, attrs),
             {{}, Indices(tuples, dims, static_cast<uint32_t>(data.size() * 31 + k))});
  };
  AddAllFloats(c, gnd("gathernd_k1", F, {5, 3, 4}, I64, {2, 3, 1}, {2, 3, 3, 4}, 0));
  c.push_back(gnd("gathernd_k2_i32", F, {4, 5, 6}, I32, {3, 2}, {3, 6}, 0));
  c.push_back(gnd("gathernd_full_i64_data", I64, {3, 4, 5}, I64, {2, 2, 3}, {2, 2}, 0));
  c.push_back(gnd("gathernd_batch1", F, {2, 5, 3}, I64, {2, 4, 1}, {2, 4, 3}, 1));
  c.push_back(WithFloatType(c.back(), H));
  c.push_back(gnd("gathernd_batch1_k2_i32", I32, {2, 3, 4, 5}, I32, {2, 3, 2}, {2, 3, 5}, 1));
  c.push_back(gnd("gathernd_batch2", F, {2, 3, 4, 5}, I64, {2, 3, 2, 1}, {2, 3, 2, 5}, 2));
  // The exporters' form (transformers' mask over a padding vector): bool [1, 32] read with
  // [1, 1, 1, 32, 2] tuples (0, j).
  {
    std::vector<double> tuples;
    for (int j = 0; j < 32; ++j) {
      tuples.push_back(j % 3 == 0 ? -1 : 0);
      tuples.push_back(j % 5 == 0 ? j - 32 : j);
    }
    c.push_back(
        E("gathernd_mask_bool",
          Op("GatherND", 13, {T(B, {1, 32}), T(I64, {1, 1, 1, 32, 2})}, {T(B, {1, 1, 1, 32})}),
          {{}, tuples}));
  }
}

void AddGatherElements(std::vector<CatalogEntry>& c) {
  auto ge = [](std::string name, int32_t dt, std::vector<int64_t> data, int32_t it,
               std::vector<int64_t> ind, int64_t axis) {
    const int64_t a = axis < 0 ? axis + static_cast<int64_t>(data.size()) : axis;
    int64_t count = 1;
    for (int64_t d : ind) count *= d;
    return E(
        std::move(name),
        Op("GatherElements", 13, {T(dt, data), T(it, ind)}, {T(dt, ind)}, {AttrInt("axis", axis)}),
        {{}, Indices(count, {data[a]}, static_cast<uint32_t>(count * 7 + a))});
  };
  AddAllFloats(c, ge("gatherelements_axis0", F, {4, 5}, I64, {3, 5}, 0));
  c.push_back(ge("gatherelements_axis1_smaller", F, {3, 6, 4}, I32, {2, 9, 3}, 1));
  c.push_back(ge("gatherelements_last_i64", I64, {2, 3, 7}, I64, {2, 3, 4}, -1));
  c.push_back(ge("gatherelements_bool", B, {5, 4}, I32, {5, 2}, 1));
  // BERT's position ids: GatherElements over a [1, 512] int64 buffer with [1, 32] indices.
  c.push_back(ge("gatherelements_position_ids", I64, {1, 512}, I64, {1, 32}, 1));
}

void AddScatters(std::vector<CatalogEntry>& c) {
  const std::vector<std::string> reductions = {"none", "add", "mul", "max", "min"};
  for (const std::string& red : reductions) {
    std::vector<onnx::AttributeProto> attrs;
    if (red != "none") attrs.push_back(AttrString("reduction", red));
    // k = 1 with 6 tuples into 4 rows: duplicates, negative ones included.
    CatalogEntry e = E("scatternd_k1_" + red,
                       Op("ScatterND", 18, {T(F, {4, 3, 2}), T(I64, {6, 1}), T(F, {6, 3, 2})},
                          {T(F, {4, 3, 2})}, attrs),
                       {{}, {1, -3, 3, 0, -1, 1}});
    AddAllFloats(c, e);
    // k = 2 with int32 indices, k = rank (one element each) on int64 and int32 data.
    c.push_back(E("scatternd_k2_i32_" + red,
                  Op("ScatterND", 18, {T(I32, {3, 4, 5}), T(I32, {2, 3, 2}), T(I32, {2, 3, 5})},
                     {T(I32, {3, 4, 5})}, attrs),
                  {{}, {0, 1, -1, -4, 2, 3, 0, 1, 1, 0, -3, 1}}));
    c.push_back(E(
        "scatternd_full_i64_" + red,
        Op("ScatterND", 18, {T(I64, {3, 4}), T(I64, {5, 2}), T(I64, {5})}, {T(I64, {3, 4})}, attrs),
        {{}, {0, 0, 2, 3, -3, -4, 1, 2, 2, -1}}));
    // ScatterElements along each axis, duplicates included, indices smaller than data.
    CatalogEntry se =
        E("scatterelements_axis0_" + red,
          Op("ScatterElements", 18, {T(F, {4, 5}), T(I64, {3, 4}), T(F, {3, 4})}, {T(F, {4, 5})},
             [&] {
               auto a = attrs;
               a.push_back(AttrInt("axis", 0));
               return a;
             }()),
          {{}, Indices(12, {4}, 11)});
    AddAllFloats(c, se);
    c.push_back(E("scatterelements_last_i32_" + red,
                  Op("ScatterElements", 18,
                     {T(I32, {2, 3, 6}), T(I32, {2, 2, 5}), T(I32, {2, 2, 5})}, {T(I32, {2, 3, 6})},
                     [&] {
                       auto a = attrs;
                       a.push_back(AttrInt("axis", -1));
                       return a;
                     }()),
                  {{}, Indices(20, {6}, 5)}));
  }
  // bool data: the reductions are Or (add, max) and And (mul, min) as the CPU converts them.
  for (const std::string& red : {"none", "add", "mul"}) {
    std::vector<onnx::AttributeProto> attrs = {AttrInt("axis", 1)};
    if (red != "none") attrs.push_back(AttrString("reduction", red));
    c.push_back(E("scatterelements_bool_" + red,
                  Op("ScatterElements", 18, {T(B, {3, 4}), T(I64, {3, 3}), T(B, {3, 3})},
                     {T(B, {3, 4})}, attrs),
                  {{}, Indices(9, {4}, 3)}));
  }
  // Opset 11 (no reduction) and the deprecated Scatter.
  c.push_back(
      E("scatterelements_v11",
        Op("ScatterElements", 11, {T(F, {3, 3}), T(I64, {2, 3}), T(F, {2, 3})}, {T(F, {3, 3})}),
        {{}, {1, 0, 2, 0, 2, 1}}));
  c.push_back(E("scatter_v9",
                Op("Scatter", 9, {T(F, {3, 3}), T(I32, {3, 2}), T(F, {3, 2})}, {T(F, {3, 3})},
                   {AttrInt("axis", 1)}),
                {{}, {1, 0, 0, 2, 2, 1}}));
  c.push_back(E("scatternd_bool_none",
                Op("ScatterND", 16, {T(B, {4, 3}), T(I64, {2, 1}), T(B, {2, 3})}, {T(B, {4, 3})}),
                {{}, {3, -4}}));
}

void AddTrilus(std::vector<CatalogEntry>& c) {
  auto trilu = [](std::string name, int32_t dt, std::vector<int64_t> dims, bool upper,
                  std::optional<int64_t> k, bool constant_k = true) {
    std::vector<cg::TensorDesc> inputs = {T(dt, dims)};
    if (k) inputs.push_back(T(I64, {}));
    cg::OpDesc op = Op("Trilu", 14, inputs, {T(dt, dims)}, {AttrInt("upper", upper ? 1 : 0)});
    std::vector<std::vector<double>> values;
    if (k && constant_k) SetConstant(op, 1, {static_cast<double>(*k)});
    if (k && !constant_k) values = {{}, {static_cast<double>(*k)}};
    return E(std::move(name), std::move(op), values);
  };
  AddAllFloats(c, trilu("trilu_upper", F, {2, 3, 4, 5}, true, std::nullopt));
  c.push_back(trilu("trilu_lower", F, {3, 6, 4}, false, std::nullopt));
  c.push_back(trilu("trilu_upper_k2", F, {5, 7}, true, 2));
  c.push_back(trilu("trilu_lower_kneg", I64, {2, 6, 5}, false, -2));
  c.push_back(trilu("trilu_upper_kbig", F, {4, 4}, true, int64_t{1} << 40));
  c.push_back(trilu("trilu_lower_kneg_big", I32, {4, 3}, false, -(int64_t{1} << 50)));
  c.push_back(trilu("trilu_bool_causal", B, {1, 1, 8, 8}, false, 0));
  // k read on the device when it is not a compile-time constant.
  c.push_back(trilu("trilu_runtime_k", F, {3, 5, 6}, true, -1, false));
  c.push_back(trilu("trilu_runtime_k_lower", H, {4, 9}, false, 3, false));
}

}  // namespace

std::vector<CatalogEntry> IndexingCatalog() {
  std::vector<CatalogEntry> c;
  AddGatherND(c);
  AddGatherElements(c);
  AddScatters(c);
  AddTrilus(c);
  return c;
}

}  // namespace ortc::test::cuda
