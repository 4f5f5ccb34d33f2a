// The CUDA plugin's run path, proven without a GPU: models compiled with --ep cuda,cpu run
// through the real plugin against the stand-in driver, cuDNN and cuBLASLt (standin/), which
// record every call. After load, a run allocates nothing, plans nothing and looks nothing up;
// with CUDA graphs it is exactly the input copies, one graph launch, the output copies and one
// synchronisation; capture failures fall back to the stream with a reason; fp32 never picks a
// TF32 engine; closing a session releases everything it created.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <set>

#include "allocation_counter.h"
#include "model_builder.h"
#include "ortc/ortc_c.h"
#include "ortc/runtime.h"
#include "plugin/backend_library.h"
#include "run_ortc.h"
#include "standin_fixture.h"
#include "standin_probe.h"

namespace ortc::test {
namespace {

namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

std::vector<float> Ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 7) - 3);
  return v;
}

// Conv + bias + Relu (one cuDNN plan), GlobalAveragePool (a generated kernel), Flatten (a view),
// Gemm + bias (one cuBLASLt matmul): one CUDA graph of three steps.
ModelBuilder ConvGemmModel() {
  ModelBuilder m;
  m.Input("x", {1, 3, 8, 8})
      .Output("y")
      .Initializer("w", {4, 3, 3, 3}, Ramp(108, 0.1f))
      .Initializer("b", {4}, {0.1f, -0.2f, 0.3f, 0.0f})
      .Initializer("fc", {5, 4}, Ramp(20, 0.2f))
      .Initializer("fc_b", {5}, {1, 2, 3, 4, 5})
      .Node("Conv", {"x", "w", "b"}, {"c"}, {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .Node("Relu", {"c"}, {"r"})
      .Node("GlobalAveragePool", {"r"}, {"g"})
      .Node("Flatten", {"g"}, {"f"})
      .Node("Gemm", {"f", "fc", "fc_b"}, {"y"}, {Attr("transB", int64_t{1})});
  return m;
}

// A Reshape: its CUDA program is one device copy, so the bytes of a run can be followed.
ModelBuilder CopyModel() {
  ModelBuilder m;
  m.Input("x", {2, 3}).Output("y").IntInitializer("s", {3, 2}).Node("Reshape", {"x", "s"}, {"y"});
  return m;
}

// ArgMax, which CUDA leaves to the CPU, on the model input.
ModelBuilder CpuOnlyModel() {
  ModelBuilder m;
  m.Input("x", {2, 3}).Output("y", onnx::TensorProto::INT64).Node("ArgMax", {"x"}, {"y"});
  return m;
}

nlohmann::json GraphReport(const Session& s) {
  REQUIRE(s.load_report().graphs.size() == 1);
  CHECK(s.load_report().graphs[0].backend == "cuda");
  return nlohmann::json::parse(s.load_report().graphs[0].json);
}

std::vector<std::pair<std::string, Tensor>> Feeds(const Session& s) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& in : s.inputs()) {
    Tensor t = Tensor::Allocate(in.dtype, in.shape);
    auto* f = t.mutable_data<float>();
    for (int64_t i = 0; i < t.elements(); ++i) f[i] = 0.5f * static_cast<float>(i + 1);
    feeds.push_back({in.name, t});
  }
  return feeds;
}

// Sets ORTC_STANDIN_FAIL for the scope (the stand-ins read it at every call).
struct InjectFailure {
  explicit InjectFailure(const std::string& calls) {
    setenv("ORTC_STANDIN_FAIL", calls.c_str(), 1);
  }
  ~InjectFailure() { unsetenv("ORTC_STANDIN_FAIL"); }
};

