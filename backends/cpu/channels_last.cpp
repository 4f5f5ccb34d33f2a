// Channels-last layout propagation for the CPU backend's convolutions.
#include "cpu/channels_last.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <set>

namespace ortc::backends::cpu {
namespace {

using lowering::IrOp;
using lowering::IrValue;
using lowering::SubgraphIr;
using lowering::ValueKind;

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1}, kToNchw = {0, 3, 1, 2};

bool IsStatic4dFloat(const SubgraphIr& ir, int v) {
  if (v < 0) return false;
  const auto& info = ir.values[v].info;
  return info.dtype == onnx::TensorProto::FLOAT && info.shape.rank_known &&
         info.shape.dims.size() == 4 && info.shape.is_static();
}

bool IsScalar(const SubgraphIr& ir, int v) {
  const auto& s = ir.values[v].info.shape;
  if (!s.rank_known || !s.is_static()) return false;
  for (const auto& d : s.dims)
    if (d.value != 1) return false;
  return true;
}

graph::Shape Permuted(const graph::Shape& s, const std::vector<int64_t>& perm) {
  graph::Shape out = s;
  for (size_t i = 0; i < perm.size(); ++i) out.dims[i] = s.dims[perm[i]];
  return out;
}

// Ops whose result does not depend on the layout when every 4-D operand shares it.
bool IsLayoutFree(const IrOp& op) {
  static const std::set<std::string> kOps = {
      "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Identity",
      "Abs",  "Neg",       "Exp",  "Sqrt",    "Erf",  "Elu",         "Selu",      "Softplus",
      "Add",  "Sub",       "Mul",  "Div",     "Max",  "Min",         "Sum"};
  return op.domain.empty() && op.outputs.size() == 1 && kOps.count(op.op_type) > 0;
}

class Rewriter {
 public:
  explicit Rewriter(SubgraphIr* ir) : ir_(ir), nhwc_(ir->values.size(), false) {}

  Result<ChannelsLastCounts> Run() {
    const size_t original = ir_->ops.size();
    for (size_t k = 0; k < original; ++k) {
      IrOp& op = ir_->ops[k];
      if (op.removed) continue;
      if (IsConvCandidate(op)) {
        op.SetIntAttr("channels_last", 1);
        ++counts_.convolutions;
        op.inputs[0] = InLayout(op.inputs[0], true, k);
        if (op.inputs.size() > 3 && op.inputs[3] >= 0)
          op.inputs[3] = InLayout(op.inputs[3], true, k);
        MarkNhwc(op.outputs[0]);
        continue;
      }
      if (IsPoolCandidate(op)) {
        // Windowed pooling reads and writes NHWC; global pooling reads NHWC and writes the
        // [N, C, 1, 1] result, whose bytes are the same in both layouts.
        op.SetIntAttr("channels_last", 1);
        ++counts_.pools;
        if (op.op_type == "MaxPool" || op.op_type == "AveragePool") MarkNhwc(op.outputs[0]);
        continue;
      }
      if (IsLayoutFree(op) && CanStayNhwc(op)) {
        const int out = op.outputs[0];
        for (size_t i = 0; i < op.inputs.size(); ++i) {
          const int v = op.inputs[i];
          if (v < 0 || IsScalar(*ir_, v)) continue;
          op.inputs[i] = !nhwc_[v] && IsPerChannel(v, out) ? PerChannelAsNhwc(v, k)
                                                           : InLayout(v, true, k);
        }
        MarkNhwc(out);
        continue;
      }
      // Every other reader sees NCHW.
      for (auto& v : ReadsOf(op))
        if (*v >= 0 && nhwc_[*v]) *v = InLayout(*v, false, k);
    }
    for (auto& t : pending_) ir_->ops.push_back(std::move(t));
    pending_.clear();
    // Program outputs keep their declared layout: the producer writes an NHWC copy and a
    // Transpose writes the output itself.
    for (int out : ir_->outputs) {
      if (!nhwc_[out]) continue;
      const int inner = NewValue(ir_->values[out].name + "/nhwc", ir_->values[out].info);
      ir_->values[inner].info.shape = Permuted(ir_->values[out].info.shape, kToNhwc);
      for (auto& op : ir_->ops)
        for (auto& v : op.outputs)
          if (v == out) v = inner;
      for (auto& op : ir_->ops)
        for (auto& v : op.inputs)
          if (v == out) v = inner;
      nhwc_[inner] = true;
      AddTranspose(inner, out, kToNchw);
      ir_->values[out].info.shape = Permuted(ir_->values[inner].info.shape, kToNchw);
      nhwc_[out] = false;
    }
    for (auto& t : pending_) ir_->ops.push_back(std::move(t));
    if (counts_.convolutions > 0) ir_->SortTopologically();
    return counts_;
  }

