// ortc runtime: load a compiled model (model_ctx.onnx + its context binaries) and run it.
//
// Ownership rules:
//   - Session::Create* returns an owned Session (std::unique_ptr); destroy it when done.
//   - Accessors (inputs(), outputs(), load_report()) return references owned by the Session,
//     valid while it lives.
//   - Run() takes input Tensors by const reference (never kept after the call) and returns
//     owned output Tensors.
//   - Context binaries are memory-mapped once per process and shared by every Session that
//     uses them; the mapping goes away with the last Session.
// Errors come back as ortc::Status (see status.h); the runtime never aborts on bad input.
// Run() may be called from several threads at once on one Session.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#if __cplusplus >= 202002L
#include <span>
#endif
#include <string>
#include <utility>
#include <vector>

#include "ortc/status.h"
#include "ortc/tensor.h"

namespace ortc {

// How well this machine fits a backend's binary.
enum class Verdict { kOptimal, kPreferRecompilation, kUnsupported };
std::string_view VerdictName(Verdict v);

// What to do when a binary runs but not optimally (e.g. code JIT-compiled from PTX).
enum class VerdictPolicy { kAllowPreferRecompilation, kRequireOptimal };

// The machine as the version gate sees it. Detected by default; tests and `ortc check
// --device` inject one to check a bundle against a machine they are not running on.
struct DeviceDescription {
  std::string cpu_arch;  // "x86_64", "aarch64"
  bool little_endian = true;
  std::vector<std::string> cpu_isa;  // e.g. "sse4.2", "avx2", "avx512f"
  // CUDA, as the CUDA backend library reports it. Without a usable driver, driver version is 0
  // and cuda_unavailable_reason says why ("no CUDA driver found (libcuda.so.1: ...)").
  int cuda_driver_version = 0;          // cuDriverGetVersion format, e.g. 13000 for 13.0
  std::vector<std::string> cuda_archs;  // per device, e.g. "sm_80"; the first one is used
  std::string cudnn_version;            // "9.1.0"; empty when cuDNN cannot be loaded
  std::string cublas_version;           // "13.0.0"; empty when cuBLASLt cannot be loaded
  std::string cuda_unavailable_reason;
  std::string cudnn_reason, cublas_reason;  // why the library is missing

