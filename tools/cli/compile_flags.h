// The compile options `ortc compile` and `ortc verify` share: the same flags, help and parsing,
// so a verify compiles exactly what the matching compile would.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "compile/compile_driver.h"
#include "ortc/status.h"

namespace ortc::cli {

struct CompileFlags {
  std::string eps = "cpu";
  std::vector<std::string> provider_options, input_shapes, input_values;
  std::string precision;     // cuda:precision (and cpu:precision for bf16)
  std::string target_arch;   // cuda:target_arch
  std::string target_isa;    // cpu:target_isa
  std::string tuning_cache;  // cuda:tuning_cache (made absolute)
  int max_partitions = 0;
};

// Registers --ep, --provider-option, --input-shape (alias --shape when shape_alias),
// --input-value, --precision, --target-isa, --target-arch, --tuning-cache and --max-partitions
// on cmd.
void AddCompileFlags(CLI::App* cmd, CompileFlags* flags, bool shape_alias);

// Fills o's backends, provider options, fixed inputs and partition limit from the flags.
Status ApplyCompileFlags(const CompileFlags& flags, compile::CompileOptions* o);

}  // namespace ortc::cli
