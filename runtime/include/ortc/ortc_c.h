/* ortc runtime C API, for binding other languages.
 *
 * Ownership rules:
 *   - Functions that create an object (ortc_session_create, the output tensors of
 *     ortc_session_run, every non-NULL OrtcStatus) hand it to the caller, who releases it with
 *     the matching ortc_*_release function.
 *   - Strings and arrays returned by accessors are borrowed: valid while their owner lives.
 *   - Input data passed to ortc_session_run is only read during the call.
 * A function returning OrtcStatus* returns NULL on success. Nothing here aborts on bad input.
 * ortc_session_run may be called from several threads at once on one session.
 */
#ifndef ORTC_C_H_
#define ORTC_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The C API's version: raised when a declaration here changes incompatibly; additions keep it.
 * Compare ortc_api_version() (the library loaded) with ORTC_C_API_VERSION (the header built
 * against) to refuse a mismatched library. */
#define ORTC_C_API_VERSION 2

/* The error codes, equal in value and meaning to the C++ API's ortc::StatusCode. */
typedef enum {
  ORTC_OK = 0,
  ORTC_INVALID_ARGUMENT = 1,
  ORTC_NO_SUCHFILE = 2,
  ORTC_INVALID_GRAPH = 3,
  ORTC_NOT_IMPLEMENTED = 4,
  ORTC_EP_FAIL = 5,
  ORTC_MODEL_REQUIRES_COMPILATION = 6,
  ORTC_IO_ERROR = 7,
  ORTC_OUT_OF_MEMORY = 8
} OrtcCode;

typedef struct OrtcStatus OrtcStatus;
typedef struct OrtcSession OrtcSession;
typedef struct OrtcSessionOptions OrtcSessionOptions;
typedef struct OrtcTensor OrtcTensor;

/* The runtime library's version ("0.2.0"), its C API version (ORTC_C_API_VERSION it was built
 * with) and the context binary format it reads ("1.0"). */
const char* ortc_version(void);
uint32_t ortc_api_version(void);
const char* ortc_format_version(void);

/* A read-only view of caller memory. dtype is ONNX's TensorProto.DataType number. */
typedef struct {
  int32_t dtype;
  const int64_t* shape;
  size_t rank;
  const void* data;
} OrtcTensorView;

OrtcCode ortc_status_code(const OrtcStatus* status);
const char* ortc_status_message(const OrtcStatus* status);
void ortc_status_release(OrtcStatus* status);

/* Session options, all optional: create, set what differs from the defaults, pass to
 * ortc_session_create_with_options or ortc_session_create_from_buffer, release (the session keeps
 * its own copy). */
OrtcStatus* ortc_session_options_create(OrtcSessionOptions** out);
void ortc_session_options_release(OrtcSessionOptions* options);
/* Threads each run uses inside its ops; 0 (the default): one per physical core. */
OrtcStatus* ortc_session_options_set_intra_op_threads(OrtcSessionOptions* options, int threads);
typedef enum {
  ORTC_POLICY_ALLOW_PREFER_RECOMPILATION = 0, /* default: run what the gate says can run */
  ORTC_POLICY_REQUIRE_OPTIMAL = 1 /* fail with ORTC_MODEL_REQUIRES_COMPILATION instead */
} OrtcVerdictPolicy;
OrtcStatus* ortc_session_options_set_policy(OrtcSessionOptions* options, OrtcVerdictPolicy policy);
/* The device the version gate checks against, as `ortc check --print-device` writes it; NULL:
 * this machine (the default). */
OrtcStatus* ortc_session_options_set_device_json(OrtcSessionOptions* options, const char* json);
/* For ortc_session_create_from_buffer: the path the ctx model would have, so the binaries beside
 * it are found. */
OrtcStatus* ortc_session_options_set_context_file_path(OrtcSessionOptions* options,
                                                       const char* path);
/* A backend's run-time option (backends/README.md), e.g. ("cuda", "enable_cuda_graph", "0"). */
OrtcStatus* ortc_session_options_set_provider_option(OrtcSessionOptions* options,
                                                     const char* backend, const char* key,
                                                     const char* value);
/* Time every node of every run; ortc_session_end_profiling writes the trace. */
OrtcStatus* ortc_session_options_enable_profiling(OrtcSessionOptions* options, int enable);

/* model_path is a model_ctx.onnx (or a plain ONNX model). */
OrtcStatus* ortc_session_create(const char* model_path, OrtcSession** out);
/* options may be NULL (the defaults). */
OrtcStatus* ortc_session_create_with_options(const char* model_path,
                                             const OrtcSessionOptions* options, OrtcSession** out);
/* A ctx model (or plain ONNX model) in memory, read during the call only; its binaries are found
 * beside the options' context file path (embed_mode 1 models need none). */
OrtcStatus* ortc_session_create_from_buffer(const void* data, size_t size,
                                            const OrtcSessionOptions* options, OrtcSession** out);
void ortc_session_release(OrtcSession* session);
/* Writes the profile of the runs so far (Chrome trace JSON) to path. */
OrtcStatus* ortc_session_end_profiling(const OrtcSession* session, const char* path);

size_t ortc_session_input_count(const OrtcSession* session);
const char* ortc_session_input_name(const OrtcSession* session, size_t index);
size_t ortc_session_output_count(const OrtcSession* session);
const char* ortc_session_output_name(const OrtcSession* session, size_t index);
/* Element type (ONNX TensorProto.DataType number; 0 for an index out of range) and shape of an
 * input or output; a dimension of -1 is decided at run time. The shape is borrowed. */
