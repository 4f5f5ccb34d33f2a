// Recognises RMSNorm as exporters write it out op by op (Llama-family models) and replaces it
// with one RMSNormalization op, which runs as one row kernel instead of four steps.
//
//   y = [Cast back] (x * rsqrt(ReduceMean(x^2, last axis) + eps)) [* weight],
//   x = [Cast to float] x0
//
// The square is Pow(x, 2) or Mul(x, x); the eps Add takes a scalar constant > 0 on either side;
// the normalization is x * r or x / s where r, s are what the exporters write for v^-0.5 and
// v^0.5: Sqrt, Reciprocal, Div(1, .) and Pow(., c) in any chain, judged by the power of v they
// compute (Reciprocal(Sqrt(v)), Div(1, Sqrt(v)), Pow(v, -0.5), Sqrt(Reciprocal(v)) alike).
// Hugging Face's LlamaRMSNorm computes in float32 and casts back before the weight; those float
// Casts are absorbed too: the kernel computes in fp32 whatever the storage type.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "cuda/compile/lowering.h"
#include "cuda/compile/lowering_ir_index.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;
using onnx::TensorProto;

bool IsFloat(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::FLOAT16 || t == TensorProto::BFLOAT16;
}

// A single-element constant as a number: float types through IrIndex::Scalar, int32/int64 as
// written (an exporter may give Pow an integer exponent).
std::optional<double> Number(const IrIndex& x, int v) {
  if (v < 0) return std::nullopt;
  if (auto f = x.Scalar(v)) return *f;
  const auto& value = x.ir.values[v];
  const int32_t t = value.info.dtype;
  if (value.kind != ValueKind::kWeight || !value.bytes ||
      (t != TensorProto::INT64 && t != TensorProto::INT32))
    return std::nullopt;
  auto bytes = value.bytes->ReadAll();
  if (!bytes.ok()) return std::nullopt;
  const std::string& b = **bytes;
  if (t == TensorProto::INT64 && b.size() == 8) {
    int64_t i;
    std::memcpy(&i, b.data(), 8);
    return static_cast<double>(i);
  }
  if (t == TensorProto::INT32 && b.size() == 4) {
    int32_t i;
    std::memcpy(&i, b.data(), 4);
    return static_cast<double>(i);
  }
  return std::nullopt;
}

