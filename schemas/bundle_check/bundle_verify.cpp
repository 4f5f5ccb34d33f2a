#include "bundle_check/bundle_verify.h"

#include <fstream>
#include <sstream>

#include "base/regular_file.h"
#include "base/sha256.h"

namespace ortc::tools {

namespace fs = std::filesystem;

Result<BundleCheck> VerifyBundle(const fs::path& dir) {
  const fs::path path = dir / kBundleManifestName;
  if (Status s = format::CheckRegularFile(path); s.code() == StatusCode::kIoError) return s;
  std::ifstream in(path);
  if (!in) {
    // A compile writes the manifest after its models, under its publish lock: ctx models
    // without one are a compile that was killed between the two (or not a --bundle folder).
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().filename().string().ends_with("_ctx.onnx"))
        return NoSuchFile(path.string() +
                          ": no bundle manifest beside the ctx models: the compile that wrote "
                          "them did not finish (it was killed or failed before writing the "
                          "manifest); rerun it with --bundle DIR");
    return NoSuchFile(path.string() +
                      ": no bundle manifest (write bundles with ortc compile "
                      "--bundle DIR)");
  }
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

}  // namespace ortc::tools
