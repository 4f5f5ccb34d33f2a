// Loading (verification, buffer placement, module choice, library plans, staging, CUDA graph
// capture) and running of one CUDA program.
#include "graph_instance.h"
#include "program_validator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

#include "module_select.h"

namespace ortc::cuda_rt {
namespace {

constexpr uint64_t kAlign = 256;  // cuMemAlloc's guarantee, kept for every sub-buffer

uint64_t AlignUp(uint64_t v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}

// Milliseconds since `since`, and `since` moved to now: consecutive load parts timed in turn.
double Lap(std::chrono::steady_clock::time_point* since) {
  const auto now = std::chrono::steady_clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - *since).count();
  *since = now;
  return ms;
}

// Opens, on a thread of its own, the vendor libraries the program's steps call, so that this
// happens while the loading thread creates the CUDA context: neither needs the other, and both
// are load-time waits of their own (cuBLASLt's 540 MB library took 45-70 ms to open on a warm
// page cache on the build machine; cuInit and the primary context took about 230 ms on an
// H200 host). The tables are function-local statics: a thread that asks while this one
// initialises waits for it. Returns a thread to join (not joinable when nothing is to open).
std::thread OpenLibrariesAhead(const fbc::Program& program) {
  bool conv = false, gemm = false;
  for (const auto* s : *program.steps()) {
    conv = conv || s->conv();
    gemm = gemm || s->gemm() || s->strided_gemm();
  }
  if (!conv && !gemm) return {};
  try {
    return std::thread([conv, gemm] {
      if (gemm) (void)CublasLt();
      if (conv) (void)Cudnn();
    });
  } catch (const std::system_error&) {
    return {};  // no thread to spare: the loading thread opens them when it needs them
  }
}

std::string BufferName(const fbc::Buffer& b, size_t i) {
  return b.name() ? "'" + b.name()->str() + "'" : "#" + std::to_string(i);
}

}  // namespace

GraphInstance::~GraphInstance() {
  if (!dev_) return;
  ScopedContext scope(dev_->context);
  // Everything that references the handles, stream or device memory goes first.
  variants_.clear();
  graph_.Reset();
  profile_.Reset();
  staging_.Reset();
  steps_.clear();
  if (lib_.cudnn) Cudnn().cudnnDestroy(lib_.cudnn);
  if (lib_.cublas) CublasLt().cublasLtDestroy(lib_.cublas);
  if (stream_) Driver().cuStreamDestroy(stream_);
}

OrtcPluginStatus GraphInstance::Load(const OrtcGraphLoadInfo& info,
                                     std::unique_ptr<GraphInstance>* out) {
  if (info.struct_size < sizeof(OrtcGraphLoadInfo) || !info.program || !info.content_id ||
      (info.num_options && !info.options))
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "incomplete graph load info");
  std::unique_ptr<GraphInstance> g(new GraphInstance());
  g->name_ = info.graph_name ? info.graph_name : "";
  g->content_id_ = info.content_id;
  ORTC_PLUGIN_TRY(ParseLoadOptions(info, &g->options_));
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(info.program), info.program_size);
  if (!fbc::VerifyProgramBuffer(verifier))
    return Fail(ORTC_PLUGIN_INVALID_GRAPH, "graph '" + g->name_ + "': the CUDA program is corrupt");
  g->program_ = fbc::GetProgram(info.program);
  if (std::string invalid = cuda::ValidateCudaProgram(*g->program_, info.num_weights);
      !invalid.empty())
    return Fail(ORTC_PLUGIN_INVALID_GRAPH,
                "graph '" + g->name_ + "': the CUDA program is invalid: " + invalid);
  auto lap = std::chrono::steady_clock::now();
  struct Joined {  // joined on every return below, failures included
    std::thread t;
    ~Joined() {
      if (t.joinable()) t.join();
    }
  } libraries{OpenLibrariesAhead(*g->program_)};
  ORTC_PLUGIN_TRY(AcquireDevice(&g->dev_));
  ScopedContext scope(g->dev_->context);
  if (!scope.ok()) return Fail(ORTC_PLUGIN_EP_FAIL, "cannot make the CUDA context current");
  ORTC_CU(Driver().cuStreamCreate(&g->stream_, CU_STREAM_NON_BLOCKING));
  g->lib_.stream = g->stream_;
  g->lib_.precision = g->program_->precision();
  g->load_ms_.device = Lap(&lap);
  ORTC_PLUGIN_TRY(g->ResolveBuffers(info));
  g->load_ms_.staging = Lap(&lap) - g->load_ms_.weights;  // ResolveBuffers timed its weights
  ORTC_PLUGIN_TRY(g->LoadModule(info));
  g->load_ms_.module = Lap(&lap);
  ORTC_PLUGIN_TRY(g->PlanSteps(g->buffers_, &g->steps_));
  g->load_ms_.plans = Lap(&lap);
  g->io_touches_ = FindIoTouches(*g->program_, g->inputs_, g->outputs_);
  for (IoBinding* b : {&g->offered_, &g->bound_run_}) {
    b->inputs.assign(g->inputs_.size(), 0);
    b->outputs.assign(g->outputs_.size(), 0);
  }
  g->offered_in_bytes_.assign(g->inputs_.size(), 0);
  g->offered_out_bytes_.assign(g->outputs_.size(), 0);
  ORTC_PLUGIN_TRY(g->PrepareExecution());
  *out = std::move(g);
  return ORTC_PLUGIN_OK;
}

