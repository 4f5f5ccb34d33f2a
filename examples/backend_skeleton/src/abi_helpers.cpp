// The shared error, guard and text-buffer helpers of both tables (see abi_helpers.h).
#include "abi_helpers.h"

#include <cstdio>
#include <cstring>

namespace npu {
namespace {

// One text per thread, as the ABI asks: last_error() reports the calling thread's failure.
thread_local std::string t_last_error;

}  // namespace

OrtcPluginStatus Fail(OrtcPluginStatus code, std::string message) {
  t_last_error = std::move(message);
  return code;
}

void ClearError() {
  t_last_error.clear();
}

const char* LastError() {
  return t_last_error.c_str();
}

OrtcPluginStatus WriteText(const std::string& text, char* buffer, size_t capacity, size_t* length) {
  if (!length) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: null length pointer");
  *length = text.size();
  if (!buffer || capacity <= text.size())
    return Fail(ORTC_PLUGIN_BUFFER_TOO_SMALL,
                "npu: the answer needs " + std::to_string(text.size() + 1) + " bytes");
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return ORTC_PLUGIN_OK;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

OrtcPluginStatus CheckHostAbi(uint32_t host_abi_version, const void* out) {
  if (host_abi_version != ORTC_BACKEND_ABI_VERSION)
    return Fail(ORTC_PLUGIN_ABI_MISMATCH,
                "npu: the host speaks backend ABI " + std::to_string(host_abi_version) +
                    ", this plugin speaks " + std::to_string(ORTC_BACKEND_ABI_VERSION));
  if (!out) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: null out pointer");
  return ORTC_PLUGIN_OK;
}

void HostServices::Set(const OrtcHostApi* host) {
  present = host && host->struct_size >= sizeof(OrtcHostApi);
  if (present) api = *host;
}

void HostServices::Log(int32_t level, const std::string& message) const {
  if (present && api.log) api.log(api.user, level, message.c_str());
}

}  // namespace npu
