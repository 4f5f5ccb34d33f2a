// Loading (verification, buffer placement, module choice, library plans) and running of one
// CUDA program: H2D inputs, steps in order on the session's stream, D2H outputs, synchronise.
#include "graph_instance.h"

#include <cstring>

#include "module_select.h"

namespace ortc::cuda_rt {
namespace {

constexpr uint64_t kAlign = 256;  // cuMemAlloc's guarantee, kept for every sub-buffer

uint64_t AlignUp(uint64_t v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}

std::string BufferName(const fbc::Buffer& b, size_t i) {
  return b.name() ? "'" + b.name()->str() + "'" : "#" + std::to_string(i);
}

}  // namespace

GraphInstance::~GraphInstance() {
  if (!dev_) return;
  ScopedContext scope(dev_->context);
  steps_.clear();  // plans reference the handles below
  if (cudnn_) Cudnn().cudnnDestroy(cudnn_);
  if (cublas_) CublasLt().cublasLtDestroy(cublas_);
  if (stream_) Driver().cuStreamDestroy(stream_);
}

OrtcPluginStatus GraphInstance::Load(const OrtcGraphLoadInfo& info,
                                     std::unique_ptr<GraphInstance>* out) {
  if (info.struct_size < sizeof(OrtcGraphLoadInfo) || !info.program || !info.content_id)
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "incomplete graph load info");
  std::unique_ptr<GraphInstance> g(new GraphInstance());
  g->name_ = info.graph_name ? info.graph_name : "";
  g->content_id_ = info.content_id;
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(info.program), info.program_size);
  if (!fbc::VerifyProgramBuffer(verifier))
    return Fail(ORTC_PLUGIN_INVALID_GRAPH, "graph '" + g->name_ + "': the CUDA program is corrupt");
  g->program_ = fbc::GetProgram(info.program);
  if (!g->program_->buffers() || !g->program_->steps() || !g->program_->inputs() ||
      !g->program_->outputs())
    return Fail(ORTC_PLUGIN_INVALID_GRAPH,
                "graph '" + g->name_ + "': the CUDA program is incomplete");
  ORTC_PLUGIN_TRY(AcquireDevice(&g->dev_));
  ScopedContext scope(g->dev_->context);
  if (!scope.ok()) return Fail(ORTC_PLUGIN_EP_FAIL, "cannot make the CUDA context current");
  ORTC_CU(Driver().cuStreamCreate(&g->stream_, CU_STREAM_NON_BLOCKING));
  ORTC_PLUGIN_TRY(g->ResolveBuffers(info));
  ORTC_PLUGIN_TRY(g->LoadModule(info));
  ORTC_PLUGIN_TRY(g->PlanSteps());
  *out = std::move(g);
  return ORTC_PLUGIN_OK;
}

// Every buffer gets its fixed device address: arena offsets, IO staging, shared weights, and
// aliases into those (an alias may only point at an earlier buffer, so there are no cycles).
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
  // IO staging: one allocation, each input/output at an aligned offset.
  std::vector<uint64_t> io_offset(bufs.size(), 0);
  uint64_t io_bytes = 0;
  for (uint32_t i = 0; i < bufs.size(); ++i) {
    const auto* b = bufs.Get(i);
    if (b->kind() == BufferKind::Input || b->kind() == BufferKind::Output) {
      io_offset[i] = io_bytes;
      io_bytes += AlignUp(b->byte_size());
    }
  }
  ORTC_PLUGIN_TRY(AllocateDevice(*dev_, arena_bytes, &arena_));
  ORTC_PLUGIN_TRY(AllocateDevice(*dev_, io_bytes, &io_));
  ORTC_PLUGIN_TRY(AllocateDevice(*dev_, program_->workspace_bytes(), &workspace_));
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
        if (!weights_[slot])
          ORTC_PLUGIN_TRY(
              SharedWeight(*dev_, content_id_, w.pool_index, w.data, w.size, &weights_[slot]));
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

