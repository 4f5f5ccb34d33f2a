// What both function tables of the plugin share: the thread-local last-error text, the guard
// that keeps exceptions from crossing the C boundary, and the ABI's buffer rule for text
// answers. Every table entry goes through these so the rules hold everywhere.
#pragma once

#include <exception>
#include <string>

#include <ortc/ortc_backend_plugin.h>

// Marks the four entry points; everything else is hidden (-fvisibility=hidden, exports.map).
#define NPU_EXPORT extern "C" __attribute__((visibility("default")))

namespace npu {

// Sets the calling thread's last error and returns `code`.
OrtcPluginStatus Fail(OrtcPluginStatus code, std::string message);
void ClearError();
// The calling thread's last error; stays valid until that thread's next call into the plugin.
const char* LastError();

// Runs `body` (returning OrtcPluginStatus) with the last error cleared first; any exception
// becomes EP_FAIL with its text.
template <typename Body>
OrtcPluginStatus Guard(Body&& body) noexcept {
  try {
    ClearError();
    return body();
  } catch (const std::exception& e) {
    return Fail(ORTC_PLUGIN_EP_FAIL, std::string("npu: ") + e.what());
  } catch (...) {
    return Fail(ORTC_PLUGIN_EP_FAIL, "npu: unknown exception");
  }
}

// The buffer rule of describe_device: `text` and its NUL into buffer; *length receives the
// length without the NUL; BUFFER_TOO_SMALL when it does not fit.
OrtcPluginStatus WriteText(const std::string& text, char* buffer, size_t capacity, size_t* length);

// `text` as a JSON string literal, quotes included.
std::string JsonString(const std::string& text);

// What both create functions check first: the host's ABI version is exactly this plugin's
// (ABI_MISMATCH naming both otherwise) and `out` is not NULL.
OrtcPluginStatus CheckHostAbi(uint32_t host_abi_version, const void* out);

// The host's services, copied at create when it offers them (host may be NULL).
struct HostServices {
  bool present = false;
  OrtcHostApi api{};

  void Set(const OrtcHostApi* host);
  // level 0 debug, 1 info, 2 warning; does nothing without a host log function.
  void Log(int32_t level, const std::string& message) const;
};

}  // namespace npu
