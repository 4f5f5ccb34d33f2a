#include "compile/provenance.h"

#include <nlohmann/json.hpp>

namespace ortc::compile {

std::string CompileOptionsJson(const CompileOptions& o) {
  nlohmann::json j;
  j["backends"] = o.backends;
  j["provider_options"] = nlohmann::json::object();
  for (const auto& [backend, options] : o.provider_options)
    for (const auto& [k, v] : options) j["provider_options"][backend][k] = v;
  j["input_shapes"] = nlohmann::json::object();
  for (const auto& [name, dims] : o.input_shapes) j["input_shapes"][name] = dims;
  j["input_values"] = nlohmann::json::object();
  for (const auto& [name, value] : o.input_values) j["input_values"][name] = value;
  j["embed_mode"] = o.embed_mode;
  j["external_initializers_file"] = o.external_initializers_file;
  j["node_name_prefixes"] = o.node_name_prefixes;
  std::vector<std::string> group;
  if (o.share_weights) {
    group.push_back(o.model.filename().string());
    for (const auto& m : o.more_models) group.push_back(m.filename().string());
  }
  j["weight_sharing_group"] = group;
  j["shape_profiles"] = nlohmann::json::object();
  for (const auto& p : o.shape_profiles) {
    j["shape_profiles"][p.name] = nlohmann::json::object();
    for (const auto& [name, dims] : p.shapes) j["shape_profiles"][p.name][name] = dims;
  }
  // Recorded only when set, so that bundles compiled before the option stay up to date.
  if (o.last_token_logits) j["last_token_logits"] = true;
  return j.dump();  // nlohmann::json keeps object keys sorted
}

}  // namespace ortc::compile
