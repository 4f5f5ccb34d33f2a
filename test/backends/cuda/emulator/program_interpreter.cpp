// ProgramInterpreter: lays out a Program's buffers in host memory, then runs its steps in order
// (kernels via HostModule, ConvCall/GemmCall via library_reference.h, Copy as memcpy).
#include "program_interpreter.h"

#include <cstring>

#include "library_reference.h"
#include "program_validator.h"

namespace ortc::test::cuda {
namespace {

namespace fbc = ortc::fb::cuda;
using backends::cuda::codegen::KernelSource;

std::string_view Artefact(const format::ContextBinary& bin, const std::string& name) {
  const auto* sections = bin.manifest().sections();
  for (uint32_t i = 0; sections && i < sections->size(); ++i) {
    const auto* s = sections->Get(i);
    if (s->kind() == fb::SectionKind::Artefact && s->name() && s->name()->str() == name) {
      const auto bytes = bin.SectionBytes(i);
      return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
    }
  }
  return {};
}

// Whether the kernel's own text (up to the next kernel) synchronizes its block: the shim must
// then run each thread as a fiber.
bool UsesBlockSync(std::string_view tu, const std::string& name) {
  const size_t at = tu.find("__global__ void " + name + "(");
  if (at == std::string_view::npos) return false;
  const size_t next = tu.find("__global__", at + 10);
  return tu.substr(at, next == std::string_view::npos ? next : next - at).find("__syncthreads") !=
         std::string_view::npos;
}

// The index of the kernel's first output parameter: inputs are `const void*`, outputs
// `void*` (the generator's convention); the parameter count when the signature is not found.
int FirstOutput(std::string_view tu, const std::string& name, int params) {
  const size_t at = tu.find("__global__ void " + name + "(");
  if (at == std::string_view::npos) return params;
  const size_t open = tu.find('(', at), close = tu.find(')', at);
  if (close == std::string_view::npos) return params;
  int index = 0;
  size_t p = open + 1;
  while (p < close) {
    while (p < close && tu[p] == ' ') ++p;
    if (tu.substr(p, 6) != "const ") return index;
    ++index;
    const size_t comma = tu.find(',', p);
    if (comma == std::string_view::npos || comma > close) break;
    p = comma + 1;
  }
  return index;
}

// Host memory of one run: the arena, the weights, the inputs and outputs.
struct Memory {
  std::vector<std::vector<double>> blocks;  // double: 8-byte aligned storage
  std::vector<void*> ptr;                   // per buffer