// Whether `op` is a ReduceMean over the last axis alone of its input, keeping dims. Axes come
// from the attribute (opset <= 17) or a constant input (opset 18).
bool MeansLastAxis(const IrIndex& x, const IrOp& op) {
  if (op.op_type != "ReduceMean" || op.inputs.empty() || op.IntAttr("keepdims", 1) != 1)
    return false;
  std::vector<int64_t> axes;
  if (const auto* a = op.Attr("axes")) axes.assign(a->ints().begin(), a->ints().end());
  if (op.inputs.size() > 1 && op.inputs[1] >= 0) {
    const auto& value = x.ir.values[op.inputs[1]];
    if (value.kind != ValueKind::kWeight || !value.bytes || value.info.dtype != TensorProto::INT64)
      return false;
    auto bytes = value.bytes->ReadAll();
    if (!bytes.ok()) return false;
    axes.resize((*bytes)->size() / 8);
    std::memcpy(axes.data(), (*bytes)->data(), axes.size() * 8);
  }
  const auto rank = static_cast<int64_t>(x.Dims(op.inputs[0]).size());
  return rank > 0 && axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

// The one live op reading v, when v is internal and read once (one input slot); else -1.
int SoleReader(const IrIndex& x, int v) {
  if (v < 0 || !x.Internal(v) || x.ir.UseCount(v) != 1) return -1;
  for (size_t i = 0; i < x.ir.ops.size(); ++i) {
    if (x.ir.ops[i].removed) continue;
    for (int in : x.ir.ops[i].inputs)
      if (in == v) return static_cast<int>(i);
  }
  return -1;
}

int Other(const IrOp& op, int v) {
  return op.inputs[0] == v ? op.inputs[1] : op.inputs[0];
}

bool Binary(const IrOp& op) {
  return op.inputs.size() == 2 && op.inputs[0] >= 0 && op.inputs[1] >= 0;
}

// A float Cast between two float types (the round trip LlamaRMSNorm writes).
bool FloatCast(const IrIndex& x, const IrOp& op) {
  return op.op_type == "Cast" && op.inputs.size() == 1 && op.inputs[0] >= 0 &&
         IsFloat(x.ir.values[op.inputs[0]].info.dtype) &&
         IsFloat(static_cast<int32_t>(op.IntAttr("to", 0)));
}

struct Match {
  int src = -1, scale = -1, out = -1;
  float eps = 0;
  std::vector<int> ops;  // every op the RMSNormalization replaces
};

// RMSNorm around the ReduceMean `m`, or nullopt.
std::optional<Match> MatchAt(const IrIndex& x, int m) {
  const IrOp& mean = x.ir.ops[m];
  if (!MeansLastAxis(x, mean)) return std::nullopt;
  Match r;
  r.ops = {m};
  // The square of x, read by the mean alone.
  const int sq = mean.inputs[0];
  const int p = x.producer[sq];
  if (p < 0 || SoleReader(x, sq) != m) return std::nullopt;
  const IrOp& square = x.ir.ops[p];
  if (!Binary(square)) return std::nullopt;
  int xv = -1;
  if (square.op_type == "Pow" && Number(x, square.inputs[1]) == 2.0) {
    xv = square.inputs[0];
  } else if (square.op_type == "Mul" && square.inputs[0] == square.inputs[1]) {
    xv = square.inputs[0];
  } else {
    return std::nullopt;
  }
  r.ops.push_back(p);
  const auto dims = x.Dims(xv);
  if (dims.empty() || !IsFloat(x.ir.values[xv].info.dtype)) return std::nullopt;
  // mean + eps, eps a positive scalar constant on either side.
  const int mv = mean.outputs[0];
  const int a = SoleReader(x, mv);
  if (a < 0 || x.ir.ops[a].op_type != "Add" || !Binary(x.ir.ops[a])) return std::nullopt;
  const auto eps = x.Scalar(Other(x.ir.ops[a], mv));
  if (!eps || !(*eps > 0) || !std::isfinite(*eps)) return std::nullopt;
  r.eps = *eps;
  r.ops.push_back(a);
  int cur = x.ir.ops[a].outputs[0];
  if (x.Dims(cur) != x.Dims(mv)) return std::nullopt;  // eps must not broadcast the mean
  // Forward from v = mean + eps through ops computing powers of it, to x * v^-0.5 or x / v^0.5.
  double power = 1;
  int n = -1;
  for (int step = 0; step < 4 && n < 0; ++step) {
    const int o = SoleReader(x, cur);
    if (o < 0) return std::nullopt;
    const IrOp& op = x.ir.ops[o];
    const std::string& t = op.op_type;
    if (t == "Sqrt" && op.inputs.size() == 1) {
      power *= 0.5;
    } else if (t == "Reciprocal" && op.inputs.size() == 1) {
      power = -power;
    } else if (t == "Div" && Binary(op) && op.inputs[1] == cur && Number(x, op.inputs[0]) == 1.0) {
      power = -power;
    } else if (t == "Pow" && Binary(op) && op.inputs[0] == cur && Number(x, op.inputs[1])) {
      power *= *Number(x, op.inputs[1]);
    } else if (t == "Mul" && Binary(op) && Other(op, cur) == xv && power == -0.5) {
      n = op.outputs[0];
    } else if (t == "Div" && Binary(op) && op.inputs[0] == xv && op.inputs[1] == cur &&
               power == 0.5) {
      n = op.outputs[0];
    } else {
      return std::nullopt;
    }
    r.ops.push_back(o);
    cur = op.outputs[0];
    if (n < 0 && x.Dims(cur) != x.Dims(mv)) return std::nullopt;
  }
  if (n < 0 || x.Dims(n) != dims) return std::nullopt;
  // Then float Casts and at most one Mul by a constant [C] weight, in any order.
  const int64_t c = dims.back();
  r.out = n;
  while (true) {
    const int o = SoleReader(x, r.out);
    if (o < 0) break;
    const IrOp& op = x.ir.ops[o];
    if (FloatCast(x, op)) {
      r.ops.push_back(o);
      r.out = op.outputs[0];
      continue;
    }
    if (op.op_type != "Mul" || !Binary(op) || r.scale >= 0 || op.inputs[0] == op.inputs[1]) break;
    const int w = Other(op, r.out);
    const auto wf = x.Floats(w);
    const auto wd = x.Dims(w);
    if (!wf || static_cast<int64_t>(wf->size()) != c || wd.empty() || wd.back() != c ||
        x.Dims(op.outputs[0]) != dims)
      break;
    r.scale = w;
    r.ops.push_back(o);
    r.out = op.outputs[0];
  }
  if (!IsFloat(x.ir.values[r.out].info.dtype)) return std::nullopt;
  // x itself: the Cast to float32 before the norm is absorbed when only the norm reads it.
  int uses = 0;
  for (int o : r.ops)
    for (int in : x.ir.ops[o].inputs) uses += in == xv;
  r.src = xv;
  const int cast = x.producer[xv];
  if (cast >= 0 && FloatCast(x, x.ir.ops[cast]) && x.Internal(xv) && x.ir.UseCount(xv) == uses) {
    r.src = x.ir.ops[cast].inputs[0];
    r.ops.push_back(cast);
  }
  return r;
}

}  // namespace

int RecogniseRmsNorm(SubgraphIr* ir) {
  int found = 0;
  for (size_t m = 0; m < ir->ops.size(); ++m) {
    if (ir->ops[m].removed || ir->ops[m].op_type != "ReduceMean") continue;
    const IrIndex x(*ir);  // rebuilt per candidate: an earlier match rewired the graph
    auto match = MatchAt(x, static_cast<int>(m));
    if (!match) continue;
    IrOp rms;
    rms.name = ir->ops[m].name + "/rmsnorm";
    rms.op_type = "RMSNormalization";
    rms.since_version = 23;
    rms.inputs = {match->src, match->scale};  // no weight: scale absent, the kernel uses 1
    rms.outputs = {match->out};
    rms.SetIntAttr("axis", -1);
    rms.SetFloatAttr("epsilon", match->eps);
    // At the last replaced op's place: src and the weight exist before it, readers of the
    // output come after it.
    const int last = *std::max_element(match->ops.begin(), match->ops.end());
    for (int o : match->ops) ir->ops[o].removed = true;
    ir->ops[last] = std::move(rms);
    ++found;
  }
  return found;
}

}  // namespace ortc::backends::cuda
