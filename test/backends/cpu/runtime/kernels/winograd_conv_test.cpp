// Winograd convolution: which float convolutions may take it, that the runtime picks it where it
// pays (one thread; at several threads only for enough work per thread) and never when the
// compiler ruled it out, and that its results match a direct sum computed here in double.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "cpu/runtime/kernels/onednn_conv.h"
#include "cpu_kernel/exec_graph.h"
#include "cpu_kernel/intra_op_threads.h"

using namespace ortc::exec;

namespace {

// A 3x3, stride-1, pad-1 float convolution over 1 x c_in x h x w.
ConvGeometry Conv3x3(int64_t c_in, int64_t c_out, int64_t h, int64_t w) {
  ConvGeometry g;
  g.batch = 1;
  g.in_channels = c_in;
  g.out_channels = c_out;
  g.in = {h, w};
  g.kernel = {3, 3};
  g.strides = {1, 1};
  g.dilations = {1, 1};
  g.pads_begin = {1, 1};
  g.pads_end = {1, 1};
  g.out = {h, w};
  return g;
}

struct Outcome {
  std::string implementation;
  double worst_error = 0;  // largest |y - direct sum|, relative to the sum of |terms|
};

// Runs g through oneDNN at `threads` threads and checks it against a direct sum.
Outcome RunAndCompare(const ConvGeometry& g, int threads) {
  const int64_t C = g.in_channels, M = g.out_channels, H = g.in[0], W = g.in[1];
  std::vector<float> x(C * H * W), w(M * C * 9), b(M), y(M * H * W);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * i);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.2f * std::cos(0.53f * i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.01f * i;
  UseIntraOpThreads(threads);
  ExecOp op;
  op.name = "conv";
  OneDnnConvCache cache(/*weights_constant=*/true, /*packed_desc=*/"");
  const std::vector<int64_t> x_shape{1, C, H, W}, y_shape{1, M, H, W};
  bool handled = false;
  REQUIRE(OneDnnConv(op, &cache, g, x.data(), w.data(), b.data(), nullptr, FusedActivation{},
                     x_shape, y_shape, y.data(), &handled)
              .ok());
  REQUIRE(handled);
  const std::vector<int64_t>* out_shape = nullptr;
  const void* plan = FindConvPlan(&cache, x_shape, &out_shape);
  REQUIRE(plan);
  Outcome o{ConvPlanImplementation(plan)};
  for (int64_t m = 0; m < M; ++m)
    for (int64_t oh = 0; oh < H; ++oh)
      for (int64_t ow = 0; ow < W; ++ow) {
        double sum = b[m], magnitude = std::fabs(b[m]);
        for (int64_t c = 0; c < C; ++c)
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = oh - 1 + kh, iw = ow - 1 + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              const double term =
                  double(x[(c * H + ih) * W + iw]) * w[((m * C + c) * 3 + kh) * 3 + kw];
              sum += term;
              magnitude += std::fabs(term);
            }
        const double err = std::fabs(y[(m * H + oh) * W + ow] - sum) / magnitude;
        o.worst_error = std::max(o.worst_error, err);
      }
  UseIntraOpThreads(1);
  return o;
}

bool IsWinograd(const std::string& implementation) {
  return implementation.find("wino") != std::string::npos;
}

// oneDNN 2.x has float Winograd kernels for AVX-512 only.
bool CpuHasWinograd() {
  return OneDnnEffectiveIsa().rfind("avx512", 0) == 0;
}

}  // namespace

