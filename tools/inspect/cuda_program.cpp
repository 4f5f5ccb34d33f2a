// Summary of one CUDA program for `ortc inspect` (JSON; the CLI prints a text form of it).
#include "inspect/cuda_program.h"

#include <map>

#include "cuda_program_generated.h"

namespace ortc::inspect {

nlohmann::json DescribeCudaProgram(std::span<const std::byte> bytes) {
  namespace fb = ortc::fb::cuda;
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  flatbuffers::Verifier verifier(data, bytes.size());
  if (!fb::VerifyProgramBuffer(verifier))
    return {
        {"error", {{"code", "INVALID_GRAPH"}, {"message", "the CUDA program does not verify"}}}};
  const fb::Program* p = fb::GetProgram(data);
  nlohmann::json j;
  j["precision"] = fb::EnumNamePrecision(p->precision());
  j["conv_layout"] = fb::EnumNameTensorLayout(p->conv_layout());
  j["arena_bytes"] = p->arena_bytes();
  j["workspace_bytes"] = p->workspace_bytes();
  std::map<std::string, int> steps, buffers;
  if (p->steps()) {
    for (const auto* s : *p->steps()) {
      steps[s->launch()                      ? "kernel"
            : s->conv()                      ? "conv"
            : s->gemm() || s->strided_gemm() ? "gemm"  // strided: operands read in place
            : s->copy()                      ? "copy"
                                             : "empty"]++;
    }
  }
  if (p->buffers()) {
    for (const auto* b : *p->buffers()) buffers[fb::EnumNameBufferKind(b->kind())]++;
  }
  j["steps"] = steps;
  j["step_count"] = p->steps() ? p->steps()->size() : 0;
  j["buffers"] = buffers;
  j["kernels"] = nlohmann::json::array();
  if (p->kernels()) {
    for (const auto* k : *p->kernels()) j["kernels"].push_back(k->str());
  }
  j["modules"] = nlohmann::json::array();
  if (p->modules()) {
    for (const auto* m : *p->modules()) {
      j["modules"].push_back({{"target", m->target() ? m->target()->str() : ""},
                              {"kind", fb::EnumNameModuleKind(m->kind())},
                              {"artefact", m->artefact() ? m->artefact()->str() : ""},
                              {"bytes", m->byte_size()}});
    }
  }
  j["source_artefact"] = p->source_artefact() ? p->source_artefact()->str() : "";
  return j;
}

}  // namespace ortc::inspect
