// The CUDA compile pipeline for one graph: fold -> BN into Conv -> precision -> lower ->
// generate kernels -> NVRTC -> memory plan -> program + artefacts.
#include "cuda/compile/compile.h"

#include <spdlog/spdlog.h>

#include "cuda/compile/identity.h"
#include "cuda/compile/kernels.h"
#include "cuda/compile/launch_merging.h"
#include "cuda/compile/lowering.h"
#include "cuda/compile/op_desc.h"
#include "cuda/compile/program_writer.h"
#include "cuda/compile/toolchain/nvrtc.h"
#include "cuda_binary_keys.h"
#include "lowering/common_subexpressions.h"
#include "lowering/constant_folding.h"
#include "lowering/identity_ops.h"
#include "lowering/weight_rewrites.h"

namespace ortc::backends::cuda {
namespace {

bundle::TensorDescSpec Desc(const lowering::IrValue& v) {
  return {v.name, v.info.dtype, StaticDims(v.info), {}};
}

}  // namespace

Result<PlannedGraph> PlanCudaSubgraph(const graph::Model& model, const Subgraph& sg,
                                      const CudaOptions& options) {
  auto ir = lowering::SubgraphIr::Build(model, sg.name, sg.nodes, sg.inputs, sg.outputs);
  if (!ir.ok()) return ir.status();
  for (const auto& v : ir->values) {
    if (v.kind != lowering::ValueKind::kWeight && !v.info.shape.is_static()) {
      return InvalidArgument("value " + v.name + " has shape " + v.info.shape.ToString() +
                             ": CUDA kernels need static shapes; fix them with --input-shape");
    }
  }
  PlannedGraph out;
  // Descriptors keep the model's types (the program casts at its boundary).
  for (int v : ir->inputs) out.inputs.push_back(Desc(ir->values[v]));
  for (int v : ir->outputs) out.outputs.push_back(Desc(ir->values[v]));
  auto folded = lowering::FoldConstants(&ir.value());
  if (!folded.ok()) return folded.status();
  auto bn = lowering::FoldBatchNormIntoConv(&ir.value());
  if (!bn.ok()) return bn.status();
  const int dead = ir->RemoveDeadOps();
  ir->Compact();
  // Before common subexpressions: a Transpose moving only unit axes is then a view like any
  // Reshape, and the ops on both sides of it fuse.
  const int unit_transposes = lowering::TransposesToReshapes(&ir.value());
  const int common = lowering::EliminateCommonSubexpressions(&ir.value());
  // A graph output copied from a value (`present = Identity(concat)`) is written where the
  // value is computed: one whole-tensor copy kernel less per such output.
  const int outputs_at_source = lowering::WriteOutputsAtSource(&ir.value());
  if (outputs_at_source > 0) ir->Compact();
  const FormulaStats formulas = RecogniseFormulas(&ir.value());
  auto projections = MergeSiblingProjections(&ir.value());
  if (!projections.ok()) return projections.status();
  const int rotary = FuseRotaryEmbeddings(&ir.value());
  const int attention = FuseAttention(&ir.value());
  int decode_attention = 0;
  const int attention_gemm = options.attention == CudaOptions::Attention::kGemm
                                 ? LowerAttentionToGemms(&ir.value(), &decode_attention)
                                 : 0;
  const int outer_products = MatMulsToOuterProducts(&ir.value());
  // Movement ops the fusions read through (a head Transpose shared by Q, K and V's slices) are
  // gone once nothing reads them.
  if (ir->RemoveDeadOps() > 0) ir->Compact();
  ORTC_RETURN_IF_ERROR(ApplyPrecision(&ir.value(), options.precision));
  const int decode_split = SplitDecodeAttention(&ir.value());
  // After the split: a run of a long cache's keys rotates q too.
  const int query_rotary = AbsorbQueryRotary(&ir.value());
  if (query_rotary > 0 && ir->RemoveDeadOps() > 0) ir->Compact();
  auto plan = LowerToPlan(*ir, options, &out.stats);
  if (!plan.ok()) return plan.status();
  out.plan = std::move(plan).value();
  ORTC_RETURN_IF_ERROR(GenerateKernels(&out.plan, &out.kernels));
  int launches_merged = 0;
  if (options.merge_launches) {
    auto merged = MergeIndependentLaunches(&out.plan, &out.kernels);
    if (!merged.ok()) return merged.status();
    launches_merged = *merged;
  }
  FinalizePlan(&out.plan);
  // -vv: what each step implements, so a user can see which nodes were fused together.
  if (spdlog::should_log(spdlog::level::debug)) {
    static const char* kKinds[] = {"kernel", "conv", "gemm", "copy"};
    for (size_t i = 0; i < out.plan.steps.size(); ++i) {
      const PlanStep& st = out.plan.steps[i];
      std::string ops;
      for (const auto& src : st.sources) ops += (ops.empty() ? "" : ", ") + src;
      spdlog::debug("cuda {} step {}: {} {} <- {}", sg.name, i, kKinds[static_cast<int>(st.kind)],
                    st.name, ops);
    }
  }
  out.stats["folded_ops"] += folded->folded_ops;
  out.stats["batchnorms_folded"] += *bn;
  out.stats["dead_ops_removed"] += dead;
  out.stats["common_ops_merged"] += common;
  out.stats["outputs_written_at_source"] += outputs_at_source;
  out.stats["launches_merged"] += launches_merged;
  out.stats["unit_transposes_viewed"] += unit_transposes;
  out.stats["rotary_fused"] += rotary;
  out.stats["fused_attention"] += attention;
  out.stats["attention_on_gemms"] += attention_gemm;
  out.stats["decode_attention"] += decode_attention;
  out.stats["decode_attention_split"] += decode_split;
  out.stats["rotary_in_attention"] += query_rotary;
  out.stats["outer_products"] += outer_products;
  out.stats["projections_merged"] += *projections;
  out.stats["gelu_recognised"] += formulas.gelu;
  out.stats["layernorm_recognised"] += formulas.layer_norm;
  out.stats["rmsnorm_recognised"] += formulas.rms_norm;
  out.stats["add_layernorm_fused"] += formulas.add_layer_norm;
  out.stats["kernels"] += static_cast<int>(out.kernels.size());
  out.stats["steps"] += static_cast<int>(out.plan.steps.size());
  return out;
}

Result<CompiledGraph> CompileCudaSubgraph(const graph::Model& model, const Subgraph& sg,
                                          const CudaOptions& options,
                                          const CompileProgress& progress) {
  auto planned = PlanCudaSubgraph(model, sg, options);
  if (!planned.ok()) return planned.status();
  Plan& plan = planned->plan;
  CompiledGraph out;
  if (!planned->kernels.empty()) {
    const std::string source = codegen::TranslationUnit(planned->kernels);
    auto images = toolchain::CompileModule(source, options.cubin_archs, options.ptx_arch,
                                           [&](const std::string& target, int done, int total) {
                                             if (progress) progress("NVRTC " + target, done, total);
                                           });
    if (!images.ok()) return images.status().WithContext("NVRTC compile of " + sg.name);
    for (auto& image : *images) {
      const std::string name = sg.name + "/" + image.target + (image.is_ptx ? ".ptx" : ".cubin");
      plan.modules.push_back({image.target,
                              image.is_ptx ? fb::ModuleKind::Ptx : fb::ModuleKind::Cubin, name,
                              image.bytes.size()});
      out.artefacts.push_back({name, std::move(image.bytes)});
    }
    plan.source_artefact = sg.name + "/kernels.cu";
    out.artefacts.push_back({plan.source_artefact, source});
  }
  out.stats = std::move(planned->stats);
  out.inputs = std::move(planned->inputs);
  out.outputs = std::move(planned->outputs);
  out.program = SerializeProgram(plan);
  out.weights = std::move(plan.weights);
  out.arena_bytes = plan.arena_bytes;
  bool calls_cudnn = false, calls_cublas = false;
  for (const auto& step : plan.steps) {
    calls_cudnn = calls_cudnn || step.kind == StepKind::kConv;
    calls_cublas = calls_cublas || step.kind == StepKind::kGemm;
  }
  out.binary_versions = LibraryVersions(calls_cudnn, calls_cublas);
  for (const auto& c : plan.choices)
    out.choices.push_back({c.step, c.key, c.choice, c.candidates, c.source});
  out.notes = {{"precision", PrecisionName(options.precision)},
               {"layout", plan.conv_layout == fb::TensorLayout::NHWC ? "nhwc" : "nchw"}};
  // The node also names what the device side needs (the same values as the binary's manifest),
  // so a ctx model alone tells a deployment what driver and libraries to install.
  namespace k = ortc::cuda_keys;
  for (const auto& [key, value] : CudaIdentity(options).versions) {
    if (key == k::kNvrtcVersion || key == k::kMinDriver) out.notes.push_back({key, value});
  }
  for (const auto& kv : out.binary_versions) out.notes.push_back(kv);
  return out;
}

}  // namespace ortc::backends::cuda
