// A CUDA backend plugin that runs compiled CUDA programs in the host emulator
// (program_interpreter.h) instead of on a GPU: built as libortc_backend_cuda.so in a folder of
// its own, it lets the unchanged runtime (ortc run, ortc generate, the C and C++ APIs) execute
// CUDA bundles numerically on a machine without a GPU, "device" memory being host memory. Tests
// point ORTC_BACKEND_PATH at that folder. It implements the backend ABI
// (backends/plugin_abi/ortc_backend_plugin.h) and describes an sm_80 device with the versions
// the stand-in libraries report, so bundles compiled for sm_80 pass the version gate.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <new>
#include <string>

#include "cuda/runtime/io_binding.h"
#include "plugin_abi/ortc_backend_plugin.h"
#include "program_interpreter.h"

namespace ortc::test::cuda {
namespace {

namespace fbc = ortc::fb::cuda;

thread_local std::string t_error;

OrtcPluginStatus Fail(OrtcPluginStatus code, std::string message) {
  t_error = std::move(message);
  return code;
}

OrtcPluginStatus FromStatus(const Status& s) {
  if (s.ok()) return ORTC_PLUGIN_OK;
  const OrtcPluginStatus code =
      s.code() == StatusCode::kInvalidArgument  ? ORTC_PLUGIN_INVALID_ARGUMENT
      : s.code() == StatusCode::kNotImplemented ? ORTC_PLUGIN_NOT_IMPLEMENTED
                                                : ORTC_PLUGIN_INVALID_GRAPH;
  return Fail(code, "CUDA emulator: " + s.message());
}

template <typename F>
OrtcPluginStatus Guard(F&& f) {
  try {
    t_error.clear();
    return f();
  } catch (const std::exception& e) {
    return Fail(ORTC_PLUGIN_EP_FAIL, std::string("CUDA emulator: ") + e.what());
  }
}

OrtcPluginStatus WriteText(const std::string& text, char* buffer, size_t capacity, size_t* length) {
  if (length) *length = text.size();
  if (!buffer || capacity <= text.size())
    return Fail(ORTC_PLUGIN_BUFFER_TOO_SMALL, "needs " + std::to_string(text.size() + 1));
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return ORTC_PLUGIN_OK;
}

// "Device" allocations: host memory, kept by address so free_device can check what it frees.
struct Allocations {
  std::mutex mu;
  std::map<void*, size_t> live;
};

Allocations& Live() {
  static Allocations* a = new Allocations();
  return *a;
}

struct EmulatedGraph {
  std::string name;
  ProgramInterpreter program;
  std::mutex mu;  // the ABI: runs of one graph are serialised by the plugin
  StepCounts last;
  cuda_rt::IoTouches touches;  // where the program reads and writes its inputs and outputs
};

std::vector<int> Buffers(const flatbuffers::Vector<int32_t>* v) {
  return v ? std::vector<int>(v->begin(), v->end()) : std::vector<int>{};
}

// What of the caller's device memory the run uses in place, decided as the CUDA runtime decides
// it (io_binding.h): a cache passed as both a past input and its present output is updated where
// it lies when the program allows that, and copied into the program's own buffer first when not.
BoundMemory Bind(const EmulatedGraph& g, const OrtcTensorRef* inputs, uint32_t num_inputs,
                 OrtcTensorRef* outputs, uint32_t num_outputs) {
  cuda_rt::IoBinding offered, chosen;
  std::vector<uint64_t> in_bytes, out_bytes;
  auto device = [](const OrtcTensorRef& t) {
    return t.location == ORTC_MEMORY_DEVICE ? reinterpret_cast<cuda_rt::DeviceAddress>(t.data) : 0;
  };
  for (uint32_t i = 0; i < num_inputs; ++i) {
    offered.inputs.push_back(device(inputs[i]));
    in_bytes.push_back(inputs[i].byte_size);
  }
  for (uint32_t i = 0; i < num_outputs; ++i) {
    offered.outputs.push_back(device(outputs[i]));
    out_bytes.push_back(outputs[i].byte_size);
  }
  cuda_rt::ChooseBinding(g.touches, offered, in_bytes, out_bytes, &chosen);
  BoundMemory bound;
  for (uint32_t i = 0; i < num_inputs; ++i)
    bound.inputs.push_back(chosen.inputs[i] ? inputs[i].data : nullptr);
  for (uint32_t i = 0; i < num_outputs; ++i)
    bound.outputs.push_back(chosen.outputs[i] ? outputs[i].data : nullptr);
  return bound;
}

OrtcPluginStatus DescribeDevice(OrtcBackend*, char* buffer, size_t capacity, size_t* length) {
  return WriteText(R"({"driver_version":13000,"archs":["sm_80"],"cudnn_version":"9.19.0",)"
                   R"("cublas_version":"13.1.0","emulator":true})",
                   buffer, capacity, length);
}

// The source artefact the program names, from the load info's artefact sections.
std::string_view SourceOf(const OrtcGraphLoadInfo& info) {
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(info.program), info.program_size);
  if (!fbc::VerifyProgramBuffer(verifier)) return {};
  const auto* p = fbc::GetProgram(info.program);
  if (!p->source_artefact()) return {};
  for (uint32_t i = 0; i < info.num_artefacts; ++i) {
    const OrtcBlob& a = info.artefacts[i];
    if (a.name && p->source_artefact()->str() == a.name)
      return {static_cast<const char*>(a.data), static_cast<size_t>(a.size)};
  }
  return {};
}

OrtcPluginStatus LoadGraph(OrtcBackend*, const OrtcGraphLoadInfo* info, OrtcGraph** out) {
  return Guard([&] {
    if (!info || !out || info->struct_size < sizeof(OrtcGraphLoadInfo) || !info->program)
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "load_graph: incomplete load info");
    for (uint32_t i = 0; i < info->num_options; ++i) {
      const std::string key = info->options[i].key ? info->options[i].key : "";
      if (key != "enable_cuda_graph" && key != "enable_profiling")
        return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                    "unknown cuda option '" + key + "' (enable_cuda_graph, enable_profiling)");
    }
    // The host keeps the mapped binary until release_graph: the views stay valid.
    ProgramParts parts;
    parts.graph = info->graph_name ? info->graph_name : "";
    parts.program = {static_cast<const char*>(info->program),
                     static_cast<size_t>(info->program_size)};
    for (uint32_t i = 0; i < info->num_weights; ++i)
      parts.weights.emplace_back(static_cast<const char*>(info->weights[i].data),
                                 static_cast<size_t>(info->weights[i].size));
    parts.source = SourceOf(*info);
    auto program = ProgramInterpreter::Load(std::move(parts));
    if (!program.ok()) return FromStatus(program.status());
    auto* g = new EmulatedGraph{
        info->graph_name ? info->graph_name : "", std::move(program).value(), {}, {}, {}};
    const fbc::Program& p = g->program.program();
    g->touches = cuda_rt::FindIoTouches(p, Buffers(p.inputs()), Buffers(p.outputs()));
    *out = reinterpret_cast<OrtcGraph*>(g);
    return ORTC_PLUGIN_OK;
  });
}

