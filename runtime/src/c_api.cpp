// The C API: thin wrappers over Session and Tensor that never let an exception cross.
#include "ortc/ortc_c.h"

#include <memory>
#include <string>

#include "ortc/runtime.h"

struct OrtcStatus {
  OrtcCode code;
  std::string message;
};
struct OrtcSession {
  std::unique_ptr<ortc::Session> session;
};
struct OrtcTensor {
  ortc::Tensor tensor;
};

namespace {

OrtcStatus* ToC(const ortc::Status& s) {
  if (s.ok()) return nullptr;
  return new OrtcStatus{static_cast<OrtcCode>(static_cast<int>(s.code())), s.ToString()};
}

OrtcStatus* Invalid(const std::string& m) {
  return ToC(ortc::InvalidArgument(m));
}

}  // namespace

extern "C" {

OrtcCode ortc_status_code(const OrtcStatus* s) {
  return s ? s->code : ORTC_OK;
}
const char* ortc_status_message(const OrtcStatus* s) {
  return s ? s->message.c_str() : "";
}
void ortc_status_release(OrtcStatus* s) {
  delete s;
}

OrtcStatus* ortc_session_create(const char* model_path, OrtcSession** out) {
  if (!model_path || !out) return Invalid("ortc_session_create: NULL argument");
  *out = nullptr;
  try {
    auto s = ortc::Session::Create(model_path);
    if (!s.ok()) return ToC(s.status());
    *out = new OrtcSession{std::move(s).value()};
    return nullptr;
  } catch (const std::exception& e) {
    return Invalid(std::string("ortc_session_create: ") + e.what());
  }
}

void ortc_session_release(OrtcSession* s) {
  delete s;
}

size_t ortc_session_input_count(const OrtcSession* s) {
  return s ? s->session->inputs().size() : 0;
}
const char* ortc_session_input_name(const OrtcSession* s, size_t i) {
  return s && i < s->session->inputs().size() ? s->session->inputs()[i].name.c_str() : nullptr;
}
size_t ortc_session_output_count(const OrtcSession* s) {
  return s ? s->session->outputs().size() : 0;
}
const char* ortc_session_output_name(const OrtcSession* s, size_t i) {
  return s && i < s->session->outputs().size() ? s->session->outputs()[i].name.c_str() : nullptr;
}

OrtcStatus* ortc_session_run(const OrtcSession* s, const char* const* names,
                             const OrtcTensorView* inputs, size_t n, OrtcTensor** outputs) {
  if (!s || !outputs || (n && (!names || !inputs)))
    return Invalid("ortc_session_run: NULL argument");
  try {
    std::vector<std::pair<std::string, ortc::Tensor>> feeds;
    for (size_t i = 0; i < n; ++i) {
      const auto& v = inputs[i];
      const auto dtype = static_cast<ortc::DataType>(v.dtype);
      if (!names[i] || (v.rank && !v.shape) || ortc::ElementSize(dtype) == 0) {
        return Invalid("ortc_session_run: input " + std::to_string(i) + " is malformed");
      }
      std::vector<int64_t> shape(v.shape, v.shape + v.rank);
      ortc::Tensor t = ortc::Tensor::Borrow(dtype, shape, v.data, nullptr);
      if (t.byte_size() && !v.data)
        return Invalid("ortc_session_run: input " + std::to_string(i) + " has no data");
      feeds.push_back({names[i], t});
    }
    auto r = s->session->Run(feeds);
    if (!r.ok()) return ToC(r.status());
    for (size_t i = 0; i < r->size(); ++i) outputs[i] = new OrtcTensor{(*r)[i]};
    return nullptr;
  } catch (const std::exception& e) {
    return Invalid(std::string("ortc_session_run: ") + e.what());
  }
}

OrtcStatus* ortc_session_run_bound(const OrtcSession* s, const char* const* in_names,
                                   const OrtcBufferView* inputs, size_t n_in,
                                   const char* const* out_names, const OrtcBufferView* outputs,
                                   size_t n_out) {
  if (!s || (n_in && (!in_names || !inputs)) || (n_out && (!out_names || !outputs)))
    return Invalid("ortc_session_run_bound: NULL argument");
  try {
    auto view = [](const OrtcBufferView& v, const char* name, size_t i,
                   const char* what) -> ortc::Result<ortc::Tensor> {
      const auto dtype = static_cast<ortc::DataType>(v.dtype);
      if (!name || (v.rank && !v.shape) || ortc::ElementSize(dtype) == 0 ||
          (v.memory != ORTC_MEMORY_CPU && v.memory != ORTC_MEMORY_CUDA))
        return ortc::InvalidArgument(std::string("ortc_session_run_bound: ") + what + " " +
                                     std::to_string(i) + " is malformed");
      std::vector<int64_t> shape(v.shape, v.shape + v.rank);
      if (v.memory == ORTC_MEMORY_CUDA)
        return ortc::Tensor::OnDevice(dtype, shape, v.data, ortc::MemoryLocation::kCudaDevice);
      return ortc::Tensor::WrapWritable(dtype, shape, v.data, nullptr);
    };
    std::vector<std::pair<std::string, ortc::Tensor>> feeds, bound;
    for (size_t i = 0; i < n_in; ++i) {
      auto t = view(inputs[i], in_names[i], i, "input");
      if (!t.ok()) return ToC(t.status());
      if (t->byte_size() && !inputs[i].data)
        return Invalid("ortc_session_run_bound: input " + std::to_string(i) + " has no data");
      feeds.push_back({in_names[i], *t});
    }
    for (size_t i = 0; i < n_out; ++i) {
      auto t = view(outputs[i], out_names[i], i, "output");
      if (!t.ok()) return ToC(t.status());
      bound.push_back({out_names[i], *t});
    }
    return ToC(s->session->RunBound(feeds, bound).status());
  } catch (const std::exception& e) {
    return Invalid(std::string("ortc_session_run_bound: ") + e.what());
  }
}

int32_t ortc_tensor_dtype(const OrtcTensor* t) {
  return t ? static_cast<int32_t>(t->tensor.dtype()) : 0;
}
size_t ortc_tensor_rank(const OrtcTensor* t) {
  return t ? t->tensor.shape().size() : 0;
}
const int64_t* ortc_tensor_shape(const OrtcTensor* t) {
  return t ? t->tensor.shape().data() : nullptr;
}
const void* ortc_tensor_data(const OrtcTensor* t) {
  return t ? t->tensor.raw() : nullptr;
}
size_t ortc_tensor_byte_size(const OrtcTensor* t) {
  return t ? t->tensor.byte_size() : 0;
}
void ortc_tensor_release(OrtcTensor* t) {
  delete t;
}

}  // extern "C"
