#include "compile_through_ort.h"

#include <stdlib.h>

#include <fstream>
#include <map>
#include <set>

#include "compile/compile_driver.h"
#include "format/compatibility_info.h"
#include "format/ep_context.h"
#include "graph/model.h"
#include "partition/partitioner.h"
#include "registry.h"

namespace fs = std::filesystem;

namespace ortc::ort_ep {

namespace {

Result<fs::path> MakeTempDir(const fs::path& parent) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string templ = (parent / ".ortc-ep-XXXXXX").string();
  if (!mkdtemp(templ.data()))
    return IoError("cannot create a temporary folder in " + parent.string() + ": " +
                   std::strerror(errno));
  return fs::path(templ);
}

Status WriteProto(const google::protobuf::MessageLite& m, const fs::path& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f || !m.SerializeToOstream(&f) || !f.flush())
    return IoError("cannot write " + path.string());
  return Status::Ok();
}

Result<onnx::ModelProto> ReadModel(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  onnx::ModelProto m;
  if (!f || !m.ParseFromIstream(&f)) return IoError("cannot read " + path.string());
  return m;
}

}  // namespace

Result<std::vector<const backends::Backend*>> BackendOrder(const std::vector<std::string>& names) {
  std::vector<const backends::Backend*> order;
  for (const auto& name : names) {
    auto found = backends::ResolveBackend(name);
    if (!found.ok())
      return InvalidArgument("unknown backend '" + name + "' in ep.ortc.backends (known: " +
                             backends::KnownBackendNames() + "); " + found.status().message());
    const backends::Backend* b = *found;
    if (!b->can_compile())
      return NotImplemented("backend " + name + " cannot compile (" +
                            std::string(b->status_line()) + ")");
    order.push_back(b);
  }
  if (order.empty()) return InvalidArgument("ep.ortc.backends names no backend");
  return order;
}

Result<std::vector<std::vector<size_t>>> ChooseGroups(const onnx::ModelProto& model,
                                                      const CompileSettings& settings) {
  auto order = BackendOrder(settings.backends);
  if (!order.ok()) return order.status();
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return InvalidGraph("ONNX Runtime's graph does not serialize (over 2 GB?)");
  graph::LoadOptions load;
  // Node for node as ONNX Runtime has them: folding would replace nodes by initializers that
  // ONNX Runtime does not have. The compile of each group folds again.
  load.fold_shapes = false;
  auto loaded = graph::LoadModelFromBuffer(std::as_bytes(std::span(bytes.data(), bytes.size())),
                                           "ONNX Runtime's graph", load);
  if (!loaded.ok()) return loaded.status();
  const auto& g = (*loaded)->graph;
  std::map<std::string, size_t> index_of;
  for (int i = 0; i < model.graph().node_size(); ++i) index_of[model.graph().node(i).name()] = i;
  auto partition = partition::PartitionGraph(g, *order);
  std::vector<std::vector<size_t>> groups;
  for (const auto& group : partition.groups) {
    if (std::find(order->begin(), order->end(), group.backend) == order->end()) continue;
    std::vector<size_t> nodes;
    bool all_known = true;
    for (int id : group.nodes) {
      auto it = index_of.find(g.nodes[id].name);
      if (it == index_of.end()) {
        all_known = false;
        break;
      }
      nodes.push_back(it->second);
    }
    if (all_known && !nodes.empty()) groups.push_back(std::move(nodes));
  }
  return groups;
}

onnx::ModelProto SingleNodeModel(const format::EpContextNode& node, const onnx::GraphProto& types,
                                 const onnx::ModelProto& opsets_from) {
  onnx::ModelProto m;
  m.set_ir_version(opsets_from.ir_version());
  *m.mutable_opset_import() = opsets_from.opset_import();
  format::AddEpContextOpset(&m);
  auto* g = m.mutable_graph();
  g->set_name(node.name);
  *g->add_node() = node.ToNodeProto();
  auto find_type = [&](const std::string& name, onnx::ValueInfoProto* out) {
    out->set_name(name);
    for (const auto* list : {&types.input(), &types.output(), &types.value_info()}) {
      for (const auto& v : *list) {
        if (v.name() == name) {
          *out->mutable_type() = v.type();
          return;
        }
      }
    }
  };
  for (const auto& in : node.inputs)
    if (!in.empty()) find_type(in, g->add_input());
  for (const auto& out : node.outputs)
    if (!out.empty()) find_type(out, g->add_output());
  return m;
}