// Calls made at load that a run must never make again.
const Strings kLoadOnly = {"cuMemAlloc",
                           "cuMemHostAlloc",
                           "cuModuleLoadDataEx",
                           "cuModuleGetFunction",
                           "cuStreamCreate",
                           "cuStreamBeginCapture",
                           "cuGraphInstantiate",
                           "cuMemsetD8Async",
                           "cuEventCreate",
                           "cudnnCreate",
                           "cudnnSetStream",
                           "cudnnBackendCreateDescriptor",
                           "cudnnBackendSetAttribute",
                           "cudnnBackendFinalize",
                           "cudnnGetConvolutionForwardAlgorithm_v7",
                           "cublasLtCreate",
                           "cublasLtMatmulDescCreate",
                           "cublasLtMatmulAlgoGetHeuristic",
                           "cublasLtMatrixLayoutCreate"};

void CheckNoLoadWork(const Strings& trace) {
  for (const auto& call : trace) {
    for (const auto& forbidden : kLoadOnly) {
      INFO("a run made the load-time call " << call);
      CHECK(call.rfind(forbidden, 0) != 0);
    }
  }
}

// The plugin's run_graph with the calling thread's allocations counted.
OrtcPluginStatus (*g_original_run)(OrtcGraph*, const OrtcTensorRef*, uint32_t, OrtcTensorRef*,
                                   uint32_t) = nullptr;
size_t g_run_allocations = 0;
OrtcPluginStatus CountingRun(OrtcGraph* g, const OrtcTensorRef* in, uint32_t ni, OrtcTensorRef* out,
                             uint32_t no) {
  StartCountingAllocations();
  const OrtcPluginStatus s = g_original_run(g, in, ni, out, no);
  g_run_allocations += StopCountingAllocations();
  return s;
}

struct CountPluginAllocations {
  OrtcBackend* table;
  CountPluginAllocations() {
    auto lib = plugin::GetBackend("cuda");
    REQUIRE(lib.ok());
    table = (*lib)->table();
    g_original_run = table->run_graph;
    g_run_allocations = 0;
    table->run_graph = &CountingRun;
  }
  ~CountPluginAllocations() { table->run_graph = g_original_run; }
};

}  // namespace

TEST_CASE("stand-in: the stand-in CUDA libraries are the ones this process loads") {
  INFO(Probe().error());
  REQUIRE(Probe().ok());
}

TEST_CASE(
    "stand-in: with CUDA graphs a run is the input copies, one launch, the output copies "
    "and one synchronisation") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(ConvGemmModel(), dir.path(), "conv_gemm");
  Probe().Reset();
  auto s = Open(ctx);
  {
    // The load launches the instantiated graph once (its upload), so the first run is like
    // every other.
    const Strings load = Probe().Trace();
    const auto instantiate = std::find(load.begin(), load.end(), "cuGraphInstantiate");
    const auto launch = std::find(load.begin(), load.end(), "cuGraphLaunch");
    CHECK(Probe().Count("cuGraphLaunch") == 1);
    CHECK(instantiate < launch);
    REQUIRE(launch != load.end());
    CHECK(std::find(launch, load.end(), "cuStreamSynchronize") != load.end());
  }
  const auto report = GraphReport(*s);
  INFO(report.dump());
  CHECK(report["execution"] == "cuda_graph");
  CHECK(report["steps"]["total"] == 3);
  CHECK(report["steps"]["convolutions_graph_api"] == 1);
  CHECK(report["steps"]["kernels"] == 1);
  CHECK(report["steps"]["gemms"] == 1);
  CHECK(report["staging"] == "pinned");
  const auto feeds = Feeds(*s);
  for (int run = 0; run < 3; ++run) {
    Probe().Reset();
    REQUIRE(s->Run(feeds).ok());
    CHECK(Probe().Trace() == Strings{"cuCtxPushCurrent", "cuMemcpyHtoDAsync", "cuGraphLaunch",
                                     "cuMemcpyDtoHAsync", "cuStreamSynchronize",
                                     "cuCtxPopCurrent"});
    // The launch replays every step that was captured.
    CHECK(Probe().Count("replay:cudnnBackendExecute") == 1);
    CHECK(Probe().Count("replay:cublasLtMatmul") == 1);
  }
}

