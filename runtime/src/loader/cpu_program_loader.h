// Reading CPU programs out of a context binary: op attributes, and the nested programs that
// If/Loop/Scan/SequenceMap ops carry for their subgraphs (each becomes its own ExecGraph).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cpu_kernel/exec_graph.h"
#include "cpu_program_generated.h"
#include "format/context_binary_reader.h"

namespace ortc::loader {

// Where a program's weights live: the binary, and the graph's slot table.
struct ProgramWeights {
  const format::ContextBinary* binary = nullptr;
  const flatbuffers::Vector<uint32_t>* slots = nullptr;
  std::shared_ptr<const void> keep_alive;  // holds the mapped binary while tensors borrow it
  std::string graph_name;                  // for messages
};

// One op attribute; a graph attribute with a nested program is loaded into an ExecGraph.
Result<exec::Attribute> AttributeFromProgram(const fb::cpu::Attribute& a,
                                             const ProgramWeights& weights);

// One program op; `value_ids` maps the program's value indices to the graph's value ids.
Result<exec::ExecOp> OpFromProgram(const fb::cpu::Op& op, const ProgramWeights& weights,
                                   const std::vector<int>& value_ids);

// The weight tensor a program value refers to (borrowed from the mapped binary).
Result<Tensor> ProgramWeight(const fb::cpu::Value& v, const ProgramWeights& weights);

}  // namespace ortc::loader
