// Inputs that used to crash, hang or abort the tools (found by mutation testing), each now a
// clear error with the exit code of its cause. Every command runs under `timeout`, so a hang
// fails the test as exit 124 instead of stalling it; a crash shows as -1 (killed by a signal) or
// 134 (abort).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>

#include "model_builder.h"
#include "run_ortc.h"

using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::RunOrtcWith;
using ortc::test::RunResult;
using ortc::test::TempDir;
namespace fs = std::filesystem;

namespace {

RunResult Ortc(const std::string& args) {
  return RunOrtcWith("timeout 60", args, true);
}

std::string Save(const TempDir& dir, const std::string& name, const ModelBuilder& m) {
  const std::string path = (dir / name).string();
  m.Save(path);
  return path;
}

// A [1, 4] Relu model, compiled into dir/bundle/.
std::string CompiledRelu(const TempDir& dir) {
  ModelBuilder m;
  m.Input("x", {1, 4}).Node("Relu", {"x"}, {"y"}).Output("y");
  const std::string model = Save(dir, "relu.onnx", m);
  REQUIRE(Ortc("compile " + model + " -o " + (dir / "bundle").string() + "/ -q").exit_code == 0);
  return (dir / "bundle" / "relu_ctx.onnx").string();
}

}  // namespace

TEST_CASE("a node without a required input is an invalid model in run, not a crash",
          "[cli][hostile]") {
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {2}).Node("Relu", {}, {"y"}).Output("y");
  const std::string model = Save(dir, "relu_no_input.onnx", m);
  auto r = Ortc("run " + model);
  INFO(r.out);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out, Catch::Contains("input 0 is required"));
  CHECK(Ortc("compile " + model + " -o " + (dir / "c").string() + "/ -q").exit_code == 3);
}

TEST_CASE("run refuses plain graphs the compiler refuses: unset, cyclic and doubly written values",
          "[cli][hostile]") {
  // They used to fail mid-run as a missing feed (exit 2), or run with the last writer winning.
  TempDir dir;
  struct Case {
    std::string name, expect;
    ModelBuilder model;
  };
  std::vector<Case> cases(4);
  cases[0] = {"ghost", "input 'ghost' is produced by no earlier node", {}};
  cases[0].model.Input("x", {2}).Node("Add", {"x", "ghost"}, {"y"}).Output("y");
  cases[1] = {"cycle", "input 'z' is produced by no earlier node", {}};
  cases[1].model.Input("x", {2}).Node("Relu", {"z"}, {"y"}).Node("Relu", {"y"}, {"z"}).Output("y");
  cases[2] = {"twice", "output 'y' is already produced", {}};
  cases[2].model.Input("x", {2}).Node("Relu", {"x"}, {"y"}).Node("Neg", {"x"}, {"y"}).Output("y");
  // fuzz_model (UBSan): a Constant without outputs was read at output 0.
  cases[3] = {"constant", "must have exactly one output", {}};
  cases[3].model.Input("x", {2}).Node("Constant", {}, {}, {Attr("value_float", 1.f)});
  cases[3].model.Node("Relu", {"x"}, {"y"}).Output("y");
  for (const auto& c : cases) {
    const std::string model = Save(dir, c.name + ".onnx", c.model);
    auto r = Ortc("run " + model);
    INFO(c.name << "\n" << r.out);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.out, Catch::Contains(c.expect));
    CHECK(Ortc("compile " + model + " -o " + (dir / c.name).string() + "/ -q").exit_code == 3);
  }
}

TEST_CASE(
    "BatchNormalization parameters shorter than the channels are an error, not a read past "
    "them",
    "[cli][hostile]") {
  // Found by fuzz_model (ASan: heap-buffer-overflow reading a 16-element bias on 32 channels).
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {1, 32, 2, 2})
      .Initializer("s", {32}, std::vector<float>(32, 1.f))
      .Initializer("b16", {16}, std::vector<float>(16, 0.f))
      .Initializer("mean", {32}, std::vector<float>(32, 0.f))
      .Initializer("var", {32}, std::vector<float>(32, 1.f))
      .Node("BatchNormalization", {"x", "s", "b16", "mean", "var"}, {"y"})
      .Output("y");
  auto r = Ortc("run " + Save(dir, "bn.onnx", m));
  INFO(r.out);
  CHECK(r.exit_code == 2);  // a kernel's refusal, as for MatMul's mismatched dimensions
  CHECK_THAT(r.out, Catch::Contains("must each have C = 32 elements; one has 16"));
}

