// libFuzzer target: the device description parser (`ortc check --device`, the C API's
// ortc_session_options_set_device_json), and the round trip of what it accepts.
#include <string>

#include "ortc/runtime.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto device = ortc::DeviceDescription::FromJson(text);
  if (!device.ok()) return 0;
  auto again = ortc::DeviceDescription::FromJson(device->ToJson());
  if (!again.ok()) __builtin_trap();  // what it wrote must read back
  return 0;
}
