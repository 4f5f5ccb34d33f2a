/* The backend plugin ABI: the C interface between ortc and a backend, on both sides. Pure C,
 * documented in backends/README.md.
 *
 * Runtime side: the runtime loads a backend library with dlopen (libortc_backend_<name>.so),
 * which exports ortc_backend_create and ortc_backend_release; all else goes through the
 * OrtcBackend function table create returns.
 * Compile side (version 5): the compiler asks a backend which nodes it takes and compiles its
 * groups through the OrtcBackendCompiler table. In-tree backends register their tables
 * statically; a plugin library exports ortc_backend_compiler_create and
 * ortc_backend_compiler_release beside (or instead of) the runtime pair.
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
#define ORTC_BACKEND_ABI_VERSION 5u

#define ORTC_BACKEND_CREATE_SYMBOL "ortc_backend_create"
#define ORTC_BACKEND_RELEASE_SYMBOL "ortc_backend_release"
#define ORTC_BACKEND_COMPILER_CREATE_SYMBOL "ortc_backend_compiler_create"
#define ORTC_BACKEND_COMPILER_RELEASE_SYMBOL "ortc_backend_compiler_release"

typedef enum OrtcPluginStatus {
  ORTC_PLUGIN_OK = 0,
  ORTC_PLUGIN_INVALID_ARGUMENT = 1, /* bad inputs to run_graph (shape, dtype, size) */
  ORTC_PLUGIN_INVALID_GRAPH = 2,    /* the program or its artefacts are corrupt or inconsistent */
  ORTC_PLUGIN_NOT_IMPLEMENTED = 3,  /* a step kind or dtype this plugin does not handle */
  ORTC_PLUGIN_EP_FAIL = 4,          /* the device or a vendor library failed */
  ORTC_PLUGIN_UNSUPPORTED = 5,      /* this machine cannot run it (no driver, no device...) */
  ORTC_PLUGIN_ABI_MISMATCH = 6,     /* create: the host's ABI version is not this plugin's */
  ORTC_PLUGIN_BUFFER_TOO_SMALL = 7, /* describe_device: retry with *length + 1 bytes */
  /* Added in version 5, for the compile side: */
  ORTC_PLUGIN_IO_ERROR = 8,       /* a file (external data) could not be read */
  ORTC_PLUGIN_OUT_OF_MEMORY = 9,  /* an allocation failed */
  ORTC_PLUGIN_NO_SUCH_FILE = 10   /* a file the model names does not exist */
} OrtcPluginStatus;

/* What the host offers the plugin. Layout rule: abi_version and struct_size stay first. The
 * struct, and the log function and user it names, stay valid until the table create returned is
 * released, so a plugin may keep the pointer. */
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

/* What a context binary's manifest records about the compile (the compile side's identity):
 * the version gate hands it to check_binary. Borrowed for the call. */
typedef struct OrtcBinaryFacts {
  uint32_t struct_size;
  const char* sdk_version;           /* EPContext ep_sdk_version */
  const char* hardware_architecture; /* EPContext hardware_architecture */
  const OrtcKeyValue* versions;      /* manifest versions: component -> version */
  uint32_t num_versions;
  const char* const* hardware_targets;
  uint32_t num_hardware_targets;
  const OrtcKeyValue* properties;
  uint32_t num_properties;
} OrtcBinaryFacts;

/* check_binary's answer, ONNX Runtime's OrtCompiledModelCompatibility in spirit. */
typedef enum OrtcBinaryVerdict {
  ORTC_BINARY_OPTIMAL = 0,               /* runs, as well as a fresh compile would */
  ORTC_BINARY_PREFER_RECOMPILATION = 1,  /* runs, but a compile for this machine would do better */
  ORTC_BINARY_UNSUPPORTED = 2            /* cannot run here; the reason says what to do */
} OrtcBinaryVerdict;

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
  /* The version gate's question for this backend's binaries: can this machine run a binary
   * whose compile recorded these facts? *verdict receives an OrtcBinaryVerdict and `reason`
   * (same buffer rules as describe_device) says why when it is not OPTIMAL, naming both sides
   * ("compiled for SDK 2.1, this machine has 1.4"); the host always passes a buffer, and an
   * OPTIMAL verdict may leave the reason empty. May be NULL: the host then applies only
   * its own checks (the CUDA plugin's facts are checked by the host). Added in version 5. */
  OrtcPluginStatus (*check_binary)(struct OrtcBackend* self, const OrtcBinaryFacts* facts,
                                   int32_t* verdict, char* reason, size_t capacity,
                                   size_t* length);
} OrtcBackend;

