// Loading an ONNX model from a file or a buffer into a checked, sorted, shape-annotated Model.
#include <onnx/checker.h>

#include <climits>
#include <fstream>
#include <set>

#include <spdlog/spdlog.h>

#include "base/regular_file.h"
#include "graph/castlike_rewrite.h"
#include "graph/constant_lifting.h"
#include "graph/contrib_ops.h"
#include "graph/four_bit_dequantize.h"
#include "graph/graph_builder.h"
#include "graph/if_inlining.h"
#include "graph/initializer_info.h"
#include "graph/last_position.h"
#include "graph/model.h"
#include "graph/opset_support.h"
#include "graph/shape_folding.h"
#include "graph/shape_inference.h"

namespace ortc::graph {
namespace {

namespace fs = std::filesystem;

Status CheckVersions(const Model& m) {
  if (m.ir_version < 3) {
    return InvalidGraph("IR version " + std::to_string(m.ir_version) +
                        " is not supported (ortc reads IR versions 3 to " +
                        std::to_string(kMaxIrVersion) + ")");
  }
  if (m.ir_version > kMaxIrVersion) {
    return InvalidGraph("IR version " + std::to_string(m.ir_version) +
                        " is newer than ortc supports (at most " + std::to_string(kMaxIrVersion) +
                        "); re-export the model with an older ONNX version");
  }
  if (!m.opsets.count(""))
    return InvalidGraph("the model imports no opset of the default ai.onnx domain");
  const int64_t opset = m.opsets.at("");
  if (opset < 1 || opset > kMaxDefaultOpset) {
    return InvalidGraph("ai.onnx opset " + std::to_string(opset) +
                        " is not supported (ortc reads 1 to " + std::to_string(kMaxDefaultOpset) +
                        "); re-export with opset <= " + std::to_string(kMaxDefaultOpset));
  }
  return Status::Ok();
}

// The linked ONNX checker only knows IR <= 8 and opsets <= 17; it is run where it is exact.
bool CheckerApplies(const Model& m) {
  for (const auto& [domain, version] : m.opsets) {
    if (domain.empty() && version > kOnnxLibraryMaxOpset) return false;
    if (domain == "ai.onnx.ml" && version > kMaxMlOpset) return false;
  }
  return true;
}

// Checks each standard-domain node against its schema (attribute types, input and output
// counts, subgraphs). Graph-level value_info rules of ONNX 1.12 (e.g. that every main-graph
// output declares a shape) are stricter than ONNX Runtime and are not applied; the graph's
// structure is checked by BuildGraph instead.
Status RunChecker(const Model& m) {
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(std::min<int64_t>(m.ir_version, 8)));
  std::unordered_map<std::string, int> opsets;
  for (const auto& [d, v] : m.opsets) opsets[d] = static_cast<int>(v);
  ctx.set_opset_imports(opsets);
  ctx.set_model_dir(m.base_dir.string());
  onnx::checker::LexicalScopeContext scope;
  for (const auto& v : m.graph.values) scope.add(v.name);
  for (const auto& node : m.proto.graph().node()) {
    const bool standard = IsDefaultDomain(node.domain()) || node.domain() == "ai.onnx.ml";
    // ONNX Runtime's ai.onnx additions have no ONNX schema; their expansion checks them.
    const int64_t opset = m.opsets.count(node.domain()) ? m.opsets.at(node.domain()) : 0;
    if (!standard || IsExpandableContribOp(node.domain(), node.op_type(), opset)) continue;
    try {
      onnx::checker::check_node(node, ctx, scope);
    } catch (const std::exception& e) {
      return InvalidGraph("node '" + node.name() + "' (" + node.op_type() + "): " + e.what());
    }
  }
  return Status::Ok();
}

// Window attributes ONNX 1.12's shape inference divides by without checking (strides=[0, 0]
// raised SIGFPE inside it): every value must be at least 1, checked before inference runs.
Status CheckWindowAttributes(const Model& m) {
  for (const auto& node : m.proto.graph().node()) {
    for (const auto& a : node.attribute()) {
      const bool window = a.name() == "strides" || a.name() == "dilations" ||
                          a.name() == "kernel_shape" || a.name() == "group";
      if (!window) continue;
      for (int64_t v : a.ints()) {
        if (v < 1)
          return InvalidGraph("node '" + node.name() + "' (" + node.op_type() + "): " + a.name() +
                              " has " + std::to_string(v) + "; every value must be at least 1");
      }
      if (a.type() == onnx::AttributeProto::INT && a.i() < 1)
        return InvalidGraph("node '" + node.name() + "' (" + node.op_type() + "): " + a.name() +
                            " is " + std::to_string(a.i()) + "; it must be at least 1");
    }
  }
  return Status::Ok();
}

// A convolution's kernel_shape must be its constant weights' spatial shape: the runtime's
// kernels refuse a different one (it would read past the weights), so compile refuses it too
// rather than write a bundle that cannot run.
Status CheckKernelShapes(const Model& m) {
  for (const auto& node : m.graph.nodes) {
    if (!node.domain.empty() || !node.proto) continue;
    const int w_input =
        node.op_type == "QLinearConv" ? 3
        : node.op_type == "Conv" || node.op_type == "ConvTranspose" || node.op_type == "ConvInteger"
            ? 1
            : -1;
    if (w_input < 0 || static_cast<int>(node.inputs.size()) <= w_input) continue;
    const int w = node.inputs[w_input];
    if (w < 0 || m.graph.values[w].initializer < 0) continue;
    const auto& dims = m.graph.initializers[m.graph.values[w].initializer].dims;
    for (const auto& a : node.proto->attribute()) {
      if (a.name() != "kernel_shape" || dims.size() < 2) continue;
      const std::vector<int64_t> kernel(a.ints().begin(), a.ints().end());
      if (kernel != std::vector<int64_t>(dims.begin() + 2, dims.end()))
        return InvalidGraph("node '" + node.name + "' (" + node.op_type +
                            "): kernel_shape does not match the weights' spatial shape");
    }
  }
  return Status::Ok();
}

// Resolves each node's op version; every node of a standard domain must name an op that
// exists at the model's opset.
Status ResolveOps(Model& m) {
  for (auto& node : m.graph.nodes) {
    node.since_version = ResolveOp(node.domain, node.op_type, node.opset).since_version;
    const bool standard = node.domain.empty() || node.domain == "ai.onnx.ml";
    if (!standard) continue;
    if (node.opset == 0) {
      return InvalidGraph("node '" + node.name + "' uses domain '" + node.domain +
                          "' but the model imports no opset for it");
    }
    // ONNX Runtime's ops registered in ai.onnx (SimplifiedLayerNormalization) are expanded into
    // standard ops after loading.
    if (!ResolveOp(node.domain, node.op_type, node.opset).exists && !IsExpandableContribOp(node)) {
      return InvalidGraph("node '" + node.name + "': op " + node.op_type + " does not exist in " +
                          (node.domain.empty() ? "ai.onnx" : node.domain) + " opset " +
                          std::to_string(node.opset));
    }
  }
  return Status::Ok();
}

// Re-reads the graph from the proto after a pass rewrote it (shape folding only removes nodes
// and adds initializers; the contrib-op expansion's nodes are checked once it is done).
Status Rebuild(Model& m) {
  auto* graph_proto = m.proto.mutable_graph();
  m.graph = Graph{};
  const fs::path* base_dir = m.base_dir.empty() ? nullptr : &m.base_dir;
  for (const auto& t : graph_proto->initializer()) {
    auto init = ReadInitializerInfo(t, base_dir);
    if (!init.ok()) return init.status();
    m.graph.initializers.push_back(std::move(init).value());
  }
  ORTC_RETURN_IF_ERROR(BuildGraph(graph_proto, m.opsets, &m.graph));
  return ResolveOps(m);
}

// Shape folding to a fixed point: each round can make more shapes static (a Reshape whose
// target became an initializer), which lets the next round fold the Shape nodes reading them.
Status FoldShapes(Model& m, const std::vector<std::string>& load_warnings) {
  constexpr int kMaxRounds = 16;  // a bound for odd graphs; each round folds at least one node
  for (int round = 0; round < kMaxRounds; ++round) {
    int folded = FoldShapeComputationsOnce(&m);
    if (folded == 0) {
      // Nothing more folds: an If whose condition folding made constant can now be resolved.
      auto inlined = InlineConstantIfsOnce(&m);
      if (!inlined.ok()) return inlined.status();
      folded = *inlined;
      // Constant nodes of the inlined branches become initializers, as at load.
      if (folded > 0) LiftConstantsToInitializers(m.proto.mutable_graph());
    }
    if (folded == 0) break;
    ORTC_RETURN_IF_ERROR(Rebuild(m).WithContext("after shape folding"));
    m.warnings = load_warnings;  // inference warnings are those of the final graph
    InferShapes(&m);
  }
  return Status::Ok();
}

Result<std::unique_ptr<Model>> Finish(std::unique_ptr<Model> m, const fs::path* base_dir,
                                      const LoadOptions& options) {
  if (!m->proto.has_graph()) return InvalidGraph("not an ONNX model: it has no graph");
  if (m->proto.ir_version() == 0 && m->proto.opset_import_size() == 0) {
    return InvalidGraph("not an ONNX model: no IR version and no opset imports");
  }
  m->ir_version = m->proto.ir_version();
  for (const auto& op : m->proto.opset_import()) {
    std::string domain = IsDefaultDomain(op.domain()) ? "" : op.domain();
    m->opsets[domain] = op.version();
  }
  ORTC_RETURN_IF_ERROR(CheckVersions(*m));
  if (base_dir) m->base_dir = *base_dir;

  auto* graph_proto = m->proto.mutable_graph();
  LiftConstantsToInitializers(graph_proto);
  ORTC_RETURN_IF_ERROR(RewriteFourBitDequantize(m.get()));
  for (const auto& t : graph_proto->initializer()) {
    auto init = ReadInitializerInfo(t, base_dir);
    if (!init.ok()) return init.status();
    m->graph.initializers.push_back(std::move(init).value());
  }
  if (graph_proto->sparse_initializer_size() > 0) {
    return NotImplemented("sparse initializers are not supported; densify them before compiling");
  }
  ORTC_RETURN_IF_ERROR(
      ApplyInputShapes(options.input_shapes, graph_proto,
                       options.input_shapes_of_group ? &m->applied_input_shapes : nullptr));
  if (!options.input_values.empty()) {
    auto fixed =
        ApplyInputValues(options.input_values, graph_proto,
                         options.input_shapes_of_group ? &m->applied_input_values : nullptr);
    if (!fixed.ok()) return fixed.status();
    m->fixed_inputs = std::move(fixed).value();
    for (const auto& t : graph_proto->initializer()) {
      for (const auto& f : m->fixed_inputs) {
        if (t.name() != f.declaration.name()) continue;
        auto init = ReadInitializerInfo(t, base_dir);
        if (!init.ok()) return init.status();
        m->graph.initializers.push_back(std::move(init).value());
      }
    }
  }
  ORTC_RETURN_IF_ERROR(BuildGraph(graph_proto, m->opsets, &m->graph));
  ORTC_RETURN_IF_ERROR(ResolveOps(*m));
  if (CheckerApplies(*m)) ORTC_RETURN_IF_ERROR(RunChecker(*m));
  if (HasExpandableContribOps(*m)) {
    ORTC_RETURN_IF_ERROR(ExpandContribOps(m.get(), [&] { return Rebuild(*m); }));
    if (CheckerApplies(*m))
      ORTC_RETURN_IF_ERROR(RunChecker(*m).WithContext("after expanding contrib ops"));
  }
  ORTC_RETURN_IF_ERROR(CheckWindowAttributes(*m));
  ORTC_RETURN_IF_ERROR(CheckKernelShapes(*m));
  if (!options.infer_shapes) return m;
  const std::vector<std::string> load_warnings = m->warnings;
  InferShapes(m.get());
  if (RewriteCastLikes(m.get()) > 0) {
    ORTC_RETURN_IF_ERROR(Rebuild(*m).WithContext("after writing CastLike as Cast"));
    m->warnings = load_warnings;
    InferShapes(m.get());
  }
  for (const auto& name : options.last_position_outputs) {
    ORTC_RETURN_IF_ERROR(KeepLastPosition(m.get(), name));
    ORTC_RETURN_IF_ERROR(Rebuild(*m).WithContext("after slicing the last position"));
    m->warnings = load_warnings;
    InferShapes(m.get());
  }
  if (options.fold_shapes) ORTC_RETURN_IF_ERROR(FoldShapes(*m, load_warnings));
  // -v shows what shape inference could not do (unknown shapes then keep nodes off static-shape
  // backends).
  for (const auto& w : m->warnings) spdlog::info("shape inference: {}", w);
  size_t dynamic = 0;
  for (const auto& v : m->graph.values) dynamic += v.info.shape.is_static() ? 0 : 1;
  spdlog::info("loaded {}: {} node(s), {} value(s), {} without a static shape", m->display_name,
               m->graph.nodes.size(), m->graph.values.size(), dynamic);
  return m;
}

Result<std::unique_ptr<Model>> Parse(std::span<const std::byte> bytes, const std::string& name) {
  if (bytes.size() >= static_cast<size_t>(INT_MAX)) {
    return InvalidGraph(
        "the ONNX file is 2 GB or larger; such models must keep their weights in "
        "external data files");
  }
  auto m = std::make_unique<Model>();
  m->display_name = name;
  if (!m->proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidGraph("not an ONNX model: the file is not a valid ModelProto");
  }
  return m;
}

}  // namespace

