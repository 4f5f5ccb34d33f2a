// The QDQ unit matcher (see qdq_patterns.h). Each check that fails becomes the refusal reason
// the user reads in `ortc compile`'s report, so reasons name the value or attribute at fault.
#include "qdq_patterns.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "constant_bytes.h"

namespace npu {
namespace {

constexpr char kSubset[] = "int8 QDQ Conv and MatMul";

std::string Str(const char* s) {
  return s ? s : "";
}

std::string Quote(const char* s) {
  return "'" + Str(s) + "'";
}

bool IsDefaultDomain(const char* domain) {
  return !domain || !*domain || std::strcmp(domain, "ai.onnx") == 0;
}

bool IsOp(const OrtcNodeView& n, const char* op) {
  return IsDefaultDomain(n.domain) && n.op_type && std::strcmp(n.op_type, op) == 0;
}

std::string DtypeName(int32_t dtype) {
  switch (dtype) {
    case 0:
      return "of unknown type";
    case kFloat:
      return "float32";
    case kUint8:
      return "uint8";
    case kInt8:
      return "int8";
    case kInt32:
      return "int32";
    default:
      return "of dtype " + std::to_string(dtype);
  }
}

// The input at `slot` of a node, -1 when absent.
int32_t Input(const OrtcNodeView& n, uint32_t slot) {
  return slot < n.num_inputs ? n.inputs[slot] : -1;
}

class Matcher {
 public:
  explicit Matcher(const OrtcGraphView& g) : g_(g), consumers_(g.num_values) {
    for (uint32_t n = 0; n < g.num_nodes; ++n)
      for (uint32_t i = 0; i < g.nodes[n].num_inputs; ++i)
        if (g.nodes[n].inputs[i] >= 0)
          consumers_[static_cast<size_t>(g.nodes[n].inputs[i])].push_back(n);
  }

  const OrtcNodeView& N(int32_t n) const { return g_.nodes[n]; }
  const OrtcValueView& V(int32_t v) const { return g_.values[v]; }
  const std::vector<uint32_t>& Consumers(int32_t v) const {
    return consumers_[static_cast<size_t>(v)];
  }

  // The node producing value v when it is of type `op`, else -1.
  int32_t ProducerOp(int32_t v, const char* op) const {
    if (v < 0) return -1;
    const int32_t p = V(v).producer;
    return p >= 0 && IsOp(N(p), op) ? p : -1;
  }