  // The CPU, plus CUDA through the CUDA backend library when it loads (its absence is
  // recorded in cuda_unavailable_reason). The CUDA part is asked once per process.
  static DeviceDescription Detect();
  // The CPU only; no backend library is loaded.
  static DeviceDescription DetectHost();
  // {"cpu": {"arch", "little_endian", "isa"}, "cuda": {"driver_version", "archs",
  // "cudnn_version", "cublas_version", "unavailable_reason", "cudnn_reason", "cublas_reason"}}.
  // Unnamed CPU fields are this machine's; without a "cuda" object the device has no CUDA.
  static Result<DeviceDescription> FromJson(const std::string& json);
  // This description in the form FromJson reads (`ortc check --print-device`); the "cuda"
  // object is always there, with driver_version 0 and the reason when CUDA is unavailable.
  std::string ToJson() const;
};

struct SessionOptions {
  // For buffer loads: the path the ctx model would have (binaries are found beside it), as
  // ONNX Runtime's ep.context_file_path.
  std::filesystem::path context_file_path;
  VerdictPolicy policy = VerdictPolicy::kAllowPreferRecompilation;
  const DeviceDescription* device = nullptr;  // nullptr: detect
  // Threads each run uses inside its ops (convolutions, GEMMs, large elementwise loops); 0: one
  // per physical core. Runs of one session on several caller threads each use this many.
  int intra_op_threads = 0;
  // The largest tensor an op may allocate, in bytes; 0: this machine's physical memory. Above
  // it a run fails with an error instead of exhausting memory (a corrupt or hostile model can
  // make an op's output any size).
  uint64_t max_tensor_bytes = 0;
  // Share context binaries with other sessions of this process (like ONNX Runtime's
  // ep.share_ep_contexts, but always safe to leave on): mapped and verified once, unmapped with
  // the last session using them. false: this session maps its own copy.
  bool share_ep_contexts = true;
  // Run-time options of backend plugins, by backend, like ONNX Runtime's provider options:
  // {"cuda": {"enable_cuda_graph": "0"}}. backends/README.md lists each backend's keys; an
  // unknown backend or key fails session creation.
  std::map<std::string, std::map<std::string, std::string>> provider_options;
  // Time every node (and every step inside backend graphs) of every run; EndProfiling() writes
  // the trace. Backend graphs then run step by step (no CUDA graph) so each step can be timed.
  bool enable_profiling = false;
};

// What a graph input or output holds: a tensor, a sequence of tensors, or an optional value.
enum class ValueType { kTensor, kSequence, kOptional };

struct TensorInfo {
  std::string name;
  ValueType type = ValueType::kTensor;
  DataType dtype = DataType::kUndefined;  // for sequences and optionals: the element type
  std::vector<int64_t> shape;             // -1 where the size is decided at run time
  // The backend whose compiled graph alone reads this input or writes this output ("cuda"), so
  // its value may live in that backend's device memory (Session::AllocateDevice); "" when a
  // CPU kernel reads or writes it.
  std::string device;
  // That graph's EPContext node. An output and an input of the same graph may share device
  // memory (a cache updated in place): the graph reads its inputs before writing its outputs.
  std::string device_graph;
};

struct BackendVerdict {
  std::string backend;  // "cpu"
  std::string binary;   // the context binary's path
  Verdict verdict = Verdict::kOptimal;
  std::string reason;  // why, when not optimal
};

// How one backend graph of the session runs, as its backend describes it.
struct GraphReport {
  std::string node;     // the EPContext node
  std::string backend;  // "cuda"
  std::string graph;    // the graph's name in the binary
  std::string json;     // the backend's description (backends/README.md), a JSON object
};

struct LoadReport {
  std::vector<BackendVerdict> backends;
  std::vector<GraphReport> graphs;  // graphs run by backend plugins
  int ep_context_nodes = 0;
  int onnx_nodes = 0;       // nodes outside EPContext nodes, run by the CPU kernels
  int64_t arena_bytes = 0;  // working memory planned at compile time, allocated once per Run
  double load_seconds = 0;
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> Create(const std::filesystem::path& model,
                                                 const SessionOptions& options = {});
  // A model in memory (read during the call only). The header compiles as C++17: the span
  // overload is there from C++20.
  static Result<std::unique_ptr<Session>> CreateFromBuffer(const void* data, size_t size,
                                                           const SessionOptions& options = {});
#if __cplusplus >= 202002L
  static Result<std::unique_ptr<Session>> CreateFromBuffer(std::span<const std::byte> model,
                                                           const SessionOptions& options = {}) {
    return CreateFromBuffer(model.data(), model.size(), options);
  }
#endif
  ~Session();

  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  const LoadReport& load_report() const;

  // `inputs` by name; returns the outputs named in `output_names` (all when empty), in order.
  Result<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                  const std::vector<std::string>& output_names = {}) const;

  // Like Run, with outputs written into caller memory, as ONNX Runtime's IOBinding: each of
  // `bound_outputs` names a model output and a tensor of its exact dtype and shape that
  // receives it, in host memory or in device memory (Tensor::OnDevice) when a backend graph
  // produces that output. Inputs may be device tensors when a backend graph consumes them, so a
  // pipeline can chain models without host round trips. Returns every output in model order
  // (bound ones are the given tensors).
  Result<std::vector<Tensor>> RunBound(
      const std::vector<std::pair<std::string, Tensor>>& inputs,
      const std::vector<std::pair<std::string, Tensor>>& bound_outputs) const;

