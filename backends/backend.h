// The compile side of a backend as the compiler sees it: per node, whether the backend takes it
// (and why not), its options, its identity and compile. The compiler calls every backend through
// the plugin ABI (abi/abi_backend.h implements this interface over a C table); the in-tree
// backends implement it in C++ and are published as C tables (abi/in_process_compiler.h).
// registry.cpp lists them, in-tree ones statically, plugins as they are loaded.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bundle/context_binary_writer.h"
#include "graph/model.h"
#include "ortc/status.h"

namespace ortc::backends {

struct NodeSupport {
  bool supported = false;
  std::string reason;  // why not, when !supported: "op not supported", "dtype float64", ...

  static NodeSupport Yes() { return {true, {}}; }
  static NodeSupport No(std::string why) { return {false, std::move(why)}; }
};

// One partition group handed to a backend for compilation.
struct Subgraph {
  std::string name;         // the graph name in the binary (= EPContext partition_name)
  std::vector<int> nodes;   // node ids of the model's graph, topological order
  std::vector<int> inputs;  // value ids read from outside (initializers excluded)
  std::vector<int> outputs;
};

// Backend options from the command line (--provider-option cpu:key=value).
using ProviderOptions = std::map<std::string, std::string>;

// A choice a backend made between implementations of one step that a tuning run can measure
// (`ortc tune`): which one it took and why. `key` names what the step computes (op, shapes,
// types, attributes), so a measurement applies to every step of any model that computes it.
struct TunableChoice {
  std::string step;  // the step's name in its graph (its main ONNX node)
  std::string key;
  std::string choice;                   // one of candidates
  std::vector<std::string> candidates;  // every implementation the step could take
  std::string source;                   // "rule", "option" (forced), "measured" (tuning cache)
};

struct CompiledGraph {
  std::string program;                      // backend-specific program bytes
  std::vector<bundle::WeightSpec> weights;  // program weight slots, in order
  std::vector<bundle::TensorDescSpec> inputs, outputs;
  uint64_t arena_bytes = 0;
  std::map<std::string, int> stats;  // e.g. folded ops, fused patterns
  // Named byte blobs stored beside the program (CUDA: cubins, PTX, kernel source), written as
  // artefact sections of the binary; names are unique in a binary ("<graph>/sm_80.cubin").
  std::vector<std::pair<std::string, std::string>> artefacts;
  // key=value pairs appended to the EPContext node's notes (e.g. precision, layout).
  std::vector<std::pair<std::string, std::string>> notes;
  // Manifest versions this graph adds to its binary (e.g. a vendor library it calls): the
  // runtime requires a library only when the binary names it.
  std::vector<std::pair<std::string, std::string>> binary_versions;
  // The graph's tunable choices, as recorded in its program.
  std::vector<TunableChoice> choices;
};

// What a backend records about its binaries (versions, targets) for the bin header and the
// EPContext attributes.
struct BinaryIdentity {
  std::string sdk_version;            // EPContext ep_sdk_version
  std::string hardware_architecture;  // EPContext hardware_architecture
  std::vector<std::pair<std::string, std::string>> versions;
  std::vector<std::string> hardware_targets;
  std::vector<std::pair<std::string, std::string>> properties;
};

// Tells the caller how a long compile goes (ortc compile draws it on a terminal): the step
// under way ("NVRTC sm_90") and how many of the compile's steps are done out of how many.
using CompileProgress = std::function<void(const std::string& step, int done, int total)>;

class Backend {
 public:
  virtual ~Backend() = default;
  // Short name used on the command line and in file names: "cpu", "cuda".
  virtual std::string_view name() const = 0;
  // The EPContext `source` attribute value that marks nodes this backend owns.
  virtual std::string_view ep_source() const = 0;
  // One line saying what the backend can do today (shown by --help and reports).
  virtual std::string_view status_line() const = 0;
  // True for the CPU backend, which must take every node the others leave.
  virtual bool is_fallback() const { return false; }
  // One answer per node of g, in node order.
  virtual std::vector<NodeSupport> Capability(const graph::Graph& g) const = 0;

  // Compile side. Backends that cannot compile yet keep these defaults.
  virtual bool can_compile() const { return false; }
  virtual Status ValidateOptions(const ProviderOptions& options) const;
  // What the binary records of the SDK and hardware it was compiled for (the version gate reads
  // it back); an error when the backend cannot say, so that no binary is written without it.
  virtual Result<BinaryIdentity> Identity(const ProviderOptions& options) const {
    return BinaryIdentity{};
  }
  virtual Result<CompiledGraph> Compile(const graph::Model& model, const Subgraph& subgraph,
                                        const ProviderOptions& options,
                                        const CompileProgress& progress) const;
  // Tuning (`ortc tune`): option sets that each compile every tunable choice one way (one set
  // per candidate), so timing each compiled variant's steps measures every candidate. Empty:
  // nothing to tune.
  virtual std::vector<ProviderOptions> TuningVariants() const { return {}; }
  // A warning about these options the compile should print once (a tuning cache ignored, with
  // the reason), "" when none.
  virtual std::string OptionsWarning(const ProviderOptions& options) const { return {}; }
};

}  // namespace ortc::backends
