// Traces dynamic shapes to their roots in one pass over the nodes in topological order: per
// value, the causes of its dynamic shape and the causes of its value being unknown at compile
// time (which matter where the value decides another op's output shape).
#include "graph/dynamic_shapes.h"

#include <algorithm>
#include <map>
#include <set>

#include "graph/dynamic_shape_ops.h"

namespace ortc::graph {
namespace {

// Internal causes. Input and Node become report roots; Data (a graph input's values) and
// Unfolded (a node not evaluated at compile time) only explain why a value is not a constant
// and turn into a Node cause at the op whose shape that value decides.
struct Cause {
  enum Kind { kInput, kNode, kData, kUnfolded } kind;
  int index;  // value id (kInput, kData) or node index (kNode, kUnfolded)
};

std::string Quote(const std::string& s) {
  return "'" + s + "'";
}

std::string DimName(const Dim& d) {
  return d.symbol.empty() ? "?" : d.symbol;
}

class Tracer {
 public:
  explicit Tracer(const Model& m) : m_(m), g_(m.graph) {
    shape_.resize(g_.values.size());
    value_.resize(g_.values.size());
  }

  DynamicShapeReport Run() {
    for (int v : g_.inputs) {
      value_[v] = {Add({Cause::kData, v})};
      if (!Static(v)) Record(v, {Add({Cause::kInput, v})});
    }
    for (size_t n = 0; n < g_.nodes.size(); ++n) Visit(static_cast<int>(n));
    return Report();
  }

 private:
  bool Static(int v) const { return g_.values[v].info.shape.is_static(); }
  bool Constant(int v) const { return g_.values[v].initializer >= 0; }

  int Add(Cause c) {
    const auto key = std::make_pair(static_cast<int>(c.kind), c.index);
    auto [it, fresh] = ids_.emplace(key, static_cast<int>(causes_.size()));
    if (fresh) causes_.push_back(c);
    return it->second;
  }

  void Record(int v, std::set<int> causes) {
    shape_[v] = std::move(causes);
    dynamic_.push_back(v);
  }

  // Why input `v` of node `n`, which decides n's output shape, is not a constant: Input causes
  // (it was computed from a dynamic shape) go to `out`; the others make one sentence for n.
  std::string NotConstant(int v, std::set<int>* out) {
    std::vector<std::string> data;
    std::string unfolded;
    for (int c : value_[v]) {
      const Cause& cause = causes_[c];
      if (cause.kind == Cause::kInput || cause.kind == Cause::kNode) {
        out->insert(c);
      } else if (cause.kind == Cause::kData) {
        data.push_back(Quote(g_.values[cause.index].name));
      } else if (unfolded.empty()) {
        const Node& p = g_.nodes[cause.index];
        unfolded = p.op_type + " node " + Quote(p.name) + " is not evaluated at compile time";
      }
    }
    if (data.empty() && unfolded.empty()) return "";
    std::string s = "input " + Quote(g_.values[v].name) + " is not a compile-time constant";
    if (g_.values[v].is_graph_input) return s + " (it is a graph input)";
    if (data.empty()) return s + " (" + unfolded + ")";
    std::string list;
    for (size_t i = 0; i < data.size(); ++i) list += (i ? ", " : "") + data[i];
    return s + " (computed from graph input" + (data.size() > 1 ? "s " : " ") + list +
           " at run time)";
  }

  void Visit(int n) {
    const Node& node = g_.nodes[n];
    std::vector<int> reads = node.inputs;
    reads.insert(reads.end(), node.implicit_inputs.begin(), node.implicit_inputs.end());

    // Values: unknown when any input is (Shape and Size read only the input's shape).
    std::set<int> value;
    const bool shape_only = node.op_type == "Shape" || node.op_type == "Size";
    for (int v : reads) {
      if (v < 0 || Constant(v)) continue;
      const auto& from = shape_only ? shape_[v] : value_[v];
      value.insert(from.begin(), from.end());
    }
    if (value.empty()) value.insert(Add({Cause::kUnfolded, n}));
    KeepOneUnfolded(&value);

    // Shapes: inherited from dynamic inputs and from non-constant shape-determining inputs.
    std::set<int> inherited;
    for (int v : reads) {
      if (v >= 0 && !Static(v)) inherited.insert(shape_[v].begin(), shape_[v].end());
    }
    std::vector<std::string> why;
    std::set<int> from_shape_inputs;  // causes behind non-constant shape-determining inputs
    for (size_t i : ShapeDeterminingInputs(node)) {
      if (i >= node.inputs.size() || node.inputs[i] < 0 || Constant(node.inputs[i])) continue;
      std::string s = NotConstant(node.inputs[i], &from_shape_inputs);
      if (!s.empty()) why.push_back(std::move(s));
    }
    inherited.insert(from_shape_inputs.begin(), from_shape_inputs.end());
    if (std::string s = DataDependentShape(node); !s.empty()) why.insert(why.begin(), s);

    bool any_dynamic = false;
    for (int o : node.outputs) {
      if (o < 0) continue;
      value_[o] = value;
      any_dynamic = any_dynamic || !Static(o);
    }
    if (!any_dynamic) return;
    // Nothing upstream explains it, or the op lost ranks its inputs had without a shape input
    // computed at run time to blame (a Slice whose ends come from Shape(input) is explained by
    // that input): the node is a root.
    if (why.empty() && (inherited.empty() || (LostRank(node) && from_shape_inputs.empty())))
      why.push_back(NoShapeReason(m_, node));
    if (!why.empty()) {
      std::string text;
      for (const auto& s : why) text += (text.empty() ? "" : "; ") + s;
      node_reason_[n] = text;
      inherited.insert(Add({Cause::kNode, n}));
    }
    for (int o : node.outputs) {
      if (o >= 0 && !Static(o)) Record(o, Narrow(o, inherited));
    }
  }

