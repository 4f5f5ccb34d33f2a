// Semantic validation of a CPU program after the FlatBuffers verifier: the verifier proves the
// tables can be read; this proves what they say can be executed without reading or writing out
// of bounds. Checksums only catch accidents, so a program from a buggy producer, or one altered
// with its checksums recomputed, must be refused here with an error naming the field.
#pragma once

#include <cstdint>
#include <string>

#include "cpu_program_generated.h"
#include "ortc/status.h"

namespace ortc::format {

// Checks every index, offset, size and kind of `program` and of the nested programs its
// attributes hold:
// - values: a known kind and an ONNX element type number (0..32), rank <= kMaxProgramRank,
//   dims >= -1, a weight slot below `weight_slots` for weights (and -1 otherwise), arena ranges
//   inside arena_bytes, no smaller than the static shape needs;
// - ops: an op type; inputs in [-1, values), outputs in [-1, values); no op writes a program
//   input or a weight; each value written at most once, and read only after it is written (or
//   an input or weight); the explicit input count and a nested program's captures in range;
// - the program's inputs and outputs in range, inputs of kind Input, outputs written.
// `where` prefixes the messages (e.g. "graph 'g0'").
Status ValidateCpuProgram(const fb::cpu::Program& program, uint32_t weight_slots,
                          const std::string& where);

inline constexpr int kMaxProgramRank = 64;
// Larger than any arena a real model plans: a claim above it is damage, not a big model.
inline constexpr uint64_t kMaxArenaBytes = uint64_t{1} << 40;

}  // namespace ortc::format
