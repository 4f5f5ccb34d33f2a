#include "bundle_check/provenance.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <string_view>

#include "base/regular_file.h"
#include "base/sha256.h"
#include "format/context_binary_reader.h"
#include "format/ep_context.h"

namespace ortc::tools {

namespace fs = std::filesystem;

namespace {

// The key every external-data entry of a TensorProto has. A model file without these bytes
// anywhere names no external data file, and need not be parsed to find out.
constexpr std::string_view kExternalDataKey = "location";

// Feeds a file's bytes to h in chunks (a missing file adds nothing: the compile reports it).
// Sets *mentions_location when the bytes contain kExternalDataKey (across chunk borders too).
void HashFile(const fs::path& path, format::Sha256* h, const HashProgress& progress,
              bool* mentions_location = nullptr) {
  if (!format::CheckRegularFile(path).ok()) return;  // never open a FIFO: it would block
  std::ifstream in(path, std::ios::binary);
  std::error_code size_ec;
  const auto total = static_cast<int64_t>(fs::file_size(path, size_ec));
  // The chunk is read after the previous chunk's last key-length-minus-one bytes.
  const size_t overlap = kExternalDataKey.size() - 1;
  std::vector<char> buffer(overlap + (1 << 20));
  size_t kept = 0;
  int64_t done = 0;
  while (in) {
    in.read(buffer.data() + kept, static_cast<std::streamsize>(buffer.size() - overlap));
    const auto got = static_cast<size_t>(in.gcount());
    if (got > 0) h->Update(std::as_bytes(std::span(buffer.data() + kept, got)));
    if (mentions_location && !*mentions_location &&
        std::string_view(buffer.data(), kept + got).find(kExternalDataKey) != std::string::npos)
      *mentions_location = true;
    const size_t end = kept + got;
    kept = std::min(overlap, end);
    std::memmove(buffer.data(), buffer.data() + end - kept, kept);
    done += static_cast<int64_t>(got);
    if (progress) progress(path, done, size_ec ? done : total);
  }
}

}  // namespace

Result<std::string> SourceDigest(const fs::path& model, const HashProgress& progress) {
  ORTC_RETURN_IF_ERROR(format::CheckRegularFile(model));
  std::ifstream in(model, std::ios::binary);
  if (!in) return NoSuchFile(model.string() + ": no such file");
  format::Sha256 h;
  bool mentions_location = false;
  HashFile(model, &h, progress, &mentions_location);
  // Parsing a large model takes about a second per 400 MiB; the compile parses it again anyway.
  if (!mentions_location) return h.HexDigest();
  onnx::ModelProto proto;
  if (!proto.ParseFromIstream(&in)) return h.HexDigest();  // the compile will say what is wrong
  // External data files, each once, in order of first mention.
  std::vector<std::string> files;
  std::set<std::string> seen;
  auto note = [&](const onnx::TensorProto& t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return;
    for (const auto& kv : t.external_data())
      if (kv.key() == "location" && seen.insert(kv.value()).second) files.push_back(kv.value());
  };
  for (const auto& t : proto.graph().initializer()) note(t);
  for (const auto& n : proto.graph().node())
    for (const auto& a : n.attribute())
      if (a.has_t()) note(a.t());
  for (const auto& f : files) {
    h.Update("\n" + f + "\n");
    HashFile(model.parent_path() / f, &h, progress);
  }
  return h.HexDigest();
}

std::string MetadataValue(const onnx::ModelProto& model, const std::string& key) {
  for (const auto& p : model.metadata_props())
    if (p.key() == key) return p.value();
  return "";
}

Result<std::string> StaleReason(const fs::path& ctx_path, const fs::path& source,
                                const std::string& digest, const std::string& options,
                                const std::string& compiler) {
  if (!format::CheckRegularFile(ctx_path).ok())
    return std::string("no compiled model at " + ctx_path.string());
  std::ifstream in(ctx_path, std::ios::binary);
  if (!in) return std::string("no compiled model at " + ctx_path.string());
  onnx::ModelProto ctx;
  if (!ctx.ParseFromIstream(&in)) return std::string(ctx_path.string() + " is not an ONNX model");
  const std::string recorded = MetadataValue(ctx, kSourceDigestKey);
  if (recorded.empty())
    return std::string(ctx_path.string() + " records no source digest (compiled by an older ortc)");
  if (digest != recorded)
    return std::string("the source " + source.string() + " changed since the compile (sha256 " +
                       recorded.substr(0, 12) + "... then, " + digest.substr(0, 12) + "... now)");
  if (!options.empty() && MetadataValue(ctx, kCompileOptionsKey) != options)
    return std::string("the compile options differ from those recorded in " + ctx_path.string());
  if (!compiler.empty() && MetadataValue(ctx, kCompilerKey) != compiler)
    return std::string("compiled by " + MetadataValue(ctx, kCompilerKey) + ", not by " + compiler);
  // The binaries beside it must be the ones this ctx model was written with.
  for (const auto& n : ctx.graph().node()) {
    if (!format::IsEpContextNode(n)) continue;
    auto ep = format::EpContextNode::FromNodeProto(n);
    if (!ep.ok()) return std::string(ctx_path.string() + ": " + ep.status().message());
    if (ep->main_context != 1 || ep->embed_mode != 0) continue;
    const fs::path bin_path = ctx_path.parent_path() / ep->ep_cache_context;
    auto bin = format::ContextBinary::OpenFile(bin_path);
    if (!bin.ok()) return std::string(bin_path.string() + ": " + bin.status().message());
    if (format::NotesValue(ep->notes, "content_id") != (*bin)->content_id())
      return std::string(bin_path.string() + " is not the binary " + ctx_path.string() +
                         " was written with");
  }
  return std::string();
}

}  // namespace ortc::tools