int64_t Model::default_opset() const {
  auto it = opsets.find("");
  return it == opsets.end() ? 0 : it->second;
}

Result<std::unique_ptr<Model>> LoadModelFromFile(const fs::path& path, const LoadOptions& options) {
  const std::string name = path.string();
  ORTC_RETURN_IF_ERROR(format::CheckRegularFile(path));
  std::error_code ec;
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(name + ": cannot open for reading");
  const auto size = fs::file_size(path, ec);
  if (ec) return IoError(name + ": cannot read its size");
  std::vector<std::byte> bytes(size);
  if (size > 0 &&
      !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
    return IoError(name + ": read failed");
  }
  auto parsed = Parse(bytes, name);
  if (!parsed.ok()) return parsed.status().WithContext(name);
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  auto m = Finish(std::move(parsed).value(), &dir, options);
  if (!m.ok()) return m.status().WithContext(name);
  return m;
}

Result<std::unique_ptr<Model>> LoadModelFromBuffer(std::span<const std::byte> bytes,
                                                   const std::string& display_name,
                                                   const LoadOptions& options) {
  auto parsed = Parse(bytes, display_name);
  if (!parsed.ok()) return parsed.status().WithContext(display_name);
  const fs::path* dir = options.external_data_dir.empty() ? nullptr : &options.external_data_dir;
  auto m = Finish(std::move(parsed).value(), dir, options);
  if (!m.ok()) return m.status().WithContext(display_name);
  return m;
}

}  // namespace ortc::graph
