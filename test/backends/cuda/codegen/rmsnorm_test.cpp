// RMSNormalization (formed by lowering from the exporters' RMSNorm) through the host shim
// against a float64 reference: fp32, fp16 and bf16 storage, rows of 1 to 1000 elements, with and
// without a scale, normalized over more than the last axis; and its refusals.
#include <cmath>
#include <random>

#include "data_movement_test_util.h"
#include "reference_conversions.h"

namespace ortc::test::cuda {
namespace {

constexpr int32_t H = TensorProto::FLOAT16, BF = TensorProto::BFLOAT16;

std::vector<float> Uniform(size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// The values as stored in `dtype` (rounded to nearest even) and their bytes.
std::string Store(int32_t dtype, std::vector<float>* values) {
  if (dtype == F) return Floats(*values);
  std::string bytes(values->size() * 2, '\0');
  for (size_t i = 0; i < values->size(); ++i) {
    const uint16_t b = dtype == H ? RefFloatToHalf((*values)[i]) : RefFloatToBf16((*values)[i]);
    (*values)[i] = dtype == H ? RefHalfToFloat(b) : RefBf16ToFloat(b);
    std::memcpy(&bytes[2 * i], &b, 2);
  }
  return bytes;
}

std::vector<double> Load(int32_t dtype, const std::string& bytes) {
  if (dtype == F) {
    const auto f = AsFloats(bytes);
    return {f.begin(), f.end()};
  }
  std::vector<double> v(bytes.size() / 2);
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t b;
    std::memcpy(&b, &bytes[2 * i], 2);
    v[i] = dtype == H ? RefHalfToFloat(b) : RefBf16ToFloat(b);
  }
  return v;
}

struct Case {
  std::vector<int64_t> dims;
  int64_t axis = -1;
  int32_t dtype = F, scale_dtype = F;
  bool scale = true;
  float eps = 1e-6f;
};

// Largest |got - want| / (tolerance) over the output: <= 1 passes. The tolerance is 2e-6
// relative for fp32 storage (fp32 arithmetic over up to 1000 squares), else one unit in the
// last place of the storage type (rounding the fp32 result costs half of one).
double Run(const Case& c, const std::string& name) {
  const auto rank = static_cast<int64_t>(c.dims.size());
  const int64_t axis = c.axis < 0 ? c.axis + rank : c.axis;
  int64_t rows = 1, dim = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? rows : dim) *= c.dims[i];
  auto x = Uniform(static_cast<size_t>(rows * dim), 7 + static_cast<unsigned>(dim), -2, 2);
  auto scale = Uniform(static_cast<size_t>(dim), 3, -1.5f, 1.5f);
  const std::string x_bytes = Store(c.dtype, &x);
  const std::string s_bytes = c.scale ? Store(c.scale_dtype, &scale) : std::string();
  const std::vector<int64_t> scale_dims(c.dims.begin() + axis, c.dims.end());
  auto op = Op("RMSNormalization", 23,
               {T(c.dtype, c.dims), c.scale ? T(c.scale_dtype, scale_dims) : cg::TensorDesc{}},
               {T(c.dtype, c.dims)}, {AttrInt("axis", c.axis), AttrFloat("epsilon", c.eps)});
  op.constants.resize(2);
  const auto got = Load(c.dtype, RunKernel(op, name, {x_bytes, s_bytes})[0]);
  REQUIRE(got.size() == x.size());
  const double rel = c.dtype == F   ? 2e-6
                     : c.dtype == H ? std::ldexp(1.0, -10)
                                    : std::ldexp(1.0, -7);
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double sumsq = 0;
    for (int64_t k = 0; k < dim; ++k) sumsq += double(x[r * dim + k]) * x[r * dim + k];
    const double inv = 1 / std::sqrt(sumsq / dim + c.eps);
    for (int64_t k = 0; k < dim; ++k) {
      const double want = x[r * dim + k] * inv * (c.scale ? scale[k] : 1.0);
      const double tol = rel * std::fabs(want) + 1e-6;
      worst = std::max(worst, std::fabs(got[r * dim + k] - want) / tol);
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("RMSNormalization matches a float64 reference", "[cuda][rmsnorm]") {
  for (int32_t dtype : {F, H, BF}) {
    for (int64_t dim : {1, 7, 64, 1000}) {  // 1000: more elements than threads in a block
      for (bool scale : {true, false}) {
        Case c;
        c.dims = {2, 3, dim};
        c.dtype = c.scale_dtype = dtype;
        c.scale = scale;
        const std::string name = "rms_" + std::to_string(dtype) + "_" + std::to_string(dim) +
                                 (scale ? "_scale" : "_noscale");
        INFO(name);
        CHECK(Run(c, name) <= 1);
      }
    }
  }
}

TEST_CASE("RMSNormalization: epsilon, several normalized axes, a float32 scale on fp16",
          "[cuda][rmsnorm]") {
  Case big_eps;  // eps as large as the mean square: a wrong or missing eps shows
  big_eps.dims = {4, 64};
  big_eps.eps = 1.f;
  CHECK(Run(big_eps, "rms_big_eps") <= 1);
  Case axes;  // axis 1 of [2, 3, 5]: rows of 15 elements, a [3, 5] scale
  axes.dims = {2, 3, 5};
  axes.axis = 1;
  CHECK(Run(axes, "rms_axis1") <= 1);
  Case mixed;  // an fp16 activation with a float32 weight: each input read in its own type
  mixed.dims = {3, 64};
  mixed.dtype = H;
  CHECK(Run(mixed, "rms_mixed_scale") <= 1);
}

TEST_CASE("RMSNormalization refusals name their reason", "[cuda][rmsnorm]") {
  CHECK(cg::HasKernel("RMSNormalization"));
  auto broadcast = Op("RMSNormalization", 23, {T(F, {2, 8}), T(F, {1})}, {T(F, {2, 8})});
  CHECK_THAT(cg::Unsupported(broadcast), Catch::Contains("broadcast"));
  auto stash = Op("RMSNormalization", 23, {T(H, {2, 8}), T(H, {8})}, {T(H, {2, 8})},
                  {AttrInt("stash_type", TensorProto::FLOAT16)});
  CHECK_THAT(cg::Unsupported(stash), Catch::Contains("stash_type"));
  auto scalar = Op("RMSNormalization", 23, {T(F, {}), T(F, {})}, {T(F, {})});
  CHECK_FALSE(cg::Unsupported(scalar).empty());
  auto ints =
      Op("RMSNormalization", 23, {T(TensorProto::INT32, {2, 8})}, {T(TensorProto::INT32, {2, 8})});
  CHECK_FALSE(cg::Unsupported(ints).empty());
  auto ok = Op("RMSNormalization", 23, {T(F, {2, 8}), T(F, {8})}, {T(F, {2, 8})});
  CHECK(cg::Unsupported(ok).empty());
}

}  // namespace ortc::test::cuda