// Every buffer gets its fixed device address: arena offsets, IO buffers, shared weights, and
// aliases into those (an alias may only point at an earlier buffer, so there are no cycles).
// Host staging mirrors the IO buffers' offsets.
OrtcPluginStatus GraphInstance::ResolveBuffers(const OrtcGraphLoadInfo& info) {
  const auto& bufs = *program_->buffers();
  const uint64_t arena_bytes = program_->arena_bytes();
  buffers_.assign(bufs.size(), BufferView{});
  using BufferKind = fbc::BufferKind;
  auto io_list = [&](const flatbuffers::Vector<int32_t>& v, BufferKind kind, std::vector<int>* to) {
    for (int32_t b : v) {
      if (b < 0 || static_cast<uint32_t>(b) >= bufs.size() || bufs.Get(b)->kind() != kind)
        return false;
      to->push_back(b);
    }
    return true;
  };
  if (!io_list(*program_->inputs(), BufferKind::Input, &inputs_) ||
      !io_list(*program_->outputs(), BufferKind::Output, &outputs_))
    return Fail(ORTC_PLUGIN_INVALID_GRAPH,
                "graph '" + name_ + "': inputs/outputs name wrong buffers");
  // IO buffers: one allocation, each input/output at an aligned offset.
  std::vector<uint64_t> io_offset(bufs.size(), 0);
  uint64_t io_bytes = 0;
  for (uint32_t i = 0; i < bufs.size(); ++i) {
    const auto* b = bufs.Get(i);
    if (b->kind() == BufferKind::Input || b->kind() == BufferKind::Output) {
      io_offset[i] = io_bytes;
      io_bytes += AlignUp(b->byte_size());
    }
  }
  for (int b : inputs_) input_stage_.push_back(io_offset[b]);
  for (int b : outputs_) output_stage_.push_back(io_offset[b]);
  staging_.Allocate(io_bytes, &staging_reason_);  // without it, copies use the caller's memory
  host_copies_ = SharedHostCopyPool(options_.host_copy_threads ? options_.host_copy_threads
                                                               : DefaultHostCopyThreads());
  if (staging_.pinned()) {
    std::vector<uint64_t> output_bytes;
    for (int b : outputs_) output_bytes.push_back(bufs.Get(b)->byte_size());
    ORTC_PLUGIN_TRY(output_chunks_.Prepare(output_bytes));
  }
  ORTC_PLUGIN_TRY(AllocateDevice(*dev_, arena_bytes, &arena_));
  ORTC_PLUGIN_TRY(AllocateDevice(*dev_, io_bytes, &io_));
  ORTC_PLUGIN_TRY(AllocateDevice(*dev_, program_->workspace_bytes(), &workspace_));
  lib_.workspace = workspace_->ptr();
  lib_.workspace_bytes = program_->workspace_bytes();
  weights_.resize(info.num_weights);
  for (uint32_t i = 0; i < bufs.size(); ++i) {
    const auto* b = bufs.Get(i);
    BufferView& v = buffers_[i];
    v.dtype = b->dtype();
    v.byte_size = b->byte_size();
    const std::string where = "graph '" + name_ + "' buffer " + BufferName(*b, i);
    switch (b->kind()) {
      case BufferKind::Arena:
        if (b->offset() > arena_bytes || b->byte_size() > arena_bytes - b->offset())
          return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + " lies outside the arena");
        v.ptr = arena_->ptr() + b->offset();
        break;
      case BufferKind::Input:
      case BufferKind::Output:
        v.ptr = io_->ptr() + io_offset[i];
        break;
      case BufferKind::Weight: {
        const int slot = b->weight_slot();
        if (slot < 0 || static_cast<uint32_t>(slot) >= info.num_weights)
          return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + ": weight slot out of range");
        const OrtcBlob& w = info.weights[slot];
        if (w.size < b->byte_size())
          return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + ": weight smaller than the buffer");
        if (!weights_[slot]) {
          auto start = std::chrono::steady_clock::now();
          ORTC_PLUGIN_TRY(
              SharedWeight(*dev_, content_id_, w.pool_index, w.data, w.size, &weights_[slot]));
          load_ms_.weights += Lap(&start);
        }
        v.ptr = weights_[slot]->ptr();
        break;
      }
      case BufferKind::Alias: {
        const int of = b->alias_of();
        if (of < 0 || static_cast<uint32_t>(of) >= i)
          return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + ": alias of a later or missing buffer");
        const BufferView& base = buffers_[of];
        if (b->offset() > base.byte_size || b->byte_size() > base.byte_size - b->offset())
          return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + ": alias outside its buffer");
        v.ptr = base.ptr + b->offset();
        break;
      }
      default:
        return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + " has an unknown kind");
    }
  }
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus GraphInstance::LoadModule(const OrtcGraphLoadInfo& info) {
  const auto* modules = program_->modules();
  if (!modules || modules->size() == 0) return ORTC_PLUGIN_OK;  // library calls only
  std::vector<ModuleRef> refs;
  for (const auto* m : *modules)
    refs.push_back({m->target() ? m->target()->str() : "", m->kind() == fbc::ModuleKind::Ptx});
  const ModuleChoice choice = SelectModule(refs, dev_->sm);
  if (choice.index < 0)
    return Fail(ORTC_PLUGIN_UNSUPPORTED, "graph '" + name_ + "': " + choice.reason);
  const auto* m = modules->Get(static_cast<uint32_t>(choice.index));
  const std::string artefact = m->artefact() ? m->artefact()->str() : "";
  for (uint32_t i = 0; i < info.num_artefacts; ++i) {
    const OrtcBlob& a = info.artefacts[i];
    if (!a.name || artefact != a.name) continue;
    return SharedModule(*dev_, content_id_, artefact, a.data, a.size, choice.jit, &module_);
  }
  return Fail(ORTC_PLUGIN_INVALID_GRAPH,
              "graph '" + name_ + "': module artefact '" + artefact + "' is not in the binary");
}

