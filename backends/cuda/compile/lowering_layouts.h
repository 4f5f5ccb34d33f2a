// Layout decisions of the CUDA lowering at tensor-core precisions: how each op reads a value,
// and which layouts an op or elementwise group with channels-last kernels reads and writes.
#pragma once

#include <set>
#include <utility>
#include <vector>

#include "cuda/compile/codegen/kernel_codegen.h"
#include "cuda/compile/lowering.h"

namespace ortc::backends::cuda {

// [N, C, H, W] with C == 1 or H * W == 1 (a global pool's result): NCHW and NHWC order the
// same bytes, so one buffer serves both layouts and no transpose is ever needed.
bool LayoutFree(const std::vector<int64_t>& dims);

// The rule every choice here keeps: an op with kernels for both layouts never costs a transpose
// more than its NCHW kernel would. Convolutions read NHWC; ops with channels-last kernels
// (pools, Concat, Pad, Resize, Transpose) read what exists and write what their readers need;
// elementwise groups read any mix of layouts (strides per input) and write each result in the
// layouts its readers need, both when they need both; everything else reads NCHW.
class LayoutPolicy {
 public:
  // `enabled`: the precision puts convolutions in NHWC; otherwise everything is NCHW.
  LayoutPolicy(const lowering::SubgraphIr& ir, const std::vector<Unit>& units, bool enabled);

  enum class Need { kNhwc, kNchw, kEither };
  // How op k reads 4-D value v.
  Need ReaderNeed(int k, int v) const;
  // Whether a reader of v other than the ops in `except` needs it in NCHW (a program output
  // counts as one) or in NHWC.
  bool NeedsNchw(int v, const std::set<int>& except) const;
  bool NeedsNhwc(int v, const std::set<int>& except) const;

  // Where values exist so far: per value, its buffer in that layout or -1.
  struct State {
    const std::vector<int>& nchw;
    const std::vector<int>& nhwc;
  };

  // Sets the input and output layouts of op k (SupportsLayouts ops; others stay NCHW). Inputs
  // are read in the layout most of them exist in, so the fewest get transposed; the output is
  // NHWC when no reader needs NCHW and a convolution reads it or the inputs were NHWC.
  void ChooseOpLayouts(int k, const State& s, codegen::OpDesc* d) const;

  // The layouts an elementwise group with ops `members` writes its 4-D result v in.
  struct Writes {
    bool nchw = false, nhwc = false;
  };
  Writes GroupOutput(int v, const std::set<int>& members, const std::vector<int>& inputs,
                     const State& s) const;
  // Whether most of the group's full-size inputs exist only as NHWC.
  bool LeansNhwc(const std::vector<int>& inputs, const State& s) const;

  bool enabled() const { return enabled_; }

 private:
  bool Needed(int v, Need need, const std::set<int>& except) const;

  const lowering::SubgraphIr& ir_;
  bool enabled_;
  std::vector<std::vector<int>> readers_;    // per value: the live ops reading it (each once)
  std::set<std::pair<int, int>> residuals_;  // (op, value): a convolution's residual z
};

}  // namespace ortc::backends::cuda