int32_t ortc_session_input_dtype(const OrtcSession* session, size_t index);
size_t ortc_session_input_rank(const OrtcSession* session, size_t index);
const int64_t* ortc_session_input_shape(const OrtcSession* session, size_t index);
int32_t ortc_session_output_dtype(const OrtcSession* session, size_t index);
size_t ortc_session_output_rank(const OrtcSession* session, size_t index);
const int64_t* ortc_session_output_shape(const OrtcSession* session, size_t index);

/* Runs with n_inputs named inputs; fills outputs[0 .. output_count) with owned tensors. */
OrtcStatus* ortc_session_run(const OrtcSession* session, const char* const* input_names,
                             const OrtcTensorView* inputs, size_t n_inputs, OrtcTensor** outputs);
/* The same computing only the n_outputs outputs named, into outputs[0 .. n_outputs). */
OrtcStatus* ortc_session_run_outputs(const OrtcSession* session, const char* const* input_names,
                                     const OrtcTensorView* inputs, size_t n_inputs,
                                     const char* const* output_names, size_t n_outputs,
                                     OrtcTensor** outputs);

/* Where the bytes of an OrtcBufferView are. */
typedef enum { ORTC_MEMORY_CPU = 0, ORTC_MEMORY_CUDA = 1 } OrtcMemoryType;

/* Caller memory for ortc_session_run_bound: host memory, or device memory (a CUdeviceptr) that
 * a backend graph reads (an input) or writes (an output). Only read or written during the call. */
typedef struct {
  int32_t dtype;
  const int64_t* shape;
  size_t rank;
  void* data;
  OrtcMemoryType memory;
} OrtcBufferView;

/* Runs with every input and the named outputs in caller memory (like ONNX Runtime's
 * IOBinding): each output is written into its buffer, which must have the output's exact dtype
 * and shape. Outputs not named are computed and dropped. Device buffers are allowed where a
 * backend graph consumes the input or produces the output; anything else fails with a message. */
OrtcStatus* ortc_session_run_bound(const OrtcSession* session, const char* const* input_names,
                                   const OrtcBufferView* inputs, size_t n_inputs,
                                   const char* const* output_names, const OrtcBufferView* outputs,
                                   size_t n_outputs);

/* The backend ("cuda") whose compiled graph alone reads this input or writes this output, so
 * that its value may stay in that backend's device memory; "" when a CPU kernel reads or writes
 * it, NULL for an index out of range. Borrowed. */
const char* ortc_session_input_device(const OrtcSession* session, size_t index);
const char* ortc_session_output_device(const OrtcSession* session, size_t index);

/* Device memory for the input or output `name` of a session, one whose device (above) is set:
 * zero-filled, of the value's static dtype and shape. *out is an owned tensor whose
 * ortc_tensor_data is the device address: pass it to ortc_session_run_bound (this session or
 * another of the same backend) as an ORTC_MEMORY_CUDA buffer so the bytes stay on the device from
 * run to run (a KV cache); ortc_tensor_release frees the memory. */
OrtcStatus* ortc_session_allocate_device(const OrtcSession* session, const char* name,
                                         OrtcTensor** out);
/* A host copy (owned) of a tensor from ortc_session_allocate_device. */
OrtcStatus* ortc_session_copy_to_host(const OrtcSession* session, const OrtcTensor* device_tensor,
                                      OrtcTensor** out);
/* Copies `bytes` from byte src_offset of `src` to byte dst_offset of `dst` (host tensors or
 * tensors of ortc_session_allocate_device, either way or device to device), returning when the
 * bytes are there; a range past a tensor's end is an error and moves nothing. */
OrtcStatus* ortc_session_copy_bytes(const OrtcSession* session, OrtcTensor* dst, size_t dst_offset,
                                    const OrtcTensor* src, size_t src_offset, size_t bytes);

/* Greedy generation over a prefill and a decode session with a KV cache (ortc/generate.h says
 * which models fit: Hugging Face's past_* / present_* form, or ONNX Runtime GenAI's one model for
 * both steps). Writes up to max_new_tokens token ids to `tokens` (the prompt is not repeated),
 * stopping after one of the n_stop_tokens `stop_tokens`; `stats` may be NULL. A fixed-size cache
 * that compiled graphs alone read and write stays in device memory for the whole generation. */
typedef struct {
  size_t n_tokens;               /* token ids written to `tokens` */
  double time_to_first_token_ms; /* the prefill run */
  double decode_ms;              /* every decode step together */
  int32_t decode_steps;
  int32_t kv_cache_on_device; /* 1: every cache stayed in device memory between steps */
} OrtcGenerationStats;
OrtcStatus* ortc_generate_greedy(const OrtcSession* prefill, const OrtcSession* decode,
                                 const int64_t* prompt, size_t prompt_length,
                                 const int64_t* stop_tokens, size_t n_stop_tokens, int64_t* tokens,
                                 size_t max_new_tokens, OrtcGenerationStats* stats);

int32_t ortc_tensor_dtype(const OrtcTensor* tensor);
size_t ortc_tensor_rank(const OrtcTensor* tensor);
const int64_t* ortc_tensor_shape(const OrtcTensor* tensor);
/* Host memory, or for a tensor of ortc_session_allocate_device its device address. */
const void* ortc_tensor_data(const OrtcTensor* tensor);
size_t ortc_tensor_byte_size(const OrtcTensor* tensor);
void ortc_tensor_release(OrtcTensor* tensor);

#ifdef __cplusplus
}
#endif

#endif /* ORTC_C_H_ */
