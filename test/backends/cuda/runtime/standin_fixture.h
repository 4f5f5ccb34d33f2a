// What the stand-in tests share: the probe (set up before any session loads the CUDA plugin),
// device memory of the stand-in driver, and compiling / opening models for --ep cuda,cpu.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "model_builder.h"
#include "ortc/runtime.h"
#include "standin_probe.h"

namespace ortc::test {

const StandinProbe& Probe();

// Device memory of the stand-in driver for the scope.
struct DeviceBuffer {
  void* ptr;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* floats() const { return static_cast<float*>(ptr); }
};

// Compiles into dir and returns the ctx model (REQUIREs success: NVRTC is part of the build).
// The compiler runs without the stand-ins: NVRTC itself opens libcuda.so.1 when it can.
std::filesystem::path Compile(const ModelBuilder& m, const std::filesystem::path& dir,
                              const std::string& name, const std::string& precision = "fp32");

std::unique_ptr<Session> Open(const std::filesystem::path& ctx, SessionOptions o = {});

}  // namespace ortc::test
