// CPU backend, compile side: which nodes it takes. It is the fallback and must be complete.
#pragma once

#include "backend.h"

namespace ortc::backends::cpu {

const Backend& CpuBackend();

}  // namespace ortc::backends::cpu
