// The stand-in libcuda.so.1: every driver entry point the CUDA plugin resolves, with host memory
// standing in for device memory. Copies and memsets are executed (their device ranges checked),
// kernel launches recorded, stream capture builds graphs that cuGraphLaunch replays. One
// device, compute capability from ORTC_STANDIN_SM (default 90).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "standin_api.h"
#include "standin_state.h"

namespace {

using ortc::standin::Global;
using ortc::standin::Graph;
using ortc::standin::Node;
using ortc::standin::Stream;

int g_context_tag = 0;
CUcontext Context() {
  return reinterpret_cast<CUcontext>(&g_context_tag);
}
thread_local int t_context_depth = 0;

struct Module {
  std::string image;
};
struct Function {
  std::string name;
};
struct Event {
  double ms = 0;
};

CUresult Call(const char* name) {
  ortc::standin::Record(name);
  return ortc_standin_fail(name) ? CUDA_ERROR_UNKNOWN : CUDA_SUCCESS;
}

Stream* StreamOf(CUstream s) {
  auto& g = Global();
  std::lock_guard<std::mutex> lock(g.mu);
  auto it = g.streams.find(s);
  return it == g.streams.end() ? nullptr : it->second;
}

// Done now, or recorded as a graph node when the stream is capturing (only then is a Node
// with its strings built: issuing outside a capture allocates nothing).
CUresult IssueTransfer(CUstream s, Node::Kind kind, const char* direction, uintptr_t dst,
                       uintptr_t src, size_t bytes, unsigned char value) {
  Stream* st = StreamOf(s);
  if (s && !st) return CUDA_ERROR_INVALID_HANDLE;
  if (st && st->capturing) {
    st->graph->nodes.push_back({kind, dst, src, bytes, value, direction});
    return CUDA_SUCCESS;
  }
  return ortc::standin::ExecuteTransfer(kind, direction, dst, src, bytes, value)
             ? CUDA_SUCCESS
             : CUDA_ERROR_INVALID_VALUE;
}

CUresult IssueWork(CUstream s, const char* what, const char* detail) {
  Stream* st = StreamOf(s);
  if (s && !st) return CUDA_ERROR_INVALID_HANDLE;
  if (st && st->capturing) {
    st->graph->nodes.push_back({Node::kWork, 0, 0, 0, 0, std::string(what) + detail});
    return CUDA_SUCCESS;
  }
  ortc::standin::CountWork("exec:", what, detail);
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult cuInit(unsigned int) {
  return Call("cuInit");
}

// NVRTC opens libcuda.so.1 too and asks it for the driver's private export tables; the stand-in
// has none to give. Without this entry NVRTC calls a null pointer, so a process that compiles
// and runs (ortc tune) could not use the stand-ins.
CUresult cuGetExportTable(const void** table, const CUuuid*) {
  if (table) *table = nullptr;
  return CUDA_ERROR_NOT_SUPPORTED;
}
CUresult cuDriverGetVersion(int* v) {
  *v = 13000;
  return Call("cuDriverGetVersion");
}
CUresult cuDeviceGetCount(int* n) {
  *n = 1;
  return Call("cuDeviceGetCount");
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return Call("cuDeviceGet");
}
CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  const char* env = std::getenv("ORTC_STANDIN_SM");
  const int sm = env ? std::atoi(env) : 90;
  if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) {
    *v = sm / 10;
  } else if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) {
    *v = sm % 10;
  } else {
    *v = 0;
  }
  return Call("cuDeviceGetAttribute");
}
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "ortc stand-in GPU", static_cast<size_t>(len));
  if (len > 0) name[len - 1] = '\0';
  return Call("cuDeviceGetName");
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) {
  *c = Context();
  return Call("cuDevicePrimaryCtxRetain");
}
CUresult cuDevicePrimaryCtxRelease(CUdevice) {
  return Call("cuDevicePrimaryCtxRelease");
}
CUresult cuCtxPushCurrent(CUcontext c) {
  if (c != Context()) return CUDA_ERROR_INVALID_CONTEXT;
  ++t_context_depth;
  ortc_standin_object("context_push", 1);
  return Call("cuCtxPushCurrent");
}
CUresult cuCtxPopCurrent(CUcontext* c) {
  if (t_context_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --t_context_depth;
  ortc_standin_object("context_push", -1);
  if (c) *c = Context();
  return Call("cuCtxPopCurrent");
}

CUresult cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned int, CUjit_option*, void**) {
  if (ortc::standin::CaptureForbids("cuModuleLoadDataEx"))
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  const CUresult r = Call("cuModuleLoadDataEx");
  if (r != CUDA_SUCCESS) return r;
  // A cubin is an ELF image (size from its header is not needed: names are searched in the
  // first MiBs); PTX is NUL-terminated text.
  const char* p = static_cast<const char*>(image);
  size_t size = 0;
  if (std::memcmp(p,
                  "\x7f"
                  "ELF",
                  4) == 0) {
    const uint64_t shoff = *reinterpret_cast<const uint64_t*>(p + 0x28);
    const uint16_t shentsize = *reinterpret_cast<const uint16_t*>(p + 0x3A);
    const uint16_t shnum = *reinterpret_cast<const uint16_t*>(p + 0x3C);
    size = shoff + static_cast<size_t>(shentsize) * shnum;
  } else {
    size = std::strlen(p);
  }
  *m = reinterpret_cast<CUmodule>(new Module{std::string(p, size)});
  ortc_standin_object("module", 1);
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) {
  delete reinterpret_cast<Module*>(m);
  ortc_standin_object("module", -1);
  return Call("cuModuleUnload");
}
// A function exists when its name is in the image (an ELF symbol name or a PTX .entry).
CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  const CUresult r = Call("cuModuleGetFunction");
  if (r != CUDA_SUCCESS) return r;
  const auto* mod = reinterpret_cast<Module*>(m);
  const std::string needle = std::string(name) + '\0';
  const std::string entry = std::string(".entry ") + name;
  if (mod->image.find(needle) == std::string::npos && mod->image.find(entry) == std::string::npos)
    return CUDA_ERROR_NOT_FOUND;
  *f = reinterpret_cast<CUfunction>(new Function{name});  // kept for the process, like a module's
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned, CUstream s, void** params, void**) {
  const CUresult r = Call("cuLaunchKernel");
  if (r != CUDA_SUCCESS) return r;
  if (!f || !gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  (void)params;  // the parameter count is not known here
  return IssueWork(s, "cuLaunchKernel:", reinterpret_cast<Function*>(f)->name.c_str());
}

CUresult cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  if (ortc::standin::CaptureForbids("cuMemAlloc")) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  const CUresult r = Call("cuMemAlloc");
  if (r != CUDA_SUCCESS) return r;
  void* mem = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!mem) return CUDA_ERROR_OUT_OF_MEMORY;
  std::memset(mem, 0xA5, bytes);  // never zero by luck: reads of unset memory show
  *p = reinterpret_cast<CUdeviceptr>(mem);
  auto& g = Global();
  std::lock_guard<std::mutex> lock(g.mu);
  g.device_allocs[reinterpret_cast<uintptr_t>(mem)] = bytes;
  g.live.Add("device_alloc", "", "", 1);
  return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p) {
  if (ortc::standin::CaptureForbids("cuMemFree")) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  Call("cuMemFree");
  auto& g = Global();
  std::lock_guard<std::mutex> lock(g.mu);
  auto it = g.device_allocs.find(static_cast<uintptr_t>(p));
  if (it == g.device_allocs.end()) {
    g.counts.Add("error:cuMemFree of an unknown pointer", "", "", 1);
    return CUDA_ERROR_INVALID_VALUE;
  }
  g.device_allocs.erase(it);
  g.live.Add("device_alloc", "", "", -1);
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}
CUresult cuMemHostAlloc(void** p, size_t bytes, unsigned int) {
  if (ortc::standin::CaptureForbids("cuMemHostAlloc")) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  const CUresult r = Call("cuMemHostAlloc");
  if (r != CUDA_SUCCESS) return r;
  const size_t rounded = (bytes + 4095) / 4096 * 4096;
  *p = std::aligned_alloc(4096, rounded);
  if (!*p) return CUDA_ERROR_OUT_OF_MEMORY;
  // The driver page-locks pinned memory when it allocates it: resident from then on, so the
  // first copy through it faults in nothing (timings taken with the stand-in then match).
  std::memset(*p, 0, rounded);
  ortc_standin_object("host_alloc", 1);
  return CUDA_SUCCESS;
}
CUresult cuMemFreeHost(void* p) {
  Call("cuMemFreeHost");
  std::free(p);
  ortc_standin_object("host_alloc", -1);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t bytes) {
  if (ortc::standin::CaptureForbids("cuMemcpyHtoD")) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  const CUresult r = Call("cuMemcpyHtoD");
  if (r != CUDA_SUCCESS) return r;
  return ortc::standin::ExecuteTransfer(Node::kCopy, "HtoD:sync", dst,
                                        reinterpret_cast<uintptr_t>(src), bytes, 0)
             ? CUDA_SUCCESS
             : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t bytes, CUstream s) {
  const CUresult r = Call("cuMemcpyHtoDAsync");
  if (r != CUDA_SUCCESS) return r;
  return IssueTransfer(s, Node::kCopy, "HtoD", dst, reinterpret_cast<uintptr_t>(src), bytes, 0);
}
CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t bytes, CUstream s) {
  const CUresult r = Call("cuMemcpyDtoHAsync");
  if (r != CUDA_SUCCESS) return r;
  return IssueTransfer(s, Node::kCopy, "DtoH", reinterpret_cast<uintptr_t>(dst), src, bytes, 0);
}
CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  const CUresult r = Call("cuMemcpyDtoDAsync");
  if (r != CUDA_SUCCESS) return r;
  return IssueTransfer(s, Node::kCopy, "DtoD", dst, src, bytes, 0);
}
// One call, one transfer a row (bytes counted by direction as for the 1-D copies).
CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D* c, CUstream s) {
  const CUresult r = Call("cuMemcpy2DAsync");
  if (r != CUDA_SUCCESS) return r;
  if (!c || c->srcXInBytes || c->srcY || c->dstXInBytes || c->dstY ||
      c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY ||
      (c->Height > 1 && (c->srcPitch < c->WidthInBytes || c->dstPitch < c->WidthInBytes)))
    return CUDA_ERROR_INVALID_VALUE;  // the subset ortc uses: no offsets, no arrays
  const bool from_device = c->srcMemoryType == CU_MEMORYTYPE_DEVICE,
             to_device = c->dstMemoryType == CU_MEMORYTYPE_DEVICE;
  const char* direction = from_device ? (to_device ? "DtoD" : "DtoH") : "HtoD";
  const uintptr_t src = from_device ? c->srcDevice : reinterpret_cast<uintptr_t>(c->srcHost);
  const uintptr_t dst = to_device ? c->dstDevice : reinterpret_cast<uintptr_t>(c->dstHost);
  for (size_t row = 0; row < c->Height; ++row) {
    const CUresult t = IssueTransfer(s, Node::kCopy, direction, dst + row * c->dstPitch,
                                     src + row * c->srcPitch, c->WidthInBytes, 0);
    if (t != CUDA_SUCCESS) return t;
  }
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream s) {
  const CUresult r = Call("cuMemsetD8Async");
  if (r != CUDA_SUCCESS) return r;
  return IssueTransfer(s, Node::kMemset, "memset", dst, 0, bytes, value);
}

