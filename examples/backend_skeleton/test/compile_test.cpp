// The compile side's contract: the plugin's function tables, option validation and identity,
// and the capability answers for nodes outside the npu subset (each refused with the condition
// that failed, and a group it never claimed refused by compile).
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "plugin_driver.h"
#include "test_graphs.h"
#include "tests.h"

namespace npu_test {

void TestTables(const Plugin& p) {
  const OrtcBackendCompiler& c = *p.compiler;
  CHECK(c.abi_version == ORTC_BACKEND_ABI_VERSION);
  CHECK(c.struct_size == sizeof(OrtcBackendCompiler));
  CHECK(std::string(c.name) == "npu");
  CHECK(std::string(c.ep_source) == "ortc.npu");
  CHECK(std::string(c.status_line) == "skeleton NPU (host simulation): int8 QDQ Conv and MatMul");
  CHECK(std::string(c.version) == "npu skeleton 0.1");
  CHECK(c.flags == ORTC_COMPILER_CAN_COMPILE);
  CHECK(c.tuning_variants == nullptr);
  const OrtcBackend& b = *p.backend;
  CHECK(b.abi_version == ORTC_BACKEND_ABI_VERSION);
  CHECK(b.struct_size == sizeof(OrtcBackend));
  CHECK(std::string(b.name) == "npu");
  CHECK(b.check_binary != nullptr);
}

void TestOptions(const Plugin& p) {
  OrtcBackendCompiler* c = p.compiler;
  CHECK(c->validate_options(c, nullptr, 0) == ORTC_PLUGIN_OK);
  const OrtcKeyValue opt{"fast", "1"};
  CHECK(c->validate_options(c, &opt, 1) == ORTC_PLUGIN_INVALID_ARGUMENT);
  CHECK(std::string(c->last_error(c)) ==
        "npu: unknown option 'fast' (this backend has no options)");
  // last_error is per thread: another thread sees no failure.
  std::string other = "unset";
  std::thread([&] { other = c->last_error(c); }).join();
  CHECK(other.empty());

  struct Identity {
    std::string sdk, arch;
    std::map<std::string, std::string> versions;
    std::vector<std::string> targets;
  } id;
  OrtcIdentitySink sink{};
  sink.user = &id;
  sink.set_sdk_version = [](void* u, const char* v) { static_cast<Identity*>(u)->sdk = v; };
  sink.set_hardware_architecture = [](void* u, const char* v) {
    static_cast<Identity*>(u)->arch = v;
  };
  sink.add_version = [](void* u, const char* k, const char* v) {
    static_cast<Identity*>(u)->versions[k] = v;
  };
  sink.add_hardware_target = [](void* u, const char* t) {
    static_cast<Identity*>(u)->targets.push_back(t);
  };
  sink.add_property = [](void*, const char*, const char*) {};
  CHECK(c->identity(c, nullptr, 0, &sink) == ORTC_PLUGIN_OK);
  CHECK(id.sdk == "1.0");
  CHECK(id.arch == "npu-sim-v1");
  CHECK(id.versions == (std::map<std::string, std::string>{{"npu_sdk", "1.0"}}));
  CHECK(id.targets == std::vector<std::string>{"npu-sim-v1"});
  CHECK(c->identity(c, &opt, 1, &sink) == ORTC_PLUGIN_INVALID_ARGUMENT);
}

// Nodes outside the subset, each refused with the condition that failed.
void TestRefusals(const Plugin& p) {
  const auto conv_reason = [&](const ConvOptions& o, int which) {
    ConvGraph t;
    BuildConv(t, o);
    const Capability cap = AskCapability(p.compiler, t.g);
    const int32_t node = which < 0 ? t.relu : t.unit[which];
    CHECK(!cap.claimed[node]);
    return cap.reasons.count(node) ? cap.reasons.at(node) : std::string("(claimed)");
  };
  ConvOptions o;
  o.relu_beside = false;
  o.attrs = {Ints("pads", {1, 1, 1, 1}), Int("group", 2)};
  std::string why = conv_reason(o, 3);
  CHECK_MSG(Contains(why, "group 2"), why);
  why = conv_reason(o, 4);  // its QuantizeLinear says which unit it belongs to
  CHECK_MSG(Contains(why, "Conv") && Contains(why, "group 2"), why);

  o.attrs = {Text("auto_pad", "SAME_UPPER")};
  why = conv_reason(o, 3);
  CHECK_MSG(Contains(why, "auto_pad 'SAME_UPPER'"), why);

  o.attrs = {};
  o.per_channel_w = true;
  why = conv_reason(o, 3);
  CHECK_MSG(Contains(why, "per-channel scales are not supported (scale of 'w' has 3 entries)"),
            why);

  o.per_channel_w = false;
  o.dynamic_x = true;
  why = conv_reason(o, 3);
  CHECK_MSG(Contains(why, "npu needs static shapes (value 'x' is [1,2,?,5])"), why);

  o.dynamic_x = false;
  o.relu_on_x = true;
  why = conv_reason(o, 0);
  CHECK_MSG(Contains(why, "its float output is also read by") && Contains(why, "(Relu)"), why);
  why = conv_reason(o, 3);
  CHECK_MSG(Contains(why, "not taken"), why);
  why = conv_reason(o, -1);
  CHECK_MSG(Contains(why, "op Relu is outside the npu subset"), why);

  // A float Conv with no QDQ around it.
  GraphBuilder g;
  const int x = g.Value("x", kFloat, {1, 1, 4, 4}, true);
  const int w = g.Constant("w", kFloat, {1, 1, 1, 1}, Bytes<float>({1.0f}));
  const int y = g.Value("y", kFloat, {1, 1, 4, 4});
  g.MarkOutput(y);
  const int conv = g.Node("Conv", {x, w}, {y});
  Capability cap = AskCapability(p.compiler, g);
  CHECK_MSG(Contains(cap.reasons[conv], "does not come from a DequantizeLinear"),
            cap.reasons[conv]);
  // Compiling a group the backend never claimed fails with a reason.
  Compiled c;
  CHECK(Compile(p.compiler, g, {conv}, {x}, {y}, &c) == ORTC_PLUGIN_INVALID_GRAPH);
  CHECK_MSG(Contains(p.compiler->last_error(p.compiler), "not part of a complete npu unit"),
            p.compiler->last_error(p.compiler));
}

}  // namespace npu_test
