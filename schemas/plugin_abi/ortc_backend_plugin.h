/* The backend plugin ABI: the C interface between the ortc runtime and a backend library it
 * loads with dlopen (libortc_backend_<name>.so). Pure C, documented in backends/README.md.
 *
 * A plugin exports exactly two symbols, ortc_backend_create and ortc_backend_release; all else
 * goes through the function table create returns.
 *
 * Ownership: create returns an owned OrtcBackend (give it back with ortc_backend_release);
 * load_graph returns an owned OrtcGraph (give it back with release_graph, before the backend).
 * Every pointer passed into a call is borrowed for that call only, except what a load info
 * says it keeps. Strings returned by the plugin (last_error) are owned by it and stay valid
 * until the next call from the same thread.
 * Threading: describe_device and load_graph may be called from any thread at once; run_graph
 * may be called at once on different graphs, and the plugin serialises calls on one graph;
 * release_graph must not race with a run_graph on the same graph; allocate_device, free_device
 * copy_memory and copy_memory_rows may be called from any thread at once.
 * Errors: every call returns an OrtcPluginStatus; on failure, last_error() gives the text
 * (thread-local in the plugin). No call aborts or throws across the boundary.
 */
#ifndef ORTC_BACKEND_PLUGIN_H_
#define ORTC_BACKEND_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the structs or tables below; host and plugin must agree exactly. */
#define ORTC_BACKEND_ABI_VERSION 4u

#define ORTC_BACKEND_CREATE_SYMBOL "ortc_backend_create"
#define ORTC_BACKEND_RELEASE_SYMBOL "ortc_backend_release"

typedef enum OrtcPluginStatus {
  ORTC_PLUGIN_OK = 0,
  ORTC_PLUGIN_INVALID_ARGUMENT = 1, /* bad inputs to run_graph (shape, dtype, size) */
  ORTC_PLUGIN_INVALID_GRAPH = 2,    /* the program or its artefacts are corrupt or inconsistent */
  ORTC_PLUGIN_NOT_IMPLEMENTED = 3,  /* a step kind or dtype this plugin does not handle */
  ORTC_PLUGIN_EP_FAIL = 4,          /* the device or a vendor library failed */
  ORTC_PLUGIN_UNSUPPORTED = 5,      /* this machine cannot run it (no driver, no device...) */
  ORTC_PLUGIN_ABI_MISMATCH = 6,     /* create: the host's ABI version is not this plugin's */
  ORTC_PLUGIN_BUFFER_TOO_SMALL = 7  /* describe_device: retry with *length + 1 bytes */
} OrtcPluginStatus;

/* What the host offers the plugin. Layout rule: abi_version and struct_size stay first. */
typedef struct OrtcHostApi {
  uint32_t abi_version; /* ORTC_BACKEND_ABI_VERSION of the host */
  uint32_t struct_size; /* sizeof(OrtcHostApi) of the host */
  void* user;           /* passed back to log */
  /* Optional (may be NULL): diagnostics; level 0 debug, 1 info, 2 warning. */
  void (*log)(void* user, int32_t level, const char* message);
} OrtcHostApi;

/* Where a tensor's bytes are. */
typedef enum OrtcMemoryLocation {
  ORTC_MEMORY_HOST = 0,  /* process memory */
  ORTC_MEMORY_DEVICE = 1 /* memory of the plugin's device (a CUdeviceptr for CUDA) */
} OrtcMemoryLocation;

/* A tensor: ONNX element type, dims, bytes, and where they are. */
typedef struct OrtcTensorRef {
  int32_t dtype; /* ONNX TensorProto.DataType */
  uint32_t rank;
  const int64_t* dims;
  void* data; /* read-only for inputs; written completely for outputs */
  uint64_t byte_size;
  int32_t location; /* OrtcMemoryLocation */
} OrtcTensorRef;

/* One backend option of a session, as text ("enable_cuda_graph" = "0"). */
typedef struct OrtcKeyValue {
  const char* key;
  const char* value;
} OrtcKeyValue;

/* Named bytes of the context binary (a weight or an artefact section). */
typedef struct OrtcBlob {
  const char* name;    /* artefact section name; NULL for weights */
  uint32_t pool_index; /* weights: index in the binary's weight pool (the dedup key) */
  const void* data;
  uint64_t size;
} OrtcBlob;

/* Everything load_graph needs. The host keeps the mapped binary (program, weights,
 * artefacts) alive until release_graph of this graph returns, so the plugin may keep pointers
 * into it; the strings and arrays of the struct itself are borrowed for the call only. */
