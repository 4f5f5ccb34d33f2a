// bf16 Winograd F(2x2,3x3) (kernels/winograd_bf16.cpp): which convolutions take it, that the
// runtime picks it where it pays, and that its results match a direct sum computed here in
// double as closely as oneDNN's direct bf16 kernel does, over odd sizes, pads, batches, several
// blocks and threads, bias, residual (also in place) and activations.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "cpu/runtime/kernels/onednn_conv.h"
#include "cpu/runtime/kernels/winograd_bf16.h"
#include "cpu_kernel/exec_graph.h"
#include "cpu_kernel/intra_op_threads.h"

using namespace ortc::exec;

namespace {

// A bf16 3x3 stride-1 convolution over NHWC n x h x w x c_in, pads {top, left, bottom, right}.
ConvGeometry Bf16Conv3x3(int64_t n, int64_t c_in, int64_t c_out, int64_t h, int64_t w,
                         std::vector<int64_t> pads = {1, 1, 1, 1}) {
  ConvGeometry g;
  g.batch = n;
  g.in_channels = c_in;
  g.out_channels = c_out;
  g.in = {h, w};
  g.kernel = {3, 3};
  g.strides = {1, 1};
  g.dilations = {1, 1};
  g.pads_begin = {pads[0], pads[1]};
  g.pads_end = {pads[2], pads[3]};
  g.out = {h + pads[0] + pads[2] - 2, w + pads[1] + pads[3] - 2};
  g.channels_last = true;
  g.bf16 = true;
  return g;
}

bool CpuHasBf16() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
}

struct Options {
  bool bias = true, residual = false, in_place = false;
  FusedActivation act;
  int threads = 1;
};

struct Outcome {
  std::string implementation;
  double worst_error = 0;  // largest |y - direct sum|, relative to |bias| + the sum of |terms|
};

double ApplySteps(const FusedActivation& act, double v) {
  for (const FusedStep& s : act.steps) {
    if (s.kind == FusedStep::Kind::kRelu) v = std::max(v, 0.0);
    if (s.kind == FusedStep::Kind::kLeakyRelu) v = v < 0 ? v * s.alpha : v;
  }
  return v;
}

// Runs g through OneDnnConv and checks every output against a direct sum in double.
Outcome RunAndCompare(const ConvGeometry& g, const Options& o) {
  const int64_t N = g.batch, C = g.in_channels, K = g.out_channels, H = g.in[0], W = g.in[1],
                OH = g.out[0], OW = g.out[1];
  std::vector<float> x(N * H * W * C), w(K * C * 9), b(K), y(N * OH * OW * K), r(y.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * i) + 0.25f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.2f * std::cos(0.53f * i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.01f * i;
  for (size_t i = 0; i < r.size(); ++i) r[i] = 0.5f * std::sin(0.11f * i);
  if (o.in_place) y = r;
  const std::vector<float> residual = r;
  UseIntraOpThreads(o.threads);
  ExecOp op;
  op.name = "conv";
  OneDnnConvCache cache(/*weights_constant=*/true, /*packed_desc=*/"");
  const std::vector<int64_t> x_shape{N, H, W, C}, y_shape{N, OH, OW, K};
  const float* res = !o.residual ? nullptr : o.in_place ? y.data() : r.data();
  bool handled = false;
  REQUIRE(OneDnnConv(op, &cache, g, x.data(), w.data(), o.bias ? b.data() : nullptr, res, o.act,
                     x_shape, y_shape, y.data(), &handled)
              .ok());
  REQUIRE(handled);
  const std::vector<int64_t>* out_shape = nullptr;
  const void* plan = FindConvPlan(&cache, x_shape, &out_shape);
  REQUIRE(plan);
  Outcome out{ConvPlanImplementation(plan)};
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t k = 0; k < K; ++k) {
          const int64_t at = ((n * OH + oh) * OW + ow) * K + k;
          double sum = o.bias ? b[k] : 0.0;
          double magnitude = std::fabs(sum);
          if (o.residual) {
            sum += residual[at];
            magnitude += std::fabs(residual[at]);
          }
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = oh - g.pads_begin[0] + kh, iw = ow - g.pads_begin[1] + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              for (int64_t c = 0; c < C; ++c) {
                const double term =
                    double(x[((n * H + ih) * W + iw) * C + c]) * w[((k * C + c) * 3 + kh) * 3 + kw];
                sum += term;
                magnitude += std::fabs(term);
              }
            }
          const double want = ApplySteps(o.act, sum);
          out.worst_error = std::max(out.worst_error, std::fabs(y[at] - want) / magnitude);
        }
  UseIntraOpThreads(1);
  return out;
}

