// Kernels sharing one launch (codegen/merged_kernels.h): every catalog kernel that may share a
// launch, merged with its neighbours, writes exactly the bytes it writes launched alone; kernels
// that need shared memory, a barrier or a grid of more than one dimension are refused.
#include <catch2/catch.hpp>

#include <map>

#include "cuda/compile/codegen/merged_kernels.h"
#include "entry_runner.h"

namespace ortc::test::cuda {
namespace {

struct Part {
  CatalogEntry entry;
  cg::KernelSource kernel;
};

// Runs `kernel` of `module` on `inputs`; outputs pre-filled with one pattern.
std::vector<std::string> Run(const HostModule& module, const cg::KernelSource& kernel,
                             std::vector<std::string> inputs,
                             const std::vector<cg::TensorDesc>& outputs) {
  std::vector<std::string> outs;
  for (const auto& d : outputs)
    outs.emplace_back(static_cast<size_t>(d.elements()) * StorageBytes(d.dtype), '\x5a');
  std::vector<void*> args;
  for (auto& b : inputs) args.push_back(b.empty() ? nullptr : b.data());
  for (auto& o : outs) args.push_back(o.data());
  const Status s = module.Launch(kernel, args);
  INFO(s.message());
  REQUIRE(s.ok());
  return outs;
}

std::vector<cg::TensorDesc> Outputs(const CatalogEntry& e) {
  if (!e.group) return e.op.outputs;
  std::vector<cg::TensorDesc> out;
  for (int o : e.group->outputs) out.push_back(e.group->ops[o].op.outputs[0]);
  return out;
}

}  // namespace

TEST_CASE("kernels merged into one launch write what each writes alone", "[cuda][merged]") {
  std::vector<Part> parts;
  int refused = 0;
  for (const auto& family : AllCatalogs()) {
    for (const auto& e : family.entries) {
      auto k = Emit(e);
      INFO(e.name);
      REQUIRE(k.ok());
      if (!cg::SharedLaunchRefusal(*k).empty()) {
        ++refused;
        continue;
      }
      parts.push_back({e, std::move(k).value()});
    }
  }
  // Most kernels are grid-stride loops that may share; reductions and attention may not.
  CHECK(parts.size() > 100);
  CHECK(refused > 10);
  // Runs of neighbours of one block size: pairs, and every fifth run three kernels long.
  std::vector<std::vector<size_t>> runs;
  for (size_t i = 0; i < parts.size();) {
    std::vector<size_t> run = {i};
    const size_t want = runs.size() % 5 == 4 ? 3 : 2;
    size_t j = i + 1;
    while (run.size() < want && j < parts.size() && parts[j].kernel.block == parts[i].kernel.block)
      run.push_back(j++);
    if (run.size() >= 2) runs.push_back(run);
    i = j;
  }
  REQUIRE(runs.size() > 40);
  std::vector<cg::KernelSource> alone, merged;
  for (const auto& p : parts) alone.push_back(p.kernel);
  for (size_t r = 0; r < runs.size(); ++r) {
    std::vector<cg::KernelSource> ks;
    for (size_t i : runs[r]) ks.push_back(parts[i].kernel);
    auto m = cg::MergeKernels("merged_" + std::to_string(r), ks);
    INFO(m.status().message());
    REQUIRE(m.ok());
    uint32_t blocks = 0;
    for (const auto& k : ks) blocks += k.grid[0];
    CHECK(m->grid[0] == blocks);
    merged.push_back(std::move(m).value());
  }
  auto alone_module = HostModule::Compile(alone);
  INFO(alone_module.status().message());
  REQUIRE(alone_module.ok());
  auto merged_module = HostModule::Compile(merged);
  INFO(merged_module.status().message());
  REQUIRE(merged_module.ok());
  int compared = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    std::vector<std::string> inputs;
    std::vector<cg::TensorDesc> outputs;
    std::vector<std::string> want;
    for (size_t i : runs[r]) {
      const Part& p = parts[i];
      INFO(p.entry.name);
      const auto in = EntryInputBytes(p.entry, static_cast<unsigned>(7 + i));
      const auto out = Outputs(p.entry);
      const auto got = Run(*alone_module, p.kernel, in, out);
      inputs.insert(inputs.end(), in.begin(), in.end());
      want.insert(want.end(), got.begin(), got.end());
    }
    for (size_t i : runs[r]) {
      const auto out = Outputs(parts[i].entry);
      outputs.insert(outputs.end(), out.begin(), out.end());
    }
    const auto got = Run(*merged_module, merged[r], inputs, outputs);
    REQUIRE(got.size() == want.size());
    for (size_t o = 0; o < got.size(); ++o) {
      INFO(merged[r].name << " output " << o);
      CHECK(got[o] == want[o]);
      ++compared;
    }
  }
  CHECK(compared >= 2 * static_cast<int>(runs.size()));
}

