// The host shim itself: grid/block indices as loops, and block barriers with fibers (a
// shared-memory tree reduction needs every thread to pass each __syncthreads() together).
#include <catch2/catch.hpp>

#include "host_module.h"

namespace ortc::test::cuda {
namespace {

using backends::cuda::codegen::KernelSource;

// Block sums of 1000 values by a tree reduction in shared memory; and an index-writing kernel.
const char* kSource = R"(
extern "C" __global__ void block_sum(const void* in, void* out) {
  __shared__ float partial[128];
  const float* x = (const float*)in;
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < 1000u ? x[i] : 0.f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) ((float*)out)[blockIdx.x] = partial[0];
}
extern "C" __global__ void indices(void* out) {
  const unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
  const unsigned t = threadIdx.x + blockDim.x * threadIdx.y;
  ((int*)out)[b * blockDim.x * blockDim.y + t] = (int)(b * 1000 + t);
}
extern "C" __global__ void bad_barrier(void* out) {
  if (threadIdx.x == 0) return;
  __syncthreads();
  ((int*)out)[threadIdx.x] = 1;
}
)";

KernelSource Kernel(const std::string& name, int inputs, std::array<uint32_t, 3> grid,
                    std::array<uint32_t, 3> block, bool sync) {
  KernelSource k;
  k.name = name;
  k.num_inputs = inputs;
  k.num_outputs = 1;
  k.grid = grid;
  k.block = block;
  k.uses_block_sync = sync;
  return k;
}

TEST_CASE("host shim runs a shared-memory tree reduction with fiber barriers", "[cuda][shim]") {
  const auto sum = Kernel("block_sum", 1, {8, 1, 1}, {128, 1, 1}, true);
  const auto idx = Kernel("indices", 0, {3, 2, 1}, {4, 5, 1}, false);
  const auto bad = Kernel("bad_barrier", 0, {1, 1, 1}, {4, 1, 1}, true);
  auto m = HostModule::CompileText(kSource, {sum, idx, bad});
  REQUIRE(m.ok());
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7);
  std::vector<float> y(8, -1.f);
  REQUIRE(m.value().Launch(sum, {x.data(), y.data()}).ok());
  for (int b = 0; b < 8; ++b) {
    float want = 0;
    for (int i = b * 128; i < std::min(1000, (b + 1) * 128); ++i) want += x[i];
    CHECK(y[b] == want);
  }

  std::vector<int> ids(6 * 20, -1);
  REQUIRE(m.value().Launch(idx, {ids.data()}).ok());
  for (int b = 0; b < 6; ++b)
    for (int t = 0; t < 20; ++t) CHECK(ids[b * 20 + t] == b * 1000 + t);

  // A barrier skipped by thread 0 is reported, not hung or crashed.
  std::vector<int> flags(4, 0);
  const Status s = m.value().Launch(bad, {flags.data()});
  CHECK_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("__syncthreads"));
  // The wrong argument count is an error too.
  CHECK_FALSE(m.value().Launch(sum, {x.data()}).ok());
}

}  // namespace
}  // namespace ortc::test::cuda
