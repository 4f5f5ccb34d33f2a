// The arena plan of lowered graphs: buffers alive at the same step never share bytes, and
// memory is reused once a buffer is dead.
#include <catch2/catch.hpp>

#include <climits>

#include "plan_helpers.h"

using namespace ortc::backends::cuda;
using ortc::test::Attr;
using ortc::test::ModelBuilder;

namespace {

// Lifetimes recomputed here from the steps (aliases count for their root buffer).
void CheckNoLiveOverlap(const Plan& plan) {
  const size_t n = plan.buffers.size();
  std::vector<int> first(n, INT_MAX), last(n, -1);
  auto root = [&](int b) {
    return plan.buffers[b].kind == fb::BufferKind::Alias ? plan.buffers[b].alias_of : b;
  };
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    std::vector<int> used = StepReads(plan.steps[i]);
    for (int b : StepWrites(plan.steps[i])) used.push_back(b);
    for (int b : used) {
      first[root(b)] = std::min(first[root(b)], static_cast<int>(i));
      last[root(b)] = std::max(last[root(b)], static_cast<int>(i));
    }
  }
  for (size_t a = 0; a < n; ++a) {
    const auto& A = plan.buffers[a];
    if (A.kind != fb::BufferKind::Arena) continue;
    CHECK(A.offset % 256 == 0);
    CHECK(A.offset + A.byte_size <= plan.arena_bytes);
    for (size_t b = a + 1; b < n; ++b) {
      const auto& B = plan.buffers[b];
      if (B.kind != fb::BufferKind::Arena) continue;
      const bool live_together = first[a] <= last[b] && first[b] <= last[a];
      const bool share = A.offset < B.offset + B.byte_size && B.offset < A.offset + A.byte_size;
      INFO(A.name << " [" << first[a] << "," << last[a] << "] and " << B.name << " [" << first[b]
                  << "," << last[b] << "]");
      CHECK_FALSE((live_together && share));
    }
  }
}

}  // namespace

TEST_CASE("arena buffers alive together never overlap", "[memory]") {
  // A chain of convolutions with non-elementwise ops between them: many intermediates.
  ModelBuilder b(17, 8);
  b.Input("x", {1, 4, 16, 16});
  b.IntInitializer("shape", {1, 4, 16, 16});
  std::string prev = "x";
  for (int i = 0; i < 6; ++i) {
    const std::string w = "W" + std::to_string(i), c = "c" + std::to_string(i);
    const std::string t = "t" + std::to_string(i), r = "r" + std::to_string(i);
    b.Initializer(w, {4, 4, 3, 3}, std::vector<float>(144, 0.01f * (i + 1)));
    b.Node("Conv", {prev, w}, {c}, {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
    b.Node("Transpose", {c}, {t}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
    b.Node("Reshape", {t, "shape"}, {r});
    prev = r;
  }
  b.Node("Sigmoid", {prev}, {"y"}).Output("y");
  for (auto precision : {Precision::kFp32, Precision::kFp16}) {
    auto p = ortc::test::cuda::PlanAll(b, precision);
    const Plan& plan = p.graph.plan;
    CheckNoLiveOverlap(plan);
    uint64_t total = 0;
    int arena = 0;
    for (const auto& buf : plan.buffers) {
      if (buf.kind == fb::BufferKind::Arena) {
        total += buf.byte_size;
        arena++;
      }
    }
    CHECK(arena >= 12);
    CHECK(plan.arena_bytes < total);  // dead buffers' bytes are reused
  }
}
