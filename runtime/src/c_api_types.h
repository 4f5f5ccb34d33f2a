// The C API's opaque types and status helpers, shared by the files that implement it.
#pragma once

#include <memory>
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

}  // namespace ortc::c_api