  // Every input's rank is known but some output's is not.
  bool LostRank(const Node& node) const {
    for (int v : node.inputs) {
      if (v >= 0 && !g_.values[v].info.shape.rank_known) return false;
    }
    for (int o : node.outputs) {
      if (o >= 0 && !g_.values[o].info.shape.rank_known) return true;
    }
    return false;
  }

  // One not-evaluated node is enough to explain a value (and keeps the sets small in a model
  // with many large weight computations).
  void KeepOneUnfolded(std::set<int>* causes) const {
    bool seen = false;
    for (auto it = causes->begin(); it != causes->end();) {
      const bool unfolded = causes_[*it].kind == Cause::kUnfolded;
      it = unfolded && seen ? causes->erase(it) : std::next(it);
      seen = seen || unfolded;
    }
  }

  // When every unknown dim of `v` is named by a symbol of some dynamic graph-input dim among the
  // causes, keep only the graph inputs with those symbols: [batch, 768] depends on 'batch', not
  // on a 'sequence' its producer's other input had.
  std::set<int> Narrow(int v, const std::set<int>& causes) const {
    const Shape& shape = g_.values[v].info.shape;
    if (!shape.rank_known) return causes;
    std::set<std::string> wanted;
    for (const auto& d : shape.dims) {
      if (d.known()) continue;
      if (d.symbol.empty()) return causes;
      wanted.insert(d.symbol);
    }
    std::map<int, bool> input_matches;
    std::set<std::string> covered;
    for (int c : causes) {
      if (causes_[c].kind != Cause::kInput) continue;
      const Shape& in = g_.values[causes_[c].index].info.shape;
      bool match = false;
      for (const auto& d : in.dims) {
        if (!d.known() && wanted.count(d.symbol)) {
          match = true;
          covered.insert(d.symbol);
        }
      }
      input_matches[c] = match;
    }
    if (covered != wanted) return causes;
    std::set<int> kept;
    for (int c : causes) {
      if (causes_[c].kind != Cause::kInput || input_matches[c]) kept.insert(c);
    }
    return kept;
  }

  DynamicRoot Root(const Cause& c) const {
    DynamicRoot r;
    if (c.kind == Cause::kNode) {
      const Node& node = g_.nodes[c.index];
      r.kind = DynamicRoot::Kind::kNode;
      r.name = node.name;
      r.op_type = node.domain.empty() ? node.op_type : node.domain + "." + node.op_type;
      r.reason =
          "output of " + r.op_type + " node " + Quote(node.name) + ": " + node_reason_.at(c.index);
      return r;
    }
    const Value& in = g_.values[c.index];
    r.kind = DynamicRoot::Kind::kGraphInput;
    r.name = in.name;
    if (!in.info.shape.rank_known) {
      r.reason = "the shape of graph input " + Quote(in.name) + " is not declared";
      r.fix = "--input-shape " + in.name + "=...";
      return r;
    }
    std::vector<std::string> dims;
    std::string fix;
    for (const auto& d : in.info.shape.dims) {
      if (!d.known()) dims.push_back(Quote(DimName(d)));
      fix +=
          (fix.empty() ? "" : "x") + (d.known() ? std::to_string(d.value) : "<" + DimName(d) + ">");
    }
    std::string list;
    for (size_t i = 0; i < dims.size(); ++i) list += (i ? ", " : "") + dims[i];
    r.reason = (dims.size() > 1 ? "dims " : "dim ") + list + " of graph input " + Quote(in.name);
    r.fix = "--input-shape " + in.name + "=" + (fix.empty() ? "..." : fix);
    return r;
  }

  DynamicShapeReport Report() const {
    // Roots in order of first use, then by how many values they explain.
    std::map<int, int> root_of;  // cause id -> index in `roots`
    std::vector<DynamicRoot> roots;
    for (int v : dynamic_) {
      for (int c : shape_[v]) {
        auto [it, fresh] = root_of.emplace(c, static_cast<int>(roots.size()));
        if (fresh) roots.push_back(Root(causes_[c]));
        roots[it->second].values.push_back(v);
      }
    }
    std::vector<int> order(roots.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return roots[a].values.size() > roots[b].values.size(); });
    std::vector<int> rank(roots.size());
    DynamicShapeReport report;
    for (size_t i = 0; i < order.size(); ++i) {
      rank[order[i]] = static_cast<int>(i);
      report.roots.push_back(std::move(roots[order[i]]));
    }
    for (int v : dynamic_) {
      DynamicValue d;
      d.value = v;
      for (int c : shape_[v]) d.roots.push_back(rank[root_of.at(c)]);
      std::sort(d.roots.begin(), d.roots.end());
      report.values.push_back(std::move(d));
    }
    return report;
  }

  const Model& m_;
  const Graph& g_;
  std::vector<Cause> causes_;
  std::map<std::pair<int, int>, int> ids_;
  std::vector<std::set<int>> shape_;  // per value: causes of its dynamic shape
  std::vector<std::set<int>> value_;  // per value: causes of its value being unknown
  std::map<int, std::string> node_reason_;
  std::vector<int> dynamic_;  // dynamic values in graph order
};

}  // namespace

DynamicShapeReport ExplainDynamicShapes(const Model& model) {
  return Tracer(model).Run();
}

std::string RootText(const DynamicRoot& root) {
  return root.fix.empty() ? root.reason : root.reason + " (fix: " + root.fix + ")";
}

}  // namespace ortc::graph
