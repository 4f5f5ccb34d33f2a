// The GPU smoke test's kernel, compiled to PTX at build time: y = x + 1 over 4 floats.
extern "C" __global__ void add_one(const float* x, float* y) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 4) y[i] = x[i] + 1.0f;
}