OrtcPluginStatus RunGraph(OrtcGraph* graph, const OrtcTensorRef* inputs, uint32_t num_inputs,
                          OrtcTensorRef* outputs, uint32_t num_outputs) {
  return Guard([&] {
    if (!graph || (num_inputs && !inputs) || (num_outputs && !outputs))
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "run_graph: null argument");
    auto* g = reinterpret_cast<EmulatedGraph*>(graph);
    std::lock_guard<std::mutex> lock(g->mu);
    // Host and "device" memory are both host memory here. Device-resident tensors are bound
    // into the program as the CUDA runtime binds them; the rest is copied in and out.
    if (num_inputs != g->touches.input_first.size() ||
        num_outputs != g->touches.output_first.size())
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                  "graph '" + g->name + "' takes " + std::to_string(g->touches.input_first.size()) +
                      " inputs and " + std::to_string(g->touches.output_first.size()) + " outputs");
    const BoundMemory bound = Bind(*g, inputs, num_inputs, outputs, num_outputs);
    std::vector<Tensor> in;
    for (uint32_t i = 0; i < num_inputs; ++i) {
      const OrtcTensorRef& t = inputs[i];
      in.push_back(Tensor::Borrow(static_cast<DataType>(t.dtype),
                                  std::vector<int64_t>(t.dims, t.dims + t.rank), t.data, nullptr));
    }
    StepCounts counts;
    auto result = g->program.Run(in, &counts, {}, &bound);
    if (!result.ok()) return FromStatus(result.status());
    if (result->size() != num_outputs)
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                  "graph '" + g->name + "' has " + std::to_string(result->size()) + " outputs");
    for (uint32_t i = 0; i < num_outputs; ++i) {
      const Tensor& r = (*result)[i];
      if (r.byte_size() != outputs[i].byte_size)
        return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                    "graph '" + g->name + "' output " + std::to_string(i) + " has " +
                        std::to_string(outputs[i].byte_size) + " bytes; the program's has " +
                        std::to_string(r.byte_size()));
      if (r.byte_size() && !bound.outputs[i]) std::memcpy(outputs[i].data, r.raw(), r.byte_size());
    }
    g->last = counts;
    return ORTC_PLUGIN_OK;
  });
}