TEST_CASE("Conv and ConvTranspose refuse kernel shapes, weights and biases that do not fit",
          "[cli][hostile]") {
  // A kernel_shape of 3x3 over 1x1 weights used to read 9x past the weights, and a bias shorter
  // than the output channels past the bias (outputs of 1e14-1e31 from whatever memory
  // followed), in run and in a compiled bundle alike; ConvTranspose's attributes and weight
  // rank were indexed unchecked.
  TempDir dir;
  struct Case {
    std::string name, op, expect;
    std::vector<int64_t> w_dims;
    std::vector<Attr> attrs;
    int64_t bias = 0;  // elements of a bias input, 0 for none
  };
  const std::vector<Case> cases = {
      {"conv_kernel",
       "Conv",
       "kernel_shape does not match the weights' spatial shape",
       {4, 4, 1, 1},
       {Attr("kernel_shape", std::vector<int64_t>{3, 3})}},
      {"convt_kernel",
       "ConvTranspose",
       "kernel_shape does not match the weights' spatial shape",
       {4, 4, 1, 1},
       {Attr("kernel_shape", std::vector<int64_t>{3, 3})}},
      {"convt_rank", "ConvTranspose", "weights must have the input's rank", {4}, {}},
      {"convt_strides",
       "ConvTranspose",
       "do not match the spatial rank",
       {4, 4, 1, 1},
       {Attr("strides", std::vector<int64_t>{2})}},
      {"convt_group",
       "ConvTranspose",
       "channels do not match the weights and groups",
       {4, 4, 1, 1},
       {Attr("group", int64_t{0})}},
      {"convt_output_shape",
       "ConvTranspose",
       "do not match the spatial rank",
       {4, 4, 1, 1},
       {Attr("output_shape", std::vector<int64_t>{8})}},
      {"conv_bias", "Conv", "Conv bias must have 64 elements", {64, 4, 3, 3}, {}, 2},
      {"convt_bias",
       "ConvTranspose",
       "ConvTranspose bias must have 4 elements",
       {4, 4, 1, 1},
       {},
       2},
  };
  for (const Case& c : cases) {
    int64_t w_elements = 1;
    for (int64_t d : c.w_dims) w_elements *= d;
    ModelBuilder m;
    m.Input("x", {1, 4, 8, 8}).Initializer("w", c.w_dims, std::vector<float>(w_elements, 1.f));
    std::vector<std::string> inputs = {"x", "w"};
    if (c.bias > 0) {
      m.Initializer("b", {c.bias}, std::vector<float>(c.bias, 1.f));
      inputs.push_back("b");
    }
    m.Node(c.op, inputs, {"y"}, c.attrs).Output("y");
    const std::string model = Save(dir, c.name + ".onnx", m);
    auto r = Ortc("run " + model);
    INFO(c.name << "\n" << r.out);
    CHECK(r.exit_code == 2);  // a kernel's refusal
    CHECK_THAT(r.out, Catch::Contains(c.expect));
    // Compiled, where the compiler takes it, the bundle refuses the same way.
    const std::string out = (dir / c.name).string() + "/";
    if (Ortc("compile " + model + " -o " + out + " -q").exit_code == 0) {
      auto compiled = Ortc("run " + out + c.name + "_ctx.onnx");
      INFO(compiled.out);
      CHECK(compiled.exit_code == 2);
      CHECK_THAT(compiled.out, Catch::Contains(c.expect));
    }
  }
}

