// Data-movement kernels beyond the shared semantics test: tiny cases computed by hand,
// bit-exactness of every pure movement kernel against the CPU kernels run in the same element
// type, and the reasons given for what is not generated.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "cpu_kernel/kernel_context.h"
#include "data_movement_test_util.h"
#include "reference_conversions.h"

namespace ortc::test::cuda {
namespace {

TEST_CASE("Transpose of a 2x3 matrix, by hand", "[cuda][data_movement]") {
  const cg::OpDesc op = Op("Transpose", 13, {T(F, {2, 3})}, {T(F, {3, 2})});
  const auto out = RunKernel(op, "hand_transpose", {Floats({1, 2, 3, 4, 5, 6})});
  CHECK(AsFloats(out[0]) == std::vector<float>{1, 4, 2, 5, 3, 6});
}

std::string Halves(const std::vector<float>& v) {
  std::string b(v.size() * 2, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    const uint16_t h = RefFloatToHalf(v[i]);
    std::memcpy(b.data() + 2 * i, &h, 2);
  }
  return b;
}

TEST_CASE("a float cache appended with an fp16 row: the past bit for bit, the row widened",
          "[cuda][data_movement]") {
  // past [1, 2, 2, 2] fp32 (values fp16 cannot hold), new [1, 2, 1, 2] fp16 along axis 2.
  const std::vector<float> past = {0.1f,    1e-9f, 3.14159265f, -7.000001f,
                                   65519.f, -0.3f, 1e6f,        2.5e-8f};
  const std::vector<float> row = {0.5f, -2.f, 1.5f, 0.25f};
  const std::vector<float> want = {0.1f,    1e-9f, 3.14159265f, -7.000001f, 0.5f, -2.f,
                                   65519.f, -0.3f, 1e6f,        2.5e-8f,    1.5f, 0.25f};
  cg::OpDesc op = Op("Concat", 13, {T(F, {1, 2, 2, 2}), T(TensorProto::FLOAT16, {1, 2, 1, 2})},
                     {T(F, {1, 2, 3, 2})}, {AttrInt("axis", 2)});
  CHECK(AsFloats(RunKernel(op, "append_row", {Floats(past), Halves(row)})[0]) == want);
  // The same from channels-last inputs to a plain output (the other code path).
  op.input_layout = cg::Layout::kNhwc;
  // NHWC storage of [1, 2, 2, 2] / [1, 2, 1, 2]: channel fastest.
  const std::vector<float> past_nhwc = {0.1f,        65519.f, 1e-9f,      -0.3f,
                                        3.14159265f, 1e6f,    -7.000001f, 2.5e-8f};
  const std::vector<float> row_nhwc = {0.5f, 1.5f, -2.f, 0.25f};
  CHECK(AsFloats(RunKernel(op, "append_row_nhwc", {Floats(past_nhwc), Halves(row_nhwc)})[0]) ==
        want);
  // Integer inputs of different types are no conversion the kernel makes.
  const cg::OpDesc ints = Op("Concat", 13, {T(TensorProto::INT64, {2}), T(TensorProto::INT32, {2})},
                             {T(TensorProto::INT64, {4})}, {AttrInt("axis", 0)});
  CHECK_FALSE(cg::EmitOp("mixed_ints", ints).ok());
}

cg::OpDesc Resize2x(const std::string& mode, const std::string& coord) {
  cg::OpDesc op =
      Op("Resize", 13, {T(F, {1, 1, 2, 2}), T(0, {}), T(F, {4})}, {T(F, {1, 1, 4, 4})},
         {AttrString("mode", mode), AttrString("coordinate_transformation_mode", coord)});
  SetConstant(op, 2, {1, 1, 2, 2});
  return op;
}

TEST_CASE("Resize 1x1x2x2 to 4x4, by hand", "[cuda][data_movement]") {
  const std::string x = Floats({1, 2, 3, 4});
  // half_pixel: output o samples input (o + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25, clamped
  // to [0, 1]; so each row of [a, b] becomes [a, .75a + .25b, .25a + .75b, b], then the columns
  // likewise (every value is exact in float).
  const auto linear =
      RunKernel(Resize2x("linear", "half_pixel"), "hand_resize_linear", {x, "", ""});
  CHECK(AsFloats(linear[0]) == std::vector<float>{1, 1.25f, 1.75f, 2,        //
                                                  1.5f, 1.75f, 2.25f, 2.5f,  //
                                                  2.5f, 2.75f, 3.25f, 3.5f,  //
                                                  3, 3.25f, 3.75f, 4});
  // asymmetric nearest with floor: output o reads input floor(o / 2).
  cg::OpDesc op = Resize2x("nearest", "asymmetric");
  op.attributes.push_back(AttrString("nearest_mode", "floor"));
  const auto nearest = RunKernel(op, "hand_resize_nearest", {x, "", ""});
  CHECK(AsFloats(nearest[0]) == std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

// ---- Bit-exactness against the CPU kernels run in the kernel's own element type ----

// Random elements as stored: floats from [-3, 3) rounded to the type, ints in `range`.
std::string RandomBytes(const cg::TensorDesc& t, std::pair<float, float> range, std::mt19937& rng) {
  std::string b(static_cast<size_t>(t.elements()) * StorageBytes(t.dtype), '\0');
  std::uniform_real_distribution<double> u(range.first, range.second);
  for (int64_t i = 0; i < t.elements(); ++i) {
    char* p = b.data() + i * StorageBytes(t.dtype);
    const double v = u(rng);
    if (t.dtype == TensorProto::FLOAT) {
      const auto f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
    } else if (t.dtype == TensorProto::FLOAT16 || t.dtype == TensorProto::BFLOAT16) {
      const auto h = static_cast<uint16_t>(rng());  // any bit pattern but Inf/NaN
      const uint16_t exp_mask = t.dtype == TensorProto::FLOAT16 ? 0x7c00 : 0x7f80;
      const uint16_t bits = (h & exp_mask) == exp_mask ? h & ~0x4000 : h;
      std::memcpy(p, &bits, 2);
    } else if (t.dtype == TensorProto::INT32) {
      const auto x = static_cast<int32_t>(std::round(v));
      std::memcpy(p, &x, 4);
    } else if (t.dtype == TensorProto::INT64) {
      const auto x = static_cast<int64_t>(std::round(v));
      std::memcpy(p, &x, 8);
    } else {
      *p = static_cast<char>(rng() & 1);
    }
  }
  return b;
}

Result<std::vector<Tensor>> RunCpuSameType(const cg::OpDesc& op, const std::vector<Tensor>& in) {
  exec::ExecOp e;
  e.op_type = op.op_type;
  e.version = op.since_version;
  e.kernel = exec::FindKernel("", op.op_type);
  if (!e.kernel) return InvalidArgument("no CPU kernel for " + op.op_type);
  for (const auto& a : op.attributes) {
    exec::Attribute x;
    using A = onnx::AttributeProto;
    using K = exec::Attribute::Kind;
    if (a.type() == A::INT) {
      x.kind = K::kInt;
      x.i = a.i();
    } else if (a.type() == A::FLOAT) {
      x.kind = K::kFloat;
      x.f = a.f();
    } else if (a.type() == A::STRING) {
      x.kind = K::kString;
      x.s = a.s();
    } else {
      x.kind = K::kInts;
      x.ints.assign(a.ints().begin(), a.ints().end());
    }
    e.attrs[a.name()] = std::move(x);
  }
  std::vector<const Tensor*> args;
  for (size_t i = 0; i < in.size(); ++i) {
    args.push_back(in[i].empty() ? nullptr : &in[i]);
    e.inputs.push_back(in[i].empty() ? -1 : static_cast<int>(i));
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) e.outputs.push_back(static_cast<int>(i));
  std::vector<Tensor> out(op.outputs.size());
  exec::KernelContext c(e, args, &out);
  if (Status s = e.kernel(c); !s.ok()) return s;
  return out;
}

bool IsPureMovement(const cg::OpDesc& op) {
  if (op.op_type != "Resize") return true;
  for (const auto& a : op.attributes)
    if (a.name() == "mode" && a.s() != "nearest") return false;
  return true;
}

TEST_CASE("Movement kernels are bit-exact against the CPU kernels", "[cuda][data_movement]") {
  std::vector<CatalogEntry> entries;
  std::vector<cg::KernelSource> kernels;
  for (const auto& e : DataMovementCatalog()) {
    // A converting Concat has no CPU counterpart: checked by hand above.
    if (!IsPureMovement(e.op) || !e.no_cpu_reference.empty()) continue;
    auto k = Emit(e);
    REQUIRE(k.ok());
    entries.push_back(e);
    kernels.push_back(std::move(k).value());
  }
  auto module = HostModule::Compile(kernels);
  INFO(module.status().message());
  REQUIRE(module.ok());
  std::mt19937 rng(99);
  int exact = 0;
  for (size_t n = 0; n < entries.size(); ++n) {
    const cg::OpDesc& op = entries[n].op;
    INFO(entries[n].name);
    std::vector<std::string> in_bytes;
    std::vector<Tensor> in;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const auto& t = op.inputs[i];
      const bool constant = i < op.constants.size() && op.constants[i].has_value();
      const auto range =
          i < entries[n].ranges.size() ? entries[n].ranges[i] : std::pair<float, float>{-3.f, 3.f};
      in_bytes.push_back(t.dtype == 0 ? std::string()
                         : constant   ? *op.constants[i]
                                      : RandomBytes(t, range, rng));
      in.push_back(t.dtype == 0
                       ? Tensor()
                       : Tensor::FromBytes(static_cast<DataType>(t.dtype), t.dims,
                                           in_bytes.back().data(), in_bytes.back().size()));
    }
    auto want = RunCpuSameType(op, in);
    INFO(want.status().message());
    REQUIRE(want.ok());
    std::vector<std::string> outs;
    std::vector<void*> args;
    for (auto& b : in_bytes) args.push_back(b.empty() ? nullptr : b.data());
    for (const auto& o : op.outputs)
      outs.emplace_back(static_cast<size_t>(o.elements()) * StorageBytes(o.dtype), '\x55');
    for (auto& o : outs) args.push_back(o.data());
    REQUIRE(module.value().Launch(kernels[n], args).ok());
    bool same = true;
    for (size_t o = 0; o < outs.size(); ++o) {
      const Tensor& w = want.value()[o];
      same = same && w.byte_size() == outs[o].size() &&
             std::memcmp(w.raw(), outs[o].data(), outs[o].size()) == 0;
    }
    CHECK(same);
    exact += same ? 1 : 0;
  }
  CHECK(exact == static_cast<int>(entries.size()));
  WARN(exact << " movement kernels bit-exact against the CPU kernels");
}

TEST_CASE("Data-movement refusals name their reason", "[cuda][data_movement]") {
  cg::OpDesc slice =
      Op("Slice", 13, {T(F, {4}), T(TensorProto::INT64, {1}), T(TensorProto::INT64, {1})},
         {T(F, {2})});
  SetConstant(slice, 1, {1});
  CHECK_THAT(cg::Unsupported(slice),
             Catch::Contains("ends (input 2) is not a compile-time constant"));
  SetConstant(slice, 2, {3});
  CHECK(cg::Unsupported(slice).empty());

  cg::OpDesc expand = Op("Expand", 13, {T(F, {3, 1}), T(TensorProto::INT64, {2})}, {T(F, {3, 4})});
  CHECK_THAT(cg::Unsupported(expand),
             Catch::Contains("shape (input 1) is not a compile-time constant"));

  cg::OpDesc resize = Resize2x("cubic", "half_pixel");
  CHECK_THAT(cg::Unsupported(resize), Catch::Contains("cubic"));
  resize = Resize2x("linear", "tf_crop_and_resize");
  CHECK_THAT(cg::Unsupported(resize), Catch::Contains("tf_crop_and_resize"));
  resize = Resize2x("linear", "half_pixel");
  resize.attributes.push_back(AttrInt("antialias", 1));
  CHECK_THAT(cg::Unsupported(resize), Catch::Contains("antialias"));
  resize = Resize2x("linear", "half_pixel");
  resize.constants[2].reset();
  CHECK_THAT(cg::Unsupported(resize),
             Catch::Contains("scales (input 2) is not a compile-time constant"));
  resize = Op("Resize", 18, {T(F, {1, 1, 2, 2}), T(0, {}), T(0, {}), T(TensorProto::INT64, {2})},
              {T(F, {1, 1, 4, 4})},
              {AttrInts("axes", {2, 3}), AttrString("keep_aspect_ratio_policy", "not_larger")});
  SetConstant(resize, 3, {4, 4});
  CHECK_THAT(cg::Unsupported(resize), Catch::Contains("keep_aspect_ratio_policy"));

  // Shapes the graph declares must agree with the attributes.
  const cg::OpDesc wrong = Op("Transpose", 13, {T(F, {2, 3})}, {T(F, {2, 3})});
  CHECK_THAT(cg::Unsupported(wrong),
             Catch::Contains("declared [2,3] but the attributes give [3,2]"));
  cg::OpDesc pad = Op("Pad", 13, {T(F, {3}), T(TensorProto::INT64, {2})}, {T(F, {5})},
                      {AttrString("mode", "symmetric")});
  SetConstant(pad, 1, {1, 1});
  CHECK_THAT(cg::Unsupported(pad), Catch::Contains("mode 'symmetric'"));
  const cg::OpDesc strings =
      Op("Transpose", 13, {T(TensorProto::STRING, {2})}, {T(TensorProto::STRING, {2})});
  CHECK_THAT(cg::Unsupported(strings), Catch::Contains("no fixed size"));
}

}  // namespace
}  // namespace ortc::test::cuda