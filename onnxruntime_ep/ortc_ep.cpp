#include "ortc_ep.h"

#include <algorithm>
#include <set>

#include "format/ep_context.h"
#include "graph_to_proto.h"
#include "session_kernel.h"

namespace fs = std::filesystem;

namespace ortc::ort_ep {

namespace {

std::string ReadStringAttr(Ort::ConstNode node, const char* name) {
  Ort::ConstOpAttr attr{nullptr};
  if (!node.GetAttributeByName(name, attr).IsOK() || !attr) return "";
  std::string v;
  if (!attr.GetValue(v).IsOK()) return "";
  return v;
}

bool IsOrtcEpContext(Ort::ConstNode node) {
  return node.GetOperatorType() == format::kEpContextOpType &&
         node.GetDomain() == format::kEpContextDomain &&
         !format::BackendOfSource(ReadStringAttr(node, "source")).empty();
}

std::vector<std::string> ValueNames(const std::vector<Ort::ConstValueInfo>& values) {
  std::vector<std::string> names;
  for (const auto& v : values) names.push_back(v ? v.GetName() : std::string());
  return names;
}

std::string Serialize(const onnx::ModelProto& m) {
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

// The EPContext node ONNX Runtime writes into its ctx model (ONNX Runtime owns it once Compile
// succeeds; until then the Ort::Node does).
Ort::Node MakeOrtNode(const format::EpContextNode& node) {
  const onnx::NodeProto proto = node.ToNodeProto();
  std::vector<Ort::OpAttr> attrs;
  for (const auto& a : proto.attribute()) {
    if (a.type() == onnx::AttributeProto::INT) {
      const int64_t v = a.i();
      attrs.emplace_back(a.name().c_str(), &v, 1, ORT_OP_ATTR_INT);
    } else if (a.type() == onnx::AttributeProto::STRING) {
      attrs.emplace_back(a.name().c_str(), a.s().data(), static_cast<int>(a.s().size()),
                         ORT_OP_ATTR_STRING);
    }
  }
  std::vector<std::string> inputs(proto.input().begin(), proto.input().end());
  std::vector<std::string> outputs(proto.output().begin(), proto.output().end());
  return Ort::Node(proto.op_type(), proto.domain(), proto.name(), inputs, outputs, attrs);
}

}  // namespace

Result<EpConfig> ReadEpConfig(Ort::ConstSessionOptions so) {
  EpConfig c;
  auto get = [&](const char* key, const std::string& def) {
    return so.GetConfigEntryOrDefault(key, def);
  };
  c.context_enable = get("ep.context_enable", "0") == "1";
  c.compile_only = get("session.compile_only", "0") == "1";
  c.context_file_path = get("ep.context_file_path", "");
  const std::string embed = get("ep.context_embed_mode", "0");
  if (embed != "0" && embed != "1")
    return InvalidArgument("ep.context_embed_mode must be 0 or 1, not '" + embed + "'");
  c.compile.embed_mode = embed == "1" ? 1 : 0;
  c.compile.node_name_prefix = get("ep.context_node_name_prefix", "");
  const std::string backends = get("ep.ortc.backends", "cpu");
  c.compile.backends.clear();
  size_t start = 0;
  while (start <= backends.size()) {
    size_t comma = backends.find(',', start);
    if (comma == std::string::npos) comma = backends.size();
    if (comma > start) c.compile.backends.push_back(backends.substr(start, comma - start));
    start = comma + 1;
  }
  // Checked here: ONNX Runtime logs a GetCapability error and runs the model without the EP.
  if (auto order = BackendOrder(c.compile.backends); !order.ok()) return order.status();
  const std::string optimal = get("ep.ortc.require_optimal", "0");
  if (optimal != "0" && optimal != "1")
    return InvalidArgument("ep.ortc.require_optimal must be 0 or 1, not '" + optimal + "'");
  if (optimal == "1") c.policy = VerdictPolicy::kRequireOptimal;
  // ONNX Runtime's ep.share_ep_contexts promises one binary per process across sessions; ortc's
  // runtime always shares, and this key turns it off (ep.ortc.share_binaries=0) for tests.
  c.share_ep_contexts = get("ep.ortc.share_binaries", "1") != "0";
  return c;
}

OrtcEp::OrtcEp(EpConfig config, const OrtLogger* logger)
    : OrtEp{}, config_(std::move(config)), logger_(logger) {
  ort_version_supported = ORT_API_VERSION;
  GetName = GetNameImpl;
  GetCapability = GetCapabilityImpl;
  Compile = CompileImpl;
  ReleaseNodeComputeInfos = ReleaseNodeComputeInfosImpl;
  GetCompiledModelCompatibilityInfo = GetCompatibilityInfoImpl;
  IsConcurrentRunSupported = IsConcurrentRunSupportedImpl;
}

const char* ORT_API_CALL OrtcEp::GetNameImpl(const OrtEp*) noexcept {
  return kEpName;
}

OrtStatus* ORT_API_CALL OrtcEp::GetCapabilityImpl(OrtEp* self, const OrtGraph* graph,
                                                  OrtEpGraphSupportInfo* support) noexcept {
  return Guard(
      [&] { return static_cast<OrtcEp*>(self)->DoGetCapability(Ort::ConstGraph(graph), support); });
}

OrtStatus* ORT_API_CALL OrtcEp::CompileImpl(OrtEp* self, const OrtGraph** graphs,
                                            const OrtNode** fused_nodes, size_t count,
                                            OrtNodeComputeInfo** infos,
                                            OrtNode** ep_context_nodes) noexcept {
  return Guard([&] {
    return static_cast<OrtcEp*>(self)->DoCompile(graphs, fused_nodes, count, infos,
                                                 ep_context_nodes);
  });
}

void ORT_API_CALL OrtcEp::ReleaseNodeComputeInfosImpl(OrtEp*, OrtNodeComputeInfo** infos,
                                                      size_t count) noexcept {
  for (size_t i = 0; i < count; ++i) delete static_cast<SessionKernel*>(infos[i]);
}

const char* ORT_API_CALL OrtcEp::GetCompatibilityInfoImpl(OrtEp* self, const OrtGraph*) noexcept {
  return static_cast<OrtcEp*>(self)->compatibility_info_.c_str();
}

OrtStatus* ORT_API_CALL OrtcEp::IsConcurrentRunSupportedImpl(OrtEp*, bool* supported) noexcept {
  *supported = true;  // ortc Sessions run concurrently
  return nullptr;
}

void OrtcEp::Warn(const std::string& message) const {
  if (!logger_) return;
  OrtStatus* s =
      Apis().ort->Logger_LogMessage(logger_, ORT_LOGGING_LEVEL_WARNING,
                                    ("ortc: " + message).c_str(), __FILE__, __LINE__, __func__);
  if (s) Apis().ort->ReleaseStatus(s);
}

SessionOptions OrtcEp::RuntimeOptions(const fs::path& ctx_path) const {
  SessionOptions o;
  o.context_file_path = ctx_path;
  o.policy = config_.policy;
  o.share_ep_contexts = config_.share_ep_contexts;
  return o;
}

fs::path OrtcEp::CtxModelPath(Ort::ConstGraph graph) const {
  if (!config_.context_file_path.empty()) return config_.context_file_path;
  // ONNX Runtime's default: <model>_ctx.onnx beside the source model.
  fs::path model = graph.GetModelPath();
  if (model.empty()) return {};
  return model.parent_path() / (model.stem().string() + "_ctx.onnx");
}

Status OrtcEp::DoGetCapability(Ort::ConstGraph graph, OrtEpGraphSupportInfo* support) {
  const auto nodes = graph.GetNodes();
  model_path_ = graph.GetModelPath();
  OrtNodeFusionOptions fusion{};
  fusion.ort_version_supported = ORT_API_VERSION;
  fusion.drop_constant_initializers = true;  // ortc keeps its own copy of every weight

  bool any_ep_context = false;
  for (const auto& node : nodes) {
    if (node.GetOperatorType() == format::kEpContextOpType) any_ep_context = true;
    if (!IsOrtcEpContext(node)) continue;
    // Each EPContext node is its own fused node, run where ONNX Runtime places it.
    auto proto = NodeToProto(node);
    if (!proto.ok()) return proto.status();
    auto ep = format::EpContextNode::FromNodeProto(*proto);
    if (!ep.ok()) return ep.status();
    if (ep->main_context == 1) main_contexts_[ep->source] = *ep;
    const OrtNode* n = node;
    if (OrtStatus* s = Apis().ep->EpGraphSupportInfo_AddNodesToFuse(support, &n, 1, &fusion)) {
      Status st(StatusCode::kEpFail, Apis().ort->GetErrorMessage(s));
      Apis().ort->ReleaseStatus(s);
      return st;
    }
  }
  // A compiled model: ortc runs its own EPContext nodes and compiles nothing more.
  if (any_ep_context) return Status::Ok();
  if (graph.GetParentNode()) return Status::Ok();  // ortc places If/Loop/Scan whole, or not at all

  auto proto = GraphToModelProto(graph, {.opaque_subgraph_nodes = true});
  if (!proto.ok()) {
    Warn("not compiling this model: " + proto.status().message());
    return Status::Ok();
  }
  auto groups = ChooseGroups(*proto, config_.compile);
  if (!groups.ok()) {
    Warn("not compiling this model: " + groups.status().message());
    return Status::Ok();
  }
  for (const auto& group : *groups) {
    std::vector<const OrtNode*> claimed;
    for (size_t i : group) claimed.push_back(nodes[i]);
    if (OrtStatus* s = Apis().ep->EpGraphSupportInfo_AddNodesToFuse(support, claimed.data(),
                                                                    claimed.size(), &fusion)) {
      Status st(StatusCode::kEpFail, Apis().ort->GetErrorMessage(s));
      Apis().ort->ReleaseStatus(s);
      return st;
    }
  }
  return Status::Ok();
}

Status OrtcEp::DoCompile(const OrtGraph** graphs, const OrtNode** fused_nodes, size_t count,
                         OrtNodeComputeInfo** infos, OrtNode** ep_context_nodes) {
  for (size_t i = 0; i < count; ++i) {
    infos[i] = nullptr;
    if (ep_context_nodes) ep_context_nodes[i] = nullptr;
  }
  // On error, whatever was made so far is released here, not by ONNX Runtime.
  std::vector<std::unique_ptr<SessionKernel>> made(count);
  std::vector<Ort::Node> ep_nodes(count);
  std::vector<size_t> to_compile;
  std::vector<onnx::ModelProto> parts;

  for (size_t i = 0; i < count; ++i) {
    Ort::ConstGraph graph(graphs[i]);
    Ort::ConstNode fused(fused_nodes[i]);
    const auto nodes = graph.GetNodes();
    auto proto = GraphToModelProto(graph, {.unique_node_names = false});
    if (!proto.ok()) return proto.status();
    if (nodes.size() == 1 && IsOrtcEpContext(nodes[0])) {
      // A precompiled node: run it with the ortc runtime (the version gate runs here).
      auto ep = format::EpContextNode::FromNodeProto(proto->graph().node(0));
      if (!ep.ok()) return ep.status();
      format::EpContextNode as_main = *ep;
      if (ep->main_context == 0) {
        auto main = main_contexts_.find(ep->source);
        if (main == main_contexts_.end())
          return InvalidGraph("EPContext node '" + ep->name + "' has no main context node for " +
                              ep->source + " in this model");
        as_main.main_context = 1;
        as_main.embed_mode = main->second.embed_mode;
        as_main.ep_cache_context = main->second.ep_cache_context;
      }
      *proto->mutable_graph()->mutable_node(0) = as_main.ToNodeProto();
      fs::path ctx_path = model_path_.empty() ? config_.context_file_path : model_path_;
      const std::string bytes = Serialize(*proto);
      auto session = Session::CreateFromBuffer(std::as_bytes(std::span(bytes.data(), bytes.size())),
                                               RuntimeOptions(ctx_path));
      if (!session.ok()) return session.status();
      made[i] =
          std::make_unique<SessionKernel>(std::move(session).value(), ValueNames(fused.GetInputs()),
                                          ValueNames(fused.GetOutputs()), fused.GetName());
      if (config_.context_enable && ep_context_nodes) {
        format::EpContextNode node = *ep;
        node.name = fused.GetName();
        ep_nodes[i] = MakeOrtNode(node);
      }
      continue;
    }
    to_compile.push_back(i);
    parts.push_back(std::move(proto).value());
  }

  if (!to_compile.empty()) {
    CompileSettings settings = config_.compile;
    if (config_.context_enable) {
      settings.ctx_model_path = CtxModelPath(Ort::ConstGraph(graphs[to_compile[0]]));
      if (settings.ctx_model_path.empty() && settings.embed_mode == 0) {
        return InvalidArgument(
            "ONNX Runtime writes the EPContext model to a buffer and the model has no path, so "
            "the binary has nowhere to go: set an output path (ep.context_file_path) or embed "
            "the binary (embed mode 1)");
      }
    }
    auto compiled = CompileParts(parts, settings);
    if (!compiled.ok()) return compiled.status();
    struct RemoveTemp {
      fs::path dir;
      ~RemoveTemp() {
        std::error_code ec;
        if (!dir.empty()) fs::remove_all(dir, ec);
      }
    } remove_temp{compiled->temp_dir};

    // What the binaries need of a device, for ONNX Runtime's compatibility check.
    compatibility_info_ = compiled->compatibility_info;

    for (size_t k = 0; k < to_compile.size(); ++k) {
      const size_t i = to_compile[k];
      Ort::ConstNode fused(fused_nodes[i]);
      std::unique_ptr<Session> session;
      // A compile-only session never runs: no session, so a bundle for a GPU compiles here
      // without one.
      if (!config_.compile_only) {
        const std::string bytes = Serialize(compiled->session_models[k]);
        auto s =
            Session::CreateFromBuffer(std::as_bytes(std::span(bytes.data(), bytes.size())),
                                      RuntimeOptions(compiled->binary_dir / "ortc_ep_ctx.onnx"));
        if (!s.ok()) return s.status();
        session = std::move(s).value();
      }
      made[i] = std::make_unique<SessionKernel>(std::move(session), ValueNames(fused.GetInputs()),
                                                ValueNames(fused.GetOutputs()), fused.GetName());
      if (config_.context_enable && ep_context_nodes) {
        // ONNX Runtime swaps each fused node for the EPContext node of the same name.
        format::EpContextNode node = compiled->nodes[k];
        node.name = fused.GetName();
        node.onnx_model_filename = model_path_.filename().string();
        ep_nodes[i] = MakeOrtNode(node);
      }
    }
  }
  for (size_t i = 0; i < count; ++i) {
    infos[i] = made[i].release();
    if (ep_context_nodes && ep_nodes[i]) ep_context_nodes[i] = ep_nodes[i].release();
  }
  return Status::Ok();
}

}  // namespace ortc::ort_ep