TEST_CASE(
    "normalisation, LRN, pooling, block layout, EyeLike and Det kernels refuse what does not fit",
    "[cli][hostile]") {
  // InstanceNormalization read a 3-element scale on 64 channels past its end (outputs of
  // 1e31); GroupNormalization divided by num_groups unchecked; the others indexed a rank-1
  // input's second dimension or gave empty results instead of errors.
  TempDir dir;
  struct Case {
    std::string name, op, expect;
    std::vector<int64_t> x_dims;
    std::vector<Attr> attrs;
    int64_t params = 0;  // elements of scale and bias inputs, 0 for none
    int opset = 17;
  };
  const std::vector<Case> cases = {
      {"instnorm",
       "InstanceNormalization",
       "scale and B must each have C = 64 elements",
       {1, 64, 4, 4},
       {},
       3},
      {"groupnorm",
       "GroupNormalization",
       "scale and bias must each have C = 64 or num_groups = 4",
       {1, 64, 4, 4},
       {Attr("num_groups", int64_t{4})},
       3,
       18},
      {"groupnorm_zero",
       "GroupNormalization",
       "num_groups must divide the 64 channels, got 0",
       {1, 64, 4, 4},
       {Attr("num_groups", int64_t{0})},
       64,
       18},
      {"lrn", "LRN", "LRN size must be at least 1", {1, 4, 8, 8}, {Attr("size", int64_t{0})}},
      {"depth_to_space",
       "DepthToSpace",
       "must be a multiple of blocksize^2",
       {1, 4, 2, 2},
       {Attr("blocksize", int64_t{3})}},
      {"space_to_depth",
       "SpaceToDepth",
       "must be multiples of blocksize",
       {1, 4, 5, 4},
       {Attr("blocksize", int64_t{2})}},
      {"global_pool", "GlobalAveragePool", "needs an input of rank >= 2", {4}, {}},
      {"eye_like", "EyeLike", "EyeLike needs a 2-D input", {4}, {}},  // fuzz_model, UBSan
      {"det_rank1", "Det", "Det needs square matrices", {4}, {}},     // fuzz_model, UBSan
      {"det_not_square", "Det", "Det needs square matrices", {2, 3}, {}},
  };
  for (const Case& c : cases) {
    ModelBuilder m(c.opset);
    m.Input("x", c.x_dims);
    std::vector<std::string> inputs = {"x"};
    if (c.params > 0) {
      m.Initializer("s", {c.params}, std::vector<float>(c.params, 1.f));
      m.Initializer("b", {c.params}, std::vector<float>(c.params, 0.f));
      inputs.insert(inputs.end(), {"s", "b"});
    }
    m.Node(c.op, inputs, {"y"}, c.attrs).Output("y");
    auto r = Ortc("run " + Save(dir, c.name + ".onnx", m));
    INFO(c.name << "\n" << r.out);
    CHECK(r.exit_code == 2);  // a kernel's refusal
    CHECK_THAT(r.out, Catch::Contains(c.expect));
  }
  // LayerNormalization checked its scale but read a shorter bias past its end (fuzz_model).
  ModelBuilder m;
  m.Input("x", {2, 64}).Initializer("s", {64}, std::vector<float>(64, 1.f));
  m.Initializer("b", {3}, std::vector<float>(3, 0.f));
  m.Node("LayerNormalization", {"x", "s", "b"}, {"y"}, {Attr("axis", int64_t{-1})}).Output("y");
  auto r = Ortc("run " + Save(dir, "layernorm.onnx", m));
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("bias does not match the normalised shape"));
}

TEST_CASE("integer inputs read as one value are checked: missing, empty or float is an error",
          "[cli][hostile]") {
  // TopK's k, CumSum's axis and Trilu's k were read as (*IntsOf(input))[0], undefined for a
  // float or empty tensor; Slice's axes and steps likewise; Trilu indexed a rank-1 input's
  // second-to-last dimension.
  TempDir dir;
  struct Case {
    std::string name, expect;
    ModelBuilder model;
  };
  std::vector<Case> cases(5);
  cases[0] = {"topk_float_k", "TopK k must be an integer tensor with one element", {}};
  cases[0].model.Input("x", {2, 4}).Initializer("k", {1}, {2.f});
  cases[0].model.Node("TopK", {"x", "k"}, {"y", "i"}).Output("y");
  cases[1] = {"topk_empty_k", "TopK k must be an integer tensor with one element", {}};
  cases[1].model.Input("x", {2, 4}).IntInitializer("k", {});
  cases[1].model.Node("TopK", {"x", "k"}, {"y", "i"}).Output("y");
  cases[2] = {"cumsum_float_axis", "CumSum axis must be an integer tensor with one element", {}};
  cases[2].model.Input("x", {2, 4}).Initializer("a", {}, {0.f});
  cases[2].model.Node("CumSum", {"x", "a"}, {"y"}).Output("y");
  cases[3] = {"trilu_rank1", "Trilu needs an input of rank >= 2", {}};
  cases[3].model.Input("x", {4}).Node("Trilu", {"x"}, {"y"}).Output("y");
  cases[4] = {"slice_float_axes", "axes/steps must be integers", {}};
  cases[4].model.Input("x", {2, 4}).IntInitializer("s", {0}).IntInitializer("e", {1});
  cases[4].model.Initializer("a", {1}, {0.f});
  cases[4].model.Node("Slice", {"x", "s", "e", "a"}, {"y"}).Output("y");
  for (const auto& c : cases) {
    auto r = Ortc("run " + Save(dir, c.name + ".onnx", c.model));
    INFO(c.name << "\n" << r.out);
    CHECK(r.exit_code == 2);  // a kernel's refusal
    CHECK_THAT(r.out, Catch::Contains(c.expect));
  }
}

