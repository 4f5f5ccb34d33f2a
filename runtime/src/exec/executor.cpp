// Sequential execution over a value table; intermediates are released after their last use.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <set>

#include "cpu_kernel/exec_graph.h"
#include "cpu_kernel/kernel_context.h"
#include "exec/buffer_pool.h"
#include "exec/profiler.h"

namespace ortc::exec {

int64_t ExecOp::Int(const std::string& n, int64_t fallback) const {
  auto it = attrs.find(n);
  return it == attrs.end() ? fallback : it->second.i;
}
float ExecOp::Float(const std::string& n, float fallback) const {
  auto it = attrs.find(n);
  return it == attrs.end() ? fallback : it->second.f;
}
std::string ExecOp::String(const std::string& n, const std::string& fallback) const {
  auto it = attrs.find(n);
  return it == attrs.end() ? fallback : it->second.s;
}
std::vector<int64_t> ExecOp::Ints(const std::string& n, std::vector<int64_t> fallback) const {
  auto it = attrs.find(n);
  return it == attrs.end() ? fallback : it->second.ints;
}
std::vector<float> ExecOp::Floats(const std::string& n) const {
  auto it = attrs.find(n);
  return it == attrs.end() ? std::vector<float>{} : it->second.floats;
}

int ExecGraph::AddValue(const std::string& name) {
  value_names.push_back(name);
  constants.emplace_back();
  arena_offset.push_back(-1);
  arena_size.push_back(-1);
  const int id = static_cast<int>(value_names.size()) - 1;
  if (!name.empty()) index[name] = id;
  return id;
}

int ExecGraph::FindValue(const std::string& name) const {
  auto it = index.find(name);
  return it == index.end() ? -1 : it->second;
}

Status BindKernels(ExecGraph* graph) {
  for (auto& op : graph->ops) {
    if (op.kernel) continue;  // bound by the loader (plugin graphs)
    op.kernel = FindKernel(op.domain, op.op_type);
    if (!op.kernel) {
      return NotImplemented("the CPU runtime has no kernel for " +
                            (op.domain.empty() ? "" : op.domain + "::") + op.op_type +
                            " (version " + std::to_string(op.version) + "), used by node '" +
                            op.name + "'");
    }
    auto cache = MakeKernelCache(op, *graph);
    if (!cache.ok()) return cache.status();
    op.cache = std::move(cache).value();
  }
  return Status::Ok();
}

namespace {

// Plugin graphs are ops of the domain "ortc.<backend>".
bool IsBackendGraph(const ExecOp& op) {
  return op.domain.rfind("ortc.", 0) == 0;
}

// Which backend runs an op, for the profile: "cpu", or the plugin graph's backend.
std::string Provider(const ExecOp& op) {
  return IsBackendGraph(op) ? op.domain.substr(5) : "cpu";
}

// A host result for a caller-bound output: copied into host memory; device memory is refused
// (only backend graphs write device memory). `source` says what computed it.
Status StoreBound(const std::string& source, const std::string& name, const Tensor& result,
                  Tensor* bound) {
  if (bound->location() != MemoryLocation::kHost)
    return InvalidArgument("output '" + name + "' is bound to device memory but " + source +
                           " computes it on the CPU: bind it in host memory");
  if (result.dtype() != bound->dtype() || result.shape() != bound->shape())
    return InvalidArgument("output '" + name + "' does not fit its bound tensor");
  if (result.raw() != bound->raw() && result.byte_size())
    std::memcpy(bound->mutable_raw(), result.raw(), result.byte_size());
  return Status::Ok();
}

// Ops that take sequence or optional values; every other kernel reads tensors only.
bool TakesContainers(const ExecOp& op) {
  static const std::set<std::string> ops = {"Identity",
                                            "If",
                                            "Loop",
                                            "Scan",
                                            "SequenceMap",
                                            "SequenceAt",
                                            "SequenceInsert",
                                            "SequenceErase",
                                            "SequenceLength",
                                            "ConcatFromSequence",
                                            "Optional",
                                            "OptionalHasElement",
                                            "OptionalGetElement"};
  return op.domain.empty() && ops.count(op.op_type) > 0;
}

}  // namespace

Result<std::vector<Tensor>> Execute(const ExecGraph& g, const std::vector<Tensor>& inputs,
                                    Profiler* profiler, const std::vector<Tensor>* bound) {
  const double run_start = profiler ? profiler->NowUs() : 0;
  const size_t n = g.value_names.size();
  // The graph's inputs and outputs index the values below (a nested graph's output without a
  // name is -1: fuzz_model found a Scan body writing keep[-1]).
  for (const std::vector<int>* ends : {&g.inputs, &g.outputs})
    for (int v : *ends)
      if (v < 0 || static_cast<size_t>(v) >= n)
        return InvalidArgument("a graph input or output names no value of its graph");
  std::vector<Tensor> values(n);
  // One arena per run (runs may overlap in threads): planned intermediates live in it.
  std::shared_ptr<void> arena;
  if (g.arena_bytes > 0) {
    try {
      arena = AcquireBuffer(static_cast<size_t>(g.arena_bytes), false);
    } catch (const std::bad_alloc&) {
      return OutOfMemory("cannot allocate the " + std::to_string(g.arena_bytes) +
                         "-byte arena of this run");
    }
  }
  for (size_t v = 0; v < n; ++v) {
    if (!g.constants[v].empty()) values[v] = g.constants[v];
  }
  for (size_t i = 0; i < g.inputs.size() && i < inputs.size(); ++i) values[g.inputs[i]] = inputs[i];

  // Remaining reads per value, so intermediates are freed as soon as nothing needs them.
  std::vector<int> reads(n, 0);
  for (const auto& op : g.ops) {
    for (int v : op.inputs) {
      if (v >= 0) ++reads[v];
    }
  }
  std::vector<bool> keep(n, false);
  for (int v : g.outputs) keep[v] = true;
  // Caller memory per value id (graph outputs only).
  std::vector<Tensor> bound_by_value;
  if (bound) {
    bound_by_value.resize(n);
    for (size_t k = 0; k < g.outputs.size() && k < bound->size(); ++k)
      bound_by_value[g.outputs[k]] = (*bound)[k];
  }
  for (size_t v = 0; v < n; ++v) keep[v] = keep[v] || !g.constants[v].empty();

  for (const auto& op : g.ops) {
    std::vector<const Tensor*> in;
    in.reserve(op.inputs.size());
    const bool backend_graph = IsBackendGraph(op);
    for (int v : op.inputs) {
      if (v >= 0 && values[v].empty()) {
        return InvalidArgument("node '" + op.name + "' (" + op.op_type + "): input '" +
                               g.value_names[v] +
                               "' has no value (a graph input missing from the call?)");
      }
      if (v >= 0 && !values[v].is_tensor() && !TakesContainers(op)) {
        return InvalidArgument("node '" + op.name + "' (" + op.op_type + "): input '" +
                               g.value_names[v] + "' is a " +
                               (values[v].is_sequence() ? "sequence" : "empty optional") +
                               " but this op takes tensors");
      }
      if (v >= 0 && !backend_graph && values[v].location() != MemoryLocation::kHost) {
        return InvalidArgument("node '" + op.name + "' (" + op.op_type + ") runs on the CPU but '" +
                               g.value_names[v] +
                               "' is in device memory: pass it in host memory, or compile so that "
                               "a device graph consumes it");
      }
      in.push_back(v >= 0 ? &values[v] : nullptr);
    }
    std::vector<Tensor> out(op.outputs.size());
    KernelContext ctx(op, std::move(in), &out);
    if (arena) ctx.UseArena(arena, &g.arena_offset, &g.arena_size);
    ctx.LimitOutputBytes(g.max_tensor_bytes);
    const double op_start = profiler ? profiler->NowUs() : 0;
    ctx.UseProfiler(profiler, op_start);
    if (bound) ctx.UseBound(&bound_by_value);
    Status s;
    try {
      s = op.kernel(ctx);
    } catch (const std::bad_alloc&) {
      s = OutOfMemory("out of memory allocating an output (shape too large?)");
    } catch (const MalformedNode& e) {
      s = InvalidGraph(e.what());
    } catch (const TensorTooLarge& e) {
      s = OutOfMemory(e.what());  // more than the session lets one tensor take
    } catch (const std::exception& e) {
      s = InvalidArgument(std::string("kernel failed: ") + e.what());
    }
    if (!s.ok()) return s.WithContext("node '" + op.name + "' (" + op.op_type + ")");
    if (profiler)
      profiler->Add({op.name,
                     "Node",
                     op_start,
                     profiler->NowUs() - op_start,
                     TraceLane::kRun,
                     {{"op_type", op.op_type}, {"provider", Provider(op)}}});
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      const int v = op.outputs[i];
      if (v < 0) continue;
      if (bound && !bound_by_value[v].empty() && out[i].raw() != bound_by_value[v].raw()) {
        ORTC_RETURN_IF_ERROR(StoreBound("node '" + op.name + "' (" + op.op_type + ")",
                                        g.value_names[v], out[i], &bound_by_value[v]));
        out[i] = bound_by_value[v];
      }
      values[v] = std::move(out[i]);
    }
    for (int v : op.inputs) {
      if (v >= 0 && --reads[v] == 0 && !keep[v]) values[v] = Tensor();
    }
  }
  std::vector<Tensor> result;
  for (int v : g.outputs) {
    if (values[v].empty())
      return InvalidGraph("output '" + g.value_names[v] + "' was not produced");
    // A bound output no op wrote (a graph input or constant passed through) is copied too.
    if (bound && !bound_by_value[v].empty() && values[v].raw() != bound_by_value[v].raw()) {
      if (values[v].location() != MemoryLocation::kHost)
        return InvalidArgument("output '" + g.value_names[v] +
                               "' is a device input passed through: bind it to that memory");
      ORTC_RETURN_IF_ERROR(
          StoreBound("the graph", g.value_names[v], values[v], &bound_by_value[v]));
      values[v] = bound_by_value[v];
    }
    result.push_back(values[v]);
  }
  if (profiler)
    profiler->Add(
        {"model_run", "Session", run_start, profiler->NowUs() - run_start, TraceLane::kRun, {}});
  return result;
}

}  // namespace ortc::exec