  // Tries the unit around a Conv or MatMul. Nodes of the unit found before a check failed go to
  // *attached, so their refusals can point at the unit.
  bool Match(int32_t op, QdqUnit* u, std::vector<int32_t>* attached, std::string* why) const {
    const OrtcNodeView& node = N(op);
    const bool conv = IsOp(node, "Conv");
    const std::string what = Str(node.op_type);
    u->kind = conv ? StepKind::kConv : StepKind::kMatMul;
    u->op_node = op;
    if (node.num_outputs != 1 || node.outputs[0] < 0 || node.num_inputs < 2 ||
        node.num_inputs > (conv ? 3u : 2u)) {
      *why = what + " has an unexpected number of inputs or outputs";
      return false;
    }
    const int32_t x_f = Input(node, 0), w_f = Input(node, 1), b_f = Input(node, 2);
    const int32_t y_f = node.outputs[0];
    if (x_f < 0 || w_f < 0) {
      *why = what + " lacks an input";
      return false;
    }
    // Find the unit's other nodes first, so that every one of them learns why it is refused.
    u->x_dq = ProducerOp(x_f, "DequantizeLinear");
    u->w_dq = ProducerOp(w_f, "DequantizeLinear");
    u->b_dq = ProducerOp(b_f, "DequantizeLinear");
    const std::vector<uint32_t>& readers = Consumers(y_f);
    if (readers.size() == 1 && IsOp(N(static_cast<int32_t>(readers[0])), "QuantizeLinear") &&
        Input(N(static_cast<int32_t>(readers[0])), 0) == y_f)
      u->q_node = static_cast<int32_t>(readers[0]);
    for (const int32_t n : {u->x_dq, u->w_dq, u->b_dq, u->q_node})
      if (n >= 0 && std::find(attached->begin(), attached->end(), n) == attached->end())
        attached->push_back(n);

    if (u->x_dq < 0) {
      *why = what + " input " + Quote(V(x_f).name) +
             " does not come from a DequantizeLinear (the npu takes " + kSubset + " units only)";
      return false;
    }
    if (!Activation(what, *u, &u->x_value, &u->x_dtype, &u->sx, &u->zx, why)) return false;
    if (u->w_dq < 0 || u->w_dq == u->x_dq) {
      *why = what + " weight is not an int8 constant through DequantizeLinear (" +
             Quote(V(w_f).name) + " is not made by a DequantizeLinear of a constant)";
      return false;
    }
    if (!Constant(what, "weight", u->w_dq, op, kInt8, &u->w_value, &u->sw, why)) return false;
    if (b_f >= 0) {
      if (u->b_dq < 0) {
        *why = what + " bias is not an int32 constant through DequantizeLinear (" +
               Quote(V(b_f).name) + " is not made by a DequantizeLinear)";
        return false;
      }
      if (!Constant(what, "bias", u->b_dq, op, kInt32, &u->b_value, &u->sb, why)) return false;
    }
    if (u->q_node < 0 || V(y_f).is_graph_output) {
      *why = what + " output " + Quote(V(y_f).name) +
             " is not read by exactly one QuantizeLinear (the npu writes quantized outputs only)";
      return false;
    }
    if (!Output(*u, why)) return false;
    if (!StaticDims(u->x_value, &u->x_dims, why) || !StaticDims(u->w_value, &u->w_dims, why) ||
        !StaticDims(u->y_value, &u->y_dims, why))
      return false;
    std::vector<int64_t> expected;
    if (conv) {
      if (!ConvAttributes(node, u, why)) return false;
      if (!ConvOutputDims(u->x_dims, u->w_dims, u->conv, &expected, why)) return false;
      if (u->b_value >= 0) {
        std::vector<int64_t> b_dims;
        if (!StaticDims(u->b_value, &b_dims, why)) return false;
        if (b_dims != std::vector<int64_t>{u->w_dims[0]}) {
          *why = "Conv bias " + Quote(V(u->b_value).name) + " is " + DimsText(b_dims) +
                 ", expected [" + std::to_string(u->w_dims[0]) + "]";
          return false;
        }
      }
    } else {
      if (u->x_dims.size() < 2 || u->w_dims.size() != 2) {
        *why = "MatMul needs A of rank >= 2 and a constant B of rank 2 (" +
               Quote(V(u->x_value).name) + " is " + DimsText(u->x_dims) + ", " +
               Quote(V(u->w_value).name) + " is " + DimsText(u->w_dims) + ")";
        return false;
      }
      if (!MatMulOutputDims(u->x_dims, u->w_dims, &expected, why)) return false;
    }
    if (expected != u->y_dims) {
      *why = what + " output " + Quote(V(u->y_value).name) + " is " + DimsText(u->y_dims) +
             ", but its inputs make " + DimsText(expected);
      return false;
    }
    return true;
  }

 private:
  // The activation's DequantizeLinear: int8/uint8 input, scalar scale and zero point.
  bool Activation(const std::string& what, const QdqUnit& u, int32_t* x_q, int32_t* dtype,
                  float* scale, int32_t* zero, std::string* why) const {
    const OrtcNodeView& dq = N(u.x_dq);
    *x_q = Input(dq, 0);
    const int32_t zp = Input(dq, 2);
    if (*x_q < 0 || dq.num_outputs < 1) {
      *why = "activation DequantizeLinear " + Quote(dq.name) + " lacks its input";
      return false;
    }
    const OrtcValueView& x = V(*x_q);
    if (x.is_constant) {
      *why = what + " input " + Quote(x.name) +
             " is a constant (the npu takes constants only as weights)";
      return false;
    }
    *dtype = x.dtype ? x.dtype : (zp >= 0 ? V(zp).dtype : 0);
    if (*dtype != kInt8 && *dtype != kUint8) {
      *why = what + " input " + Quote(x.name) + " is " + DtypeName(*dtype) + ", not int8 or uint8";
      return false;
    }
    return Scale(Input(dq, 1), x.name, scale, why) && ZeroPoint(zp, *dtype, x.name, zero, why);
  }