/* Exported by the plugin. Refuses (ABI_MISMATCH, *out untouched) a host ABI version it does not
 * implement. host may be NULL. */
typedef OrtcPluginStatus (*OrtcBackendCreateFn)(uint32_t host_abi_version, const OrtcHostApi* host,
                                                OrtcBackend** out);
typedef void (*OrtcBackendReleaseFn)(OrtcBackend* backend);

/* ------------------------------------------------------------------------------------------
 * Compile side (added in version 5).
 *
 * The compiler shows a backend the model as a graph view: nodes in topological order, values
 * with element type and shape where known, constants with their bytes. Everything in a view is
 * borrowed for the call. The backend answers, per node, whether it takes it and why not; the
 * compiler groups the nodes each backend takes, and hands each group back to compile, which
 * reports its result through a sink of host functions: the program (the backend's own format),
 * its inputs and outputs, and its weights, each either bytes or a reference to a file region
 * the host streams into the binary's shared, deduplicated weight pool.
 * Threading: calls on one compiler table may come from several threads at once.
 * ------------------------------------------------------------------------------------------ */

/* One attribute of a node. Types are ONNX AttributeProto's numbers; graphs and tensors come with
 * their type and no value. */
typedef struct OrtcAttributeView {
  const char* name;
  int32_t type; /* 1 FLOAT, 2 INT, 3 STRING, 6 FLOATS, 7 INTS, 8 STRINGS, others: no value */
  float f;
  int64_t i;
  const char* s; /* STRING: bytes (not NUL-terminated in general) */
  uint64_t s_size;
  const float* floats; /* FLOATS */
  const int64_t* ints; /* INTS */
  const char* const* strings; /* STRINGS: NUL-terminated */
  uint32_t count;             /* entries of floats, ints or strings */
} OrtcAttributeView;

/* One value (a tensor) of the graph. */
typedef struct OrtcValueView {
  const char* name;
  int32_t dtype;       /* ONNX TensorProto.DataType; 0 when unknown */
  int32_t rank;        /* -1 when unknown */
  const int64_t* dims; /* rank entries; -1 for a size known only at run time */
  int32_t producer;    /* node index, -1 for graph inputs and constants */
  int32_t is_graph_input;
  int32_t is_graph_output;
  /* Constants (initializers): their bytes, little-endian, row-major. Either data is set, or
   * the bytes are byte_size bytes at external_offset of external_file. An initializer that is
   * also a graph input is only a default the caller may override: treat it as constant only
   * when is_graph_input is 0. */
  int32_t is_constant;
  const void* data;
  uint64_t byte_size;
  const char* external_file; /* absolute path, or NULL */
  uint64_t external_offset;
} OrtcValueView;

typedef struct OrtcNodeView {
  const char* name; /* never empty */
  const char* op_type;
  const char* domain;        /* "" for ai.onnx */
  int32_t since_version;     /* version of the op definition in effect; 0 when unknown */
  const int32_t* inputs;     /* value indices; -1 for an omitted optional input */
  uint32_t num_inputs;
  const int32_t* outputs;    /* value indices; -1 for an omitted optional output */
  uint32_t num_outputs;
  const OrtcAttributeView* attributes;
  uint32_t num_attributes;
  int32_t has_subgraphs;     /* If/Loop/Scan bodies are not shown */
} OrtcNodeView;

