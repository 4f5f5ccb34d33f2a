// Renders a Partition for people (text) and for CI (JSON). The JSON layout is defined in
// schemas/partition_report.md.
#pragma once

#include "base/format_bytes.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "graph/model.h"
#include "partition/partitioner.h"

namespace ortc::partition {

// Refusals folded by backend and reason: the one refusal record of every report (partition's
// `refusals`, compile's `backends[].refusals`), so a large model stays readable.
struct RefusalGroup {
  std::string backend, reason;
  std::vector<std::string> nodes;  // refused node names, in graph order
  std::vector<std::string> ops;    // their distinct op types (domain::op outside ai.onnx), sorted
};

// Adds the partition's refusals to `groups` (merging with a group of the same backend and
// reason, so several models of a weight-sharing group fold together), most nodes first.
void AddRefusals(const graph::Graph& g, const Partition& p, std::vector<RefusalGroup>* groups);
// {backend, reason, node_count, nodes, ops}
nlohmann::json RefusalJson(const RefusalGroup& r);

nlohmann::json PartitionToJson(const graph::Model& model, const Partition& p);
std::string PartitionToText(const graph::Model& model, const Partition& p);

using tools::FormatBytes;  // "1.5 MiB", shared with the runtime tools

}  // namespace ortc::partition