  // A weight or bias: a constant of `dtype` through a DequantizeLinear read by this op alone,
  // with zero point 0 (symmetric).
  bool Constant(const std::string& what, const char* role, int32_t dq_node, int32_t op,
                int32_t dtype, int32_t* value, float* scale, std::string* why) const {
    const OrtcNodeView& dq = N(dq_node);
    const std::string kind = DtypeName(dtype);
    *value = Input(dq, 0);
    if (*value < 0 || !V(*value).is_constant || V(*value).is_graph_input ||
        V(*value).dtype != dtype) {
      *why = what + " " + role + " is not an " + kind + " constant through DequantizeLinear";
      if (*value >= 0)
        *why += " (" + Quote(V(*value).name) + " is " + DtypeName(V(*value).dtype) +
                (V(*value).is_constant && !V(*value).is_graph_input ? "" : ", not a constant") +
                ")";
      return false;
    }
    const OrtcValueView& w = V(*value);
    const int32_t f = dq.num_outputs ? dq.outputs[0] : -1;
    if (f < 0 || V(f).is_graph_output || Consumers(f).size() != 1 ||
        Consumers(f)[0] != static_cast<uint32_t>(op)) {
      *why = what + " " + role + " DequantizeLinear " + Quote(dq.name) +
             " is also read by other nodes (the npu needs it for this " + what + " alone)";
      return false;
    }
    std::vector<int64_t> dims;
    uint64_t count = 0;
    if (!StaticDims(*value, &dims, why) || !CheckDims(dims, &count, why)) return false;
    if (w.byte_size != count * DtypeSize(dtype) || (!w.data && !w.external_file)) {
      *why = what + " " + role + " " + Quote(w.name) + " has " + std::to_string(w.byte_size) +
             " bytes, its shape " + DimsText(dims) + " needs " +
             std::to_string(count * DtypeSize(dtype));
      return false;
    }
    int32_t zero = 0;
    if (!Scale(Input(dq, 1), w.name, scale, why) ||
        !ZeroPoint(Input(dq, 2), dtype, w.name, &zero, why))
      return false;
    if (zero != 0) {
      *why = what + " " + role + " " + Quote(w.name) + " has zero point " + std::to_string(zero) +
             " (the npu takes symmetric weights, zero point 0)";
      return false;
    }
    return true;
  }

  // The output's QuantizeLinear: scalar scale, int8 or uint8 result.
  bool Output(QdqUnit& u, std::string* why) const {
    const OrtcNodeView& q = N(u.q_node);
    if (q.num_outputs < 1 || q.outputs[0] < 0) {
      *why = "QuantizeLinear " + Quote(q.name) + " has no output";
      return false;
    }
    u.y_value = q.outputs[0];
    const OrtcValueView& y = V(u.y_value);
    const int32_t zp = Input(q, 2);
    // ONNX: the output type is the zero point's, uint8 without one (or output_dtype, which the
    // host's view reflects in the value's dtype).
    u.y_dtype = y.dtype ? y.dtype : (zp >= 0 ? V(zp).dtype : kUint8);
    if (u.y_dtype != kInt8 && u.y_dtype != kUint8) {
      *why = "QuantizeLinear output " + Quote(y.name) + " is " + DtypeName(u.y_dtype) +
             ", not int8 or uint8";
      return false;
    }
    return Scale(Input(q, 1), y.name, &u.sy, why) && ZeroPoint(zp, u.y_dtype, y.name, &u.zy, why);
  }

  // A per-tensor scale: a positive, finite float32 constant with one entry.
  bool Scale(int32_t v, const char* of, float* out, std::string* why) const {
    std::string bytes;
    if (v < 0 || !Scalar(v, "scale", of, kFloat, &bytes, why)) {
      if (v < 0) *why = "the quantization of " + Quote(of) + " has no scale";
      return false;
    }
    std::memcpy(out, bytes.data(), 4);
    if (!std::isfinite(*out) || *out <= 0) {
      *why = "the scale of " + Quote(of) + " is not positive and finite";
      return false;
    }
    return true;
  }

  // A scalar zero point of `dtype`; 0 when absent.
  bool ZeroPoint(int32_t v, int32_t dtype, const char* of, int32_t* out, std::string* why) const {
    *out = 0;
    if (v < 0) return true;
    std::string bytes;
    if (!Scalar(v, "zero point", of, dtype, &bytes, why)) return false;
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
    if (dtype == kInt8) {
      *out = static_cast<int8_t>(b[0]);
    } else if (dtype == kUint8) {
      *out = b[0];
    } else {
      *out = static_cast<int32_t>(static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
                                  static_cast<uint32_t>(b[2]) << 16 |
                                  static_cast<uint32_t>(b[3]) << 24);
    }
    return true;
  }