TEST_CASE("stand-in: the load reports the milliseconds of each of its parts") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(ConvGemmModel(), dir.path(), "load_parts");
  const auto start = std::chrono::steady_clock::now();
  auto s = Open(ctx);
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const auto report = GraphReport(*s);
  INFO(report.dump());
  REQUIRE(report.contains("load_ms"));
  double sum = 0;
  for (const char* part :
       {"device", "staging", "weights", "module", "plans", "warmup", "capture"}) {
    INFO(part);
    REQUIRE(report["load_ms"].contains(part));
    CHECK(report["load_ms"][part].get<double>() >= 0);
    sum += report["load_ms"][part].get<double>();
  }
  CHECK(report["load_ms"].size() == 7);
  // The parts are consecutive spans inside the session's load: together never more than it.
  CHECK(sum <= wall_ms);
}

TEST_CASE("stand-in: after load a run allocates nothing and makes no load-time call") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(ConvGemmModel(), dir.path(), "conv_gemm");
  for (const char* graphs : {"1", "0"}) {
    SECTION(std::string("enable_cuda_graph=") + graphs) {
      SessionOptions o;
      o.provider_options["cuda"]["enable_cuda_graph"] = graphs;
      auto s = Open(ctx, o);
      const auto feeds = Feeds(*s);
      REQUIRE(s->Run(feeds).ok());  // a first run, as a user would
      CountPluginAllocations counting;
      Probe().Reset();
      for (int run = 0; run < 5; ++run) REQUIRE(s->Run(feeds).ok());
      CHECK(g_run_allocations == 0);
      CheckNoLoadWork(Probe().Trace());
      CHECK(Probe().Count("cuStreamSynchronize") == 5);
    }
  }
}

TEST_CASE("stand-in: enable_cuda_graph=0 issues the steps on the stream, in order") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(ConvGemmModel(), dir.path(), "conv_gemm");
  SessionOptions o;
  o.provider_options["cuda"]["enable_cuda_graph"] = "0";
  auto s = Open(ctx, o);
  const auto report = GraphReport(*s);
  CHECK(report["execution"] == "stream");
  CHECK(report["reason"] == "CUDA graphs are disabled (enable_cuda_graph=0)");
  Probe().Reset();
  REQUIRE(s->Run(Feeds(*s)).ok());
  const Strings trace = Probe().Trace();
  REQUIRE(trace.size() == 8);
  CHECK(trace[0] == "cuCtxPushCurrent");
  CHECK(trace[1] == "cuMemcpyHtoDAsync");
  CHECK(trace[2] == "cudnnBackendExecute");
  CHECK(trace[3] == "cuLaunchKernel");
  CHECK(trace[4] == "cublasLtMatmul");
  CHECK(trace[5] == "cuMemcpyDtoHAsync");
  CHECK(trace[6] == "cuStreamSynchronize");
  CHECK(trace[7] == "cuCtxPopCurrent");
  CHECK(Probe().Count("cuGraphLaunch") == 0);
}

TEST_CASE("stand-in: a run's bytes go host -> pinned -> device -> graph -> host") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(CopyModel(), dir.path(), "copy");
  for (const char* graphs : {"1", "0"}) {
    SessionOptions o;
    o.provider_options["cuda"]["enable_cuda_graph"] = graphs;
    auto s = Open(ctx, o);
    CHECK(GraphReport(*s)["execution"] == (graphs == std::string("1") ? "cuda_graph" : "stream"));
    Tensor x = Tensor::Allocate(DataType::kFloat, {2, 3});
    for (int i = 0; i < 6; ++i) x.mutable_data<float>()[i] = 1.5f * static_cast<float>(i) - 2.f;
    Probe().Reset();
    auto out = s->Run({{"x", x}});
    REQUIRE(out.ok());
    REQUIRE((*out)[0].shape() == std::vector<int64_t>{3, 2});
    for (int i = 0; i < 6; ++i) CHECK((*out)[0].data<float>()[i] == x.data<float>()[i]);
    CHECK(Probe().Count(graphs == std::string("1") ? "replay:DtoD" : "cuMemcpyDtoDAsync") == 1);
  }
}

