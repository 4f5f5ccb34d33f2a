// Decode attention split over the keys (flash-decoding): a FusedAttention of at most
// codegen::kDecodeMaxRows query rows whose rows alone would leave the GPU idle, or whose keys
// exceed one block's shared memory, becomes DecodeAttentionPartial (one block per run of keys,
// writing the run's max, sum of exp and unnormalised output in fp32) and DecodeAttentionMerge
// (rescales the runs to the largest max, normalises, writes the output as the op did). Runs
// after ApplyPrecision, so the runs' records stay fp32 whatever the device precision.
#include <onnx/onnx_pb.h>

#include "cuda/compile/codegen/kernel_codegen.h"
#include "cuda/compile/lowering.h"
#include "cuda/compile/lowering_ir_index.h"

namespace ortc::backends::cuda {

using lowering::IrOp;
using lowering::SubgraphIr;

int SplitDecodeAttention(SubgraphIr* ir) {
  std::vector<IrOp> ops;
  int split = 0;
  for (auto& op : ir->ops) {
    // Lowering writes every FusedAttention's q, k and v as explicit [b, h, rows, cols] views.
    const auto q = op.IntsAttr("q_shape"), k = op.IntsAttr("k_shape"), v = op.IntsAttr("v_shape");
    const bool decode = !op.removed && op.op_type == "FusedAttention" && q.size() == 4 &&
                        k.size() == 4 && v.size() == 4 && q[2] >= 1 &&
                        q[2] <= codegen::kDecodeMaxRows;
    const int64_t splits = decode ? codegen::DecodeKeySplits(q[0] * q[1] * q[2], k[2]) : 1;
    if (splits <= 1) {
      ops.push_back(std::move(op));
      continue;
    }
    const int runs = NewValue(ir, op.name + "/runs", onnx::TensorProto::FLOAT,
                              {q[0], q[1], q[2], splits, v[3] + 2});
    IrOp merge;
    merge.name = op.name + "/merge";
    merge.op_type = codegen::kDecodeMergeOp;
    merge.domain = op.domain;
    merge.since_version = op.since_version;
    merge.inputs = {runs};
    merge.outputs = op.outputs;
    if (const auto perm = op.IntsAttr("out_perm"); !perm.empty())
      merge.SetIntsAttr("out_perm", perm);
    merge.SetIntAttr("key_splits", splits);
    IrOp partial = std::move(op);
    partial.op_type = codegen::kDecodePartialOp;
    partial.outputs = {runs};
    partial.SetIntAttr("key_splits", splits);
    ops.push_back(std::move(partial));
    ops.push_back(std::move(merge));
    ++split;
  }
  ir->ops = std::move(ops);
  return split;
}

}  // namespace ortc::backends::cuda
