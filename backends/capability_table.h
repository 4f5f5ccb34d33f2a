// A declarative capability table: which ops (by version), element types and attribute values a
// backend accepts. Backends build one and answer Capability() from it, with a reason on refusal.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "backend.h"

namespace ortc::backends {

struct OpCapability {
  int min_version = 1;  // op definition versions (since_version) accepted
  int max_version = 999;
  std::vector<int32_t> dtypes;  // element types of the first input; empty = any
  // Extra check of attributes/inputs; returns "" to accept or the refusal reason.
  std::function<std::string(const graph::Graph&, const graph::Node&)> check;
};

class CapabilityTable {
 public:
  CapabilityTable& Add(const std::vector<std::string>& ops, const OpCapability& cap);
  // When set, every input and output must have a known rank.
  CapabilityTable& RequireKnownRanks(bool on) {
    require_ranks_ = on;
    return *this;
  }

  NodeSupport Check(const graph::Graph& g, const graph::Node& node) const;
  bool Has(const std::string& op) const { return ops_.count(op) > 0; }

 private:
  std::map<std::string, OpCapability> ops_;
  bool require_ranks_ = false;
};

// Attribute helpers for checks.
const onnx::AttributeProto* FindAttribute(const graph::Node& node, const std::string& name);
std::string StringAttribute(const graph::Node& node, const std::string& name, std::string fallback);
int64_t IntAttribute(const graph::Node& node, const std::string& name, int64_t fallback);

}  // namespace ortc::backends
