// Source models with rewritten ops on the CPU kernels (cli/source_models.h).
#include "cli/source_models.h"

#include "graph/model.h"

namespace ortc::cli {

Result<std::unique_ptr<Session>> OpenSourceModel(const std::filesystem::path& model,
                                                 const SessionOptions& options,
                                                 const graph::InputShapes& shapes) {
  // The common case pays nothing: only a model the runtime refuses for a missing kernel is
  // loaded again through the compiler's loader.
  auto plain = Session::Create(model, options);
  if (plain.ok() || plain.status().code() != StatusCode::kNotImplemented) return plain;
  graph::LoadOptions load;
  load.input_shapes = shapes;
  auto loaded = graph::LoadModelFromFile(model, load);
  if (!loaded.ok() || (*loaded)->expanded_nodes.empty()) return plain;
  const std::string bytes = (*loaded)->proto.SerializeAsString();
  SessionOptions rewritten = options;
  rewritten.context_file_path = model;  // external data stays relative to the model's folder
  return Session::CreateFromBuffer(bytes.data(), bytes.size(), rewritten);
}

}  // namespace ortc::cli