OrtcPluginStatus GraphInstance::PlanSteps() {
  const uint64_t ws_bytes = program_->workspace_bytes();
  for (const auto* s : *program_->steps()) {
    Step step;
    step.name = s->name() ? s->name()->str() : "";
    const std::string where = "graph '" + name_ + "' step '" + step.name + "'";
    if (const auto* l = s->launch()) {
      if (!module_ || !l->kernel())
        return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + ": a kernel launch without a module");
      Launch launch;
      ORTC_CU(Driver().cuModuleGetFunction(&launch.fn, module_->get(), l->kernel()->c_str()));
      for (uint32_t i = 0; i < 3; ++i) {
        if (l->grid() && i < l->grid()->size()) launch.grid[i] = l->grid()->Get(i);
        if (l->block() && i < l->block()->size()) launch.block[i] = l->block()->Get(i);
      }
      launch.shared = l->shared_bytes();
      if (l->args()) {
        for (int32_t a : *l->args()) {
          if (a >= static_cast<int32_t>(buffers_.size()))
            return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + ": argument buffer out of range");
          launch.args.push_back(a < 0 ? 0 : buffers_[a].ptr);
        }
      }
      step.what = std::move(launch);
    } else if (const auto* c = s->conv()) {
      if (!Cudnn().loaded)
        return Fail(ORTC_PLUGIN_UNSUPPORTED, where + " needs cuDNN: " + Cudnn().error);
      if (!cudnn_) {
        ORTC_CUDNN(Cudnn().cudnnCreate(&cudnn_));
      }
      ConvPlanPtr plan;
      const OrtcPluginStatus st = PlanConv(cudnn_, *c, buffers_, ws_bytes, &plan);
      if (st != ORTC_PLUGIN_OK) return Fail(st, where + ": " + LastError());
      step.what = std::move(plan);
    } else if (const auto* g = s->gemm()) {
      if (!CublasLt().loaded)
        return Fail(ORTC_PLUGIN_UNSUPPORTED, where + " needs cuBLASLt: " + CublasLt().error);
      if (!cublas_) {
        ORTC_CUBLAS(CublasLt().cublasLtCreate(&cublas_));
      }
      GemmPlanPtr plan;
      const OrtcPluginStatus st = PlanGemm(cublas_, *g, buffers_, ws_bytes, &plan);
      if (st != ORTC_PLUGIN_OK) return Fail(st, where + ": " + LastError());
      step.what = std::move(plan);
    } else if (const auto* cp = s->copy()) {
      if (cp->src() < 0 || cp->dst() < 0 || static_cast<size_t>(cp->src()) >= buffers_.size() ||
          static_cast<size_t>(cp->dst()) >= buffers_.size() ||
          cp->bytes() > buffers_[cp->src()].byte_size ||
          cp->bytes() > buffers_[cp->dst()].byte_size)
        return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + ": copy out of range");
      step.what = CopyStep{buffers_[cp->src()].ptr, buffers_[cp->dst()].ptr, cp->bytes()};
    } else {
      return Fail(ORTC_PLUGIN_INVALID_GRAPH, where + " has no kind");
    }
    steps_.push_back(std::move(step));
  }
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus GraphInstance::Run(const OrtcTensorRef* inputs, uint32_t num_inputs,
                                    OrtcTensorRef* outputs, uint32_t num_outputs) {
  std::lock_guard<std::mutex> lock(mu_);
  if (num_inputs != inputs_.size() || num_outputs != outputs_.size())
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "graph '" + name_ + "' takes " +
                                                  std::to_string(inputs_.size()) + " inputs and " +
                                                  std::to_string(outputs_.size()) + " outputs");
  for (uint32_t i = 0; i < num_inputs; ++i) {
    if (inputs[i].byte_size != buffers_[inputs_[i]].byte_size || !inputs[i].data)
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "graph '" + name_ + "' input " + std::to_string(i) +
                                                    " has " + std::to_string(inputs[i].byte_size) +
                                                    " bytes; the program expects " +
                                                    std::to_string(buffers_[inputs_[i]].byte_size));
  }
  for (uint32_t i = 0; i < num_outputs; ++i) {
    if (outputs[i].byte_size != buffers_[outputs_[i]].byte_size || !outputs[i].data)
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                  "graph '" + name_ + "' output " + std::to_string(i) + " buffer has " +
                      std::to_string(outputs[i].byte_size) + " bytes; the program produces " +
                      std::to_string(buffers_[outputs_[i]].byte_size));
  }
  const auto& d = Driver();
  ScopedContext scope(dev_->context);
  if (!scope.ok()) return Fail(ORTC_PLUGIN_EP_FAIL, "cannot make the CUDA context current");
  for (uint32_t i = 0; i < num_inputs; ++i) {
    if (inputs[i].byte_size)
      ORTC_CU(d.cuMemcpyHtoDAsync(buffers_[inputs_[i]].ptr, inputs[i].data, inputs[i].byte_size,
                                  stream_));
  }
  for (auto& step : steps_) {
    OrtcPluginStatus st = ORTC_PLUGIN_OK;
    if (auto* l = std::get_if<Launch>(&step.what)) {
      std::vector<void*> params;
      params.reserve(l->args.size());
      for (auto& a : l->args) params.push_back(&a);
      const CUresult r =
          d.cuLaunchKernel(l->fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                           l->block[2], l->shared, stream_, params.data(), nullptr);
      if (r != CUDA_SUCCESS) st = Fail(ORTC_PLUGIN_EP_FAIL, CuText(r, "cuLaunchKernel"));
    } else if (auto* c = std::get_if<ConvPlanPtr>(&step.what)) {
      st = RunConv(**c, cudnn_, workspace_->ptr(), stream_);
    } else if (auto* g = std::get_if<GemmPlanPtr>(&step.what)) {
      st = RunGemm(**g, cublas_, workspace_->ptr(), stream_);
    } else if (auto* cp = std::get_if<CopyStep>(&step.what)) {
      if (cp->bytes) {
        const CUresult r = d.cuMemcpyDtoDAsync(cp->dst, cp->src, cp->bytes, stream_);
        if (r != CUDA_SUCCESS) st = Fail(ORTC_PLUGIN_EP_FAIL, CuText(r, "cuMemcpyDtoDAsync"));
      }
    }
    if (st != ORTC_PLUGIN_OK) {
      const std::string why = LastError();
      d.cuStreamSynchronize(stream_);  // leave nothing in flight on the arena
      return Fail(st, "graph '" + name_ + "' step '" + step.name + "': " + why);
    }
  }
  for (uint32_t i = 0; i < num_outputs; ++i) {
    if (outputs[i].byte_size)
      ORTC_CU(d.cuMemcpyDtoHAsync(outputs[i].data, buffers_[outputs_[i]].ptr, outputs[i].byte_size,
                                  stream_));
  }
  ORTC_CU(d.cuStreamSynchronize(stream_));
  return ORTC_PLUGIN_OK;
}

}  // namespace ortc::cuda_rt
