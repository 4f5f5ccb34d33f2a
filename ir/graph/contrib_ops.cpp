// The contrib-op rewrite's driver: rounds of expansion and re-inference, the proto edits, and
// the removal of expansion nodes nothing reads.
#include "graph/contrib_ops.h"

#include <algorithm>
#include <unordered_map>

#include "graph/contrib_expansions.h"
#include "graph/opset_support.h"
#include "graph/shape_inference.h"

namespace ortc::graph {
namespace {

using contrib::Expansion;
using contrib::NodeView;

constexpr int64_t kMinOpset = 11;  // Range, Slice with inputs

using ExpandFn = Status (*)(const NodeView&, Expansion*);

ExpandFn MicrosoftExpander(const std::string& op_type) {
  static const std::unordered_map<std::string, ExpandFn> table = {
      {"Attention", contrib::ExpandAttention},
      {"MultiHeadAttention", contrib::ExpandMultiHeadAttention},
      {"SkipLayerNormalization", contrib::ExpandSkipLayerNorm},
      {"EmbedLayerNormalization", contrib::ExpandEmbedLayerNorm},
      {"SimplifiedLayerNormalization", contrib::ExpandSimplifiedLayerNorm},
      {"SkipSimplifiedLayerNormalization", contrib::ExpandSkipSimplifiedLayerNorm},
      {"RotaryEmbedding", contrib::ExpandRotaryEmbedding},
      {"MatMulNBits", contrib::ExpandMatMulNBits},
      {"GroupQueryAttention", contrib::ExpandGroupQueryAttention},
      {"BiasGelu", contrib::ExpandGelu},
      {"Gelu", contrib::ExpandGelu},
      {"FastGelu", contrib::ExpandFastGelu},
  };
  auto it = table.find(op_type);
  return it == table.end() ? nullptr : it->second;
}

// Ops of the ai.onnx domain rewritten at load: those newer than the linked ONNX library that
// ortc's kernels and lowerings know by what they compute, each into the older ops its definition
// is made of, and ONNX Runtime's SimplifiedLayerNormalization, which it registers in ai.onnx
// (GenAI's models write it so) and which reports count as its (com.microsoft) op.
struct StandardExpander {
  int64_t since;  // the opset that introduced the op
  ExpandFn fn;
  const char* reported_domain = "ai.onnx";
};

const StandardExpander* StandardExpanderFor(const std::string& op_type, int64_t opset) {
  static const std::unordered_map<std::string, StandardExpander> table = {
      {"SimplifiedLayerNormalization", {1, contrib::ExpandSimplifiedLayerNorm, "com.microsoft"}},
      {"Attention", {23, contrib::ExpandOnnxAttention}},
      {"RMSNormalization", {23, contrib::ExpandRmsNormalization}},
      {"RotaryEmbedding", {23, contrib::ExpandOnnxRotaryEmbedding}},
      {"Swish", {24, contrib::ExpandSwish}},
      {"TensorScatter", {24, contrib::ExpandTensorScatter}},
  };
  auto it = table.find(op_type);
  return it == table.end() || opset < it->second.since ? nullptr : &it->second;
}

// The domain whose op an expandable node is, as reports name it.
std::string ReportedDomain(const Node& n) {
  if (!IsDefaultDomain(n.domain)) return n.domain;
  const StandardExpander* x = StandardExpanderFor(n.op_type, n.opset);
  return x ? x->reported_domain : "ai.onnx";
}

ExpandFn Expander(const std::string& domain, const std::string& op_type, int64_t opset) {
  if (IsDefaultDomain(domain)) {
    const StandardExpander* x = StandardExpanderFor(op_type, opset);
    return x ? x->fn : nullptr;
  }
  return domain == "com.microsoft" ? MicrosoftExpander(op_type) : nullptr;
}

// Replaces nodes of the proto by their expansions (in place, keeping the file order) and
// appends the new initializers.
void ApplyEdits(onnx::GraphProto* g,
                std::unordered_map<const onnx::NodeProto*, std::vector<onnx::NodeProto>>* edits,
                std::vector<onnx::TensorProto>* initializers) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (auto& node : *g->mutable_node()) {
    auto it = edits->find(&node);
    if (it == edits->end()) {
      *nodes.Add() = std::move(node);
      continue;
    }
    for (auto& n : it->second) *nodes.Add() = std::move(n);
  }
  g->mutable_node()->Swap(&nodes);
  for (auto& t : *initializers) *g->add_initializer() = std::move(t);
}

// Drops expansion nodes whose outputs nothing reads (e.g. EmbedLayerNormalization's int32
// mask_index once every Attention reads the float count), and the model's own nodes that only
// fed what an expansion no longer reads (GenAI's seqlens_k computation, which
// GroupQueryAttention's expansion has no use for), then their unread initializers.
void RemoveUnread(onnx::GraphProto* g, contrib::SharedState& state) {
  bool removed = true;
  while (removed) {
    removed = false;
    std::unordered_map<std::string, int> reads;
    for (const auto& n : g->node())
      for (const auto& in : n.input()) reads[in]++;
    for (const auto& o : g->output()) reads[o.name()]++;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (auto& n : *g->mutable_node()) {
      bool fed_dropped = false;
      for (const auto& o : n.output()) fed_dropped = fed_dropped || state.dropped_reads.count(o);
      bool read = !state.generated_nodes.count(n.name()) && !fed_dropped;
      for (const auto& o : n.output()) read = read || reads.count(o);
      if (read) {
        *kept.Add() = std::move(n);
      } else {
        for (const auto& in : n.input()) state.dropped_reads.insert(in);
        removed = true;
      }
    }
    g->mutable_node()->Swap(&kept);
  }
  std::unordered_map<std::string, int> reads;
  for (const auto& n : g->node())
    for (const auto& in : n.input()) reads[in]++;
  for (const auto& o : g->output()) reads[o.name()]++;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  for (auto& t : *g->mutable_initializer()) {
    if (reads.count(t.name()) || !state.generated_initializers.count(t.name()))
      *kept.Add() = std::move(t);
  }
  g->mutable_initializer()->Swap(&kept);
}

}  // namespace

