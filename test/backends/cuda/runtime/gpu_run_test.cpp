// Runs a kernel through the CUDA plugin on a real GPU: a hand-built binary whose program copies
// x into the arena and launches add_one (PTX, JIT by the driver) into y; compared with x + 1
// computed here. Without a device it exits 77 (ctest: skipped) and says why.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cuda_fixture.h"
#include "ortc/runtime.h"

int main() {
  using namespace ortc;
  const DeviceDescription dev = DeviceDescription::Detect();
  if (dev.cuda_driver_version == 0 || dev.cuda_archs.empty()) {
    std::printf("SKIP: no CUDA device: %s\n", dev.cuda_unavailable_reason.c_str());
    return 77;
  }
  std::ifstream in(ORTC_ADD_ONE_PTX);
  std::stringstream ptx;
  ptx << in.rdbuf();
  test::CudaModelSpec spec;
  spec.targets = {"compute_80"};
  spec.modules = {{"compute_80", ptx.str()}};
  const auto dir = std::filesystem::temp_directory_path() / "ortc_gpu_run_test";
  std::filesystem::remove_all(dir);
  auto ctx = test::WriteCudaModel(dir, spec);
  if (!ctx.ok()) {
    std::printf("FAIL: %s\n", ctx.status().ToString().c_str());
    return 1;
  }
  auto session = Session::Create(*ctx);
  if (!session.ok()) {
    std::printf("FAIL: %s\n", session.status().ToString().c_str());
    return 1;
  }
  const float x[4] = {1.5f, -2.f, 0.f, 1e3f};
  auto out = (*session)->Run({{"x", Tensor::FromBytes(DataType::kFloat, {4}, x, sizeof(x))}});
  if (!out.ok()) {
    std::printf("FAIL: %s\n", out.status().ToString().c_str());
    return 1;
  }
  const float* y = (*out)[0].data<float>();
  for (int i = 0; i < 4; ++i) {
    if (y[i] != x[i] + 1.0f) {
      std::printf("FAIL: y[%d] = %g, expected %g\n", i, y[i], x[i] + 1.0f);
      return 1;
    }
  }
  std::printf("OK: add_one ran on %s (driver %d)\n", dev.cuda_archs[0].c_str(),
              dev.cuda_driver_version);
  return 0;
}