TEST_CASE("NonMaxSuppression checks the shapes of its boxes and scores", "[cli][hostile]") {
  // Found by fuzz_model (UBSan): scores of rank 1 were indexed at dimensions 1 and 2.
  TempDir dir;
  for (const auto& [boxes, scores] :
       {std::pair<std::vector<int64_t>, std::vector<int64_t>>{{1, 6, 4}, {6}},
        {{1, 6, 4}, {1, 1, 5}},
        {{1, 6, 3}, {1, 1, 6}}}) {
    ModelBuilder m;
    m.Input("boxes", boxes).Input("scores", scores);
    m.Node("NonMaxSuppression", {"boxes", "scores"}, {"y"}).Output("y", onnx::TensorProto::INT64);
    auto r = Ortc("run " + Save(dir, "nms.onnx", m));
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("NonMaxSuppression needs boxes of shape"));
  }
}

TEST_CASE("the loss kernels check their target and weight sizes", "[cli][hostile]") {
  // Found by fuzz_model (ASan): a target shorter than the scores' positions was read past.
  TempDir dir;
  for (const std::string op : {"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"}) {
    ModelBuilder short_target;
    short_target.Input("x", {2, 3}).IntInitializer("t", {0});
    short_target.Node(op, {"x", "t"}, {"y"}).Output("y");
    auto r = Ortc("run " + Save(dir, op + "_target.onnx", short_target));
    INFO(op << "\n" << r.out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("target must hold one label per position"));
    ModelBuilder short_weight;
    short_weight.Input("x", {2, 3}).IntInitializer("t", {0, 1});
    short_weight.Initializer("w", {2}, {1.f, 1.f});
    short_weight.Node(op, {"x", "t", "w"}, {"y"}).Output("y");
    r = Ortc("run " + Save(dir, op + "_weight.onnx", short_weight));
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("weight must have one element per class (3)"));
  }
}

TEST_CASE("MaxUnpool checks its indices and window attributes", "[cli][hostile]") {
  // Found by fuzz_model (ASan): indices shorter than the input were read past.
  TempDir dir;
  const std::vector<std::pair<std::string, std::vector<int64_t>>> cases = {
      {"indices must have the input's shape", {2, 2}},
      {"must match the input's spatial rank", {2}},
  };
  for (const auto& [expect, kernel] : cases) {
    ModelBuilder m;
    m.Input("x", {1, 1, 2, 2}).IntInitializer("i", {0});
    m.Node("MaxUnpool", {"x", "i"}, {"y"}, {Attr("kernel_shape", kernel)}).Output("y");
    auto r = Ortc("run " + Save(dir, "unpool.onnx", m));
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains(expect));
  }
}

TEST_CASE("GatherND checks its indices and batch_dims", "[cli][hostile]") {
  // Found by fuzz_model (UBSan): rank-0 indices were read at their last dimension; indices out
  // of range were read past the data.
  TempDir dir;
  const std::vector<std::tuple<std::string, std::vector<int64_t>, int64_t>> cases = {
      {"is out of range for a dimension of 2", {5}, 0},
      {"indices' last dimension must be in [1, rank(data) - batch_dims]", {0, 0, 0}, 0},
      {"batch_dims must be in [0, rank(indices) - 1]", {0}, 1},
  };
  for (const auto& [expect, indices, batch_dims] : cases) {
    ModelBuilder m;
    m.Input("x", {2, 2}).IntInitializer("i", indices);
    m.Node("GatherND", {"x", "i"}, {"y"}, {Attr("batch_dims", batch_dims)}).Output("y");
    auto r = Ortc("run " + Save(dir, "gathernd.onnx", m));
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains(expect));
  }
}

