// Sequential execution over a value table; intermediates are released after their last use.
#include <algorithm>
#include <cstdlib>
#include <new>

#include "exec/exec_graph.h"
#include "kernels/kernel.h"

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
  }
  return Status::Ok();
}

Result<std::vector<Tensor>> Execute(const ExecGraph& g, const std::vector<Tensor>& inputs) {
  const size_t n = g.value_names.size();
  std::vector<Tensor> values(n);
  // One arena per run (runs may overlap in threads): planned intermediates live in it.
  std::shared_ptr<void> arena;
  if (g.arena_bytes > 0) {
    void* p = std::aligned_alloc(64, static_cast<size_t>((g.arena_bytes + 63) / 64 * 64));
    if (!p)
      return InvalidArgument("cannot allocate the " + std::to_string(g.arena_bytes) +
                             "-byte arena");
    arena = std::shared_ptr<void>(p, std::free);
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
  for (size_t v = 0; v < n; ++v) keep[v] = keep[v] || !g.constants[v].empty();

  for (const auto& op : g.ops) {
    std::vector<const Tensor*> in;
    in.reserve(op.inputs.size());
    for (int v : op.inputs) {
      if (v >= 0 && values[v].empty()) {
        return InvalidArgument("node '" + op.name + "' (" + op.op_type + "): input '" +
                               g.value_names[v] +
                               "' has no value (a graph input missing from the call?)");
      }
      in.push_back(v >= 0 ? &values[v] : nullptr);
    }
    std::vector<Tensor> out(op.outputs.size());
    KernelContext ctx(op, std::move(in), &out);
    if (arena) ctx.UseArena(arena, &g.arena_offset, &g.arena_size);
    Status s;
    try {
      s = op.kernel(ctx);
    } catch (const std::bad_alloc&) {
      s = InvalidArgument("out of memory allocating an output (shape too large?)");
    } catch (const std::exception& e) {
      s = InvalidArgument(std::string("kernel failed: ") + e.what());
    }
    if (!s.ok()) return s.WithContext("node '" + op.name + "' (" + op.op_type + ")");
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      if (op.outputs[i] >= 0) values[op.outputs[i]] = std::move(out[i]);
    }
    for (int v : op.inputs) {
      if (v >= 0 && --reads[v] == 0 && !keep[v]) values[v] = Tensor();
    }
  }
  std::vector<Tensor> result;
  for (int v : g.outputs) {
    if (values[v].empty())
      return InvalidGraph("output '" + g.value_names[v] + "' was not produced");
    result.push_back(values[v]);
  }
  return result;
}

}  // namespace ortc::exec
