// Per-node shape inference driver (see shape_inference.h for the routing rules).
#include "graph/shape_inference.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/tensor_proto_util.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "graph/fallback_shape_rules.h"
#include "graph/opset_support.h"
#include "graph/own_shape_rules.h"

namespace ortc::graph {
namespace {

// The longest rank a Reshape's output gets from the length of its shape input: a shape input
// declared [1e12] would otherwise size a vector of 1e12 dims.
constexpr int64_t kMaxRank = 1024;

onnx::TypeProto ToTypeProto(const TensorInfo& info) {
  onnx::TypeProto t;
  auto* tt = t.mutable_tensor_type();
  tt->set_elem_type(info.dtype);
  if (info.shape.rank_known) {
    auto* shape = tt->mutable_shape();
    for (const auto& d : info.shape.dims) {
      auto* dim = shape->add_dim();
      if (d.known()) {
        dim->set_dim_value(d.value);
      } else if (!d.symbol.empty()) {
        dim->set_dim_param(d.symbol);
      }
    }
  }
  return t;
}

TensorInfo FromTypeProto(const onnx::TypeProto& t) {
  TensorInfo info;
  if (!t.has_tensor_type()) return info;
  info.dtype = t.tensor_type().elem_type();
  if (t.tensor_type().has_shape()) {
    info.shape.rank_known = true;
    for (const auto& d : t.tensor_type().shape().dim()) {
      Dim dim;
      if (d.has_dim_value()) dim.value = d.dim_value();
      if (d.has_dim_param()) dim.symbol = d.dim_param();
      info.shape.dims.push_back(dim);
    }
  }
  return info;
}

// Inference state shared across nodes: types by value name and constant tensors.
class Inferencer {
 public:
  explicit Inferencer(Model* model) : model_(model), g_(model->graph) {
    for (const auto& v : g_.values) {
      if (v.info.dtype != 0) SetType(v.name, v.info);
    }
    for (const auto& init : g_.initializers) {
      if (!init.external) constants_[init.name] = init.proto;
    }
  }

  void Run() {
    for (size_t i = 0; i < g_.nodes.size(); ++i) InferNode(g_.nodes[i]);
  }

 private:
  void SetType(const std::string& name, const TensorInfo& info) {
    types_[name] = ToTypeProto(info);
    type_ptrs_[name] = &types_[name];
  }

