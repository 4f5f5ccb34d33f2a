// Checks a compiled CUDA model against its source: compiles it with `ortc compile --ep cuda,cpu`,
// runs every CUDA graph in the host emulator and compares with the CPU runtime's values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ortc/status.h"
#include "program_interpreter.h"

namespace ortc::test::cuda {

// Differences of one output over all its elements.
struct OutputError {
  std::string name;
  int64_t elements = 0;
  double max_abs = 0;      // max |emulated - reference|
  double max_rel = 0;      // max |emulated - reference| / |reference| over |reference| > 1e-3
  double ref_max_abs = 0;  // max |reference|, the scale of the output
  int64_t beyond = 0;      // elements with |e - r| > atol + rtol * |r|
  double rel_l2 = 0;       // ||emulated - reference|| / ||reference|| (finite elements)
};

struct GraphCheck {
  std::string graph;
  StepCounts counts;
  std::vector<OutputError> outputs;
  std::vector<OutputError> intermediates;  // in buffer order (roughly execution order)
};

struct ModelCheck {
  std::string skipped;                // why nothing was checked ("" when checked)
  int cuda_nodes = 0, cpu_nodes = 0;  // EPContext nodes in the ctx model
  std::vector<GraphCheck> graphs;
  double max_abs = 0, max_rel = 0, ref_max_abs = 0;
  double rel_l2 = 0;  // the largest relative L2 error of any output
  int64_t beyond = 0, elements = 0;
  // Intermediate values: arena buffers named after a float value of the source model (in its
  // own NCHW/plain layout), captured right after the step that writes them. Each is bounded by
  // atol + rtol * max|ref| of its tensor: deep inside a network an element near zero carries an
  // absolute error set by the magnitude of the values it was computed from (PP-OCRv4 rec at
  // fp32: 6.5e-4 on a tensor of magnitude 78, from summation order alone).
  int intermediates = 0;
  OutputError worst_intermediate;  // the one with the largest max_abs
  int64_t intermediates_beyond = 0;
};

struct CheckOptions {
  std::map<std::string, std::vector<int64_t>> input_shapes;  // every model input
  // Scalar inputs fixed at compile time (--input-value); not fed, and the reference runs the
  // source as the compiler sees it (the value folded in, an If on it resolved).
  std::map<std::string, std::string> input_values;
  // Integer inputs (token ids, masks) get uniform values in [lo, hi]; [0, 1] when not named.
  std::map<std::string, std::pair<int64_t, int64_t>> int_ranges;
  // Inputs given as values (an image for an OCR model) instead of random ones.
  std::map<std::string, Tensor> input_tensors;
  std::string precision = "fp32";  // fp32, tf32, fp16, bf16
  std::string extra_flags;         // appended to the compile command ("--provider-option ...")
  double rtol = 1e-4, atol = 1e-5;
  unsigned seed = 1;

  // The end-to-end tolerances of `precision` against the fp32 CPU runtime. fp32 differs only by
  // summation order; so does tf32 here, since the emulator's library references do not round
  // to TF32 (it checks the layout and the program, not tensor-core rounding). fp16 and bf16 store
  // weights and every activation rounded (fp16: 11-bit significand, relative step 2^-11; bf16:
  // 8-bit, 2^-8) and the rounding errors of successive layers add up: both bounds are 20 storage
  // steps (20 * 2^-11 ~ 1e-2 for fp16, 20 * 2^-8 ~ 8e-2 for bf16).
  static CheckOptions ForPrecision(const std::string& precision);
};

// `work` receives the compiled files. Returns skipped != "" when NVRTC is missing.
Result<ModelCheck> CheckCompiledModel(const std::filesystem::path& model,
                                      const std::filesystem::path& work, const CheckOptions& o);

// "fp16 max abs 1.2e-03 (scale 4.1) max rel ..." for test logs.
std::string Describe(const ModelCheck& c);

}  // namespace ortc::test::cuda
