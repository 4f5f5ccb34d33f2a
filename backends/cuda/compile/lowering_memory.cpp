// The last lowering stage: unused buffers and weight slots dropped, arena offsets assigned from
// buffer lifetimes over the steps (aliases extend their root's lifetime).
#include <algorithm>
#include <climits>

#include "cuda/compile/lowering.h"
#include "lowering/memory_plan.h"

namespace ortc::backends::cuda {
namespace {

template <typename F>
void ForEachRef(PlanStep& s, F&& f) {
  switch (s.kind) {
    case StepKind::kLaunch:
      for (int& b : s.launch.inputs) f(b, false);
      for (int& b : s.launch.outputs) f(b, true);
      break;
    case StepKind::kConv:
      for (int* b : {&s.conv.x, &s.conv.w, &s.conv.bias, &s.conv.z}) f(*b, false);
      f(s.conv.y, true);
      break;
    case StepKind::kGemm:
      for (int* b : {&s.gemm.a, &s.gemm.b, &s.gemm.c, &s.gemm.bias}) f(*b, false);
      f(s.gemm.y, true);
      break;
    case StepKind::kCopy:
      f(s.copy.src, false);
      f(s.copy.dst, true);
      break;
  }
}

}  // namespace

std::vector<int> StepReads(const PlanStep& s) {
  std::vector<int> out;
  ForEachRef(const_cast<PlanStep&>(s), [&](int& b, bool write) {
    if (!write && b >= 0) out.push_back(b);
  });
  return out;
}

std::vector<int> StepWrites(const PlanStep& s) {
  std::vector<int> out;
  ForEachRef(const_cast<PlanStep&>(s), [&](int& b, bool write) {
    if (write && b >= 0) out.push_back(b);
  });
  return out;
}

void FinalizePlan(Plan* plan) {
  // Keep what steps and the program's interface refer to (and the roots of kept aliases).
  std::vector<bool> keep(plan->buffers.size(), false);
  for (int b : plan->inputs) keep[b] = true;
  for (int b : plan->outputs) keep[b] = true;
  for (auto& s : plan->steps) {
    ForEachRef(s, [&](int& b, bool) {
      if (b >= 0) keep[b] = true;
    });
  }
  for (size_t b = 0; b < plan->buffers.size(); ++b) {
    if (keep[b] && plan->buffers[b].alias_of >= 0) keep[plan->buffers[b].alias_of] = true;
  }
  std::vector<int> new_index(plan->buffers.size(), -1), new_slot(plan->weights.size(), -1);
  std::vector<PlanBuffer> buffers;
  std::vector<bundle::WeightSpec> weights;
  for (size_t b = 0; b < plan->buffers.size(); ++b) {
    if (!keep[b]) continue;
    new_index[b] = static_cast<int>(buffers.size());
    PlanBuffer buf = plan->buffers[b];
    if (buf.weight_slot >= 0) {
      if (new_slot[buf.weight_slot] < 0) {
        new_slot[buf.weight_slot] = static_cast<int>(weights.size());
        weights.push_back(plan->weights[buf.weight_slot]);
      }
      buf.weight_slot = new_slot[buf.weight_slot];
    }
    buffers.push_back(std::move(buf));
  }
  for (auto& buf : buffers) {
    if (buf.alias_of >= 0) buf.alias_of = new_index[buf.alias_of];
  }
  for (int& b : plan->inputs) b = new_index[b];
  for (int& b : plan->outputs) b = new_index[b];
  for (auto& s : plan->steps) {
    ForEachRef(s, [&](int& b, bool) {
      if (b >= 0) b = new_index[b];
    });
  }
  plan->buffers = std::move(buffers);
  plan->weights = std::move(weights);

  // Lifetimes of arena buffers, in steps.
  auto root = [&](int b) {
    return plan->buffers[b].kind == fb::BufferKind::Alias ? plan->buffers[b].alias_of : b;
  };
  std::vector<int> first(plan->buffers.size(), INT_MAX), last(plan->buffers.size(), -1);
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    ForEachRef(plan->steps[i], [&](int& b, bool) {
      if (b < 0) return;
      const int r = root(b);
      first[r] = std::min(first[r], static_cast<int>(i));
      last[r] = std::max(last[r], static_cast<int>(i));
    });
  }
  std::vector<lowering::BufferRequest> requests;
  std::vector<int> arena;
  for (size_t b = 0; b < plan->buffers.size(); ++b) {
    if (plan->buffers[b].kind != fb::BufferKind::Arena) continue;
    arena.push_back(static_cast<int>(b));
    const int f = first[b] == INT_MAX ? 0 : first[b];
    requests.push_back({static_cast<int64_t>(plan->buffers[b].byte_size), f, std::max(f, last[b])});
  }
  const auto placed = lowering::PlanMemory(requests, 256);
  for (size_t i = 0; i < arena.size(); ++i)
    plan->buffers[arena[i]].offset = static_cast<uint64_t>(placed.offsets[i]);
  plan->arena_bytes = static_cast<uint64_t>(placed.arena_bytes);
}

}  // namespace ortc::backends::cuda
