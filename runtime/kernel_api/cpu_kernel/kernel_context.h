// What a CPU kernel sees: its op (attributes, version), its input tensors and the outputs it
// must fill; and how the executor finds kernels. The kernels are the CPU backend's runtime side
// (backends/cpu/runtime/kernels/, registered by op type in registry.cpp there), which defines
// the lookup functions at the end of this file: the executor names no kernel.
#pragma once

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/shape_limit.h"
#include "cpu_kernel/exec_graph.h"

namespace ortc::exec {

// Thrown by KernelContext when a node lacks an input or output its kernel needs: the graph (or
// compiled program) is malformed, and the executor reports INVALID_GRAPH.
struct MalformedNode : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown by KernelContext when an output would be larger than the session allows.
struct TensorTooLarge : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class KernelContext {
 public:
  KernelContext(const ExecOp& op, std::vector<const Tensor*> inputs, std::vector<Tensor>* outputs)
      : op_(op), inputs_(std::move(inputs)), outputs_(outputs) {}
  const ExecOp& op() const { return op_; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_->size(); }
  // nullptr for an omitted optional input.
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // A required input. A node without it (a malformed graph or program) is an error, thrown and
  // turned into the run's Status by the executor, never a null dereference.
  const Tensor& in(size_t i) const {
    if (i >= inputs_.size() || !inputs_[i]) MissingInput(i);
    return *inputs_[i];
  }
  bool has_input(size_t i) const { return input(i) != nullptr; }
  bool wants_output(size_t i) const { return i < op_.outputs.size() && op_.outputs[i] >= 0; }
  Tensor& Output(size_t i, DataType dtype, std::vector<int64_t> shape) {
    if (i >= outputs_->size()) MissingOutput(i);
    CheckSize(i, dtype, shape);
    if (Planned(i, dtype, shape)) {
      std::memset((*outputs_)[i].mutable_raw(), 0, (*outputs_)[i].byte_size());
      return (*outputs_)[i];
    }
    (*outputs_)[i] = Tensor::Allocate(dtype, std::move(shape));
    return (*outputs_)[i];
  }
  // An output the kernel overwrites completely: not zero-filled first.
  Tensor& OutputUninit(size_t i, DataType dtype, std::vector<int64_t> shape) {
    if (i >= outputs_->size()) MissingOutput(i);
    CheckSize(i, dtype, shape);
    if (Planned(i, dtype, shape)) return (*outputs_)[i];
    (*outputs_)[i] = Tensor::AllocateUninitialized(dtype, std::move(shape));
    return (*outputs_)[i];
  }
  // Outputs with a slot in the static memory plan are placed in the run's arena.
  void UseArena(std::shared_ptr<void> arena, const std::vector<int64_t>* offsets,
                const std::vector<int64_t>* sizes) {
    arena_ = std::move(arena);
    offsets_ = offsets;
    sizes_ = sizes;
  }
  void SetOutput(size_t i, Tensor t) {
    if (i >= outputs_->size()) MissingOutput(i);
    (*outputs_)[i] = std::move(t);
  }
  // The run's profiler (nullptr when the session does not profile) and when this op started.
  void UseProfiler(Profiler* p, double start_us) {
    profiler_ = p;
    start_us_ = start_us;
  }
  Profiler* profiler() const { return profiler_; }
  double start_us() const { return start_us_; }
  // Caller memory bound to the run's values (per value id; empty tensors where unbound).
  void UseBound(const std::vector<Tensor>* by_value) { bound_ = by_value; }
  // The caller's tensor that output i must be written into, or nullptr.
  const Tensor* BoundOutput(size_t i) const {
    if (!bound_ || i >= op_.outputs.size() || op_.outputs[i] < 0) return nullptr;
    const Tensor& t = (*bound_)[op_.outputs[i]];
    return t.empty() ? nullptr : &t;
  }
  Status Error(const std::string& what) const { return InvalidArgument(what); }
  // The largest output this op may allocate (the session's max_tensor_bytes; 0: no limit).
  void LimitOutputBytes(uint64_t bytes) { max_output_bytes_ = bytes; }
  // Throws TensorTooLarge when output i of that dtype and shape would exceed the limit. Output()
  // checks this itself; kernels that build a scratch copy of an output first check it before.
  void CheckSize(size_t i, DataType dtype, const std::vector<int64_t>& shape) const;

 private:
  [[noreturn]] void MissingInput(size_t i) const;
  [[noreturn]] void MissingOutput(size_t i) const;
  // Places output i in its arena slot when it has one and the tensor fits it.
  bool Planned(size_t i, DataType dtype, const std::vector<int64_t>& shape) {
    if (!arena_ || i >= op_.outputs.size() || op_.outputs[i] < 0) return false;
    const int v = op_.outputs[i];
    const int64_t offset = (*offsets_)[v];
    // A shape past the limit is left to Allocate, which refuses it; within it, bytes cannot
    // overflow.
    if (offset < 0 || dtype == DataType::kString || !ShapeWithinLimit(shape)) return false;
    int64_t bytes = static_cast<int64_t>(ElementSize(dtype));
    for (int64_t d : shape) bytes *= d;
    if (bytes > (*sizes_)[v]) return false;
    (*outputs_)[i] =
        Tensor::WrapWritable(dtype, shape, static_cast<char*>(arena_.get()) + offset, arena_);
    return true;
  }

  Profiler* profiler_ = nullptr;
  double start_us_ = 0;
  uint64_t max_output_bytes_ = 0;
  const std::vector<Tensor>* bound_ = nullptr;
  std::shared_ptr<void> arena_;
  const std::vector<int64_t>* offsets_ = nullptr;
  const std::vector<int64_t>* sizes_ = nullptr;
  const ExecOp& op_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor>* outputs_;
};

// The CPU kernel library's lookup, defined by it (backends/cpu/runtime/kernels/registry.cpp).
// Returns the kernel for an op of the default domain, or nullptr.
KernelFn FindKernel(const std::string& domain, const std::string& op_type);
std::vector<std::string> KernelOps();
// The cache the op's kernel keeps between runs, or nullptr when it keeps none; fails when the
// op's prepared data cannot be used by this runtime.
Result<std::shared_ptr<KernelCache>> MakeKernelCache(const ExecOp& op, const ExecGraph& graph);

}  // namespace ortc::exec