void ReleaseGraph(OrtcGraph* graph) {
  delete reinterpret_cast<EmulatedGraph*>(graph);
}

const char* LastError(OrtcBackend*) {
  return t_error.c_str();
}

OrtcPluginStatus DescribeGraph(OrtcGraph* graph, char* buffer, size_t capacity, size_t* length) {
  return Guard([&] {
    if (!graph) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "describe_graph: null graph");
    return WriteText(R"({"execution":"emulator"})", buffer, capacity, length);
  });
}

OrtcPluginStatus LastRunProfile(OrtcGraph*, char*, size_t, size_t*) {
  return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "the CUDA emulator does not profile");
}

OrtcPluginStatus AllocateDevice(OrtcBackend*, uint64_t bytes, void** out) {
  if (!out) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "allocate_device: null argument");
  *out = nullptr;
  if (bytes == 0) return ORTC_PLUGIN_OK;
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p) return Fail(ORTC_PLUGIN_EP_FAIL, "out of memory");
  std::memset(p, 0, bytes);
  Allocations& a = Live();
  std::lock_guard<std::mutex> lock(a.mu);
  a.live[p] = bytes;
  *out = p;
  return ORTC_PLUGIN_OK;
}

void FreeDevice(OrtcBackend*, void* data) {
  Allocations& a = Live();
  std::lock_guard<std::mutex> lock(a.mu);
  if (a.live.erase(data)) std::free(data);
}

OrtcPluginStatus CopyMemory(OrtcBackend*, void* dst, int32_t, const void* src, int32_t,
                            uint64_t bytes) {
  if (bytes && (!dst || !src)) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "copy_memory: null");
  if (bytes) std::memmove(dst, src, bytes);
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus CopyMemoryRows(OrtcBackend*, void* dst, int32_t, uint64_t dst_pitch,
                                const void* src, int32_t, uint64_t src_pitch, uint64_t row_bytes,
                                uint64_t rows) {
  if (row_bytes && rows && (!dst || !src))
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "copy_memory_rows: null");
  for (uint64_t r = 0; r < rows && row_bytes; ++r)
    std::memmove(static_cast<char*>(dst) + r * dst_pitch,
                 static_cast<const char*>(src) + r * src_pitch, row_bytes);
  return ORTC_PLUGIN_OK;
}

OrtcBackend g_backend = {ORTC_BACKEND_ABI_VERSION,
                         sizeof(OrtcBackend),
                         "cuda",
                         "ortc CUDA emulator (host)",
                         &DescribeDevice,
                         &LoadGraph,
                         &RunGraph,
                         &ReleaseGraph,
                         &LastError,
                         &DescribeGraph,
                         &LastRunProfile,
                         &AllocateDevice,
                         &FreeDevice,
                         &CopyMemory,
                         &CopyMemoryRows,
                         nullptr};

}  // namespace
}  // namespace ortc::test::cuda

extern "C" {

__attribute__((visibility("default"))) OrtcPluginStatus ortc_backend_create(
    uint32_t host_abi_version, const OrtcHostApi*, OrtcBackend** out) {
  if (host_abi_version != ORTC_BACKEND_ABI_VERSION) return ORTC_PLUGIN_ABI_MISMATCH;
  if (!out) return ORTC_PLUGIN_INVALID_ARGUMENT;
  *out = &ortc::test::cuda::g_backend;
  return ORTC_PLUGIN_OK;
}

__attribute__((visibility("default"))) void ortc_backend_release(OrtcBackend*) {}

}  // extern "C"
