// The host's side of the plugin ABI's rule for texts (ortc_backend_plugin.h): a plugin writes a
// text into the host's buffer and its length into *len; a buffer too small gets
// ORTC_PLUGIN_BUFFER_TOO_SMALL with the length it needs, and the host asks once more with that
// much room. The runtime (reasons, descriptions, profiles) and the compiler (options warnings)
// read every plugin text by this one rule.
#pragma once

#include <cstddef>
#include <string>

#include "plugin_abi/ortc_backend_plugin.h"

namespace ortc::plugin_abi {

struct PluginText {
  // OK with the text; the plugin's own failure; or BUFFER_TOO_SMALL when the text did not fit
  // the second buffer either (or would be longer than the limit).
  OrtcPluginStatus status = ORTC_PLUGIN_OK;
  std::string text;
};

// `call(buf, capacity, &len)` asks the plugin for the text.
template <typename Call>
PluginText ReadPluginText(Call call, size_t first_capacity = 4096, size_t limit = 64u << 20) {
  std::string buf(first_capacity, '\0');
  for (int attempt = 0; attempt < 2; ++attempt) {
    size_t len = 0;
    const OrtcPluginStatus s = call(buf.data(), buf.size(), &len);
    if (s == ORTC_PLUGIN_OK && len < buf.size()) return {s, buf.substr(0, len)};
    if (s != ORTC_PLUGIN_BUFFER_TOO_SMALL && s != ORTC_PLUGIN_OK) return {s, {}};
    if (len > limit) break;
    buf.assign(len + 1, '\0');
  }
  return {ORTC_PLUGIN_BUFFER_TOO_SMALL, {}};
}

}  // namespace ortc::plugin_abi
