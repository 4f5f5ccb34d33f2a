// The C API: thin wrappers over Session and Tensor that never let an exception cross.
#include "ortc/ortc_c.h"

#include <memory>
#include <string>

#include "c_api_types.h"
#include "context_binary_format.h"
#include "ortc/runtime.h"

// The codes are the C++ ones, numbered alike: a C caller can switch on either.
static_assert(static_cast<int>(ortc::StatusCode::kInvalidArgument) == ORTC_INVALID_ARGUMENT &&
              static_cast<int>(ortc::StatusCode::kNoSuchFile) == ORTC_NO_SUCHFILE &&
              static_cast<int>(ortc::StatusCode::kInvalidGraph) == ORTC_INVALID_GRAPH &&
              static_cast<int>(ortc::StatusCode::kNotImplemented) == ORTC_NOT_IMPLEMENTED &&
              static_cast<int>(ortc::StatusCode::kEpFail) == ORTC_EP_FAIL &&
              static_cast<int>(ortc::StatusCode::kModelRequiresCompilation) ==
                  ORTC_MODEL_REQUIRES_COMPILATION &&
              static_cast<int>(ortc::StatusCode::kIoError) == ORTC_IO_ERROR &&
              static_cast<int>(ortc::StatusCode::kOutOfMemory) == ORTC_OUT_OF_MEMORY);

namespace {

using ortc::c_api::Invalid;
using ortc::c_api::Thrown;
using ortc::c_api::ToC;

const ortc::TensorInfo* InfoAt(const std::vector<ortc::TensorInfo>& infos, size_t i) {
  return i < infos.size() ? &infos[i] : nullptr;
}

// Creates a session by `make`, never letting an exception out.
template <typename Make>
OrtcStatus* CreateSession(const char* what, OrtcSession** out, Make make) {
  if (!out) return Invalid(std::string(what) + ": NULL argument");
  *out = nullptr;
  try {
    auto s = make();
    if (!s.ok()) return ToC(s.status());
    *out = new OrtcSession{std::move(s).value()};
    return nullptr;
  } catch (const std::exception& e) {
    return Thrown(std::string(what), e);
  }
}

const ortc::SessionOptions& OptionsOf(const OrtcSessionOptions* o) {
  static const ortc::SessionOptions kDefaults;
  return o ? o->options : kDefaults;
}

}  // namespace

