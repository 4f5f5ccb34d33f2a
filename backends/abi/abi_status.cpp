// Status code mapping across the plugin ABI.
#include "abi/abi_status.h"

namespace ortc::backends::abi {

OrtcPluginStatus ToPluginStatus(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return ORTC_PLUGIN_OK;
    case StatusCode::kInvalidArgument:
      return ORTC_PLUGIN_INVALID_ARGUMENT;
    case StatusCode::kNoSuchFile:
      return ORTC_PLUGIN_NO_SUCH_FILE;
    case StatusCode::kNotImplemented:
      return ORTC_PLUGIN_NOT_IMPLEMENTED;
    case StatusCode::kEpFail:
      return ORTC_PLUGIN_EP_FAIL;
    case StatusCode::kIoError:
      return ORTC_PLUGIN_IO_ERROR;
    case StatusCode::kOutOfMemory:
      return ORTC_PLUGIN_OUT_OF_MEMORY;
    case StatusCode::kInvalidGraph:
    case StatusCode::kModelRequiresCompilation:
      break;
  }
  return ORTC_PLUGIN_INVALID_GRAPH;
}

Status FromPluginStatus(OrtcPluginStatus s, std::string message) {
  if (s == ORTC_PLUGIN_OK) return Status::Ok();
  if (message.empty()) message = "the backend gave no reason (status " + std::to_string(s) + ")";
  switch (s) {
    case ORTC_PLUGIN_INVALID_ARGUMENT:
      return Status(StatusCode::kInvalidArgument, std::move(message));
    case ORTC_PLUGIN_NOT_IMPLEMENTED:
      return Status(StatusCode::kNotImplemented, std::move(message));
    case ORTC_PLUGIN_EP_FAIL:
    case ORTC_PLUGIN_UNSUPPORTED:
      return Status(StatusCode::kEpFail, std::move(message));
    case ORTC_PLUGIN_IO_ERROR:
      return Status(StatusCode::kIoError, std::move(message));
    case ORTC_PLUGIN_OUT_OF_MEMORY:
      return Status(StatusCode::kOutOfMemory, std::move(message));
    case ORTC_PLUGIN_NO_SUCH_FILE:
      return Status(StatusCode::kNoSuchFile, std::move(message));
    default:
      return Status(StatusCode::kInvalidGraph, std::move(message));
  }
}

namespace {
thread_local std::string g_last_error;
}  // namespace

OrtcPluginStatus Fail(const Status& status) {
  g_last_error = status.message();
  return ToPluginStatus(status.code());
}

const char* LastErrorText() {
  return g_last_error.c_str();
}

}  // namespace ortc::backends::abi