TEST_CASE("stand-in: large host tensors cross the staging buffer on several threads, in chunks") {
  REQUIRE(Probe().ok());
  TempDir dir;
  // [1, 1, 900001] floats in and out (3.6 MB, above HostCopyPool::kSplitBytes, and no multiple
  // of the 4 KiB parts): the input to staging and the output from it are split over 3 threads.
  constexpr int64_t kN = 900001;
  ModelBuilder m;
  m.Input("x", {1, 1, kN})
      .Output("y")
      .IntInitializer("s", {1, kN})
      .Node("Reshape", {"x", "s"}, {"y"});
  const fs::path ctx = Compile(m, dir.path(), "large");
  SessionOptions o;
  o.provider_options["cuda"]["host_copy_threads"] = "3";
  auto s = Open(ctx, o);
  CHECK(GraphReport(*s)["host_copy_threads"] == 3);
  Tensor x = Tensor::Allocate(DataType::kFloat, {1, 1, kN});
  for (int64_t i = 0; i < kN; ++i) x.mutable_data<float>()[i] = static_cast<float>(i % 9973) - 7.f;
  for (int run = 0; run < 2; ++run) {
    auto out = s->Run({{"x", x}});
    REQUIRE(out.ok());
    REQUIRE((*out)[0].byte_size() == x.byte_size());
    CHECK(std::memcmp((*out)[0].raw(), x.raw(), x.byte_size()) == 0);
  }
  // An output of three 4 MiB chunks and a bit (12.6 MB) leaves the device chunk by chunk, an
  // event after each, and the host copies each chunk once its event is done; the events go with
  // the session.
  {
    constexpr int64_t kBig = 3 * (1 << 20) + 12345;  // floats
    ModelBuilder big;
    big.Input("x", {1, 1, kBig}).Output("y").IntInitializer("s", {1, kBig});
    big.Node("Reshape", {"x", "s"}, {"y"});
    const size_t events_before = Probe().Live("event");
    auto chunked = Open(Compile(big, dir.path(), "chunked"), o);
    CHECK(Probe().Live("event") == events_before + 4);
    Tensor bx = Tensor::Allocate(DataType::kFloat, {1, 1, kBig});
    for (int64_t i = 0; i < kBig; ++i) bx.mutable_data<float>()[i] = static_cast<float>(i % 7919);
    Probe().Reset();
    auto out = chunked->Run({{"x", bx}});
    REQUIRE(out.ok());
    CHECK(std::memcmp((*out)[0].raw(), bx.raw(), bx.byte_size()) == 0);
    CHECK(Probe().Count("cuMemcpyDtoHAsync") == 4);
    CHECK(Probe().Count("cuEventSynchronize") == 4);
    CHECK(Probe().Count("bytes:DtoH") == bx.byte_size());
    chunked.reset();
    CHECK(Probe().Live("event") == events_before);
  }
  // One thread is a plain copy; the count must be a number from 1 to 64.
  o.provider_options["cuda"]["host_copy_threads"] = "1";
  CHECK(GraphReport(*Open(ctx, o))["host_copy_threads"] == 1);
  for (const char* bad : {"0", "65", "two", ""}) {
    o.provider_options["cuda"]["host_copy_threads"] = bad;
    auto refused = Session::Create(ctx, o);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.status().message(),
               Catch::Contains("host_copy_threads must be a number from 1 to 64"));
  }
}