CUresult cuStreamCreate(CUstream* s, unsigned int) {
  const CUresult r = Call("cuStreamCreate");
  if (r != CUDA_SUCCESS) return r;
  auto* st = new Stream();
  *s = reinterpret_cast<CUstream>(st);
  auto& g = Global();
  std::lock_guard<std::mutex> lock(g.mu);
  g.streams[*s] = st;
  g.live.Add("stream", "", "", 1);
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream s) {
  Call("cuStreamDestroy");
  auto& g = Global();
  std::lock_guard<std::mutex> lock(g.mu);
  auto it = g.streams.find(s);
  if (it == g.streams.end()) return CUDA_ERROR_INVALID_HANDLE;
  delete it->second->graph;
  delete it->second;
  g.streams.erase(it);
  g.live.Add("stream", "", "", -1);
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream s) {
  const CUresult r = Call("cuStreamSynchronize");
  if (r != CUDA_SUCCESS) return r;
  Stream* st = StreamOf(s);
  if (st && st->capturing) {
    st->invalidated = true;
    ortc::standin::Record("error:during capture:cuStreamSynchronize");
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return CUDA_SUCCESS;
}
CUresult cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  const CUresult r = Call("cuStreamBeginCapture");
  if (r != CUDA_SUCCESS) return r;
  Stream* st = StreamOf(s);
  if (!st) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // the legacy stream cannot capture
  if (st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  st->capturing = true;
  st->invalidated = false;
  st->mode = mode;
  st->capture_thread = std::this_thread::get_id();
  st->graph = new Graph();
  return CUDA_SUCCESS;
}
CUresult cuStreamEndCapture(CUstream s, CUgraph* graph) {
  Stream* st = StreamOf(s);
  if (!st || !st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  st->capturing = false;
  Graph* g = st->graph;
  st->graph = nullptr;
  const CUresult r = Call("cuStreamEndCapture");
  if (r != CUDA_SUCCESS || st->invalidated) {
    delete g;
    *graph = nullptr;
    return r != CUDA_SUCCESS ? r : CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  *graph = reinterpret_cast<CUgraph>(g);
  ortc_standin_object("graph", 1);
  return CUDA_SUCCESS;
}
CUresult cuGraphInstantiate(CUgraphExec* exec, CUgraph graph, unsigned long long) {
  const CUresult r = Call("cuGraphInstantiate");
  if (r != CUDA_SUCCESS) return r;
  *exec = reinterpret_cast<CUgraphExec>(new Graph(*reinterpret_cast<Graph*>(graph)));
  ortc_standin_object("graph_exec", 1);
  return CUDA_SUCCESS;
}
CUresult cuGraphDestroy(CUgraph graph) {
  delete reinterpret_cast<Graph*>(graph);
  ortc_standin_object("graph", -1);
  return Call("cuGraphDestroy");
}
CUresult cuGraphExecDestroy(CUgraphExec exec) {
  delete reinterpret_cast<Graph*>(exec);
  ortc_standin_object("graph_exec", -1);
  return Call("cuGraphExecDestroy");
}
// Replays the captured nodes in order; each is counted as "replay:<what>".
CUresult cuGraphLaunch(CUgraphExec exec, CUstream s) {
  const CUresult r = Call("cuGraphLaunch");
  if (r != CUDA_SUCCESS) return r;
  if (StreamOf(s) && StreamOf(s)->capturing) return CUDA_ERROR_NOT_SUPPORTED;
  for (const Node& n : reinterpret_cast<Graph*>(exec)->nodes) {
    if (n.kind != Node::kWork &&
        !ortc::standin::ExecuteTransfer(n.kind, n.what.c_str(), n.dst, n.src, n.bytes, n.value))
      return CUDA_ERROR_INVALID_VALUE;
    ortc::standin::CountWork("replay:", n.what.c_str(), "");
  }
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* e, unsigned int) {
  const CUresult r = Call("cuEventCreate");
  if (r != CUDA_SUCCESS) return r;
  *e = reinterpret_cast<CUevent>(new Event());
  ortc_standin_object("event", 1);
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent e) {
  delete reinterpret_cast<Event*>(e);
  ortc_standin_object("event", -1);
  return Call("cuEventDestroy");
}
CUresult cuEventRecord(CUevent e, CUstream s) {
  const CUresult r = Call("cuEventRecord");
  if (r != CUDA_SUCCESS) return r;
  Stream* st = StreamOf(s);
  if (st && st->capturing) return IssueWork(s, "event", "");
  // Work runs at issue: issue time (plus the simulated cost of the work so far) is device time.
  reinterpret_cast<Event*>(e)->ms = ortc::standin::DeviceClockMs();
  return CUDA_SUCCESS;
}
// Work runs at issue: the event is complete once recorded.
CUresult cuEventSynchronize(CUevent) {
  return Call("cuEventSynchronize");
}
CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  const CUresult r = Call("cuEventElapsedTime");
  if (r != CUDA_SUCCESS) return r;
  *ms = static_cast<float>(reinterpret_cast<Event*>(end)->ms - reinterpret_cast<Event*>(start)->ms);
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult r, const char** name) {
  static thread_local std::string text;
  switch (r) {
    case CUDA_SUCCESS:
      *name = "CUDA_SUCCESS";
      break;
    case CUDA_ERROR_UNKNOWN:
      *name = "CUDA_ERROR_UNKNOWN";
      break;
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
      *name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
      break;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
      *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
      break;
    default:
      text = "CUDA_ERROR_" + std::to_string(static_cast<int>(r));
      *name = text.c_str();
  }
  return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult r, const char** text) {
  *text =
      r == CUDA_ERROR_UNKNOWN ? "injected failure (ORTC_STANDIN_FAIL)" : "stand-in driver error";
  return CUDA_SUCCESS;
}

// Library stand-ins enqueue their work through this.
CUresult ortc_standin_enqueue(CUstream s, const char* what) {
  return IssueWork(s, what, "");
}

}  // extern "C"
