// Compiled CUDA programs executed on the host and compared with the CPU runtime on the source
// model: small models per lowering family and the real PaddleOCR classifier, fp32/fp16/bf16.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "emulator_models.h"
#include "model_runner.h"
#include "test_data.h"

using ortc::test::TempDir;
using namespace ortc::test::cuda;

namespace {

// The tolerances of CheckOptions::ForPrecision are about 5x (fp16) and 2.4x (bf16) the largest
// output errors measured on these models.
CheckOptions Options(const std::string& precision,
                     std::map<std::string, std::vector<int64_t>> shapes) {
  CheckOptions o = CheckOptions::ForPrecision(precision);
  o.input_shapes = std::move(shapes);
  return o;
}

// Compiles and checks `model` at one precision; returns the check (nullopt when skipped).
std::optional<ModelCheck> CheckModel(const std::string& label, TestModel model,
                                     const std::string& precision, int expect_cpu_nodes = 0,
                                     const std::string& extra_flags = "") {
  TempDir dir;
  model.builder.Save(dir / "m.onnx");
  CheckOptions options = Options(precision, model.input_shapes);
  options.extra_flags = extra_flags;
  auto r = CheckCompiledModel(dir / "m.onnx", dir / "out", options);
  INFO(label << " " << precision);
  if (r.ok() && !r->skipped.empty()) {
    WARN("SKIP: " << r->skipped);
    return std::nullopt;
  }
  if (!r.ok()) FAIL(r.status().ToString());
  std::printf("[emulator] %s %s: %s\n", label.c_str(), precision.c_str(), Describe(*r).c_str());
  INFO(Describe(*r));
  CHECK(r->cuda_nodes >= 1);
  CHECK(r->cpu_nodes == expect_cpu_nodes);
  CHECK(r->elements > 0);
  CHECK(r->beyond == 0);
  CHECK(r->intermediates_beyond == 0);
  return *r;
}

int Launches(const ModelCheck& c) {
  int n = 0;
  for (const auto& g : c.graphs) n += g.counts.launches;
  return n;
}

int Convs(const ModelCheck& c) {
  int n = 0;
  for (const auto& g : c.graphs) n += g.counts.convs;
  return n;
}

const char* kLibraryGroupedConvs = "--provider-option cuda:grouped_conv=library";

}  // namespace

TEST_CASE("conv block: conv+bn+relu, residual, depthwise, ConvTranspose, dilation, pools",
          "[emulator]") {
  // tf32 keeps fp32 storage with NHWC convolutions (the emulator does not round to TF32).
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"})
    CheckModel("conv_block", ConvBlockModel(), p);
}

TEST_CASE("conv block with its depthwise convolution on cuDNN", "[emulator]") {
  for (const char* p : {"fp32", "fp16"})
    CheckModel("conv_block library", ConvBlockModel(), p, 0, kLibraryGroupedConvs);
}

TEST_CASE("mobilenet block: ReLU6 clips fused into the convolutions", "[emulator]") {
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"}) {
    // The clips are no kernels: the depthwise convolution is one generated kernel with its clip
    // inside, the 1x1 convolutions cuDNN calls with theirs; the tensor-core precisions add only
    // the program input's and output's layout change (and cast).
    const bool fp32 = std::string(p) == "fp32";
    if (auto c = CheckModel("relu6_block", Relu6BlockModel(), p)) {
      CHECK(Launches(*c) == (fp32 ? 1 : 3));
      CHECK(Convs(*c) == 2);
    }
    if (auto c = CheckModel("relu6_block library", Relu6BlockModel(), p, 0, kLibraryGroupedConvs)) {
      CHECK(Launches(*c) == (fp32 ? 0 : 2));
      CHECK(Convs(*c) == 3);
    }
  }
}

TEST_CASE("1-D grouped convolution with bias and Relu", "[emulator]") {
  for (const char* p : {"fp32", "fp16", "bf16"}) {
    if (auto c = CheckModel("conv1d", Conv1dModel(), p)) CHECK(Convs(*c) == 0);
    if (auto c = CheckModel("conv1d library", Conv1dModel(), p, 0, kLibraryGroupedConvs))
      CHECK(Convs(*c) == 1);
  }
}

TEST_CASE("generated grouped convolutions: multiplier, stride, dilation, residual, clip",
          "[emulator]") {
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"}) {
    // All three convolutions are generated kernels (1, 1 and 4 channels per group).
    if (auto c = CheckModel("grouped_convs", GroupedConvsModel(), p)) CHECK(Convs(*c) == 0);
  }
}

