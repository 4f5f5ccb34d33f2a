// The runtime side of the npu backend: the OrtcBackend table and its two exported entry points.
// load_graph validates a program (npu_program.h) against the weights the host hands over and
// keeps pointers into them; run_graph checks every tensor against the program, then runs the
// steps on the host (npu_kernels.h). The simulated device has no memory of its own: tensors stay
// in host memory, and check_binary compares the binary's NPU SDK version with this machine's.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "abi_helpers.h"
#include "npu_kernels.h"
#include "npu_program.h"
#include "sdk_check.h"
#include "sdk_version.h"

namespace npu {
namespace {

// One backend instance: the table first, so the table pointer the host holds is this object.
struct NpuBackend {
  OrtcBackend table;
  HostServices host;
};

struct NpuGraph {
  std::string name;
  Program program;
  std::vector<const int8_t*> weights;        // per slot: int8 slots, into the host's mapping
  std::vector<std::vector<int32_t>> biases;  // per slot: int32 slots, decoded (any alignment)
  std::mutex mu;                             // the ABI: runs of one graph are serialised here
};

NpuGraph& Graph(OrtcGraph* graph) {
  return *reinterpret_cast<NpuGraph*>(graph);
}

std::string Str(const char* s) {
  return s ? s : "";
}

OrtcPluginStatus DescribeDevice(OrtcBackend*, char* buffer, size_t capacity, size_t* length) {
  return Guard([&] {
    const std::string json = std::string("{\"device\":") + JsonString(kHardwareArchitecture) +
                             ",\"sdk_version\":" + JsonString(RuntimeSdkVersion()) +
                             ",\"simulated\":true}";
    return WriteText(json, buffer, capacity, length);
  });
}

// The weight blobs of a graph, checked against the program's slots.
OrtcPluginStatus BindWeights(const OrtcGraphLoadInfo& info, NpuGraph* g) {
  const std::vector<SlotRecord>& slots = g->program.slots;
  if (info.num_weights != slots.size() || (info.num_weights && !info.weights))
    return Fail(ORTC_PLUGIN_INVALID_GRAPH,
                "npu: graph '" + g->name + "' comes with " + std::to_string(info.num_weights) +
                    " weights, its program has " + std::to_string(slots.size()) + " slots");
  g->weights.assign(slots.size(), nullptr);
  g->biases.resize(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    const OrtcBlob& blob = info.weights[i];
    const uint64_t expected = ByteSize(slots[i].dtype, slots[i].dims);
    if (blob.size != expected || !blob.data)
      return Fail(ORTC_PLUGIN_INVALID_GRAPH,
                  "npu: graph '" + g->name + "' weight slot " + std::to_string(i) + " has " +
                      std::to_string(blob.size) + " bytes, its " + DimsText(slots[i].dims) +
                      " needs " + std::to_string(expected));
    const auto* bytes = static_cast<const uint8_t*>(blob.data);
    if (slots[i].dtype == kInt8) {
      g->weights[i] = static_cast<const int8_t*>(blob.data);
    } else {
      std::vector<int32_t>& bias = g->biases[i];
      bias.resize(static_cast<size_t>(expected / 4));
      for (size_t k = 0; k < bias.size(); ++k)
        bias[k] = static_cast<int32_t>(static_cast<uint32_t>(bytes[4 * k]) |
                                       static_cast<uint32_t>(bytes[4 * k + 1]) << 8 |
                                       static_cast<uint32_t>(bytes[4 * k + 2]) << 16 |
                                       static_cast<uint32_t>(bytes[4 * k + 3]) << 24);
    }
  }
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus LoadGraph(OrtcBackend* self, const OrtcGraphLoadInfo* info, OrtcGraph** out) {
  return Guard([&] {
    if (!self || !info || !out || info->struct_size < sizeof(OrtcGraphLoadInfo))
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: load_graph: incomplete load info");
    if (info->num_options)
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                  "npu: unknown option '" + Str(info->options ? info->options[0].key : nullptr) +
                      "' (this backend has no options)");
    auto g = std::make_unique<NpuGraph>();
    g->name = Str(info->graph_name);
    std::string error;
    if (!ReadProgram(info->program, info->program_size, &g->program, &error))
      return Fail(ORTC_PLUGIN_INVALID_GRAPH, "npu: graph '" + g->name + "': " + error);
    if (const OrtcPluginStatus s = BindWeights(*info, g.get())) return s;
    reinterpret_cast<NpuBackend*>(self)->host.Log(0, "npu: graph '" + g->name + "' loaded, " +
                                                         std::to_string(g->program.steps.size()) +
                                                         " steps");
    *out = reinterpret_cast<OrtcGraph*>(g.release());
    return ORTC_PLUGIN_OK;
  });
}

// A tensor of the call against the program's record of it.
OrtcPluginStatus CheckRef(const NpuGraph& g, const OrtcTensorRef& ref, const TensorRecord& t,
                          const char* side, uint32_t index) {
  const std::string what =
      "npu: graph '" + g.name + "' " + side + " " + std::to_string(index) + " ('" + t.name + "')";
  if (ref.location != ORTC_MEMORY_HOST)
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                std::string("npu: ") + side + "s must be in host memory (" + what.substr(5) + ")");
  const std::vector<int64_t> dims =
      ref.dims ? std::vector<int64_t>(ref.dims, ref.dims + ref.rank) : std::vector<int64_t>();
  if (ref.dtype != t.dtype || dims != t.dims || (ref.rank && !ref.dims))
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                what + " is dtype " + std::to_string(ref.dtype) + " " + DimsText(dims) +
                    ", the program's is dtype " + std::to_string(t.dtype) + " " + DimsText(t.dims));
  const uint64_t bytes = ByteSize(t.dtype, t.dims);
  if (ref.byte_size != bytes || !ref.data)
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, what + " has " + std::to_string(ref.byte_size) +
                                                  " bytes at " + (ref.data ? "" : "NULL ") +
                                                  "its address, the program's needs " +
                                                  std::to_string(bytes));
  return ORTC_PLUGIN_OK;
}