TEST_CASE("indexing and integer matrix kernels check index, update and operand shapes",
          "[cli][hostile]") {
  // ScatterElements read indices of another rank past data's strides (fuzz_model, UBSan);
  // GatherElements, ScatterND and MatMulInteger indexed the same way unchecked; ReverseSequence
  // read a short sequence_lens past its end.
  TempDir dir;
  std::vector<std::pair<std::string, ModelBuilder>> cases(4);
  cases[0].first = "GatherElements indices must have data's rank";
  cases[0].second.Input("x", {2, 2}).IntInitializer("i", {0, 1, 1});
  cases[0].second.Node("GatherElements", {"x", "i"}, {"y"}).Output("y");
  cases[1].first = "ScatterElements indices and updates must have one shape";
  cases[1].second.Input("x", {2, 2}).IntInitializer("i", {0}).Initializer("u", {1}, {1.f});
  cases[1].second.Node("ScatterElements", {"x", "i", "u"}, {"y"}).Output("y");
  cases[2].first = "ScatterND updates must have data's type";
  cases[2].second.Input("x", {2, 2}).IntInitializer("i", {0}).Initializer("u", {1}, {1.f});
  cases[2].second.Node("ScatterND", {"x", "i", "u"}, {"y"}).Output("y");
  cases.resize(6);
  cases[5].first = "inputs differ in a dimension other than the axis";  // fuzz_model, ASan
  cases[5].second.Input("a", {2, 3}).Input("b", {1, 3});
  cases[5].second.Node("Concat", {"a", "b"}, {"y"}, {Attr("axis", int64_t{1})}).Output("y");
  cases[4].first = "sequence_lens must have one entry per batch entry (3)";  // fuzz_model, ASan
  cases[4].second.Input("x", {2, 3}).IntInitializer("l", {1});
  cases[4].second.Node("ReverseSequence", {"x", "l"}, {"y"}).Output("y");
  cases[3].first = "operands' inner dimensions or batches differ";
  cases[3].second.Input("a", {2, 3}, onnx::TensorProto::UINT8);
  cases[3].second.Input("b", {2, 2}, onnx::TensorProto::UINT8);
  cases[3].second.Node("MatMulInteger", {"a", "b"}, {"y"}).Output("y", onnx::TensorProto::INT32);
  int n = 0;
  for (const auto& [expect, m] : cases) {
    auto r = Ortc("run " + Save(dir, "case" + std::to_string(n++) + ".onnx", m));
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains(expect));
  }
}

TEST_CASE("a declared input too large to generate is refused before allocating", "[cli][hostile]") {
  TempDir dir;
  for (const auto& dims : {std::vector<int64_t>{1000000, 1000000},        // 1e12: bad_alloc
                           std::vector<int64_t>{int64_t{1} << 62, 4}}) {  // 2^64: length_error
    ModelBuilder m;
    m.Input("x", dims).Node("Relu", {"x"}, {"y"}).Output("y");
    const std::string model = Save(dir, "huge.onnx", m);
    auto r = Ortc("run " + model);
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("more than the 1073741824 elements"));
  }
  // The limit holds for a shape given on the command line too; a sane one runs.
  ModelBuilder m;
  m.Input("x", {-1, 4}).Node("Relu", {"x"}, {"y"}).Output("y");
  const std::string model = Save(dir, "dynamic.onnx", m);
  auto r = Ortc("run " + model + " --input-shape x=1000000000x4");
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("more than the 1073741824 elements"));
  // Past the bound of any tensor, the shape itself is refused (as compile refuses it).
  auto beyond = Ortc("run " + model + " --input-shape x=1000000000000x4");
  CHECK(beyond.exit_code == 2);
  CHECK_THAT(beyond.out, Catch::Contains("more than 2^40 elements"));
  CHECK(Ortc("run " + model + " --input-shape x=3x4").exit_code == 0);
}

TEST_CASE("running out of memory is its own exit code, 8, with the cause", "[cli][hostile]") {
  TempDir dir;
  // Tile [1, 4] by [1, 2^26]: a 1 GiB output from a 16-byte input, under physical memory (so
  // max_tensor_bytes lets it through) but over a 1 GiB address-space limit.
  ModelBuilder m;
  m.Input("x", {1, 4}).IntInitializer("reps", {1, int64_t{1} << 26});
  m.Node("Tile", {"x", "reps"}, {"y"}).Output("y");
  const std::string model = Save(dir, "tile.onnx", m);
  for (const std::string json : {"", " --json"}) {
    auto r = RunOrtcWith("ulimit -v 1048576; timeout 60", "run " + model + json, true);
    INFO(r.out);
    CHECK(r.exit_code == 8);
    CHECK_THAT(r.out, Catch::Contains("OUT_OF_MEMORY") && Catch::Contains("out of memory"));
  }
  CHECK_THAT(Ortc("--help").out, Catch::Contains("8 out of memory"));
}

TEST_CASE("window attributes of 0 are refused before ONNX shape inference divides by them",
          "[cli][hostile]") {
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {1, 2, 8, 8}).Initializer("w", {2, 2, 3, 3}, std::vector<float>(36, 1.f));
  m.Node("Conv", {"x", "w"}, {"y"}, {Attr("strides", std::vector<int64_t>{0, 0})}).Output("y");
  const std::string model = Save(dir, "stride0.onnx", m);
  for (const std::string cmd : {"compile " + model + " -o " + (dir / "c").string() + "/ -q",
                                "partition " + model, "verify " + model}) {
    auto r = Ortc(cmd);
    INFO(cmd << "\n" << r.out);
    CHECK(r.exit_code == 3);  // was SIGFPE
    CHECK_THAT(r.out, Catch::Contains("strides has 0"));
  }
  auto r = Ortc("run " + model);
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("must be at least 1"));
}

