// CPU backend, compile side: lowers a group to a CPU program (schemas/cpu_program.fbs).
#pragma once

#include "backend.h"
#include "lowering/subgraph_ir.h"

namespace ortc::backends::cpu {

// Folding, fusion and packing passes, then the static memory plan and serialization.
// precision "bf16": float convolutions compute on bf16 inputs and weights (fp32 accumulation
// and outputs); "fp32": everything in fp32.
// target_isa: "portable" (plain weights) or an ISA to pack convolution weights for
// (cpu/weight_packing.h).
Result<CompiledGraph> CompileCpuSubgraph(const graph::Model& model, const Subgraph& subgraph,
                                         const std::string& precision = "fp32",
                                         const std::string& target_isa = "portable");

// Serializes a lowered subgraph (exposed for tests).
CompiledGraph SerializeProgram(const lowering::SubgraphIr& ir, const std::string& isa);

// The ISA level CPU programs assume. Format 1 programs use plain layouts only, which every
// little-endian CPU reads; the field exists so packed layouts can name their ISA later.
inline constexpr const char* kCpuIsa = "generic-le";
// The ISA a CPU program compiled with precision bf16 needs (AVX512-BF16).
inline constexpr const char* kCpuBf16Isa = "avx512_bf16";
// Hardware target of a binary whose weights were packed for an ISA: "packed:avx512_core".
inline constexpr const char* kPackedIsaPrefix = "packed:";

}  // namespace ortc::backends::cpu
