// The CPU backend claims every op of the standard ai.onnx domain that exists at the model's
// opset, except the families listed below, which ortc does not plan to run. Everything else it
// refuses with a reason, and the partitioner then reports the node as unplaceable.
#include "cpu/compile/capability.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <set>

#include "base/element_types.h"
#include "cpu/compile/compile.h"
#include "cpu/compile/weight_packing.h"
#include "graph/opset_support.h"
#include "ortc/runtime.h"

namespace ortc::backends::cpu {
namespace {

const std::map<std::string, std::string>& NotPlanned() {
  static const std::map<std::string, std::string> ops = {
      {"ImageDecoder", "image decoding is outside ortc's scope"},
      {"RegexFullMatch", "string ops are not supported"},
      {"StringConcat", "string ops are not supported"},
      {"StringNormalizer", "string ops are not supported"},
      {"StringSplit", "string ops are not supported"},
  };
  return ops;
}

// Why the CPU backend cannot run a node of a subgraph (an If branch, a Loop body...), or empty.
// `opset` is the model's ai.onnx opset. Subgraphs become nested CPU programs, so every node in
// them, at any depth, needs a kernel (Constant nodes become weights).
std::string NestedRefusal(const onnx::GraphProto& g, int64_t opset) {
  for (const auto& node : g.node()) {
    const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    const std::string where =
        "subgraph '" + g.name() + "' node '" + node.name() + "' (" + node.op_type() + "): ";
    if (!domain.empty()) return where + "custom-domain ops cannot run inside a subgraph";
    if (auto it = NotPlanned().find(node.op_type()); it != NotPlanned().end())
      return where + it->second;
    if (node.op_type() == "Constant") continue;
    if (!graph::ResolveOp(domain, node.op_type(), opset).exists)
      return where + "the op does not exist at opset " + std::to_string(opset);
    if (!HasCpuKernel(node.op_type()))  // domain is ai.onnx here
      return where + "the CPU runtime has no kernel for it yet";
    for (const auto& a : node.attribute()) {
      if (!a.has_g()) continue;
      if (auto why = NestedRefusal(a.g(), opset); !why.empty()) return why;
    }
  }
  return "";
}

std::string CpuPrecision(const ProviderOptions& options) {
  auto it = options.find("precision");
  return it == options.end() ? "fp32" : it->second;
}

std::string TargetIsa(const ProviderOptions& options) {
  auto it = options.find("target_isa");
  return it == options.end() ? "portable" : it->second;
}

class Cpu final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  std::string_view ep_source() const override { return "ortc.cpu"; }
  std::string_view status_line() const override {
    return "compiles the ai.onnx ops the runtime's CPU kernels run (opsets 1-24) into CPU programs";
  }
  bool is_fallback() const override { return true; }
  bool can_compile() const override { return true; }

  Status ValidateOptions(const ProviderOptions& options) const override {
    for (const auto& [key, value] : options) {
      if (key == "precision") {
        if (value != "fp32" && value != "bf16")
          return InvalidArgument("cpu precision must be fp32 or bf16, got '" + value + "'");
      } else if (key == "target_isa") {
        static const std::set<std::string> kIsas = {
            "portable", "native", "avx2", "avx512_core", "avx512_core_bf16", "avx512_core_amx"};
        if (!kIsas.count(value))
          return InvalidArgument(
              "cpu target_isa must be portable, native, avx2, avx512_core, "
              "avx512_core_bf16 or avx512_core_amx, got '" +
              value + "'");
      } else if (key == "conv_algorithm") {
        if (value != "auto" && value != "direct" && value != "winograd")
          return InvalidArgument("cpu conv_algorithm must be auto, direct or winograd, got '" +
                                 value + "'");
      } else {
        return InvalidArgument("unknown cpu option '" + key +
                               "' (known: precision, target_isa, conv_algorithm)");
      }
    }
    return Status::Ok();
  }

