// The stand-in tests' shared set-up (standin_fixture.h).
#include "standin_fixture.h"

#include <catch2/catch.hpp>

#include <cstdlib>

#include "run_ortc.h"

namespace ortc::test {

namespace fs = std::filesystem;

const StandinProbe& Probe() {
  static const StandinProbe probe = [] {
    setenv("ORTC_BACKEND_PATH", ORTC_CUDA_PLUGIN_DIR, 1);  // before any session loads the plugin
    return StandinProbe();
  }();
  return probe;
}

DeviceBuffer::DeviceBuffer(size_t bytes) : ptr(Probe().DeviceAlloc(bytes)) {
  REQUIRE(ptr);
}

DeviceBuffer::~DeviceBuffer() {
  Probe().DeviceFree(ptr);
}

fs::path Compile(const ModelBuilder& m, const fs::path& dir, const std::string& name,
                 const std::string& precision) {
  const fs::path model = dir / (name + ".onnx");
  m.Save(model);
  const fs::path out = dir / (name + "_" + precision);
  fs::create_directories(out);
  const auto r =
      RunOrtcWith("env -u LD_LIBRARY_PATH",
                  "compile '" + model.string() + "' --ep cuda,cpu --target-arch sm_90 -q -o '" +
                      out.string() + "/' --precision " + precision,
                  true);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  return out / (name + "_ctx.onnx");
}

std::unique_ptr<Session> Open(const fs::path& ctx, SessionOptions o) {
  auto s = Session::Create(ctx, o);
  INFO((s.ok() ? "" : s.status().ToString()));
  REQUIRE(s.ok());
  return std::move(s).value();
}

}  // namespace ortc::test