  template <typename T>
  std::optional<std::vector<T>> ConstantData(const Node& node, size_t i) {
    if (i >= node.inputs.size() || node.inputs[i] < 0) return std::nullopt;
    auto it = constants_.find(g_.values[node.inputs[i]].name);
    if (it == constants_.end()) return std::nullopt;
    const auto* t = it->second;
    try {
      if (t->data_type() == onnx::TensorProto::INT64) {
        auto d = onnx::ParseData<int64_t>(t);
        return std::vector<T>(d.begin(), d.end());
      }
      if (t->data_type() == onnx::TensorProto::INT32) {
        auto d = onnx::ParseData<int32_t>(t);
        return std::vector<T>(d.begin(), d.end());
      }
      if (t->data_type() == onnx::TensorProto::FLOAT) {
        auto d = onnx::ParseData<float>(t);
        if constexpr (std::is_integral_v<T>) {
          // NaN, infinities and values past int64 have no defined conversion: not a constant.
          for (float v : d)
            if (!(std::fabs(v) < 0x1p62f)) return std::nullopt;
        }
        return std::vector<T>(d.begin(), d.end());
      }
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }

  void Warn(const Node& node, const std::string& what) {
    model_->warnings.push_back("shape inference for node '" + node.name + "' (" + node.op_type +
                               "): " + what);
  }

  void Record(const Node& node, const std::vector<TensorInfo>& infos) {
    for (size_t i = 0; i < node.outputs.size() && i < infos.size(); ++i) {
      const int v = node.outputs[i];
      if (v < 0 || infos[i].dtype == 0) continue;
      // Keep a declared shape when inference knows less than the model already said.
      TensorInfo merged = infos[i];
      const TensorInfo& declared = g_.values[v].info;
      if (!merged.shape.rank_known && declared.shape.rank_known) merged.shape = declared.shape;
      if (merged.shape.rank_known && declared.shape.rank_known &&
          merged.shape.dims.size() == declared.shape.dims.size()) {
        for (size_t d = 0; d < merged.shape.dims.size(); ++d) {
          if (!merged.shape.dims[d].known() && merged.shape.dims[d].symbol.empty()) {
            merged.shape.dims[d] = declared.shape.dims[d];
          }
        }
      }
      g_.values[v].info = merged;
      SetType(g_.values[v].name, merged);
    }
  }

  void InferWithSchema(const Node& node, int64_t opset) {
    const bool default_domain = node.domain.empty();
    const int lib_opset =
        static_cast<int>(default_domain ? std::min(opset, kOnnxLibraryMaxOpset) : opset);
    const auto* schema = onnx::OpSchemaRegistry::Schema(node.op_type, lib_opset, node.domain);
    if (!schema || !schema->has_type_and_shape_inference_function()) return;
    onnx::NodeProto copy = *node.proto;
    try {
      onnx::shape_inference::InferenceContextImpl ctx(copy, type_ptrs_, constants_, {},
                                                      &shape_data_);
      schema->GetTypeAndShapeInferenceFunction()(ctx);
      std::vector<TensorInfo> infos;
      for (size_t i = 0; i < ctx.getNumOutputs(); ++i)
        infos.push_back(FromTypeProto(*ctx.getOutputType(i)));
      Record(node, infos);
      onnx::shape_inference::DataPropagationContextImpl dctx(copy, type_ptrs_, constants_,
                                                             shape_data_);
      schema->GetDataPropagationFunction()(dctx);
      PropagateThroughCast(node);
      ReshapeFromShapeData(node);
    } catch (const std::exception& e) {
      Warn(node, e.what());
    }
  }

  // ONNX 1.12 does not propagate shape values through Cast; exporters often cast shape
  // vectors between int32 and int64, which would otherwise lose e.g. Reshape's target shape.
  void PropagateThroughCast(const Node& node) {
    if (node.op_type != "Cast" || node.inputs.empty() || node.inputs[0] < 0 ||
        node.outputs.empty() || node.outputs[0] < 0) {
      return;
    }
    auto it = shape_data_.find(g_.values[node.inputs[0]].name);
    if (it != shape_data_.end()) shape_data_[g_.values[node.outputs[0]].name] = it->second;
  }

  // Reshape with a computed target shape. ONNX 1.12 reads only constant targets; ortc also
  // uses the propagated shape values (Shape -> ... -> Reshape chains), else the target's length.
  void ReshapeFromShapeData(const Node& node) {
    if (node.op_type != "Reshape" || node.inputs.size() < 2 || node.inputs[1] < 0 ||
        node.outputs.empty() || node.outputs[0] < 0) {
      return;
    }
    const TensorInfo& out = g_.values[node.outputs[0]].info;
    if (out.shape.is_static()) return;
    const TensorInfo& data = g_.values[node.inputs[0]].info;
    const TensorInfo& target = g_.values[node.inputs[1]].info;
    TensorInfo info{data.dtype, {}};
    auto it = shape_data_.find(g_.values[node.inputs[1]].name);
    if (it != shape_data_.end()) {
      bool allowzero = false;
      for (const auto& a : node.proto->attribute()) {
        if (a.name() == "allowzero") allowzero = a.i() != 0;
      }
      info.shape.rank_known = true;
      int minus_one = -1;
      for (int i = 0; i < it->second.dim_size(); ++i) {
        const auto& d = it->second.dim(i);
        Dim dim;
        if (d.has_dim_value() && d.dim_value() == 0 && !allowzero) {
          if (data.shape.rank_known && i < static_cast<int>(data.shape.dims.size()))
            dim = data.shape.dims[i];
        } else if (d.has_dim_value() && d.dim_value() == -1) {
          minus_one = i;
        } else if (d.has_dim_value()) {
          dim.value = d.dim_value();
        } else if (d.has_dim_param()) {
          dim.symbol = d.dim_param();
        }
        info.shape.dims.push_back(dim);
      }
      // Infer the -1 dimension when every other size is known.
      if (minus_one >= 0 && data.shape.is_static()) {
        int64_t total = 1, rest = 1;
        bool known = true;
        for (const auto& d : data.shape.dims) {
          // Declared dims may be anything up to INT64_MAX: a product that overflows is unknown.
          if (d.value > 0 && total > std::numeric_limits<int64_t>::max() / d.value) known = false;
          if (known) total *= d.value;
        }
        for (int i = 0; i < static_cast<int>(info.shape.dims.size()); ++i) {
          if (i == minus_one) continue;
          known = known && info.shape.dims[i].known();
          if (known) rest *= info.shape.dims[i].value;
        }
        if (known && rest > 0) info.shape.dims[minus_one].value = total / rest;
      }
    } else if (!out.shape.rank_known && target.shape.rank_known && target.shape.dims.size() == 1 &&
               target.shape.dims[0].known() && target.shape.dims[0].value <= kMaxRank) {
      info.shape.rank_known = true;
      info.shape.dims.resize(static_cast<size_t>(target.shape.dims[0].value));
    } else {
      return;
    }
    Record(node, {info});
  }

  void InferNode(const Node& node) {
    if (node.op_type == "Constant" && node.domain.empty() && node.outputs.size() == 1 &&
        node.outputs[0] >= 0) {
      for (const auto& a : node.proto->attribute()) {
        if (a.name() == "value" && a.has_t()) constants_[g_.values[node.outputs[0]].name] = &a.t();
      }
    }
    const OpResolution op = ResolveOp(node.domain, node.op_type, node.opset);
    if (!op.exists) return;
    if (op.route == ShapeRoute::kOnnxSchema) {
      InferWithSchema(node, node.opset);
    } else if (op.route == ShapeRoute::kOwnRule) {
      auto outs = ApplyOwnShapeRule(MakeRuleInputs(node));
      if (outs) {
        Record(node, *outs);
      } else {
        Warn(node, "inputs do not allow an output shape to be derived");
      }
    }
    CompleteWithFallback(node);
  }

  RuleInputs MakeRuleInputs(const Node& node) {
    RuleInputs in;
    in.node = node.proto;
    for (int v : node.inputs)
      in.inputs.push_back(v >= 0 && g_.values[v].info.dtype != 0 ? &g_.values[v].info : nullptr);
    in.constant_ints = [this, &node](size_t i) { return ConstantData<int64_t>(node, i); };
    in.constant_floats = [this, &node](size_t i) { return ConstantData<double>(node, i); };
    in.known_ints = [this, &node](size_t i) -> std::optional<std::vector<int64_t>> {
      if (auto c = ConstantData<int64_t>(node, i)) return c;
      if (i >= node.inputs.size() || node.inputs[i] < 0) return std::nullopt;
      auto it = shape_data_.find(g_.values[node.inputs[i]].name);
      if (it == shape_data_.end()) return std::nullopt;
      std::vector<int64_t> out;
      for (const auto& d : it->second.dim()) {
        if (!d.has_dim_value()) return std::nullopt;
        out.push_back(d.dim_value());
      }
      return out;
    };
    return in;
  }

  // Where ONNX's inference (or an own rule) left an output's type or a dimension unknown,
  // ortc's fallback rules complete it from the inputs (fallback_shape_rules.h).
  void CompleteWithFallback(const Node& node) {
    bool incomplete = false;
    for (int o : node.outputs) {
      if (o < 0) continue;
      const TensorInfo& info = g_.values[o].info;
      incomplete = incomplete || info.dtype == 0 || !info.shape.is_static();
    }
    if (!incomplete) return;
    auto outs = ApplyFallbackShapeRule(MakeRuleInputs(node));
    if (!outs) return;
    std::vector<TensorInfo> merged;
    for (size_t i = 0; i < node.outputs.size() && i < outs->size(); ++i) {
      const int o = node.outputs[i];
      merged.push_back(o >= 0 ? MergeInfo(g_.values[o].info, (*outs)[i]) : TensorInfo{});
    }
    Record(node, merged);
  }

  Model* model_;
  Graph& g_;
  std::unordered_map<std::string, onnx::TypeProto> types_;
  std::unordered_map<std::string, onnx::TypeProto*> type_ptrs_;
  std::unordered_map<std::string, const onnx::TensorProto*> constants_;
  std::unordered_map<std::string, onnx::TensorShapeProto> shape_data_;
};

}  // namespace

void InferShapes(Model* model) {
  Inferencer(model).Run();
}

}  // namespace ortc::graph