TEST_CASE("stand-in: a failed capture falls back to the stream and says why") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(CopyModel(), dir.path(), "copy");
  for (const char* call : {"cuStreamBeginCapture", "cuStreamEndCapture", "cuGraphInstantiate"}) {
    INFO(call);
    InjectFailure fail(call);
    auto s = Open(ctx);
    const auto report = GraphReport(*s);
    CHECK(report["execution"] == "stream");
    CHECK_THAT(report["reason"].get<std::string>(),
               Catch::Contains("CUDA graph capture failed") && Catch::Contains(call));
    Tensor x = Tensor::Allocate(DataType::kFloat, {2, 3});
    for (int i = 0; i < 6; ++i) x.mutable_data<float>()[i] = static_cast<float>(i);
    Probe().Reset();
    auto out = s->Run({{"x", x}});
    REQUIRE(out.ok());
    for (int i = 0; i < 6; ++i) CHECK((*out)[0].data<float>()[i] == static_cast<float>(i));
    CHECK(Probe().Count("cuGraphLaunch") == 0);
    CHECK(Probe().Count("cuMemcpyDtoDAsync") == 1);
  }
}

TEST_CASE("stand-in: a capture that ends in failure leaves the steps on the stream") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(ConvGemmModel(), dir.path(), "conv_gemm");
  // cuDNN plans that fail make the conv fall back to the legacy calls, which the stand-in lets
  // capture; what invalidates a capture is a synchronising or allocating call, as on a real
  // driver: the stand-in fails the capture of any stream synchronised inside it.
  InjectFailure fail("cuStreamEndCapture");
  auto s = Open(ctx);
  const auto report = GraphReport(*s);
  CHECK(report["execution"] == "stream");
  Probe().Reset();
  REQUIRE(s->Run(Feeds(*s)).ok());
  CHECK(Probe().Count("cudnnBackendExecute") == 1);
}

TEST_CASE("stand-in: unknown cuda options and values fail the session with the known keys") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(CopyModel(), dir.path(), "copy");
  SessionOptions o;
  o.provider_options["cuda"]["enable_cuda_graphs"] = "1";
  auto s = Session::Create(ctx, o);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.status().message(), Catch::Contains("unknown cuda option 'enable_cuda_graphs'") &&
                                       Catch::Contains("enable_cuda_graph, enable_profiling"));
  o.provider_options["cuda"] = {{"enable_cuda_graph", "yes"}};
  s = Session::Create(ctx, o);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.status().message(), Catch::Contains("must be 0 or 1, got 'yes'"));
  o.provider_options = {{"cudnn", {{"x", "1"}}}};
  s = Session::Create(ctx, o);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.status().message(), Catch::Contains("no backend named 'cudnn'"));
}

TEST_CASE("stand-in: fp32 is IEEE fp32 in every library call and tf32 opts in to TF32") {
  REQUIRE(Probe().ok());
  TempDir dir;
  struct Expect {
    const char* precision;
    const char* engine;       // the stand-in's engine 0 has the TENSOR_CORE note, engine 1 not
    const char* gemm;         // cuBLASLt compute type
    const char* legacy_math;  // cuDNN math type when the graph API is unavailable
  };
  for (const Expect& e :
       {Expect{"fp32", "cudnn_plan_engine:1", "CUBLAS_COMPUTE_32F", "CUDNN_FMA_MATH"},
        Expect{"tf32", "cudnn_plan_engine:0", "CUBLAS_COMPUTE_32F_FAST_TF32", "CUDNN_DEFAULT_MATH"},
        Expect{"fp16", "cudnn_plan_engine:0", "CUBLAS_COMPUTE_32F", "CUDNN_TENSOR_OP_MATH"}}) {
    INFO(e.precision);
    const fs::path ctx = Compile(ConvGemmModel(), dir.path(), "conv_gemm", e.precision);
    Probe().Reset();
    {
      auto s = Open(ctx);
      CHECK(GraphReport(*s)["precision"] == e.precision);
    }
    CHECK(Probe().Count(e.engine) == 1);
    CHECK(Probe().Count(std::string("cublasLtMatmulDescCreate:") + e.gemm) == 1);
    CHECK(Probe().Count("cublasLtMatmulDescCreate:CUBLAS_COMPUTE_32F_FAST_TF32") ==
          (e.precision == std::string("tf32") ? 1 : 0));

    InjectFailure fail("cudnnBackendFinalize");
    Probe().Reset();
    auto s = Open(ctx);
    const auto report = GraphReport(*s);
    CHECK(report["steps"]["convolutions_legacy"] == 1);
    CHECK_THAT(report["legacy_convolution_reasons"][0].get<std::string>(),
               Catch::Contains("operation graph was refused"));
    CHECK(Probe().Count(std::string("cudnnSetConvolutionMathType:") + e.legacy_math) == 1);
    REQUIRE(s->Run(Feeds(*s)).ok());
  }
}