TEST_CASE("Winograd candidates are float 3x3 stride-1 convolutions with 16+ channels",
          "[winograd]") {
  CHECK(WinogradCandidate(Conv3x3(16, 16, 8, 8)));
  CHECK(WinogradCandidate(Conv3x3(512, 512, 7, 7)));
  CHECK_FALSE(WinogradCandidate(Conv3x3(3, 64, 224, 224)));  // a first layer: too few channels
  CHECK_FALSE(WinogradCandidate(Conv3x3(64, 8, 56, 56)));
  ConvGeometry g = Conv3x3(64, 64, 56, 56);
  g.strides = {2, 2};
  CHECK_FALSE(WinogradCandidate(g));
  g = Conv3x3(64, 64, 56, 56);
  g.dilations = {2, 2};
  CHECK_FALSE(WinogradCandidate(g));
  g = Conv3x3(64, 64, 56, 56);
  g.group = 64;
  CHECK_FALSE(WinogradCandidate(g));
  g = Conv3x3(64, 64, 56, 56);
  g.kernel = {5, 5};
  CHECK_FALSE(WinogradCandidate(g));
  g = Conv3x3(64, 64, 56, 56);
  g.bf16 = true;
  CHECK_FALSE(WinogradCandidate(g));
  g = Conv3x3(64, 64, 56, 56);
  g.algorithm = ConvAlgorithm::kDirect;
  CHECK_FALSE(WinogradCandidate(g));
  CHECK(ParseConvAlgorithm("direct") == ConvAlgorithm::kDirect);
  CHECK(ParseConvAlgorithm("winograd") == ConvAlgorithm::kWinograd);
  CHECK(ParseConvAlgorithm("auto") == ConvAlgorithm::kAuto);
}

TEST_CASE("the runtime runs Winograd where it pays and matches a direct sum", "[winograd]") {
  const bool wino = CpuHasWinograd();
  INFO("oneDNN ISA " << OneDnnEffectiveIsa());
  // One thread: every candidate.
  Outcome small = RunAndCompare(Conv3x3(16, 32, 12, 12), 1);
  INFO("16->32 at 12x12, 1 thread: " << small.implementation);
  CHECK(IsWinograd(small.implementation) == wino);
  CHECK(small.worst_error < 1e-6);
  // Two threads allowed: the small layer is worth one thread only (ThreadsForWork), where
  // Winograd pays as above; a layer worth two threads but with little work for each stays direct
  // (Winograd ran such layers 0.4x-0.9x), a large one does not.
  Outcome small2 = RunAndCompare(Conv3x3(16, 32, 12, 12), 2);
  INFO("16->32 at 12x12, 2 threads: " << small2.implementation);
  CHECK(IsWinograd(small2.implementation) == wino);
  Outcome medium2 = RunAndCompare(Conv3x3(32, 64, 14, 14), 2);
  INFO("32->64 at 14x14, 2 threads: " << medium2.implementation);
  CHECK_FALSE(IsWinograd(medium2.implementation));
  CHECK(medium2.worst_error < 1e-6);
  Outcome large2 = RunAndCompare(Conv3x3(64, 64, 56, 56), 2);
  INFO("64->64 at 56x56, 2 threads: " << large2.implementation);
  CHECK(IsWinograd(large2.implementation) == wino);
  CHECK(large2.worst_error < 1e-6);
}

TEST_CASE("a convolution marked winograd takes it at any thread count", "[winograd]") {
  ConvGeometry g = Conv3x3(16, 32, 12, 12);
  g.algorithm = ConvAlgorithm::kWinograd;
  Outcome forced = RunAndCompare(g, 2);
  INFO("16->32 at 12x12, 2 threads, forced: " << forced.implementation);
  CHECK(IsWinograd(forced.implementation) == CpuHasWinograd());
  CHECK(forced.worst_error < 1e-6);
}

TEST_CASE("a convolution the compiler marked direct never runs Winograd", "[winograd]") {
  ConvGeometry g = Conv3x3(64, 64, 28, 28);
  Outcome fast = RunAndCompare(g, 1);
  g.algorithm = ConvAlgorithm::kDirect;
  Outcome direct = RunAndCompare(g, 1);
  INFO("auto: " << fast.implementation << ", direct: " << direct.implementation);
  CHECK(IsWinograd(fast.implementation) == CpuHasWinograd());
  CHECK_FALSE(IsWinograd(direct.implementation));
  CHECK(direct.worst_error < 1e-6);
  CHECK(fast.worst_error < 1e-6);
}
