// The CUDA backend's side of tuning: which tuning caches fit a compile, and the choices a cache
// can make. Today one kind: generated GroupedConv kernel or cuDNN call for a grouped
// convolution (lowering_grouped_conv.h).
#pragma once

#include <string>

#include "backend.h"
#include "cuda/compile/options.h"
#include "tuning_cache.h"

namespace ortc::backends::cuda {

// The candidates of a grouped convolution.
inline constexpr char kChoiceGenerated[] = "generated";
inline constexpr char kChoiceLibrary[] = "library";

// Why `cache` does not fit a compile with these options ("" when it does): another backend or
// format version, measured on an architecture the compile does not target, or with a cuDNN of
// another major version than the compile plans against (the binary requires that major; the
// runtime's cuDNN within it is what the measurement timed, so the cache names its full version).
std::string CacheMismatch(const TuningCache& cache, const CudaOptions& options);

// Reads the cache named by options->tuning_cache into options->tuned_choices, or records in
// options->tuning_cache_ignored why it does not fit. A malformed file is an error.
Status ApplyTuningCache(CudaOptions* options);

// The provider option sets `ortc tune` compiles: every grouped convolution generated, then every
// one on cuDNN.
std::vector<ProviderOptions> CudaTuningVariants();

}  // namespace ortc::backends::cuda