OrtcPluginStatus GraphInstance::PlanSteps(const std::vector<BufferView>& buffers,
                                          std::vector<Step>* steps) {
  for (const auto* s : *program_->steps()) {
    Step step;
    step.name = s->name() ? s->name()->str() : "";
    const std::string where = "graph '" + name_ + "' step '" + step.name + "'";
    if (const auto* l = s->launch()) {
      if (!module_ || !l->kernel())
        return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + ": a kernel launch without a module");
      KernelStep k;
      ORTC_CU(Driver().cuModuleGetFunction(&k.fn, module_->get(), l->kernel()->c_str()));
      for (uint32_t i = 0; i < 3; ++i) {
        if (l->grid() && i < l->grid()->size()) k.grid[i] = l->grid()->Get(i);
        if (l->block() && i < l->block()->size()) k.block[i] = l->block()->Get(i);
      }
      k.shared = l->shared_bytes();
      if (l->args()) {
        for (int32_t a : *l->args()) {
          if (a >= static_cast<int32_t>(buffers.size()))
            return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + ": argument buffer out of range");
          k.args.push_back(a < 0 ? 0 : buffers[a].ptr);
        }
      }
      step.kind = StepKind::kKernel;
      step.what = std::move(k);
    } else if (const auto* c = s->conv()) {
      if (!Cudnn().loaded)
        return Fail(ORTC_PLUGIN_UNSUPPORTED, where + " needs cuDNN: " + Cudnn().error);
      if (!lib_.cudnn) {
        ORTC_CUDNN(Cudnn().cudnnCreate(&lib_.cudnn));
        // Bound once: runs and the graph capture issue on this stream only.
        ORTC_CUDNN(Cudnn().cudnnSetStream(lib_.cudnn, reinterpret_cast<cudaStream_t>(stream_)));
      }
      ConvPlanPtr plan;
      const OrtcPluginStatus st = PlanConv(lib_, *c, buffers, &plan);
      if (st != ORTC_PLUGIN_OK) return Fail(st, where + ": " + LastError());
      step.kind = StepKind::kCudnn;
      step.what = std::move(plan);
    } else if (const auto* g = s->gemm() ? s->gemm() : s->strided_gemm()) {
      if (!CublasLt().loaded)
        return Fail(ORTC_PLUGIN_UNSUPPORTED, where + " needs cuBLASLt: " + CublasLt().error);
      if (!lib_.cublas) {
        ORTC_CUBLAS(CublasLt().cublasLtCreate(&lib_.cublas));
      }
      GemmPlanPtr plan;
      const OrtcPluginStatus st = PlanGemm(lib_, *g, buffers, &plan);
      if (st != ORTC_PLUGIN_OK) return Fail(st, where + ": " + LastError());
      step.kind = StepKind::kCublasLt;
      step.what = std::move(plan);
    } else if (const auto* cp = s->copy()) {
      if (cp->src() < 0 || cp->dst() < 0 || static_cast<size_t>(cp->src()) >= buffers.size() ||
          static_cast<size_t>(cp->dst()) >= buffers.size() ||
          cp->bytes() > buffers[cp->src()].byte_size || cp->bytes() > buffers[cp->dst()].byte_size)
        return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + ": copy out of range");
      step.kind = StepKind::kCopy;
      step.what = CopyStep{buffers[cp->src()].ptr, buffers[cp->dst()].ptr, cp->bytes()};
    } else {
      return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + " has no kind");
    }
    steps->push_back(std::move(step));
  }
  BindKernelParams(steps);
  return ORTC_PLUGIN_OK;
}

