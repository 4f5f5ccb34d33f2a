// EPContext model construction.
#include "emit/ctx_model_writer.h"

#include <set>
#include <unordered_set>

#include "format/compatibility_info.h"
#include "lowering/subgraph_ir.h"

namespace ortc::emit {
namespace {

// Copies everything of the model but its graph.
onnx::ModelProto ModelShell(const onnx::ModelProto& src) {
  onnx::ModelProto m;
  m.set_ir_version(src.ir_version());
  *m.mutable_opset_import() = src.opset_import();
  m.set_producer_name(src.producer_name());
  m.set_producer_version(src.producer_version());
  m.set_domain(src.domain());
  m.set_model_version(src.model_version());
  m.set_doc_string(src.doc_string());
  *m.mutable_metadata_props() = src.metadata_props();
  *m.mutable_functions() = src.functions();
  format::AddEpContextOpset(&m);
  return m;
}

// Writes `inferred` into a graph output's declared shape where the declaration has no size
// (no shape, or symbolic dims) and `inferred` is static of the same rank; declared sizes stay.
void StaticOutputShape(const graph::Shape& inferred, onnx::ValueInfoProto* out) {
  if (!inferred.rank_known || !inferred.is_static()) return;
  auto* tensor = out->mutable_type()->mutable_tensor_type();
  if (tensor->has_shape() && tensor->shape().dim_size() != static_cast<int>(inferred.dims.size()))
    return;
  if (!tensor->has_shape()) {
    for (size_t i = 0; i < inferred.dims.size(); ++i) tensor->mutable_shape()->add_dim();
  }
  for (int i = 0; i < tensor->shape().dim_size(); ++i) {
    auto* dim = tensor->mutable_shape()->mutable_dim(i);
    if (!dim->has_dim_value()) dim->set_dim_value(inferred.dims[i].value);
  }
}

}  // namespace

Result<CtxModel> BuildCtxModel(const CtxModelInput& in) {
  const graph::Model& model = *in.model;
  const graph::Graph& g = model.graph;
  const partition::Partition& p = *in.partition;
  const onnx::GraphProto& src = model.proto.graph();
  CtxModel out;
  out.proto = ModelShell(model.proto);
  if (!in.compatibility_info.empty()) {
    // Replaces what a source model may carry under the key (it would describe other binaries).
    auto* props = out.proto.mutable_metadata_props();
    for (int i = props->size() - 1; i >= 0; --i)
      if (props->Get(i).key() == format::kCompatibilityMetadataKey) props->DeleteSubrange(i, 1);
    auto* prop = props->Add();
    prop->set_key(format::kCompatibilityMetadataKey);
    prop->set_value(in.compatibility_info);
  }
  for (const auto& [key, value] : in.metadata) {
    auto* props = out.proto.mutable_metadata_props();
    for (int i = props->size() - 1; i >= 0; --i)
      if (props->Get(i).key() == key) props->DeleteSubrange(i, 1);
    auto* prop = props->Add();
    prop->set_key(key);
    prop->set_value(value);
  }
  onnx::GraphProto* dst = out.proto.mutable_graph();
  dst->set_name(src.name());
  dst->set_doc_string(src.doc_string());

  std::set<int> kept_initializers;
  std::unordered_set<std::string> live_values;
  for (size_t gi = 0; gi < p.groups.size(); ++gi) {
    const auto& grp = p.groups[gi];
    if (in.ep_nodes[gi]) {
      *dst->add_node() = in.ep_nodes[gi]->ToNodeProto();
      for (const auto& o : in.ep_nodes[gi]->outputs) live_values.insert(o);
      continue;
    }
    for (int n : grp.nodes) {
      *dst->add_node() = *g.nodes[n].proto;
      for (int v : g.nodes[n].outputs) {
        if (v >= 0) live_values.insert(g.values[v].name);
      }
    }
    kept_initializers.insert(grp.initializers.begin(), grp.initializers.end());
  }

  for (const auto& in_vi : src.input()) {
    const int v = g.FindValue(in_vi.name());
    const bool dropped_initializer =
        v >= 0 && g.values[v].initializer >= 0 && !kept_initializers.count(g.values[v].initializer);
    if (!dropped_initializer) *dst->add_input() = in_vi;
  }
  // Inputs --input-value fixed stay declared where they were, so callers feed them as before;
  // the runtime checks the value fed against the one recorded here.
  for (const auto& f : model.fixed_inputs) {
    *dst->add_input() = f.declaration;
    for (int i = dst->input_size() - 1; i > f.position && i > 0; --i)
      dst->mutable_input()->SwapElements(i, i - 1);
  }
  if (!model.fixed_inputs.empty()) {
    auto* prop = out.proto.mutable_metadata_props()->Add();
    prop->set_key(graph::kInputValuesMetadataKey);
    prop->set_value(graph::InputValuesMetadata(model.fixed_inputs));
  }
  *dst->mutable_output() = src.output();
  // Outputs the source left symbolic ([batch, total_sequence]) get the static shapes that
  // --input-shape and shape inference gave them, so the ctx model says what it produces.
  for (auto& out_vi : *dst->mutable_output()) {
    const int v = g.FindValue(out_vi.name());
    if (v >= 0 && out_vi.type().has_tensor_type())
      StaticOutputShape(g.values[v].info.shape, &out_vi);
  }
  std::unordered_set<std::string> typed;
  for (const auto& vi : src.value_info()) {
    if (live_values.count(vi.name())) {
      *dst->add_value_info() = vi;
      typed.insert(vi.name());
    }
  }
  // Values passed between nodes of the ctx model that the source left untyped get the type
  // inference gave them: an EPContext node's outputs have no type of their own (its schema
  // allows any), so a consumer such as ONNX Runtime could not type the graph without them.
  for (const auto& o : src.output()) typed.insert(o.name());
  for (const auto& node : dst->node()) {
    for (const auto& name : node.output()) {
      const int v = name.empty() ? -1 : g.FindValue(name);
      if (v < 0 || typed.count(name) || g.values[v].info.dtype == 0) continue;
      typed.insert(name);
      onnx::ValueInfoProto* vi = dst->add_value_info();
      vi->set_name(name);
      auto* tensor = vi->mutable_type()->mutable_tensor_type();
      tensor->set_elem_type(g.values[v].info.dtype);
      const graph::Shape& shape = g.values[v].info.shape;
      if (!shape.rank_known) continue;
      auto* dims = tensor->mutable_shape();
      for (const graph::Dim& d : shape.dims) {
        auto* dim = dims->add_dim();
        if (d.known())
          dim->set_dim_value(d.value);
        else if (!d.symbol.empty())
          dim->set_dim_param(d.symbol);
      }
    }
  }

  // Initializers of the nodes kept as ONNX: embedded, or moved to the external file.
  for (int id : kept_initializers) {
    const graph::Initializer& init = g.initializers[id];
    onnx::TensorProto t = *init.proto;
    if (in.external_initializers_file.empty()) {
      if (init.external) {
        auto bytes = lowering::InitializerBytes(init);
        if (!bytes.ok()) return bytes.status();
        auto all = bytes->ReadAll();
        if (!all.ok()) return all.status();
        t.clear_external_data();
        t.set_data_location(onnx::TensorProto::DEFAULT);
        t.set_raw_data(**all);
      }
    } else {
      if (init.dtype == onnx::TensorProto::STRING) {
        *dst->add_initializer() = t;  // strings cannot live in external data
        continue;
      }
      auto bytes = lowering::InitializerBytes(init);
      if (!bytes.ok()) return bytes.status();
      const int64_t offset = (out.external_bytes + 63) / 64 * 64;
      out.external_chunks.push_back({*bytes, offset});
      out.external_bytes = offset + bytes->size();
      t.clear_raw_data();
      t.clear_float_data();
      t.clear_int32_data();
      t.clear_int64_data();
      t.clear_double_data();
      t.clear_uint64_data();
      t.clear_external_data();
      t.set_data_location(onnx::TensorProto::EXTERNAL);
      auto add = [&](const std::string& k, const std::string& v) {
        auto* e = t.add_external_data();
        e->set_key(k);
        e->set_value(v);
      };
      add("location", in.external_initializers_file);
      add("offset", std::to_string(offset));
      add("length", std::to_string(bytes->size()));
    }
    *dst->add_initializer() = std::move(t);
  }
  return out;
}

}  // namespace ortc::emit