TEST_CASE("stand-in: closing the sessions releases everything they created") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(ConvGemmModel(), dir.path(), "conv_gemm");
  const size_t device_before = Probe().LiveDeviceBytes();
  const Strings kinds = {"stream",          "graph",        "graph_exec",       "event",
                         "host_alloc",      "cudnn_handle", "cudnn_descriptor", "cublaslt_handle",
                         "cublaslt_object", "module",       "context_push"};
  std::map<std::string, long> before;
  for (const auto& k : kinds) before[k] = Probe().Live(k);
  {
    SessionOptions profiled;
    profiled.enable_profiling = true;
    auto a = Open(ctx), b = Open(ctx), c = Open(ctx, profiled);
    REQUIRE(a->Run(Feeds(*a)).ok());
    REQUIRE(c->Run(Feeds(*c)).ok());
    CHECK(Probe().Live("stream") == before["stream"] + 3);
    CHECK(Probe().LiveDeviceBytes() > device_before);
  }
  for (const auto& k : kinds) {
    INFO(k);
    CHECK(Probe().Live(k) == before[k]);
  }
  CHECK(Probe().LiveDeviceBytes() == device_before);
}

TEST_CASE("stand-in: profiling times every step on the host and device lanes") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(ConvGemmModel(), dir.path(), "conv_gemm");
  SessionOptions o;
  o.enable_profiling = true;
  auto s = Open(ctx, o);
  const auto report = GraphReport(*s);
  CHECK(report["execution"] == "stream");
  CHECK(report["profiling"] == true);
  REQUIRE(s->Run(Feeds(*s)).ok());
  REQUIRE(s->Run(Feeds(*s)).ok());
  const fs::path trace_path = dir / "trace.json";
  REQUIRE(s->EndProfiling(trace_path).ok());
  std::ifstream in(trace_path);
  const auto trace = nlohmann::json::parse(in);
  REQUIRE(trace.is_array());
  std::map<std::string, int> steps_by_kind;
  int runs = 0, host = 0, device = 0;
  for (const auto& e : trace) {
    if (e["ph"] != "X") continue;
    CHECK(e["dur"].get<double>() >= 0);
    if (e["cat"] == "Session") ++runs;
    if (e["cat"] != "Step") continue;
    (e["tid"] == 1 ? host : device)++;
    if (e["tid"] == 1) steps_by_kind[e["args"]["kind"].get<std::string>()]++;
  }
  CHECK(runs == 2);
  CHECK(host == device);
  // Per run: input copies, conv, kernel, gemm, output copies.
  CHECK(steps_by_kind["cudnn"] == 2);
  CHECK(steps_by_kind["kernel"] == 2);
  CHECK(steps_by_kind["cublaslt"] == 2);
  CHECK(steps_by_kind["copy"] == 4);
  // Written events are forgotten: a second write has only the thread names.
  REQUIRE(s->EndProfiling(trace_path).ok());
  std::ifstream again(trace_path);
  CHECK(nlohmann::json::parse(again).size() == 3);
}

}  // namespace ortc::test

