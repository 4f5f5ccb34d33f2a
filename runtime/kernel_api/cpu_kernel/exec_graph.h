// The runtime's executable form of a model: ops in topological order over numbered values,
// constants (initializers, or weights borrowed from a mapped context binary) and I/O. Plain
// ONNX nodes and the ops of CPU programs from context binaries both become ExecOps.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ortc/status.h"
#include "ortc/tensor.h"

namespace ortc::exec {

struct Attribute {
  enum class Kind {
    kInt,
    kFloat,
    kString,
    kInts,
    kFloats,
    kStrings,
    kTensor,
    kGraph
  } kind = Kind::kInt;
  int64_t i = 0;
  float f = 0.f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  Tensor tensor;
  // A subgraph compiled into a nested program: its inputs are the subgraph's own, then one per
  // outer value it reads; captures[k] is the index in the op's inputs feeding nested input
  // (formal + k).
  std::shared_ptr<const struct ExecGraph> program;
  std::vector<int> captures;
};

struct ExecOp;
class KernelContext;

// What a kernel keeps between runs of one op (prepared primitives, reordered weights). Made when
// kernels are bound; the kernel guards it itself, since runs may be concurrent.
struct KernelCache {
  virtual ~KernelCache() = default;
};
using KernelFn = Status (*)(KernelContext&);

struct ExecOp {
  std::string name, op_type, domain;
  int version = 0;                   // op definition version (or the model's opset for the domain)
  std::vector<int> inputs, outputs;  // value ids, -1 when omitted
  std::map<std::string, Attribute> attrs;
  // Ops with nested programs: inputs from this index on are outer values those programs read
  // (-1: all inputs are the op's own).
  int explicit_inputs = -1;
  KernelFn kernel = nullptr;
  // Set by the loader for ops it binds itself (a plugin graph): what their kernel needs.
  std::shared_ptr<const void> state;
  std::shared_ptr<KernelCache> cache;  // see KernelCache; nullptr for most kernels

  bool Has(const std::string& n) const { return attrs.count(n) > 0; }
  int64_t Int(const std::string& n, int64_t fallback) const;
  float Float(const std::string& n, float fallback) const;
  std::string String(const std::string& n, const std::string& fallback) const;
  std::vector<int64_t> Ints(const std::string& n, std::vector<int64_t> fallback = {}) const;
  std::vector<float> Floats(const std::string& n) const;
};

struct ValueInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;  // -1 where dynamic
  bool rank_known = false;
};

struct ExecGraph {
  std::vector<std::string> value_names;
  std::vector<Tensor> constants;  // per value; empty() when not a constant
  std::vector<ExecOp> ops;
  std::vector<int> inputs, outputs;
  std::vector<ValueInfo> input_infos, output_infos;
  std::vector<std::shared_ptr<const void>> keep_alive;  // mapped binaries the constants borrow from
  // Static memory plan from compiled programs: per value, its offset in the run's arena and
  // the bytes planned for it (-1 when the value is allocated at run time).
  std::vector<int64_t> arena_offset, arena_size;
  int64_t arena_bytes = 0;
  uint64_t max_tensor_bytes = 0;  // the session's limit on one op output (0: none)

  int AddValue(const std::string& name);
  int FindValue(const std::string& name) const;
  std::map<std::string, int> index;
};

// Binds each op without a kernel to its CPU kernel; fails naming the first op without one.
Status BindKernels(ExecGraph* graph);

class Profiler;

// Runs the graph on the given inputs (in ExecGraph::inputs order). Thread-safe: all state of
// a run lives in this call. With a profiler, every op (and every step a backend reports) adds
// an event. `bound` (per graph output, empty tensors where unbound) gives caller memory, host
// or device, that receives an output: backend graphs write device-bound outputs directly, CPU
// results are copied into host-bound ones. Device tensors never reach a CPU kernel: an op that
// would read one fails with a message naming it.
Result<std::vector<Tensor>> Execute(const ExecGraph& graph, const std::vector<Tensor>& inputs,
                                    Profiler* profiler = nullptr,
                                    const std::vector<Tensor>* bound = nullptr);

}  // namespace ortc::exec
