// One fused node of ONNX Runtime's graph, run by an ortc Session: the OrtNodeComputeInfo the
// plugin returns from Compile. The session holds one EPContext node (and through the runtime's
// shared mapping, the binary); ONNX Runtime's input and output tensors are passed by name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ort_api.h"
#include "ortc/runtime.h"

namespace ortc::ort_ep {

class SessionKernel : public OrtNodeComputeInfo {
 public:
  // `inputs` / `outputs`: the fused node's value names, in ONNX Runtime's order. A null
  // session makes a kernel that only fails (compile-only sessions never run).
  SessionKernel(std::unique_ptr<Session> session, std::vector<std::string> inputs,
                std::vector<std::string> outputs, std::string node_name);
  ~SessionKernel();

 private:
  static OrtStatus* ORT_API_CALL CreateStateImpl(OrtNodeComputeInfo* self,
                                                 OrtNodeComputeContext* ctx, void** state) noexcept;
  static OrtStatus* ORT_API_CALL ComputeImpl(OrtNodeComputeInfo* self, void* state,
                                             OrtKernelContext* kernel_context) noexcept;
  static void ORT_API_CALL ReleaseStateImpl(OrtNodeComputeInfo* self, void* state) noexcept;
  Status Run(OrtKernelContext* kernel_context) const;

  std::unique_ptr<Session> session_;
  std::vector<std::string> inputs_, outputs_;
  std::vector<bool> session_takes_input_;  // per fused-node input
  std::string node_name_;
};

}  // namespace ortc::ort_ep
