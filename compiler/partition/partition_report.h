// Renders a Partition for people (text) and for CI (JSON). The JSON layout is defined in
// schemas/partition_report.md.
#pragma once

#include "cli/format_bytes.h"

#include <nlohmann/json.hpp>

#include <string>

#include "graph/model.h"
#include "partition/partitioner.h"

namespace ortc::partition {

nlohmann::json PartitionToJson(const graph::Model& model, const Partition& p);
std::string PartitionToText(const graph::Model& model, const Partition& p);

using tools::FormatBytes;  // "1.5 MiB", shared with the runtime tools

}  // namespace ortc::partition
