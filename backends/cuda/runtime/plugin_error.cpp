// Thread-local last error of the CUDA plugin and the text of vendor status codes.
#include "plugin_error.h"

namespace ortc::cuda_rt {
namespace {
thread_local std::string g_last_error;
}

const char* LastError() {
  return g_last_error.c_str();
}

void ClearError() {
  g_last_error.clear();
}

OrtcPluginStatus Fail(OrtcPluginStatus code, std::string message) {
  g_last_error = std::move(message);
  return code;
}

std::string CuText(CUresult r, const char* what) {
  const char* name = nullptr;
  const char* text = nullptr;
  const auto& d = Driver();
  if (d.cuGetErrorName) d.cuGetErrorName(r, &name);
  if (d.cuGetErrorString) d.cuGetErrorString(r, &text);
  std::string out = what;
  out.append(": ").append(name ? name : "CUresult " + std::to_string(r));
  if (text) out.append(" (").append(text).append(")");
  return out;
}

std::string CudnnText(cudnnStatus_t s, const char* what) {
  const auto& d = Cudnn();
  const char* text = d.cudnnGetErrorString ? d.cudnnGetErrorString(s) : nullptr;
  return std::string(what) + ": " + (text ? text : "cudnnStatus " + std::to_string(s));
}

std::string CublasText(cublasStatus_t s, const char* what) {
  return std::string(what) + ": cublasStatus " + std::to_string(static_cast<int>(s));
}

}  // namespace ortc::cuda_rt
