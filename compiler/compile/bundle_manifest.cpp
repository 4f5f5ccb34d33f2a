#include "compile/bundle_manifest.h"

#include <fstream>
#include <set>
#include <sstream>

#include "base/regular_file.h"
#include "base/sha256.h"
#include "bundle/temp_file.h"
#include "compile/provenance.h"
#include "format/ep_context.h"

namespace ortc::compile {

namespace fs = std::filesystem;

namespace {

// The files a ctx model needs beside it: binaries of its main EPContext nodes and the external
// data files of the initializers it kept.
Result<std::vector<std::pair<std::string, std::string>>> FilesOf(const fs::path& ctx_path) {
  ORTC_RETURN_IF_ERROR(format::CheckRegularFile(ctx_path));
  std::ifstream in(ctx_path, std::ios::binary);
  onnx::ModelProto ctx;
  if (!in || !ctx.ParseFromIstream(&in))
    return InvalidGraph(ctx_path.string() + ": cannot read the ctx model to list its files");
  std::vector<std::pair<std::string, std::string>> files;  // relative path, kind
  for (const auto& n : ctx.graph().node()) {
    if (!format::IsEpContextNode(n)) continue;
    auto ep = format::EpContextNode::FromNodeProto(n);
    if (!ep.ok()) return ep.status();
    if (ep->main_context == 1 && ep->embed_mode == 0)
      files.emplace_back(ep->ep_cache_context, "context_binary");
  }
  for (const auto& t : ctx.graph().initializer())
    for (const auto& kv : t.external_data())
      if (kv.key() == "location") files.emplace_back(kv.value(), "external_initializers");
  return files;
}

}  // namespace

Status WriteBundleManifest(const fs::path& dir, const CompileReport& report,
                           const CompileOptions& options, const nlohmann::json& tools) {
  nlohmann::json m;
  m["schema_version"] = kBundleManifestSchemaVersion;
  m["compiler"] = options.compiler;
  m["tools"] = tools;
  m["options"] = nlohmann::json::parse(CompileOptionsJson(options));
  m["sources"] = nlohmann::json::array();
  for (const auto& model : report.models)
    m["sources"].push_back(
        {{"model", model.source.filename().string()}, {"sha256", model.source_sha256}});
  m["files"] = nlohmann::json::array();
  std::set<std::string> listed;
  auto add = [&](const std::string& rel, const std::string& kind) -> Status {
    if (!listed.insert(rel).second) return Status::Ok();
    const fs::path p = dir / rel;
    auto digest = format::Sha256OfFile(p, [&](int64_t done, int64_t total) {
      if (options.progress) options.progress("hash " + rel, done, total);
    });
    if (!digest.ok()) return digest.status();
    std::error_code ec;
    m["files"].push_back({{"path", rel},
                          {"kind", kind},
                          {"bytes", static_cast<int64_t>(fs::file_size(p, ec))},
                          {"sha256", *digest}});
    return Status::Ok();
  };
  for (const auto& model : report.models) {
    const fs::path& ctx = model.ctx_model;
    ORTC_RETURN_IF_ERROR(add(ctx.filename().string(), "ctx_model"));
    auto files = FilesOf(ctx);
    if (!files.ok()) return files.status();
    for (const auto& [rel, kind] : *files) ORTC_RETURN_IF_ERROR(add(rel, kind));
  }
  auto out = bundle::TempFile::Create(dir / kBundleManifestName);
  if (!out.ok()) return out.status();
  const std::string text = m.dump(2) + "\n";
  ORTC_RETURN_IF_ERROR((*out)->Write(std::as_bytes(std::span(text.data(), text.size()))));
  return (*out)->Commit();
}

}  // namespace ortc::compile
