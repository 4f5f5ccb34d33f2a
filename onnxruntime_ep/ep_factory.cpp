#include "ep_factory.h"

#include "ortc/runtime.h"
#include "ortc_ep.h"

namespace ortc::ort_ep {

OrtcEpFactory::OrtcEpFactory(std::string registration_name, const OrtLogger* logger)
    : OrtEpFactory{}, registration_name_(std::move(registration_name)), logger_(logger) {
  ort_version_supported = ORT_API_VERSION;
  GetName = GetNameImpl;
  GetVendor = GetVendorImpl;
  GetVendorId = GetVendorIdImpl;
  GetVersion = GetVersionImpl;
  GetSupportedDevices = GetSupportedDevicesImpl;
  CreateEp = CreateEpImpl;
  ReleaseEp = ReleaseEpImpl;
  ValidateCompiledModelCompatibilityInfo = ValidateCompatibilityImpl;
  CreateAllocator = CreateAllocatorImpl;
  ReleaseAllocator = ReleaseAllocatorImpl;
  CreateDataTransfer = CreateDataTransferImpl;
  IsStreamAware = IsStreamAwareImpl;
  CreateSyncStreamForDevice = CreateSyncStreamImpl;
}

const char* ORT_API_CALL OrtcEpFactory::GetNameImpl(const OrtEpFactory*) noexcept {
  return kEpName;
}
const char* ORT_API_CALL OrtcEpFactory::GetVendorImpl(const OrtEpFactory*) noexcept {
  return "ortc";
}
uint32_t ORT_API_CALL OrtcEpFactory::GetVendorIdImpl(const OrtEpFactory*) noexcept {
  return 0;
}
const char* ORT_API_CALL OrtcEpFactory::GetVersionImpl(const OrtEpFactory*) noexcept {
  return ORTC_VERSION_STRING;
}

OrtStatus* ORT_API_CALL OrtcEpFactory::GetSupportedDevicesImpl(
    OrtEpFactory* self, const OrtHardwareDevice* const* devices, size_t num_devices,
    OrtEpDevice** ep_devices, size_t max_ep_devices, size_t* num_ep_devices) noexcept {
  *num_ep_devices = 0;
  for (size_t i = 0; i < num_devices && *num_ep_devices < max_ep_devices; ++i) {
    if (Apis().ort->HardwareDevice_Type(devices[i]) != OrtHardwareDeviceType_CPU) continue;
    OrtEpDevice* d = nullptr;
    if (OrtStatus* s = Apis().ep->CreateEpDevice(self, devices[i], nullptr, nullptr, &d)) return s;
    ep_devices[(*num_ep_devices)++] = d;
  }
  return nullptr;
}

OrtStatus* ORT_API_CALL OrtcEpFactory::CreateEpImpl(OrtEpFactory*, const OrtHardwareDevice* const*,
                                                    const OrtKeyValuePairs* const*, size_t,
                                                    const OrtSessionOptions* options,
                                                    const OrtLogger* logger, OrtEp** ep) noexcept {
  *ep = nullptr;
  return Guard([&]() -> Status {
    auto config = ReadEpConfig(Ort::ConstSessionOptions(options));
    if (!config.ok()) return config.status();
    *ep = new OrtcEp(std::move(config).value(), logger);
    return Status::Ok();
  });
}

void ORT_API_CALL OrtcEpFactory::ReleaseEpImpl(OrtEpFactory*, OrtEp* ep) noexcept {
  delete static_cast<OrtcEp*>(ep);
}

OrtStatus* ORT_API_CALL OrtcEpFactory::ValidateCompatibilityImpl(
    OrtEpFactory* self, const OrtHardwareDevice* const*, size_t, const char* info,
    OrtCompiledModelCompatibility* answer) noexcept {
  return Guard([&]() -> Status {
    const CompatibilityVerdict verdict = CheckCompatibilityInfo(info ? info : "");
    // ONNX Runtime's answer is an enum; the gate's reason goes to its log.
    const auto* logger = static_cast<OrtcEpFactory*>(self)->logger_;
    if (!verdict.reason.empty() && logger) {
      if (OrtStatus* s = Apis().ort->Logger_LogMessage(
              logger, ORT_LOGGING_LEVEL_WARNING,
              ("ortc: compiled model: " + verdict.reason).c_str(), __FILE__, __LINE__, __func__))
        Apis().ort->ReleaseStatus(s);
    }
    if (!verdict.applicable) {
      *answer = OrtCompiledModelCompatibility_EP_NOT_APPLICABLE;
    } else if (verdict.verdict == Verdict::kOptimal) {
      *answer = OrtCompiledModelCompatibility_EP_SUPPORTED_OPTIMAL;
    } else if (verdict.verdict == Verdict::kPreferRecompilation) {
      *answer = OrtCompiledModelCompatibility_EP_SUPPORTED_PREFER_RECOMPILATION;
    } else {
      *answer = OrtCompiledModelCompatibility_EP_UNSUPPORTED;
    }
    return Status::Ok();
  });
}

OrtStatus* ORT_API_CALL OrtcEpFactory::CreateAllocatorImpl(OrtEpFactory*, const OrtMemoryInfo*,
                                                           const OrtKeyValuePairs*,
                                                           OrtAllocator** allocator) noexcept {
  *allocator = nullptr;  // ONNX Runtime's CPU allocator
  return nullptr;
}

void ORT_API_CALL OrtcEpFactory::ReleaseAllocatorImpl(OrtEpFactory*, OrtAllocator*) noexcept {}

OrtStatus* ORT_API_CALL
OrtcEpFactory::CreateDataTransferImpl(OrtEpFactory*, OrtDataTransferImpl** data_transfer) noexcept {
  *data_transfer = nullptr;  // host memory only
  return nullptr;
}

bool ORT_API_CALL OrtcEpFactory::IsStreamAwareImpl(const OrtEpFactory*) noexcept {
  return false;
}

OrtStatus* ORT_API_CALL OrtcEpFactory::CreateSyncStreamImpl(OrtEpFactory*, const OrtMemoryDevice*,
                                                            const OrtKeyValuePairs*,
                                                            OrtSyncStreamImpl** stream) noexcept {
  *stream = nullptr;
  return nullptr;
}

}  // namespace ortc::ort_ep

// The library's entry points, the only symbols it exports (exports.map).
extern "C" {

__attribute__((visibility("default"))) OrtStatus* CreateEpFactories(
    const char* registration_name, const OrtApiBase* ort_api_base, const OrtLogger* default_logger,
    OrtEpFactory** factories, size_t max_factories, size_t* num_factories) {
  using namespace ortc::ort_ep;
  *num_factories = 0;
  const ortc::Status init = InitApis(ort_api_base);
  if (!init.ok()) {
    // Without a usable API table there is no CreateStatus to report with, unless ONNX Runtime
    // gave any version at all.
    const OrtApi* any = ort_api_base ? ort_api_base->GetApi(1) : nullptr;
    return any ? any->CreateStatus(ORT_NOT_IMPLEMENTED, ("ortc: " + init.message()).c_str())
               : nullptr;
  }
  if (max_factories < 1)
    return Apis().ort->CreateStatus(ORT_INVALID_ARGUMENT, "ortc: no room for its factory");
  factories[0] = new OrtcEpFactory(registration_name ? registration_name : "", default_logger);
  *num_factories = 1;
  return nullptr;
}

__attribute__((visibility("default"))) OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
  delete static_cast<ortc::ort_ep::OrtcEpFactory*>(factory);
  return nullptr;
}

}  // extern "C"