TEST_CASE("an initializer whose shape claims data it does not hold is refused in bounded memory",
          "[cli][hostile]") {
  TempDir dir;
  for (int64_t dim : {int64_t{1000000000}, int64_t{1} << 59}) {
    ModelBuilder m;
    m.Input("x", {1}).Node("Add", {"x", "big"}, {"y"}).Output("y");
    auto* big = m.proto().mutable_graph()->add_initializer();
    big->set_name("big");
    big->set_data_type(onnx::TensorProto::FLOAT);
    big->add_dims(dim);  // and no data at all
    const std::string model = Save(dir, "claims.onnx", m);
    // `ulimit -v` (1 GiB) turns a zero-filled 4 GB tensor into a failure, not a slow pass.
    auto r = RunOrtcWith("ulimit -v 1048576; timeout 60", "run " + model, true);
    INFO(dim << "\n" << r.out);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.out, Catch::Contains("tensor 'big'"));
    CHECK(Ortc("compile " + model + " -o " + (dir / "c").string() + "/ -q").exit_code == 3);
  }
}

TEST_CASE("constants too large to fold stay in the program, and compile runs in bounded memory",
          "[cli][hostile]") {
  // Each builds a 3e9-element (12 GB) constant from small inputs. Folding them used to grow the
  // compiler to 11.4 GB and abort; now they are left for the runtime, and compile passes under
  // a 2 GiB address-space limit in well under a second.
  TempDir dir;
  struct Case {
    std::string name;
    std::function<void(ModelBuilder&)> build;  // defines "c"
  };
  std::vector<Case> cases = {
      {"constant_of_shape",
       [](ModelBuilder& m) {
         m.IntInitializer("shape", {60000, 50000}).Node("ConstantOfShape", {"shape"}, {"c"});
       }},
      {"expand",
       [](ModelBuilder& m) {
         m.IntInitializer("shape", {60000, 50000})
             .Initializer("one", {1}, {1.f})
             .Node("Expand", {"one", "shape"}, {"c"});
       }},
      {"broadcast_mul",
       [](ModelBuilder& m) {
         m.Initializer("col", {60000, 1}, std::vector<float>(60000, 1.f))
             .Initializer("row", {1, 50000}, std::vector<float>(50000, 1.f))
             .Node("Mul", {"col", "row"}, {"c"});
       }},
  };
  // Weight preprocessing folds up to 8x the bytes of the weights it reads (a 4-bit weight's
  // dequantization), each weight counted once: a weight concatenated with itself again and
  // again (1 MB to 4 GB) reads one weight, so it stops growing at 64 MiB.
  cases.push_back({"doubling_concat", [](ModelBuilder& m) {
                     m.Initializer("w", {262144}, std::vector<float>(262144, 1.f));
                     std::string x = "w";
                     for (int i = 0; i < 12; ++i) {
                       const std::string next = i == 11 ? "c" : "d" + std::to_string(i);
                       m.Node("Concat", {x, x}, {next}, {Attr("axis", int64_t{0})});
                       x = next;
                     }
                   }});
  for (const auto& c : cases) {
    ModelBuilder m;
    m.Input("x", {1});
    c.build(m);
    m.Node("ReduceSum", {"c"}, {"s"}, {Attr("keepdims", int64_t{0})})
        .Node("Add", {"x", "s"}, {"y"})
        .Output("y");
    const std::string model = Save(dir, c.name + ".onnx", m);
    auto r = RunOrtcWith("ulimit -v 2097152; timeout 60",
                         "compile " + model + " -o " + (dir / c.name).string() + "/ --json", true);
    INFO(c.name << "\n" << r.out);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(dir / c.name / (c.name + "_ctx.onnx")));
  }
}

