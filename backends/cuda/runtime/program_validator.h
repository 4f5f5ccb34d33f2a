// Semantic validation of a CUDA program after the FlatBuffers verifier, before anything is
// allocated on the device: every buffer, step and library call is checked against the sizes it
// refers to, so a program from a buggy producer, or one altered with its checksums recomputed,
// is refused with a message naming the field instead of reading or writing device memory out of
// bounds.
//
// Not checkable here: how far a generated kernel reads or writes each argument is compiled into
// the kernel, and the program does not record it; launches are checked for their argument
// indices and launch geometry only.
#pragma once

#include <cstdint>
#include <string>

#include "cuda_program_generated.h"

namespace ortc::cuda {

// Larger than any arena or workspace a real model plans: a claim above it is damage.
inline constexpr uint64_t kMaxProgramBytes = uint64_t{1} << 40;

// "" when `program` is valid for a graph with `num_weights` weight slots, else what is wrong.
std::string ValidateCudaProgram(const fb::cuda::Program& program, uint32_t num_weights);

}  // namespace ortc::cuda