  Result<BinaryIdentity> Identity(const ProviderOptions& options) const override {
    const bool bf16 = CpuPrecision(options) == "bf16";
    BinaryIdentity id;
    id.sdk_version = "ortc-cpu 1";
    id.hardware_architecture = std::string("cpu:") + kCpuIsa;
    id.versions = {{"ortc-cpu", "1"}};
    id.hardware_targets = {kCpuIsa};
    // bf16 convolutions need the bf16 dot-product instructions; the version gate refuses the
    // binary on a CPU without them.
    if (bf16) id.hardware_targets.push_back(kCpuBf16Isa);
    // Packed weights name the ISA they were laid out for: another CPU repacks them at its first
    // run (the version gate says to prefer recompilation), and only the oneDNN version that
    // described the layout reads it.
    auto resolved = ResolveTargetIsa(TargetIsa(options));
    const std::string isa = resolved.ok() ? *resolved : std::string();
    if (!isa.empty()) {
      id.hardware_targets.push_back(std::string(kPackedIsaPrefix) + isa);
      id.versions.emplace_back("oneDNN", DescribeCpuKernelLibrary().version);
    }
    id.properties = {{"layouts", isa.empty() ? "plain" : "oneDNN blocked for " + isa},
                     {"precision", bf16 ? "bf16" : "fp32"}};
    return id;
  }

  // Quick enough (no code generation) to need no progress.
  Result<CompiledGraph> Compile(const graph::Model& model, const Subgraph& subgraph,
                                const ProviderOptions& options,
                                const CompileProgress&) const override {
    CpuCompileOptions cpu;
    cpu.precision = CpuPrecision(options);
    cpu.target_isa = TargetIsa(options);
    if (auto it = options.find("conv_algorithm"); it != options.end())
      cpu.conv_algorithm = it->second;
    return CompileCpuSubgraph(model, subgraph, cpu);
  }

  std::vector<NodeSupport> Capability(const graph::Graph& g) const override {
    std::vector<NodeSupport> answers;
    for (const auto& node : g.nodes) {
      NodeSupport answer = Supports(node);
      if (answer.supported) answer = HeldTypes(g, node);
      answers.push_back(std::move(answer));
    }
    return answers;
  }

 private:
  static NodeSupport Supports(const graph::Node& node) {
    if (!node.domain.empty()) {
      return NodeSupport::No("op " + node.domain + "::" + node.op_type +
                             " is in a custom domain; the CPU backend runs only ai.onnx ops");
    }
    if (auto it = NotPlanned().find(node.op_type); it != NotPlanned().end()) {
      return NodeSupport::No(it->second);
    }
    if (!graph::ResolveOp(node.domain, node.op_type, node.opset).exists) {
      return NodeSupport::No("op " + node.op_type + " does not exist at opset " +
                             std::to_string(node.opset));
    }
    // The CPU backend claims exactly what the runtime's kernels run.
    if (!HasCpuKernel(node.op_type)) {  // custom domains were refused above
      return NodeSupport::No("the CPU runtime has no kernel for " + node.op_type + " yet");
    }
    if (node.has_subgraphs) {
      for (const auto& a : node.proto->attribute()) {
        if (!a.has_g()) continue;
        if (auto why = NestedRefusal(a.g(), node.opset); !why.empty()) return NodeSupport::No(why);
      }
    }
    return NodeSupport::Yes();
  }

  // A tensor of a type the runtime holds none of (float8, float4, sub-byte integers) would
  // make a binary the runtime refuses at load: the compile says so instead.
  static NodeSupport HeldTypes(const graph::Graph& g, const graph::Node& node) {
    for (const auto* values : {&node.inputs, &node.outputs})
      for (int v : *values) {
        if (v < 0) continue;
        const int32_t dtype = g.values[v].info.dtype;
        if (dtype == 0 || dtype == onnx::TensorProto::STRING || HeldElementBytes(dtype) > 0)
          continue;
        return NodeSupport::No("value '" + g.values[v].name + "' is " + ElementTypeName(dtype) +
                               ", a type the CPU runtime holds no tensor of");
      }
    return NodeSupport::Yes();
  }
};

}  // namespace

const Backend& CpuBackend() {
  static const Cpu backend;
  return backend;
}

}  // namespace ortc::backends::cpu
