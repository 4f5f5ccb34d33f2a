// Building blocks of the contrib-op expansions (graph/contrib_ops.h): what an expansion knows
// about its node's values, and an emitter of standard ai.onnx nodes at the model's opset.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/attribute_builders.h"
#include "graph/model.h"
#include "ortc/status.h"

namespace ortc::graph::contrib {

// Names already taken in the graph, values (initializers included) and nodes apart; the
// Fresh* calls hand out new ones: `base` itself when free, else `base_1`, `base_2`...
class Names {
 public:
  explicit Names(const onnx::GraphProto& g);
  std::string FreshValue(const std::string& base) { return Fresh(base, &values_); }
  std::string FreshNode(const std::string& base) { return Fresh(base, &nodes_); }

 private:
  static std::string Fresh(const std::string& base, std::unordered_set<std::string>* used);
  std::unordered_set<std::string> values_, nodes_;
};

// What shape inference and the initializers say about one value so far.
struct Facts {
  int32_t dtype = 0;  // 0 when unknown
  bool rank_known = false;
  std::vector<int64_t> dims;  // -1 for an unknown dim
  bool constant = false;      // an initializer

  int64_t rank() const { return rank_known ? static_cast<int64_t>(dims.size()) : -1; }
  int64_t Dim(int64_t axis) const;  // -1 when unknown; negative axes count from the end
};

// State shared by the expansions of one model across rounds.
struct SharedState {
  // ELN mask_index value -> the float per-row count it is a cast of (an exact integer), so an
  // Attention reading it compares positions in float and needs no 1-D integer op.
  std::map<std::string, std::string> float_counts;
  std::unordered_set<std::string> generated_nodes;  // names of every node an expansion wrote
  std::unordered_set<std::string> generated_initializers;
  // Values an expanded node or a removed one read: a node producing only unread ones of these
  // has lost its last reader to the expansion and goes too.
  std::unordered_set<std::string> dropped_reads;
};

// One contrib node as an expansion sees it.
class NodeView {
 public:
  NodeView(const Model& m, const Node& n, bool force, SharedState* state);

  const Node& node() const { return n_; }
  const std::string& name() const { return n_.name; }
  // true: expand now with fallbacks for what is still unknown (see ExpandContribOps).
  bool force() const { return force_; }
  SharedState& state() const { return *state_; }

  bool Has(size_t i) const;         // input i given
  std::string In(size_t i) const;   // "" when absent
  std::string Out(size_t i) const;  // "" when absent
  bool Used(size_t i) const;        // output i is read by a node or is a graph output
  Facts Of(const std::string& value) const;
  Facts InFacts(size_t i) const { return Has(i) ? Of(In(i)) : Facts{}; }

  const onnx::AttributeProto* Attr(const std::string& name) const;
  int64_t IntAttr(const std::string& name, int64_t fallback) const;
  float FloatAttr(const std::string& name, float fallback) const;
  std::vector<int64_t> IntsAttr(const std::string& name) const;

  // The element type the expansion writes its float constants in: that of the first of
  // `inputs` whose type is known, else (force) the type most float initializers of the model
  // have; 0 when unknown and not forced.
  int32_t FloatType(const std::vector<size_t>& inputs) const;

  // "node 'n' (com.microsoft.Op): <what>; <remedy>" as NotImplemented / InvalidArgument (the
  // node's own domain, ai.onnx for the default one).
  std::string Label() const;
  Status Unsupported(const std::string& what, const std::string& remedy) const;
  Status Invalid(const std::string& what) const;

 private:
  const Model& m_;
  const Node& n_;
  bool force_;
  SharedState* state_;
};

// Writes the nodes and initializers replacing one contrib node, named "<node>/<tag>".
class Emitter {
 public:
  Emitter(const std::string& prefix, int64_t opset, int32_t dtype, Names* names);

  int64_t opset() const { return opset_; }
  int32_t dtype() const { return dtype_; }

  // A node with `n_outputs` outputs; `outs` names some of them ("" or missing: a fresh name).
  std::vector<std::string> Node(const std::string& op, const std::vector<std::string>& inputs,
                                const std::string& tag, size_t n_outputs = 1,
                                std::vector<onnx::AttributeProto> attrs = {},
                                const std::vector<std::string>& outs = {});
  std::string Op(const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& tag, std::vector<onnx::AttributeProto> attrs = {},
                 const std::string& out = "") {
    return Node(op, inputs, tag, 1, std::move(attrs), {out})[0];
  }

  // Initializers: a 0-D value of dtype() or of `dtype`, 1-D int64 vectors.
  std::string Scalar(const std::string& tag, double value) { return ScalarOf(tag, dtype_, value); }
  std::string ScalarOf(const std::string& tag, int32_t dtype, double value);
  std::string Int64s(const std::string& tag, const std::vector<int64_t>& values);

  // The op forms of the model's opset (axes as attribute or input, Split's sizes...).
  std::string Unsqueeze(const std::string& x, const std::vector<int64_t>& axes,
                        const std::string& tag, const std::string& out = "");
  std::string Reduce(const std::string& op, const std::string& x, const std::vector<int64_t>& axes,
                     bool keepdims, const std::string& tag, const std::string& out = "");
  // `sizes` empty: equal parts.
  std::vector<std::string> Split(const std::string& x, int64_t axis,
                                 const std::vector<int64_t>& sizes, size_t parts,
                                 const std::string& tag);
  std::string Reshape(const std::string& x, const std::vector<int64_t>& shape,
                      const std::string& tag, const std::string& out = "");
  std::string Transpose(const std::string& x, const std::vector<int64_t>& perm,
                        const std::string& tag, const std::string& out = "");
  std::string Cast(const std::string& x, int32_t to, const std::string& tag,
                   const std::string& out = "");
  // Dim `axis` of x's run-time shape as a 1-D int64 [1] (`scalar`: 0-D).
  std::string DimOf(const std::string& x, int64_t axis, bool scalar, const std::string& tag);
  // LayerNormalization over the last axis (the opset-17 op, or its decomposition before 17,
  // computed in float for 16-bit types). `mean_out` / `inv_std_out` (float, [..., 1]) are
  // written when not "". `beta` may be "".
  void LayerNorm(const std::string& x, const std::string& gamma, const std::string& beta,
                 float epsilon, const std::string& out, const std::string& mean_out = "",
                 const std::string& inv_std_out = "");

  // RMS normalization over the last axis, x / sqrt(mean(x^2) + epsilon) * gamma, computed in
  // float for 16-bit types (what SimplifiedLayerNormalization's stash_type 1 asks). `inv_std_out`
  // (float, [..., 1]) is written when not "".
  void RmsNorm(const std::string& x, const std::string& gamma, float epsilon,
               const std::string& out, const std::string& inv_std_out = "");
  std::vector<onnx::NodeProto>& nodes() { return nodes_; }
  std::vector<onnx::TensorProto>& initializers() { return initializers_; }

 private:
  std::string prefix_;
  int64_t opset_;
  int32_t dtype_;
  Names* names_;
  std::unordered_map<std::string, std::string> shapes_;  // value -> its Shape node's output
  std::vector<onnx::NodeProto> nodes_;
  std::vector<onnx::TensorProto> initializers_;
};

using graph::FloatAttribute;
using graph::IntAttribute;
using graph::IntsAttribute;
using graph::StringAttribute;

bool IsFloatType(int32_t dtype);

}  // namespace ortc::graph::contrib
