// CPU backend, compile side: lowers a group to a CPU program (schemas/cpu_program.fbs).
#pragma once

#include "backend.h"
#include "lowering/subgraph_ir.h"

namespace ortc::backends::cpu {

// The CPU backend's provider options (capability.cpp validates them).
struct CpuCompileOptions {
  // "bf16": float convolutions compute on bf16 inputs and weights (fp32 accumulation and
  // outputs); "fp32": everything in fp32.
  std::string precision = "fp32";
  // "portable" (plain weights) or an ISA to pack convolution weights for (weight_packing.h).
  std::string target_isa = "portable";
  // "auto": the runtime may run 3x3 convolutions with Winograd where that is faster;
  // "direct": never (results closest to a direct convolution's rounding); "winograd": wherever
  // oneDNN has a Winograd kernel, whatever the thread count (scripts/conv_algorithms measures).
  std::string conv_algorithm = "auto";
};

// Folding, fusion and packing passes, then the static memory plan and serialization.
Result<CompiledGraph> CompileCpuSubgraph(const graph::Model& model, const Subgraph& subgraph,
                                         const CpuCompileOptions& options = {});

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