  // Device memory for `name`, an input or output of this session whose TensorInfo::device is
  // set and whose shape is static: a zero-filled tensor of that backend's device, freed with its
  // last copy. Pass it to RunBound as that input or bound output (of this session or another
  // session of the same backend) so its bytes stay on the device from run to run.
  Result<Tensor> AllocateDevice(const std::string& name) const;
  // A host copy of a device tensor of one of this session's backends.
  Result<Tensor> CopyToHost(const Tensor& device_tensor) const;
  // Copies `bytes` from byte `src_offset` of `src` to byte `dst_offset` of `dst`, each a host
  // tensor or a device tensor of this session's backend, either way or device to device;
  // returns when the bytes are there. For moving part of a device tensor without a host round
  // trip (a cache's rows). Fails when a range passes the end of its tensor.
  Status CopyBytes(Tensor* dst, size_t dst_offset, const Tensor& src, size_t src_offset,
                   size_t bytes) const;
  // The same for `rows` blocks of row_bytes bytes, the n-th from src_offset + n * src_pitch to
  // dst_offset + n * dst_pitch, in one call to the device (a cache's new row of every head).
  Status CopyRows(Tensor* dst, size_t dst_offset, size_t dst_pitch, const Tensor& src,
                  size_t src_offset, size_t src_pitch, size_t row_bytes, size_t rows) const;

  // With enable_profiling: writes every event recorded since the session was created (or since
  // the last EndProfiling) to `path` as a Chrome trace (a JSON array of "X" events, the format
  // ONNX Runtime's profiler writes; chrome://tracing and Perfetto open it).
  Status EndProfiling(const std::filesystem::path& path) const;

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  Result<std::vector<Tensor>> RunImpl(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                      const std::vector<std::string>& output_names,
                                      const std::vector<Tensor>* bound) const;
  std::unique_ptr<Impl> impl_;
};

// The gate alone, without building a session: verdict per backend, or the error that loading
// would give (`ortc check`).
Result<LoadReport> CheckModel(const std::filesystem::path& model,
                              const SessionOptions& options = {});

// The gate on a bundle's compatibility string alone (its ctx models' "ep_compatibility_info.ortc"
// metadata, schemas/README.md), without opening a model or a binary: what ONNX Runtime asks an
// EP before it loads a compiled model.
struct CompatibilityVerdict {
  bool applicable = false;  // false: not an ortc string, and nothing else is set
  Verdict verdict = Verdict::kOptimal;
  std::string reason;  // the gate's words when not optimal
};
// device: nullptr detects this machine (with CUDA only when the string names a CUDA binary).
CompatibilityVerdict CheckCompatibilityInfo(const std::string& info,
                                            const DeviceDescription* device = nullptr);

// The library the CPU kernels' convolutions run on, as this process loaded it: its name
// ("oneDNN"), version ("2.6.3") and the instruction set of the code it generates on this
// machine ("avx512_core_bf16"; "" for one older than avx2). What `ortc --version` and a
// bundle's manifest record.
struct CpuKernelLibrary {
  std::string name;
  std::string version;
  std::string isa;
};
CpuKernelLibrary DescribeCpuKernelLibrary();

// One ONNX op run on host tensors by the CPU kernels, exactly as a compiled CPU program runs
// it: the compiler folds constants through it, so a folded value is what the run computes.
struct CpuOpCall {
  std::string op_type;                // an ai.onnx op
  int opset = 0;                      // the version of the op's definition in effect
  std::string attributes;             // a serialized ONNX NodeProto carrying the attributes (or "")
  std::vector<const Tensor*> inputs;  // nullptr for an omitted optional input
  size_t num_outputs = 1;
  uint64_t max_output_bytes = 0;  // refuse larger outputs; 0: no limit
};
bool HasCpuKernel(const std::string& op_type);  // an ai.onnx op the CPU kernels run
Result<std::vector<Tensor>> RunCpuOp(const CpuOpCall& call);

}  // namespace ortc
