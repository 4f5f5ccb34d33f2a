// How OpenMP's idle workers wait in the ortc executables, and what set it.
#pragma once

#include <string>

namespace ortc::cli {

// The setting libgomp read when the process started: "GOMP_SPINCOUNT=1000 (ortc's default)", or
// the user's own OMP_WAIT_POLICY / GOMP_SPINCOUNT with "(environment)". Links the program
// with libortc_openmp_wait, which must come after libgomp in its link line.
std::string OpenMpWaiting();

}  // namespace ortc::cli
