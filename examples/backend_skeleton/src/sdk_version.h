// The version of the (simulated) NPU SDK this skeleton is built against. A real backend takes
// it from the vendor SDK's headers; compile records it in every binary (manifest version
// "npu_sdk") and the runtime side compares it with the SDK of the machine it runs on.
#pragma once

namespace npu {

inline constexpr char kSdkVersion[] = "1.0";
// The device generation the programs are compiled for (EPContext hardware_architecture).
inline constexpr char kHardwareArchitecture[] = "npu-sim-v1";
// The manifest key under which compile records kSdkVersion.
inline constexpr char kSdkVersionKey[] = "npu_sdk";
// Overrides the runtime's SDK version, so tests can simulate a device with another SDK.
inline constexpr char kSdkVersionEnv[] = "ORTC_NPU_SIM_SDK_VERSION";

}  // namespace npu