typedef struct OrtcGraphView {
  uint32_t struct_size; /* sizeof(OrtcGraphView) of the host */
  const OrtcNodeView* nodes;
  uint32_t num_nodes;
  const OrtcValueView* values;
  uint32_t num_values;
  /* For backends linked into the host only: the host's own graph objects, and a token naming the
   * build they belong to. A backend linked into the host may use them instead of the view when
   * host_build is the very pointer its own build exports (the in-tree backends do, to compile
   * from the host's IR without a copy); a plugin built elsewhere must ignore them. */
  const char* host_build;
  const void* host_graph;
  const void* host_model; /* compile only; NULL in get_capability */
} OrtcGraphView;

/* The nodes of one group, and the values it reads from outside and makes for outside. */
typedef struct OrtcSubgraphRef {
  const char* name; /* the graph's name in the binary (= EPContext partition_name) */
  const int32_t* nodes; /* node indices of the view, topological order */
  uint32_t num_nodes;
  const int32_t* inputs; /* value indices, constants excluded */
  uint32_t num_inputs;
  const int32_t* outputs;
  uint32_t num_outputs;
} OrtcSubgraphRef;

/* Sinks (capability, identity, option sets): the host sets every function. */
typedef struct OrtcCapabilitySink {
  void* user;
  void (*claim)(void* user, uint32_t node);
  /* A node neither claimed nor refused counts as refused for "no answer". */
  void (*refuse)(void* user, uint32_t node, const char* reason);
} OrtcCapabilitySink;

/* An input or output of a compiled graph. */
typedef struct OrtcTensorDesc {
  const char* name;
  int32_t dtype;
  uint32_t rank;
  const int64_t* dims;         /* -1 for sizes known only at run time */
  const char* const* symbols;  /* NULL, or rank entries ("" when a dim has none) */
} OrtcTensorDesc;

/* A weight slot of a compiled graph: what the runtime hands back in OrtcGraphLoadInfo.weights. */
typedef struct OrtcWeightDesc {
  int32_t dtype;
  uint32_t rank;
  const int64_t* dims;
  const char* layout; /* free text the backend reads back ("plain", "oihw_o16"...); NULL: plain */
  uint32_t alignment; /* bytes, a power of two; 0: 64 */
} OrtcWeightDesc;

typedef enum OrtcBytesKind {
  ORTC_BYTES_COPY = 0,        /* data/size: the host copies them during the call */
  ORTC_BYTES_HANDED_OVER = 1, /* data/size stay valid until the host calls release(owner) */
  ORTC_BYTES_FILE_REGION = 2  /* `size` bytes at `offset` of `file`: the host streams them */
} OrtcBytesKind;

typedef struct OrtcBytes {
  int32_t kind; /* OrtcBytesKind */
  const void* data;
  uint64_t size;
  void* owner;                   /* HANDED_OVER */
  void (*release)(void* owner);  /* HANDED_OVER; may be NULL */
  const char* file;              /* FILE_REGION */
  uint64_t offset;               /* FILE_REGION */
} OrtcBytes;

/* A choice between implementations of one step that `ortc tune` can measure. */
typedef struct OrtcTunableChoice {
  const char* step; /* the step's main ONNX node */
  const char* key;  /* what the step computes: a measurement applies wherever it recurs */
  const char* choice;
  const char* const* candidates;
  uint32_t num_candidates;
  const char* source; /* "rule", "option", "measured" */
} OrtcTunableChoice;

/* Where compile reports its result. Strings and arrays are copied during each call. The host
 * sets every function. */
