// ortc::RunCpuOp: one op as a one-node ExecGraph whose inputs are constants, bound to the same
// kernels a CPU program binds. The compiler's constant folding calls it (through the runtime's
// API, so that it needs nothing of the executor's internals).
#include <onnx/onnx_pb.h>

#include "cpu_kernel/exec_graph.h"
#include "cpu_kernel/kernel_context.h"
#include "loader/plain_subgraph.h"
#include "ortc/runtime.h"

namespace ortc {

bool HasCpuKernel(const std::string& op_type) {
  return exec::FindKernel("", op_type) != nullptr;
}

Result<std::vector<Tensor>> RunCpuOp(const CpuOpCall& call) {
  if (!HasCpuKernel(call.op_type))
    return NotImplemented("the CPU kernels do not run " + call.op_type);
  exec::ExecGraph g;
  exec::ExecOp x;
  x.name = "fold";
  x.op_type = call.op_type;
  x.version = call.opset;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (!call.inputs[i]) {
      x.inputs.push_back(-1);
      continue;
    }
    const int v = g.AddValue("in" + std::to_string(i));
    g.constants[v] = *call.inputs[i];
    x.inputs.push_back(v);
  }
  for (size_t i = 0; i < call.num_outputs; ++i) {
    const int v = g.AddValue("out" + std::to_string(i));
    x.outputs.push_back(v);
    g.outputs.push_back(v);
  }
  onnx::NodeProto node;
  if (!call.attributes.empty() && !node.ParseFromString(call.attributes))
    return InvalidArgument(call.op_type + ": the attributes are not a serialized NodeProto");
  for (const auto& a : node.attribute()) {
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS)
      return NotImplemented(call.op_type + ": ops with subgraphs are not run alone");
  }
  const std::map<std::string, int64_t> opsets = {{"", call.opset}};
  auto no_outer = [](const std::string& name) -> Result<int> {
    return InvalidGraph("no outer scope for '" + name + "'");
  };
  ORTC_RETURN_IF_ERROR(loader::AddNodeAttributes(node, nullptr, opsets, no_outer, &x));
  g.ops.push_back(std::move(x));
  g.max_tensor_bytes = call.max_output_bytes;
  ORTC_RETURN_IF_ERROR(exec::BindKernels(&g));
  return exec::Execute(g, {});
}

}  // namespace ortc
