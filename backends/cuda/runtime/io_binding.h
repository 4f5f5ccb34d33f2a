// Binding a run's device-resident inputs and outputs (a KV cache kept on the device between
// generation steps) straight into a program, instead of copying them device to device into the
// graph's own IO buffers and back: which of them may be bound, and the program's buffer
// addresses once they are. Pure logic over the program (no CUDA call), so it is tested on its
// own; graph_instance.cpp builds and captures the steps against the addresses.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "cuda_program_generated.h"

namespace ortc::cuda_rt {

namespace fbc = ortc::fb::cuda;
using DeviceAddress = uint64_t;  // a DeviceAddress, without the CUDA headers

// For each input / output of the program, the caller's device memory to bind (0: copy as
// before, through the graph's own buffer).
struct IoBinding {
  std::vector<DeviceAddress> inputs, outputs;
  bool empty() const;
  bool operator==(const IoBinding&) const = default;
};

// Where the program reads and writes each IO buffer: the first and last step touching it or a
// view of it (-1 when none does). Steps are not told apart as readers or writers, so this is
// conservative. `same_index` lists the (input, output) pairs whose one shared step is a kernel
// declaring that it reads the input's element i only to write the output's element i
// (KernelLaunch.same_index), with no other argument touching either: the last step reading the
// input is the first touching the output, and the input may be bound to the output's bytes.
struct IoTouches {
  std::vector<int> input_first, input_last, output_first, output_last;
  std::vector<std::pair<int, int>> same_index;
};
IoTouches FindIoTouches(const fbc::Program& program, const std::vector<int>& inputs,
                        const std::vector<int>& outputs);

// Of the device memory offered (`offered`: per input / output, 0 for host memory), what may be
// bound. Outputs are always bound, unless two of them overlap (the later one is copied). An input
// is bound unless its bytes overlap an output's and some step touching the input comes at or
// after the first step touching that output (the output's writes could overwrite what is still
// to be read): such an input is copied into the graph's buffer first, as before. The exception:
// an input at exactly the output's bytes, of the same size, that `touches.same_index` pairs
// with it (read and written element by element in place). Inputs are only read, so inputs may
// overlap each other.
// Writes into *chosen, reusing its vectors' memory (a run allocates nothing).
void ChooseBinding(const IoTouches& touches, const IoBinding& offered,
                   const std::vector<uint64_t>& input_bytes,
                   const std::vector<uint64_t>& output_bytes, IoBinding* chosen);

// The program's buffer addresses (`addresses`, one per buffer) with the bound IO buffers at the
// caller's memory and every view of them (Alias buffers, chained) following.
std::vector<DeviceAddress> BoundAddresses(const fbc::Program& program,
                                          const std::vector<DeviceAddress>& addresses,
                                          const std::vector<int>& inputs,
                                          const std::vector<int>& outputs,
                                          const IoBinding& binding);

}  // namespace ortc::cuda_rt