bool IsOurs(const Outcome& o) {
  return o.implementation == kWinogradBf16Implementation;
}

FusedActivation Act(FusedStep::Kind kind, float alpha = 0.f) {
  FusedActivation act;
  act.steps.push_back({kind, alpha, 0.f});
  return act;
}

// The same convolution on oneDNN's direct bf16 kernel: the accuracy to compare with.
double DirectError(ConvGeometry g, const Options& o) {
  g.algorithm = ConvAlgorithm::kDirect;
  const Outcome direct = RunAndCompare(g, o);
  CHECK_FALSE(IsOurs(direct));
  return direct.worst_error;
}

}  // namespace

TEST_CASE("bf16 Winograd candidates: bf16 channels-last 3x3 stride-1, channels in 16s",
          "[winograd_bf16]") {
  if (!CpuHasBf16()) {
    // Without AVX512-BF16 nothing is a candidate: the direct kernel (or the version gate) runs.
    CHECK_FALSE(WinogradBf16Candidate(Bf16Conv3x3(1, 64, 64, 56, 56)));
    return;
  }
  CHECK(WinogradBf16Candidate(Bf16Conv3x3(1, 64, 64, 56, 56)));
  CHECK(WinogradBf16Candidate(Bf16Conv3x3(2, 16, 32, 5, 3, {0, 2, 1, 0})));
  auto without = [](auto change) {
    ConvGeometry g = Bf16Conv3x3(1, 64, 64, 56, 56);
    change(g);
    return WinogradBf16Candidate(g);
  };
  CHECK_FALSE(without([](ConvGeometry& g) { g.bf16 = false; }));
  CHECK_FALSE(without([](ConvGeometry& g) { g.channels_last = false; }));
  CHECK_FALSE(without([](ConvGeometry& g) { g.input_nchw = true; }));
  CHECK_FALSE(without([](ConvGeometry& g) { g.strides = {2, 2}; }));
  CHECK_FALSE(without([](ConvGeometry& g) { g.dilations = {1, 2}; }));
  CHECK_FALSE(without([](ConvGeometry& g) { g.group = 2; }));
  CHECK_FALSE(without([](ConvGeometry& g) { g.kernel = {5, 5}; }));
  CHECK_FALSE(without([](ConvGeometry& g) { g.in_channels = 24; }));
  CHECK_FALSE(without([](ConvGeometry& g) { g.out_channels = 8; }));
  CHECK_FALSE(without([](ConvGeometry& g) { g.pads_end = {3, 1}; }));
  CHECK_FALSE(without([](ConvGeometry& g) { g.algorithm = ConvAlgorithm::kDirect; }));
  // No tile to transform: the blocking would divide by 0 blocks (found by review).
  CHECK_FALSE(without([](ConvGeometry& g) { g.in_channels = g.out_channels = 0; }));
  CHECK_FALSE(without([](ConvGeometry& g) { g.batch = 0; }));
  // Left plain at compile time, so the runtime can transform them.
  std::vector<float> w(64 * 64 * 9, 0.5f);
  auto packed =
      PackConvWeights(Bf16Conv3x3(1, 64, 64, 56, 56), true, false, FusedActivation{}, w.data());
  REQUIRE(packed.ok());
  CHECK_FALSE(packed->changed);
}

