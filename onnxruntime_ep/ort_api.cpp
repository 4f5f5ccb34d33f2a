#include "ort_api.h"

namespace ortc::ort_ep {

namespace {
OrtApis g_apis;
}

Status InitApis(const OrtApiBase* base) {
  if (!base) return InvalidArgument("ONNX Runtime passed no OrtApiBase");
  const OrtApi* api = base->GetApi(ORT_API_VERSION);
  if (!api) {
    return NotImplemented(std::string("this ONNX Runtime (") + base->GetVersionString() +
                          ") does not offer API version " + std::to_string(ORT_API_VERSION) +
                          ", which ortc's plugin was built against: use ONNX Runtime 1." +
                          std::to_string(ORT_API_VERSION) + " or newer");
  }
  Ort::InitApi(api);
  g_apis.ort = api;
  g_apis.ep = api->GetEpApi();
  g_apis.editor = api->GetModelEditorApi();
  if (!g_apis.ep) return NotImplemented("this ONNX Runtime has no plugin EP API");
  return Status::Ok();
}

const OrtApis& Apis() {
  return g_apis;
}

OrtErrorCode ToOrtErrorCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return ORT_OK;
    case StatusCode::kInvalidArgument:
      return ORT_INVALID_ARGUMENT;
    case StatusCode::kNoSuchFile:
      return ORT_NO_SUCHFILE;
    case StatusCode::kInvalidGraph:
      return ORT_INVALID_GRAPH;
    case StatusCode::kNotImplemented:
      return ORT_NOT_IMPLEMENTED;
    case StatusCode::kEpFail:
      return ORT_EP_FAIL;
    case StatusCode::kModelRequiresCompilation:
      return ORT_MODEL_REQUIRES_COMPILATION;
    case StatusCode::kIoError:
    case StatusCode::kOutOfMemory:
      return ORT_FAIL;
  }
  return ORT_FAIL;
}

OrtStatus* ToOrtStatus(const Status& status) {
  if (status.ok()) return nullptr;
  return Apis().ort->CreateStatus(ToOrtErrorCode(status.code()),
                                  ("ortc: " + status.message()).c_str());
}

OrtStatus* ToOrtStatus(const std::exception& e) {
  if (const auto* ort = dynamic_cast<const Ort::Exception*>(&e))
    return Apis().ort->CreateStatus(ort->GetOrtErrorCode(),
                                    (std::string("ortc: ") + e.what()).c_str());
  return Apis().ort->CreateStatus(ORT_FAIL, (std::string("ortc: ") + e.what()).c_str());
}

}  // namespace ortc::ort_ep
