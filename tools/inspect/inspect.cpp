// Inspection of context binaries and EPContext models.
#include "inspect/inspect.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <map>
#include <optional>

#include "base/regular_file.h"
#include "base/shape_json.h"
#include "cli/report_records.h"
#include "format/context_binary_reader.h"
#include "format/ep_context.h"
#include "inspect/cuda_program.h"
#include "ortc/tensor.h"

namespace ortc::inspect {
namespace {

namespace fs = std::filesystem;

nlohmann::json Desc(const fb::TensorDesc* d) {
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;
  if (d->dims()) {
    for (uint32_t k = 0; k < d->dims()->size(); ++k) {
      dims.push_back(d->dims()->Get(k));
      symbols.push_back(d->symbols() && k < d->symbols()->size() ? d->symbols()->Get(k)->str()
                                                                 : "");
    }
  }
  return {{"name", d->name() ? d->name()->str() : ""},
          {"dtype", DataTypeName(static_cast<DataType>(d->dtype()))},
          {"shape", tools::ShapeJson(dims, symbols)}};
}

std::string SectionKindName(fb::SectionKind k) {
  switch (k) {
    case fb::SectionKind::Weights:
      return "weights";
    case fb::SectionKind::Programs:
      return "programs";
    case fb::SectionKind::Artefact:
      return "artefact";
    default:
      return "unknown";
  }
}

nlohmann::json DescribeBinary(const format::ContextBinary& bin) {
  const auto& m = bin.manifest();
  nlohmann::json j;
  j["format"] =
      std::to_string(bin.header().format_major) + "." + std::to_string(bin.header().format_minor);
  j["producer"] = m.producer() ? m.producer()->str() : "";
  j["backend"] = m.backend()->str();
  j["content_id"] = std::string(bin.content_id());
  j["file_bytes"] = bin.header().file_size;
  j["versions"] = nlohmann::json::object();
  if (m.backend_versions()) {
    for (const auto* kv : *m.backend_versions())
      j["versions"][kv->key()->str()] = kv->value()->str();
  }
  j["hardware_targets"] = nlohmann::json::array();
  if (m.hardware_targets()) {
    for (const auto* t : *m.hardware_targets()) j["hardware_targets"].push_back(t->str());
  }
  j["sections"] = nlohmann::json::array();
  for (const auto* s : *m.sections()) {
    j["sections"].push_back({{"kind", SectionKindName(s->kind())},
                             {"name", s->name() ? s->name()->str() : ""},
                             {"offset", s->offset()},
                             {"bytes", s->size()},
                             {"alignment", s->alignment()},
                             {"checksum", "ok"}});
  }
  uint64_t referenced_bytes = 0, references = 0, stored_bytes = 0;
  for (const auto* w : *m.weights()) stored_bytes += w->size();
  j["graphs"] = nlohmann::json::array();
  for (const auto* g : *m.graphs()) {
    nlohmann::json jg{{"name", g->name()->str()},
                      {"program_bytes", g->program_size()},
                      {"arena_bytes", g->arena_bytes()}};
    jg["inputs"] = nlohmann::json::array();
    jg["outputs"] = nlohmann::json::array();
    if (g->inputs()) {
      for (const auto* d : *g->inputs()) jg["inputs"].push_back(Desc(d));
    }
    if (g->outputs()) {
      for (const auto* d : *g->outputs()) jg["outputs"].push_back(Desc(d));
    }
    uint64_t graph_bytes = 0;
    if (g->weights()) {
      for (uint32_t w : *g->weights()) graph_bytes += m.weights()->Get(w)->size();
      references += g->weights()->size();
    }
    referenced_bytes += graph_bytes;
    jg["weights"] = {{"count", g->weights() ? g->weights()->size() : 0}, {"bytes", graph_bytes}};
    if (m.backend()->str() == "cuda") jg["cuda"] = DescribeCudaProgram(bin.ProgramBytes(*g));
    j["graphs"].push_back(jg);
  }
  // count and bytes: every graph's references (a weight two graphs use counts twice); the
  // unique figures: what the weights section stores, each distinct weight once.
  j["weights"] = {{"count", references},
                  {"bytes", referenced_bytes},
                  {"unique_count", m.weights()->size()},
                  {"unique_bytes", stored_bytes}};
  return j;
}

}  // namespace

nlohmann::json InspectBinaryFile(const fs::path& path) {
  nlohmann::json j = tools::FileJson(path);
  j["kind"] = "context_binary";
  auto file = format::MappedFile::Open(path);
  if (!file.ok()) {
    j["ok"] = false;
    j["error"] = ErrorJson(file.status());
    return j;
  }
  const auto hc = format::CheckHeader((*file)->bytes());
  j["header_state"] = std::string(format::HeaderStateName(hc.state));
  auto bin = format::ContextBinary::Open(*file);
  if (!bin.ok()) {
    j["ok"] = false;
    j["error"] = ErrorJson(bin.status());
    return j;
  }
  j.update(DescribeBinary(**bin));
  if (!hc.message.empty()) j["note"] = hc.message;
  j["ok"] = true;
  return j;
}

nlohmann::json InspectCtxModel(const fs::path& path) {
  nlohmann::json j = tools::FileJson(path);
  j.update({{"kind", "ctx_model"}, {"ok", true}});
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in) || !model.has_graph()) {
    j["ok"] = false;
    j["error"] = ErrorJson(InvalidGraph("not an ONNX model"));
    return j;
  }
  std::map<std::string, int> onnx_ops;
  j["ep_context_nodes"] = nlohmann::json::array();
  std::map<std::string, std::shared_ptr<const format::ContextBinary>> opened;
  std::optional<Status> file_error;  // the first binary that could not be read, if any
  std::map<std::string, std::string> main_bin_of_source;
  for (const auto& n : model.graph().node()) {
    if (!format::IsEpContextNode(n)) {
      onnx_ops[n.op_type()]++;
      continue;
    }
    nlohmann::json jn{{"name", n.name()}};
    auto ep = format::EpContextNode::FromNodeProto(n);
    if (!ep.ok()) {
      jn["status"] = ep.status().message();
      j["ok"] = false;
      j["ep_context_nodes"].push_back(jn);
      continue;
    }
    jn.update({{"source", ep->source},
               {"partition_name", ep->partition_name},
               {"main_context", ep->main_context},
               {"embed_mode", ep->embed_mode},
               {"ep_sdk_version", ep->ep_sdk_version},
               {"hardware_architecture", ep->hardware_architecture},
               {"max_size", ep->max_size},
               {"content_id", format::NotesValue(ep->notes, "content_id")}});
    for (const char* key : {"precision", "layout"}) {
      if (std::string v = format::NotesValue(ep->notes, key); !v.empty()) jn[key] = v;
    }
    std::shared_ptr<const format::ContextBinary> bin;
    std::string status = "ok";
    if (ep->embed_mode == 1 && ep->main_context == 1) {
      jn["ep_cache_context"] =
          "<embedded " + std::to_string(ep->ep_cache_context.size()) + " bytes>";
      auto b = format::ContextBinary::Open(format::MappedFile::FromBytes(ep->ep_cache_context));
      if (b.ok()) {
        bin = *b;
        opened["<embedded:" + ep->source + ">"] = bin;
        main_bin_of_source[ep->source] = "<embedded:" + ep->source + ">";
      } else {
        status = "embedded payload: " + b.status().message();
      }
    } else {
      std::string key =
          ep->main_context == 1 ? ep->ep_cache_context : main_bin_of_source[ep->source];
      if (ep->main_context == 1) {
        jn["ep_cache_context"] = ep->ep_cache_context;
        main_bin_of_source[ep->source] = key;
      }
      if (key.empty()) {
        status = "no main context node of source " + ep->source + " precedes this node";
      } else if (opened.count(key)) {
        bin = opened[key];
      } else {
        auto resolved = format::ResolveContextBinary(path.parent_path(), key, ep->name);
        auto b = resolved.ok()
                     ? format::ContextBinary::OpenFile(*resolved)
                     : Result<std::shared_ptr<const format::ContextBinary>>(resolved.status());
        if (b.ok()) {
          bin = *b;
          opened[key] = bin;
        } else {
          status = b.status().message();
          // A binary that is missing or unreadable is a file problem, as for run and check.
          const StatusCode c = b.status().code();
          if (!file_error && (c == StatusCode::kNoSuchFile || c == StatusCode::kIoError))
            file_error = b.status();
        }
      }
    }
    if (bin) {
      if (!bin->FindGraph(ep->partition_name)) {
        status = "graph '" + ep->partition_name + "' is not in the binary";
      } else if (format::NotesValue(ep->notes, "content_id") != bin->content_id()) {
        status = "stale pairing: the node expects content id " +
                 format::NotesValue(ep->notes, "content_id") + " but the binary is " +
                 std::string(bin->content_id());
      }
    }
    if (status != "ok") j["ok"] = false;
    jn["status"] = status;
    j["ep_context_nodes"].push_back(jn);
  }
  j["onnx_nodes"] = onnx_ops;
  j["binaries"] = nlohmann::json::array();
  for (const auto& [key, bin] : opened) {
    // Embedded payloads are keyed "<embedded:source>"; files by ep_cache_context, relative to
    // the ctx model's folder.
    auto d = key.starts_with("<embedded:") ? tools::EmbeddedFileJson()
                                           : tools::FileJson(path.parent_path() / key);
    d.update(DescribeBinary(*bin));
    j["binaries"].push_back(d);
  }
  if (!j["ok"].get<bool>() && !j.contains("error")) {
    j["error"] = ErrorJson(
        file_error
            ? Status(file_error->code(),
                     "one or more EPContext nodes failed their checks: " + file_error->message())
            : InvalidGraph("one or more EPContext nodes failed their checks"));
  }
  return j;
}