TEST_CASE("FIFOs and devices are refused by every command, never opened", "[cli][hostile]") {
  TempDir dir;
  const std::string ctx = CompiledRelu(dir);
  const std::string fifo = (dir / "fifo.onnx").string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string cmd :
       {"run " + fifo, "inspect " + fifo, "check " + fifo, "partition " + fifo, "verify " + fifo,
        "compile " + fifo + " -o " + (dir / "c").string() + "/ -q",
        "run " + ctx + " --input x=" + fifo, "check " + ctx + " --device " + fifo,
        "check " + ctx + " --source " + fifo, std::string("run /dev/zero"),
        std::string("inspect /dev/zero")}) {
    auto r = Ortc(cmd);
    INFO(cmd << "\n" << r.out);
    CHECK(r.exit_code == 5);  // was a hang (124) for most
    CHECK_THAT(r.out, Catch::Contains("not a regular file"));
  }
  // The binary beside the ctx model replaced by a FIFO.
  const fs::path bin = fs::path(ctx).parent_path() / "relu_cpu.bin";
  fs::remove(bin);
  REQUIRE(mkfifo(bin.c_str(), 0600) == 0);
  for (const std::string cmd :
       {"run " + ctx, "check " + ctx, "inspect " + ctx, "inspect " + bin.string()}) {
    auto r = Ortc(cmd);
    INFO(cmd << "\n" << r.out);
    CHECK(r.exit_code != 124);
    CHECK(r.exit_code > 0);
    CHECK_THAT(r.out, Catch::Contains("not a regular file"));
  }
}

TEST_CASE("inspect refuses the context binary paths run refuses", "[cli][hostile]") {
  TempDir dir;
  const std::string ctx = CompiledRelu(dir);
  const fs::path bin = fs::path(ctx).parent_path() / "relu_cpu.bin";
  auto rewrite = [&](const std::string& folder, const std::string& path_text) {
    onnx::ModelProto m;
    std::ifstream in(ctx, std::ios::binary);
    REQUIRE(m.ParseFromIstream(&in));
    for (auto& n : *m.mutable_graph()->mutable_node())
      for (auto& a : *n.mutable_attribute())
        if (a.name() == "ep_cache_context") a.set_s(path_text);
    fs::create_directories(dir / folder);
    const std::string out = (dir / folder / "relu_ctx.onnx").string();
    std::ofstream o(out, std::ios::binary);
    REQUIRE(m.SerializeToOstream(&o));
    return out;
  };
  const std::string absolute = rewrite("absolute", fs::absolute(bin).string());
  const std::string dotdot = rewrite("dotdot", "../bundle/relu_cpu.bin");
  fs::create_directories(dir / "link");
  fs::copy_file(ctx, dir / "link" / "relu_ctx.onnx");
  fs::create_symlink(fs::absolute(bin), dir / "link" / "relu_cpu.bin");
  const std::string link = (dir / "link" / "relu_ctx.onnx").string();
  for (const auto& [model, reason] :
       {std::pair{absolute, "is absolute"}, std::pair{dotdot, "leaves the model's folder"},
        std::pair{link, "resolves outside the model's folder"}}) {
    for (const std::string cmd : {std::string("run "), std::string("inspect ")}) {
      auto r = Ortc(cmd + model);
      INFO(cmd << model << "\n" << r.out);
      CHECK(r.exit_code == 3);
    }
    auto r = Ortc("inspect " + model + " --json");
    INFO(r.out);
    CHECK_THAT(r.out, Catch::Contains(reason));
  }
  CHECK(Ortc("inspect " + ctx).exit_code == 0);

  // A NUL byte would cut the path where the file system reads it: "relu_cpu.bin\0junk" names
  // relu_cpu.bin to open() but is another string to everything else.
  const std::string nul = rewrite("nul", std::string("relu_cpu.bin\0junk", 17));
  fs::copy_file(bin, dir / "nul" / "relu_cpu.bin");
  // A symbolic link loop is named as one (an I/O failure, exit 5), not as a path outside.
  fs::create_directories(dir / "loop");
  fs::copy_file(ctx, dir / "loop" / "relu_ctx.onnx");
  fs::create_symlink("loop_b", dir / "loop" / "loop_a");
  fs::create_symlink("loop_a", dir / "loop" / "loop_b");
  fs::create_symlink("loop_a", dir / "loop" / "relu_cpu.bin");
  const std::string loop = (dir / "loop" / "relu_ctx.onnx").string();
  for (const auto& [model, reason, code] :
       {std::tuple{nul, "contains a NUL byte", 3}, std::tuple{loop, "symbolic link loop", 5}}) {
    for (const std::string cmd : {"run ", "check "}) {
      auto r = Ortc(cmd + model);
      INFO(cmd << model << "\n" << r.out);
      CHECK(r.exit_code == code);
      CHECK_THAT(r.out, Catch::Contains(reason));
    }
    auto r = Ortc("inspect " + model + " --json");
    INFO(r.out);
    CHECK(r.exit_code > 0);
    CHECK_THAT(r.out, Catch::Contains(reason));
  }
  // The message shows the NUL as \0 rather than cutting the text there.
  CHECK_THAT(Ortc("run " + nul).out, Catch::Contains("'relu_cpu.bin\\0junk'"));
}

