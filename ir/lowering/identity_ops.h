// Ops that return their input: at the shapes the compiler knows, some movement ops move nothing
// (a Pad by zero rows, a Reshape or Expand to the shape they read, a Slice of everything). Passes
// treat their output as their input, so the ops around them fuse as if they were not there.
#pragma once

#include "lowering/subgraph_ir.h"

namespace ortc::lowering {

// The value `op` returns unchanged (its first input), or -1: an Identity; a Cast to the type it
// reads; a Reshape, Flatten, Squeeze, Unsqueeze, Expand or Tile whose output has its input's
// static shape; a Slice of the whole input with positive steps; a Pad whose pads are constant
// zeros; a Transpose that keeps the order of every axis longer than 1; a Concat of one input.
// Only standard-domain ops with one output of the input's type and static shape qualify.
int ReturnedInput(const SubgraphIr& ir, const IrOp& op);

// Rewrites every Transpose that keeps the order of the axes longer than 1 (a decode step's
// [1, 1, heads, d] -> [1, heads, 1, d]) as a Reshape to its static output shape: the bytes stay
// where they are, so a backend can read the result as a view. Returns how many.
int TransposesToReshapes(SubgraphIr* ir);

// A program output that an op of ReturnedInput's kind copies from an intermediate value (an
// exporter's Identity in front of a graph output: `present = Identity(concat)`) is written by
// that value's producer instead, and the value's readers read the output: a backend then writes
// the tensor once, into the output, rather than into a buffer of its own and again by a copy.
// Returns how many outputs moved to their source.
int WriteOutputsAtSource(SubgraphIr* ir);

}  // namespace ortc::lowering