Result<CompiledParts> CompileParts(const std::vector<onnx::ModelProto>& parts,
                                   const CompileSettings& settings) {
  if (parts.empty()) return InvalidArgument("nothing to compile");
  const bool beside_ctx = !settings.ctx_model_path.empty();
  fs::path ctx_dir = settings.ctx_model_path.parent_path();
  if (beside_ctx && ctx_dir.empty()) ctx_dir = ".";
  auto temp = MakeTempDir(beside_ctx ? ctx_dir : fs::temp_directory_path());
  if (!temp.ok()) return temp.status();
  CompiledParts result;
  result.temp_dir = *temp;
  // The temporary folder goes on any error; on success the caller removes it after loading.
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      if (!dir.empty()) fs::remove_all(dir, ec);
    }
  } cleanup{*temp};

  fs::create_directories(*temp / "src");
  fs::create_directories(*temp / "out");
  compile::CompileOptions o;
  o.backends = settings.backends;
  o.embed_mode = settings.embed_mode;
  o.output = *temp / "out/";
  o.share_weights = parts.size() > 1;
  for (size_t i = 0; i < parts.size(); ++i) {
    const fs::path src = *temp / "src" / ("part" + std::to_string(i) + ".onnx");
    ORTC_RETURN_IF_ERROR(WriteProto(parts[i], src));
    if (i == 0)
      o.model = src;
    else
      o.more_models.push_back(src);
    o.node_name_prefixes.push_back(settings.node_name_prefix + "ortc_p" + std::to_string(i) + "_");
  }
  auto report = compile::Compile(o);
  if (!report.ok()) return report.status();

  // Binaries: beside the ctx model ONNX Runtime writes, named as `ortc compile` names them.
  std::map<std::string, std::string> final_name;  // backend -> binary file name
  result.binary_dir = beside_ctx ? ctx_dir : *temp / "out";
  if (settings.embed_mode == 0) {
    for (const auto& f : report->files) {
      if (f.kind != "context_binary") continue;
      std::string backend = f.path.stem().string();
      backend = backend.substr(backend.rfind('_') + 1);
      fs::path target = beside_ctx ? compile::BinPath(settings.ctx_model_path, backend) : f.path;
      if (beside_ctx) {
        std::error_code ec;
        fs::rename(f.path, target, ec);
        if (ec)
          return IoError("cannot move the binary to " + target.string() + ": " + ec.message());
        result.written.push_back(target);
      }
      final_name[backend] = target.filename().string();
    }
  }

  std::map<std::string, format::EpContextNode> mains;  // source -> main node
  for (size_t i = 0; i < report->models.size(); ++i) {
    auto ctx = ReadModel(report->models[i].ctx_model);
    if (!ctx.ok()) return ctx.status();
    for (const auto& prop : ctx->metadata_props())
      if (prop.key() == format::kCompatibilityMetadataKey) result.compatibility_info = prop.value();
    const auto& nodes = ctx->graph().node();
    if (nodes.size() != 1 || !format::IsEpContextNode(nodes[0])) {
      return Status(StatusCode::kEpFail,
                    "ortc compiled the group ONNX Runtime gave it into " +
                        std::to_string(nodes.size()) +
                        " nodes, not one EPContext node; the partition and the compile disagree");
    }
    auto node = format::EpContextNode::FromNodeProto(nodes[0]);
    if (!node.ok()) return node.status();
    const std::string backend = format::BackendOfSource(node->source);
    auto main = mains.find(node->source);
    if (main == mains.end()) {
      node->main_context = 1;
      if (settings.embed_mode == 0) node->ep_cache_context = final_name[backend];
      main = mains.emplace(node->source, *node).first;
      result.session_models.push_back(SingleNodeModel(*node, ctx->graph(), *ctx));
    } else {
      // One main context per backend, as in `ortc compile`'s ctx models: the binary is named
      // (or embedded) once.
      format::EpContextNode as_main = *node;
      as_main.main_context = 1;
      as_main.ep_cache_context = main->second.ep_cache_context;
      result.session_models.push_back(SingleNodeModel(as_main, ctx->graph(), *ctx));
      node->main_context = 0;
      node->ep_cache_context.clear();
    }
    result.nodes.push_back(std::move(*node));
  }
  cleanup.dir.clear();
  return result;
}

}  // namespace ortc::ort_ep
