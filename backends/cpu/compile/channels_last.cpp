// Channels-last layout propagation for the CPU backend's convolutions.
#include "cpu/compile/channels_last.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <map>
#include <set>

namespace ortc::backends::cpu {
namespace {

using lowering::IrOp;
using lowering::IrValue;
using lowering::SubgraphIr;
using lowering::ValueKind;

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1}, kToNchw = {0, 3, 1, 2};

// A float tensor of known rank 4 (sizes may be symbolic: a dynamic batch or image size).
bool Is4dFloat(const SubgraphIr& ir, int v) {
  if (v < 0) return false;
  const auto& info = ir.values[v].info;
  return info.dtype == onnx::TensorProto::FLOAT && info.shape.rank_known &&
         info.shape.dims.size() == 4;
}

// Two sizes provably equal: the same number, or the same named symbol.
bool SameDim(const graph::Dim& a, const graph::Dim& b) {
  if (a.known() || b.known()) return a.value == b.value;
  return !a.symbol.empty() && a.symbol == b.symbol;
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
        // An NCHW input without an NHWC copy yet (the model's image) is read as it is: oneDNN
        // takes NCHW in and NHWC out, which spares a Transpose.
        if (!nhwc_[op.inputs[0]] && !as_nhwc_.count(op.inputs[0]))
          op.SetIntAttr("input_channels_first", 1);
        else
          op.inputs[0] = InLayout(op.inputs[0], true);
        if (op.inputs.size() > 3 && op.inputs[3] >= 0) op.inputs[3] = InLayout(op.inputs[3], true);
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
      if (IsChannelConcat(op)) {
        for (auto& v : op.inputs) v = InLayout(v, true);
        op.SetIntAttr("axis", 3);
        MarkNhwc(op.outputs[0]);
        ++counts_.concats;
        continue;
      }
      if (int scales = NhwcResizeScales(op); scales >= 0) {
        op.inputs[0] = InLayout(op.inputs[0], true);
        op.inputs[2] = scales;
        MarkNhwc(op.outputs[0]);
        ++counts_.resizes;
        continue;
      }
      if (IsLayoutFree(op) && CanStayNhwc(op)) {
        const int out = op.outputs[0];
        for (size_t i = 0; i < op.inputs.size(); ++i) {
          const int v = op.inputs[i];
          if (v < 0 || IsScalar(*ir_, v)) continue;
          op.inputs[i] =
              !nhwc_[v] && IsPerChannel(v, out) ? PerChannelAsNhwc(v) : InLayout(v, true);
        }
        MarkNhwc(out);
        continue;
      }
      // Every other reader sees NCHW.
      for (auto& v : ReadsOf(op))
        if (*v >= 0 && nhwc_[*v]) *v = InLayout(*v, false);
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
    return Is4dFloat(*ir_, op.inputs[0]) && Is4dFloat(*ir_, op.outputs[0]) && Is4dFloat(*ir_, w) &&
           ir_->values[w].kind == ValueKind::kWeight;
  }

  // A Concat of 4-D floats along channels with some input already NHWC: it concatenates
  // along NHWC's last axis instead.
  bool IsChannelConcat(const IrOp& op) const {
    if (op.op_type != "Concat" || !op.domain.empty() || op.outputs.size() != 1 ||
        !Is4dFloat(*ir_, op.outputs[0]))
      return false;
    const int64_t axis = op.IntAttr("axis", 0);
    if (axis != 1 && axis != -3) return false;
    bool any_nhwc = false;
    for (int v : op.inputs) {
      if (!Is4dFloat(*ir_, v)) return false;
      any_nhwc = any_nhwc || nhwc_[v];
    }
    return any_nhwc;
  }