bool IsExpandableContribOp(const std::string& domain, const std::string& op_type, int64_t opset) {
  return Expander(domain, op_type, opset) != nullptr;
}

bool IsExpandableContribOp(const Node& n) {
  return IsExpandableContribOp(n.domain, n.op_type, n.opset);
}

bool HasExpandableContribOps(const Model& model) {
  for (const auto& n : model.graph.nodes)
    if (IsExpandableContribOp(n)) return true;
  return false;
}

Status ExpandContribOps(Model* model, const std::function<Status()>& rebuild) {
  if (!HasExpandableContribOps(*model)) return Status::Ok();
  const std::vector<std::string> warnings = model->warnings;
  contrib::SharedState state;
  // Unnamed contrib nodes keep the name they load with ("<op>_<index>") through the rounds,
  // which move nodes: it prefixes their parts.
  for (size_t i = 0; i < model->graph.nodes.size(); ++i) {
    const Node& n = model->graph.nodes[i];
    auto* proto = model->proto.mutable_graph()->mutable_node(static_cast<int>(i));
    if (IsExpandableContribOp(n) && proto->name().empty()) proto->set_name(n.name);
  }
  InferShapes(model);
  bool force = false;
  while (true) {
    std::vector<int> pending;
    for (size_t i = 0; i < model->graph.nodes.size(); ++i) {
      const Node& n = model->graph.nodes[i];
      if (IsExpandableContribOp(n)) pending.push_back(static_cast<int>(i));
    }
    if (pending.empty()) break;
    const int64_t opset = model->default_opset();
    if (opset < kMinOpset) {
      const Node& n = model->graph.nodes[pending[0]];
      return NotImplemented("node '" + n.name + "' (com.microsoft." + n.op_type +
                            "): rewriting contrib ops into standard ops needs ai.onnx opset >= " +
                            std::to_string(kMinOpset) + " and the model imports opset " +
                            std::to_string(opset) + "; re-export it with a newer opset");
    }
    contrib::Names names(model->proto.graph());
    std::unordered_map<const onnx::NodeProto*, std::vector<onnx::NodeProto>> edits;
    std::vector<onnx::TensorProto> initializers;
    for (int i : pending) {
      const Node& n = model->graph.nodes[i];
      NodeView view(*model, n, force, &state);
      Expansion x(n.name, opset, &names);
      ORTC_RETURN_IF_ERROR(Expander(n.domain, n.op_type, n.opset)(view, &x));
      contrib::Emitter* e = x.emitter();
      if (!e) continue;  // waits for the next round's shapes
      for (const auto& node : e->nodes()) state.generated_nodes.insert(node.name());
      for (const auto& t : e->initializers()) state.generated_initializers.insert(t.name());
      for (const auto& in : n.proto->input()) state.dropped_reads.insert(in);
      model->expanded_nodes.push_back({n.name, n.op_type, ReportedDomain(n)});
      edits[n.proto] = std::move(e->nodes());
      for (auto& t : e->initializers()) initializers.push_back(std::move(t));
      // A forced round expands only the first node: the next round may know more.
      if (force) break;
    }
    if (edits.empty()) {
      if (force) return InvalidGraph("contrib op expansion made no progress");  // a bug
      force = true;  // no node is ready: expand the first one with fallbacks
      continue;
    }
    force = false;
    ApplyEdits(model->proto.mutable_graph(), &edits, &initializers);
    ORTC_RETURN_IF_ERROR(rebuild().WithContext("after expanding contrib ops"));
    InferShapes(model);
  }
  RemoveUnread(model->proto.mutable_graph(), state);
  ORTC_RETURN_IF_ERROR(rebuild().WithContext("after expanding contrib ops"));
  model->warnings = warnings;
  return Status::Ok();
}

}  // namespace ortc::graph
