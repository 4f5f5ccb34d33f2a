// Evaluation of one ONNX op on constant tensors by the runtime's own CPU kernels: the fallback
// of host_eval for every op it has no dedicated rule for, so folding covers what the CPU runs.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "graph/host_eval.h"

namespace ortc::graph {

// True when a CPU kernel exists for the op and evaluating it at compile time gives what a run
// would: deterministic, no subgraphs, no sequences or optionals, default domain.
bool KernelFoldable(std::string_view op_type);

// Runs the op's CPU kernel on the inputs (nullptr for omitted optional inputs); nullopt when
// the op is not foldable, a type is not one HostTensor holds, the kernel refuses the inputs, or
// an output would exceed op.max_output_bytes. Never throws.
std::optional<std::vector<HostTensor>> EvaluateWithCpuKernel(
    const HostOp& op, const std::vector<const HostTensor*>& inputs);

}  // namespace ortc::graph