  // The bytes of a constant with exactly one entry (rank 0, or rank 1 of size 1).
  bool Scalar(int32_t v, const char* role, const char* of, int32_t dtype, std::string* bytes,
              std::string* why) const {
    const OrtcValueView& s = V(v);
    const std::string name = std::string(role) + " of " + Quote(of);
    if (!s.is_constant || s.is_graph_input) {
      *why = "the " + name + " is not a constant";
      return false;
    }
    if (s.dtype != dtype) {
      *why = "the " + name + " is " + DtypeName(s.dtype) + ", expected " + DtypeName(dtype);
      return false;
    }
    int64_t entries = 1;
    for (int32_t i = 0; i < s.rank && entries > 0 && entries <= kMaxDim; ++i)
      entries = s.dims[i] < 0 ? -1 : entries * std::min<int64_t>(s.dims[i], kMaxDim);
    if (s.rank < 0 || entries < 0) {
      *why = "the " + name + " has an unknown shape";
      return false;
    }
    if (entries != 1 || s.rank > 1) {
      *why = std::string(dtype == kFloat ? "per-channel scales" : "per-channel zero points") +
             " are not supported (" + name + " has " + std::to_string(entries) + " entries)";
      return false;
    }
    if (s.byte_size != DtypeSize(dtype)) {
      *why = "the " + name + " has " + std::to_string(s.byte_size) + " bytes";
      return false;
    }
    return ReadConstant(s, DtypeSize(dtype), bytes, why);
  }

  bool StaticDims(int32_t v, std::vector<int64_t>* dims, std::string* why) const {
    const OrtcValueView& value = V(v);
    if (value.rank < 0 || (value.rank > 0 && !value.dims)) {
      *why = "npu needs static shapes (value " + Quote(value.name) + " has an unknown rank)";
      return false;
    }
    dims->assign(value.dims, value.dims + value.rank);
    for (const int64_t d : *dims)
      if (d < 0) {
        *why =
            "npu needs static shapes (value " + Quote(value.name) + " is " + DimsText(*dims) + ")";
        return false;
      }
    std::string limit;
    if (!CheckDims(*dims, nullptr, &limit)) {
      *why = "value " + Quote(value.name) + " is " + DimsText(*dims) + ": " + limit;
      return false;
    }
    return true;
  }

  bool ConvAttributes(const OrtcNodeView& node, QdqUnit* u, std::string* why) const {
    for (uint32_t i = 0; i < node.num_attributes; ++i) {
      const OrtcAttributeView& a = node.attributes[i];
      const std::string name = Str(a.name);
      const bool ints = a.type == 7 && (a.ints || a.count == 0);
      if (name == "group") {
        if (a.type != 2 || a.i != 1) {
          *why = "Conv group " + std::to_string(a.i) + " is not supported (group 1 only)";
          return false;
        }
      } else if (name == "auto_pad") {
        const std::string mode = a.type == 3 && a.s ? std::string(a.s, a.s_size) : "?";
        if (mode != "NOTSET") {
          *why = "Conv auto_pad '" + mode + "' is not supported (NOTSET with explicit pads only)";
          return false;
        }
      } else if (name == "strides" || name == "dilations" || name == "kernel_shape") {
        if (!ints || a.count != 2) {
          *why = "Conv " + name + " has " + std::to_string(a.count) + " entries (2-D only)";
          return false;
        }
        int64_t* target = name == "strides" ? u->conv.strides : u->conv.dilations;
        if (name == "kernel_shape") {
          if (a.ints[0] != u->w_dims[2] || a.ints[1] != u->w_dims[3]) {
            *why = "Conv kernel_shape differs from its weight's " + DimsText(u->w_dims);
            return false;
          }
        } else {
          target[0] = a.ints[0];
          target[1] = a.ints[1];
        }
      } else if (name == "pads") {
        if (!ints || a.count != 4) {
          *why = "Conv pads has " + std::to_string(a.count) + " entries (2-D: 4)";
          return false;
        }
        for (int k = 0; k < 4; ++k) u->conv.pads[k] = a.ints[k];
      } else {
        *why = "Conv attribute '" + name + "' is not supported";
        return false;
      }
    }
    return true;
  }

  const OrtcGraphView& g_;
  std::vector<std::vector<uint32_t>> consumers_;
};

bool CheckView(const OrtcGraphView& g, std::string* error) {
  if (g.struct_size < sizeof(OrtcGraphView) || (g.num_nodes && !g.nodes) ||
      (g.num_values && !g.values) || g.num_nodes > INT32_MAX || g.num_values > INT32_MAX) {
    *error = "npu: malformed graph view";
    return false;
  }
  const auto value_ok = [&](int32_t v) {
    return v >= -1 && v < static_cast<int64_t>(g.num_values);
  };
  for (uint32_t v = 0; v < g.num_values; ++v) {
    const OrtcValueView& value = g.values[v];
    if (value.producer < -1 || value.producer >= static_cast<int64_t>(g.num_nodes) ||
        (value.rank > 0 && !value.dims)) {
      *error = "npu: graph view value " + std::to_string(v) + " is malformed";
      return false;
    }
  }
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    const OrtcNodeView& node = g.nodes[n];
    bool ok = (!node.num_inputs || node.inputs) && (!node.num_outputs || node.outputs) &&
              (!node.num_attributes || node.attributes);
    for (uint32_t i = 0; ok && i < node.num_inputs; ++i) ok = value_ok(node.inputs[i]);
    for (uint32_t i = 0; ok && i < node.num_outputs; ++i) ok = value_ok(node.outputs[i]);
    if (!ok) {
      *error = "npu: graph view node " + std::to_string(n) + " is malformed";
      return false;
    }
  }
  return true;
}

struct Candidate {
  bool ok = false;
  QdqUnit unit;
  std::vector<int32_t> attached;
  std::string why;
};

std::string OpText(const OrtcNodeView& n) {
  return IsDefaultDomain(n.domain) ? Str(n.op_type) : Str(n.domain) + "." + Str(n.op_type);
}

}  // namespace

