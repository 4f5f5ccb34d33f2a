// Capability table lookup and the refusal reasons it gives.
#include "capability_table.h"

#include <onnx/onnx_pb.h>

#include <algorithm>

#include "base/element_types.h"

namespace ortc::backends {

CapabilityTable& CapabilityTable::Add(const std::vector<std::string>& ops,
                                      const OpCapability& cap) {
  for (const auto& op : ops) ops_[op] = cap;
  return *this;
}

NodeSupport CapabilityTable::Check(const graph::Graph& g, const graph::Node& node) const {
  if (!node.domain.empty()) {
    return NodeSupport::No("op " + node.domain + "::" + node.op_type +
                           " is not supported (custom domain)");
  }
  auto it = ops_.find(node.op_type);
  if (it == ops_.end()) return NodeSupport::No("op " + node.op_type + " is not supported");
  const OpCapability& cap = it->second;
  if (node.since_version < cap.min_version || node.since_version > cap.max_version) {
    return NodeSupport::No(node.op_type + "-" + std::to_string(node.since_version) +
                           " is not supported (versions " + std::to_string(cap.min_version) +
                           " to " + std::to_string(cap.max_version) + " are)");
  }
  if (!cap.dtypes.empty() && !node.inputs.empty() && node.inputs[0] >= 0) {
    const int32_t dtype = g.values[node.inputs[0]].info.dtype;
    if (dtype == 0) {
      return NodeSupport::No("element type of input '" + g.values[node.inputs[0]].name +
                             "' is unknown");
    }
    if (std::find(cap.dtypes.begin(), cap.dtypes.end(), dtype) == cap.dtypes.end()) {
      return NodeSupport::No("dtype " + ElementTypeName(dtype) + " is not supported for " +
                             node.op_type);
    }
  }
  if (require_ranks_) {
    auto check_rank = [&](int v) -> std::string {
      if (v < 0 || g.values[v].info.shape.rank_known) return "";
      return "dynamic shape: the rank of '" + g.values[v].name + "' is unknown";
    };
    for (int v : node.inputs) {
      if (auto why = check_rank(v); !why.empty()) return NodeSupport::No(why);
    }
    for (int v : node.outputs) {
      if (auto why = check_rank(v); !why.empty()) return NodeSupport::No(why);
    }
  }
  if (cap.check) {
    std::string why = cap.check(g, node);
    if (!why.empty()) return NodeSupport::No(why);
  }
  return NodeSupport::Yes();
}

const onnx::AttributeProto* FindAttribute(const graph::Node& node, const std::string& name) {
  for (const auto& a : node.proto->attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::string StringAttribute(const graph::Node& node, const std::string& name,
                            std::string fallback) {
  const auto* a = FindAttribute(node, name);
  return a ? a->s() : fallback;
}

int64_t IntAttribute(const graph::Node& node, const std::string& name, int64_t fallback) {
  const auto* a = FindAttribute(node, name);
  return a ? a->i() : fallback;
}

}  // namespace ortc::backends