TEST_CASE("bf16 Winograd runs where it pays: enough tiles per thread", "[winograd_bf16]") {
  if (!CpuHasBf16()) return;  // the case above checked that nothing is a candidate
  CHECK(WinogradBf16Pays(Bf16Conv3x3(1, 64, 64, 56, 56), 1));
  CHECK(WinogradBf16Pays(Bf16Conv3x3(1, 256, 256, 14, 14), 1));  // 49 tiles
  CHECK_FALSE(WinogradBf16Pays(Bf16Conv3x3(1, 256, 256, 14, 14), 2));
  CHECK_FALSE(WinogradBf16Pays(Bf16Conv3x3(1, 512, 512, 7, 7), 1));  // 16 tiles
  ConvGeometry forced = Bf16Conv3x3(1, 512, 512, 7, 7);
  forced.algorithm = ConvAlgorithm::kWinograd;
  CHECK(WinogradBf16Pays(forced, 2));
  // Through the runtime: resnet18's first block takes it, its last one stays direct.
  Options o;
  o.residual = true;
  o.act = Act(FusedStep::Kind::kRelu);
  const Outcome large = RunAndCompare(Bf16Conv3x3(1, 64, 64, 56, 56), o);
  INFO("56x56x64: " << large.implementation);
  CHECK(IsOurs(large));
  const Outcome small = RunAndCompare(Bf16Conv3x3(1, 32, 32, 7, 7), o);
  INFO("7x7x32: " << small.implementation);
  CHECK_FALSE(IsOurs(small));
}

TEST_CASE("bf16 Winograd matches a direct sum as closely as the direct bf16 kernel",
          "[winograd_bf16]") {
  if (!CpuHasBf16()) return;
  struct Case {
    const char* what;
    ConvGeometry g;
    Options o;
  };
  std::vector<Case> cases;
  cases.push_back({"odd sizes, pads 1", Bf16Conv3x3(1, 32, 48, 13, 9), {}});
  cases.push_back({"no padding", Bf16Conv3x3(1, 16, 16, 11, 8, {0, 0, 0, 0}), {}});
  cases.push_back({"uneven pads", Bf16Conv3x3(1, 16, 32, 9, 10, {0, 2, 1, 0}), {}});
  Options no_bias;
  no_bias.bias = false;
  cases.push_back({"batch 3, no bias", Bf16Conv3x3(3, 16, 16, 6, 7), no_bias});
  Options relu;
  relu.residual = true;
  relu.act = Act(FusedStep::Kind::kRelu);
  cases.push_back(
      {"residual + Relu, 2 blocks of 221 and 220 tiles", Bf16Conv3x3(1, 16, 16, 41, 42), relu});
  Options threads = relu;
  threads.threads = 2;
  cases.push_back({"2 threads, 2 images in 2 blocks", Bf16Conv3x3(2, 16, 32, 30, 30), threads});
  Options in_place = relu;
  in_place.in_place = true;
  cases.push_back({"residual is the output", Bf16Conv3x3(1, 32, 32, 12, 12), in_place});
  Options leaky;
  leaky.residual = true;
  leaky.act = Act(FusedStep::Kind::kLeakyRelu, 0.1f);
  cases.push_back({"residual + LeakyRelu", Bf16Conv3x3(1, 16, 16, 10, 10), leaky});
  for (Case& c : cases) {
    c.g.algorithm = ConvAlgorithm::kWinograd;  // whatever the size
    const Outcome wino = RunAndCompare(c.g, c.o);
    const double direct = DirectError(c.g, c.o);
    INFO(c.what << ": " << wino.implementation << ", error " << wino.worst_error << " (direct bf16 "
                << direct << ")");
    CHECK(IsOurs(wino));
    // bf16 keeps 8 significant bits: about 4e-3 of the magnitude per rounding.
    CHECK(wino.worst_error < 1e-2);
    CHECK(wino.worst_error < 3 * direct);
  }
}
