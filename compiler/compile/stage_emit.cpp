// A compile's emit phase: each ctx model (the source graph with its compiled groups replaced by
// EPContext nodes, and the provenance a later --if-changed reads) and the external initializers,
// written as temporary files for the publish phase to rename.
#include <climits>
#include <span>
#include <string_view>
#include <unordered_set>

#include "compile/compile_stages.h"
#include "compile/provenance.h"
#include "emit/ctx_model_writer.h"

namespace ortc::compile {
namespace {

std::span<const std::byte> AsBytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// An EPContext node named like a node left as an ONNX node would make the ctx model invalid.
Status CheckNodeNamesDistinct(const emit::CtxModel& ctx, const ModelJob& job) {
  // The names of the nodes left as ONNX nodes, gathered once: comparing every EPContext node
  // with every node was quadratic (100k single-node groups: 10^10 string compares).
  std::unordered_set<std::string_view> kept_names;
  for (const auto& n : ctx.proto.graph().node()) {
    if (!format::IsEpContextNode(n)) kept_names.insert(n.name());
  }
  for (const auto& ep : job.ep_nodes) {
    if (ep && kept_names.count(ep->name)) {
      return InvalidArgument(
          "EPContext node name '" + ep->name +
          "' clashes with a node of the model; choose another --node-name-prefix");
    }
  }
  return Status::Ok();
}

Status WriteExternalInitializers(CompileRun& run, const ModelJob& job, const emit::CtxModel& ctx) {
  auto f = bundle::TempFile::Create(job.ctx_path.parent_path() / run.o.external_initializers_file);
  if (!f.ok()) return f.status();
  run.external = std::move(f).value();
  for (const auto& chunk : ctx.external_chunks) {
    int64_t at = chunk.offset;
    ORTC_RETURN_IF_ERROR(chunk.bytes.ForEachChunk([&](std::span<const std::byte> c) {
      Status s = run.external->WriteAt(static_cast<uint64_t>(at), c);
      at += static_cast<int64_t>(c.size());
      return s;
    }));
  }
  ORTC_RETURN_IF_ERROR(run.external->Truncate(static_cast<uint64_t>(ctx.external_bytes)));
  run.external_bytes = ctx.external_bytes;
  return Status::Ok();
}

}  // namespace

Status EmitCtxModels(CompileRun& run) {
  const CompileOptions& o = run.o;
  run.Progress("emit", 0, 1);
  // Every model of a group uses the same binaries: one string for all.
  const std::string compatibility =
      run.binary_facts.empty() ? "" : format::CompatibilityInfo(run.binary_facts);
  for (auto& job : run.jobs) {
    auto ctx = emit::BuildCtxModel({job.model.get(),
                                    &job.partition,
                                    job.ep_nodes,
                                    o.external_initializers_file,
                                    compatibility,
                                    {{kSourceDigestKey, job.summary.source_sha256},
                                     {kCompileOptionsKey, run.options_json},
                                     {kCompilerKey, o.compiler}}});
    if (!ctx.ok()) return ctx.status();
    ORTC_RETURN_IF_ERROR(CheckNodeNamesDistinct(*ctx, job));
    const size_t ctx_size = ctx->proto.ByteSizeLong();
    if (ctx_size >= static_cast<size_t>(INT_MAX)) {
      return InvalidArgument(
          "the ctx model would be " + std::to_string(ctx_size) +
          " bytes, past ONNX's 2 GB limit: " +
          (o.embed_mode == 1 ? "use --embed-mode 0" : "use --external-initializers-file"));
    }
    if (!o.external_initializers_file.empty())
      ORTC_RETURN_IF_ERROR(WriteExternalInitializers(run, job, *ctx));
    auto ctx_file = bundle::TempFile::Create(job.ctx_path);
    if (!ctx_file.ok()) return ctx_file.status();
    const std::string serialized = ctx->proto.SerializeAsString();
    ORTC_RETURN_IF_ERROR((*ctx_file)->Write(AsBytes(serialized)));
    run.ctx_files.push_back(std::move(ctx_file).value());
    run.ctx_sizes.push_back(static_cast<int64_t>(serialized.size()));
  }
  run.clock.Lap("emit");
  return Status::Ok();
}

}  // namespace ortc::compile
