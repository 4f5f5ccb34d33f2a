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

typedef enum {
  ORTC_OK = 0,
  ORTC_INVALID_ARGUMENT = 1,
  ORTC_NO_SUCHFILE = 2,
  ORTC_INVALID_GRAPH = 3,
  ORTC_NOT_IMPLEMENTED = 4,
  ORTC_EP_FAIL = 5,
  ORTC_MODEL_REQUIRES_COMPILATION = 6,
  ORTC_IO_ERROR = 7
} OrtcCode;

typedef struct OrtcStatus OrtcStatus;
typedef struct OrtcSession OrtcSession;
typedef struct OrtcTensor OrtcTensor;

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

/* context_file_path may be NULL; model_path is a model_ctx.onnx (or a plain ONNX model). */
OrtcStatus* ortc_session_create(const char* model_path, OrtcSession** out);
void ortc_session_release(OrtcSession* session);

size_t ortc_session_input_count(const OrtcSession* session);
const char* ortc_session_input_name(const OrtcSession* session, size_t index);
size_t ortc_session_output_count(const OrtcSession* session);
const char* ortc_session_output_name(const OrtcSession* session, size_t index);

/* Runs with n_inputs named inputs; fills outputs[0 .. output_count) with owned tensors. */
OrtcStatus* ortc_session_run(const OrtcSession* session, const char* const* input_names,
                             const OrtcTensorView* inputs, size_t n_inputs, OrtcTensor** outputs);

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

int32_t ortc_tensor_dtype(const OrtcTensor* tensor);
size_t ortc_tensor_rank(const OrtcTensor* tensor);
const int64_t* ortc_tensor_shape(const OrtcTensor* tensor);
const void* ortc_tensor_data(const OrtcTensor* tensor);
size_t ortc_tensor_byte_size(const OrtcTensor* tensor);
void ortc_tensor_release(OrtcTensor* tensor);

#ifdef __cplusplus
}
#endif

#endif /* ORTC_C_H_ */
