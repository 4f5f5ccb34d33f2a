// Kernel generation over a plan's launch steps (the generators live in codegen/).
#include "cuda/compile/kernels.h"

#include <cctype>

namespace ortc::backends::cuda {
namespace {

// A C identifier from a graph name: kernels of all graphs of a binary stay distinct.
std::string Identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "g" + out;
  return out;
}

}  // namespace

Status GenerateKernels(Plan* plan, std::vector<codegen::KernelSource>* sources) {
  const std::string prefix = "ortc_" + Identifier(plan->graph) + "_k";
  for (auto& step : plan->steps) {
    if (step.kind != StepKind::kLaunch) continue;
    auto& l = step.launch;
    const std::string name = prefix + std::to_string(sources->size());
    auto k = l.fused ? codegen::EmitFused(name, *l.fused) : codegen::EmitOp(name, *l.op);
    if (!k.ok()) return k.status().WithContext("generating the kernel of " + step.name);
    if (k->num_inputs > static_cast<int>(l.inputs.size()) ||
        k->num_outputs > static_cast<int>(l.outputs.size())) {
      return Status(StatusCode::kEpFail,
                    "kernel of " + step.name + " takes more tensors than the op has");
    }
    l.inputs.resize(k->num_inputs);
    l.outputs.resize(k->num_outputs);
    l.kernel = k->name;
    l.grid = k->grid;
    l.block = k->block;
    l.shared_bytes = k->shared_bytes;
    for (const auto& [in, out] : k->same_index) {
      l.same_index.push_back(in);
      l.same_index.push_back(k->num_inputs + out);
    }
    plan->kernels.push_back(k->name);
    sources->push_back(std::move(k).value());
  }
  return Status::Ok();
}

}  // namespace ortc::backends::cuda
