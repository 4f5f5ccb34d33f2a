// Status helpers: code names and message composition.
#include "ortc/status.h"

namespace ortc {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNoSuchFile:
      return "NO_SUCHFILE";
    case StatusCode::kInvalidGraph:
      return "INVALID_GRAPH";
    case StatusCode::kNotImplemented:
      return "NOT_IMPLEMENTED";
    case StatusCode::kEpFail:
      return "EP_FAIL";
    case StatusCode::kModelRequiresCompilation:
      return "MODEL_REQUIRES_COMPILATION";
    case StatusCode::kIoError:
      return "IO_ERROR";
    case StatusCode::kOutOfMemory:
      return "OUT_OF_MEMORY";
  }
  return "UNKNOWN";
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace ortc
