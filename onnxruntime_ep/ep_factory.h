// The plugin library's factory (OrtEpFactory): ONNX Runtime finds it through the library's two
// exported functions, CreateEpFactories and ReleaseEpFactory, after
// RegisterExecutionProviderLibrary. It offers the ortc EP on the CPU device (ortc's inputs and
// outputs are host memory; its CUDA backend manages device memory itself) and answers ONNX
// Runtime's model-compatibility questions with the version gate's verdicts.
#pragma once

#include <string>

#include "ort_api.h"

namespace ortc::ort_ep {

class OrtcEpFactory : public OrtEpFactory {
 public:
  OrtcEpFactory(std::string registration_name, const OrtLogger* logger);

 private:
  static const char* ORT_API_CALL GetNameImpl(const OrtEpFactory* self) noexcept;
  static const char* ORT_API_CALL GetVendorImpl(const OrtEpFactory* self) noexcept;
  static uint32_t ORT_API_CALL GetVendorIdImpl(const OrtEpFactory* self) noexcept;
  static const char* ORT_API_CALL GetVersionImpl(const OrtEpFactory* self) noexcept;
  static OrtStatus* ORT_API_CALL GetSupportedDevicesImpl(
      OrtEpFactory* self, const OrtHardwareDevice* const* devices, size_t num_devices,
      OrtEpDevice** ep_devices, size_t max_ep_devices, size_t* num_ep_devices) noexcept;
  static OrtStatus* ORT_API_CALL CreateEpImpl(OrtEpFactory* self,
                                              const OrtHardwareDevice* const* devices,
                                              const OrtKeyValuePairs* const* ep_metadata,
                                              size_t num_devices, const OrtSessionOptions* options,
                                              const OrtLogger* logger, OrtEp** ep) noexcept;
  static void ORT_API_CALL ReleaseEpImpl(OrtEpFactory* self, OrtEp* ep) noexcept;
  static OrtStatus* ORT_API_CALL ValidateCompatibilityImpl(
      OrtEpFactory* self, const OrtHardwareDevice* const* devices, size_t num_devices,
      const char* info, OrtCompiledModelCompatibility* answer) noexcept;
  static OrtStatus* ORT_API_CALL CreateAllocatorImpl(OrtEpFactory* self, const OrtMemoryInfo* info,
                                                     const OrtKeyValuePairs* options,
                                                     OrtAllocator** allocator) noexcept;
  static void ORT_API_CALL ReleaseAllocatorImpl(OrtEpFactory* self,
                                                OrtAllocator* allocator) noexcept;
  static OrtStatus* ORT_API_CALL
  CreateDataTransferImpl(OrtEpFactory* self, OrtDataTransferImpl** data_transfer) noexcept;
  static bool ORT_API_CALL IsStreamAwareImpl(const OrtEpFactory* self) noexcept;
  static OrtStatus* ORT_API_CALL CreateSyncStreamImpl(OrtEpFactory* self,
                                                      const OrtMemoryDevice* device,
                                                      const OrtKeyValuePairs* options,
                                                      OrtSyncStreamImpl** stream) noexcept;

  std::string registration_name_;
  const OrtLogger* logger_;
};

}  // namespace ortc::ort_ep
