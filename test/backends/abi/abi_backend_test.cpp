// The compile side of the plugin ABI from the host's end: the graph view a backend reads, the
// adapter that turns a C table's answers into the compiler's structures (over a table written
// here, as an out-of-tree backend would write one), the table checks, the status codes both
// ways, and the in-tree backends answering through their tables as they do in C++.
#include <catch2/catch.hpp>

#include <cstring>

#include "abi/abi_backend.h"
#include "abi/abi_status.h"
#include "abi/graph_view.h"
#include "abi/in_process_compiler.h"
#include "abi/plugin_compilers.h"
#include "cpu/compile/capability.h"
#include "cuda/compile/capability.h"
#include "graph/model.h"
#include "model_builder.h"
#include "registry.h"

using namespace ortc;
using namespace ortc::backends;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::TempDir;

namespace {

// x[N,4] -> Add(k) -> Conv-free chain: Add, Relu, Softmax(axis=1), with a string attribute.
std::unique_ptr<graph::Model> SmallModel(const TempDir& dir) {
  std::vector<float> ext = {10, 20, 30, 40};
  ortc::test::WriteFile(
      dir / "w.data",
      std::string(4, 'z') + std::string(reinterpret_cast<const char*>(ext.data()), 16));
  ModelBuilder b;
  b.Input("x", {-1, 4})
      .Initializer("k", {4}, {1, 2, 3, 4})
      .ExternalInitializer("e", {4}, "w.data", 4);
  b.Node("Add", {"x", "k"}, {"a"}, {}, "add")
      .Node("Mul", {"a", "e"}, {"m"}, {}, "mul")
      .Node("Softmax", {"m"}, {"s"}, {Attr("axis", int64_t{1})}, "softmax")
      .Node("Transpose", {"s"}, {"y"}, {Attr("perm", std::vector<int64_t>{1, 0})}, "transpose");
  b.Output("y");
  b.Save(dir / "m.onnx");
  auto m = graph::LoadModelFromFile(dir / "m.onnx");
  REQUIRE(m.ok());
  return std::move(m).value();
}

const OrtcValueView& ValueNamed(const OrtcGraphView* v, const std::string& name) {
  for (uint32_t i = 0; i < v->num_values; ++i)
    if (name == v->values[i].name) return v->values[i];
  FAIL("no value " << name);
  return v->values[0];
}

// ---- a backend written against the C header alone, as a plugin would be ----
struct FakeState {
  int released = 0;  // HANDED_OVER releases seen
  bool fail_capability = false;
  bool fail_compile = false;
  bool fail_identity = false;
  bool null_weight = false;  // reports a weight of 16 bytes without its data
  std::string file;          // for the FILE_REGION weight
};
FakeState g_fake;
thread_local std::string g_fake_error;

OrtcPluginStatus FakeValidate(OrtcBackendCompiler*, const OrtcKeyValue* kv, uint32_t n) {
  if (n == 0) return ORTC_PLUGIN_OK;
  g_fake_error = std::string("fake: unknown option '") + kv[0].key + "'";
  return ORTC_PLUGIN_INVALID_ARGUMENT;
}

// Claims Add and Mul, refuses the rest naming the op.
OrtcPluginStatus FakeCapability(OrtcBackendCompiler*, const OrtcGraphView* g,
                                const OrtcCapabilitySink* sink) {
  if (g_fake.fail_capability) {
    g_fake_error = "fake: the device is busy";
    return ORTC_PLUGIN_EP_FAIL;
  }
  for (uint32_t i = 0; i < g->num_nodes; ++i) {
    const std::string op = g->nodes[i].op_type;
    if (op == "Add" || op == "Mul")
      sink->claim(sink->user, i);
    else if (op != "Transpose")  // Transpose: no answer at all
      sink->refuse(sink->user, i, ("fake takes no " + op).c_str());
  }
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus FakeIdentity(OrtcBackendCompiler*, const OrtcKeyValue*, uint32_t,
                              const OrtcIdentitySink* s) {
  if (g_fake.fail_identity) {
    g_fake_error = "fake: the SDK's version file is missing";
    return ORTC_PLUGIN_NO_SUCH_FILE;
  }
  s->set_sdk_version(s->user, "7.1");
  s->set_hardware_architecture(s->user, "fake-v2");
  s->add_version(s->user, "fake_sdk", "7.1");
  s->add_hardware_target(s->user, "fake-v2");
  s->add_property(s->user, "layout", "nchw");
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus FakeCompile(OrtcBackendCompiler*, const OrtcGraphView* g,
                             const OrtcSubgraphRef* ref, const OrtcKeyValue*, uint32_t,
                             const OrtcCompileSink* s) {
  if (g_fake.fail_compile) {
    g_fake_error = "fake: cannot read the weights file";
    return ORTC_PLUGIN_IO_ERROR;
  }
  const std::string program = "FAKE:" + std::to_string(ref->num_nodes);
  s->set_program(s->user, program.data(), program.size());
  const int64_t dims[] = {-1, 4};
  const char* symbols[] = {"N", ""};
  OrtcTensorDesc in{g->values[ref->inputs[0]].name, 1, 2, dims, symbols};
  s->add_input(s->user, &in);
  OrtcTensorDesc out{g->values[ref->outputs[0]].name, 1, 2, dims, nullptr};
  s->add_output(s->user, &out);
  const int64_t wdims[] = {4};
  OrtcWeightDesc w{1, 1, wdims, "fake_layout", 128};
  static const float copied[4] = {1, 2, 3, 4};
  OrtcBytes copy{ORTC_BYTES_COPY, copied, sizeof(copied), nullptr, nullptr, nullptr, 0};
  if (g_fake.null_weight) copy.data = nullptr;
  s->add_weight(s->user, &w, &copy);
  auto* owned = new std::string("HANDEDOVER012345");
  OrtcBytes handed{ORTC_BYTES_HANDED_OVER,
                   owned->data(),
                   owned->size(),
                   owned,
                   [](void* o) {
                     delete static_cast<std::string*>(o);
                     ++g_fake.released;
                   },
                   nullptr,
                   0};
  s->add_weight(s->user, &w, &handed);
  OrtcBytes region{ORTC_BYTES_FILE_REGION, nullptr, 16, nullptr, nullptr, g_fake.file.c_str(), 4};
  s->add_weight(s->user, &w, &region);
  s->set_arena_bytes(s->user, 4096);
  s->add_artefact(s->user, "fake/image", "IMG", 3);
  s->add_note(s->user, "fake_note", "yes");
  s->add_binary_version(s->user, "fake_runtime", "7.1");
  s->add_stat(s->user, "fake_fused", 2);
  const char* candidates[] = {"a", "b"};
  OrtcTunableChoice choice{"add", "Add[4]", "b", candidates, 2, "rule"};
  s->add_choice(s->user, &choice);
  s->progress(s->user, "fake step", 1, 1);
  return ORTC_PLUGIN_OK;
}

const char* FakeLastError(OrtcBackendCompiler*) {
  return g_fake_error.c_str();
}

// A warning longer than the host's first buffer (the host must ask again with the size given),
// or a failure when the option "fail" is set.
OrtcPluginStatus FakeWarning(OrtcBackendCompiler*, const OrtcKeyValue* kv, uint32_t n, char* buf,
                             size_t capacity, size_t* len) {
  if (n > 0 && std::strcmp(kv[0].key, "fail") == 0) return ORTC_PLUGIN_EP_FAIL;
  const std::string w = "cache ignored: " + std::string(5000, 'w');
  *len = w.size();
  if (w.size() + 1 > capacity) return ORTC_PLUGIN_BUFFER_TOO_SMALL;
  std::memcpy(buf, w.c_str(), w.size() + 1);
  return ORTC_PLUGIN_OK;
}

OrtcBackendCompiler FakeTable() {
  OrtcBackendCompiler t{};
  t.abi_version = ORTC_BACKEND_ABI_VERSION;
  t.struct_size = sizeof(OrtcBackendCompiler);
  t.name = "fake";
  t.ep_source = "ortc.fake";
  t.status_line = "a test backend";
  t.version = "fake 1";
  t.flags = ORTC_COMPILER_CAN_COMPILE;
  t.validate_options = &FakeValidate;
  t.get_capability = &FakeCapability;
  t.identity = &FakeIdentity;
  t.compile = &FakeCompile;
  t.last_error = &FakeLastError;
  return t;
}

}  // namespace

TEST_CASE("abi: the graph view shows nodes, shapes, attributes and constant bytes") {
  TempDir dir;
  auto model = SmallModel(dir);
  const abi::GraphView gv(model->graph, model.get());
  const OrtcGraphView* v = gv.view();
  REQUIRE(v->num_nodes == 4);
  CHECK(std::string(v->nodes[0].op_type) == "Add");
  CHECK(std::string(v->nodes[2].name) == "softmax");
  CHECK(v->nodes[0].since_version == 14);
  // Inputs by value index, which name the right values.
  CHECK(std::string(v->values[v->nodes[0].inputs[0]].name) == "x");
  CHECK(std::string(v->values[v->nodes[0].inputs[1]].name) == "k");
  CHECK(v->values[v->nodes[1].outputs[0]].producer == 1);
  // Shapes: the symbolic batch is -1.
  const OrtcValueView& x = ValueNamed(v, "x");
  REQUIRE(x.rank == 2);
  CHECK(x.dims[0] == -1);
  CHECK(x.dims[1] == 4);
  CHECK(x.is_graph_input == 1);
  CHECK(x.is_constant == 0);
  CHECK(ValueNamed(v, "y").is_graph_output == 1);
  // Constants: in-memory bytes, and a file region for external data.
  const OrtcValueView& k = ValueNamed(v, "k");
  REQUIRE(k.is_constant == 1);
  REQUIRE(k.data != nullptr);
  REQUIRE(k.byte_size == 16);
  float kv[4];
  std::memcpy(kv, k.data, 16);
  CHECK((kv[0] == 1 && kv[3] == 4));
  const OrtcValueView& e = ValueNamed(v, "e");
  CHECK(e.is_constant == 1);
  CHECK(e.data == nullptr);
  REQUIRE(e.external_file != nullptr);
  CHECK(std::string(e.external_file).ends_with("w.data"));
  CHECK(e.external_offset == 4);
  CHECK(e.byte_size == 16);
  // Attributes with their ONNX type numbers.
  REQUIRE(v->nodes[2].num_attributes == 1);
  CHECK(std::string(v->nodes[2].attributes[0].name) == "axis");
  CHECK(v->nodes[2].attributes[0].type == 2);
  CHECK(v->nodes[2].attributes[0].i == 1);
  REQUIRE(v->nodes[3].attributes[0].type == 7);
  REQUIRE(v->nodes[3].attributes[0].count == 2);
  CHECK(v->nodes[3].attributes[0].ints[0] == 1);
  // The host's objects are reachable only through the host's own token.
  CHECK(abi::HostGraph(v) == &model->graph);
  CHECK(abi::HostModel(v) == model.get());
  OrtcGraphView forged = *v;
  static const char kSameText[] = "ortc " ORTC_VERSION_STRING " in-process";
  forged.host_build = kSameText;
  CHECK(abi::HostGraph(&forged) == nullptr);
  CHECK(abi::HostModel(&forged) == nullptr);
}

TEST_CASE("abi: a C table's answers reach the compiler intact") {
  TempDir dir;
  auto model = SmallModel(dir);
  ortc::test::WriteFile(dir / "region.bin", "0123REGIONBYTES!5678");
  g_fake = {};
  g_fake.file = (dir / "region.bin").string();
  OrtcBackendCompiler table = FakeTable();
  REQUIRE(abi::CheckCompilerTable(&table, "fake").ok());
  {
    const abi::AbiBackend b(&table, nullptr);
    CHECK(b.name() == "fake");
    CHECK(b.ep_source() == "ortc.fake");
    CHECK(b.can_compile());
    CHECK_FALSE(b.is_fallback());

    const auto answers = b.Capability(model->graph);
    REQUIRE(answers.size() == 4);
    CHECK(answers[0].supported);
    CHECK(answers[1].supported);
    CHECK_FALSE(answers[2].supported);
    CHECK(answers[2].reason == "fake takes no Softmax");
    CHECK_FALSE(answers[3].supported);
    CHECK(answers[3].reason == "backend fake gave no answer");

    const Status bad = b.ValidateOptions({{"speed", "max"}});
    CHECK(bad.code() == StatusCode::kInvalidArgument);
    CHECK(bad.message() == "fake: unknown option 'speed'");
    CHECK(b.ValidateOptions({}).ok());

    auto identity = b.Identity({});
    REQUIRE(identity.ok());
    const BinaryIdentity& id = *identity;
    CHECK(id.sdk_version == "7.1");
    CHECK(id.hardware_architecture == "fake-v2");
    REQUIRE(id.versions.size() == 1);
    CHECK(id.versions[0] == std::pair<std::string, std::string>{"fake_sdk", "7.1"});
    CHECK(id.hardware_targets == std::vector<std::string>{"fake-v2"});
    CHECK(id.properties[0].second == "nchw");

    Subgraph sg{"fake_0", {0, 1}, {model->graph.FindValue("x")}, {model->graph.FindValue("m")}};
    int progress_calls = 0;
    auto compiled = b.Compile(*model, sg, {}, [&](const std::string& step, int, int) {
      progress_calls += step == "fake step";
    });
    REQUIRE(compiled.ok());
    CHECK(compiled->program == "FAKE:2");
    REQUIRE(compiled->inputs.size() == 1);
    CHECK(compiled->inputs[0].name == "x");
    CHECK(compiled->inputs[0].dims == std::vector<int64_t>{-1, 4});
    CHECK(compiled->inputs[0].symbols == std::vector<std::string>{"N", ""});
    CHECK(compiled->outputs[0].symbols.empty());
    REQUIRE(compiled->weights.size() == 3);
    CHECK(compiled->weights[0].layout == "fake_layout");
    CHECK(compiled->weights[0].alignment == 128);
    auto w0 = compiled->weights[0].bytes.ReadAll();
    REQUIRE(w0.ok());
    CHECK((*w0)->size() == 16);
    auto w1 = compiled->weights[1].bytes.ReadAll();
    CHECK(**w1 == "HANDEDOVER012345");
    auto w2 = compiled->weights[2].bytes.ReadAll();
    REQUIRE(w2.ok());
    CHECK(**w2 == "REGIONBYTES!5678");
    CHECK_FALSE(compiled->weights[2].bytes.in_memory());
    CHECK(compiled->arena_bytes == 4096);
    CHECK(compiled->artefacts[0] == std::pair<std::string, std::string>{"fake/image", "IMG"});
    CHECK(compiled->notes[0].first == "fake_note");
    CHECK(compiled->binary_versions[0].second == "7.1");
    CHECK(compiled->stats.at("fake_fused") == 2);
    REQUIRE(compiled->choices.size() == 1);
    CHECK(compiled->choices[0].candidates == std::vector<std::string>{"a", "b"});
    CHECK(progress_calls == 1);
    // The handed-over bytes live as long as the compiled graph holds them.
    CHECK(g_fake.released == 0);
    compiled = Status(StatusCode::kInvalidArgument, "dropped");
    CHECK(g_fake.released == 1);

    // A report with a weight but no bytes fails the compile instead of reading a null.
    g_fake.null_weight = true;
    auto hollow = b.Compile(*model, sg, {}, {});
    CHECK(hollow.status().code() == StatusCode::kInvalidGraph);
    CHECK_THAT(hollow.status().message(), Catch::Contains("bytes are missing"));
    g_fake.null_weight = false;

    // Failures keep their code and text; a backend that cannot name its versions writes no
    // binary (the version gate would have nothing to check).
    g_fake.fail_identity = true;
    const auto no_identity = b.Identity({});
    CHECK(no_identity.status().code() == StatusCode::kNoSuchFile);
    CHECK(no_identity.status().message() ==
          "backend fake could not name its versions: fake: the SDK's version file is missing");
    g_fake.fail_identity = false;
    g_fake.fail_compile = true;
    auto failed = b.Compile(*model, sg, {}, {});
    CHECK(failed.status().code() == StatusCode::kIoError);
    CHECK(failed.status().message() == "fake: cannot read the weights file");
    g_fake.fail_capability = true;
    for (const auto& a : b.Capability(model->graph)) {
      CHECK_FALSE(a.supported);
      CHECK(a.reason == "backend fake: fake: the device is busy");
    }
  }
}

TEST_CASE("abi: an options warning longer than the first buffer arrives whole") {
  OrtcBackendCompiler table = FakeTable();
  const abi::AbiBackend none(&table, nullptr);
  CHECK(none.OptionsWarning({}).empty());  // no options_warning: nothing to say
  table.options_warning = &FakeWarning;
  const abi::AbiBackend b(&table, nullptr);
  CHECK(b.OptionsWarning({}) == "cache ignored: " + std::string(5000, 'w'));
  CHECK(b.OptionsWarning({{"fail", "1"}}).empty());  // a warning it cannot give is none
}

TEST_CASE("abi: tables the host must not trust are refused, saying why") {
  OrtcBackendCompiler t = FakeTable();
  t.abi_version = ORTC_BACKEND_ABI_VERSION - 1;
  CHECK_THAT(abi::CheckCompilerTable(&t, "lib.so").message(),
             Catch::Contains("implements plugin ABI version " +
                             std::to_string(ORTC_BACKEND_ABI_VERSION - 1)) &&
                 Catch::Contains("needs version " + std::to_string(ORTC_BACKEND_ABI_VERSION)));
  t = FakeTable();
  t.ep_source = "vendor.fake";
  CHECK_THAT(abi::CheckCompilerTable(&t, "lib.so").message(), Catch::Contains("'ortc.fake'"));
  t = FakeTable();
  t.name = "Fake NPU";
  CHECK_THAT(abi::CheckCompilerTable(&t, "lib.so").message(), Catch::Contains("lower-case"));
  t = FakeTable();
  t.compile = nullptr;
  CHECK_THAT(abi::CheckCompilerTable(&t, "lib.so").message(), Catch::Contains("compile"));
  CHECK_FALSE(abi::CheckCompilerTable(nullptr, "lib.so").ok());
}

TEST_CASE("abi: every status code crosses the boundary and back") {
  const StatusCode codes[] = {StatusCode::kInvalidArgument, StatusCode::kNoSuchFile,
                              StatusCode::kInvalidGraph,    StatusCode::kNotImplemented,
                              StatusCode::kEpFail,          StatusCode::kIoError,
                              StatusCode::kOutOfMemory};
  for (StatusCode code : codes) {
    const Status back = abi::FromPluginStatus(abi::ToPluginStatus(code), "why");
    CHECK(back.code() == code);
    CHECK(back.message() == "why");
  }
  CHECK(abi::ToPluginStatus(StatusCode::kOk) == ORTC_PLUGIN_OK);
  CHECK(abi::FromPluginStatus(ORTC_PLUGIN_OK, "").ok());
  CHECK(abi::FromPluginStatus(ORTC_PLUGIN_UNSUPPORTED, "x").code() == StatusCode::kEpFail);
  CHECK_THAT(abi::FromPluginStatus(ORTC_PLUGIN_EP_FAIL, "").message(),
             Catch::Contains("no reason"));
}

TEST_CASE("abi: the in-tree CPU backend answers through its table as it does in C++") {
  TempDir dir;
  auto model = SmallModel(dir);
  const Backend& direct = cpu::CpuBackend();
  const Backend* through = FindBackend("cpu");
  REQUIRE(through != nullptr);
  REQUIRE(through != &direct);  // the registry's is the ABI adapter
  const auto a = direct.Capability(model->graph);
  const auto b = through->Capability(model->graph);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].supported == b[i].supported);
    CHECK(a[i].reason == b[i].reason);
  }
  CHECK(through->is_fallback());
  CHECK(through->ValidateOptions({{"precision", "fp64"}}).message() ==
        direct.ValidateOptions({{"precision", "fp64"}}).message());
  CHECK(through->Identity({})->hardware_targets == direct.Identity({})->hardware_targets);
  // Options that do not parse: no identity through the table either, and the same reason.
  const Backend* cuda = FindBackend("cuda");
  REQUIRE(cuda != nullptr);
  const auto bad = cuda->Identity({{"precision", "fp64"}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(
      bad.status().message(),
      Catch::Contains(cuda::CudaBackend().Identity({{"precision", "fp64"}}).status().message()));
  // Not a view of the host's own graph: the in-tree table refuses rather than guess.
  OrtcBackendCompiler* table = abi::InProcessCompiler(direct);
  const abi::GraphView gv(model->graph, model.get());
  OrtcGraphView foreign = *gv.view();
  foreign.host_graph = nullptr;
  foreign.host_build = "another build";
  int answered = 0;
  OrtcCapabilitySink sink{&answered, [](void* u, uint32_t) { ++*static_cast<int*>(u); },
                          [](void* u, uint32_t, const char*) { ++*static_cast<int*>(u); }};
  CHECK(table->get_capability(table, &foreign, &sink) == ORTC_PLUGIN_NOT_IMPLEMENTED);
  CHECK(answered == 0);
  CHECK_THAT(std::string(table->last_error(table)), Catch::Contains("host's own graph"));
}

TEST_CASE("abi: an unknown backend names every folder searched") {
  TempDir dir;
  abi::AddBackendSearchFolder(dir.path().string());
  auto r = ResolveBackend("nosuchnpu");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("libortc_backend_nosuchnpu.so") &&
                                       Catch::Contains(dir.path().string()));
}