TEST_CASE("matmul block: gelu epilogue, layernorm, attention, views, gemm transB and alpha/beta",
          "[emulator]") {
  for (const char* p : {"fp32", "fp16", "bf16"}) CheckModel("matmul_block", MatmulBlockModel(), p);
}

TEST_CASE("one row through a merged projection: split views, a unit Transpose, a zero Pad",
          "[emulator]") {
  for (const char* p : {"fp32", "fp16", "bf16"}) {
    auto c = CheckModel("decode_row", DecodeRowModel(), p);
    // At fp32, the GEMM, then Softmax, ReduceSum and Relu: the Split, Transpose and Pad move
    // nothing (fp16 and bf16 add the casts at the program's edges).
    if (c && std::string(p) == "fp32") CHECK(Launches(*c) == 3);
  }
}

TEST_CASE(
    "a decode step appending to float caches: the Concat converts, the attention reads "
    "float keys and values",
    "[emulator]") {
  for (const char* p : {"fp32", "fp16", "bf16"}) {
    auto c = CheckModel("cache_append", CacheAppendModel(), p);
    // After the merged projection's GEMM: the two appends (writing the outputs: no Identity
    // copy; independent, so one launch), the attention and the ReduceSum; fp16 and bf16 add
    // casts of x and q in (one launch), of the narrowed keys for the ReduceSum, and of y and
    // key_sum out (one launch), but none of a cache.
    if (c) CHECK(Launches(*c) == (std::string(p) == "fp32" ? 3 : 6));
  }
}

TEST_CASE("average pool, nearest resize, max pool, pointwise conv, sigmoid", "[emulator]") {
  for (const char* p : {"fp32", "fp16", "bf16"}) CheckModel("pool_resize", PoolResizeModel(), p);
}

TEST_CASE("pooling between NHWC convolutions: channels-last pool kernels, global pools",
          "[emulator]") {
  // At tf32/fp16/bf16 the pools read and write NHWC (the GlobalMaxPool and the last
  // AveragePool, program outputs at tf32, write NCHW); at fp32 everything is NCHW.
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"})
    CheckModel("nhwc_pool", NhwcPoolModel(), p);
}

TEST_CASE("global pools over many NHWC positions: runs of positions, then their merge",
          "[emulator]") {
  // fp32 pools NCHW in one step; tf32/fp16/bf16 read NHWC and split 1600 positions into runs.
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"})
    CheckModel("split_pool", SplitPoolModel(), p);
}

TEST_CASE("squeeze-and-excitation and per-channel constants on NHWC data", "[emulator]") {
  // At tf32/fp16/bf16 the gate [N, C, 1, 1] and the channel constants broadcast over NHWC
  // activations inside the groups (no transpose); fp32 runs the same groups NCHW.
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"}) CheckModel("se_block", SeBlockModel(), p);
}

TEST_CASE("FPN: Resize and Concat on NHWC data", "[emulator]") {
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"}) CheckModel("fpn", FpnModel(), p);
}

TEST_CASE("Pad between convolutions on NHWC data", "[emulator]") {
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"}) CheckModel("pad_conv", PadConvModel(), p);
}

TEST_CASE("program input and outputs: casts that change the layout", "[emulator]") {
  // fp16/bf16: the input's cast writes NHWC and NCHW copies, the outputs' casts read NHWC.
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"})
    CheckModel("input_layouts", InputLayoutsModel(), p);
}

TEST_CASE("conv then Add of a weight broadcast along W or H is not a channel bias", "[emulator]") {
  // [C] and [C, 1] broadcast along W and H of the [1, 8, 8, 8] output: the Add stays a kernel.
  // Only [C, 1, 1] is a per-channel bias that cuDNN's call can take.
  if (auto c = CheckModel("conv_add_w", ConvAddBroadcastModel({8}), "fp32"))
    CHECK(Launches(*c) == 1);
  if (auto c = CheckModel("conv_add_h", ConvAddBroadcastModel({8, 1}), "fp32"))
    CHECK(Launches(*c) == 1);
  if (auto c = CheckModel("conv_add_c", ConvAddBroadcastModel({8, 1, 1}), "fp32"))
    CHECK(Launches(*c) == 0);
}

TEST_CASE("ConvTranspose: pads, stride, output_padding, groups, dilation", "[emulator]") {
  for (const char* p : {"fp32", "fp16", "bf16"})
    CheckModel("conv_transpose", ConvTransposeModel(), p);
}

TEST_CASE("a Gemm CUDA refuses runs on the CPU between two CUDA graphs", "[emulator]") {
  // Gemm with a vector C and beta != 1: capability used to claim it and compile then failed.
  if (auto c = CheckModel("gemm_beta_mixed", GemmBetaModel(), "fp32", 1)) {
    CHECK(c->cuda_nodes == 2);
    CHECK(c->graphs.size() == 2);
  }
}