void RunStep(const NpuGraph& g, const StepRecord& s, std::vector<std::vector<uint8_t>>& buffers) {
  const Program& p = g.program;
  const TensorRecord& x = p.tensors[s.input];
  const TensorRecord& y = p.tensors[s.output];
  const std::vector<int64_t>& w = p.slots[s.weight_slot].dims;
  StepQuant q;
  q.sx = s.sx;
  q.sw = s.sw;
  q.sb = s.sb;
  q.sy = s.sy;
  q.zx = s.zx;
  q.zy = s.zy;
  q.x_signed = x.dtype == kInt8;
  q.y_signed = y.dtype == kInt8;
  const void* in = buffers[s.input].data();
  void* out = buffers[s.output].data();
  if (s.kind == StepKind::kConv) {
    ConvShape shape;
    shape.n = x.dims[0];
    shape.c = x.dims[1];
    shape.h = x.dims[2];
    shape.w = x.dims[3];
    shape.m = w[0];
    shape.kh = w[2];
    shape.kw = w[3];
    shape.oh = y.dims[2];
    shape.ow = y.dims[3];
    shape.g = s.conv;
    const int32_t* bias =
        s.bias_slot >= 0 ? g.biases[static_cast<size_t>(s.bias_slot)].data() : nullptr;
    ConvQdq(shape, q, in, g.weights[s.weight_slot], bias, out);
  } else {
    MatMulShape shape;
    for (size_t i = 0; i + 2 < x.dims.size(); ++i) shape.batch *= x.dims[i];
    shape.m = x.dims[x.dims.size() - 2];
    shape.k = w[0];
    shape.n = w[1];
    MatMulQdq(shape, q, in, g.weights[s.weight_slot], out);
  }
}

OrtcPluginStatus RunGraph(OrtcGraph* graph, const OrtcTensorRef* inputs, uint32_t num_inputs,
                          OrtcTensorRef* outputs, uint32_t num_outputs) {
  return Guard([&] {
    if (!graph || (num_inputs && !inputs) || (num_outputs && !outputs))
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: run_graph: null argument");
    NpuGraph& g = Graph(graph);
    std::lock_guard<std::mutex> lock(g.mu);
    const Program& p = g.program;
    if (num_inputs != p.inputs.size() || num_outputs != p.outputs.size())
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                  "npu: graph '" + g.name + "' takes " + std::to_string(p.inputs.size()) +
                      " inputs and " + std::to_string(p.outputs.size()) +
                      " outputs, the call has " + std::to_string(num_inputs) + " and " +
                      std::to_string(num_outputs));
    for (uint32_t i = 0; i < num_inputs; ++i)
      if (const OrtcPluginStatus s = CheckRef(g, inputs[i], p.tensors[p.inputs[i]], "input", i))
        return s;
    for (uint32_t i = 0; i < num_outputs; ++i)
      if (const OrtcPluginStatus s = CheckRef(g, outputs[i], p.tensors[p.outputs[i]], "output", i))
        return s;
    // Every tensor gets a buffer of its own and the inputs are copied in first, so an output
    // may be the very memory of an input.
    std::vector<std::vector<uint8_t>> buffers(p.tensors.size());
    for (size_t t = 0; t < p.tensors.size(); ++t)
      buffers[t].resize(static_cast<size_t>(ByteSize(p.tensors[t].dtype, p.tensors[t].dims)));
    for (uint32_t i = 0; i < num_inputs; ++i)
      std::memcpy(buffers[p.inputs[i]].data(), inputs[i].data, buffers[p.inputs[i]].size());
    for (const StepRecord& s : p.steps) RunStep(g, s, buffers);
    for (uint32_t i = 0; i < num_outputs; ++i)
      std::memcpy(outputs[i].data, buffers[p.outputs[i]].data(), buffers[p.outputs[i]].size());
    return ORTC_PLUGIN_OK;
  });
}

