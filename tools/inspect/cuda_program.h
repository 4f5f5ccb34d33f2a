// `ortc inspect` for CUDA graphs: what a program (schemas/cuda_program.fbs) holds: steps by
// kind, kernels, modules with sizes, precision, layout, arena and workspace.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <span>

namespace ortc::inspect {

// Verifies the program's FlatBuffer first; {"error": ...} when it does not verify.
nlohmann::json DescribeCudaProgram(std::span<const std::byte> program);

}  // namespace ortc::inspect