TEST_CASE("output files are written whole or not at all", "[cli][hostile]") {
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {64, 256}).Initializer("w", {256, 256}, std::vector<float>(256 * 256, 0.5f));
  m.Node("MatMul", {"x", "w"}, {"y"}).Output("y");
  const std::string model = Save(dir, "mm.onnx", m);
  const fs::path out = dir / "out";
  fs::create_directories(out);
  // A file-size limit of 20 KiB stands in for a full disk: writes past it fail (SIGXFSZ is
  // ignored, so write() returns EFBIG). The 64 KiB output cannot be written.
  auto r = RunOrtcWith("trap '' XFSZ; ulimit -f 20; timeout 60",
                       "run " + model + " --output-dir " + out.string(), true);
  INFO(r.out);
  CHECK(r.exit_code == 5);
  CHECK(fs::is_empty(out));  // no truncated y.npy, no temporary file left
  // The compile under the same limit fails cleanly and leaves nothing.
  auto c = RunOrtcWith("trap '' XFSZ; ulimit -f 20; timeout 60",
                       "compile " + model + " -o " + (dir / "c").string() + "/", true);
  INFO(c.out);
  CHECK(c.exit_code == 5);
  CHECK(!fs::exists(dir / "c"));
  // An output folder that cannot be made is an I/O error, not an uncaught exception (134).
  auto f = Ortc("run " + model + " --output-dir " + model + "/sub");
  INFO(f.out);
  CHECK(f.exit_code == 5);
  CHECK_THAT(f.out, Catch::Contains("cannot make the output folder"));
}

TEST_CASE(".npy headers are parsed in bounded stack and memory", "[cli][hostile]") {
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {2, 3}).Node("Relu", {"x"}, {"y"}).Output("y");
  const std::string model = Save(dir, "relu.onnx", m);
  auto npy = [&](const std::string& name, const std::string& dict) {
    std::string header = dict;
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string bytes = std::string("\x93NUMPY\x02\x00", 8);
    const uint32_t len = static_cast<uint32_t>(header.size());
    bytes.append(reinterpret_cast<const char*>(&len), 4);
    ortc::test::WriteFile(dir / name, bytes + header + std::string(24, '\0'));
    return (dir / name).string();
  };
  // A 600 kB dtype string: std::regex overflowed the stack on it.
  const std::string long_descr =
      npy("long.npy", "{'descr': '" + std::string(600000, 'f') + "', 'shape': (2, 3), }");
  // 4e10 elements claimed, 24 bytes present: refused before allocating 160 GB.
  const std::string huge = npy("huge.npy",
                               "{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (200000, 200000), }");
  const std::string good = npy("good.npy",
                               "{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (2, 3), }");
  // No element but 2^62 rows: passed the size check, then Tensor::Allocate threw and the
  // uncaught length_error aborted (found by fuzz_tensor_files).
  const std::string empty_huge = npy("empty_huge.npy",
                                     "{'descr': '<f4', 'fortran_order': False, "
                                     "'shape': (0, 4611686018427387904), }");
  for (const auto& [file, reason] :
       {std::pair{long_descr, "unsupported .npy dtype"}, std::pair{huge, "truncated"},
        std::pair{empty_huge, "more than 2^40 elements in its non-zero dimensions"}}) {
    auto r = Ortc("run " + model + " --input x=" + file);
    INFO(r.out.substr(0, 300));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out.substr(0, 300), Catch::Contains(reason));
  }
  CHECK(Ortc("run " + model + " --input x=" + good).exit_code == 0);
}

TEST_CASE("a device description's numbers are range-checked before conversion", "[cli][hostile]") {
  TempDir dir;
  const std::string ctx = CompiledRelu(dir);
  // Found by fuzz_device_description: a float driver version was cast to int (undefined).
  for (const std::string v : {"1e13", "10000003470774.1", "-5", "18446744073709551615"}) {
    auto r = Ortc("check " + ctx + " --device '{\"cuda\": {\"driver_version\": " + v + "}}'");
    INFO(v << "\n" << r.out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("driver_version must be a non-negative integer"));
  }
  CHECK(Ortc("check " + ctx + " --device '{\"cuda\": {\"driver_version\": 12080}}'").exit_code ==
        0);
}