extern "C" {

const char* ortc_version(void) {
  return ORTC_VERSION_STRING;
}
uint32_t ortc_api_version(void) {
  return ORTC_C_API_VERSION;
}
const char* ortc_format_version(void) {
  static const std::string v =
      std::to_string(ortc::format::kFormatMajor) + "." + std::to_string(ortc::format::kFormatMinor);
  return v.c_str();
}

OrtcStatus* ortc_session_options_create(OrtcSessionOptions** out) {
  if (!out) return Invalid("ortc_session_options_create: NULL argument");
  try {
    *out = new OrtcSessionOptions{};
    return nullptr;
  } catch (const std::exception& e) {
    *out = nullptr;
    return Thrown("ortc_session_options_create", e);
  }
}
void ortc_session_options_release(OrtcSessionOptions* o) {
  delete o;
}
OrtcStatus* ortc_session_options_set_intra_op_threads(OrtcSessionOptions* o, int threads) {
  if (!o || threads < 0)
    return Invalid("ortc_session_options_set_intra_op_threads: NULL options or threads < 0");
  o->options.intra_op_threads = threads;
  return nullptr;
}
OrtcStatus* ortc_session_options_set_policy(OrtcSessionOptions* o, OrtcVerdictPolicy policy) {
  if (!o ||
      (policy != ORTC_POLICY_ALLOW_PREFER_RECOMPILATION && policy != ORTC_POLICY_REQUIRE_OPTIMAL))
    return Invalid("ortc_session_options_set_policy: NULL options or unknown policy");
  o->options.policy = policy == ORTC_POLICY_REQUIRE_OPTIMAL
                          ? ortc::VerdictPolicy::kRequireOptimal
                          : ortc::VerdictPolicy::kAllowPreferRecompilation;
  return nullptr;
}
OrtcStatus* ortc_session_options_set_device_json(OrtcSessionOptions* o, const char* json) {
  if (!o) return Invalid("ortc_session_options_set_device_json: NULL options");
  try {
    if (!json) {
      o->device.reset();
      o->options.device = nullptr;
      return nullptr;
    }
    auto d = ortc::DeviceDescription::FromJson(json);
    if (!d.ok()) return ToC(d.status());
    o->device = std::make_unique<ortc::DeviceDescription>(std::move(d).value());
    o->options.device = o->device.get();
    return nullptr;
  } catch (const std::exception& e) {
    return Thrown("ortc_session_options_set_device_json", e);
  }
}
OrtcStatus* ortc_session_options_set_context_file_path(OrtcSessionOptions* o, const char* path) {
  if (!o || !path) return Invalid("ortc_session_options_set_context_file_path: NULL argument");
  o->options.context_file_path = path;
  return nullptr;
}
OrtcStatus* ortc_session_options_set_provider_option(OrtcSessionOptions* o, const char* backend,
                                                     const char* key, const char* value) {
  if (!o || !backend || !key || !value)
    return Invalid("ortc_session_options_set_provider_option: NULL argument");
  o->options.provider_options[backend][key] = value;
  return nullptr;
}
OrtcStatus* ortc_session_options_enable_profiling(OrtcSessionOptions* o, int enable) {
  if (!o) return Invalid("ortc_session_options_enable_profiling: NULL options");
  o->options.enable_profiling = enable != 0;
  return nullptr;
}

OrtcStatus* ortc_session_create_with_options(const char* model_path,
                                             const OrtcSessionOptions* options, OrtcSession** out) {
  if (!model_path) return Invalid("ortc_session_create_with_options: NULL argument");
  return CreateSession("ortc_session_create_with_options", out,
                       [&] { return ortc::Session::Create(model_path, OptionsOf(options)); });
}

OrtcStatus* ortc_session_create_from_buffer(const void* data, size_t size,
                                            const OrtcSessionOptions* options, OrtcSession** out) {
  if (!data && size) return Invalid("ortc_session_create_from_buffer: NULL data");
  return CreateSession("ortc_session_create_from_buffer", out, [&] {
    return ortc::Session::CreateFromBuffer({static_cast<const std::byte*>(data), size},
                                           OptionsOf(options));
  });
}

OrtcStatus* ortc_session_end_profiling(const OrtcSession* s, const char* path) {
  if (!s || !path) return Invalid("ortc_session_end_profiling: NULL argument");
  try {
    return ToC(s->session->EndProfiling(path));
  } catch (const std::exception& e) {
    return Thrown("ortc_session_end_profiling", e);
  }
}

int32_t ortc_session_input_dtype(const OrtcSession* s, size_t i) {
  const auto* info = s ? InfoAt(s->session->inputs(), i) : nullptr;
  return info ? static_cast<int32_t>(info->dtype) : 0;
}
size_t ortc_session_input_rank(const OrtcSession* s, size_t i) {
  const auto* info = s ? InfoAt(s->session->inputs(), i) : nullptr;
  return info ? info->shape.size() : 0;
}
const int64_t* ortc_session_input_shape(const OrtcSession* s, size_t i) {
  const auto* info = s ? InfoAt(s->session->inputs(), i) : nullptr;
  return info ? info->shape.data() : nullptr;
}
int32_t ortc_session_output_dtype(const OrtcSession* s, size_t i) {
  const auto* info = s ? InfoAt(s->session->outputs(), i) : nullptr;
  return info ? static_cast<int32_t>(info->dtype) : 0;
}
size_t ortc_session_output_rank(const OrtcSession* s, size_t i) {
  const auto* info = s ? InfoAt(s->session->outputs(), i) : nullptr;
  return info ? info->shape.size() : 0;
}
const int64_t* ortc_session_output_shape(const OrtcSession* s, size_t i) {
  const auto* info = s ? InfoAt(s->session->outputs(), i) : nullptr;
  return info ? info->shape.data() : nullptr;
}

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
  if (!model_path) {
    if (out) *out = nullptr;
    return Invalid("ortc_session_create: NULL argument");
  }
  return CreateSession("ortc_session_create", out,
                       [&] { return ortc::Session::Create(model_path); });
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
  return ortc_session_run_outputs(s, names, inputs, n, nullptr, 0, outputs);
}

OrtcStatus* ortc_session_run_outputs(const OrtcSession* s, const char* const* names,
                                     const OrtcTensorView* inputs, size_t n,
                                     const char* const* output_names, size_t n_outputs,
                                     OrtcTensor** outputs) {
  if (!s || !outputs || (n && (!names || !inputs)) || (n_outputs && !output_names))
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
    std::vector<std::string> wanted;
    for (size_t i = 0; i < n_outputs; ++i) {
      if (!output_names[i])
        return Invalid("ortc_session_run: output name " + std::to_string(i) + " is NULL");
      wanted.push_back(output_names[i]);
    }
    auto r = s->session->Run(feeds, wanted);
    if (!r.ok()) return ToC(r.status());
    for (size_t i = 0; i < r->size(); ++i) outputs[i] = new OrtcTensor{(*r)[i]};
    return nullptr;
  } catch (const std::exception& e) {
    return Thrown("ortc_session_run", e);
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
    return Thrown("ortc_session_run_bound", e);
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
