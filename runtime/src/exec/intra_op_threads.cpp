// Intra-op thread count: physical cores from sysfs, OpenMP and OpenBLAS set together.
#include "cpu_kernel/intra_op_threads.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace ortc::exec {

int PhysicalCoreCount() {
  static const int count = [] {
    // One (package, core) pair per physical core; hyper-thread siblings share it.
    std::set<std::pair<std::string, std::string>> cores;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/cpu", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("cpu", 0) != 0 || name.size() < 4 ||
          name.find_first_not_of("0123456789", 3) != std::string::npos)
        continue;
      std::ifstream core(entry.path() / "topology/core_id"),
          package(entry.path() / "topology/physical_package_id");
      std::string c, p;
      if (core >> c && package >> p) cores.emplace(p, c);
    }
    const int online = static_cast<int>(std::thread::hardware_concurrency());
    int n = cores.empty() ? online : static_cast<int>(cores.size());
    // A container may be limited to fewer CPUs than the machine has.
    if (online > 0 && n > online) n = online;
    return n < 1 ? 1 : n;
  }();
  return count;
}

int ResolveIntraOpThreads(int requested) {
  if (requested <= 0) return PhysicalCoreCount();
  // More threads than logical CPUs only oversubscribe; a huge count would start that many
  // threads at the first parallel loop.
  const int logical = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return std::min(requested, logical);
}

void UseIntraOpThreads(int n) {
  if (n < 1) n = 1;
  omp_set_num_threads(n);
  if (openblas_get_num_threads() != n) openblas_set_num_threads(n);
}

int CurrentIntraOpThreads() {
  return omp_get_max_threads();
}

int ThreadsForWork(double multiply_adds) {
  constexpr double kMultiplyAddsPerThread = 1 << 20;
  const int most = CurrentIntraOpThreads();
  const double worth = multiply_adds / kMultiplyAddsPerThread;
  if (worth >= most) return most;
  return worth < 1 ? 1 : static_cast<int>(worth);
}

ScopedIntraOpThreads::ScopedIntraOpThreads(int n) : previous_(omp_get_max_threads()) {
  if (n >= 1 && n < previous_) omp_set_num_threads(n);
}

ScopedIntraOpThreads::~ScopedIntraOpThreads() {
  if (omp_get_max_threads() != previous_) omp_set_num_threads(previous_);
}

}  // namespace ortc::exec