TEST_CASE("a merged kernel keeps each part's in-place pairs", "[cuda][merged]") {
  cg::KernelSource a, b;
  a.name = "part_a";
  b.name = "part_b";
  a.source =
      "extern \"C\" __global__ void part_a(const void* p0, void* p1) { (void)blockIdx.x; }\n";
  b.source =
      "extern \"C\" __global__ void part_b(const void* p0, const void* p1, void* p2, "
      "void* p3) { (void)gridDim.x; }\n";
  a.num_inputs = 1;
  a.num_outputs = 1;
  b.num_inputs = 2;
  b.num_outputs = 2;
  a.block = b.block = {256, 1, 1};
  a.grid = {3, 1, 1};
  b.grid = {5, 1, 1};
  a.same_index = {{0, 0}};
  b.same_index = {{1, 1}};
  auto m = cg::MergeKernels("both", {a, b});
  REQUIRE(m.ok());
  CHECK(m->num_inputs == 3);
  CHECK(m->num_outputs == 3);
  CHECK(m->grid == std::array<uint32_t, 3>{8, 1, 1});
  // a's input 0 -> output 0; b's input 1 (merged input 2) -> its output 1 (merged output 2).
  CHECK(m->same_index == std::vector<std::pair<int, int>>{{0, 0}, {2, 2}});
  // Each part reads its own block index and grid size.
  CHECK(m->source.find("(void)blockIdx.x;") == std::string::npos);
  CHECK(m->source.find("(void)ortc_part_block;") != std::string::npos);
  CHECK(m->source.find("(void)ortc_part_grid;") != std::string::npos);
}

TEST_CASE("kernels that cannot share a launch say why", "[cuda][merged]") {
  cg::KernelSource k;
  k.name = "k";
  k.source = "extern \"C\" __global__ void k(void* p0) { (void)blockIdx.x; }\n";
  k.num_outputs = 1;
  k.block = {256, 1, 1};
  CHECK(cg::SharedLaunchRefusal(k).empty());
  auto two_d = k;
  two_d.grid = {4, 2, 1};
  CHECK(cg::SharedLaunchRefusal(two_d).find("dimension") != std::string::npos);
  auto shared = k;
  shared.source = "extern \"C\" __global__ void k(void* p0) { __shared__ float s[4]; }\n";
  CHECK(cg::SharedLaunchRefusal(shared).find("shared memory") != std::string::npos);
  auto helper = k;
  helper.source = "__device__ unsigned at() { return blockIdx.x; }\n" + k.source;
  CHECK(cg::SharedLaunchRefusal(helper).find("helper") != std::string::npos);
  auto y = k;
  y.source = "extern \"C\" __global__ void k(void* p0) { (void)blockIdx.y; }\n";
  CHECK(cg::SharedLaunchRefusal(y).find("blockIdx.y") != std::string::npos);
  auto other = k;
  other.block = {128, 1, 1};
  CHECK_FALSE(cg::MergeKernels("m", {k, other}).ok());  // another block size
  CHECK_FALSE(cg::MergeKernels("m", {k}).ok());         // nothing to merge with
}

}  // namespace ortc::test::cuda