namespace {

nlohmann::json Failed(const fs::path& path, const Status& s) {
  nlohmann::json j = tools::FileJson(path);
  j.update({{"ok", false}, {"error", ErrorJson(s)}});
  return j;
}

}  // namespace

nlohmann::json InspectPath(const fs::path& path) {
  if (Status s = format::CheckRegularFile(path); !s.ok()) return Failed(path, s);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Failed(path, IoError("cannot open " + path.string()));
  char magic[8] = {};
  in.read(magic, sizeof magic);
  if (in.gcount() == sizeof magic && std::equal(magic, magic + 8, format::kMagic))
    return InspectBinaryFile(path);
  if (path.extension() == ".bin") return InspectBinaryFile(path);  // reports what is wrong with it
  return InspectCtxModel(path);
}

nlohmann::json ErrorJson(const Status& s) {
  return {{"code", std::string(StatusCodeName(s.code()))}, {"message", s.message()}};
}

Status ReportedError(const nlohmann::json& report) {
  if (!report.contains("error")) return Status::Ok();
  const auto& e = report["error"];
  const std::string name = e.value("code", "INVALID_GRAPH");
  StatusCode code = StatusCode::kInvalidGraph;
  for (StatusCode c :
       {StatusCode::kInvalidArgument, StatusCode::kNoSuchFile, StatusCode::kInvalidGraph,
        StatusCode::kNotImplemented, StatusCode::kEpFail, StatusCode::kModelRequiresCompilation,
        StatusCode::kIoError, StatusCode::kOutOfMemory})
    if (StatusCodeName(c) == name) code = c;
  return Status(code, e.value("message", "verification failed"));
}

}  // namespace ortc::inspect
