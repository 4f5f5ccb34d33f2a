// The compiler's side of the plugin ABI: a Backend (backend.h) that does everything through an
// OrtcBackendCompiler table. Every backend the compiler uses is one of these: the in-tree ones
// over their statically registered tables, out-of-tree ones over a table from a plugin library.
#pragma once

#include <memory>
#include <string>

#include "backend.h"
#include "plugin_abi/ortc_backend_plugin.h"

namespace ortc::backends::abi {

class AbiBackend final : public Backend {
 public:
  // `keep_alive` holds whatever the table lives in (a plugin library); may be null.
  AbiBackend(OrtcBackendCompiler* table, std::shared_ptr<void> keep_alive);

  std::string_view name() const override { return name_; }
  std::string_view ep_source() const override { return source_; }
  std::string_view status_line() const override { return status_; }
  bool is_fallback() const override { return table_->flags & ORTC_COMPILER_FALLBACK; }
  bool can_compile() const override { return table_->flags & ORTC_COMPILER_CAN_COMPILE; }
  std::vector<NodeSupport> Capability(const graph::Graph& g) const override;
  Status ValidateOptions(const ProviderOptions& options) const override;
  Result<BinaryIdentity> Identity(const ProviderOptions& options) const override;
  Result<CompiledGraph> Compile(const graph::Model& model, const Subgraph& subgraph,
                                const ProviderOptions& options,
                                const CompileProgress& progress) const override;
  std::vector<ProviderOptions> TuningVariants() const override;
  std::string OptionsWarning(const ProviderOptions& options) const override;

  const std::string& version() const { return version_; }

 private:
  Status StatusOf(OrtcPluginStatus s) const;

  OrtcBackendCompiler* table_;
  std::shared_ptr<void> keep_alive_;
  std::string name_, source_, status_, version_;
};

// Checks a table before the host trusts it: ABI version and size, name, ep_source
// ("ortc." + name) and the functions every backend must have. `where` names its origin.
Status CheckCompilerTable(const OrtcBackendCompiler* table, const std::string& where);

}  // namespace ortc::backends::abi