 private:
  // A float 2-D convolution with constant weights and static shapes.
  bool IsConvCandidate(const IrOp& op) const {
    if ((op.op_type != "Conv" && op.op_type != "FusedConv") || !op.domain.empty() ||
        op.outputs.size() != 1 || op.inputs.size() < 2)
      return false;
    const int w = op.inputs[1];
    return IsStatic4dFloat(*ir_, op.inputs[0]) && IsStatic4dFloat(*ir_, op.outputs[0]) &&
           IsStatic4dFloat(*ir_, w) && ir_->values[w].kind == ValueKind::kWeight;
  }

  // A float 2-D pooling whose input is already NHWC (it is not worth a layout change itself).
  bool IsPoolCandidate(const IrOp& op) const {
    static const std::set<std::string> kPools = {"MaxPool", "AveragePool", "GlobalAveragePool",
                                                 "GlobalMaxPool"};
    if (!op.domain.empty() || !kPools.count(op.op_type) || op.inputs.empty() ||
        op.outputs.empty() || op.inputs[0] < 0 || !nhwc_[op.inputs[0]])
      return false;
    if (op.outputs.size() > 1 && op.outputs[1] >= 0) return false;  // MaxPool's indices
    return IsStatic4dFloat(*ir_, op.outputs[0]);
  }

  // The op's inputs that are its own (not outer values captured by subgraphs).
  std::vector<int*> ReadsOf(IrOp& op) {
    std::vector<int*> reads;
    for (auto& v : op.inputs) reads.push_back(&v);
    return reads;
  }

  // An elementwise op stays NHWC when some operand is NHWC and every operand is either a
  // scalar or a 4-D float of exactly the output's shape (no broadcast across channels).
  bool CanStayNhwc(const IrOp& op) {
    bool any_nhwc = false;
    const int out = op.outputs[0];
    if (!IsStatic4dFloat(*ir_, out)) return false;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const int v = op.inputs[i];
      if (v < 0) continue;
      if (nhwc_[v]) {
        any_nhwc = true;
        continue;
      }
      if (IsScalar(*ir_, v) || IsPerChannel(v, out)) continue;
      if (!IsStatic4dFloat(*ir_, v)) return false;
      const auto& a = ir_->values[v].info.shape.dims;
      const auto& b = ir_->values[out].info.shape.dims;
      for (size_t d = 0; d < 4; ++d)
        if (a[d].value != b[d].value) return false;
    }
    // Every NHWC operand must also be the output's full shape (in NHWC order).
    for (int v : op.inputs) {
      if (v < 0 || !nhwc_[v]) continue;
      const auto& a = ir_->values[v].info.shape.dims;
      const auto nhwc_out = Permuted(ir_->values[out].info.shape, kToNhwc).dims;
      for (size_t d = 0; d < 4; ++d)
        if (a[d].value != nhwc_out[d].value) return false;
    }
    return any_nhwc;
  }

  // An NCHW operand holding one value per channel of out: [1 or N, C, 1, 1] or [C, 1, 1].
  // Its bytes are already the NHWC operand's ([1 or N, 1, 1, C] or [1, 1, C]).
  bool IsPerChannel(int v, int out) const {
    if (v < 0 || nhwc_[v]) return false;
    const auto& s = ir_->values[v].info.shape;
    const auto& o = ir_->values[out].info.shape.dims;
    if (ir_->values[v].info.dtype != onnx::TensorProto::FLOAT || !s.rank_known ||
        !s.is_static() || o.size() != 4)
      return false;
    const auto& d = s.dims;
    if (d.size() == 4)
      return (d[0].value == 1 || d[0].value == o[0].value) && d[1].value == o[1].value &&
             d[2].value == 1 && d[3].value == 1;
    if (d.size() == 3) return d[0].value == o[1].value && d[1].value == 1 && d[2].value == 1;
    return false;
  }