TEST_CASE("head: tapped conv output, flatten of NHWC data, gemm, left-broadcast matmul",
          "[emulator]") {
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"}) CheckModel("head", HeadModel(), p);
}

namespace {

// A real model from scripts/fetch_test_models.sh, or "" after a visible skip.
std::filesystem::path RealModel(const std::string& name) {
  const auto path = std::filesystem::path(ORTC_TEST_MODELS_DIR) / "ocr" / name;
  if (std::filesystem::exists(path)) return path;
  WARN("SKIP: real models not fetched (scripts/fetch_test_models.sh): " << path.string());
  return {};
}

std::optional<ModelCheck> CheckReal(const std::filesystem::path& model, const char* precision,
                                    std::map<std::string, std::vector<int64_t>> shapes) {
  TempDir dir;
  auto r = CheckCompiledModel(model, dir / "out", Options(precision, std::move(shapes)));
  INFO(model.filename().string() << " " << precision);
  if (r.ok() && !r->skipped.empty()) {
    WARN("SKIP: " << r->skipped);
    return std::nullopt;
  }
  if (!r.ok()) FAIL(r.status().ToString());
  std::printf("[emulator] %s %s: %s\n", model.stem().c_str(), precision, Describe(*r).c_str());
  CHECK(r->cuda_nodes >= 1);
  CHECK(r->elements > 0);
  CHECK(r->beyond == 0);
  return *r;
}

}  // namespace

// Real models: one test case per model and precision keeps each well under a minute.

namespace {

// The classifier: CUDA takes the convolutional trunk, and the head too once its shape
// arithmetic folds; every intermediate is bounded.
void CheckClassifier(const char* precision) {
  const auto model = RealModel("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  if (model.empty()) return;
  if (auto r = CheckReal(model, precision, {{"x", {1, 3, 48, 192}}})) {
    INFO(Describe(*r));
    CHECK(r->cuda_nodes == 1);
    CHECK(r->intermediates > 0);
    CHECK(r->intermediates_beyond == 0);
  }
}

// The recognizer's intermediates are bounded at fp32 only: at fp16/bf16 the storage error in
// its attention blocks grows layer by layer to ~10% of a tensor's magnitude (the squares of
// LayerNorm's centred values), while the output probabilities stay within the bound.
void CheckRecognizer(const char* precision) {
  const auto model = RealModel("ch_PP-OCRv4_rec_infer.onnx");
  if (model.empty()) return;
  if (auto r = CheckReal(model, precision, {{"x", {1, 3, 48, 160}}})) {
    INFO(Describe(*r));
    CHECK(r->intermediates > 50);
    if (std::string(precision) == "fp32") CHECK(r->intermediates_beyond == 0);
  }
}

// On random input the detector's probability map saturates near 0, so its intermediates
// (convolutions, ConvTranspose, Resize) carry the check; NHWC buffers are read back in NCHW
// order, so activations that stay channels-last at fp16/bf16 are compared too.
void CheckDetector(const char* precision) {
  const auto model = RealModel("ch_PP-OCRv4_det_infer.onnx");
  if (model.empty()) return;
  if (auto r = CheckReal(model, precision, {{"x", {1, 3, 64, 64}}})) {
    INFO(Describe(*r));
    CHECK(r->intermediates > 50);
    CHECK(r->intermediates_beyond == 0);
  }
}

}  // namespace

TEST_CASE("PaddleOCR classifier fp32", "[emulator][real]") {
  CheckClassifier("fp32");
}
TEST_CASE("PaddleOCR classifier fp16", "[emulator][real]") {
  CheckClassifier("fp16");
}
TEST_CASE("PaddleOCR classifier bf16", "[emulator][real]") {
  CheckClassifier("bf16");
}
TEST_CASE("PaddleOCR v4 recognizer fp32", "[emulator][real]") {
  CheckRecognizer("fp32");
}
TEST_CASE("PaddleOCR v4 recognizer fp16", "[emulator][real]") {
  CheckRecognizer("fp16");
}
TEST_CASE("PaddleOCR v4 recognizer bf16", "[emulator][real]") {
  CheckRecognizer("bf16");
}
TEST_CASE("PaddleOCR v4 detector fp32", "[emulator][real]") {
  CheckDetector("fp32");
}
TEST_CASE("PaddleOCR v4 detector fp16", "[emulator][real]") {
  CheckDetector("fp16");
}
TEST_CASE("PaddleOCR v4 detector bf16", "[emulator][real]") {
  CheckDetector("bf16");
}
