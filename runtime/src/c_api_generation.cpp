// The C API's device memory and generation calls: thin wrappers over Session::AllocateDevice,
// Session::CopyToHost, Session::CopyBytes and GenerateGreedy that never let an exception cross.
#include <climits>
#include <string>
#include <vector>

#include "c_api_types.h"
#include "ortc/generate.h"

using ortc::c_api::Invalid;
using ortc::c_api::Thrown;
using ortc::c_api::ToC;

namespace {

const char* DeviceOf(const std::vector<ortc::TensorInfo>& infos, size_t i) {
  return i < infos.size() ? infos[i].device.c_str() : nullptr;
}

}  // namespace

extern "C" {

const char* ortc_session_input_device(const OrtcSession* s, size_t i) {
  return s ? DeviceOf(s->session->inputs(), i) : nullptr;
}

const char* ortc_session_output_device(const OrtcSession* s, size_t i) {
  return s ? DeviceOf(s->session->outputs(), i) : nullptr;
}

OrtcStatus* ortc_session_allocate_device(const OrtcSession* s, const char* name, OrtcTensor** out) {
  if (out) *out = nullptr;
  if (!s || !name || !out) return Invalid("ortc_session_allocate_device: NULL argument");
  try {
    auto t = s->session->AllocateDevice(name);
    if (!t.ok()) return ToC(t.status());
    *out = new OrtcTensor{std::move(t).value()};
    return nullptr;
  } catch (const std::exception& e) {
    return Thrown("ortc_session_allocate_device", e);
  }
}

OrtcStatus* ortc_session_copy_to_host(const OrtcSession* s, const OrtcTensor* device,
                                      OrtcTensor** out) {
  if (out) *out = nullptr;
  if (!s || !device || !out) return Invalid("ortc_session_copy_to_host: NULL argument");
  try {
    auto t = s->session->CopyToHost(device->tensor);
    if (!t.ok()) return ToC(t.status());
    *out = new OrtcTensor{std::move(t).value()};
    return nullptr;
  } catch (const std::exception& e) {
    return Thrown("ortc_session_copy_to_host", e);
  }
}

OrtcStatus* ortc_session_copy_bytes(const OrtcSession* s, OrtcTensor* dst, size_t dst_offset,
                                    const OrtcTensor* src, size_t src_offset, size_t bytes) {
  if (!s || !dst || !src) return Invalid("ortc_session_copy_bytes: NULL argument");
  try {
    return ToC(s->session->CopyBytes(&dst->tensor, dst_offset, src->tensor, src_offset, bytes));
  } catch (const std::exception& e) {
    return Thrown("ortc_session_copy_bytes", e);
  }
}

OrtcStatus* ortc_generate_greedy(const OrtcSession* prefill, const OrtcSession* decode,
                                 const int64_t* prompt, size_t prompt_length,
                                 const int64_t* stop_tokens, size_t n_stop_tokens, int64_t* tokens,
                                 size_t max_new_tokens, OrtcGenerationStats* stats) {
  if (stats) *stats = OrtcGenerationStats{};
  if (!prefill || !decode || (prompt_length && !prompt) || (n_stop_tokens && !stop_tokens) ||
      (max_new_tokens && !tokens))
    return Invalid("ortc_generate_greedy: NULL argument");
  if (max_new_tokens > static_cast<size_t>(INT_MAX))
    return Invalid("ortc_generate_greedy: max_new_tokens is too large");
  try {
    ortc::GenerationOptions options;
    options.max_new_tokens = static_cast<int>(max_new_tokens);
    options.stop_tokens.assign(stop_tokens, stop_tokens + n_stop_tokens);
    auto r = ortc::GenerateGreedy(*prefill->session, *decode->session,
                                  std::vector<int64_t>(prompt, prompt + prompt_length), options);
    if (!r.ok()) return ToC(r.status());
    for (size_t i = 0; i < r->tokens.size() && i < max_new_tokens; ++i) tokens[i] = r->tokens[i];
    if (stats) {
      stats->n_tokens = r->tokens.size();
      stats->time_to_first_token_ms = r->prefill_seconds * 1e3;
      stats->decode_ms = r->decode_seconds * 1e3;
      stats->decode_steps = r->decode_steps;
      stats->kv_cache_on_device = r->cache_on_device ? 1 : 0;
    }
    return nullptr;
  } catch (const std::exception& e) {
    return Thrown("ortc_generate_greedy", e);
  }
}

}  // extern "C"
