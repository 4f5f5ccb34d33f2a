// Precision rewrite of a lowering IR: device element types, converted weights, boundary casts.
#include <onnx/onnx_pb.h>

#include <set>

#include "cuda/compile/lowering.h"
#include "cuda/compile/packing.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;
using onnx::TensorProto;

IrOp CastOp(const std::string& name, int from, int to, int32_t dtype) {
  IrOp op;
  op.name = name;
  op.op_type = "Cast";
  op.since_version = 13;
  op.inputs = {from};
  op.outputs = {to};
  op.SetIntAttr("to", dtype);
  return op;
}

}  // namespace

Status ApplyPrecision(SubgraphIr* ir, Precision precision) {
  const int32_t dt = DeviceFloatType(precision);
  if (dt == TensorProto::FLOAT) return Status::Ok();  // fp32 and tf32 store fp32
  const std::string suffix = "_" + PrecisionName(precision);
  // Float inputs that are parameters, not tensors of type T: they stay float32.
  std::set<int> keep;
  for (const auto& op : ir->ops) {
    if (op.removed || op.op_type != "Resize") continue;
    for (size_t i = 1; i < op.inputs.size() && i < 3; ++i) keep.insert(op.inputs[i]);
  }
  for (auto& op : ir->ops) {
    if (!op.removed && op.op_type == "Cast" && op.IntAttr("to", 0) == TensorProto::FLOAT)
      op.SetIntAttr("to", dt);
  }
  for (size_t v = 0; v < ir->values.size(); ++v) {
    auto& value = ir->values[v];
    if (value.info.dtype != TensorProto::FLOAT || keep.count(static_cast<int>(v))) continue;
    if (value.kind == ValueKind::kIntermediate) value.info.dtype = dt;
    if (value.kind == ValueKind::kWeight && value.bytes) {
      auto bytes = value.bytes->ReadAll();
      if (!bytes.ok()) return bytes.status();
      value.bytes = bundle::ByteSource::Memory(
          std::make_shared<const std::string>(ConvertFloatBytes(**bytes, dt)));
      value.info.dtype = dt;
    }
  }
  std::vector<IrOp> head, tail;
  auto fresh = [&](int v) {
    lowering::IrValue copy = ir->values[v];
    copy.name += suffix;
    copy.kind = ValueKind::kIntermediate;
    copy.info.dtype = dt;
    copy.bytes.reset();
    ir->values.push_back(std::move(copy));
    return static_cast<int>(ir->values.size()) - 1;
  };
  for (int in : ir->inputs) {
    if (ir->values[in].info.dtype != TensorProto::FLOAT) continue;
    const int device = fresh(in);
    for (auto& op : ir->ops) {
      for (int& v : op.inputs) {
        if (v == in) v = device;
      }
    }
    head.push_back(CastOp("cast_in_" + ir->values[in].name, in, device, dt));
  }
  for (int out : ir->outputs) {
    if (ir->values[out].info.dtype != TensorProto::FLOAT) continue;
    const int device = fresh(out);
    for (auto& op : ir->ops) {
      for (int& v : op.inputs) {
        if (v == out) v = device;
      }
      for (int& v : op.outputs) {
        if (v == out) v = device;
      }
    }
    tail.push_back(CastOp("cast_out_" + ir->values[out].name, device, out, TensorProto::FLOAT));
  }
  head.insert(head.end(), std::make_move_iterator(ir->ops.begin()),
              std::make_move_iterator(ir->ops.end()));
  head.insert(head.end(), std::make_move_iterator(tail.begin()),
              std::make_move_iterator(tail.end()));
  ir->ops = std::move(head);
  return Status::Ok();
}

}  // namespace ortc::backends::cuda
