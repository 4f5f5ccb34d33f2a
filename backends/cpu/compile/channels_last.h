// CPU lowering pass that keeps image tensors channels-last (NHWC) between convolutions.
// oneDNN's fastest float convolutions on x86 read and write NHWC; in NCHW every convolution
// pays two layout copies. This pass marks each float 2-D convolution "channels_last" (its
// input, residual and output are NHWC; weights stay OIHW) and carries the layout through the
// elementwise ops between them; a Transpose is inserted only where an NCHW reader (or a
// program output) meets an NHWC value, or the reverse.
#pragma once

#include "lowering/subgraph_ir.h"

namespace ortc::backends::cpu {

struct ChannelsLastCounts {
  int convolutions = 0;  // convolutions switched to NHWC
  int pools = 0;         // poolings reading NHWC
  int concats = 0;       // channel Concats done on NHWC's last axis
  int resizes = 0;       // Resizes of NHWC tensors
  int transposes = 0;    // layout changes inserted
  int reshapes = 0;      // per-channel operands re-declared channels-last by a Reshape
};

Result<ChannelsLastCounts> UseChannelsLast(lowering::SubgraphIr* ir);

}  // namespace ortc::backends::cpu
