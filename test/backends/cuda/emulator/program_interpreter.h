// Executes one graph of a compiled CUDA context binary on the host: buffers in one host arena,
// generated kernels through the host shim, library calls through the host references.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cuda_program_generated.h"
#include "format/context_binary_reader.h"
#include "host_module.h"
#include "ortc/status.h"
#include "ortc/tensor.h"

namespace ortc::test::cuda {

struct StepCounts {
  int launches = 0, convs = 0, gemms = 0, copies = 0;
};

// Caller memory a run uses as a program input or output buffer itself (nullptr entries: the
// interpreter's own copy), as the CUDA runtime binds device-resident tensors (io_binding.h): an
// input and an output at the same bytes are then read and written where they lie.
struct BoundMemory {
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
};

// What running one program needs, wherever it comes from (a context binary read by the test, or
// the load info a backend plugin receives): `keep_alive` holds the memory the views point into.
struct ProgramParts {
  std::string graph;  // for messages
  std::string_view program;
  std::vector<std::string_view> weights;  // per weight slot
  std::string_view source;                // the source artefact (the text NVRTC compiled)
  std::shared_ptr<const void> keep_alive;
};

class ProgramInterpreter {
 public:
  // Verifies the graph's program and compiles its kernel source (the graph's source artefact,
  // the text NVRTC compiled) as host C++.
  static Result<ProgramInterpreter> Load(std::shared_ptr<const format::ContextBinary> binary,
                                         const std::string& graph);
  static Result<ProgramInterpreter> Load(ProgramParts parts);

  // Called after each step for every buffer it wrote, with the buffer's index.
  using WriteObserver = std::function<void(int buffer, const void* data)>;

  // Runs the steps in order on host copies of `inputs` (one per program input, in order), or on
  // the memory `bound` names; returns the program outputs.
  Result<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs, StepCounts* counts,
                                  const WriteObserver& observer = {},
                                  const BoundMemory* bound = nullptr) const;

  const fb::cuda::Program& program() const { return *program_; }

 private:
  ProgramParts parts_;
  const fb::cuda::Program* program_ = nullptr;
  std::shared_ptr<HostModule> module_;
  // Per kernel name: how to launch it through the module (grid/block come from each step).
  std::map<std::string, backends::cuda::codegen::KernelSource> kernels_;
  std::map<std::string, int> first_output_;  // per kernel: its first non-const parameter
};

}  // namespace ortc::test::cuda
