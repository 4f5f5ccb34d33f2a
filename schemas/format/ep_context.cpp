// EPContext node <-> typed struct.
#include "format/ep_context.h"

#include <algorithm>
#include <map>

#include "base/path_inside.h"

namespace ortc::format {
namespace {

void SetInt(onnx::NodeProto* n, const char* name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void SetString(onnx::NodeProto* n, const char* name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

}  // namespace

bool IsEpContextNode(const onnx::NodeProto& node) {
  return node.op_type() == kEpContextOpType && node.domain() == kEpContextDomain;
}

onnx::NodeProto EpContextNode::ToNodeProto() const {
  onnx::NodeProto n;
  n.set_name(name);
  n.set_op_type(kEpContextOpType);
  n.set_domain(kEpContextDomain);
  for (const auto& i : inputs) n.add_input(i);
  for (const auto& o : outputs) n.add_output(o);
  SetInt(&n, "main_context", main_context);
  if (!ep_cache_context.empty()) SetString(&n, "ep_cache_context", ep_cache_context);
  SetInt(&n, "embed_mode", embed_mode);
  SetString(&n, "ep_sdk_version", ep_sdk_version);
  SetString(&n, "onnx_model_filename", onnx_model_filename);
  SetString(&n, "hardware_architecture", hardware_architecture);
  SetString(&n, "partition_name", partition_name);
  SetString(&n, "source", source);
  SetString(&n, "notes", notes);
  SetInt(&n, "max_size", max_size);
  return n;
}

Result<EpContextNode> EpContextNode::FromNodeProto(const onnx::NodeProto& node) {
  const std::string where = "EPContext node '" + node.name() + "'";
  if (!IsEpContextNode(node)) return InvalidGraph(where + " is not a com.microsoft EPContext node");
  std::map<std::string, const onnx::AttributeProto*> attrs;
  for (const auto& a : node.attribute()) attrs[a.name()] = &a;

  EpContextNode e;
  e.name = node.name();
  e.inputs.assign(node.input().begin(), node.input().end());
  e.outputs.assign(node.output().begin(), node.output().end());
  Status error;
  auto get_int = [&](const char* name, bool required, int64_t* out) {
    auto it = attrs.find(name);
    if (it == attrs.end()) {
      if (required && error.ok())
        error = InvalidGraph(where + ": required attribute '" + name + "' is missing");
      return;
    }
    if (it->second->type() != onnx::AttributeProto::INT) {
      if (error.ok())
        error = InvalidGraph(where + ": attribute '" + std::string(name) + "' must be an int");
      return;
    }
    *out = it->second->i();
  };
  auto get_string = [&](const char* name, bool required, std::string* out) {
    auto it = attrs.find(name);
    if (it == attrs.end()) {
      if (required && error.ok())
        error = InvalidGraph(where + ": required attribute '" + name + "' is missing");
      return;
    }
    if (it->second->type() != onnx::AttributeProto::STRING) {
      if (error.ok())
        error = InvalidGraph(where + ": attribute '" + std::string(name) + "' must be a string");
      return;
    }
    *out = it->second->s();
  };
  get_int("main_context", true, &e.main_context);
  get_int("embed_mode", true, &e.embed_mode);
  get_string("source", true, &e.source);
  get_string("partition_name", true, &e.partition_name);
  get_string("ep_cache_context", e.main_context == 1, &e.ep_cache_context);
  get_string("ep_sdk_version", false, &e.ep_sdk_version);
  get_string("onnx_model_filename", false, &e.onnx_model_filename);
  get_string("hardware_architecture", false, &e.hardware_architecture);
  get_string("notes", false, &e.notes);
  get_int("max_size", false, &e.max_size);
  if (!error.ok()) return error;
  if (e.main_context != 0 && e.main_context != 1) {
    return InvalidGraph(where + ": main_context must be 0 or 1, not " +
                        std::to_string(e.main_context));
  }
  if (e.embed_mode != 0 && e.embed_mode != 1) {
    return InvalidGraph(where + ": embed_mode must be 0 or 1, not " + std::to_string(e.embed_mode));
  }
  return e;
}

std::string BackendOfSource(const std::string& source) {
  return source.rfind("ortc.", 0) == 0 ? source.substr(5) : "";
}

std::string NotesValue(const std::string& notes, const std::string& key) {
  size_t pos = 0;
  while (pos <= notes.size()) {
    size_t end = notes.find(';', pos);
    if (end == std::string::npos) end = notes.size();
    const std::string item = notes.substr(pos, end - pos);
    const size_t eq = item.find('=');
    if (eq != std::string::npos && item.substr(0, eq) == key) return item.substr(eq + 1);
    pos = end + 1;
  }
  return "";
}

void AddEpContextOpset(onnx::ModelProto* model) {
  for (const auto& op : model->opset_import())
    if (op.domain() == kEpContextDomain) return;
  auto* op = model->add_opset_import();
  op->set_domain(kEpContextDomain);
  op->set_version(1);
}

Result<std::filesystem::path> ResolveContextBinary(const std::filesystem::path& dir,
                                                   const std::string& rel_text,
                                                   const std::string& node) {
  if (rel_text.empty())
    return InvalidGraph("EPContext node '" + node + "' names no context binary");
  if (std::filesystem::path(rel_text).is_absolute())
    return InvalidGraph("EPContext node '" + node + "': ep_cache_context '" + rel_text +
                        "' is absolute; it must be relative to the model");
  return ResolveInside(dir, rel_text, "EPContext node '" + node + "': ep_cache_context");
}

}  // namespace ortc::format
