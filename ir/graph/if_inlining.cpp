// If resolution at compile time.
#include "graph/if_inlining.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "base/element_types.h"
#include "graph/shape_folding.h"

namespace ortc::graph {
namespace {

using T = onnx::TensorProto;

// The truth value of a one-element bool or integer initializer; nullopt for anything else.
std::optional<bool> ScalarTruth(const Initializer& init) {
  if (init.dtype != T::BOOL && init.dtype != T::INT8 && init.dtype != T::UINT8 &&
      init.dtype != T::INT32 && init.dtype != T::INT64)
    return std::nullopt;
  const auto h = ReadSmall(init, 8);
  if (!h || h->bytes.empty() || h->bytes.size() != static_cast<size_t>(ElementBits(init.dtype) / 8))
    return std::nullopt;
  return std::any_of(h->bytes.begin(), h->bytes.end(), [](char c) { return c != 0; });
}

// Renames references in a subgraph (and its subgraphs) to values the inlined branch defined.
void RenameReferences(onnx::GraphProto* g, const std::map<std::string, std::string>& renamed) {
  auto fix = [&](std::string* name) {
    if (auto it = renamed.find(*name); it != renamed.end()) *name = it->second;
  };
  for (auto& node : *g->mutable_node()) {
    for (auto& in : *node.mutable_input()) fix(&in);
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_g()) RenameReferences(a.mutable_g(), renamed);
    }
  }
  for (auto& out : *g->mutable_output()) fix(out.mutable_name());
}

// The nodes, initializers and value infos that replace `if_node` when `branch` is taken.
struct Inlined {
  std::vector<onnx::NodeProto> nodes;
  std::vector<T> initializers;
  std::vector<onnx::ValueInfoProto> value_info;
};

Result<Inlined> InlineBranch(const onnx::NodeProto& if_node, const onnx::GraphProto& branch,
                             const std::set<std::string>& taken_names) {
  if (branch.output_size() != if_node.output_size())
    return InvalidGraph("If node '" + if_node.name() + "': its branch has " +
                        std::to_string(branch.output_size()) + " outputs, the node " +
                        std::to_string(if_node.output_size()));
  const std::string prefix = (if_node.name().empty() ? if_node.output(0) : if_node.name()) + "/";
  std::set<std::string> node_defined;
  for (const auto& n : branch.node()) node_defined.insert(n.output().begin(), n.output().end());
  // Branch outputs produced by its nodes take the If's output names; everything else the branch
  // defines gets a prefix that no name of the main graph has.
  std::map<std::string, std::string> renamed;
  std::vector<std::pair<std::string, std::string>> copies;  // If output <- source (Identity)
  for (int i = 0; i < branch.output_size(); ++i) {
    const std::string& src = branch.output(i).name();
    const std::string& dst = if_node.output(i);
    if (dst.empty()) continue;
    if (node_defined.count(src) && !renamed.count(src)) {
      renamed[src] = dst;
    } else {
      copies.push_back({dst, src});
    }
  }
  auto fresh = [&](const std::string& name) {
    std::string n = prefix + name;
    while (taken_names.count(n)) n = "_" + n;
    return n;
  };
  for (const auto& n : branch.node()) {
    for (const auto& o : n.output()) {
      if (!o.empty() && !renamed.count(o)) renamed[o] = fresh(o);
    }
  }
  for (const auto& t : branch.initializer()) renamed[t.name()] = fresh(t.name());

  Inlined out;
  for (const auto& t : branch.initializer()) {
    out.initializers.push_back(t);
    out.initializers.back().set_name(renamed[t.name()]);
  }
  for (const auto& n : branch.node()) {
    onnx::NodeProto copy = n;
    copy.set_name(fresh(n.name().empty() ? n.op_type() : n.name()));
    for (auto& in : *copy.mutable_input()) {
      if (auto it = renamed.find(in); it != renamed.end()) in = it->second;
    }
    for (auto& o : *copy.mutable_output()) {
      if (auto it = renamed.find(o); it != renamed.end()) o = it->second;
    }
    for (auto& a : *copy.mutable_attribute()) {
      if (a.has_g()) RenameReferences(a.mutable_g(), renamed);
    }
    out.nodes.push_back(std::move(copy));
  }
  for (const auto& [dst, src] : copies) {
    onnx::NodeProto id;
    id.set_name(fresh("output_" + dst));
    id.set_op_type("Identity");
    auto it = renamed.find(src);
    id.add_input(it != renamed.end() ? it->second : src);
    id.add_output(dst);
    out.nodes.push_back(std::move(id));
  }
  for (const auto& vi : branch.value_info()) {
    if (auto it = renamed.find(vi.name()); it != renamed.end()) {
      out.value_info.push_back(vi);
      out.value_info.back().set_name(it->second);
    }
  }
  return out;
}

}  // namespace

Result<int> InlineConstantIfsOnce(Model* model) {
  const Graph& g = model->graph;
  onnx::GraphProto* proto = model->proto.mutable_graph();
  std::set<std::string> listed_inputs, taken_names;
  for (const auto& in : proto->input()) listed_inputs.insert(in.name());
  for (const auto& v : g.values) taken_names.insert(v.name);
  for (const auto& n : g.nodes) taken_names.insert(n.name);

  std::map<const onnx::NodeProto*, Inlined> replacements;
  for (const auto& node : g.nodes) {
    if (node.op_type != "If" || !node.domain.empty() || node.inputs.empty() || node.inputs[0] < 0)
      continue;
    const Value& cond = g.values[node.inputs[0]];
    if (cond.initializer < 0 || listed_inputs.count(cond.name)) continue;
    const auto truth = ScalarTruth(g.initializers[cond.initializer]);
    if (!truth) continue;
    const onnx::GraphProto* branch = nullptr;
    for (const auto& a : node.proto->attribute()) {
      if (a.name() == (*truth ? "then_branch" : "else_branch") && a.has_g()) branch = &a.g();
    }
    if (!branch) return InvalidGraph("If node '" + node.name + "' has no taken branch");
    auto inlined = InlineBranch(*node.proto, *branch, taken_names);
    if (!inlined.ok()) return inlined.status();
    for (const auto& n : inlined->nodes) {
      taken_names.insert(n.name());
      taken_names.insert(n.output().begin(), n.output().end());
    }
    for (const auto& t : inlined->initializers) taken_names.insert(t.name());
    replacements.emplace(node.proto, std::move(inlined).value());
    model->folded_nodes.push_back({node.name, "If"});
  }
  if (replacements.empty()) return 0;

  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (auto& node : *proto->mutable_node()) {
    auto it = replacements.find(&node);
    if (it == replacements.end()) {
      *nodes.Add() = std::move(node);
      continue;
    }
    for (auto& n : it->second.nodes) *nodes.Add() = std::move(n);
    for (auto& t : it->second.initializers) *proto->add_initializer() = std::move(t);
    for (auto& vi : it->second.value_info) *proto->add_value_info() = std::move(vi);
  }
  proto->mutable_node()->Swap(&nodes);
  return static_cast<int>(replacements.size());
}

}  // namespace ortc::graph