  // The per-channel operand v with its NHWC shape: a constant is re-declared (same bytes), a
  // computed value goes through a Reshape.
  int PerChannelAsNhwc(int v, size_t reader) {
    auto it = per_channel_.find(v);
    if (it != per_channel_.end()) return it->second;
    graph::TensorInfo info = ir_->values[v].info;
    const auto d = info.shape.dims;
    info.shape.dims = d.size() == 4 ? std::vector<graph::Dim>{d[0], d[2], d[3], d[1]}
                                    : std::vector<graph::Dim>{d[1], d[2], d[0]};
    int result;
    if (ir_->values[v].kind == ValueKind::kWeight && ir_->values[v].bytes) {
      result = static_cast<int>(ir_->values.size());
      IrValue copy = ir_->values[v];
      copy.name += "/nhwc";
      copy.info = info;
      ir_->values.push_back(std::move(copy));
      nhwc_.push_back(false);
    } else {
      std::vector<int64_t> dims;
      for (const auto& dim : info.shape.dims) dims.push_back(dim.value);
      graph::TensorInfo shape_info;
      shape_info.dtype = onnx::TensorProto::INT64;
      shape_info.shape.rank_known = true;
      shape_info.shape.dims = {graph::Dim{static_cast<int64_t>(dims.size()), ""}};
      const int shape = ir_->AddWeight(
          ir_->values[v].name + "/nhwc_shape", shape_info,
          std::make_shared<const std::string>(reinterpret_cast<const char*>(dims.data()),
                                              dims.size() * sizeof(int64_t)));
      nhwc_.push_back(false);
      result = NewValue(ir_->values[v].name + "/nhwc", info);
      IrOp reshape;
      reshape.name = ir_->values[result].name;
      reshape.op_type = "Reshape";
      reshape.since_version = 14;
      reshape.inputs = {v, shape};
      reshape.outputs = {result};
      pending_.push_back(std::move(reshape));
      ++counts_.reshapes;
    }
    per_channel_[v] = result;
    return result;
  }

  void MarkNhwc(int v) {
    if (v < 0 || nhwc_[v]) return;
    ir_->values[v].info.shape = Permuted(ir_->values[v].info.shape, kToNhwc);
    nhwc_[v] = true;
  }

  // v in the wanted layout (a Transpose inserted once per value and direction).
  int InLayout(int v, bool want_nhwc, size_t reader) {
    if (nhwc_[v] == want_nhwc) return v;
    auto& cache = want_nhwc ? as_nhwc_ : as_nchw_;
    auto it = cache.find(v);
    if (it != cache.end()) return it->second;
    graph::TensorInfo info = ir_->values[v].info;
    info.shape = Permuted(info.shape, want_nhwc ? kToNhwc : kToNchw);
    const int t = NewValue(ir_->values[v].name + (want_nhwc ? "/to_nhwc" : "/to_nchw"), info);
    nhwc_[t] = want_nhwc;
    AddTranspose(v, t, want_nhwc ? kToNhwc : kToNchw);
    cache[v] = t;
    return t;
  }

  int NewValue(const std::string& name, const graph::TensorInfo& info) {
    IrValue value;
    value.name = name;
    value.info = info;
    value.kind = ValueKind::kIntermediate;
    ir_->values.push_back(std::move(value));
    nhwc_.push_back(false);
    return static_cast<int>(ir_->values.size()) - 1;
  }

  void AddTranspose(int from, int to, const std::vector<int64_t>& perm) {
    IrOp t;
    t.name = ir_->values[to].name;
    t.op_type = "Transpose";
    t.since_version = 13;
    t.inputs = {from};
    t.outputs = {to};
    t.SetIntsAttr("perm", perm);
    // Appended after the walk: adding to ir_->ops now would move the op being rewritten.
    pending_.push_back(std::move(t));
    ++counts_.transposes;
  }

  SubgraphIr* ir_;
  std::vector<bool> nhwc_;
  std::map<int, int> as_nhwc_, as_nchw_, per_channel_;
  std::vector<IrOp> pending_;
  ChannelsLastCounts counts_;
};

}  // namespace

Result<ChannelsLastCounts> UseChannelsLast(SubgraphIr* ir) {
  return Rewriter(ir).Run();
}

}  // namespace ortc::backends::cpu