// Decides how runs execute. With CUDA graphs, the steps run once eagerly on zeroed buffers
// first (libraries finish their lazy set-up outside the capture, and a step that fails at all
// fails the load, not a later run), then are captured and the graph launched once (its upload);
// a capture failure leaves the stream path with its reason.
OrtcPluginStatus GraphInstance::PrepareExecution() {
  const auto& d = Driver();
  if (options_.profiling) {
    stream_reason_ = "profiling times each step on the stream (enable_profiling=1)";
    std::vector<std::pair<std::string, std::string>> spans = {{"input copies", "copy"}};
    for (const auto& s : steps_) spans.push_back({s.name, StepKindName(s.kind)});
    spans.push_back({"output copies", "copy"});
    return profile_.Init(std::move(spans));
  }
  if (!options_.cuda_graph) {
    stream_reason_ = "CUDA graphs are disabled (enable_cuda_graph=0)";
    return ORTC_PLUGIN_OK;
  }
  auto lap = std::chrono::steady_clock::now();
  for (const auto* buf : {arena_.get(), io_.get()}) {
    if (buf->size()) ORTC_CU(d.cuMemsetD8Async(buf->ptr(), 0, buf->size(), stream_));
  }
  ORTC_PLUGIN_TRY(IssueSteps(steps_, lib_, name_));
  ORTC_CU(d.cuStreamSynchronize(stream_));
  load_ms_.warmup = Lap(&lap);
  std::string why;
  if (!graph_.Capture(
          stream_, [this] { return IssueSteps(steps_, lib_, name_); }, &why)) {
    stream_reason_ = "CUDA graph capture failed, so runs issue the steps on the stream: " + why;
    ClearError();
    load_ms_.capture = Lap(&lap);
    return ORTC_PLUGIN_OK;
  }
  // The first launch of an executable graph uploads it to the device: done here, on the zeroed
  // buffers the eager pass already ran on, so that a session's first run costs what every run
  // costs.
  ORTC_CU(d.cuGraphLaunch(graph_.exec(), stream_));
  ORTC_CU(d.cuStreamSynchronize(stream_));
  load_ms_.capture = Lap(&lap);
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus GraphInstance::CheckRunArguments(const OrtcTensorRef* inputs, uint32_t num_inputs,
                                                  const OrtcTensorRef* outputs,
                                                  uint32_t num_outputs) const {
  if (num_inputs != inputs_.size() || num_outputs != outputs_.size() || (num_inputs && !inputs) ||
      (num_outputs && !outputs))
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "graph '" + name_ + "' takes " +
                                                  std::to_string(inputs_.size()) + " inputs and " +
                                                  std::to_string(outputs_.size()) + " outputs");
  auto check = [&](const OrtcTensorRef& t, int buffer, const char* what, uint32_t i) {
    const uint64_t want = buffers_[buffer].byte_size;
    if (t.byte_size != want || (want && !t.data))
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                  "graph '" + name_ + "' " + what + " " + std::to_string(i) + " has " +
                      std::to_string(t.byte_size) + " bytes; the program's buffer has " +
                      std::to_string(want));
    if (t.location != ORTC_MEMORY_HOST && t.location != ORTC_MEMORY_DEVICE)
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "graph '" + name_ + "' " + what + " " +
                                                    std::to_string(i) +
                                                    " has an unknown memory location");
    return ORTC_PLUGIN_OK;
  };
  for (uint32_t i = 0; i < num_inputs; ++i)
    ORTC_PLUGIN_TRY(check(inputs[i], inputs_[i], "input", i));
  for (uint32_t i = 0; i < num_outputs; ++i)
    ORTC_PLUGIN_TRY(check(outputs[i], outputs_[i], "output", i));
  return ORTC_PLUGIN_OK;
}

