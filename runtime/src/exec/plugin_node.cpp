// Runs a plugin graph: checks the host inputs against the binary's static shapes, allocates the
// outputs and hands both to the plugin's run_graph.
#include "exec/plugin_node.h"

#include "kernels/kernel.h"

namespace ortc::exec {
namespace {

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s.push_back(',');
    s.append(std::to_string(dims[i]));
  }
  s.push_back(']');
  return s;
}

}  // namespace

Status RunPluginGraph(KernelContext& ctx) {
  const auto* st = static_cast<const PluginGraphState*>(ctx.op().state.get());
  if (!st || !st->graph) return InvalidGraph("plugin node without a loaded graph");
  if (ctx.num_inputs() != st->inputs.size() || ctx.num_outputs() != st->outputs.size())
    return InvalidGraph("plugin node: input/output count differs from its graph");
  std::vector<OrtcTensorRef> in(st->inputs.size()), out(st->outputs.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const Tensor* t = ctx.input(i);
    const auto& spec = st->inputs[i];
    if (!t)
      return InvalidArgument("graph '" + st->graph_name + "' input " + std::to_string(i) +
                             " is missing");
    if (t->dtype() != spec.dtype || t->shape() != spec.dims) {
      return InvalidArgument("graph '" + st->graph_name + "' input " + std::to_string(i) +
                             " must be " + DataTypeName(spec.dtype) + ShapeText(spec.dims) +
                             " (the binary is compiled for static shapes), got " +
                             DataTypeName(t->dtype()) + ShapeText(t->shape()));
    }
    in[i] = {static_cast<int32_t>(t->dtype()), static_cast<uint32_t>(t->shape().size()),
             t->shape().data(), const_cast<void*>(t->raw()), t->byte_size()};
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const auto& spec = st->outputs[i];
    Tensor& t = ctx.OutputUninit(i, spec.dtype, spec.dims);
    out[i] = {static_cast<int32_t>(spec.dtype), static_cast<uint32_t>(spec.dims.size()),
              t.shape().data(), t.mutable_raw(), t.byte_size()};
  }
  const OrtcBackend* b = st->library->table();
  const OrtcPluginStatus s =
      b->run_graph(st->graph.get(), in.data(), static_cast<uint32_t>(in.size()), out.data(),
                   static_cast<uint32_t>(out.size()));
  return st->library->StatusOf(s,
                               "running graph '" + st->graph_name + "' on " + st->library->name());
}

}  // namespace ortc::exec
