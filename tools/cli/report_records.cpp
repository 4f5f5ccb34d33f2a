// Shared records of the --json reports.
#include "cli/report_records.h"

namespace ortc::tools {

namespace {

// Whether a name=... list (repeatable, or comma-separated as --input-shape takes it) names it.
bool Names(const std::vector<std::string>& specs, const std::string& name) {
  for (const auto& spec : specs)
    if (spec.rfind(name + "=", 0) == 0 || spec.find("," + name + "=") != std::string::npos)
      return true;
  return false;
}

}  // namespace

nlohmann::json InputsJson(const std::vector<TensorInfo>& declared,
                          const std::vector<std::pair<std::string, Tensor>>& feeds,
                          const std::vector<std::string>& files,
                          const std::vector<std::string>& shapes) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& [name, value] : feeds) {
    bool from_file = false;
    for (const auto& spec : files) from_file = from_file || spec.rfind(name + "=", 0) == 0;
    bool dynamic = false;
    for (const auto& info : declared)
      if (info.name == name)
        for (int64_t d : info.shape) dynamic = dynamic || d < 0;
    nlohmann::json in{{"name", name},
                      {"dtype", DataTypeName(value.dtype())},
                      {"source", from_file ? "file" : "random"}};
    // A sequence or optional input has no shape of its own.
    in["shape"] = value.is_tensor() ? nlohmann::json(value.shape()) : nlohmann::json(nullptr);
    if (!from_file && dynamic && !Names(shapes, name)) in["dynamic_dims_set_to"] = 1;
    inputs.push_back(std::move(in));
  }
  return inputs;
}

}  // namespace ortc::tools
