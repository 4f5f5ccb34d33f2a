// Describes how OpenMP's idle workers wait in this process (see openmp_wait_default.cpp, the
// library that sets ortc's default before libgomp starts).
#include "cli/openmp_waiting.h"

#include <cstdlib>

extern "C" int ortc_openmp_wait_set_by_ortc();

namespace ortc::cli {

std::string OpenMpWaiting() {
  std::string setting;
  for (const char* name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"})
    if (const char* value = std::getenv(name))
      setting += (setting.empty() ? "" : " ") + std::string(name) + "=" + value;
  if (setting.empty()) return "libgomp's default (spins about 300,000 times)";
  return setting + (ortc_openmp_wait_set_by_ortc() ? " (ortc's default)" : " (environment)");
}

}  // namespace ortc::cli
