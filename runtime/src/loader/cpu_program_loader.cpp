// Reading CPU programs: attributes, weights and nested programs.
#include "loader/cpu_program_loader.h"

#include <onnx/onnx_pb.h>

#include <algorithm>

#include "loader/tensor_proto.h"

namespace ortc::loader {
namespace {

namespace fbc = ortc::fb::cpu;

Result<std::shared_ptr<const exec::ExecGraph>> LoadNestedProgram(const fbc::Program& p,
                                                                 const ProgramWeights& weights);

}  // namespace

Result<exec::ExecOp> OpFromProgram(const fbc::Op& pop, const ProgramWeights& weights,
                                   const std::vector<int>& value_ids) {
  exec::ExecOp op;
  op.name = pop.name() ? pop.name()->str() : "";
  op.op_type = pop.op_type() ? pop.op_type()->str() : "";
  op.domain = pop.domain() ? pop.domain()->str() : "";
  op.version = pop.since_version();
  op.explicit_inputs = pop.explicit_inputs();
  if (pop.attributes()) {
    for (const auto* a : *pop.attributes()) {
      auto attr = AttributeFromProgram(*a, weights);
      if (!attr.ok()) return attr.status().WithContext("node '" + op.name + "'");
      op.attrs[a->name() ? a->name()->str() : ""] = std::move(attr).value();
    }
  }
  auto remap = [&](const flatbuffers::Vector<int32_t>* ids, std::vector<int>* to) -> Status {
    if (!ids) return Status::Ok();
    for (int32_t id : *ids) {
      if (id >= static_cast<int32_t>(value_ids.size()))
        return InvalidGraph("graph '" + weights.graph_name + "': op '" + op.name +
                            "' refers to a missing value");
      to->push_back(id < 0 ? -1 : value_ids[id]);
    }
    return Status::Ok();
  };
  ORTC_RETURN_IF_ERROR(remap(pop.inputs(), &op.inputs));
  ORTC_RETURN_IF_ERROR(remap(pop.outputs(), &op.outputs));
  const int n_in = static_cast<int>(op.inputs.size());
  if (op.explicit_inputs < -1 || op.explicit_inputs > n_in)
    return InvalidGraph("graph '" + weights.graph_name + "': op '" + op.name +
                        "' has an out-of-range explicit input count");
  return op;
}

Result<Tensor> ProgramWeight(const fbc::Value& v, const ProgramWeights& w) {
  const auto* slots = w.slots;
  if (!slots || v.weight_slot() < 0 || static_cast<uint32_t>(v.weight_slot()) >= slots->size())
    return InvalidGraph("graph '" + w.graph_name + "': weight slot out of range");
  const auto bytes = w.binary->WeightBytes(slots->Get(static_cast<uint32_t>(v.weight_slot())));
  std::vector<int64_t> dims;
  if (v.dims()) dims.assign(v.dims()->begin(), v.dims()->end());
  // The shape must describe exactly the bytes stored, counted without overflow.
  const size_t element = ElementSize(static_cast<DataType>(v.dtype()));
  uint64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0)
      return InvalidGraph("graph '" + w.graph_name + "': a weight has a negative dimension");
    if (d > 0 && count > bytes.size() / static_cast<uint64_t>(d))
      return InvalidGraph("graph '" + w.graph_name + "': weight size does not match its shape");
    count *= static_cast<uint64_t>(d);
  }
  if (element == 0 || count * element != bytes.size())
    return InvalidGraph("graph '" + w.graph_name + "': weight size does not match its shape");
  Tensor t = Tensor::Borrow(static_cast<DataType>(v.dtype()), dims, bytes.data(), w.keep_alive);
  if (t.byte_size() != bytes.size())
    return InvalidGraph("graph '" + w.graph_name + "': weight size does not match its shape");
  return t;
}

