// Parsing of --provider-option items.
#include "cli/provider_options.h"

namespace ortc::cli {

Status ParseProviderOptions(const std::vector<std::string>& items, BackendOptions* out) {
  for (const auto& item : items) {
    const size_t colon = item.find(':'), eq = item.find('=');
    if (colon == std::string::npos || eq == std::string::npos || eq < colon || colon == 0 ||
        eq == colon + 1) {
      return InvalidArgument("--provider-option '" + item +
                             "' is not of the form backend:key=value");
    }
    (*out)[item.substr(0, colon)][item.substr(colon + 1, eq - colon - 1)] = item.substr(eq + 1);
  }
  return Status::Ok();
}

}  // namespace ortc::cli
