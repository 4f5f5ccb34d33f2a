// ONNX Runtime's C/C++ API as the plugin sees it: the API tables (fetched once from the
// OrtApiBase ONNX Runtime hands to CreateEpFactories) and the conversions between ortc's Status
// and ONNX Runtime's OrtStatus at every function ONNX Runtime calls.
#pragma once

// The C++ wrapper must not look up the API itself: the library gets it from ONNX Runtime.
#define ORT_API_MANUAL_INIT
#include <onnxruntime_cxx_api.h>  // brings onnxruntime_c_api.h and the plugin EP API

#include <exception>
#include <string>

#include "ortc/status.h"

namespace ortc::ort_ep {

struct OrtApis {
  const OrtApi* ort = nullptr;
  const OrtEpApi* ep = nullptr;
  const OrtModelEditorApi* editor = nullptr;
};

// Fails when ONNX Runtime is older than the headers this library was built with.
Status InitApis(const OrtApiBase* base);
const OrtApis& Apis();

// ortc's codes map to ONNX Runtime's: a binary needing recompilation is
// ORT_MODEL_REQUIRES_COMPILATION, a bad graph ORT_INVALID_GRAPH, and so on.
OrtErrorCode ToOrtErrorCode(StatusCode code);
// nullptr for OK. Every message starts with "ortc: " so users see which EP said it.
OrtStatus* ToOrtStatus(const Status& status);
// An OrtStatus from the C++ wrapper's exception or any other, for the catch-all at each entry.
OrtStatus* ToOrtStatus(const std::exception& e);

// Runs `body` (returning Status) and turns exceptions into an OrtStatus: nothing may unwind
// into ONNX Runtime.
template <typename F>
OrtStatus* Guard(F&& body) noexcept {
  try {
    return ToOrtStatus(body());
  } catch (const std::exception& e) {
    return ToOrtStatus(e);
  } catch (...) {
    return Apis().ort->CreateStatus(ORT_FAIL, "ortc: unknown exception");
  }
}

}  // namespace ortc::ort_ep
