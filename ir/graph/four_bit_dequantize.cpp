// INT4/UINT4 initializers unpacked into 8-bit values, blocked DequantizeLinear written out.
#include "graph/four_bit_dequantize.h"

#include <map>

#include "base/shape_text.h"
#include "graph/contrib_emitter.h"

namespace ortc::graph {
namespace {

using T = onnx::TensorProto;
// ONNX 1.16's element types (the linked library may predate them).
constexpr int32_t kUint4 = 21, kInt4 = 22;

bool IsFourBit(int32_t dtype) {
  return dtype == kUint4 || dtype == kInt4;
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// t, a 4-bit initializer, becomes "<name>/packed" (UINT8, one byte per two values, low nibble
// first: the same bytes, wherever they are stored) and nodes writing `name` as INT8 / UINT8.
Status Unpack(T* t, contrib::Emitter& e) {
  const std::string name = t->name();
  const bool is_signed = t->data_type() == kInt4;
  std::vector<int64_t> dims(t->dims().begin(), t->dims().end());
  int64_t n = 1;
  for (int64_t d : dims) {
    // Past 2^40 values no weight is real: a hostile shape must not overflow the count.
    if (d < 0 || (d > 0 && n > (int64_t{1} << 40) / d))
      return InvalidGraph("4-bit initializer '" + name + "' has shape " + io::DimsText(dims) +
                          ", which no tensor can have");
    n *= d;
  }
  const int64_t bytes = (n + 1) / 2;
  if (t->int32_data_size() > 0) {  // the typed field: one packed byte per entry
    std::string raw;
    for (int32_t v : t->int32_data()) raw.push_back(static_cast<char>(v & 0xFF));
    t->clear_int32_data();
    t->set_raw_data(raw);
  }
  if (t->data_location() != T::EXTERNAL && static_cast<int64_t>(t->raw_data().size()) != bytes)
    return InvalidGraph("4-bit initializer '" + name + "' holds " +
                        std::to_string(t->raw_data().size()) + " bytes; its shape needs " +
                        std::to_string(bytes));
  t->set_name(name + "/packed");
  t->set_data_type(T::UINT8);
  t->clear_dims();
  t->add_dims(bytes);
  const std::string sixteen = e.ScalarOf("sixteen", T::UINT8, 16);
  const std::string low = e.Op("Mod", {t->name(), sixteen}, "low");
  const std::string high = e.Op("Div", {t->name(), sixteen}, "high");
  std::string values = e.Reshape(
      e.Op("Concat", {e.Unsqueeze(low, {-1}, "low_pair"), e.Unsqueeze(high, {-1}, "high_pair")},
           "pairs", {contrib::IntAttribute("axis", -1)}),
      {2 * bytes}, "nibbles");
  if (2 * bytes != n)
    values = e.Op("Slice", {values, e.Int64s("start", {0}), e.Int64s("end", {n})}, "used");
  if (is_signed) {  // two's complement nibbles: ((v + 8) mod 16) - 8
    const std::string shifted =
        e.Op("Mod", {e.Op("Add", {values, e.ScalarOf("eight", T::UINT8, 8)}, "offset"), sixteen},
             "offset_nibbles");
    values = e.Op("Sub", {e.Cast(shifted, T::INT8, "as_int8"), e.ScalarOf("eight_s", T::INT8, 8)},
                  "signed");
  }
  e.Reshape(values, dims, "shaped", name);
  return Status::Ok();
}

// DequantizeLinear(x, scale, zero_point?) with block_size B > 0 along `axis` of x's dims.
Status ExpandBlocked(const onnx::NodeProto& n, const std::vector<int64_t>& x_dims,
                     const std::vector<int64_t>& scale_dims, int32_t scale_type,
                     contrib::Emitter& e) {
  const int64_t rank = static_cast<int64_t>(x_dims.size());
  const auto* axis_attr = Attr(n, "axis");
  const auto* out_attr = Attr(n, "output_dtype");
  int64_t axis = axis_attr ? axis_attr->i() : 1;
  const int64_t block = Attr(n, "block_size")->i();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return InvalidGraph("DequantizeLinear '" + n.name() + "': axis out of range");
  const int64_t k = x_dims[axis], blocks = (k + block - 1) / block;
  std::vector<int64_t> want = x_dims;
  want[axis] = blocks;
  if (scale_dims != want)
    return InvalidGraph("DequantizeLinear '" + n.name() + "': x of shape " + io::DimsText(x_dims) +
                        " in blocks of " + std::to_string(block) + " along axis " +
                        std::to_string(axis) + " needs a scale of shape " + io::DimsText(want) +
                        ", not " + io::DimsText(scale_dims));
  // [..., blocks, ...] -> [..., blocks, B, ...] -> [..., blocks * B, ...] -> the first K.
  std::vector<int64_t> expanded = x_dims, merged = x_dims;
  expanded[axis] = blocks;
  expanded.insert(expanded.begin() + axis + 1, block);
  merged[axis] = blocks * block;
  auto repeat = [&](const std::string& v, const std::string& tag) {
    std::string full = e.Reshape(
        e.Op("Expand",
             {e.Unsqueeze(v, {axis + 1}, tag + "_blocks"), e.Int64s(tag + "_expanded", expanded)},
             tag + "_repeated"),
        merged, tag + "_merged");
    if (blocks * block != k)
      full = e.Op("Slice",
                  {full, e.Int64s(tag + "_start", {0}), e.Int64s(tag + "_end", {k}),
                   e.Int64s(tag + "_axis", {axis})},
                  tag + "_cut");
    return full;
  };
  const std::string scale =
      scale_type == T::FLOAT ? n.input(1) : e.Cast(n.input(1), T::FLOAT, "scale_float");
  std::string centered = e.Cast(n.input(0), T::FLOAT, "x_float");
  if (n.input_size() > 2 && !n.input(2).empty())
    centered = e.Op("Sub", {centered, repeat(e.Cast(n.input(2), T::FLOAT, "zero_float"), "zero")},
                    "centered");
  const int32_t out =
      out_attr && out_attr->i() != 0 ? static_cast<int32_t>(out_attr->i()) : scale_type;
  if (out == T::FLOAT) {
    e.Op("Mul", {centered, repeat(scale, "scale")}, "dequantized", {}, n.output(0));
  } else {
    e.Cast(e.Op("Mul", {centered, repeat(scale, "scale")}, "dequantized"), out, "cast",
           n.output(0));
  }
  return Status::Ok();
}

bool BlockedDequantize(const onnx::NodeProto& n) {
  const auto* b = Attr(n, "block_size");
  return n.op_type() == "DequantizeLinear" && n.domain().empty() && b && b->i() != 0;
}

}  // namespace

bool HasFourBitOrBlockedDequantize(const onnx::GraphProto& graph) {
  for (const auto& t : graph.initializer())
    if (IsFourBit(t.data_type())) return true;
  for (const auto& n : graph.node())
    if (BlockedDequantize(n)) return true;
  return false;
}

Status RewriteFourBitDequantize(Model* model) {
  auto* g = model->proto.mutable_graph();
  const int64_t opset = model->opsets.count("") ? model->opsets.at("") : 0;
  // Every initializer's shape and type as written (4-bit ones are rewritten below).
  std::map<std::string, std::vector<int64_t>> dims;
  std::map<std::string, int32_t> types;
  for (const auto& t : g->initializer()) {
    dims[t.name()] = {t.dims().begin(), t.dims().end()};
    types[t.name()] = t.data_type();
  }
  const auto blocked = BlockedDequantize;
  bool any_four_bit = false, any_blocked = false;
  for (const auto& [name, type] : types) any_four_bit = any_four_bit || IsFourBit(type);
  for (const auto& n : g->node()) any_blocked = any_blocked || blocked(n);
  for (const auto* io : {&g->input(), &g->output()})
    for (const auto& v : *io)
      if (IsFourBit(v.type().tensor_type().elem_type()) && !types.count(v.name()))
        return NotImplemented("'" + v.name() +
                              "' is a 4-bit graph input or output; ortc takes 4-bit tensors "
                              "only as initializers DequantizeLinear reads");
  if (!any_four_bit && !any_blocked) return Status::Ok();
  // A 4-bit initializer must be DequantizeLinear's x or zero point: its readers then see the
  // same integers in 8 bits.
  for (const auto& n : g->node())
    for (int i = 0; i < n.input_size(); ++i)
      if (types.count(n.input(i)) && IsFourBit(types[n.input(i)]) &&
          (n.op_type() != "DequantizeLinear" || i == 1))
        return NotImplemented("4-bit initializer '" + n.input(i) + "' is read by " + n.op_type() +
                              " '" + n.name() +
                              "'; ortc takes 4-bit tensors only as DequantizeLinear's x and "
                              "zero point");
  contrib::Names names(*g);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::vector<T> added;
  auto take = [&](contrib::Emitter& e) {
    for (auto& node : e.nodes()) *nodes.Add() = std::move(node);
    for (auto& init : e.initializers()) added.push_back(std::move(init));
  };
  for (auto& t : *g->mutable_initializer()) {
    if (!IsFourBit(t.data_type())) continue;
    contrib::Emitter e(t.name(), opset, T::FLOAT, &names);
    ORTC_RETURN_IF_ERROR(Unpack(&t, e));
    take(e);
  }
  for (auto& n : *g->mutable_node()) {
    // Reported as rewritten at load (ortc partition; `ortc run` then opens the rewritten model).
    const bool reads_four_bit = n.op_type() == "DequantizeLinear" && n.input_size() > 0 &&
                                types.count(n.input(0)) && IsFourBit(types[n.input(0)]);
    if (blocked(n) || reads_four_bit)
      model->expanded_nodes.push_back(
          {n.name().empty() ? "DequantizeLinear" : n.name(), "DequantizeLinear", "ai.onnx"});
    if (!blocked(n)) {
      *nodes.Add() = std::move(n);
      continue;
    }
    if (Attr(n, "block_size")->i() < 0)
      return InvalidGraph("DequantizeLinear '" + n.name() + "': negative block_size");
    if (n.input_size() < 2 || !dims.count(n.input(0)) || !dims.count(n.input(1)) ||
        (n.input_size() > 2 && !n.input(2).empty() && !dims.count(n.input(2))))
      return NotImplemented("DequantizeLinear '" + n.name() +
                            "' dequantizes blocks of a computed value (or with a computed scale "
                            "or zero point); ortc takes blocked dequantization of initializers");
    contrib::Emitter e(n.name().empty() ? "DequantizeLinear" : n.name(), opset, T::FLOAT, &names);
    ORTC_RETURN_IF_ERROR(
        ExpandBlocked(n, dims[n.input(0)], dims[n.input(1)], types[n.input(1)], e));
    take(e);
  }
  g->mutable_node()->Swap(&nodes);
  for (auto& t : added) *g->add_initializer() = std::move(t);
  return Status::Ok();
}

}  // namespace ortc::graph