namespace ortc::test {

TEST_CASE("stand-in: device-resident inputs and outputs skip the host entirely") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(CopyModel(), dir.path(), "copy");
  auto s = Open(ctx);
  DeviceBuffer x(6 * sizeof(float)), y(6 * sizeof(float));
  for (int i = 0; i < 6; ++i) x.floats()[i] = 3.f * static_cast<float>(i) + 1.f;
  Probe().Reset();
  auto out = s->RunBound({{"x", Tensor::OnDevice(DataType::kFloat, {2, 3}, x.ptr)}},
                         {{"y", Tensor::OnDevice(DataType::kFloat, {3, 2}, y.ptr)}});
  INFO((out.ok() ? "" : out.status().ToString()));
  REQUIRE(out.ok());
  CHECK((*out)[0].location() == MemoryLocation::kCudaDevice);
  CHECK((*out)[0].raw() == y.ptr);
  for (int i = 0; i < 6; ++i) CHECK(y.floats()[i] == x.floats()[i]);
  // Device memory is bound into the program: the first run with these addresses captures the
  // steps against them once (the program's own copy now reads x and writes y), and no copy
  // into or out of the graph's buffers is made.
  CHECK(Probe().Trace() == Strings{"cuCtxPushCurrent", "cuStreamBeginCapture", "cuMemcpyDtoDAsync",
                                   "cuStreamEndCapture", "cuGraphInstantiate", "cuGraphDestroy",
                                   "cuGraphLaunch", "cuStreamSynchronize", "cuCtxPopCurrent"});
  // The same addresses again: one launch of that graph, nothing else.
  for (int i = 0; i < 6; ++i) x.floats()[i] = -2.f * static_cast<float>(i);
  Probe().Reset();
  out = s->RunBound({{"x", Tensor::OnDevice(DataType::kFloat, {2, 3}, x.ptr)}},
                    {{"y", Tensor::OnDevice(DataType::kFloat, {3, 2}, y.ptr)}});
  REQUIRE(out.ok());
  for (int i = 0; i < 6; ++i) CHECK(y.floats()[i] == x.floats()[i]);
  CHECK(Probe().Trace() ==
        Strings{"cuCtxPushCurrent", "cuGraphLaunch", "cuStreamSynchronize", "cuCtxPopCurrent"});

  // A host buffer bound to the output is written in place.
  std::vector<float> host(6, -1.f);
  out = s->RunBound({{"x", Tensor::OnDevice(DataType::kFloat, {2, 3}, x.ptr)}},
                    {{"y", Tensor::WrapWritable(DataType::kFloat, {3, 2}, host.data(), nullptr)}});
  REQUIRE(out.ok());
  for (int i = 0; i < 6; ++i) CHECK(host[i] == x.floats()[i]);

  // A bound tensor of the wrong shape is refused before anything runs.
  out = s->RunBound({{"x", Tensor::OnDevice(DataType::kFloat, {2, 3}, x.ptr)}},
                    {{"y", Tensor::OnDevice(DataType::kFloat, {2, 3}, y.ptr)}});
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(out.status().message(), Catch::Contains("bound tensor is float[2,3]"));
}

TEST_CASE("stand-in: device memory never reaches a CPU kernel") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(CpuOnlyModel(), dir.path(), "argmax");
  auto s = Open(ctx);
  DeviceBuffer x(6 * sizeof(float)), y(3 * sizeof(int64_t));
  auto out = s->RunBound({{"x", Tensor::OnDevice(DataType::kFloat, {2, 3}, x.ptr)}}, {});
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(out.status().message(),
             Catch::Contains("runs on the CPU but 'x' is in device memory"));
  Tensor host_x = Tensor::Allocate(DataType::kFloat, {2, 3});
  out = s->RunBound({{"x", host_x}}, {{"y", Tensor::OnDevice(DataType::kInt64, {2}, y.ptr)}});
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(out.status().message(),
             Catch::Contains("output 'y' is bound to device memory but node") &&
                 Catch::Contains("computes it on the CPU"));
}

