// Plan -> FlatBuffers bytes (ortc.fb.cuda.Program, file identifier "ORTG").
#include "cuda/compile/program_writer.h"

namespace ortc::backends::cuda {

std::string SerializeProgram(const Plan& plan) {
  flatbuffers::FlatBufferBuilder b(1 << 14);
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  for (const auto& x : plan.buffers) {
    buffers.push_back(fb::CreateBuffer(b, b.CreateString(x.name), x.kind, x.dtype,
                                       b.CreateVector(x.dims), x.layout, x.weight_slot, x.io_index,
                                       x.offset, x.alias_of, x.byte_size));
  }
  std::vector<flatbuffers::Offset<fb::Step>> steps;
  for (const auto& s : plan.steps) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> sources;
    for (const auto& n : s.sources) sources.push_back(b.CreateString(n));
    flatbuffers::Offset<fb::KernelLaunch> launch;
    flatbuffers::Offset<fb::ConvCall> conv;
    flatbuffers::Offset<fb::GemmCall> gemm, strided_gemm;
    flatbuffers::Offset<fb::Copy> copy;
    switch (s.kind) {
      case StepKind::kLaunch: {
        const auto& l = s.launch;
        std::vector<int> args = l.inputs;
        args.insert(args.end(), l.outputs.begin(), l.outputs.end());
        launch = fb::CreateKernelLaunch(
            b, b.CreateString(l.kernel),
            b.CreateVector(std::vector<uint32_t>(l.grid.begin(), l.grid.end())),
            b.CreateVector(std::vector<uint32_t>(l.block.begin(), l.block.end())), l.shared_bytes,
            b.CreateVector(args), l.same_index.empty() ? 0 : b.CreateVector(l.same_index));
        break;
      }
      case StepKind::kConv: {
        const auto& c = s.conv;
        conv = fb::CreateConvCall(
            b, c.x, c.w, c.bias, c.z, c.y, b.CreateVector(c.x_dims), b.CreateVector(c.w_dims),
            b.CreateVector(c.y_dims), b.CreateVector(c.pads), b.CreateVector(c.strides),
            b.CreateVector(c.dilations), c.group, c.transposed, c.activation, c.alpha, c.alpha2,
            c.layout, c.compute_dtype, c.clip_min, c.clip_max);
        break;
      }
      case StepKind::kGemm: {
        const auto& g = s.gemm;
        const auto call =
            fb::CreateGemmCall(b, g.a, g.b, g.c, g.bias, g.y, g.m, g.n, g.k, g.batch, g.stride_a,
                               g.stride_b, g.stride_y, g.trans_a, g.trans_b, g.alpha, g.beta,
                               g.epilogue, g.compute_dtype, g.lda, g.ldb, g.ldy);
        // Leading dimensions only in strided_gemm: older runtimes refuse it (cuda_program.fbs).
        (g.lda || g.ldb || g.ldy ? strided_gemm : gemm) = call;
        break;
      }
      case StepKind::kCopy:
        copy = fb::CreateCopy(b, s.copy.src, s.copy.dst, s.copy.bytes);
        break;
    }
    steps.push_back(fb::CreateStep(b, b.CreateString(s.name), b.CreateVector(sources), launch, conv,
                                   gemm, copy, strided_gemm));
  }
  std::vector<flatbuffers::Offset<fb::Module>> modules;
  for (const auto& m : plan.modules) {
    modules.push_back(fb::CreateModule(b, b.CreateString(m.target), m.kind,
                                       b.CreateString(m.artefact), m.byte_size));
  }
  std::vector<flatbuffers::Offset<flatbuffers::String>> kernels;
  for (const auto& k : plan.kernels) kernels.push_back(b.CreateString(k));
  std::vector<flatbuffers::Offset<fb::Choice>> choices;
  for (const auto& c : plan.choices) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> candidates;
    for (const auto& k : c.candidates) candidates.push_back(b.CreateString(k));
    choices.push_back(fb::CreateChoice(b, b.CreateString(c.step), b.CreateString(c.key),
                                       b.CreateString(c.choice), b.CreateString(c.source),
                                       b.CreateVector(candidates)));
  }
  auto program = fb::CreateProgram(
      b, b.CreateVector(buffers), b.CreateVector(steps), b.CreateVector(plan.inputs),
      b.CreateVector(plan.outputs), plan.arena_bytes, plan.workspace_bytes, plan.precision,
      plan.conv_layout, b.CreateVector(modules), b.CreateVector(kernels),
      plan.source_artefact.empty() ? 0 : b.CreateString(plan.source_artefact),
      choices.empty() ? 0 : b.CreateVector(choices));
  fb::FinishProgramBuffer(b, program);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

}  // namespace ortc::backends::cuda