bool AnalyzeQdq(const OrtcGraphView& g, QdqAnalysis* out, std::string* error) {
  if (!CheckView(g, error)) return false;
  const Matcher m(g);
  std::map<int32_t, Candidate> candidates;  // by op node
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    const OrtcNodeView& node = g.nodes[n];
    if (node.has_subgraphs || !(IsOp(node, "Conv") || IsOp(node, "MatMul"))) continue;
    Candidate& c = candidates[static_cast<int32_t>(n)];
    c.ok = m.Match(static_cast<int32_t>(n), &c.unit, &c.attached, &c.why);
  }

  // An activation DequantizeLinear is taken only when every reader of its float output is a
  // unit it is the activation of: the float tensor never exists outside the npu.
  std::map<int32_t, std::string> dq_refusals;
  for (const auto& [op, c] : candidates) {
    const int32_t dq = c.unit.x_dq;
    if (!c.ok || dq_refusals.count(dq)) continue;
    const int32_t x_f = g.nodes[op].inputs[0];
    std::string why;
    if (g.values[x_f].is_graph_output)
      why = "its float output " + Quote(g.values[x_f].name) +
            " is a graph output, which the npu does not make";
    for (const uint32_t reader : m.Consumers(x_f)) {
      const auto it = candidates.find(static_cast<int32_t>(reader));
      if (why.empty() && (it == candidates.end() || !it->second.ok || it->second.unit.x_dq != dq))
        why = "its float output is also read by " + Quote(g.nodes[reader].name) + " (" +
              OpText(g.nodes[reader]) + "), which the npu does not take";
    }
    dq_refusals[dq] = why;
  }
  for (auto& [op, c] : candidates) {
    if (!c.ok) continue;
    const std::string& why = dq_refusals[c.unit.x_dq];
    if (why.empty()) continue;
    c.ok = false;
    c.why = "its activation DequantizeLinear " + Quote(g.nodes[c.unit.x_dq].name) +
            " is not taken: " + why;
  }

  out->units.clear();
  out->node_units.assign(g.num_nodes, {});
  out->refusals.assign(g.num_nodes, "");
  std::vector<std::string> attached_to(g.num_nodes);
  for (const auto& [op, c] : candidates) {
    if (!c.ok) {
      for (const int32_t n : c.attached)
        if (attached_to[n].empty())
          attached_to[n] = "part of the QDQ unit of " + OpText(g.nodes[op]) + " " +
                           Quote(g.nodes[op].name) + ", which the npu does not take: " + c.why;
      continue;
    }
    const auto index = static_cast<uint32_t>(out->units.size());
    out->units.push_back(c.unit);
    for (const int32_t n : {c.unit.op_node, c.unit.x_dq, c.unit.w_dq, c.unit.b_dq, c.unit.q_node})
      if (n >= 0) out->node_units[n].push_back(index);
  }
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    if (!out->node_units[n].empty()) continue;
    const OrtcNodeView& node = g.nodes[n];
    const auto c = candidates.find(static_cast<int32_t>(n));
    const auto d = dq_refusals.find(static_cast<int32_t>(n));
    std::string& why = out->refusals[n];
    if (c != candidates.end())
      why = c->second.why;
    else if (d != dq_refusals.end() && !d->second.empty())
      why = d->second;
    else if (!attached_to[n].empty())
      why = attached_to[n];
    else if (IsOp(node, "DequantizeLinear"))
      why = "the npu takes DequantizeLinear only inside an " + std::string(kSubset) +
            " unit, and this one feeds none";
    else if (IsOp(node, "QuantizeLinear"))
      why = "the npu takes QuantizeLinear only as the output of an " + std::string(kSubset) +
            " unit, and this one follows none";
    else
      why = "op " + OpText(node) + " is outside the npu subset (" + kSubset + ")";
  }
  return true;
}

}  // namespace npu
