// Runs of independent kernel steps merged into one launch (launch_merging.h).
#include "cuda/compile/launch_merging.h"

#include <map>
#include <set>

#include "cuda/compile/codegen/merged_kernels.h"

namespace ortc::backends::cuda {
namespace {

// The memory a buffer lies in: an alias is its root's memory (conservatively all of it).
int Root(const Plan& plan, int b) {
  const PlanBuffer& buf = plan.buffers[b];
  return buf.kind == fb::BufferKind::Alias && buf.alias_of >= 0 ? buf.alias_of : b;
}

// Pointers one merged launch may take: 2 KiB of parameters, half of the oldest limit a kernel
// launch has (4 KiB), whatever the model.
constexpr size_t kMaxArguments = 256;

struct Touches {
  std::set<int> reads, writes;  // roots
};

Touches TouchesOf(const Plan& plan, const PlanStep& s) {
  Touches t;
  for (int b : StepReads(s)) t.reads.insert(Root(plan, b));
  for (int b : StepWrites(s)) t.writes.insert(Root(plan, b));
  return t;
}

bool Meets(const std::set<int>& a, const std::set<int>& b) {
  for (int x : a)
    if (b.count(x)) return true;
  return false;
}

// Neither step writes what the other reads or writes: they may run in either order, or at once.
bool Independent(const Touches& a, const Touches& b) {
  return !Meets(a.writes, b.reads) && !Meets(a.writes, b.writes) && !Meets(b.writes, a.reads);
}

}  // namespace

Result<int> MergeIndependentLaunches(Plan* plan, std::vector<codegen::KernelSource>* sources) {
  std::map<std::string, size_t> source_of;
  for (size_t k = 0; k < sources->size(); ++k) source_of[(*sources)[k].name] = k;
  std::set<std::string> tuned;
  for (const auto& c : plan->choices) tuned.insert(c.step);
  auto mergeable = [&](const PlanStep& s) -> const codegen::KernelSource* {
    if (s.kind != StepKind::kLaunch || tuned.count(s.name)) return nullptr;
    auto it = source_of.find(s.launch.kernel);
    if (it == source_of.end()) return nullptr;
    const codegen::KernelSource& k = (*sources)[it->second];
    return codegen::SharedLaunchRefusal(k).empty() ? &k : nullptr;
  };

  std::vector<PlanStep> steps;
  std::vector<codegen::KernelSource> merged;
  int removed = 0;
  // Consecutive mergeable steps, pairwise independent: their indices, kernels, memory touched
  // and pointers in all.
  std::vector<size_t> run;
  std::vector<const codegen::KernelSource*> run_kernels;
  std::vector<Touches> run_touches;
  size_t run_args = 0;
  auto close_run = [&]() -> Status {
    if (run.size() >= 2) {
      std::vector<codegen::KernelSource> parts;
      PlanStep step;
      step.kind = StepKind::kLaunch;
      for (const auto* k : run_kernels) parts.push_back(*k);
      for (size_t i : run) {
        const PlanStep& s = plan->steps[i];
        step.name += (step.name.empty() ? "" : " + ") + s.name;
        step.sources.insert(step.sources.end(), s.sources.begin(), s.sources.end());
        step.launch.inputs.insert(step.launch.inputs.end(), s.launch.inputs.begin(),
                                  s.launch.inputs.end());
      }
      for (size_t i : run) {
        const PlanStep& s = plan->steps[i];
        step.launch.outputs.insert(step.launch.outputs.end(), s.launch.outputs.begin(),
                                   s.launch.outputs.end());
      }
      auto k = codegen::MergeKernels(parts[0].name + "_merged", parts);
      if (!k.ok()) return k.status().WithContext("merging the launches of " + step.name);
      step.launch.kernel = k->name;
      step.launch.grid = k->grid;
      step.launch.block = k->block;
      for (const auto& [in, out] : k->same_index) {
        step.launch.same_index.push_back(in);
        step.launch.same_index.push_back(k->num_inputs + out);
      }
      steps.push_back(std::move(step));
      merged.push_back(std::move(k).value());
      removed += static_cast<int>(run.size()) - 1;
    } else {
      for (size_t i : run) steps.push_back(plan->steps[i]);
    }
    run.clear();
    run_kernels.clear();
    run_touches.clear();
    run_args = 0;
    return Status::Ok();
  };

  for (size_t i = 0; i < plan->steps.size(); ++i) {
    const PlanStep& s = plan->steps[i];
    const codegen::KernelSource* k = mergeable(s);
    if (k == nullptr) {
      ORTC_RETURN_IF_ERROR(close_run());
      steps.push_back(s);
      continue;
    }
    const Touches t = TouchesOf(*plan, s);
    const size_t args = s.launch.inputs.size() + s.launch.outputs.size();
    bool joins = !run.empty() && plan->steps[run[0]].launch.block == s.launch.block &&
                 run_args + args <= kMaxArguments;
    for (const auto& other : run_touches) joins = joins && Independent(other, t);
    if (!joins) ORTC_RETURN_IF_ERROR(close_run());
    run.push_back(i);
    run_kernels.push_back(k);
    run_touches.push_back(t);
    run_args += args;
  }
  ORTC_RETURN_IF_ERROR(close_run());
  if (removed == 0) return 0;

  // Kernels in step order: the merged ones replace their parts.
  std::vector<codegen::KernelSource> ordered;
  std::map<std::string, codegen::KernelSource*> made;
  for (auto& k : merged) made[k.name] = &k;
  plan->kernels.clear();
  for (const auto& s : steps) {
    if (s.kind != StepKind::kLaunch) continue;
    auto it = made.find(s.launch.kernel);
    ordered.push_back(it != made.end() ? *it->second : (*sources)[source_of.at(s.launch.kernel)]);
    plan->kernels.push_back(s.launch.kernel);
  }
  plan->steps = std::move(steps);
  *sources = std::move(ordered);
  return removed;
}

}  // namespace ortc::backends::cuda
