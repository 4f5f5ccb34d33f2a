// Lookups the CUDA lowering's pattern passes share over a SubgraphIr: each value's producer,
// static dims, whether a program output reads it, and float constants read as float32.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/element_types.h"
#include "base/half_float.h"
#include "cuda/compile/op_desc.h"
#include "lowering/subgraph_ir.h"

namespace ortc::backends::cuda {

// A new intermediate value of a static shape, for an op a pass adds; returns its index.
inline int NewValue(lowering::SubgraphIr* ir, const std::string& name, int32_t dtype,
                    const std::vector<int64_t>& dims) {
  graph::TensorInfo info;
  info.dtype = dtype;
  info.shape.rank_known = true;
  for (int64_t d : dims) info.shape.dims.push_back(graph::Dim{d, ""});
  return ir->AddIntermediate(name, std::move(info));
}

// A snapshot: rebuild it after ops are added, removed or rewired.
struct IrIndex {
  const lowering::SubgraphIr& ir;
  std::vector<int> producer;  // per value: the live op writing it, or -1

  explicit IrIndex(const lowering::SubgraphIr& g) : ir(g), producer(g.values.size(), -1) {
    for (size_t i = 0; i < g.ops.size(); ++i) {
      if (g.ops[i].removed) continue;
      for (int v : g.ops[i].outputs) {
        if (v >= 0) producer[v] = static_cast<int>(i);
      }
    }
  }
  std::vector<int64_t> Dims(int v) const { return StaticDims(ir.values[v].info); }
  // Not a program output: a pass may stop materializing it.
  bool Internal(int v) const { return ir.values[v].kind != lowering::ValueKind::kOutput; }
  int OpIndex(const lowering::IrOp* op) const { return static_cast<int>(op - ir.ops.data()); }
  // The live op of this type producing v, when v is internal and read by one op only.
  const lowering::IrOp* SoleProducer(int v, const std::string& op_type) const {
    if (v < 0 || producer[v] < 0 || !Internal(v) || ir.UseCount(v) != 1) return nullptr;
    const lowering::IrOp& op = ir.ops[producer[v]];
    return op.op_type == op_type ? &op : nullptr;
  }
  // The values of a float32, float16 or bfloat16 constant (models exported in half precision
  // write their scales and epsilons in it), or of an int32 / int64 one (a Pow's exponent: the
  // dynamo exporter writes tanh GELU's x^3 with an int64 3), nullopt for anything else.
  std::optional<std::vector<float>> Floats(int v) const {
    if (v < 0 || ir.values[v].kind != lowering::ValueKind::kWeight || !ir.values[v].bytes)
      return std::nullopt;
    const int32_t t = ir.values[v].info.dtype;
    const bool integer = t == onnx::TensorProto::INT64 || t == onnx::TensorProto::INT32;
    const bool floating = t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16 ||
                          t == onnx::TensorProto::BFLOAT16;
    if (!integer && !floating) return std::nullopt;
    const size_t width = HeldElementBytes(t);
    auto bytes = ir.values[v].bytes->ReadAll();
    if (!bytes.ok() || (*bytes)->size() % width != 0) return std::nullopt;
    const std::string& b = **bytes;
    std::vector<float> f(b.size() / width);
    for (size_t i = 0; i < f.size(); ++i) {
      if (integer) {
        int64_t n = 0;
        if (width == 8) {
          std::memcpy(&n, b.data() + 8 * i, 8);
        } else {
          int32_t n32 = 0;
          std::memcpy(&n32, b.data() + 4 * i, 4);
          n = n32;
        }
        f[i] = static_cast<float>(n);
        continue;
      }
      if (width == 4) {
        std::memcpy(&f[i], b.data() + 4 * i, 4);
        continue;
      }
      uint16_t h;
      std::memcpy(&h, b.data() + 2 * i, 2);
      f[i] = t == onnx::TensorProto::FLOAT16 ? exec::HalfToFloat(h) : exec::Bf16ToFloat(h);
    }
    return f;
  }
  // The one value of a single-element float32 constant.
  std::optional<float> Scalar(int v) const {
    auto f = Floats(v);
    if (!f || f->size() != 1) return std::nullopt;
    return (*f)[0];
  }
};

}  // namespace ortc::backends::cuda
