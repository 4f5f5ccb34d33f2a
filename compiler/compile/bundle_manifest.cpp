#include "compile/bundle_manifest.h"

#include <fstream>
#include <set>
#include <sstream>

#include "bundle/temp_file.h"
#include "compile/provenance.h"
#include "format/ep_context.h"
#include "format/sha256.h"

namespace ortc::compile {

namespace fs = std::filesystem;

namespace {

// The files a ctx model needs beside it: binaries of its main EPContext nodes and the external
// data files of the initializers it kept.
Result<std::vector<std::pair<std::string, std::string>>> FilesOf(const fs::path& ctx_path) {
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

Status WriteBundleManifest(const fs::path& dir, const std::vector<fs::path>& ctx_models,
                           const CompileOptions& options, const nlohmann::json& tools) {
  nlohmann::json m;
  m["schema_version"] = kBundleManifestSchemaVersion;
  m["compiler"] = options.compiler;
  m["tools"] = tools;
  m["options"] = nlohmann::json::parse(CompileOptionsJson(options));
  m["sources"] = nlohmann::json::array();
  std::vector<fs::path> sources = {options.model};
  sources.insert(sources.end(), options.more_models.begin(), options.more_models.end());
  for (const auto& s : sources) {
    auto digest = SourceDigest(s);
    if (!digest.ok()) return digest.status();
    m["sources"].push_back({{"model", s.filename().string()}, {"sha256", *digest}});
  }
  m["files"] = nlohmann::json::array();
  std::set<std::string> listed;
  auto add = [&](const std::string& rel, const std::string& kind) -> Status {
    if (!listed.insert(rel).second) return Status::Ok();
    const fs::path p = dir / rel;
    auto digest = format::Sha256OfFile(p);
    if (!digest.ok()) return digest.status();
    std::error_code ec;
    m["files"].push_back({{"path", rel},
                          {"kind", kind},
                          {"bytes", static_cast<int64_t>(fs::file_size(p, ec))},
                          {"sha256", *digest}});
    return Status::Ok();
  };
  for (const auto& ctx : ctx_models) {
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

Result<BundleCheck> VerifyBundle(const fs::path& dir) {
  const fs::path path = dir / kBundleManifestName;
  std::ifstream in(path);
  if (!in)
    return NoSuchFile(path.string() +
                      ": no bundle manifest (write bundles with ortc compile "
                      "--bundle DIR)");
  std::stringstream ss;
  ss << in.rdbuf();
  BundleCheck out;
  out.manifest = nlohmann::json::parse(ss.str(), nullptr, false);
  const auto& m = out.manifest;
  if (m.is_discarded() || !m.is_object() || !m.contains("files") || !m["files"].is_array())
    return InvalidGraph(path.string() + ": not a bundle manifest");
  const int version = m.value("schema_version", 0);
  if (version != kBundleManifestSchemaVersion)
    return InvalidGraph(path.string() + ": manifest schema_version " + std::to_string(version) +
                        "; this ortc reads " + std::to_string(kBundleManifestSchemaVersion));
  try {
    for (const auto& f : m["files"]) {
      const std::string rel = f.at("path").get<std::string>();
      // Only files inside the bundle: no absolute paths, no way out through "..".
      const fs::path relp(rel);
      if (relp.is_absolute() || rel.find("..") != std::string::npos)
        return InvalidGraph(path.string() + ": file path '" + rel + "' leaves the bundle");
      const fs::path p = dir / relp;
      std::error_code ec;
      if (!fs::is_regular_file(p, ec))
        return NoSuchFile(p.string() + ": listed in the bundle manifest but missing");
      const auto bytes = static_cast<int64_t>(fs::file_size(p, ec));
      if (bytes != f.at("bytes").get<int64_t>())
        return InvalidGraph(p.string() + ": " + std::to_string(bytes) + " bytes, the manifest " +
                            "says " + std::to_string(f.at("bytes").get<int64_t>()) +
                            ": the bundle was modified or truncated");
      auto digest = format::Sha256OfFile(p);
      if (!digest.ok()) return digest.status();
      if (*digest != f.at("sha256").get<std::string>())
        return InvalidGraph(p.string() +
                            ": sha256 differs from the manifest's: the bundle was "
                            "modified");
      if (f.at("kind").get<std::string>() == "ctx_model") out.ctx_models.push_back(p);
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidGraph(path.string() + ": malformed file entry: " + e.what());
  }
  if (out.ctx_models.empty()) return InvalidGraph(path.string() + ": lists no ctx model");
  return out;
}

}  // namespace ortc::compile
