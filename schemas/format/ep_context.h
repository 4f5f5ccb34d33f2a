// The EPContext node, typed: one struct with ONNX Runtime's attribute names, used by the
// compiler's writer and the runtime's reader alike. Reading never invents a default for an
// attribute ortc needs: a missing or mistyped one is an error that names it.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ortc/status.h"

namespace ortc::format {

inline constexpr const char* kEpContextOpType = "EPContext";
inline constexpr const char* kEpContextDomain = "com.microsoft";

struct EpContextNode {
  std::string name;  // node name
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;

  int64_t main_context = 1;      // 1: this node names the context binary
  std::string ep_cache_context;  // embed_mode 0: path relative to the model; 1: payload
  int64_t embed_mode = 0;
  std::string ep_sdk_version;
  std::string onnx_model_filename;
  std::string hardware_architecture;
  std::string partition_name;  // the graph's name inside the context binary
  std::string source;          // which backend owns the node, e.g. "ortc.cpu"
  std::string notes;           // ortc: "content_id=<hex>;format=1.0"
  int64_t max_size = 0;        // ortc: the graph's static arena size in bytes

  onnx::NodeProto ToNodeProto() const;
  static Result<EpContextNode> FromNodeProto(const onnx::NodeProto& node);
};

bool IsEpContextNode(const onnx::NodeProto& node);

// Adds the com.microsoft opset import EPContext nodes need, unless the model has one.
void AddEpContextOpset(onnx::ModelProto* model);

// The backend that owns an EPContext node, from its `source` ("ortc.cpu" -> "cpu"); empty when
// the node is not ortc's.
std::string BackendOfSource(const std::string& source);

// notes helpers: "key=value;key=value".
std::string NotesValue(const std::string& notes, const std::string& key);

// The context binary an EPContext node names, resolved inside the model's folder dir: no
// absolute path, no `..`, no symlink leading out. Every reader (run, check, inspect) uses it.
Result<std::filesystem::path> ResolveContextBinary(const std::filesystem::path& dir,
                                                   const std::string& rel_text,
                                                   const std::string& node);

}  // namespace ortc::format
