// Runs a plugin graph: checks the host inputs against the binary's static shapes, allocates the
// outputs and hands both to the plugin's run_graph.
#include "exec/plugin_node.h"

#include "base/shape_text.h"

#include <nlohmann/json.hpp>

#include "cpu_kernel/kernel_context.h"
#include "exec/profiler.h"

namespace ortc::exec {
namespace {

using io::DimsText;

int32_t Location(const Tensor& t) {
  return t.location() == MemoryLocation::kHost ? ORTC_MEMORY_HOST : ORTC_MEMORY_DEVICE;
}

// The plugin's per-step profile of the run that just ended, as events on the backend's host
// and device lanes, placed from the node's start (the device clock is not the host's: device
// times are offsets from the graph's first event).
Status AddStepEvents(KernelContext& ctx, const PluginGraphState& st) {
  auto text = st.library->LastRunProfile(st.graph.get());
  if (!text.ok()) return text.status();
  const auto steps = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!steps.is_array())
    return InvalidGraph("backend " + st.library->name() + " returned a malformed run profile");
  for (const auto& step : steps) {
    const std::string name = step.value("name", ""), kind = step.value("kind", "");
    const double device_us = step.value("device_us", 0.0);
    std::vector<std::pair<std::string, std::string>> args = {
        {"graph", st.graph_name}, {"kind", kind}, {"device_us", std::to_string(device_us)}};
    ctx.profiler()->Add({name, "Step", ctx.start_us() + step.value("host_start_us", 0.0),
                         step.value("host_us", 0.0), TraceLane::kBackendHost, args});
    ctx.profiler()->Add({name, "Step", ctx.start_us() + step.value("device_start_us", 0.0),
                         device_us, TraceLane::kBackendDevice, args});
  }
  return Status::Ok();
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
                             " must be " + DataTypeName(spec.dtype) + DimsText(spec.dims) +
                             " (the binary is compiled for static shapes), got " +
                             DataTypeName(t->dtype()) + DimsText(t->shape()));
    }
    in[i] = {static_cast<int32_t>(t->dtype()),
             static_cast<uint32_t>(t->shape().size()),
             t->shape().data(),
             const_cast<void*>(t->raw()),
             t->byte_size(),
             Location(*t)};
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const auto& spec = st->outputs[i];
    // A caller-bound output (host or device memory) is written by the plugin directly.
    if (const Tensor* b = ctx.BoundOutput(i)) {
      if (b->dtype() != spec.dtype || b->shape() != spec.dims)
        return InvalidArgument("graph '" + st->graph_name + "' output " + std::to_string(i) +
                               " is " + DataTypeName(spec.dtype) + DimsText(spec.dims) +
                               " but its bound tensor is " + DataTypeName(b->dtype()) +
                               DimsText(b->shape()));
      Tensor t = *b;
      out[i] = {static_cast<int32_t>(spec.dtype),
                static_cast<uint32_t>(spec.dims.size()),
                b->shape().data(),
                t.mutable_raw(),
                t.byte_size(),
                Location(t)};
      ctx.SetOutput(i, std::move(t));
      continue;
    }
    Tensor& t = ctx.OutputUninit(i, spec.dtype, spec.dims);
    out[i] = {static_cast<int32_t>(spec.dtype),
              static_cast<uint32_t>(spec.dims.size()),
              t.shape().data(),
              t.mutable_raw(),
              t.byte_size(),
              ORTC_MEMORY_HOST};
  }
  const OrtcBackend* b = st->library->table();
  const OrtcPluginStatus s =
      b->run_graph(st->graph.get(), in.data(), static_cast<uint32_t>(in.size()), out.data(),
                   static_cast<uint32_t>(out.size()));
  ORTC_RETURN_IF_ERROR(
      st->library->StatusOf(s, "running graph '" + st->graph_name + "' on " + st->library->name()));
  if (st->profiling && ctx.profiler()) return AddStepEvents(ctx, *st);
  return Status::Ok();
}

}  // namespace ortc::exec
