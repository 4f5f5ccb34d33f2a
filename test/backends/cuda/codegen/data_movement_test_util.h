// Test helpers of the data-movement and pooling kernel tests: run one generated op through the
// host shim on given bytes, and float32 byte views.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "catalog.h"
#include "host_module.h"

namespace ortc::test::cuda {

using onnx::TensorProto;
constexpr int32_t F = TensorProto::FLOAT;

// Runs one generated kernel through the host shim on these input bytes; returns output bytes.
inline std::vector<std::string> RunKernel(const cg::OpDesc& op, const std::string& name,
                                          std::vector<std::string> inputs) {
  auto k = cg::EmitOp(name, op);
  INFO(name << ": " << k.status().message());
  REQUIRE(k.ok());
  auto module = HostModule::Compile({k.value()});
  INFO(module.status().message());
  REQUIRE(module.ok());
  std::vector<std::string> outs;
  for (const auto& o : op.outputs) {
    const auto bytes = static_cast<size_t>(o.elements()) * StorageBytes(o.dtype);
    outs.emplace_back(bytes, '\x7f');
  }
  std::vector<void*> args;
  for (auto& b : inputs) args.push_back(b.empty() ? nullptr : b.data());
  for (auto& o : outs) args.push_back(o.data());
  Status s = module.value().Launch(k.value(), args);
  INFO(s.message());
  REQUIRE(s.ok());
  return outs;
}

inline std::string Floats(const std::vector<float>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * 4};
}

inline std::vector<float> AsFloats(const std::string& b) {
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

}  // namespace ortc::test::cuda