void ReleaseGraph(OrtcGraph* graph) {
  delete reinterpret_cast<NpuGraph*>(graph);
}

const char* BackendLastError(OrtcBackend*) {
  return LastError();
}

OrtcPluginStatus DescribeGraph(OrtcGraph* graph, char* buffer, size_t capacity, size_t* length) {
  return Guard([&] {
    if (!graph) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: describe_graph: null graph");
    return WriteText("{\"runs_on\":\"host simulation\",\"steps\":" +
                         std::to_string(Graph(graph).program.steps.size()) + "}",
                     buffer, capacity, length);
  });
}

OrtcPluginStatus LastRunProfile(OrtcGraph*, char*, size_t, size_t*) {
  return Guard([] { return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: profiling not supported"); });
}

OrtcPluginStatus AllocateDevice(OrtcBackend*, uint64_t, void** out) {
  return Guard([&] {
    if (out) *out = nullptr;
    return Fail(ORTC_PLUGIN_UNSUPPORTED, "npu: no device memory; tensors stay in host memory");
  });
}

void FreeDevice(OrtcBackend*, void*) {}  // allocate_device never hands out memory

// The simulated device has no memory of its own: both sides are host memory.
OrtcPluginStatus CopyMemory(OrtcBackend*, void* dst, int32_t, const void* src, int32_t,
                            uint64_t bytes) {
  return Guard([&] {
    if (bytes && (!dst || !src))
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: copy_memory: null pointer");
    if (bytes) std::memmove(dst, src, static_cast<size_t>(bytes));
    return ORTC_PLUGIN_OK;
  });
}

OrtcPluginStatus CopyMemoryRows(OrtcBackend*, void* dst, int32_t, uint64_t dst_pitch,
                                const void* src, int32_t, uint64_t src_pitch, uint64_t row_bytes,
                                uint64_t rows) {
  return Guard([&] {
    if (!row_bytes || !rows) return ORTC_PLUGIN_OK;
    if (!dst || !src)
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: copy_memory_rows: null pointer");
    for (uint64_t r = 0; r < rows; ++r)
      std::memmove(static_cast<char*>(dst) + r * dst_pitch,
                   static_cast<const char*>(src) + r * src_pitch, static_cast<size_t>(row_bytes));
    return ORTC_PLUGIN_OK;
  });
}

OrtcPluginStatus CheckBinary(OrtcBackend*, const OrtcBinaryFacts* facts, int32_t* verdict,
                             char* reason, size_t capacity, size_t* length) {
  return Guard([&] {
    if (!facts || !verdict || facts->struct_size < sizeof(OrtcBinaryFacts) ||
        (facts->num_versions && !facts->versions))
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: check_binary: incomplete facts");
    const char* compiled = nullptr;
    for (uint32_t i = 0; i < facts->num_versions; ++i)
      if (facts->versions[i].key && std::strcmp(facts->versions[i].key, kSdkVersionKey) == 0)
        compiled = facts->versions[i].value ? facts->versions[i].value : "";
    const SdkVerdict v = CheckSdk(compiled, RuntimeSdkVersion());
    *verdict = v.verdict;
    return WriteText(v.reason, reason, capacity, length);
  });
}

}  // namespace
}  // namespace npu

NPU_EXPORT OrtcPluginStatus ortc_backend_create(uint32_t host_abi_version, const OrtcHostApi* host,
                                                OrtcBackend** out) {
  using namespace npu;
  return Guard([&] {
    if (const OrtcPluginStatus s = CheckHostAbi(host_abi_version, out)) return s;
    auto* b = new NpuBackend{};
    b->table = {ORTC_BACKEND_ABI_VERSION,
                sizeof(OrtcBackend),
                "npu",
                "npu skeleton 0.1",
                &DescribeDevice,
                &LoadGraph,
                &RunGraph,
                &ReleaseGraph,
                &BackendLastError,
                &DescribeGraph,
                &LastRunProfile,
                &AllocateDevice,
                &FreeDevice,
                &CopyMemory,
                &CopyMemoryRows,
                &CheckBinary};
    b->host.Set(host);
    *out = &b->table;
    return ORTC_PLUGIN_OK;
  });
}

NPU_EXPORT void ortc_backend_release(OrtcBackend* backend) {
  delete reinterpret_cast<npu::NpuBackend*>(backend);
}
