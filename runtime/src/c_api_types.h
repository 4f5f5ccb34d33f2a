// The C API's opaque types and status helpers, shared by the files that implement it.
#pragma once

#include <memory>
#include <new>
#include <string>

#include "ortc/ortc_c.h"
#include "ortc/runtime.h"

struct OrtcStatus {
  OrtcCode code;
  std::string message;
};
struct OrtcSession {
  std::unique_ptr<ortc::Session> session;
};
struct OrtcTensor {
  ortc::Tensor tensor;
};
struct OrtcSessionOptions {
  ortc::SessionOptions options;
  std::unique_ptr<ortc::DeviceDescription> device;  // options.device points here when set
};

namespace ortc::c_api {

inline OrtcStatus* ToC(const ortc::Status& s) {
  if (s.ok()) return nullptr;
  return new OrtcStatus{static_cast<OrtcCode>(static_cast<int>(s.code())), s.ToString()};
}

inline OrtcStatus* Invalid(const std::string& m) {
  return ToC(ortc::InvalidArgument(m));
}

// What a call threw, as a status that never lets the exception cross: ORTC_OUT_OF_MEMORY for a
// failed allocation, ORTC_INVALID_ARGUMENT otherwise.
inline OrtcStatus* Thrown(const std::string& call, const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e))
    return ToC(ortc::OutOfMemory(call + ": out of memory"));
  return Invalid(call + ": " + e.what());
}

}  // namespace ortc::c_api
