// The stand-in CUDA libraries' own interface (exported by the stand-in libcuda.so.1): what tests
// read back after driving the real plugin, and how the cuDNN / cuBLASLt stand-ins report work.
#pragma once

#include <cuda.h>

#include <cstddef>

extern "C" {

// Forgets the recorded calls (counts and trace); live objects and memory stay as they are.
void ortc_standin_reset(void);
// Counts one call and appends `call` to the trace. Entries carry details after a ':' where a
// test needs them ("cudnnSetConvolutionMathType:CUDNN_FMA_MATH").
void ortc_standin_record(const char* call);
// Also "bytes:HtoD", "bytes:DtoH", "bytes:DtoD": the bytes copied that way (when executed).
size_t ortc_standin_count(const char* call);
// Every call since the last reset, one per line, in order.
const char* ortc_standin_trace(void);
// True when the environment variable ORTC_STANDIN_FAIL (comma-separated entry points) names
// `call`: that entry point then returns an error, so tests reach the plugin's fallbacks.
int ortc_standin_fail(const char* call);

// Library work (a cuDNN or cuBLASLt kernel) issued on `stream`: becomes a node of the stream's
// graph while the stream is capturing, else counts as executed ("exec:<what>").
CUresult ortc_standin_enqueue(CUstream stream, const char* what);
// True when [ptr, ptr + bytes) lies inside one live device allocation.
int ortc_standin_is_device_range(const void* ptr, size_t bytes);

// Live objects by kind ("device_alloc", "host_alloc", "stream", "module", "graph", "graph_exec",
// "event", "cudnn_handle", "cudnn_descriptor", "cublaslt_handle", "cublaslt_object").
void ortc_standin_object(const char* kind, int delta);
long ortc_standin_live(const char* kind);
size_t ortc_standin_live_device_bytes(void);

}  // extern "C"
