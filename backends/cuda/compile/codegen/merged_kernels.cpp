// Independent kernels sharing one launch (merged_kernels.h). Each part's entry point becomes a
// device function that takes its block index and grid size as arguments, so a part computes
// exactly what it computed launched alone; the new entry point hands each block to its part.
#include "cuda/compile/codegen/merged_kernels.h"

#include "cuda/compile/codegen/kernel_text.h"

namespace ortc::backends::cuda::codegen {
namespace {

constexpr const char* kBlockArg = "ortc_part_block";
constexpr const char* kGridArg = "ortc_part_grid";

std::string EntryDeclaration(const std::string& name) {
  return "extern \"C\" __global__ void " + name + "(";
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void ReplaceAll(std::string* text, const std::string& from, const std::string& to) {
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at + to.size()))
    text->replace(at, from.size(), to);
}

std::string PartName(const KernelSource& k) {
  return k.name + "_part";
}

}  // namespace

std::string SharedLaunchRefusal(const KernelSource& k) {
  if (k.grid[1] != 1 || k.grid[2] != 1 || k.block[1] != 1 || k.block[2] != 1)
    return k.name + ": a grid or block of more than one dimension";
  if (k.shared_bytes != 0 || k.uses_block_sync ||
      k.source.find("__shared__") != std::string::npos ||
      k.source.find("__syncthreads") != std::string::npos)
    return k.name + ": uses shared memory";
  const std::string& s = k.source;
  const size_t entry = s.find(EntryDeclaration(k.name));
  if (entry == std::string::npos || Count(s, "__global__") != 1)
    return k.name + ": not one entry point of that name";
  for (const char* index : {"blockIdx.y", "blockIdx.z", "gridDim.y", "gridDim.z"})
    if (s.find(index) != std::string::npos) return k.name + ": reads " + index;
  // Helpers before the entry point cannot be handed the part's block index.
  const std::string head = s.substr(0, entry);
  if (head.find("blockIdx") != std::string::npos || head.find("gridDim") != std::string::npos)
    return k.name + ": a helper reads the block index";
  if (s.find(kBlockArg) != std::string::npos || s.find(kGridArg) != std::string::npos)
    return k.name + ": already names a part's arguments";
  return "";
}

Result<KernelSource> MergeKernels(const std::string& name, const std::vector<KernelSource>& parts) {
  if (parts.size() < 2) return InvalidArgument(name + ": merging fewer than two kernels");
  KernelSource merged;
  merged.name = name;
  merged.block = parts[0].block;
  std::string calls;
  int inputs = 0, outputs = 0;
  for (const auto& p : parts) {
    inputs += p.num_inputs;
    outputs += p.num_outputs;
  }
  int in_at = 0, out_at = 0;
  uint64_t blocks = 0;
  for (size_t j = 0; j < parts.size(); ++j) {
    const KernelSource& p = parts[j];
    if (std::string why = SharedLaunchRefusal(p); !why.empty()) return InvalidArgument(why);
    if (p.block != merged.block)
      return InvalidArgument(name + ": " + p.name + " has another block size");
    const std::string& source = p.source;
    const size_t entry = source.find(EntryDeclaration(p.name));
    std::string body = source.substr(entry + EntryDeclaration(p.name).size());
    ReplaceAll(&body, "blockIdx.x", kBlockArg);
    ReplaceAll(&body, "gridDim.x", kGridArg);
    merged.source += source.substr(0, entry) + "__device__ __forceinline__ void " + PartName(p) +
                     "(unsigned " + kBlockArg + ", unsigned " + kGridArg + ", " + body;
    // The call: this part's inputs and outputs among the merged kernel's parameters.
    std::string args = std::to_string(p.grid[0]) + "u";
    for (int i = 0; i < p.num_inputs; ++i) args += ", p" + std::to_string(in_at + i);
    for (int o = 0; o < p.num_outputs; ++o) args += ", p" + std::to_string(inputs + out_at + o);
    const std::string call = "    " + PartName(p) + "(b, " + args + ");\n";
    if (j + 1 < parts.size()) {
      calls += "  if (b < " + std::to_string(p.grid[0]) + "u) {\n" + call + "    return;\n  }\n";
      calls += "  b -= " + std::to_string(p.grid[0]) + "u;\n";
    } else {
      calls += "  {\n" + call + "  }\n";
    }
    for (const auto& [i, o] : p.same_index) merged.same_index.emplace_back(in_at + i, out_at + o);
    in_at += p.num_inputs;
    out_at += p.num_outputs;
    blocks += p.grid[0];
  }
  if (blocks > 0x7fffffffu) return InvalidArgument(name + ": the parts' grids add up past 2^31");
  merged.source += "// " + name + ": one launch of " + std::to_string(parts.size()) +
                   " independent kernels, each on its own blocks\n" + EntryDeclaration(name) +
                   KernelParams(inputs, outputs) + ") {\n  unsigned b = blockIdx.x;\n" + calls +
                   "}\n";
  merged.num_inputs = inputs;
  merged.num_outputs = outputs;
  merged.grid = {static_cast<uint32_t>(blocks), 1, 1};
  return merged;
}

}  // namespace ortc::backends::cuda::codegen
