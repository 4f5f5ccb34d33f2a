#include "session_kernel.h"

#include <cstring>
#include <set>

namespace ortc::ort_ep {

namespace {
// Input tensors are borrowed from ONNX Runtime for the duration of one Compute call.
const std::shared_ptr<const void> kBorrowed(static_cast<const void*>(&kBorrowed),
                                            [](const void*) {});
}  // namespace

SessionKernel::SessionKernel(std::unique_ptr<Session> session, std::vector<std::string> inputs,
                             std::vector<std::string> outputs, std::string node_name)
    : OrtNodeComputeInfo{},
      session_(std::move(session)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      node_name_(std::move(node_name)) {
  ort_version_supported = ORT_API_VERSION;
  CreateState = CreateStateImpl;
  Compute = ComputeImpl;
  ReleaseState = ReleaseStateImpl;
  std::set<std::string> taken;
  if (session_)
    for (const auto& in : session_->inputs()) taken.insert(in.name);
  for (const auto& name : inputs_) session_takes_input_.push_back(taken.count(name) > 0);
}

SessionKernel::~SessionKernel() = default;

OrtStatus* ORT_API_CALL SessionKernel::CreateStateImpl(OrtNodeComputeInfo* self,
                                                       OrtNodeComputeContext*,
                                                       void** state) noexcept {
  *state = self;  // the session is the state; it supports concurrent Run calls
  return nullptr;
}

void ORT_API_CALL SessionKernel::ReleaseStateImpl(OrtNodeComputeInfo*, void*) noexcept {}

OrtStatus* ORT_API_CALL SessionKernel::ComputeImpl(OrtNodeComputeInfo* self, void*,
                                                   OrtKernelContext* kernel_context) noexcept {
  return Guard([&] { return static_cast<SessionKernel*>(self)->Run(kernel_context); });
}

Status SessionKernel::Run(OrtKernelContext* kernel_context) const {
  if (!session_) {
    return Status(StatusCode::kEpFail, "node '" + node_name_ +
                                           "' belongs to a compile-only session and cannot run; "
                                           "load the compiled model in a new session");
  }
  Ort::KernelContext ctx(kernel_context);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs_.size() && i < ctx.GetInputCount(); ++i) {
    if (!session_takes_input_[i]) continue;
    Ort::ConstValue v = ctx.GetInput(i);
    if (!v) continue;  // an omitted optional input
    auto info = v.GetTensorTypeAndShapeInfo();
    const auto dtype = static_cast<DataType>(info.GetElementType());
    auto shape = info.GetShape();
    if (dtype == DataType::kString) {
      Tensor t = Tensor::Allocate(dtype, shape);
      for (size_t k = 0; k < info.GetElementCount(); ++k)
        t.mutable_strings()[k] = v.GetStringTensorElement(k);
      feeds.emplace_back(inputs_[i], std::move(t));
    } else {
      feeds.emplace_back(inputs_[i],
                         Tensor::Borrow(dtype, std::move(shape), v.GetTensorRawData(), kBorrowed));
    }
  }
  auto results = session_->Run(feeds, outputs_);
  if (!results.ok()) return results.status().WithContext("node '" + node_name_ + "'");
  for (size_t j = 0; j < outputs_.size(); ++j) {
    const Tensor& t = (*results)[j];
    Ort::UnownedValue out = ctx.GetOutput(j, t.shape().data(), t.shape().size());
    if (t.dtype() == DataType::kString) {
      std::vector<const char*> ptrs;
      for (const auto& s : t.strings()) ptrs.push_back(s.c_str());
      out.FillStringTensor(ptrs.data(), ptrs.size());
      continue;
    }
    const auto want = static_cast<DataType>(out.GetTensorTypeAndShapeInfo().GetElementType());
    if (want != t.dtype()) {
      return InvalidGraph("node '" + node_name_ + "' output '" + outputs_[j] + "' is " +
                          DataTypeName(t.dtype()) + " but ONNX Runtime expects " +
                          DataTypeName(want));
    }
    if (t.byte_size()) std::memcpy(out.GetTensorMutableRawData(), t.raw(), t.byte_size());
  }
  return Status::Ok();
}

}  // namespace ortc::ort_ep
