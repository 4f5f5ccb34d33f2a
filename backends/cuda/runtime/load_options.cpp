// Parsing of the CUDA plugin's session options.
#include "load_options.h"

#include <string>

namespace ortc::cuda_rt {

OrtcPluginStatus ParseLoadOptions(const OrtcGraphLoadInfo& info, LoadOptions* out) {
  *out = LoadOptions{};
  for (uint32_t i = 0; i < info.num_options; ++i) {
    const OrtcKeyValue& kv = info.options[i];
    const std::string key = kv.key ? kv.key : "", value = kv.value ? kv.value : "";
    if (key == "host_copy_threads") {
      const bool digits = !value.empty() && value.size() <= 2 &&
                          value.find_first_not_of("0123456789") == std::string::npos;
      const int n = digits ? std::stoi(value) : 0;
      if (n < 1 || n > 64)
        return Fail(
            ORTC_PLUGIN_INVALID_ARGUMENT,
            "cuda option host_copy_threads must be a number from 1 to 64, got '" + value + "'");
      out->host_copy_threads = static_cast<unsigned>(n);
      continue;
    }
    bool* flag = key == "enable_cuda_graph"  ? &out->cuda_graph
                 : key == "enable_profiling" ? &out->profiling
                                             : nullptr;
    if (!flag)
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                  "unknown cuda option '" + key +
                      "' (known: enable_cuda_graph, enable_profiling, host_copy_threads)");
    if (value != "0" && value != "1")
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                  "cuda option " + key + " must be 0 or 1, got '" + value + "'");
    *flag = value == "1";
  }
  return ORTC_PLUGIN_OK;
}

}  // namespace ortc::cuda_rt