typedef struct OrtcGraphLoadInfo {
  uint32_t struct_size; /* sizeof(OrtcGraphLoadInfo) of the host */
  const char* graph_name;
  /* The binary's content id: with a weight's pool_index, the key under which the plugin
   * uploads a weight once per process and shares it between graphs and sessions. */
  const char* content_id;
  const void* program; /* the backend's program (e.g. schemas/cuda_program.fbs) */
  uint64_t program_size;
  const OrtcBlob* weights; /* per weight slot of the graph, in slot order */
  uint32_t num_weights;
  const OrtcBlob* artefacts; /* every artefact section of the binary */
  uint32_t num_artefacts;
  /* The session's options for this backend (backends/README.md lists each backend's keys); an
   * unknown key or value fails the load with INVALID_ARGUMENT naming the known ones. */
  const OrtcKeyValue* options;
  uint32_t num_options;
} OrtcGraphLoadInfo;

typedef struct OrtcGraph OrtcGraph; /* opaque, owned by the plugin */

/* The plugin's function table. Layout rule: abi_version and struct_size stay first so that
 * a host can read them from a plugin of any version before trusting the rest. */
typedef struct OrtcBackend {
  uint32_t abi_version; /* ORTC_BACKEND_ABI_VERSION the plugin implements */
  uint32_t struct_size; /* sizeof(OrtcBackend) of the plugin */
  const char* name;     /* backend short name: "cuda" */
  const char* version;  /* plugin build version, free text */

  /* JSON object describing the device (backends/README.md lists the keys), NUL-terminated into
   * buffer. *length receives the length without the NUL; BUFFER_TOO_SMALL when it does not fit.
   * Succeeds on a machine without the device too: the JSON then says why. */
  OrtcPluginStatus (*describe_device)(struct OrtcBackend* self, char* buffer, size_t capacity,
                                      size_t* length);
  /* Prepares one graph for one session: its device memory, stream and library plans. */
  OrtcPluginStatus (*load_graph)(struct OrtcBackend* self, const OrtcGraphLoadInfo* info,
                                 OrtcGraph** out);
  /* Runs a loaded graph: inputs and outputs in the program's order, each in host memory or in
   * the plugin's device memory (OrtcTensorRef.location). Output refs come with the binary's
   * static shapes and buffers of exactly their byte size. An output may be the same device
   * memory as an input of the call (a KV cache updated in place from step to step): the plugin
   * reads every input before it writes any output. */
  OrtcPluginStatus (*run_graph)(OrtcGraph* graph, const OrtcTensorRef* inputs, uint32_t num_inputs,
                                OrtcTensorRef* outputs, uint32_t num_outputs);
  void (*release_graph)(OrtcGraph* graph);
  /* Text of the last failure on the calling thread ("" when none). */
  const char* (*last_error)(struct OrtcBackend* self);
  /* JSON object saying how a loaded graph runs (e.g. CUDA graph or stream, and why); the keys
   * are in backends/README.md. Same buffer rules as describe_device. */
  OrtcPluginStatus (*describe_graph)(OrtcGraph* graph, char* buffer, size_t capacity,
                                     size_t* length);
  /* JSON array with one entry per step of the graph's last run (name, kind, host and device
   * times), for a graph loaded with the backend's profiling option; INVALID_ARGUMENT otherwise.
   * Must not race with a run_graph on the same graph. Same buffer rules as describe_device. */
  OrtcPluginStatus (*last_run_profile)(OrtcGraph* graph, char* buffer, size_t capacity,
                                       size_t* length);
  /* Device memory for the host's callers (tensors that stay on the device between runs, such as
   * a KV cache): `bytes` zero-filled bytes of the plugin's device, usable as ORTC_MEMORY_DEVICE
   * by every graph of this backend; UNSUPPORTED without a device. Give it back with free_device. */
  OrtcPluginStatus (*allocate_device)(struct OrtcBackend* self, uint64_t bytes, void** out);
  void (*free_device)(struct OrtcBackend* self, void* data);
  /* Copies `bytes` between host memory and the plugin's device memory, either way or device to
   * device (OrtcMemoryLocation of each side); returns when the bytes are there. */
  OrtcPluginStatus (*copy_memory)(struct OrtcBackend* self, void* dst, int32_t dst_location,
                                  const void* src, int32_t src_location, uint64_t bytes);
  /* Copies `rows` rows of `row_bytes` bytes in one call, row n from src + n * src_pitch to
   * dst + n * dst_pitch, between host and device memory as copy_memory does (a KV cache's new
   * row of every head at once: one call a cache per decode step, not one a head); returns when
   * the bytes are there. Added in version 4. */
  OrtcPluginStatus (*copy_memory_rows)(struct OrtcBackend* self, void* dst, int32_t dst_location,
                                       uint64_t dst_pitch, const void* src, int32_t src_location,
                                       uint64_t src_pitch, uint64_t row_bytes, uint64_t rows);
} OrtcBackend;

/* Exported by the plugin. Refuses (ABI_MISMATCH, *out untouched) a host ABI version it does not
 * implement. host may be NULL. */
typedef OrtcPluginStatus (*OrtcBackendCreateFn)(uint32_t host_abi_version, const OrtcHostApi* host,
                                                OrtcBackend** out);
typedef void (*OrtcBackendReleaseFn)(OrtcBackend* backend);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ORTC_BACKEND_PLUGIN_H_ */
