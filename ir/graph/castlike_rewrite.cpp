// CastLike -> Cast at load (graph/castlike_rewrite.h).
#include "graph/castlike_rewrite.h"

#include <unordered_map>

#include "graph/attribute_builders.h"

namespace ortc::graph {

int RewriteCastLikes(Model* m) {
  std::unordered_map<const onnx::NodeProto*, int32_t> targets;
  for (const auto& n : m->graph.nodes) {
    if (n.op_type != "CastLike" || !n.domain.empty() || n.inputs.size() != 2 || n.inputs[1] < 0)
      continue;
    const int32_t dtype = m->graph.values[n.inputs[1]].info.dtype;
    if (dtype != 0) targets[n.proto] = dtype;
  }
  int rewritten = 0;
  for (auto& node : *m->proto.mutable_graph()->mutable_node()) {
    auto it = targets.find(&node);
    if (it == targets.end()) continue;
    node.set_op_type("Cast");
    node.mutable_input()->RemoveLast();  // the type-giving input; saturate (19+) stays
    *node.add_attribute() = IntAttribute("to", it->second);
    ++rewritten;
  }
  return rewritten;
}

}  // namespace ortc::graph
