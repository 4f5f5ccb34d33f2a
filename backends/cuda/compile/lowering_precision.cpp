// Precision rewrite of a lowering IR: device element types, converted weights, boundary casts.
#include <onnx/onnx_pb.h>

#include <algorithm>
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

// The float program outputs a Concat writes from at least one float program input: a cache
// growing by the rows a step computes (`present = Concat(past, new)`). They stay float, like
// the inputs they copy: the Concat converts the computed rows as it copies them, where
// narrowing would cost a whole-cache cast in, the Concat and a whole-cache cast out, and would
// round the past on its way through.
std::set<int> FloatAppends(const SubgraphIr& ir) {
  std::set<int> outputs;
  for (const auto& op : ir.ops) {
    if (op.removed || op.op_type != "Concat" || !op.domain.empty() || op.outputs.size() != 1)
      continue;
    const auto& out = ir.values[op.outputs[0]];
    if (out.kind != ValueKind::kOutput || out.info.dtype != TensorProto::FLOAT) continue;
    for (int v : op.inputs) {
      if (v >= 0 && ir.values[v].kind == ValueKind::kInput &&
          ir.values[v].info.dtype == TensorProto::FLOAT) {
        outputs.insert(op.outputs[0]);
        break;
      }
    }
  }
  return outputs;
}

// Ops whose kernels load each input in its own float type: they read a float append as it is.
bool ReadsAnyFloat(const IrOp& op) {
  return op.op_type == "FusedAttention";
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
  const std::set<int> appends = FloatAppends(*ir);
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
  auto writes_append = [&](const IrOp& op) {
    return op.outputs.size() == 1 && appends.count(op.outputs[0]) > 0;
  };
  for (int in : ir->inputs) {
    if (ir->values[in].info.dtype != TensorProto::FLOAT) continue;
    int device = -1;
    for (auto& op : ir->ops) {
      if (op.removed || writes_append(op)) continue;  // an append copies the input as it is
      for (int& v : op.inputs) {
        if (v != in) continue;
        if (device < 0) device = fresh(in);
        v = device;
      }
    }
    if (device >= 0) head.push_back(CastOp("cast_in_" + ir->values[in].name, in, device, dt));
  }
  // Readers of an append that load one type read a narrowed copy of it.
  std::vector<std::pair<size_t, IrOp>> narrowed;  // (insert before op, cast)
  for (int out : appends) {
    int device = -1;
    for (size_t k = 0; k < ir->ops.size(); ++k) {
      IrOp& op = ir->ops[k];
      if (op.removed || ReadsAnyFloat(op)) continue;
      for (int& v : op.inputs) {
        if (v != out) continue;
        if (device < 0) {
          device = fresh(out);
          narrowed.emplace_back(k, CastOp("narrow_" + ir->values[out].name, out, device, dt));
        }
        v = device;
      }
    }
  }
  std::stable_sort(narrowed.begin(), narrowed.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t j = 0; j < narrowed.size(); ++j)
    ir->ops.insert(ir->ops.begin() + static_cast<std::ptrdiff_t>(narrowed[j].first),
                   std::move(narrowed[j].second));
  for (int out : ir->outputs) {
    if (ir->values[out].info.dtype != TensorProto::FLOAT || appends.count(out)) continue;
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
