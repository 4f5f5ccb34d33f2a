// Makes a generated CUDA translation unit plain host C++: CUDA keywords become nothing or
// `static`, and each block's threads run one after another, or as ucontext fibers when the
// kernel synchronizes the block. Included first by the host module's generated source.
#pragma once

#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
// Blocks run one after another, so a block's shared memory can be a function-local static.
#define __shared__ static

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// The kernel reads these; the scheduler sets them before it runs (or resumes) a thread.
static dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace ortc_shim {

struct Fiber {
  ucontext_t context;
  std::vector<char> stack;
  dim3 thread;
  bool done = false;
};

struct State {
  ucontext_t scheduler;
  std::vector<Fiber> fibers;
  void (*entry)(void**) = nullptr;
  void** args = nullptr;
  bool fibers_on = false;  // false: __syncthreads() in a kernel launched without block sync
  int current = -1;
  const char* error = nullptr;
};
static State state;

static void RunFiber(int index) {
  state.entry(state.args);
  state.fibers[index].done = true;
  // Returning resumes uc_link, the scheduler.
}

// Runs one block whose threads meet at barriers: every round resumes each live fiber until it
// reaches its next __syncthreads() or ends; a barrier some threads skip is reported.
static bool RunBlockAsFibers(unsigned threads) {
  constexpr size_t kStack = 64 * 1024;  // kernels keep only a few scalars on the stack
  state.fibers.resize(threads);
  for (unsigned t = 0; t < threads; ++t) {
    Fiber& f = state.fibers[t];
    f.stack.resize(kStack);
    f.done = false;
    f.thread.x = t % blockDim.x;
    f.thread.y = (t / blockDim.x) % blockDim.y;
    f.thread.z = t / (blockDim.x * blockDim.y);
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.data();
    f.context.uc_stack.ss_size = f.stack.size();
    f.context.uc_link = &state.scheduler;
    makecontext(&f.context, reinterpret_cast<void (*)()>(&RunFiber), 1, static_cast<int>(t));
  }
  for (;;) {
    unsigned live = 0, ended = 0;
    for (unsigned t = 0; t < threads; ++t) {
      Fiber& f = state.fibers[t];
      if (f.done) continue;
      state.current = static_cast<int>(t);
      threadIdx = f.thread;
      swapcontext(&state.scheduler, &f.context);
      if (f.done)
        ++ended;
      else
        ++live;
    }
    state.current = -1;
    if (live == 0) return true;
    if (ended != 0) {
      state.error = "__syncthreads() not reached by every thread of the block";
      return false;
    }
  }
}

}  // namespace ortc_shim

static inline void __syncthreads() {
  using ortc_shim::state;
  if (!state.fibers_on || state.current < 0) {
    state.error = "__syncthreads() in a kernel launched without uses_block_sync";
    return;
  }
  swapcontext(&state.fibers[state.current].context, &state.scheduler);
}

// Launches `entry` (a trampoline unpacking `args` into the kernel's parameters) over the grid.
// Returns 0, or 1 with `*error` set.
extern "C" __attribute__((visibility("default"))) int ortc_host_launch(
    void (*entry)(void**), void** args, const unsigned* grid, const unsigned* block, int block_sync,
    const char** error) {
  using ortc_shim::state;
  state.entry = entry;
  state.args = args;
  state.error = nullptr;
  state.fibers_on = block_sync != 0;
  gridDim = {grid[0], grid[1], grid[2]};
  blockDim = {block[0], block[1], block[2]};
  const unsigned threads = block[0] * block[1] * block[2];
  for (unsigned b = 0; b < grid[0] * grid[1] * grid[2] && !state.error; ++b) {
    blockIdx = {b % grid[0], (b / grid[0]) % grid[1], b / (grid[0] * grid[1])};
    if (state.fibers_on) {
      ortc_shim::RunBlockAsFibers(threads);
      continue;
    }
    for (unsigned t = 0; t < threads && !state.error; ++t) {
      threadIdx = {t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])};
      entry(args);
    }
  }
  state.fibers.clear();
  *error = state.error;
  return state.error ? 1 : 0;
}
