// CPU lowering pass for `--target-isa`: each float convolution's constant weights are reordered
// at compile time into the blocked layout oneDNN's primitive reads on that ISA and stored so in
// the binary, with oneDNN's description of the layout. The runtime then reads them in place
// (no reorder at the first run, no second copy in memory); on a CPU that picks another layout it
// reorders them once from the stored one, so a packed binary still runs anywhere.
#pragma once

#include <string>

#include "lowering/subgraph_ir.h"

namespace ortc::backends::cpu {

// isa: "portable" (nothing packed), "native" (this machine's best) or one of
// exec::LimitOneDnnIsa's names. Returns the number of convolutions packed.
Result<int> PackConvWeightsForIsa(lowering::SubgraphIr* ir, const std::string& isa);

// The ISA name a binary packed with `isa` records ("native" resolved; "" for portable).
Result<std::string> ResolveTargetIsa(const std::string& isa);

}  // namespace ortc::backends::cpu
