// The compile pipeline: load -> partition -> compile per backend -> emit, then commit files.
#include "compile/compile_driver.h"

#include <chrono>
#include <climits>

#include "bundle/context_binary_writer.h"
#include "context_binary_format.h"
#include "emit/ctx_model_writer.h"
#include "format/ep_context.h"
#include "graph/model.h"
#include "partition/partitioner.h"
#include "registry.h"

namespace ortc::compile {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kProducer = "ortc 0.1.0";

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::string Stem(const fs::path& p) {
  std::string name = p.filename().string();
  if (name.size() > 5 && name.ends_with(".onnx")) name.resize(name.size() - 5);
  return name;
}

bool HasEpContextNodes(const graph::Model& m) {
  for (const auto& n : m.proto.graph().node()) {
    if (format::IsEpContextNode(n)) return true;
  }
  return false;
}

std::span<const std::byte> AsBytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

fs::path CtxModelPath(const CompileOptions& o) {
  const std::string file = Stem(o.model) + "_ctx.onnx";
  if (o.output.empty()) return o.model.parent_path() / file;
  std::error_code ec;
  if (fs::is_directory(o.output, ec) || o.output.string().ends_with("/")) return o.output / file;
  return o.output;
}

fs::path BinPath(const fs::path& ctx_model, const std::string& backend) {
  std::string base = ctx_model.filename().string();
  if (base.ends_with("_ctx.onnx")) {
    base.resize(base.size() - 9);
  } else if (base.ends_with(".onnx")) {
    base.resize(base.size() - 5);
  }
  return ctx_model.parent_path() / (base + "_" + backend + ".bin");
}

Result<CompileReport> Compile(const CompileOptions& o) {
  CompileReport report;
  const auto start = Clock::now();
  auto progress = [&](const std::string& phase, int64_t done, int64_t total) {
    if (o.progress) o.progress(phase, done, total);
  };

  // Backends, validated before any work.
  std::vector<const backends::Backend*> order;
  for (const auto& name : o.backends) {
    const auto* b = backends::FindBackend(name);
    if (!b) return InvalidArgument("unknown backend '" + name + "' in --ep");
    if (!b->can_compile()) {
      return NotImplemented("backend " + name + " cannot compile yet (" +
                            std::string(b->status_line()) + ")");
    }
    order.push_back(b);
  }
  for (const auto& [name, opts] : o.provider_options) {
    const auto* b = backends::FindBackend(name);
    if (!b) return InvalidArgument("--provider-option names unknown backend '" + name + "'");
    ORTC_RETURN_IF_ERROR(b->ValidateOptions(opts));
  }
  if (o.embed_mode != 0 && o.embed_mode != 1) return InvalidArgument("--embed-mode must be 0 or 1");
  if (!o.external_initializers_file.empty() &&
      fs::path(o.external_initializers_file).filename() != fs::path(o.external_initializers_file)) {
    return InvalidArgument(
        "--external-initializers-file takes a file name (it is written beside the ctx model), not "
        "a path");
  }

  const fs::path ctx_path = CtxModelPath(o);
  if (fs::weakly_canonical(ctx_path) == fs::weakly_canonical(o.model)) {
    return InvalidArgument("the output " + ctx_path.string() + " would overwrite the source model");
  }
  std::error_code ec;
  if (!ctx_path.parent_path().empty() && !fs::is_directory(ctx_path.parent_path(), ec)) {
    return NoSuchFile("output folder " + ctx_path.parent_path().string() + " does not exist");
  }

  // Load and partition.
  progress("load", 0, 1);
  auto t = Clock::now();
  auto loaded = graph::LoadModelFromFile(o.model);
  if (!loaded.ok()) return loaded.status();
  const graph::Model& model = **loaded;
  report.phase_seconds["load"] = Seconds(t);
  if (HasEpContextNodes(model)) {
    return InvalidArgument(model.display_name +
                           " already contains EPContext nodes (it is a compiled model); compile "
                           "the source model instead");
  }
  t = Clock::now();
  progress("partition", 0, 1);
  const auto partition = partition::PartitionGraph(model.graph, order);
  ORTC_RETURN_IF_ERROR(partition::CheckPartition(model.graph, partition, o.max_partitions));
  report.phase_seconds["partition"] = Seconds(t);

  std::vector<fs::path> outputs = {ctx_path};
  for (const auto* b : order) outputs.push_back(BinPath(ctx_path, std::string(b->name())));
  if (!o.external_initializers_file.empty())
    outputs.push_back(ctx_path.parent_path() / o.external_initializers_file);
  if (o.error_if_output_exists) {
    for (const auto& f : outputs) {
      if (fs::exists(f, ec))
        return InvalidArgument("output " + f.string() + " exists (--error-if-output-exists)");
    }
  }

  // Compile each named backend's groups into its binary.
  const std::string prefix = o.node_name_prefix_set ? o.node_name_prefix : Stem(o.model) + "_";
  std::vector<std::optional<format::EpContextNode>> ep_nodes(partition.groups.size());
  std::vector<std::unique_ptr<bundle::ContextBinaryWriter>> writers;
  t = Clock::now();
  int64_t total_weight_bytes = 0, done_weight_bytes = 0;
  for (const auto& grp : partition.groups) {
    if (std::find(order.begin(), order.end(), grp.backend) != order.end())
      total_weight_bytes += grp.initializer_bytes;
  }
  for (const auto* b : partition.backends) {
    BackendSummary summary;
    summary.name = std::string(b->name());
    for (const auto& grp : partition.groups) {
      if (grp.backend != b) continue;
      summary.groups++;
      summary.nodes += static_cast<int>(grp.nodes.size());
    }
    summary.compiled = std::find(order.begin(), order.end(), b) != order.end();
    if (!summary.compiled || summary.groups == 0) {
      report.backends.push_back(summary);
      continue;
    }
    const auto options_it = o.provider_options.find(summary.name);
    const backends::ProviderOptions opts =
        options_it == o.provider_options.end() ? backends::ProviderOptions{} : options_it->second;
    const backends::BinaryIdentity id = b->Identity(opts);
    const fs::path bin_path = BinPath(ctx_path, summary.name);
    auto writer = bundle::ContextBinaryWriter::Create(
        bin_path, {kProducer, summary.name, id.versions, id.hardware_targets, id.properties});
    if (!writer.ok()) return writer.status();
    bool first = true;
    for (size_t gi = 0; gi < partition.groups.size(); ++gi) {
      const auto& grp = partition.groups[gi];
      if (grp.backend != b) continue;
      backends::Subgraph sg{prefix + grp.name(), grp.nodes, grp.inputs, grp.outputs};
      progress("compile " + sg.name, done_weight_bytes, total_weight_bytes);
      auto compiled = b->Compile(model, sg, opts);
      if (!compiled.ok()) return compiled.status().WithContext("compiling " + sg.name);
      for (const auto& [k, v] : compiled->stats) report.lowering_stats[k] += v;
      bundle::GraphSpec spec{
          sg.name, compiled->inputs,     compiled->outputs, std::move(compiled->program),
          {},      compiled->arena_bytes};
      for (const auto& w : compiled->weights) {
        auto index = (*writer)->AddWeight(w);
        if (!index.ok()) return index.status().WithContext("writing weights of " + sg.name);
        spec.weights.push_back(*index);
        done_weight_bytes += w.bytes.size();
        progress("write " + bin_path.filename().string(), done_weight_bytes, total_weight_bytes);
      }
      format::EpContextNode node;
      node.name = sg.name;
      for (int v : grp.inputs) node.inputs.push_back(model.graph.values[v].name);
      for (int v : grp.outputs) node.outputs.push_back(model.graph.values[v].name);
      node.main_context = first ? 1 : 0;
      node.embed_mode = o.embed_mode;
      node.ep_cache_context = o.embed_mode == 0 ? bin_path.filename().string() : "";
      node.ep_sdk_version = id.sdk_version;
      node.onnx_model_filename = o.model.filename().string();
      node.hardware_architecture = id.hardware_architecture;
      node.partition_name = sg.name;
      node.source = std::string(b->ep_source());
      node.max_size = static_cast<int64_t>(spec.arena_bytes);
      ep_nodes[gi] = std::move(node);
      (*writer)->AddGraph(std::move(spec));
      first = false;
    }
    ORTC_RETURN_IF_ERROR((*writer)->Finish());
    const auto& st = (*writer)->stats();
    summary.content_id = st.content_id;
    report.weights_added += st.weights_added;
    report.weights_stored += st.weights_stored;
    report.weight_bytes_added += st.weight_bytes_added;
    report.weight_bytes_stored += st.weight_bytes_stored;
    const std::string notes = "content_id=" + st.content_id +
                              ";format=" + std::to_string(format::kFormatMajor) + "." +
                              std::to_string(format::kFormatMinor);
    for (size_t gi = 0; gi < partition.groups.size(); ++gi) {
      if (partition.groups[gi].backend == b && ep_nodes[gi]) ep_nodes[gi]->notes = notes;
    }
    if (o.embed_mode == 1) {
      auto bytes = (*writer)->ReadFinished();
      if (!bytes.ok()) return bytes.status();
      for (size_t gi = 0; gi < partition.groups.size(); ++gi) {
        if (partition.groups[gi].backend == b && ep_nodes[gi] && ep_nodes[gi]->main_context == 1) {
          ep_nodes[gi]->ep_cache_context = std::move(bytes).value();
        }
      }
    } else {
      writers.push_back(std::move(writer).value());
    }
    report.backends.push_back(summary);
  }
  report.phase_seconds["compile"] = Seconds(t);
  const bool any_compiled =
      std::any_of(ep_nodes.begin(), ep_nodes.end(), [](const auto& n) { return n.has_value(); });
  if (!any_compiled && o.error_if_no_nodes_compiled) {
    return NotImplemented(
        "no node was compiled (--error-if-no-nodes-compiled): the named backends took nothing");
  }

  // Emit the ctx model (and the external initializers), then commit everything.
  t = Clock::now();
  progress("emit", 0, 1);
  auto ctx = emit::BuildCtxModel({&model, &partition, ep_nodes, o.external_initializers_file});
  if (!ctx.ok()) return ctx.status();
  for (const auto& ep : ep_nodes) {
    if (!ep) continue;
    for (const auto& n : ctx->proto.graph().node()) {
      if (!format::IsEpContextNode(n) && n.name() == ep->name) {
        return InvalidArgument(
            "EPContext node name '" + ep->name +
            "' clashes with a node of the model; choose another --node-name-prefix");
      }
    }
  }
  const size_t ctx_size = ctx->proto.ByteSizeLong();
  if (ctx_size >= static_cast<size_t>(INT_MAX)) {
    return InvalidArgument(
        "the ctx model would be " + std::to_string(ctx_size) + " bytes, past ONNX's 2 GB limit: " +
        (o.embed_mode == 1 ? "use --embed-mode 0" : "use --external-initializers-file"));
  }
  std::unique_ptr<bundle::TempFile> external;
  if (!o.external_initializers_file.empty()) {
    auto f = bundle::TempFile::Create(ctx_path.parent_path() / o.external_initializers_file);
    if (!f.ok()) return f.status();
    external = std::move(f).value();
    for (const auto& chunk : ctx->external_chunks) {
      int64_t at = chunk.offset;
      ORTC_RETURN_IF_ERROR(chunk.bytes.ForEachChunk([&](std::span<const std::byte> c) {
        Status s = external->WriteAt(static_cast<uint64_t>(at), c);
        at += static_cast<int64_t>(c.size());
        return s;
      }));
    }
    ORTC_RETURN_IF_ERROR(external->Truncate(static_cast<uint64_t>(ctx->external_bytes)));
  }
  auto ctx_file = bundle::TempFile::Create(ctx_path);
  if (!ctx_file.ok()) return ctx_file.status();
  const std::string serialized = ctx->proto.SerializeAsString();
  ORTC_RETURN_IF_ERROR((*ctx_file)->Write(AsBytes(serialized)));

  // Binaries first, the ctx model last: a ctx model never points at a bin not yet in place.
  for (auto& w : writers) {
    ORTC_RETURN_IF_ERROR(w->Commit());
    report.files.push_back({w->final_path(), "context_binary", w->stats().file_bytes});
  }
  if (external) {
    ORTC_RETURN_IF_ERROR(external->Commit());
    report.files.push_back({external->final_path(), "external_initializers", ctx->external_bytes});
  }
  ORTC_RETURN_IF_ERROR((*ctx_file)->Commit());
  report.files.push_back({ctx_path, "ctx_model", static_cast<int64_t>(serialized.size())});
  report.phase_seconds["emit"] = Seconds(t);
  report.phase_seconds["total"] = Seconds(start);
  return report;
}

}  // namespace ortc::compile
