// Dispatch from op type to the emitter of its family.
#include "cuda/compile/codegen/kernel_codegen.h"

#include "cuda/compile/codegen/emitters.h"

namespace ortc::backends::cuda::codegen {

int64_t TensorDesc::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

bool IsElementwise(const std::string& op_type) {
  return IsElementwiseOp(op_type);
}

bool HasKernel(const std::string& op_type) {
  return IsElementwiseOp(op_type) || IsNormalizationOp(op_type) || IsReductionOp(op_type) ||
         IsDataMovementOp(op_type) || IsPoolingOp(op_type) || IsAttentionOp(op_type) ||
         IsScanOp(op_type) || IsIndexingOp(op_type) || IsRotaryOp(op_type) ||
         IsGroupedConvOp(op_type);
}

bool SupportsLayouts(const std::string& op_type) {
  return IsPoolingOp(op_type) || op_type == "GlobalAveragePool" || op_type == "GlobalMaxPool" ||
         op_type == kPoolPartialOp || op_type == "Concat" || op_type == "Pad" ||
         op_type == "Resize" || op_type == "Transpose" || op_type == "BatchNormalization" ||
         IsGroupedConvOp(op_type);
}

bool LayoutApplies(const std::string& op_type, size_t i) {
  return i == 0 || op_type == "Concat";
}

std::string Unsupported(const OpDesc& op) {
  // Every other emitter indexes its tensors in the order of their dims: channels-last data
  // would be read wrong, so it is refused here rather than in each family.
  const bool in_last = op.input_layout != Layout::kNchw;
  const bool out_last = op.output_layout != Layout::kNchw;
  if ((in_last || out_last) && !SupportsLayouts(op.op_type))
    return "no channels-last (NHWC) kernel for " + op.op_type;
  // Channels last moves axis 1 behind the spatial axes: a tensor needs N, C and one more.
  for (size_t i = 0; i < op.inputs.size() && in_last; ++i) {
    if (LayoutApplies(op.op_type, i) && op.inputs[i].dims.size() < 3)
      return op.op_type + ": channels-last (NHWC) input of rank " +
             std::to_string(op.inputs[i].dims.size()) + " (3 or more needed)";
  }
  if (out_last && (op.outputs.empty() || op.outputs[0].dims.size() < 3))
    return op.op_type + ": channels-last (NHWC) output of rank below 3";
  if (IsElementwiseOp(op.op_type)) return ElementwiseUnsupported(op);
  if (IsNormalizationOp(op.op_type)) return NormalizationUnsupported(op);
  if (IsReductionOp(op.op_type)) return ReductionUnsupported(op);
  if (IsDataMovementOp(op.op_type)) return DataMovementUnsupported(op);
  if (IsPoolingOp(op.op_type)) return PoolingUnsupported(op);
  if (IsAttentionOp(op.op_type)) return AttentionUnsupported(op);
  if (IsScanOp(op.op_type)) return ScanUnsupported(op);
  if (IsIndexingOp(op.op_type)) return IndexingUnsupported(op);
  if (IsRotaryOp(op.op_type)) return RotaryUnsupported(op);
  if (IsGroupedConvOp(op.op_type)) return GroupedConvUnsupported(op);
  return "no CUDA kernel generator for " + op.op_type;
}

Result<KernelSource> EmitFused(const std::string& name, const FusedGroup& group) {
  return EmitFusedElementwise(name, group);
}

Result<KernelSource> EmitOp(const std::string& name, const OpDesc& op) {
  if (std::string why = Unsupported(op); !why.empty()) return NotImplemented(why);
  if (IsElementwiseOp(op.op_type)) {
    FusedGroup g;
    g.inputs = op.inputs;
    FusedOp f{op, {}};
    for (size_t i = 0; i < op.inputs.size(); ++i) f.args.push_back(static_cast<int>(i));
    g.ops.push_back(std::move(f));
    g.outputs = {0};
    return EmitFusedElementwise(name, g);
  }
  if (IsNormalizationOp(op.op_type)) return EmitNormalization(name, op);
  if (IsReductionOp(op.op_type)) return EmitReduction(name, op);
  if (IsDataMovementOp(op.op_type)) return EmitDataMovement(name, op);
  if (IsAttentionOp(op.op_type)) return EmitAttention(name, op);
  if (IsScanOp(op.op_type)) return EmitScan(name, op);
  if (IsIndexingOp(op.op_type)) return EmitIndexing(name, op);
  if (IsRotaryOp(op.op_type)) return EmitRotary(name, op);
  if (IsGroupedConvOp(op.op_type)) return EmitGroupedConv(name, op);
  return EmitPooling(name, op);
}

std::string TranslationUnit(const std::vector<KernelSource>& kernels) {
  std::string tu = Prelude();
  for (const auto& k : kernels) tu += "\n" + k.source;
  return tu;
}

}  // namespace ortc::backends::cuda::codegen