TEST_CASE("stand-in: the C API runs with device buffers") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(CopyModel(), dir.path(), "copy");
  OrtcSession* session = nullptr;
  OrtcStatus* st = ortc_session_create(ctx.c_str(), &session);
  INFO(ortc_status_message(st));
  REQUIRE(st == nullptr);
  DeviceBuffer x(6 * sizeof(float)), y(6 * sizeof(float));
  for (int i = 0; i < 6; ++i) x.floats()[i] = static_cast<float>(i * i);
  const int64_t in_shape[] = {2, 3}, out_shape[] = {3, 2};
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y"};
  OrtcBufferView in{1, in_shape, 2, x.ptr, ORTC_MEMORY_CUDA};
  OrtcBufferView out{1, out_shape, 2, y.ptr, ORTC_MEMORY_CUDA};
  st = ortc_session_run_bound(session, in_names, &in, 1, out_names, &out, 1);
  INFO(ortc_status_message(st));
  CHECK(st == nullptr);
  for (int i = 0; i < 6; ++i) CHECK(y.floats()[i] == static_cast<float>(i * i));
  out.memory = static_cast<OrtcMemoryType>(7);
  st = ortc_session_run_bound(session, in_names, &in, 1, out_names, &out, 1);
  REQUIRE(st != nullptr);
  CHECK(ortc_status_code(st) == ORTC_INVALID_ARGUMENT);
  CHECK_THAT(ortc_status_message(st), Catch::Contains("output 0 is malformed"));
  ortc_status_release(st);
  ortc_session_release(session);
}

TEST_CASE("stand-in: attention's GEMMs read the heads in place through leading dimensions") {
  // q, k, v [1, 8 rows, 2 heads, 8]: per head a row-major [8, 8] matrix whose rows are 16
  // elements apart. The plugin must hand cuBLASLt those leading dimensions (column-major
  // layouts: rows x cols with ld), not packed ones, and run both GEMMs of each run.
  REQUIRE(Probe().ok());
  ModelBuilder m(17);
  m.Input("q_in", {1, 8, 2, 8}).Input("k_in", {1, 8, 2, 8}).Input("v_in", {1, 8, 2, 8});
  m.Output("y").Initializer("scale", {}, {0.35f});
  const std::vector<int64_t> heads = {0, 2, 1, 3};
  m.Node("Transpose", {"q_in"}, {"q"}, {Attr("perm", heads)})
      .Node("Transpose", {"k_in"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 2, 3, 1})})
      .Node("Transpose", {"v_in"}, {"v"}, {Attr("perm", heads)})
      .Node("MatMul", {"q", "kt"}, {"s"})
      .Node("Mul", {"s", "scale"}, {"ss"})
      .Node("Softmax", {"ss"}, {"p"}, {Attr("axis", int64_t{-1})})
      .Node("MatMul", {"p", "v"}, {"o"})
      .Node("Transpose", {"o"}, {"y"}, {Attr("perm", heads)});
  TempDir dir;
  const fs::path ctx = Compile(m, dir.path(), "attention", "fp16");
  Probe().Reset();
  auto s = Open(ctx);
  const auto report = GraphReport(*s);
  INFO(report.dump());
  CHECK(report["steps"]["gemms"] == 2);
  // Q K^T: K^T (8 x 8, ld 16) and Q (8 x 8, ld 16); P V: V (ld 16) and the output through the
  // head merge (ld 16, twice: C and D). Packed layouts would have ld 8.
  CHECK(Probe().Count("cublasLtMatrixLayoutCreate:8x8:ld16") == 5);
  CHECK(Probe().Count("cublasLtMatrixLayoutCreate:8x8:ld8") == 3);
  const auto feeds = Feeds(*s);
  Probe().Reset();
  auto out = s->Run(feeds);
  REQUIRE(out.ok());
  CHECK(Probe().Count("replay:cublasLtMatmul") == 2);  // both GEMMs, inside the CUDA graph
}

}  // namespace ortc::test
