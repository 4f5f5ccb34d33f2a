// The generated parts of attention on GEMMs through the host shim, against direct float64
// references written here: AttentionSoftmax (scale, broadcast additive mask, Where either way
// round, fully masked rows) and StridedView (a fused QKV projection's head slices, GQA's
// repeated key/value heads).
#include <cmath>

#include "data_movement_test_util.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

constexpr int32_t BOOL = TensorProto::BOOL;

struct SoftmaxCase {
  int64_t h = 1, s = 1, keys = 1;  // scores [1, h, s, keys]
  float scale = 1.f, fill = 0.f;
  bool keep_if_true = true;
  std::vector<float> mask;     // [1, 1, s, keys] when not empty
  std::vector<uint8_t> cond;   // [1, 1, 1, keys] when not empty
};

double RunSoftmax(const SoftmaxCase& c, const std::string& name) {
  const std::vector<int64_t> dims = {1, c.h, c.s, c.keys};
  const auto scores = RandomFloats(11, c.h * c.s * c.keys);
  auto op = Op("AttentionSoftmax", 1,
               {T(F, dims), c.mask.empty() ? cg::TensorDesc{} : T(F, {1, 1, c.s, c.keys}),
                c.cond.empty() ? cg::TensorDesc{} : T(BOOL, {1, 1, 1, c.keys})},
               {T(F, dims)},
               {AttrFloat("scale", c.scale), AttrFloat("fill", c.fill),
                AttrInt("keep_if_true", c.keep_if_true)});
  op.constants.resize(3);
  const auto outs =
      RunKernel(op, name,
                {Floats(scores), c.mask.empty() ? std::string() : Floats(c.mask),
                 std::string(c.cond.begin(), c.cond.end())});
  const auto got = AsFloats(outs[0]);
  double worst = 0;
  for (int64_t hi = 0; hi < c.h; ++hi)
    for (int64_t r = 0; r < c.s; ++r) {
      std::vector<double> v(c.keys);
      double peak = -INFINITY;
      for (int64_t j = 0; j < c.keys; ++j) {
        double x = double(scores[(hi * c.s + r) * c.keys + j]) * c.scale;
        if (!c.mask.empty()) x += c.mask[r * c.keys + j];
        if (!c.cond.empty() && (c.cond[j] != 0) != c.keep_if_true) x = c.fill;
        v[j] = x;
        peak = std::max(peak, x);
      }
      double total = 0;
      for (double x : v) total += x == -INFINITY ? 0 : std::exp(x - peak);
      for (int64_t j = 0; j < c.keys; ++j) {
        const double want = peak == -INFINITY ? 0 : std::exp(v[j] - peak) / total;
        const double g = got[(hi * c.s + r) * c.keys + j];
        worst = std::max(worst, std::isnan(g) ? INFINITY : std::fabs(g - want));
      }
    }
  return worst;
}

}  // namespace

TEST_CASE("AttentionSoftmax scales, adds a broadcast mask and normalises each row",
          "[cuda][attention]") {
  SoftmaxCase c;
  c.h = 3, c.s = 7, c.keys = 300, c.scale = 0.125f;  // 300 keys: several per thread
  c.mask.assign(7 * 300, 0.f);
  for (int r = 0; r < 7; ++r)
    for (int j = 0; j < 300; ++j)
      if (j > 40 * r) c.mask[r * 300 + j] = -3.4e38f;  // a causal-like band
  CHECK(RunSoftmax(c, "sm_mask") < 1e-6);
}

TEST_CASE("AttentionSoftmax applies a Where mask either way round and zeroes masked rows",
          "[cuda][attention]") {
  SoftmaxCase c;
  c.h = 2, c.s = 5, c.keys = 33;
  for (int j = 0; j < 33; ++j) c.cond.push_back(j < 27);  // 6 padded keys
  c.fill = -INFINITY;
  CHECK(RunSoftmax(c, "sm_where") < 1e-6);
  for (auto& x : c.cond) x = !x;
  c.keep_if_true = false;
  CHECK(RunSoftmax(c, "sm_where_inverted") < 1e-6);
  // Every key masked with -inf: SDPA's IsNaN guard makes such rows zeros, so does the kernel.
  std::fill(c.cond.begin(), c.cond.end(), 1);
  CHECK(RunSoftmax(c, "sm_all_masked") < 1e-6);
  // A finite fill (eager attention's lowest float) gives a uniform row instead.
  c.fill = -3.4028234663852886e38f;
  CHECK(RunSoftmax(c, "sm_all_masked_finite") < 1e-6);
}

TEST_CASE("StridedView copies head slices of a packed projection and repeated kv heads",
          "[cuda][attention]") {
  // x [1, s, (hq + 2 * hkv) * d]: Q heads, then K heads, then V heads in each row. K read with
  // hq / hkv query heads per key/value head, as GQA repeats them.
  const int64_t s = 9, d = 4, hq = 6, hkv = 2, width = (hq + 2 * hkv) * d;
  const auto x = RandomFloats(5, s * width);
  auto view = [&](int64_t offset, int64_t group, const std::string& name) {
    auto op = Op("StridedView", 1, {T(F, {1, s, width})}, {T(F, {1, hq, s, d})},
                 {AttrInts("shape", {1, hq, s, d}), AttrInts("strides", {s * width, d, width, 1}),
                  AttrInt("offset", offset), AttrInt("head_group", group)});
    op.constants.resize(1);
    return AsFloats(RunKernel(op, name, {Floats(x)})[0]);
  };
  const auto q = view(0, 1, "view_q");
  const auto k = view(hq * d, hq / hkv, "view_k_gqa");
  for (int64_t h = 0; h < hq; ++h)
    for (int64_t r = 0; r < s; ++r)
      for (int64_t e = 0; e < d; ++e) {
        const size_t at = (h * s + r) * d + e;
        CHECK(q[at] == x[r * width + h * d + e]);
        CHECK(k[at] == x[r * width + hq * d + (h / (hq / hkv)) * d + e]);
      }
  // A view reaching past its input is refused, not read.
  auto bad = Op("StridedView", 1, {T(F, {1, s, width})}, {T(F, {1, hq, s, d})},
                {AttrInts("shape", {1, hq, s, d}), AttrInts("strides", {s * width, d, width, 1}),
                 AttrInt("offset", width)});
  CHECK_FALSE(cg::Unsupported(bad).empty());
}

}  // namespace ortc::test::cuda
