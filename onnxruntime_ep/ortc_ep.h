// The ortc execution provider, as ONNX Runtime's plugin EP API sees it (OrtEp).
//
// GetCapability claims two kinds of work:
//   - EPContext nodes whose `source` is an ortc backend ("ortc.cpu", "ortc.cuda"): each is one
//     fused node, run by an ortc Session over that node (the binary is mapped once per process
//     by the runtime, across sessions);
//   - in a model without EPContext nodes, the groups ortc's partitioner forms for the backends
//     of `ep.ortc.backends` (default "cpu"): Compile compiles them with ortc's backends and,
//     when ONNX Runtime writes an EPContext model (its compile API, or ep.context_enable=1),
//     returns the EPContext nodes and writes the binaries beside that model.
// Every other node is left to ONNX Runtime.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "compile_through_ort.h"
#include "format/ep_context.h"
#include "ort_api.h"
#include "ortc/runtime.h"

namespace ortc::ort_ep {

inline constexpr const char* kEpName = "ortc";

// The session configuration the EP reads (ONNX Runtime's keys, and ep.ortc.* options).
struct EpConfig {
  CompileSettings compile;      // backends, embed mode, node name prefix (ctx path set per model)
  bool context_enable = false;  // ep.context_enable: ONNX Runtime writes an EPContext model
  bool compile_only = false;    // session.compile_only: the session never runs
  std::filesystem::path context_file_path;                          // ep.context_file_path
  VerdictPolicy policy = VerdictPolicy::kAllowPreferRecompilation;  // ep.ortc.require_optimal
  bool share_ep_contexts = true;                                    // ep.ortc.share_binaries
};

Result<EpConfig> ReadEpConfig(Ort::ConstSessionOptions options);

class OrtcEp : public OrtEp {
 public:
  OrtcEp(EpConfig config, const OrtLogger* logger);

 private:
  static const char* ORT_API_CALL GetNameImpl(const OrtEp* self) noexcept;
  static OrtStatus* ORT_API_CALL GetCapabilityImpl(OrtEp* self, const OrtGraph* graph,
                                                   OrtEpGraphSupportInfo* support) noexcept;
  static OrtStatus* ORT_API_CALL CompileImpl(OrtEp* self, const OrtGraph** graphs,
                                             const OrtNode** fused_nodes, size_t count,
                                             OrtNodeComputeInfo** infos,
                                             OrtNode** ep_context_nodes) noexcept;
  static void ORT_API_CALL ReleaseNodeComputeInfosImpl(OrtEp* self, OrtNodeComputeInfo** infos,
                                                       size_t count) noexcept;
  static const char* ORT_API_CALL GetCompatibilityInfoImpl(OrtEp* self,
                                                           const OrtGraph* graph) noexcept;
  static OrtStatus* ORT_API_CALL IsConcurrentRunSupportedImpl(OrtEp* self,
                                                              bool* supported) noexcept;

  Status DoGetCapability(Ort::ConstGraph graph, OrtEpGraphSupportInfo* support);
  Status DoCompile(const OrtGraph** graphs, const OrtNode** fused_nodes, size_t count,
                   OrtNodeComputeInfo** infos, OrtNode** ep_context_nodes);
  void Warn(const std::string& message) const;
  SessionOptions RuntimeOptions(const std::filesystem::path& ctx_path) const;
  std::filesystem::path CtxModelPath(Ort::ConstGraph graph) const;

  EpConfig config_;
  const OrtLogger* logger_;
  std::filesystem::path model_path_;  // of the graph seen by GetCapability
  // Main context nodes seen by GetCapability, by source: a node with main_context=0 runs with
  // the binary its main node names.
  std::map<std::string, format::EpContextNode> main_contexts_;
  std::string compatibility_info_;
};

}  // namespace ortc::ort_ep
