// Building the ABI's graph view from the compiler's Graph.
#include "abi/graph_view.h"

#include <onnx/onnx_pb.h>

#include <type_traits>

#include "lowering/subgraph_ir.h"

namespace ortc::backends::abi {

static_assert(std::is_same_v<int, int32_t>, "node value lists are handed out as int32_t arrays");

namespace {
// Its address is the token: the text could be spelled by anyone, the address only by code
// linked into this very binary, so no plugin can take the host's C++ objects by mistake.
constexpr char kHostBuild[] = "ortc " ORTC_VERSION_STRING " in-process";
}  // namespace

const char* HostBuildToken() {
  return kHostBuild;
}

GraphView::GraphView(const graph::Graph& g, const graph::Model* model) {
  dims_.resize(g.values.size());
  values_.resize(g.values.size());
  for (size_t i = 0; i < g.values.size(); ++i) {
    const graph::Value& v = g.values[i];
    OrtcValueView& out = values_[i];
    out.name = v.name.c_str();
    out.dtype = v.info.dtype;
    out.rank = v.info.shape.rank_known ? static_cast<int32_t>(v.info.shape.dims.size()) : -1;
    for (const auto& d : v.info.shape.dims) dims_[i].push_back(d.known() ? d.value : -1);
    out.dims = dims_[i].data();
    out.producer = v.producer;
    out.is_graph_input = v.is_graph_input;
    out.is_graph_output = v.is_graph_output;
    if (v.initializer < 0) continue;
    const graph::Initializer& init = g.initializers[v.initializer];
    out.is_constant = 1;
    out.byte_size = static_cast<uint64_t>(init.byte_size);
    if (init.external) {
      external_files_.push_back(init.external->file.string());
      out.external_offset = static_cast<uint64_t>(init.external->offset);
    } else if (init.proto && init.proto->has_raw_data()) {
      out.data = init.proto->raw_data().data();
      out.byte_size = init.proto->raw_data().size();
    } else if (init.proto) {
      // Typed fields (float_data...) are not bytes yet: convert once, keep them here.
      auto bytes = lowering::InitializerBytes(init);
      if (bytes.ok()) {
        auto all = bytes->ReadAll();
        if (all.ok()) {
          converted_bytes_.push_back(*all);
          out.data = converted_bytes_.back()->data();
          out.byte_size = converted_bytes_.back()->size();
        }
      }
    }
  }
  // External file names are set after the vector stops growing: c_str() must stay put.
  size_t next_file = 0;
  for (size_t i = 0; i < g.values.size(); ++i) {
    const int init = g.values[i].initializer;
    if (init >= 0 && g.initializers[init].external)
      values_[i].external_file = external_files_[next_file++].c_str();
  }

  nodes_.resize(g.nodes.size());
  attributes_.resize(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const graph::Node& node = g.nodes[n];
    OrtcNodeView& out = nodes_[n];
    out.name = node.name.c_str();
    out.op_type = node.op_type.c_str();
    out.domain = node.domain.c_str();
    out.since_version = node.since_version;
    out.inputs = node.inputs.data();
    out.num_inputs = static_cast<uint32_t>(node.inputs.size());
    out.outputs = node.outputs.data();
    out.num_outputs = static_cast<uint32_t>(node.outputs.size());
    out.has_subgraphs = node.has_subgraphs;
    if (!node.proto) continue;
    for (const auto& a : node.proto->attribute()) {
      OrtcAttributeView av{};
      av.name = a.name().c_str();
      av.type = static_cast<int32_t>(a.type());
      switch (a.type()) {
        case onnx::AttributeProto::FLOAT:
          av.f = a.f();
          break;
        case onnx::AttributeProto::INT:
          av.i = a.i();
          break;
        case onnx::AttributeProto::STRING:
          av.s = a.s().data();
          av.s_size = a.s().size();
          break;
        case onnx::AttributeProto::FLOATS:
          av.floats = a.floats().data();
          av.count = static_cast<uint32_t>(a.floats_size());
          break;
        case onnx::AttributeProto::INTS:
          av.ints = a.ints().data();
          av.count = static_cast<uint32_t>(a.ints_size());
          break;
        case onnx::AttributeProto::STRINGS: {
          auto& list = string_lists_.emplace_back();
          for (const auto& s : a.strings()) list.push_back(s.c_str());
          av.strings = list.data();
          av.count = static_cast<uint32_t>(list.size());
          break;
        }
        default:
          break;
      }
      attributes_[n].push_back(av);
    }
  }
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    nodes_[n].attributes = attributes_[n].data();
    nodes_[n].num_attributes = static_cast<uint32_t>(attributes_[n].size());
  }

  view_.struct_size = sizeof(OrtcGraphView);
  view_.nodes = nodes_.data();
  view_.num_nodes = static_cast<uint32_t>(nodes_.size());
  view_.values = values_.data();
  view_.num_values = static_cast<uint32_t>(values_.size());
  view_.host_build = kHostBuild;
  view_.host_graph = &g;
  view_.host_model = model;
}

const graph::Graph* HostGraph(const OrtcGraphView* view) {
  if (!view || view->host_build != kHostBuild) return nullptr;
  return static_cast<const graph::Graph*>(view->host_graph);
}

const graph::Model* HostModel(const OrtcGraphView* view) {
  if (!view || view->host_build != kHostBuild) return nullptr;
  return static_cast<const graph::Model*>(view->host_model);
}

}  // namespace ortc::backends::abi