  // A Resize of an NHWC tensor by constant scales that keep batch and channels ([1, 1, h, w]):
  // returns the scales for the NHWC tensor ([1, h, w, 1]), or -1.
  int NhwcResizeScales(const IrOp& op) {
    if (op.op_type != "Resize" || !op.domain.empty() || op.since_version < 11 ||
        op.inputs.size() != 3 || op.outputs.size() != 1 || op.inputs[0] < 0 ||
        !nhwc_[op.inputs[0]] || !Is4dFloat(*ir_, op.outputs[0]))
      return -1;
    if (op.inputs[1] >= 0) {  // roi: only an empty one (it is read for tf_crop_and_resize)
      const auto& roi = ir_->values[op.inputs[1]].info.shape;
      if (!roi.is_static() || roi.dims.size() != 1 || roi.dims[0].value != 0) return -1;
    }
    const int sv = op.inputs[2];
    if (sv < 0 || ir_->values[sv].kind != ValueKind::kWeight || !ir_->values[sv].bytes ||
        ir_->values[sv].info.dtype != onnx::TensorProto::FLOAT)
      return -1;
    auto bytes = ir_->values[sv].bytes->ReadAll();
    if (!bytes.ok() || (*bytes)->size() != 4 * sizeof(float)) return -1;
    float sc[4];
    std::memcpy(sc, (*bytes)->data(), sizeof sc);
    if (sc[0] != 1.f || sc[1] != 1.f) return -1;
    const std::vector<float> permuted = {1.f, sc[2], sc[3], 1.f};
    const int result = ir_->AddWeight(
        ir_->values[sv].name + "/nhwc", ir_->values[sv].info,
        std::make_shared<const std::string>(reinterpret_cast<const char*>(permuted.data()),
                                            permuted.size() * sizeof(float)));
    nhwc_.push_back(false);
    return result;
  }

  // A float 2-D pooling whose input is already NHWC (it is not worth a layout change itself).
  bool IsPoolCandidate(const IrOp& op) const {
    static const std::set<std::string> kPools = {"MaxPool", "AveragePool", "GlobalAveragePool",
                                                 "GlobalMaxPool"};
    if (!op.domain.empty() || !kPools.count(op.op_type) || op.inputs.empty() ||
        op.outputs.empty() || op.inputs[0] < 0 || !nhwc_[op.inputs[0]])
      return false;
    if (op.outputs.size() > 1 && op.outputs[1] >= 0) return false;  // MaxPool's indices
    return Is4dFloat(*ir_, op.outputs[0]);
  }

  // Every value the op reads: its own inputs and the outer values its subgraphs capture (nested
  // programs read those in NCHW too).
  std::vector<int*> ReadsOf(IrOp& op) {
    std::vector<int*> reads;
    for (auto& v : op.inputs) reads.push_back(&v);
    return reads;
  }

  // An elementwise op stays NHWC when some operand is NHWC and every other operand is a
  // scalar, a per-channel value, or any 4-D float. Broadcasting works dimension by dimension,
  // so permuting every 4-D operand the same way permutes the result the same way: 4-D NCHW
  // operands are transposed, per-channel ones re-declared, scalars read as they are.
  bool CanStayNhwc(const IrOp& op) {
    bool any_nhwc = false;
    const int out = op.outputs[0];
    if (!Is4dFloat(*ir_, out)) return false;
    for (int v : op.inputs) {
      if (v < 0) continue;
      if (nhwc_[v]) {
        any_nhwc = true;
        continue;
      }
      if (IsScalar(*ir_, v) || IsPerChannel(v, out)) continue;
      if (!Is4dFloat(*ir_, v)) return false;
    }
    return any_nhwc;
  }

  // An NCHW operand holding one value per channel of out: [1 or N, C, 1, 1] or [C, 1, 1].
  // Its bytes are already the NHWC operand's ([1 or N, 1, 1, C] or [1, 1, C]).
  bool IsPerChannel(int v, int out) const {
    if (v < 0 || nhwc_[v]) return false;
    const auto& s = ir_->values[v].info.shape;
    const auto& o = ir_->values[out].info.shape.dims;
    if (ir_->values[v].info.dtype != onnx::TensorProto::FLOAT || !s.rank_known || o.size() != 4 ||
        !o[1].known())
      return false;
    const auto& d = s.dims;
    if (d.size() == 4)
      return (d[0].value == 1 || SameDim(d[0], o[0])) && d[1].value == o[1].value &&
             d[2].value == 1 && d[3].value == 1;
    if (d.size() == 3) return d[0].value == o[1].value && d[1].value == 1 && d[2].value == 1;
    return false;
  }

  // The per-channel operand v with its NHWC shape: a constant is re-declared (same bytes), a
  // computed value goes through a Reshape.
  int PerChannelAsNhwc(int v) {
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
      // A dynamic batch is the only size not known here: -1 lets Reshape infer it.
      for (const auto& dim : info.shape.dims) dims.push_back(dim.known() ? dim.value : -1);
      const int shape = ir_->AddInt64s(ir_->values[v].name + "/nhwc_shape", dims);
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
  int InLayout(int v, bool want_nhwc) {
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
    nhwc_.push_back(false);
    return ir_->AddIntermediate(name, info);
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
