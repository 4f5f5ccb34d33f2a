// A decode step's rotary query read by its attention: when a decode-shaped FusedAttention (at
// most codegen::kDecodeMaxRows query rows), or the runs of one split over its keys
// (DecodeAttentionPartial), reads q whole and in order from a RotaryEmbedding that nothing else
// reads, the attention takes the rotary's input view and tables instead and rotates q as it loads
// it (decode_attention_kernels.cpp). One kernel less per layer and step, and q's rotated values
// never round-trip through memory. K's rotary stays: the rotated keys are the cache's new row.
// Runs after SplitDecodeAttention (a FusedAttention past one block's keys is generated only as
// runs) and after ApplyPrecision (the tables are read in the device's precision).
#include "cuda/compile/codegen/kernel_codegen.h"
#include "cuda/compile/lowering.h"
#include "cuda/compile/lowering_ir_index.h"

namespace ortc::backends::cuda {

using lowering::IrOp;
using lowering::SubgraphIr;

namespace {

// Whether the attention's q view reads the rotary's output y whole and in order: y is the
// contiguous tensor of the rotary's [b, h, rows, cols] view, so element (b, h, r, c) of q is
// element (b, h, r, c) of that view.
bool ReadsWhole(const IrOp& attention, const IrOp& rotary) {
  const auto shape = attention.IntsAttr("q_shape"), strides = attention.IntsAttr("q_strides");
  const auto x_shape = rotary.IntsAttr("x_shape");
  if (shape.size() != 4 || strides.size() != 4 || shape != x_shape ||
      attention.IntAttr("q_offset", 0) != 0 || attention.IntAttr("q_head_group", 1) != 1)
    return false;
  int64_t stride = 1;
  for (size_t a = 4; a-- > 0;) {
    if (shape[a] != 1 && strides[a] != stride) return false;
    stride *= shape[a];
  }
  return true;
}

}  // namespace

int AbsorbQueryRotary(SubgraphIr* ir) {
  int absorbed = 0;
  for (size_t i = 0; i < ir->ops.size(); ++i) {
    IrOp& attention = ir->ops[i];
    const auto q_shape = attention.IntsAttr("q_shape");
    const bool decode_op =
        attention.op_type == "FusedAttention" || attention.op_type == codegen::kDecodePartialOp;
    if (attention.removed || !decode_op || attention.inputs.size() != 5 || q_shape.size() != 4 ||
        q_shape[2] < 1 || q_shape[2] > codegen::kDecodeMaxRows)
      continue;
    const IrIndex index(*ir);
    const IrOp* rotary = index.SoleProducer(attention.inputs[0], "RotaryEmbedding");
    if (!rotary || rotary->IntsAttr("x_shape").size() != 4 || !ReadsWhole(attention, *rotary))
      continue;
    const IrOp saved = attention;
    attention.inputs[0] = rotary->inputs[0];
    attention.inputs.push_back(rotary->inputs[1]);  // cos
    attention.inputs.push_back(rotary->inputs[2]);  // sin
    attention.SetIntsAttr("q_shape", rotary->IntsAttr("x_shape"));
    attention.SetIntsAttr("q_strides", rotary->IntsAttr("x_strides"));
    attention.SetIntAttr("q_offset", rotary->IntAttr("x_offset", 0));
    attention.SetIntAttr("q_head_group", rotary->IntAttr("x_head_group", 1));
    attention.SetIntAttr("q_rotary_dim", rotary->IntAttr("rotary_dim", q_shape[3]));
    // The generator's own rules decide; the IR stays as it was where they refuse.
    auto desc = OpDescFromIr(*ir, attention);
    if (!desc.ok() || !codegen::Unsupported(*desc).empty()) {
      attention = saved;
      continue;
    }
    ir->ops[index.producer[saved.inputs[0]]].removed = true;  // its only reader reads x now
    ++absorbed;
  }
  return absorbed;
}

}  // namespace ortc::backends::cuda