typedef struct OrtcCompileSink {
  void* user;
  void (*set_program)(void* user, const void* data, uint64_t size);
  void (*add_input)(void* user, const OrtcTensorDesc* desc);  /* in the program's order */
  void (*add_output)(void* user, const OrtcTensorDesc* desc);
  void (*add_weight)(void* user, const OrtcWeightDesc* desc, const OrtcBytes* bytes); /* slots */
  void (*set_arena_bytes)(void* user, uint64_t bytes);
  /* A named section stored beside the program (a device image); unique in the binary. */
  void (*add_artefact)(void* user, const char* name, const void* data, uint64_t size);
  void (*add_note)(void* user, const char* key, const char* value); /* EPContext notes */
  void (*add_binary_version)(void* user, const char* key, const char* value); /* manifest */
  void (*add_stat)(void* user, const char* key, int64_t count); /* fused patterns... */
  void (*add_choice)(void* user, const OrtcTunableChoice* choice);
  void (*progress)(void* user, const char* step, int32_t done, int32_t total);
} OrtcCompileSink;

/* What the backend records about its binaries: the bin manifest and the EPContext attributes,
 * and what its runtime side's check_binary reads back. */
typedef struct OrtcIdentitySink {
  void* user;
  void (*set_sdk_version)(void* user, const char* value);
  void (*set_hardware_architecture)(void* user, const char* value);
  void (*add_version)(void* user, const char* key, const char* value);
  void (*add_hardware_target)(void* user, const char* target);
  void (*add_property)(void* user, const char* key, const char* value);
} OrtcIdentitySink;

typedef struct OrtcOptionSetSink {
  void* user;
  void (*add_set)(void* user, const OrtcKeyValue* options, uint32_t num_options);
} OrtcOptionSetSink;

#define ORTC_COMPILER_FALLBACK 1u    /* takes every node the others leave (the CPU backend) */
#define ORTC_COMPILER_CAN_COMPILE 2u /* compile works (else: capability answers only) */

/* The compile side's function table. Layout rule as OrtcBackend's. */
typedef struct OrtcBackendCompiler {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* name;        /* "npu": --ep names it, files are named by it (model_npu.bin) */
  const char* ep_source;   /* EPContext source of its nodes: "ortc." + name */
  const char* status_line; /* one line saying what it can do today */
  const char* version;     /* the backend's build version, free text */
  uint32_t flags;          /* ORTC_COMPILER_* */
  /* The session's provider options for this backend; INVALID_ARGUMENT names the known keys. */
  OrtcPluginStatus (*validate_options)(struct OrtcBackendCompiler* self,
                                       const OrtcKeyValue* options, uint32_t num_options);
  /* Answers every node of the view through the sink. */
  OrtcPluginStatus (*get_capability)(struct OrtcBackendCompiler* self, const OrtcGraphView* graph,
                                     const OrtcCapabilitySink* sink);
  /* The versions and targets the binary records for the version gate. A failure (last_error
     says why) stops the compile before its binary is written. */
  OrtcPluginStatus (*identity)(struct OrtcBackendCompiler* self, const OrtcKeyValue* options,
                               uint32_t num_options, const OrtcIdentitySink* sink);
  /* Compiles one group of nodes it claimed. */
  OrtcPluginStatus (*compile)(struct OrtcBackendCompiler* self, const OrtcGraphView* graph,
                              const OrtcSubgraphRef* subgraph, const OrtcKeyValue* options,
                              uint32_t num_options, const OrtcCompileSink* sink);
  /* Option sets that each compile every tunable choice one way (may be NULL: nothing to tune). */
  OrtcPluginStatus (*tuning_variants)(struct OrtcBackendCompiler* self,
                                      const OrtcOptionSetSink* sink);
  /* A warning about these options to print once, "" when none (may be NULL). Same buffer rules
   * as describe_device. */
  OrtcPluginStatus (*options_warning)(struct OrtcBackendCompiler* self,
                                      const OrtcKeyValue* options, uint32_t num_options,
                                      char* buffer, size_t capacity, size_t* length);
  const char* (*last_error)(struct OrtcBackendCompiler* self);
} OrtcBackendCompiler;

typedef OrtcPluginStatus (*OrtcBackendCompilerCreateFn)(uint32_t host_abi_version,
                                                        const OrtcHostApi* host,
                                                        OrtcBackendCompiler** out);
typedef void (*OrtcBackendCompilerReleaseFn)(OrtcBackendCompiler* compiler);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ORTC_BACKEND_PLUGIN_H_ */