  void* NewBlock(uint64_t bytes) {
    blocks.emplace_back((bytes + 7) / 8 + 1);
    return blocks.back().data();
  }
};

Status Place(const fbc::Program& p, const std::vector<std::string_view>& weights,
             const std::vector<Tensor>& inputs, const BoundMemory* bound, Memory* mem) {
  const auto* buffers = p.buffers();
  const uint32_t count = buffers ? buffers->size() : 0;
  mem->ptr.assign(count, nullptr);
  char* arena = static_cast<char*>(mem->NewBlock(p.arena_bytes()));
  std::vector<int> pending;
  for (uint32_t i = 0; i < count; ++i) {
    const auto* b = buffers->Get(i);
    const std::string name = b->name() ? b->name()->str() : std::to_string(i);
    switch (b->kind()) {
      case fbc::BufferKind::Arena:
        if (b->offset() > p.arena_bytes() || b->byte_size() > p.arena_bytes() - b->offset())
          return InvalidGraph("buffer " + name + " lies outside the arena");
        mem->ptr[i] = arena + b->offset();
        break;
      case fbc::BufferKind::Weight: {
        if (b->weight_slot() < 0 || static_cast<size_t>(b->weight_slot()) >= weights.size())
          return InvalidGraph("buffer " + name + " names a missing weight slot");
        const std::string_view bytes = weights[b->weight_slot()];
        if (bytes.size() < b->byte_size())
          return InvalidGraph("weight of buffer " + name + " is shorter than the buffer");
        mem->ptr[i] = mem->NewBlock(b->byte_size());
        std::memcpy(mem->ptr[i], bytes.data(), b->byte_size());
        break;
      }
      case fbc::BufferKind::Input: {
        if (b->io_index() < 0 || static_cast<size_t>(b->io_index()) >= inputs.size())
          return InvalidArgument("buffer " + name + ": no input " + std::to_string(b->io_index()));
        const Tensor& t = inputs[b->io_index()];
        if (static_cast<int32_t>(t.dtype()) != b->dtype() || t.byte_size() != b->byte_size())
          return InvalidArgument("input " + name + " has another type or size than the program's");
        const size_t io = static_cast<size_t>(b->io_index());
        if (bound && io < bound->inputs.size() && bound->inputs[io]) {
          // Steps only read an input, unless the binding made it an output's bytes too.
          mem->ptr[i] = const_cast<void*>(bound->inputs[io]);
          break;
        }
        mem->ptr[i] = mem->NewBlock(b->byte_size());
        std::memcpy(mem->ptr[i], t.raw(), b->byte_size());
        break;
      }
      case fbc::BufferKind::Output: {
        const size_t io = static_cast<size_t>(b->io_index());
        mem->ptr[i] =
            bound && b->io_index() >= 0 && io < bound->outputs.size() && bound->outputs[io]
                ? bound->outputs[io]
                : mem->NewBlock(b->byte_size());
        break;
      }
      case fbc::BufferKind::Alias:
        pending.push_back(static_cast<int>(i));
        break;
    }
  }
  // Aliases after their targets (an alias of an alias resolves in a later round).
  for (size_t round = 0; !pending.empty() && round <= count; ++round) {
    std::vector<int> left;
    for (int i : pending) {
      const auto* b = buffers->Get(i);
      const int of = b->alias_of();
      if (of < 0 || static_cast<uint32_t>(of) >= count || of == i)
        return InvalidGraph("alias buffer " + std::to_string(i) + " names no buffer");
      if (!mem->ptr[of]) {
        left.push_back(i);
        continue;
      }
      const auto* target = buffers->Get(of);
      if (b->offset() > target->byte_size() || b->byte_size() > target->byte_size() - b->offset())
        return InvalidGraph("alias buffer " + std::to_string(i) + " exceeds its target");
      mem->ptr[i] = static_cast<char*>(mem->ptr[of]) + b->offset();
    }
    pending = std::move(left);
  }
  if (!pending.empty()) return InvalidGraph("alias buffers form a cycle");
  return Status::Ok();
}

StoredTensor Stored(const fbc::Program& p, const Memory& mem, int index) {
  const auto* b = p.buffers()->Get(index);
  int64_t elements = 1;
  if (b->dims())
    for (int64_t d : *b->dims()) elements *= d;
  return {mem.ptr[index], b->dtype(), elements};
}

}  // namespace

Result<ProgramInterpreter> ProgramInterpreter::Load(
    std::shared_ptr<const format::ContextBinary> binary, const std::string& graph) {
  const fb::Graph* g = binary->FindGraph(graph);
  if (!g) return InvalidArgument("the binary has no graph " + graph);
  ProgramParts parts;
  parts.graph = graph;
  const auto program = binary->ProgramBytes(*g);
  parts.program = {reinterpret_cast<const char*>(program.data()), program.size()};
  for (uint32_t i = 0; g->weights() && i < g->weights()->size(); ++i) {
    const auto bytes = binary->WeightBytes(g->weights()->Get(i));
    parts.weights.emplace_back(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(program.data()), program.size());
  if (fbc::VerifyProgramBuffer(verifier)) {
    const auto* p = fbc::GetProgram(program.data());
    if (p->source_artefact()) parts.source = Artefact(*binary, p->source_artefact()->str());
  }
  parts.keep_alive = std::move(binary);
  return Load(std::move(parts));
}

Result<ProgramInterpreter> ProgramInterpreter::Load(ProgramParts parts) {
  ProgramInterpreter in;
  const std::string graph = parts.graph;
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(parts.program.data()),
                                 parts.program.size());
  if (!fbc::VerifyProgramBuffer(verifier))
    return InvalidGraph("graph " + graph + ": the CUDA program does not verify");
  in.program_ = fbc::GetProgram(parts.program.data());
  // The plugin's validator first: every program the emulator runs also proves it accepts
  // what the compiler writes.
  const uint32_t slots = static_cast<uint32_t>(parts.weights.size());
  if (std::string invalid = ortc::cuda::ValidateCudaProgram(*in.program_, slots); !invalid.empty())
    return InvalidGraph("graph " + graph + ": the CUDA program is invalid: " + invalid);
  in.parts_ = std::move(parts);
  const auto* steps = in.program_->steps();
  if (!steps || !in.program_->buffers()) return InvalidGraph("graph " + graph + ": no steps");
  std::vector<KernelSource> kernels;
  const std::string source_name =
      in.program_->source_artefact() ? in.program_->source_artefact()->str() : "";
  const std::string_view tu = in.parts_.source;
  for (const auto* s : *steps) {
    const auto* l = s->launch();
    if (!l) continue;
    if (!l->kernel() || !l->grid() || !l->block() || l->grid()->size() != 3 ||
        l->block()->size() != 3)
      return InvalidGraph("a KernelLaunch lacks its kernel name, grid or block");
    if (l->shared_bytes() != 0)
      return NotImplemented("kernel " + l->kernel()->str() +
                            ": dynamic shared memory is not supported by the host shim");
    const int args = l->args() ? static_cast<int>(l->args()->size()) : 0;
    auto [it, fresh] = in.kernels_.try_emplace(l->kernel()->str());
    KernelSource& k = it->second;
    if (fresh) {
      k.name = l->kernel()->str();
      k.num_inputs = args;  // the trampoline only needs the parameter count
      k.uses_block_sync = UsesBlockSync(tu, k.name);
      in.first_output_[k.name] = FirstOutput(tu, k.name, args);
      kernels.push_back(k);
    } else if (k.num_inputs != args) {
      return InvalidGraph("kernel " + k.name + " is launched with different argument counts");
    }
  }
  if (!kernels.empty()) {
    if (tu.empty())
      return InvalidGraph("graph " + graph + ": kernel source artefact '" + source_name +
                          "' is missing");
    auto module = HostModule::CompileText(std::string(tu), kernels);
    if (!module.ok()) return module.status();
    in.module_ = std::make_shared<HostModule>(std::move(module).value());
  }
  return in;
}

Result<std::vector<Tensor>> ProgramInterpreter::Run(const std::vector<Tensor>& inputs,
                                                    StepCounts* counts,
                                                    const WriteObserver& observer,
                                                    const BoundMemory* bound) const {
  const fbc::Program& p = *program_;
  if (!p.inputs() || inputs.size() != p.inputs()->size())
    return InvalidArgument("the program takes " +
                           std::to_string(p.inputs() ? p.inputs()->size() : 0) + " inputs");
  Memory mem;
  ORTC_RETURN_IF_ERROR(Place(p, parts_.weights, inputs, bound, &mem));
  const int count = static_cast<int>(p.buffers()->size());
  auto valid = [&](int i) { return i >= 0 && i < count; };
  auto wrote = [&](int b) {
    if (!observer) return;
    observer(b, mem.ptr[b]);
    // A write through an alias (a GEMM writing one batch element's part of a tensor in place)
    // changes its root too: observe the root's bytes as they are now.
    const auto* buf = p.buffers()->Get(b);
    if (buf->kind() == fbc::BufferKind::Alias && buf->alias_of() >= 0 &&
        static_cast<size_t>(buf->alias_of()) < p.buffers()->size())
      observer(buf->alias_of(), mem.ptr[buf->alias_of()]);
  };
  for (const auto* s : *p.steps()) {
    const std::string name = s->name() ? s->name()->str() : "?";
    if (const auto* l = s->launch()) {
      KernelSource k = kernels_.at(l->kernel()->str());
      for (int d = 0; d < 3; ++d) {
        k.grid[d] = l->grid()->Get(d);
        k.block[d] = l->block()->Get(d);
      }
      std::vector<void*> args;
      if (l->args()) {
        for (int a : *l->args()) {
          if (a >= count) return InvalidGraph("step " + name + " names a buffer out of range");
          args.push_back(a < 0 ? nullptr : mem.ptr[a]);
        }
      }
      Status st = module_->Launch(k, args);
      if (!st.ok() && !k.uses_block_sync &&
          st.message().find("without uses_block_sync") != std::string::npos) {
        // A helper outside the kernel's own text synchronizes: run again with fibers (kernels
        // write only their outputs, so the second run overwrites the first one's partial work).
        k.uses_block_sync = true;
        st = module_->Launch(k, args);
      }
      ORTC_RETURN_IF_ERROR_CTX(st, "step " + name);
      counts->launches++;
      for (size_t a = first_output_.at(k.name); l->args() && a < l->args()->size(); ++a) {
        if (l->args()->Get(a) >= 0) wrote(l->args()->Get(a));
      }
    } else if (const auto* c = s->conv()) {
      if (!valid(c->x()) || !valid(c->w()) || !valid(c->y()) ||
          (c->bias() >= 0 && !valid(c->bias())) || (c->z() >= 0 && !valid(c->z())))
        return InvalidGraph("step " + name + ": ConvCall names a buffer out of range");
      const StoredTensor bias = c->bias() >= 0 ? Stored(p, mem, c->bias()) : StoredTensor{};
      const StoredTensor z = c->z() >= 0 ? Stored(p, mem, c->z()) : StoredTensor{};
      ORTC_RETURN_IF_ERROR_CTX(ReferenceConv(*c, Stored(p, mem, c->x()), Stored(p, mem, c->w()),
                                             c->bias() >= 0 ? &bias : nullptr,
                                             c->z() >= 0 ? &z : nullptr, Stored(p, mem, c->y())),
                               "step " + name);
      counts->convs++;
      wrote(c->y());
    } else if (const auto* g = s->gemm() ? s->gemm() : s->strided_gemm()) {
      if (!valid(g->a()) || !valid(g->b()) || !valid(g->y()) || (g->c() >= 0 && !valid(g->c())) ||
          (g->bias() >= 0 && !valid(g->bias())))
        return InvalidGraph("step " + name + ": GemmCall names a buffer out of range");
      const StoredTensor cc = g->c() >= 0 ? Stored(p, mem, g->c()) : StoredTensor{};
      const StoredTensor bias = g->bias() >= 0 ? Stored(p, mem, g->bias()) : StoredTensor{};
      ORTC_RETURN_IF_ERROR_CTX(
          ReferenceGemm(*g, Stored(p, mem, g->a()), Stored(p, mem, g->b()),
                        g->c() >= 0 ? &cc : nullptr, g->bias() >= 0 ? &bias : nullptr,
                        Stored(p, mem, g->y())),
          "step " + name);
      counts->gemms++;
      wrote(g->y());
    } else if (const auto* cp = s->copy()) {
      if (!valid(cp->src()) || !valid(cp->dst()) ||
          cp->bytes() > p.buffers()->Get(cp->src())->byte_size() ||
          cp->bytes() > p.buffers()->Get(cp->dst())->byte_size())
        return InvalidGraph("step " + name + ": Copy out of its buffers");
      std::memmove(mem.ptr[cp->dst()], mem.ptr[cp->src()], cp->bytes());
      counts->copies++;
      wrote(cp->dst());
    } else {
      return InvalidGraph("step " + name + " has no launch, conv, gemm or copy");
    }
  }
  std::vector<Tensor> outputs;
  for (int o : *p.outputs()) {
    if (!valid(o)) return InvalidGraph("a program output names a buffer out of range");
    const auto* b = p.buffers()->Get(o);
    std::vector<int64_t> dims = b->dims()
                                    ? std::vector<int64_t>(b->dims()->begin(), b->dims()->end())
                                    : std::vector<int64_t>{};
    outputs.push_back(
        Tensor::FromBytes(static_cast<DataType>(b->dtype()), dims, mem.ptr[o], b->byte_size()));
  }
  return outputs;
}

}  // namespace ortc::test::cuda
