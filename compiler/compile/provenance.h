// The compile side of the provenance every ctx model records (schemas/bundle_manifest.md): the
// options that decide a compile's outputs. Digests and staleness checks live with the formats
// (schemas/bundle_check/provenance.h), shared with `ortc check --source`.
#pragma once

#include <string>

#include "bundle_check/provenance.h"
#include "compile/compile_driver.h"

namespace ortc::compile {

using tools::kCompileOptionsKey;
using tools::kCompilerKey;
using tools::kSourceDigestKey;
using tools::SourceDigest;
using tools::StaleReason;

// The options that decide a compile's outputs, as canonical JSON (keys sorted; progress, output
// paths and checks that only refuse are left out).
std::string CompileOptionsJson(const CompileOptions& o);

}  // namespace ortc::compile