// Host inputs go through pinned staging (or straight from the caller's memory when there is
// none); device inputs not bound into the program (io_binding.h) are device-to-device copies.
OrtcPluginStatus GraphInstance::CopyInputs(const OrtcTensorRef* inputs, const IoBinding* bound) {
  const auto& d = Driver();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const OrtcTensorRef& t = inputs[i];
    if (!t.byte_size || (bound && bound->inputs[i])) continue;
    const CUdeviceptr dst = buffers_[inputs_[i]].ptr;
    if (t.location == ORTC_MEMORY_DEVICE) {
      ORTC_CU(
          d.cuMemcpyDtoDAsync(dst, reinterpret_cast<CUdeviceptr>(t.data), t.byte_size, stream_));
    } else if (staging_.pinned()) {
      host_copies_->Copy(staging_.at(input_stage_[i]), t.data, t.byte_size);
      ORTC_CU(d.cuMemcpyHtoDAsync(dst, staging_.at(input_stage_[i]), t.byte_size, stream_));
    } else {
      ORTC_CU(d.cuMemcpyHtoDAsync(dst, t.data, t.byte_size, stream_));
    }
  }
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus GraphInstance::CopyOutputs(const OrtcTensorRef* outputs, const IoBinding* bound) {
  const auto& d = Driver();
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const OrtcTensorRef& t = outputs[i];
    if (!t.byte_size || (bound && bound->outputs[i])) continue;
    const CUdeviceptr src = buffers_[outputs_[i]].ptr;
    if (t.location == ORTC_MEMORY_DEVICE) {
      ORTC_CU(
          d.cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(t.data), src, t.byte_size, stream_));
    } else if (staging_.pinned() && output_chunks_.pipelined(i)) {
      ORTC_PLUGIN_TRY(
          output_chunks_.Issue(i, staging_.at(output_stage_[i]), src, t.byte_size, stream_));
    } else {
      void* dst = staging_.pinned() ? staging_.at(output_stage_[i]) : t.data;
      ORTC_CU(d.cuMemcpyDtoHAsync(dst, src, t.byte_size, stream_));
    }
  }
  return ORTC_PLUGIN_OK;
}

// Host outputs leave the staging buffer: chunked ones as their chunks arrive (before the
// stream's synchronisation), the others after it.
OrtcPluginStatus GraphInstance::DrainChunkedOutputs(const OrtcTensorRef* outputs) {
  if (!staging_.pinned()) return ORTC_PLUGIN_OK;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const OrtcTensorRef& t = outputs[i];
    if (t.byte_size && t.location == ORTC_MEMORY_HOST && output_chunks_.pipelined(i))
      ORTC_PLUGIN_TRY(output_chunks_.Drain(i, static_cast<uint8_t*>(t.data),
                                           staging_.at(output_stage_[i]), t.byte_size,
                                           *host_copies_));
  }
  return ORTC_PLUGIN_OK;
}

void GraphInstance::FinishHostOutputs(const OrtcTensorRef* outputs) {
  if (!staging_.pinned()) return;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const OrtcTensorRef& t = outputs[i];
    if (t.byte_size && t.location == ORTC_MEMORY_HOST && !output_chunks_.pipelined(i))
      host_copies_->Copy(t.data, staging_.at(output_stage_[i]), t.byte_size);
  }
}

