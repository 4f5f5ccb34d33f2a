// Module choice by compute capability (see module_select.h).
#include "module_select.h"

#include <cstdlib>

namespace ortc::cuda_rt {
namespace {

// "sm_86" / "compute_90" -> 86 / 90; -1 for anything else (arch-specific "sm_90a" included:
// it runs only on exactly sm_90, handled by the exact match).
int ArchValue(const std::string& t, bool* specific) {
  const size_t us = t.find('_');
  if (us == std::string::npos) return -1;
  std::string digits = t.substr(us + 1);
  *specific = !digits.empty() && digits.back() == 'a';
  if (*specific) digits.pop_back();
  if (digits.size() < 2 || digits.size() > 3) return -1;
  for (char c : digits)
    if (c < '0' || c > '9') return -1;
  return std::atoi(digits.c_str());
}

}  // namespace

ModuleChoice SelectModule(const std::vector<ModuleRef>& modules, int device_sm) {
  ModuleChoice c;
  int exact = -1, same_major = -1, same_value = -1, ptx = -1, ptx_value = -1;
  std::string have;
  for (size_t i = 0; i < modules.size(); ++i) {
    const auto& m = modules[i];
    have += (have.empty() ? "" : ", ") + m.target;
    bool specific = false;
    const int v = ArchValue(m.target, &specific);
    if (v < 0) continue;
    if (!m.ptx) {
      if (v == device_sm)
        exact = static_cast<int>(i);
      else if (!specific && v / 10 == device_sm / 10 && v < device_sm && v > same_value) {
        same_major = static_cast<int>(i);
        same_value = v;
      }
    } else if (!specific && v <= device_sm && v > ptx_value) {
      ptx = static_cast<int>(i);
      ptx_value = v;
    }
  }
  if (exact >= 0)
    c.index = exact;
  else if (same_major >= 0)
    c.index = same_major;
  else if (ptx >= 0) {
    c.index = ptx;
    c.jit = true;
  } else {
    c.reason = "the program has modules for " + (have.empty() ? std::string("no arch") : have) +
               " only; this GPU is sm_" + std::to_string(device_sm) +
               ": recompile with --target-arch sm_" + std::to_string(device_sm);
  }
  return c;
}

}  // namespace ortc::cuda_rt
