// CPU lowering pass for QDQ models: DequantizeLinear -> Conv -> [Relu] -> QuantizeLinear, as
// quantization tools write convolutions, becomes one QLinearConv, which the runtime runs on
// oneDNN's int8 primitives (VNNI, AMX) instead of dequantizing, convolving in float and
// quantizing again.
#pragma once

#include "lowering/subgraph_ir.h"

namespace ortc::backends::cpu {

// Fuses each Conv whose input, weights (and bias) come from DequantizeLinear of constants with
// the layouts QLinearConv takes (int8 weights with zero point 0, scalar input and output
// quantization) and whose result only feeds a QuantizeLinear (optionally through a Relu the
// output's zero point makes redundant). Returns the count.
Result<int> FuseQdqConvolutions(lowering::SubgraphIr* ir);

}  // namespace ortc::backends::cpu