OrtcPluginStatus GraphInstance::Execute() {
  if (graph_.ready()) {
    ORTC_CU(Driver().cuGraphLaunch(graph_.exec(), stream_));
    return ORTC_PLUGIN_OK;
  }
  return IssueSteps(steps_, lib_, name_);
}

void GraphInstance::ChooseRunBinding(const OrtcTensorRef* inputs, const OrtcTensorRef* outputs) {
  auto device = [](const OrtcTensorRef& t) -> DeviceAddress {
    return t.location == ORTC_MEMORY_DEVICE ? reinterpret_cast<uintptr_t>(t.data) : 0;
  };
  bool any = false;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    offered_.inputs[i] = device(inputs[i]);
    offered_in_bytes_[i] = inputs[i].byte_size;
    any = any || offered_.inputs[i];
  }
  for (size_t j = 0; j < outputs_.size(); ++j) {
    offered_.outputs[j] = device(outputs[j]);
    offered_out_bytes_[j] = outputs[j].byte_size;
    any = any || offered_.outputs[j];
  }
  if (!any) {
    std::fill(bound_run_.inputs.begin(), bound_run_.inputs.end(), 0);
    std::fill(bound_run_.outputs.begin(), bound_run_.outputs.end(), 0);
    return;
  }
  ChooseBinding(io_touches_, offered_, offered_in_bytes_, offered_out_bytes_, &bound_run_);
}