Result<exec::Attribute> AttributeFromProgram(const fbc::Attribute& a,
                                             const ProgramWeights& weights) {
  exec::Attribute r;
  using K = exec::Attribute::Kind;
  switch (a.type()) {
    case fbc::AttributeType::Int:
      r.kind = K::kInt;
      r.i = a.i();
      break;
    case fbc::AttributeType::Float:
      r.kind = K::kFloat;
      r.f = a.f();
      break;
    case fbc::AttributeType::String:
      r.kind = K::kString;
      if (a.s()) r.s.assign(reinterpret_cast<const char*>(a.s()->data()), a.s()->size());
      break;
    case fbc::AttributeType::Ints:
      r.kind = K::kInts;
      if (a.ints()) r.ints.assign(a.ints()->begin(), a.ints()->end());
      break;
    case fbc::AttributeType::Floats:
      r.kind = K::kFloats;
      if (a.floats()) r.floats.assign(a.floats()->begin(), a.floats()->end());
      break;
    case fbc::AttributeType::Strings:
      r.kind = K::kStrings;
      if (a.strings()) {
        for (const auto* s : *a.strings()) r.strings.push_back(s->str());
      }
      break;
    case fbc::AttributeType::Tensor: {
      r.kind = K::kTensor;
      onnx::TensorProto t;
      if (!a.proto() || !t.ParseFromArray(a.proto()->data(), static_cast<int>(a.proto()->size()))) {
        return InvalidGraph("a tensor attribute of the program is corrupt");
      }
      auto tensor = TensorFromProto(t, nullptr);
      if (!tensor.ok()) return tensor.status();
      r.tensor = std::move(tensor).value();
      break;
    }
    case fbc::AttributeType::Graph: {
      r.kind = K::kGraph;
      if (a.program()) {
        auto nested = LoadNestedProgram(*a.program(), weights);
        if (!nested.ok())
          return nested.status().WithContext("subgraph '" + (a.name() ? a.name()->str() : "") +
                                             "'");
        r.program = std::move(nested).value();
        if (a.captures()) r.captures.assign(a.captures()->begin(), a.captures()->end());
        if (r.captures.size() > r.program->inputs.size())
          return InvalidGraph("a nested program captures more values than it has inputs");
        break;
      }
      // Programs from before nested programs carried the subgraph's proto, which nothing runs.
      return InvalidGraph("attribute '" + (a.name() ? a.name()->str() : "") +
                          "' holds a subgraph that was not compiled into a nested program: "
                          "recompile the model with this ortc");
    }
    default:
      return InvalidGraph("a program attribute has an unknown type");
  }
  return r;
}

namespace {

// A nested program as a graph of its own: its values, its weights as constants, its ops.
Result<std::shared_ptr<const exec::ExecGraph>> LoadNestedProgram(const fbc::Program& p,
                                                                 const ProgramWeights& weights) {
  if (!p.values() || !p.ops() || !p.inputs() || !p.outputs())
    return InvalidGraph("graph '" + weights.graph_name + "': a nested program is incomplete");
  auto g = std::make_shared<exec::ExecGraph>();
  const auto& values = *p.values();
  auto info_of = [&](const fbc::Value& v) {
    exec::ValueInfo info;
    info.name = v.name() ? v.name()->str() : "";
    info.dtype = static_cast<DataType>(v.dtype());
    if (v.dims()) info.shape.assign(v.dims()->begin(), v.dims()->end());
    info.rank_known = v.dims() != nullptr && v.dims()->size() > 0;
    return info;
  };
  for (uint32_t i = 0; i < values.size(); ++i) {
    const auto* v = values.Get(i);
    g->AddValue(v->name() ? v->name()->str() : std::to_string(i));
    if (v->kind() == fbc::ValueKind::Weight) {
      auto t = ProgramWeight(*v, weights);
      if (!t.ok()) return t.status();
      g->constants[i] = std::move(t).value();
    }
  }
  auto check = [&](int32_t id) { return id >= -1 && id < static_cast<int32_t>(values.size()); };
  for (int32_t id : *p.inputs()) {
    if (id < 0 || !check(id)) return InvalidGraph("nested program input index out of range");
    g->inputs.push_back(id);
    g->input_infos.push_back(info_of(*values.Get(id)));
  }
  for (int32_t id : *p.outputs()) {
    if (id < 0 || !check(id)) return InvalidGraph("nested program output index out of range");
    g->outputs.push_back(id);
    g->output_infos.push_back(info_of(*values.Get(id)));
  }
  std::vector<int> identity(values.size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int>(i);
  for (const auto* pop : *p.ops()) {
    auto op = OpFromProgram(*pop, weights, identity);
    if (!op.ok()) return op.status();
    g->ops.push_back(std::move(op).value());
  }
  ORTC_RETURN_IF_ERROR(exec::BindKernels(g.get()));
  return std::shared_ptr<const exec::ExecGraph>(std::move(g));
}

}  // namespace

}  // namespace ortc::loader
