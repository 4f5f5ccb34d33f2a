// Serializes a finished CUDA plan as the Program of schemas/cuda_program.fbs.
#pragma once

#include <string>

#include "cuda/compile/plan.h"

namespace ortc::backends::cuda {

std::string SerializeProgram(const Plan& plan);

}  // namespace ortc::backends::cuda