OrtcPluginStatus GraphInstance::VariantFor(const IoBinding& binding, BoundVariant** out) {
  for (auto& v : variants_) {
    if (v->binding == binding) {
      *out = v.get();
      return ORTC_PLUGIN_OK;
    }
  }
  // A generation loop binds one cache buffer (in place) or two that take turns; a few more
  // cover callers that reallocate, without holding plans for every address ever seen.
  constexpr size_t kMaxVariants = 4;
  if (variants_.size() == kMaxVariants) variants_.erase(variants_.begin());
  auto v = std::make_unique<BoundVariant>();
  v->binding = binding;
  std::vector<DeviceAddress> addresses;
  for (const auto& b : buffers_) addresses.push_back(b.ptr);
  addresses = BoundAddresses(*program_, addresses, inputs_, outputs_, binding);
  std::vector<BufferView> buffers = buffers_;
  for (size_t i = 0; i < buffers.size(); ++i) buffers[i].ptr = addresses[i];
  ORTC_PLUGIN_TRY(PlanSteps(buffers, &v->steps));
  // Captured only when the instance's own steps were: the same steps against other addresses.
  if (graph_.ready()) {
    std::string why;
    if (!v->graph.Capture(
            stream_, [&] { return IssueSteps(v->steps, lib_, name_); }, &why))
      ClearError();  // runs of this binding issue the steps on the stream
  }
  variants_.push_back(std::move(v));
  *out = variants_.back().get();
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus GraphInstance::ExecuteBound(const BoundVariant& v) {
  if (v.graph.ready()) {
    ORTC_CU(Driver().cuGraphLaunch(v.graph.exec(), stream_));
    return ORTC_PLUGIN_OK;
  }
  return IssueSteps(v.steps, lib_, name_);
}

OrtcPluginStatus GraphInstance::ExecuteProfiled(const OrtcTensorRef* inputs,
                                                const OrtcTensorRef* outputs) {
  size_t mark = 0;
  ORTC_PLUGIN_TRY(profile_.Mark(mark++, stream_));
  ORTC_PLUGIN_TRY(CopyInputs(inputs));
  for (const auto& step : steps_) {
    ORTC_PLUGIN_TRY(profile_.Mark(mark++, stream_));
    const OrtcPluginStatus st = IssueStep(step, lib_);
    if (st != ORTC_PLUGIN_OK)
      return Fail(st, "graph '" + name_ + "' step '" + step.name + "': " + LastError());
  }
  ORTC_PLUGIN_TRY(profile_.Mark(mark++, stream_));
  ORTC_PLUGIN_TRY(CopyOutputs(outputs));
  return profile_.Mark(mark, stream_);
}

OrtcPluginStatus GraphInstance::Run(const OrtcTensorRef* inputs, uint32_t num_inputs,
                                    OrtcTensorRef* outputs, uint32_t num_outputs) {
  std::lock_guard<std::mutex> lock(mu_);
  ORTC_PLUGIN_TRY(CheckRunArguments(inputs, num_inputs, outputs, num_outputs));
  const auto& d = Driver();
  ScopedContext scope(dev_->context);
  if (!scope.ok()) return Fail(ORTC_PLUGIN_EP_FAIL, "cannot make the CUDA context current");
  OrtcPluginStatus st = ORTC_PLUGIN_OK;
  // Profiled runs time the steps as loaded, copies included.
  if (!options_.profiling) ChooseRunBinding(inputs, outputs);
  if (options_.profiling) {
    st = ExecuteProfiled(inputs, outputs);
  } else if (!bound_run_.empty()) {
    BoundVariant* v = nullptr;
    st = VariantFor(bound_run_, &v);
    if (st == ORTC_PLUGIN_OK) st = CopyInputs(inputs, &bound_run_);
    if (st == ORTC_PLUGIN_OK) st = ExecuteBound(*v);
    if (st == ORTC_PLUGIN_OK) st = CopyOutputs(outputs, &bound_run_);
  } else {
    st = CopyInputs(inputs);
    if (st == ORTC_PLUGIN_OK) st = Execute();
    if (st == ORTC_PLUGIN_OK) st = CopyOutputs(outputs);
  }
  if (st == ORTC_PLUGIN_OK) st = DrainChunkedOutputs(outputs);
  if (st != ORTC_PLUGIN_OK) {
    const std::string why = LastError();
    d.cuStreamSynchronize(stream_);  // leave nothing in flight on the buffers
    return Fail(st, why);
  }
  ORTC_CU(d.cuStreamSynchronize(stream_));
  FinishHostOutputs(outputs);
  if (options_.profiling) return profile_.Collect();
  return ORTC_PLUGIN_OK;
}

std::string GraphInstance::DescribeJson() const {
  nlohmann::json j;
  j["execution"] = graph_.ready() ? "cuda_graph" : "stream";
  if (!graph_.ready()) j["reason"] = stream_reason_;
  int kernels = 0, gemms = 0, copies = 0, graph_api = 0, legacy = 0;
  nlohmann::json legacy_reasons = nlohmann::json::array();
  for (const auto& s : steps_) {
    if (const auto* c = std::get_if<ConvPlanPtr>(&s.what)) {
      if (std::string(ConvPlanApi(**c)) == "graph_api") {
        ++graph_api;
      } else {
        ++legacy;
        const std::string& why = ConvPlanFallbackReason(**c);
        if (std::find(legacy_reasons.begin(), legacy_reasons.end(), why) == legacy_reasons.end())
          legacy_reasons.push_back(why);
      }
    }
    kernels += s.kind == StepKind::kKernel;
    gemms += s.kind == StepKind::kCublasLt;
    copies += s.kind == StepKind::kCopy;
  }
  j["steps"] = {
      {"total", steps_.size()},        {"kernels", kernels}, {"convolutions_graph_api", graph_api},
      {"convolutions_legacy", legacy}, {"gemms", gemms},     {"copies", copies}};
  if (legacy) j["legacy_convolution_reasons"] = legacy_reasons;
  std::string precision = fbc::EnumNamePrecision(program_->precision());
  for (char& ch : precision) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  j["precision"] = precision;  // as --precision spells it
  j["staging"] = staging_.pinned() || staging_.bytes() == 0 ? "pinned" : "pageable";
  if (!staging_reason_.empty()) j["staging_reason"] = staging_reason_;
  j["host_copy_threads"] = host_copies_ ? host_copies_->threads() : 1;
  j["profiling"] = options_.profiling;
  auto ms = [](double v) { return std::round(v * 1000) / 1000; };
  j["load_ms"] = {{"device", ms(load_ms_.device)},   {"staging", ms(load_ms_.staging)},
                  {"weights", ms(load_ms_.weights)}, {"module", ms(load_ms_.module)},
                  {"plans", ms(load_ms_.plans)},     {"warmup", ms(load_ms_.warmup)},
                  {"capture", ms(load_ms_.capture)}};
  return j.dump();
}

OrtcPluginStatus GraphInstance::LastRunProfile(std::string* json) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!options_.profiling)
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                "graph '" + name_ + "' was loaded without enable_profiling=1");
  *json = profile_.json();
  return ORTC_PLUGIN_OK;
}

}  // namespace ortc::cuda_rt
