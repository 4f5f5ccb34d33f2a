// The CUDA backend object the registry lists: capability, options, identity and compile.
#include "cuda/compile/capability.h"
#include "cuda/compile/compile.h"
#include "cuda/compile/identity.h"
#include "cuda/compile/options.h"
#include "cuda/compile/tuning_choices.h"

namespace ortc::backends::cuda {
namespace {

class Cuda final : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }
  std::string_view ep_source() const override { return "ortc.cuda"; }
  std::string_view status_line() const override {
    return "compiles static-shape graphs to cuDNN/cuBLASLt calls and NVRTC-built kernels "
           "(cubins per --target-arch + PTX); --input-shape fixes dynamic dims";
  }
  std::vector<NodeSupport> Capability(const graph::Graph& g) const override {
    std::vector<NodeSupport> answers;
    for (const auto& node : g.nodes) answers.push_back(CudaSupports(g, node));
    return answers;
  }
  bool can_compile() const override { return true; }
  Status ValidateOptions(const ProviderOptions& options) const override {
    return ParseCudaOptions(options).status();
  }
  Result<BinaryIdentity> Identity(const ProviderOptions& options) const override {
    auto o = ParseCudaOptions(options);
    if (!o.ok()) return o.status();
    return CudaIdentity(*o);
  }
  Result<CompiledGraph> Compile(const graph::Model& model, const Subgraph& subgraph,
                                const ProviderOptions& options,
                                const CompileProgress& progress) const override {
    auto o = ParseCudaOptions(options);
    if (!o.ok()) return o.status();
    return CompileCudaSubgraph(model, subgraph, *o, progress);
  }
  std::vector<ProviderOptions> TuningVariants() const override { return CudaTuningVariants(); }
  std::string OptionsWarning(const ProviderOptions& options) const override {
    auto o = ParseCudaOptions(options);
    if (!o.ok() || o->tuning_cache_ignored.empty()) return {};
    return "tuning cache " + o->tuning_cache + " ignored: " + o->tuning_cache_ignored +
           "; the static rules choose (run `ortc tune` on the target GPU to make one that fits)";
  }
};

}  // namespace

const Backend& CudaBackend() {
  static const Cuda backend;
  return backend;
}

}  // namespace ortc::backends::cuda
